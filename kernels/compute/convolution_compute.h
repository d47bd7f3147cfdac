// Compute definitions of the windowed operators (convolution_compute.cc:
// nn.conv2d, nn.conv2d_transpose, pooling, image.resize2d), attached to the
// operator table by AttachConvolutionComputes (kernels/operator_table.h);
// and the reading of their window attributes, which the schedules for
// windowed operators share with them.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "kernels/attributes.h"

namespace relay::kernels {

// A spatial attribute (strides, dilation) of normalised `attrs` as (height,
// width); one value means both.
std::array<int64_t, 2> SpatialPair(const Attrs& attrs, std::string_view name);

// Relay's padding of normalised `attrs` as (top, left, bottom, right), from
// its 1, 2 or 4 values.
std::array<int64_t, 4> Padding(const Attrs& attrs);

}  // namespace relay::kernels

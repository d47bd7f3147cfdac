// Dynamic batching's tensor work: requests whose inputs agree beyond a
// leading dimension are concatenated along it into one run of the model,
// and the run's outputs are split back by rows.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "relay/tensor.h"

namespace relay::serve {

using Tensors = std::vector<Ref<Tensor>>;

// The extent every one of `inputs` has along its first axis, or nullopt
// when they differ (or one is a scalar): such a request runs alone.
std::optional<int64_t> LeadingRows(const Tensors& inputs);

// Whether the inputs of two requests match in dtype and in every extent
// after the first, so that they can be concatenated.
bool SameTrailingShapes(const Tensors& first, const Tensors& second);

// One tensor per input position holding the rows of every request in turn.
Tensors ConcatenateRows(const std::vector<const Tensors*>& requests);

// `outputs` of a run over requests of `rows` rows each, split into one
// output list per request (views of the run's tensors, no copy). Nullopt
// when an output's first extent is not the rows' total: the model does not
// keep rows apart, and its requests must run alone.
std::optional<std::vector<Tensors>> SplitRows(const Tensors& outputs,
                                              const std::vector<int64_t>& rows);

}  // namespace relay::serve

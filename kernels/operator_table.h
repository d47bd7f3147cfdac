// Internal: how operator families add their definitions to the table.
// Each family lives in kernels/operators/<family>.cc and exposes one
// Register*Operators function; operator.cc calls them all, once.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>

#include "kernels/operator.h"

namespace relay::kernels {

class OperatorTableBuilder {
 public:
  // Adds a definition; a duplicate name is an internal error.
  void Add(OperatorDefinition definition);
  // Gives each named operator its compute definition; a name the table
  // lacks is an internal error.
  void AttachComputes(const std::unordered_map<std::string, ComputeFunction>& computes);
  // The same for operators computed by C++ code (kernels/host/).
  void AttachHostKernels(const std::unordered_map<std::string, HostKernel>& kernels);
  std::vector<OperatorDefinition>& definitions() { return definitions_; }

 private:
  std::vector<OperatorDefinition> definitions_;
};

void RegisterElementwiseOperators(OperatorTableBuilder& table);  // unary, binary, where, cast, clip
void RegisterReductionOperators(OperatorTableBuilder& table);    // sum, mean, argmax, ...
void RegisterNeuralNetworkOperators(OperatorTableBuilder& table);  // nn.*
void RegisterTransformOperators(OperatorTableBuilder& table);  // reshape, concatenate, take, ...
void RegisterImageOperators(OperatorTableBuilder& table);      // image.resize2d
void RegisterSearchOperators(OperatorTableBuilder& table);  // topk, argsort, argwhere, cumsum, ...
void RegisterVisionOperators(OperatorTableBuilder& table);  // vision.*
void RegisterSignalOperators(OperatorTableBuilder& table);  // dft
void RegisterLinearAlgebraOperators(OperatorTableBuilder& table);  // det
void RegisterSelectionOperators(OperatorTableBuilder& table);      // unique_along
void RegisterDeviceAnnotations(OperatorTableBuilder& table);       // on_device, device_copy

// Compute definitions live beside the kernels (kernels/compute/) and are
// attached to the entries the families registered.
void AttachElementwiseComputes(OperatorTableBuilder& table);  // elementwise, broadcast, where, cast
void AttachReductionComputes(OperatorTableBuilder& table);    // sum, mean, argmax, ...
void AttachTransformComputes(OperatorTableBuilder& table);    // reshape, take, concatenate, ...
void AttachConvolutionComputes(OperatorTableBuilder& table);  // conv2d, pools, resize2d
void AttachNeuralNetworkComputes(OperatorTableBuilder& table);  // dense, softmax, norms, ...
void AttachShapeComputes(OperatorTableBuilder& table);          // arange, shape_of, ndarray_size
void AttachSearchKernels(OperatorTableBuilder& table);  // topk, argsort, sort, argwhere, cumsum
void AttachVisionKernels(OperatorTableBuilder& table);  // non-maximum suppression, roi_align
void AttachImageKernels(OperatorTableBuilder& table);   // image.grid_sample
void AttachSignalKernels(OperatorTableBuilder& table);  // dft
void AttachLinearAlgebraKernels(OperatorTableBuilder& table);  // det
void AttachSelectionKernels(OperatorTableBuilder& table);      // unique_along

}  // namespace relay::kernels

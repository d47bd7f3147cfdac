// Signal-processing operators: dft, the discrete Fourier transform of a
// complex signal given as its real and imaginary parts. Name, inputs and
// attribute are TVM Relay's; the kernel is C++
// (kernels/host/signal_kernels.cc), since each output element sums a whole
// row of the input.
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

// dft: along the last axis of re_data and im_data (the same shape and
// floating-point dtype), the real and imaginary parts of
// X[k] = sum_n x[n] exp(-2 pi i k n / N); inverse flips the exponent's sign
// and divides by N, as numpy.fft.ifft does (TVM's leaves the sum unscaled),
// so that ONNX's DFT with inverse=1 is this operator alone.
ValueType DftRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& re = ExpectTensor(inputs, 0, "re_data");
  const ValueType& im = ExpectTensor(inputs, 1, "im_data");
  ExpectFloatDType(re, "re_data");
  ExpectSameDType(re, im);
  if (re.shape.empty() || re.shape.size() != im.shape.size()) {
    FailRelation("re_data and im_data must have the same shape, of at least one axis, got " +
                 re.ToString() + " and " + im.ToString());
  }
  Dims shape(re.shape.size());
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    shape[axis] =
        UnifyDims(re.shape[axis], im.shape[axis], "axis " + std::to_string(axis) + " of the parts");
  }
  ValueType part = ValueType::Tensor(shape, re.dtype);
  return ValueType::Tuple({part, part});
}

}  // namespace

void RegisterSignalOperators(OperatorTableBuilder& table) {
  table.Add({.name = "dft",
             .input_names = {"re_data", "im_data"},
             .attributes = {DefaultAttr("inverse", AttrKind::kBool, AttrValue::Bool(false))},
             .pattern = FusionPattern::kOpaque,
             .relation = DftRelation,
             .summary = "The discrete Fourier transform along the last axis of a complex signal's "
                        "real and imaginary parts: (real, imaginary); inverse is scaled by 1/N, "
                        "as numpy.fft.ifft."});
}

}  // namespace relay::kernels

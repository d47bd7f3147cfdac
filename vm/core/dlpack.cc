#include "relay/dlpack.h"

namespace relay {

namespace {

// What an exported DLManagedTensor points into: the tensor it keeps alive
// and the shape and stride arrays DLPack borrows.
struct ExportContext {
  Ref<Tensor> tensor;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed;
};

void DeleteExport(DLManagedTensor* managed) {
  delete static_cast<ExportContext*>(managed->manager_ctx);
}

std::optional<DeviceKind> DeviceKindFromDLPack(DLDeviceType type) {
  switch (type) {
    case kDLCPU:
      return DeviceKind::kCPU;
    case kDLCUDA:
      return DeviceKind::kCUDA;
    case kDLOpenCL:
      return DeviceKind::kOpenCL;
    case kDLExtDev:
      return DeviceKind::kXRT;
    default:
      return std::nullopt;
  }
}

// Pointer arithmetic on the handle is only meaningful where the handle is an
// address (host and CUDA); OpenCL buffers and XRT handles need byte_offset.
bool HandleIsAddress(DeviceKind kind) {
  return kind == DeviceKind::kCPU || kind == DeviceKind::kCUDA;
}

}  // namespace

DLManagedTensor* ToDLPack(const Ref<Tensor>& tensor) {
  if (!tensor) throw Error(ErrorKind::kUsage, "ToDLPack of a null tensor");
  auto* context = new ExportContext{tensor, tensor->shape(), {}, {}};
  context->strides.resize(context->shape.size());
  int64_t stride = 1;
  for (size_t axis = context->shape.size(); axis-- > 0;) {
    context->strides[axis] = stride;
    stride *= context->shape[axis];
  }
  DLTensor& out = context->managed.dl_tensor;
  DeviceId device = tensor->device_id();
  out.device = DLDevice{static_cast<DLDeviceType>(device.kind), device.index};
  if (HandleIsAddress(device.kind)) {
    out.data = static_cast<char*>(tensor->storage()->handle()) + tensor->byte_offset();
    out.byte_offset = 0;
  } else {
    out.data = tensor->storage()->handle();
    out.byte_offset = tensor->byte_offset();
  }
  out.ndim = static_cast<int32_t>(context->shape.size());
  out.dtype = ToDLDataType(tensor->dtype());
  out.shape = context->shape.data();
  out.strides = context->strides.data();
  context->managed.manager_ctx = context;
  context->managed.deleter = DeleteExport;
  return &context->managed;
}

Ref<Tensor> FromDLPack(DLManagedTensor* managed) {
  if (managed == nullptr) throw Error(ErrorKind::kUsage, "FromDLPack of a null DLManagedTensor");
  const DLTensor& in = managed->dl_tensor;
  std::optional<DeviceKind> kind = DeviceKindFromDLPack(in.device.device_type);
  if (!kind) {
    throw Error(ErrorKind::kUsage, "DLPack tensor is on device type " +
                                       std::to_string(in.device.device_type) +
                                       ", which relay-vm does not support");
  }
  std::optional<DType> dtype = FromDLDataType(in.dtype);
  if (!dtype) {
    throw Error(ErrorKind::kUsage, "DLPack tensor has unsupported dtype (code " +
                                       std::to_string(in.dtype.code) + ", bits " +
                                       std::to_string(in.dtype.bits) + ", lanes " +
                                       std::to_string(in.dtype.lanes) + ")");
  }
  if (in.ndim < 0 || (in.ndim > 0 && in.shape == nullptr)) {
    throw Error(ErrorKind::kUsage, "DLPack tensor has an invalid rank or shape");
  }
  Shape shape(in.shape, in.shape + in.ndim);
  int64_t count = CheckedElementCount(shape, DTypeSize(*dtype));
  if (in.strides != nullptr && count > 0) {
    int64_t expected = 1;
    for (int axis = in.ndim - 1; axis >= 0; --axis) {
      if (shape[axis] != 1 && in.strides[axis] != expected) {
        throw Error(ErrorKind::kUsage, "DLPack tensor of shape " + ShapeToString(shape) +
                                           " is not compact row-major (stride " +
                                           std::to_string(in.strides[axis]) + " on axis " +
                                           std::to_string(axis) +
                                           "); zero-copy import needs a contiguous tensor");
      }
      expected *= shape[axis];
    }
  }
  if (in.data == nullptr && count > 0) {
    throw Error(ErrorKind::kUsage,
                "DLPack tensor of shape " + ShapeToString(shape) + " has no data pointer");
  }
  size_t bytes = static_cast<size_t>(count) * DTypeSize(*dtype);
  DeviceId device{*kind, in.device.device_id};
  Ref<Storage> storage = Storage::WrapExternal(
      device, in.data, static_cast<size_t>(in.byte_offset) + bytes, [managed] {
        if (managed->deleter) managed->deleter(managed);
      });
  return Tensor::View(std::move(storage), static_cast<size_t>(in.byte_offset), std::move(shape),
                      *dtype);
}

}  // namespace relay

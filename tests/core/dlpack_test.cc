#include "relay/dlpack.h"

#include <gtest/gtest.h>

#include "relay/devices.h"

namespace relay {
namespace {

TEST(DLPackTest, ExportDescribesTheTensor) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {2, 3, 4}, DType::kFloat32);
  DLManagedTensor* managed = ToDLPack(tensor);
  const DLTensor& exported = managed->dl_tensor;
  EXPECT_EQ(exported.device.device_type, kDLCPU);
  EXPECT_EQ(exported.device.device_id, 0);
  EXPECT_EQ(exported.ndim, 3);
  EXPECT_EQ(exported.shape[0], 2);
  EXPECT_EQ(exported.shape[2], 4);
  EXPECT_EQ(exported.strides[0], 12);
  EXPECT_EQ(exported.strides[1], 4);
  EXPECT_EQ(exported.strides[2], 1);
  EXPECT_EQ(exported.dtype.code, kDLFloat);
  EXPECT_EQ(exported.dtype.bits, 32);
  EXPECT_EQ(exported.data, tensor->host_data());
  EXPECT_EQ(exported.byte_offset, 0u);
  EXPECT_EQ(tensor->use_count(), 2u);  // the export holds a reference
  managed->deleter(managed);
  EXPECT_EQ(tensor->use_count(), 1u);
}

TEST(DLPackTest, RoundTripIsZeroCopyAndKeepsData) {
  Ref<Tensor> original = Tensor::Empty(HostDevice(), {5}, DType::kInt16);
  for (int index = 0; index < 5; ++index) original->data<int16_t>()[index] = int16_t(index * 3);
  Ref<Tensor> imported = FromDLPack(ToDLPack(original));
  EXPECT_EQ(imported->host_data(), original->host_data());
  EXPECT_EQ(imported->shape(), original->shape());
  EXPECT_EQ(imported->dtype(), DType::kInt16);
  EXPECT_EQ(imported->data<int16_t>()[4], 12);
  original = nullptr;  // the import keeps the memory alive through the export
  EXPECT_EQ(imported->data<int16_t>()[2], 6);
}

TEST(DLPackTest, ViewWithOffsetExportsTheOffsetData) {
  Ref<Storage> storage = Storage::Allocate(HostDevice(), 64);
  Ref<Tensor> view = Tensor::View(storage, 32, {2}, DType::kFloat64);
  view->data<double>()[1] = 2.5;
  DLManagedTensor* managed = ToDLPack(view);
  EXPECT_EQ(static_cast<double*>(managed->dl_tensor.data)[1], 2.5);
  managed->deleter(managed);
}

// A producer-owned DLPack tensor, as another framework would hand over.
struct Producer {
  std::vector<float> data;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
  bool* deleted;

  Producer(std::vector<int64_t> shape_in, std::vector<int64_t> strides_in, bool* deleted_flag)
      : shape(std::move(shape_in)), strides(std::move(strides_in)), deleted(deleted_flag) {
    int64_t count = 1;
    for (int64_t dimension : shape) count *= dimension;
    data.resize(static_cast<size_t>(count));
    for (size_t index = 0; index < data.size(); ++index) data[index] = float(index) * 0.5f;
    managed.dl_tensor.data = data.data();
    managed.dl_tensor.device = DLDevice{kDLCPU, 0};
    managed.dl_tensor.ndim = static_cast<int32_t>(shape.size());
    managed.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    managed.dl_tensor.shape = shape.data();
    managed.dl_tensor.strides = strides.empty() ? nullptr : strides.data();
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      auto* producer = static_cast<Producer*>(self->manager_ctx);
      *producer->deleted = true;
      delete producer;
    };
  }
};

TEST(DLPackTest, ImportCallsTheProducersDeleterOnce) {
  bool deleted = false;
  auto* producer = new Producer({2, 3}, {}, &deleted);
  {
    Ref<Tensor> tensor = FromDLPack(&producer->managed);
    EXPECT_EQ(tensor->shape(), (Shape{2, 3}));
    EXPECT_EQ(tensor->data<float>()[5], 2.5f);
    EXPECT_FALSE(deleted);
  }
  EXPECT_TRUE(deleted);
}

TEST(DLPackTest, ExplicitCompactStridesAreAccepted) {
  bool deleted = false;
  auto* producer =
      new Producer({2, 1, 3}, {3, 99, 1}, &deleted);  // size-1 axes may have any stride
  EXPECT_NO_THROW(FromDLPack(&producer->managed));
  EXPECT_TRUE(deleted);
}

TEST(DLPackTest, NonCompactImportIsRejectedAndOwnershipStaysWithCaller) {
  bool deleted = false;
  auto* producer = new Producer({2, 3}, {1, 2}, &deleted);  // a transposed view
  try {
    FromDLPack(&producer->managed);
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(error.what()).find("not compact"), std::string::npos);
  }
  EXPECT_FALSE(deleted);
  producer->managed.deleter(&producer->managed);
  EXPECT_TRUE(deleted);
}

TEST(DLPackTest, UnsupportedDTypeAndDeviceAreRejected) {
  bool deleted = false;
  auto* producer = new Producer({4}, {}, &deleted);
  producer->managed.dl_tensor.dtype = DLDataType{kDLFloat, 32, 4};
  EXPECT_THROW(FromDLPack(&producer->managed), Error);
  producer->managed.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  producer->managed.dl_tensor.device = DLDevice{kDLVulkan, 0};
  EXPECT_THROW(FromDLPack(&producer->managed), Error);
  producer->managed.deleter(&producer->managed);
  EXPECT_THROW(FromDLPack(nullptr), Error);
}

}  // namespace
}  // namespace relay

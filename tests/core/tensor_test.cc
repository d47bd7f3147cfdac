#include "relay/tensor.h"

#include <gtest/gtest.h>

#include <numeric>

#include "relay/devices.h"

namespace relay {
namespace {

TEST(ShapeTest, PrintsLikeNumPy) {
  EXPECT_EQ(ShapeToString({}), "()");
  EXPECT_EQ(ShapeToString({5}), "(5,)");
  EXPECT_EQ(ShapeToString({2, 3, 4}), "(2, 3, 4)");
}

TEST(ShapeTest, ElementCount) {
  EXPECT_EQ(CheckedElementCount({}), 1);
  EXPECT_EQ(CheckedElementCount({2, 3, 4}), 24);
  EXPECT_EQ(CheckedElementCount({0, 7}), 0);
}

TEST(ShapeTest, NegativeAndOverflowingShapesAreUsageErrors) {
  try {
    CheckedElementCount({2, -1});
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(error.what()).find("negative"), std::string::npos);
  }
  EXPECT_THROW(CheckedElementCount({1LL << 40, 1LL << 40}), Error);
  EXPECT_THROW(CheckedElementCount({1LL << 61}, 8), Error);
}

TEST(TensorTest, EmptyAllocatesOnTheHost) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {2, 3}, DType::kFloat32);
  EXPECT_EQ(tensor->shape(), (Shape{2, 3}));
  EXPECT_EQ(tensor->dtype(), DType::kFloat32);
  EXPECT_EQ(tensor->element_count(), 6);
  EXPECT_EQ(tensor->byte_size(), 24u);
  EXPECT_EQ(tensor->device_id(), (DeviceId{DeviceKind::kCPU, 0}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor->host_data()) % kAllocationAlignment, 0u);
  float* data = tensor->data<float>();
  std::iota(data, data + 6, 1.0f);
  EXPECT_EQ(data[5], 6.0f);
}

TEST(TensorTest, TypedAccessChecksTheDType) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {4}, DType::kInt32);
  EXPECT_NO_THROW(tensor->data<int32_t>());
  try {
    tensor->data<float>();
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(error.what()).find("holds int32"), std::string::npos);
  }
}

TEST(TensorTest, ViewsShareStorageAndKeepItAlive) {
  Ref<Storage> storage = Storage::Allocate(HostDevice(), 64);
  Ref<Tensor> view = Tensor::View(storage, 16, {4}, DType::kInt32);
  EXPECT_EQ(storage->use_count(), 2u);
  storage = nullptr;
  EXPECT_EQ(view->storage()->use_count(), 1u);
  view->data<int32_t>()[3] = 42;
  EXPECT_EQ(static_cast<int32_t*>(view->storage()->handle())[7], 42);
}

TEST(TensorTest, ViewOutsideStorageIsRejected) {
  Ref<Storage> storage = Storage::Allocate(HostDevice(), 16);
  EXPECT_THROW(Tensor::View(storage, 8, {3}, DType::kInt32), Error);
  EXPECT_THROW(Tensor::View(storage, 17, {}, DType::kBool), Error);
  EXPECT_NO_THROW(Tensor::View(storage, 16, {0}, DType::kFloat64));
}

TEST(TensorTest, ReshapeKeepsDataAndChecksCount) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {2, 6}, DType::kInt64);
  tensor->data<int64_t>()[7] = 9;
  Ref<Tensor> reshaped = tensor->Reshape({3, 4});
  EXPECT_EQ(reshaped->data<int64_t>()[7], 9);
  EXPECT_EQ(reshaped->storage(), tensor->storage());
  EXPECT_THROW(tensor->Reshape({5}), Error);
}

TEST(TensorTest, StorageFromAnExternalOwnerReleasesOnce) {
  int releases = 0;
  alignas(64) static float buffer[8];
  {
    Ref<Storage> storage =
        Storage::WrapExternal(DeviceId{}, buffer, sizeof buffer, [&releases] { ++releases; });
    Ref<Tensor> tensor = Tensor::View(storage, 0, {8}, DType::kFloat32);
    storage = nullptr;
    EXPECT_EQ(releases, 0);
  }
  EXPECT_EQ(releases, 1);
}

TEST(TensorTest, DeviceTensorIsNotHostReadable) {
  static char fake_device_memory[16];
  Ref<Storage> storage =
      Storage::WrapExternal(DeviceId{DeviceKind::kCUDA, 0}, fake_device_memory, 16, nullptr);
  Ref<Tensor> tensor = Tensor::View(storage, 0, {4}, DType::kFloat32);
  try {
    tensor->host_data();
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("cuda:0"), std::string::npos);
  }
}

}  // namespace
}  // namespace relay

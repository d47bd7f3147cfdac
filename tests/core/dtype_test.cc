#include "relay/dtype.h"

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "relay/device.h"
#include "relay/dlpack.h"

namespace relay {
namespace {

TEST(DTypeTest, NamesRoundTrip) {
  const char* names[] = {"bool",    "int8",    "int16",   "int32",  "int64",  "uint8",
                         "float16", "float32", "float64", "uint16", "uint32", "uint64"};
  ASSERT_EQ(std::size(names), static_cast<size_t>(kDTypeCount));
  for (const char* name : names) {
    std::optional<DType> dtype = ParseDType(name);
    ASSERT_TRUE(dtype.has_value()) << name;
    EXPECT_EQ(DTypeName(*dtype), name);
  }
  EXPECT_FALSE(ParseDType("float").has_value());
  EXPECT_FALSE(ParseDType("uint128").has_value());
  EXPECT_FALSE(ParseDType("").has_value());
}

TEST(DTypeTest, SizesMatchCppTypes) {
  EXPECT_EQ(DTypeSize(DType::kBool), sizeof(bool));
  EXPECT_EQ(DTypeSize(DType::kInt16), sizeof(int16_t));
  EXPECT_EQ(DTypeSize(DType::kInt64), sizeof(int64_t));
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kFloat64), sizeof(double));
  EXPECT_EQ(DTypeOf<float>(), DType::kFloat32);
  EXPECT_EQ(DTypeOf<uint8_t>(), DType::kUInt8);
  EXPECT_EQ(DTypeOf<uint32_t>(), DType::kUInt32);
  EXPECT_EQ(DTypeSize(DType::kUInt64), sizeof(uint64_t));
  EXPECT_EQ(DTypeOf<char>(), std::nullopt);
}

TEST(DTypeTest, Classification) {
  EXPECT_TRUE(IsFloat(DType::kFloat16));
  EXPECT_FALSE(IsFloat(DType::kInt32));
  EXPECT_TRUE(IsSignedInteger(DType::kInt8));
  EXPECT_FALSE(IsSignedInteger(DType::kUInt8));
  EXPECT_FALSE(IsSignedInteger(DType::kUInt64));
  EXPECT_TRUE(IsUnsignedInteger(DType::kUInt16));
  EXPECT_FALSE(IsUnsignedInteger(DType::kInt32));
  EXPECT_FALSE(IsSignedInteger(DType::kBool));
}

TEST(DTypeTest, DLPackCodesFollowTheDLPackHeader) {
  DLDataType float32 = ToDLDataType(DType::kFloat32);
  EXPECT_EQ(float32.code, kDLFloat);
  EXPECT_EQ(float32.bits, 32);
  EXPECT_EQ(float32.lanes, 1);
  EXPECT_EQ(ToDLDataType(DType::kUInt8).code, kDLUInt);
  EXPECT_EQ(ToDLDataType(DType::kInt64).code, kDLInt);
  EXPECT_EQ(ToDLDataType(DType::kInt64).bits, 64);
  EXPECT_EQ(ToDLDataType(DType::kBool).code, 6);  // kDLBool since DLPack 0.8
  for (int index = 0; index < kDTypeCount; ++index) {
    DType dtype = static_cast<DType>(index);
    EXPECT_EQ(FromDLDataType(ToDLDataType(dtype)), dtype) << DTypeName(dtype);
  }
  EXPECT_FALSE(FromDLDataType(DLDataType{kDLFloat, 32, 4}).has_value());  // vector lanes
  EXPECT_FALSE(FromDLDataType(DLDataType{kDLBfloat, 16, 1}).has_value());
  EXPECT_EQ(FromDLDataType(DLDataType{kDLUInt, 32, 1}), DType::kUInt32);
  EXPECT_FALSE(FromDLDataType(DLDataType{kDLUInt, 128, 1}).has_value());
}

// Expected bit patterns are NumPy's: np.float32(v).astype(np.float16).view(np.uint16).
TEST(Float16Test, ConversionMatchesNumPy) {
  struct Case {
    float value;
    uint16_t bits;
  };
  const Case cases[] = {
      {1.0f, 0x3c00},
      {65504.0f, 0x7bff},
      {0.1f, 0x2e66},
      {1.0f / 3.0f, 0x3555},
      {-2.0f, 0xc000},
      {65520.0f, 0x7c00},
      {65519.0f, 0x7bff},
      {std::ldexp(1.0f, -14), 0x0400},
      {std::ldexp(1.0f, -24), 0x0001},
      {std::ldexp(1.0f, -25), 0x0000},
      {3 * std::ldexp(1.0f, -25), 0x0002},
      {1e-8f, 0x0000},
      {2049.0f, 0x6800},
      {2051.0f, 0x6802},
      {-0.0f, 0x8000},
      {std::numeric_limits<float>::infinity(), 0x7c00},
  };
  for (const Case& test_case : cases) {
    EXPECT_EQ(Float16(test_case.value).bits, test_case.bits) << test_case.value;
  }
}

TEST(Float16Test, EveryHalfValueRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    Float16 half = Float16::FromBits(static_cast<uint16_t>(bits));
    float value = static_cast<float>(half);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(Float16(value))));
      continue;
    }
    ASSERT_EQ(Float16(value).bits, bits) << "bits " << bits << " value " << value;
  }
}

TEST(DeviceIdTest, ParseAndPrint) {
  EXPECT_EQ(ParseDeviceId("cpu"), (DeviceId{DeviceKind::kCPU, 0}));
  EXPECT_EQ(ParseDeviceId("cuda:1"), (DeviceId{DeviceKind::kCUDA, 1}));
  EXPECT_EQ(ParseDeviceId("opencl:0"), (DeviceId{DeviceKind::kOpenCL, 0}));
  EXPECT_EQ(ParseDeviceId("xrt:2")->ToString(), "xrt:2");
  EXPECT_FALSE(ParseDeviceId("gpu:0").has_value());
  EXPECT_FALSE(ParseDeviceId("cuda:").has_value());
  EXPECT_FALSE(ParseDeviceId("cuda:-1").has_value());
  EXPECT_FALSE(ParseDeviceId("cuda:1x").has_value());
  EXPECT_EQ((DeviceId{DeviceKind::kCUDA, 3}).ToString(), "cuda:3");
}

}  // namespace
}  // namespace relay

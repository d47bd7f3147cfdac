// Helpers shared by the NumPy-fixture suites (elementwise_kernels_test.cc,
// reduction_kernels_test.cc, transform_kernels_test.cc): reading a fixture
// directory's cases.txt index (written by fixture_writer.py through the
// generate_*_cases.py scripts), loading its .npy files and comparing results
// with NumPy's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/npy.h"
#include "relay/tensor.h"

#if defined(RELAY_HAS_CUDA_DEVICE)
#include "devices/cuda/cuda_device.h"
#include "tests/devices/fake_cuda_driver.h"
#endif

namespace relay::kernels::testing {

// The fixture directory of a suite, with a trailing slash.
inline std::string FixtureDirectory(std::string_view suite) {
  return std::string(RELAY_TEST_FIXTURE_DIR) + "/" + std::string(suite) + "/";
}

// A whole decimal integer (no sign other than '-', nothing after it).
inline bool ParseInteger(const std::string& text, int64_t& value) {
  const char* end = text.data() + text.size();
  auto [parsed_end, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && parsed_end == end && !text.empty();
}

// ---- the index --------------------------------------------------------------------------

// Reads DIRECTORY/cases.txt: one case per line, '#' lines are comments. A line
// is a suite-specific run of leading fields, read by
// `read_fields(std::istringstream&, Case&)` (false when they do not parse),
// then KEY=VALUE attributes converted by
// `parse_attribute(key, value) -> std::optional<AttrValue>` (nullopt when
// malformed). `Case` has the members name, operator_name, attributes (Attrs)
// and index_error; a line that cannot be read becomes a case that carries the
// error in index_error (named malformed_line_N when its fields did not parse),
// so that the test reports it instead of the index silently losing a case.
template <typename Case, typename ReadFields, typename ParseAttribute>
std::vector<Case> LoadCaseIndex(const std::string& directory, ReadFields read_fields,
                                ParseAttribute parse_attribute) {
  std::vector<Case> cases;
  std::ifstream index(directory + "cases.txt");
  std::string line;
  int line_number = 0;
  while (std::getline(index, line)) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Case test_case;
    const std::string where = "cases.txt:" + std::to_string(line_number) + ": ";
    if (!read_fields(fields, test_case)) {
      test_case.name = "malformed_line_" + std::to_string(line_number);
      test_case.index_error = where + "cannot parse '" + line + "'";
      cases.push_back(std::move(test_case));
      continue;
    }
    std::string attribute;
    while (fields >> attribute) {
      size_t equals = attribute.find('=');
      if (equals == std::string::npos || equals == 0) {
        test_case.index_error = where + "attribute without a value: '" + attribute + "'";
        break;
      }
      std::string key = attribute.substr(0, equals);
      std::optional<AttrValue> value = parse_attribute(key, attribute.substr(equals + 1));
      if (!value) {
        test_case.index_error = where + "malformed attribute '" + attribute + "'";
        break;
      }
      test_case.attributes.emplace_back(std::move(key), std::move(*value));
    }
    cases.push_back(std::move(test_case));
  }
  return cases;
}

// A case of the index format shared by the elementwise and reduction suites:
//   CASE OPERATOR INPUT_COUNT TOLERANCE [KEY=VALUE ...]
// with inputs CASE.in<N>.npy and expected output CASE.out.npy.
struct ToleranceCase {
  std::string name;
  std::string operator_name;
  int input_count = 0;
  double tolerance = 0;
  Attrs attributes;
  // Set when the index line could not be parsed; the test reports it.
  std::string index_error;
};

// gtest prints a failing case's parameter with this.
inline void PrintTo(const ToleranceCase& test_case, std::ostream* out) {
  *out << test_case.name << " (" << test_case.operator_name << ")";
}

// Reads CASE OPERATOR INPUT_COUNT TOLERANCE (at least one input).
inline bool ReadToleranceFields(std::istringstream& fields, ToleranceCase& test_case) {
  std::string tolerance;
  fields >> test_case.name >> test_case.operator_name >> test_case.input_count >> tolerance;
  if (!fields || test_case.input_count < 1) return false;
  test_case.tolerance = std::strtod(tolerance.c_str(), nullptr);
  return true;
}

// A parameterised test's name: the case's name.
template <typename Case>
std::string CaseTestName(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

// ---- fixture files ----------------------------------------------------------------------

// CASE.in0.npy ... CASE.in<count - 1>.npy, on the host.
inline std::vector<Ref<Tensor>> ReadCaseInputs(const std::string& directory,
                                               const std::string& name, int count) {
  std::vector<Ref<Tensor>> inputs;
  for (int position = 0; position < count; ++position) {
    inputs.push_back(
        ReadNpy(directory + name + ".in" + std::to_string(position) + ".npy", HostDevice()));
  }
  return inputs;
}

// ---- the device the cases run on ------------------------------------------------------

// The fixture suites run every case on the host, and again, registered by
// ctest under a prefix, on the device that $RELAY_TEST_DEVICE names
// ("opencl:0"): inputs are copied there, the operator runs there, and the
// results are copied back and compared with the same NumPy outputs.

// "fake-cuda" names a CUDA device over tests/devices/fake_cuda_driver.c:
// every kernel is compiled by NVRTC to PTX, loaded and launched through the
// driver API as on a GPU, but nothing runs, so its results are not compared
// (FixtureDeviceComputes).
inline bool FixtureDeviceComputes() {
  const char* name = std::getenv("RELAY_TEST_DEVICE");
  return name == nullptr || std::string_view(name) != "fake-cuda";
}

// The device named by $RELAY_TEST_DEVICE, or nullptr (the host) when unset.
// Throws the device's error when it is not available.
inline Device* FixtureDevice() {
  const char* name = std::getenv("RELAY_TEST_DEVICE");
  if (name == nullptr || *name == '\0') return nullptr;
  if (std::string_view(name) == "fake-cuda") {
#if defined(RELAY_HAS_CUDA_DEVICE)
    static Device* const fake = [] {
      fake_cuda_reset(1, size_t{8} << 30, 0);
      return devices::CreateCudaDevice(
                 devices::LoadCudaDriverFromResolver(&fake_cuda_symbol, "fake libcuda"), 0)
          .release();
    }();
    return fake;
#else
    throw Error(ErrorKind::kDevice, "the CUDA backend is not part of this build");
#endif
  }
  const std::optional<DeviceId> id = ParseDeviceId(name);
  if (!id)
    throw Error(ErrorKind::kUsage,
                std::string("RELAY_TEST_DEVICE=") + name + ": no such device name");
  return id->kind == DeviceKind::kCPU ? nullptr : &GetDevice(*id);
}

// Why the fixture device cannot be used, or "" when it can (or is the host).
inline std::string FixtureDeviceProblem() {
  try {
    FixtureDevice();
    return "";
  } catch (const Error& error) {
    return error.what();
  }
}

// Skips the running test, saying why, when the fixture device is absent.
#define RELAY_SKIP_WITHOUT_FIXTURE_DEVICE()                                            \
  do {                                                                                 \
    if (const std::string problem = ::relay::kernels::testing::FixtureDeviceProblem(); \
        !problem.empty())                                                              \
      GTEST_SKIP() << problem;                                                         \
  } while (false)

// `tensors` on the fixture device (themselves on the host).
inline std::vector<Ref<Tensor>> OnFixtureDevice(std::vector<Ref<Tensor>> tensors) {
  if (Device* device = FixtureDevice()) {
    for (Ref<Tensor>& tensor : tensors) tensor = CopyTensor(*tensor, *device);
  }
  return tensors;
}

// `tensors` copied to the host where they are not there (nulls stay null).
inline std::vector<Ref<Tensor>> OnHost(std::vector<Ref<Tensor>> tensors) {
  for (Ref<Tensor>& tensor : tensors) {
    if (tensor && !tensor->on_host()) tensor = CopyTensor(*tensor, HostDevice());
  }
  return tensors;
}

inline Ref<Tensor> OnHost(Ref<Tensor> tensor) {
  return OnHost(std::vector<Ref<Tensor>>{std::move(tensor)})[0];
}

// ---- comparing elements -----------------------------------------------------------------

inline const uint8_t* ElementBytes(const Tensor& tensor, int64_t index) {
  return static_cast<const uint8_t*>(tensor.host_data()) +
         static_cast<size_t>(index) * DTypeSize(tensor.dtype());
}

template <typename T>
T LoadElement(const Tensor& tensor, int64_t index) {
  T value;
  std::memcpy(&value, ElementBytes(tensor, index), sizeof value);
  return value;
}

inline double FloatElement(const Tensor& tensor, int64_t index) {
  switch (tensor.dtype()) {
    case DType::kFloat16:
      return static_cast<float>(LoadElement<Float16>(tensor, index));
    case DType::kFloat32:
      return LoadElement<float>(tensor, index);
    case DType::kFloat64:
      return LoadElement<double>(tensor, index);
    default:
      break;
  }
  ADD_FAILURE() << "not a floating-point dtype: " << DTypeName(tensor.dtype());
  return 0;
}

// Integers and bools, widened; a bool is read as its raw byte so that a value
// other than 0 or 1 shows up as a mismatch.
inline int64_t IntegerElement(const Tensor& tensor, int64_t index) {
  switch (tensor.dtype()) {
    case DType::kBool:
      return LoadElement<uint8_t>(tensor, index);
    case DType::kInt8:
      return LoadElement<int8_t>(tensor, index);
    case DType::kInt16:
      return LoadElement<int16_t>(tensor, index);
    case DType::kInt32:
      return LoadElement<int32_t>(tensor, index);
    case DType::kInt64:
      return LoadElement<int64_t>(tensor, index);
    case DType::kUInt8:
      return LoadElement<uint8_t>(tensor, index);
    case DType::kUInt16:
      return LoadElement<uint16_t>(tensor, index);
    case DType::kUInt32:
      return LoadElement<uint32_t>(tensor, index);
    case DType::kUInt64:  // its bits: compared for equality only
      return static_cast<int64_t>(LoadElement<uint64_t>(tensor, index));
    default:
      break;
  }
  ADD_FAILURE() << "not an integer dtype: " << DTypeName(tensor.dtype());
  return 0;
}

// NaN matches NaN, an infinity matches only itself, anything else within
// tolerance * max(1, |expected|) (relative for large values, absolute near 0).
inline bool FloatsMatch(double expected, double actual, double tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return expected == actual;
  return std::fabs(actual - expected) <= tolerance * std::max(1.0, std::fabs(expected));
}

inline constexpr int64_t kReportedMismatches = 8;

// Compares values: floats within `tolerance` (see FloatsMatch), integers and
// bools exactly. Reports each mismatching element (the first few in full) and
// returns how many there were.
inline int64_t CompareValues(const Tensor& expected, const Tensor& actual, double tolerance) {
  int64_t mismatches = 0;
  const bool is_float = IsFloat(expected.dtype());
  for (int64_t index = 0; index < expected.element_count(); ++index) {
    std::ostringstream difference;
    difference.precision(17);
    if (is_float) {
      double want = FloatElement(expected, index), got = FloatElement(actual, index);
      if (FloatsMatch(want, got, tolerance)) continue;
      difference << "expected " << want << ", got " << got << " (difference " << got - want
                 << ", tolerance " << tolerance << " * max(1, |expected|))";
    } else {
      int64_t want = IntegerElement(expected, index), got = IntegerElement(actual, index);
      if (want == got) continue;
      difference << "expected " << want << ", got " << got;
    }
    if (++mismatches <= kReportedMismatches) {
      ADD_FAILURE() << "element " << index << " (flat, row-major): " << difference.str();
    }
  }
  return mismatches;
}

// Compares bit for bit. Reports the first few elements whose bytes differ and
// returns how many did.
inline int64_t CompareBytes(const Tensor& expected, const Tensor& actual) {
  const size_t size = DTypeSize(expected.dtype());
  const auto* want = static_cast<const uint8_t*>(expected.host_data());
  const auto* got = static_cast<const uint8_t*>(actual.host_data());
  int64_t mismatches = 0;
  for (int64_t index = 0; index < expected.element_count(); ++index) {
    const size_t offset = static_cast<size_t>(index) * size;
    if (std::memcmp(want + offset, got + offset, size) == 0) continue;
    if (++mismatches <= kReportedMismatches) {
      std::ostringstream bytes;
      for (size_t byte = 0; byte < size; ++byte) {
        bytes << " " << int(want[offset + byte]) << "/" << int(got[offset + byte]);
      }
      ADD_FAILURE() << "element " << index
                    << " (flat, row-major) differs; expected/actual bytes:" << bytes.str();
    }
  }
  return mismatches;
}

// ---- running a case ---------------------------------------------------------------------

// Runs a ToleranceCase read from `directory` through RunOperator and checks
// its dtype, shape and values against CASE.out.npy.
inline void ExpectToleranceCaseMatches(const std::string& directory,
                                       const ToleranceCase& test_case) {
  ASSERT_TRUE(test_case.index_error.empty()) << test_case.index_error;
  RELAY_SKIP_WITHOUT_FIXTURE_DEVICE();
  try {
    std::vector<Ref<Tensor>> inputs =
        OnFixtureDevice(ReadCaseInputs(directory, test_case.name, test_case.input_count));
    Ref<Tensor> expected = ReadNpy(directory + test_case.name + ".out.npy", HostDevice());

    Ref<Tensor> actual = OnHost(RunOperator(test_case.operator_name, inputs, test_case.attributes));

    ASSERT_TRUE(actual) << "RunOperator returned no tensor";
    ASSERT_EQ(DTypeName(actual->dtype()), DTypeName(expected->dtype()));
    ASSERT_EQ(ShapeToString(actual->shape()), ShapeToString(expected->shape()));
    if (!FixtureDeviceComputes()) return;
    EXPECT_EQ(CompareValues(*expected, *actual, test_case.tolerance), 0)
        << "mismatching elements of " << expected->element_count() << " for "
        << test_case.operator_name;
  } catch (const Error& error) {
    FAIL() << test_case.operator_name << " threw: " << error.what();
  }
}

// ---- direct tests -----------------------------------------------------------------------

// A float32 tensor of `shape` holding `values`.
inline Ref<Tensor> FilledTensor(Shape shape, const std::vector<float>& values) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), std::move(shape), DType::kFloat32);
  EXPECT_EQ(tensor->element_count(), static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), tensor->data<float>());
  return tensor;
}

// Runs `name` and returns the relay::Error it throws (failing if it throws
// none).
inline Error ExpectRunError(std::string_view name, const std::vector<Ref<Tensor>>& inputs,
                            const Attrs& attributes = {}) {
  try {
    RunOperator(name, inputs, attributes);
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << name << " did not throw relay::Error";
  return Error(ErrorKind::kInternal, "no error");
}

}  // namespace relay::kernels::testing

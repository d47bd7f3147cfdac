// Helpers shared by npy_test.cc and npz_test.cc: the fixture value formulas
// (kept in step with tests/fixtures/generate_npy_fixtures.py), temporary
// directories, error assertions and the NumPy oracle run through python3.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "relay/devices.h"
#include "relay/dtype.h"
#include "relay/error.h"
#include "relay/tensor.h"

namespace relay::testing {

inline constexpr DType kAllDTypes[] = {
#define RELAY_DTYPE(enumerator, ...) DType::enumerator,
#include "relay/dtypes.def"
#undef RELAY_DTYPE
};

inline std::string FixturePath(const std::string& name) {
  return std::string(RELAY_TEST_FIXTURE_DIR) + "/npy/" + name;
}

// The value at flat C-order index `index` of every fixture array of `dtype`
// (see generate_npy_fixtures.py). Every value is exact in every float type.
inline double FormulaValue(DType dtype, int64_t index) {
  const int64_t cycle = index * 7 % 11;
  switch (dtype) {
    case DType::kBool:
      return index % 3 == 0 ? 1.0 : 0.0;
    case DType::kInt8:
      return static_cast<double>(cycle - 5);
    case DType::kInt16:
      return static_cast<double>((cycle - 5) * 1000);
    case DType::kInt32:
      return static_cast<double>((cycle - 5) * 100000);
    case DType::kInt64:
      return static_cast<double>((cycle - 5) * 1000000000000);
    case DType::kUInt8:
      return static_cast<double>(cycle * 23);
    case DType::kUInt16:
      return static_cast<double>(cycle * 6000);
    case DType::kUInt32:
      return static_cast<double>(cycle * 400000000);
    case DType::kUInt64:  // exact: 10**18 is 2**18 * 5**18
      return static_cast<double>(cycle) * 1e18;
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return static_cast<double>(index - 5) / 4.0;
  }
  return 0;
}

template <typename T>
double ToDouble(T value) {
  return static_cast<double>(value);
}
inline double ToDouble(Float16 value) {
  return static_cast<double>(static_cast<float>(value));
}

inline double ElementAsDouble(const Tensor& tensor, int64_t index) {
  switch (tensor.dtype()) {
#define RELAY_DTYPE(enumerator, name, cpp_type, ...) \
  case DType::enumerator:                            \
    return ToDouble(tensor.data<cpp_type>()[index]);
#include "relay/dtypes.def"
#undef RELAY_DTYPE
  }
  return 0;
}

template <typename T>
T FromDouble(double value) {
  return static_cast<T>(value);
}
template <>
inline Float16 FromDouble<Float16>(double value) {
  return Float16(static_cast<float>(value));
}

// A host tensor holding the formula's values.
inline Ref<Tensor> FormulaTensor(DType dtype, const Shape& shape) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, dtype);
  for (int64_t index = 0; index < tensor->element_count(); ++index) {
    const double value = FormulaValue(dtype, index);
    switch (dtype) {
#define RELAY_DTYPE(enumerator, name, cpp_type, ...)               \
  case DType::enumerator:                                          \
    tensor->data<cpp_type>()[index] = FromDouble<cpp_type>(value); \
    break;
#include "relay/dtypes.def"
#undef RELAY_DTYPE
    }
  }
  return tensor;
}

inline void ExpectFormulaTensor(const Tensor& tensor, DType dtype, const Shape& shape,
                                const std::string& label) {
  ASSERT_EQ(tensor.dtype(), dtype) << label;
  ASSERT_EQ(tensor.shape(), shape) << label;
  for (int64_t index = 0; index < tensor.element_count(); ++index) {
    ASSERT_EQ(ElementAsDouble(tensor, index), FormulaValue(dtype, index))
        << label << " at flat index " << index;
  }
}

inline bool SameBytes(const Tensor& left, const Tensor& right) {
  return left.dtype() == right.dtype() && left.shape() == right.shape() &&
         std::memcmp(left.host_data(), right.host_data(), left.byte_size()) == 0;
}

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/relay_npy_test_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = buffer.data();
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  std::string path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  // Names of the directory's entries, sorted.
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

inline std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(stream), {});
}

inline void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
}

// Runs `action`, which must throw relay::Error of `kind` whose one-line
// what() starts with "NAME: error: " and contains `phrase`.
inline void ExpectError(const std::function<void()>& action, ErrorKind kind,
                        const std::string& name, const std::string& phrase) {
  try {
    action();
  } catch (const Error& error) {
    const std::string what = error.what();
    EXPECT_EQ(error.kind(), kind) << what;
    EXPECT_EQ(what.rfind(name + ": error: ", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(what.find(phrase), std::string::npos) << "expected '" << phrase << "' in: " << what;
    return;
  }
  ADD_FAILURE() << "expected an error containing '" << phrase << "'";
}

// The first of python3 on PATH and /usr/bin/python3 that can import numpy
// (a PATH python may be a virtual environment without it); empty if none.
inline const std::string& PythonWithNumpy() {
  static const std::string interpreter = [] {
    for (const char* candidate : {"python3", "/usr/bin/python3"}) {
      const std::string probe = std::string(candidate) + " -c 'import numpy' > /dev/null 2>&1";
      if (std::system(probe.c_str()) == 0) return std::string(candidate);
    }
    return std::string();
  }();
  return interpreter;
}

inline bool PythonNumpyAvailable() {
  return !PythonWithNumpy().empty();
}

// The NumPy side of the oracle: the same formulas, written in Python.
inline constexpr const char* kPythonFormula = R"(
import sys
import numpy as np

SCALES = {'int8': 1, 'int16': 1000, 'int32': 100000, 'int64': 1000000000000}
UNSIGNED_SCALES = {'uint8': 23, 'uint16': 6000, 'uint32': 400000000, 'uint64': 10**18}

def formula(dtype, shape):
    index = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    if dtype == 'bool':
        values = index % 3 == 0
    elif dtype in SCALES:
        values = (index * 7 % 11 - 5) * SCALES[dtype]
    elif dtype in UNSIGNED_SCALES:
        values = (index * 7 % 11).astype(np.uint64) * np.uint64(UNSIGNED_SCALES[dtype])
    else:
        values = (index - 5) / 4
    return values.astype(dtype).reshape(shape)

def check(array, dtype, shape, label):
    if array.dtype != np.dtype(dtype) or array.shape != tuple(shape):
        sys.exit('%s: got %s %s, expected %s %s' % (label, array.dtype, array.shape, dtype, shape))
    if not np.array_equal(array, formula(dtype, shape)):
        sys.exit('%s: values differ from the formula' % label)
)";

// Writes `script` (appended to kPythonFormula) into `directory` and runs it
// with PythonWithNumpy(); returns its exit status (0 = the checks passed).
inline int RunPythonCheck(const TemporaryDirectory& directory, const std::string& script) {
  const std::string script_path = directory / "check.py";
  {
    std::ofstream stream(script_path);
    stream << kPythonFormula << script;
  }
  const std::string command =
      "cd '" + directory.path() + "' && " + PythonWithNumpy() + " '" + script_path + "'";
  return std::system(command.c_str());
}

inline std::string PythonShape(const Shape& shape) {
  std::string text = "(";
  for (const int64_t dimension : shape) text += std::to_string(dimension) + ",";
  return text + ")";
}

}  // namespace relay::testing

// Helpers shared by the device tests: catching the relay::Error an operation
// throws, byte patterns to copy around, and asking dlopen whether this machine
// has a driver.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <string>
#include <vector>

#include "relay/error.h"

namespace relay::devices {

// The relay::Error that `action` throws; fails the test when it throws none.
inline Error ErrorFrom(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "no relay::Error was thrown";
  return Error(ErrorKind::kInternal, "no error thrown");
}

// The message of the error `action` throws; fails the test when it throws
// none or one of another kind than kDevice.
inline std::string DeviceErrorMessage(const std::function<void()>& action) {
  const Error error = ErrorFrom(action);
  EXPECT_EQ(error.kind(), ErrorKind::kDevice) << error.message();
  return error.message();
}

inline bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// `bytes` bytes counting up from `first` (wrapping past 255), so that a copy
// from the wrong offset shows.
inline std::vector<uint8_t> Pattern(size_t bytes, uint8_t first) {
  std::vector<uint8_t> values(bytes);
  std::iota(values.begin(), values.end(), first);
  return values;
}

// Whether dlopen can open any of `library_names`: whether this machine has a
// driver, asked of dlopen directly rather than of the code under test.
inline bool HostCanLoadAnyOf(std::initializer_list<const char*> library_names) {
  for (const char* name : library_names) {
    if (void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      dlclose(library);
      return true;
    }
  }
  return false;
}

}  // namespace relay::devices

// The C API (relay/relay_vm.h): a whole run, inspection, values of each
// kind, and every error path, each with its status and message; and the
// header compiled as C (c_api_from_c.c).
#include "relay/relay_vm.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "relay/devices.h"
#include "relay/npy.h"

extern "C" int relay_api_test_run_from_c(const char* path, const char* params, float* first);

namespace relay {
namespace {

const std::string kProgram = std::string(RELAY_TEST_FIXTURE_DIR) + "/api/program.relay";
const std::string kOnnxModel = std::string(RELAY_TEST_FIXTURE_DIR) + "/onnx/two_outputs.onnx";

// A DLTensor over `values` (float32, row-major) of `shape`.
struct HostTensor {
  std::vector<float> values;
  std::vector<int64_t> shape;
  DLTensor tensor{};
  HostTensor(std::vector<float> data, std::vector<int64_t> dims)
      : values(std::move(data)), shape(std::move(dims)) {
    tensor.data = values.data();
    tensor.device = {kDLCPU, 0};
    tensor.ndim = int32_t(shape.size());
    tensor.dtype = {kDLFloat, 32, 1};
    tensor.shape = shape.data();
  }
};

// Expects `status` to be `expected` with a message containing `part`.
void ExpectFailure(int status, relay_status expected, const std::string& part) {
  EXPECT_EQ(status, expected) << relay_last_error();
  EXPECT_NE(std::string(relay_last_error()).find(part), std::string::npos) << relay_last_error();
}

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(relay_executable_load(kProgram.c_str(), nullptr, &exe_), RELAY_OK)
        << relay_last_error();
    ASSERT_EQ(relay_vm_create(exe_, nullptr, &vm_), RELAY_OK) << relay_last_error();
  }
  void TearDown() override {
    relay_vm_free(vm_);
    relay_executable_free(exe_);
  }
  void SetWeight() {
    HostTensor w({1, 0, 0, 0, 1, 0, 0, 0, 1, -1, -1, -1}, {4, 3});
    ASSERT_EQ(relay_vm_set_input(vm_, "w", &w.tensor), RELAY_OK) << relay_last_error();
  }
  relay_executable* exe_ = nullptr;
  relay_vm* vm_ = nullptr;
};

TEST_F(CApi, RunsMainAndHandsTheResultOutAsDlpack) {
  SetWeight();
  HostTensor x({1, -2, 3, 4, 5, -6}, {2, 3});
  ASSERT_EQ(relay_vm_set_input(vm_, "x", &x.tensor), RELAY_OK) << relay_last_error();
  x.values.assign(6, 100.0f);  // the input was copied
  relay_value* result = nullptr;
  ASSERT_EQ(relay_vm_invoke(vm_, nullptr, &result), RELAY_OK) << relay_last_error();
  relay_value_kind kind;
  ASSERT_EQ(relay_value_kind_of(result, &kind), RELAY_OK);
  EXPECT_EQ(kind, RELAY_VALUE_TENSOR);
  DLManagedTensor* output = nullptr;
  ASSERT_EQ(relay_value_to_dlpack(result, &output), RELAY_OK) << relay_last_error();
  relay_value_free(result);  // the DLPack tensor keeps the data alive
  ASSERT_EQ(output->dl_tensor.ndim, 2);
  EXPECT_EQ(output->dl_tensor.shape[0], 2);
  EXPECT_EQ(output->dl_tensor.shape[1], 4);
  const float* y = static_cast<const float*>(output->dl_tensor.data);
  // relu(x w^T) with w = identity rows and a row of -1s.
  const float expected[] = {1, 0, 3, 0, 4, 5, 0, 0};
  for (int index = 0; index < 8; ++index) EXPECT_FLOAT_EQ(y[index], expected[index]) << index;
  output->deleter(output);
}

TEST_F(CApi, DescribesFunctionsAndParameters) {
  size_t count = 0;
  ASSERT_EQ(relay_executable_function_count(exe_, &count), RELAY_OK);
  EXPECT_GE(count, 4u);
  bool found_pair = false;
  for (size_t index = 0; index < count; ++index) {
    const char* name = nullptr;
    ASSERT_EQ(relay_executable_function_name(exe_, index, &name), RELAY_OK);
    found_pair |= std::string(name) == "pair";
  }
  EXPECT_TRUE(found_pair);
  size_t parameters = 0;
  ASSERT_EQ(relay_executable_parameter_count(exe_, nullptr, &parameters), RELAY_OK);
  EXPECT_EQ(parameters, 2u);
  relay_parameter x{};
  ASSERT_EQ(relay_executable_parameter(exe_, "main", 0, &x), RELAY_OK);
  EXPECT_STREQ(x.name, "x");
  EXPECT_EQ(x.is_tensor, 1);
  EXPECT_EQ(x.dtype.code, kDLFloat);
  EXPECT_EQ(x.dtype.bits, 32);
  ASSERT_EQ(x.ndim, 2);
  EXPECT_EQ(x.shape[0], -1);
  EXPECT_EQ(x.shape[1], 3);
  EXPECT_STREQ(x.type, "Tensor[(?, 3), float32]");
  size_t results = 0;
  ASSERT_EQ(relay_executable_result_count(exe_, "pair", &results), RELAY_OK);
  EXPECT_EQ(results, 2u);
  relay_parameter second{};
  ASSERT_EQ(relay_executable_result(exe_, "pair", 1, &second), RELAY_OK);
  EXPECT_STREQ(second.name, "out1");
  ASSERT_EQ(second.ndim, 1);
  EXPECT_EQ(second.shape[0], 2);
  ExpectFailure(relay_executable_result(exe_, "pair", 2, &second), RELAY_ERROR_USAGE,
                "result 2 of @pair's 2");
  ExpectFailure(relay_executable_result_count(exe_, nullptr, nullptr), RELAY_ERROR_USAGE, "count");
  EXPECT_STREQ(relay_version(), RELAY_VERSION_STRING_FOR_TESTS);
}

TEST_F(CApi, ReturnsTuplesAndConstructedValues) {
  // @count's list: Cons(2, Cons(1, Nil)), its input a scalar.
  relay_value* result = nullptr;
  ExpectFailure(relay_vm_invoke(vm_, "count", &result), RELAY_ERROR_USAGE, "missing input 'n'");
  EXPECT_EQ(result, nullptr);
  ASSERT_EQ(relay_vm_set_input_scalar(vm_, "n", 2), RELAY_OK) << relay_last_error();
  ASSERT_EQ(relay_vm_invoke(vm_, "count", &result), RELAY_OK) << relay_last_error();
  std::vector<int32_t> items;
  for (relay_value* cell = result;;) {
    relay_value_kind kind;
    ASSERT_EQ(relay_value_kind_of(cell, &kind), RELAY_OK);
    ASSERT_EQ(kind, RELAY_VALUE_CONSTRUCTED);
    size_t fields = 0;
    ASSERT_EQ(relay_value_field_count(cell, &fields), RELAY_OK);
    if (fields == 0) {  // Nil
      if (cell != result) relay_value_free(cell);
      break;
    }
    relay_value *head = nullptr, *tail = nullptr;
    ASSERT_EQ(relay_value_field_get(cell, 0, &head), RELAY_OK);
    ASSERT_EQ(relay_value_field_get(cell, 1, &tail), RELAY_OK);
    DLManagedTensor* item = nullptr;
    ASSERT_EQ(relay_value_to_dlpack(head, &item), RELAY_OK);
    items.push_back(*static_cast<const int32_t*>(item->dl_tensor.data));
    item->deleter(item);
    relay_value_free(head);
    if (cell != result) relay_value_free(cell);
    cell = tail;
  }
  EXPECT_EQ(items, (std::vector<int32_t>{2, 1}));
  relay_value_free(result);

  // A tuple from the ONNX model with two outputs.
  relay_executable* model = nullptr;
  ASSERT_EQ(relay_executable_load(kOnnxModel.c_str(), nullptr, &model), RELAY_OK)
      << relay_last_error();
  relay_vm* vm = nullptr;
  ASSERT_EQ(relay_vm_create(model, "cpu", &vm), RELAY_OK);
  HostTensor x({0.5f, -1, 2, 1, 1, 1}, {2, 3});
  ASSERT_EQ(relay_vm_set_input(vm, "input.1", &x.tensor), RELAY_OK) << relay_last_error();
  ASSERT_EQ(relay_vm_invoke(vm, nullptr, &result), RELAY_OK) << relay_last_error();
  relay_value_kind kind;
  ASSERT_EQ(relay_value_kind_of(result, &kind), RELAY_OK);
  EXPECT_EQ(kind, RELAY_VALUE_TUPLE);
  size_t size = 0;
  ASSERT_EQ(relay_value_tuple_size(result, &size), RELAY_OK);
  EXPECT_EQ(size, 2u);
  relay_value* field = nullptr;
  ASSERT_EQ(relay_value_tuple_get(result, 1, &field), RELAY_OK);
  DLManagedTensor* softmax = nullptr;
  ASSERT_EQ(relay_value_to_dlpack(field, &softmax), RELAY_OK);
  const float* rows = static_cast<const float*>(softmax->dl_tensor.data);
  float sum = 0;
  for (int column = 0; column < 4; ++column) sum += rows[column];
  EXPECT_NEAR(sum, 1.0f, 1e-5);  // a softmax row
  softmax->deleter(softmax);
  // Not a tensor, not constructed, out of range.
  DLManagedTensor* none = nullptr;
  ExpectFailure(relay_value_to_dlpack(result, &none), RELAY_ERROR_USAGE, "not a tensor");
  ExpectFailure(relay_value_field_count(result, &size), RELAY_ERROR_USAGE, "not a constructed");
  ExpectFailure(relay_value_tuple_get(result, 2, &field), RELAY_ERROR_USAGE, "field 2 of 2");
  ExpectFailure(relay_value_tuple_size(field, &size), RELAY_ERROR_USAGE, "not a tuple");
  relay_value_free(field);
  relay_value_free(result);
  relay_vm_free(vm);
  relay_executable_free(model);
}

TEST_F(CApi, EveryErrorPathHasAStatusAndAMessage) {
  relay_executable* exe = nullptr;
  ExpectFailure(relay_executable_load(nullptr, nullptr, &exe), RELAY_ERROR_USAGE, "path");
  ExpectFailure(relay_executable_load(kProgram.c_str(), nullptr, nullptr), RELAY_ERROR_USAGE,
                "out");
  ExpectFailure(relay_executable_load("/nonexistent.relay", nullptr, &exe), RELAY_ERROR_LOAD,
                "/nonexistent.relay");
  EXPECT_EQ(exe, nullptr);
  ExpectFailure(relay_executable_load(kProgram.c_str(), "/nonexistent.npz", &exe), RELAY_ERROR_LOAD,
                "/nonexistent.npz");
  size_t count = 0;
  const char* name = nullptr;
  relay_parameter parameter{};
  ExpectFailure(relay_executable_function_count(nullptr, &count), RELAY_ERROR_USAGE, "exe");
  ExpectFailure(relay_executable_function_count(exe_, nullptr), RELAY_ERROR_USAGE, "count");
  ExpectFailure(relay_executable_function_name(exe_, 99, &name), RELAY_ERROR_USAGE, "function 99");
  ExpectFailure(relay_executable_parameter_count(exe_, "absent", &count), RELAY_ERROR_USAGE,
                "no function @absent");
  ExpectFailure(relay_executable_parameter(exe_, nullptr, 5, &parameter), RELAY_ERROR_USAGE,
                "parameter 5");
  relay_vm* vm = nullptr;
  ExpectFailure(relay_vm_create(nullptr, nullptr, &vm), RELAY_ERROR_USAGE, "exe");
  ExpectFailure(relay_vm_create(exe_, "cuda", &vm), RELAY_ERROR_DEVICE, "cuda");
  EXPECT_EQ(vm, nullptr);
  HostTensor x({1, 2, 3}, {1, 3});
  ExpectFailure(relay_vm_set_input(nullptr, "x", &x.tensor), RELAY_ERROR_USAGE, "vm");
  ExpectFailure(relay_vm_set_input(vm_, nullptr, &x.tensor), RELAY_ERROR_USAGE, "name");
  ExpectFailure(relay_vm_set_input(vm_, "x", nullptr), RELAY_ERROR_USAGE, "tensor");
  ExpectFailure(relay_vm_set_input(vm_, "nope", &x.tensor), RELAY_ERROR_USAGE,
                "no function has an input 'nope'");
  HostTensor wrong({1, 2}, {1, 2});
  ExpectFailure(relay_vm_set_input(vm_, "x", &wrong.tensor), RELAY_ERROR_USAGE,
                "Tensor[(?, 3), float32]");
  DLTensor gpu = x.tensor;
  gpu.device = {kDLCUDA, 0};
  ExpectFailure(relay_vm_set_input(vm_, "x", &gpu), RELAY_ERROR_USAGE, "not on the CPU");
  DLTensor odd = x.tensor;
  odd.dtype = {kDLFloat, 8, 1};
  ExpectFailure(relay_vm_set_input(vm_, "x", &odd), RELAY_ERROR_USAGE, "dtype");
  DLTensor strided = x.tensor;
  int64_t strides[2] = {1, 2};
  strided.strides = strides;
  ExpectFailure(relay_vm_set_input(vm_, "x", &strided), RELAY_ERROR_USAGE, "not compact");
  DLTensor empty_data = x.tensor;
  empty_data.data = nullptr;
  ExpectFailure(relay_vm_set_input(vm_, "x", &empty_data), RELAY_ERROR_USAGE, "no data");
  ExpectFailure(relay_vm_set_input_scalar(vm_, "x", 1.0), RELAY_ERROR_USAGE, "not a scalar");
  ExpectFailure(relay_vm_set_input_scalar(vm_, "zz", 1.0), RELAY_ERROR_USAGE,
                "no function has an input 'zz'");
  relay_value* result = nullptr;
  ExpectFailure(relay_vm_invoke(vm_, nullptr, &result), RELAY_ERROR_USAGE, "missing input 'x'");
  ExpectFailure(relay_vm_invoke(vm_, nullptr, nullptr), RELAY_ERROR_USAGE, "result");
  ExpectFailure(relay_vm_invoke(vm_, "absent", &result), RELAY_ERROR_USAGE, "no function @absent");
  relay_value_kind kind;
  ExpectFailure(relay_value_kind_of(nullptr, &kind), RELAY_ERROR_USAGE, "value");
  ExpectFailure(relay_value_tuple_size(nullptr, &count), RELAY_ERROR_USAGE, "value");
  DLManagedTensor* output = nullptr;
  ExpectFailure(relay_value_to_dlpack(nullptr, &output), RELAY_ERROR_USAGE, "value");
  // The messages are the calling thread's: another thread starts with none.
  std::string other;
  std::thread([&] { other = relay_last_error(); }).join();
  EXPECT_EQ(other, "");
  // Freeing null is allowed, as free() is.
  relay_value_free(nullptr);
  relay_vm_free(nullptr);
  relay_executable_free(nullptr);
}

TEST_F(CApi, ARuntimeFailureLeavesTheVmUsable) {
  relay_executable* exe = nullptr;
  const std::string folder = "/tmp/relay-c-api-" + std::to_string(::getpid());
  std::filesystem::create_directories(folder);
  std::ofstream(folder + "/fail.relay")
      << "#[version = \"0.0.5\"]\n"
         "def @main(%x: Tensor[(?,), float32]) { reshape(%x, newshape=[2]) }\n";
  ASSERT_EQ(relay_executable_load((folder + "/fail.relay").c_str(), nullptr, &exe), RELAY_OK);
  std::filesystem::remove_all(folder);
  relay_vm* vm = nullptr;
  ASSERT_EQ(relay_vm_create(exe, nullptr, &vm), RELAY_OK);
  relay_value* result = nullptr;
  HostTensor three({1, 2, 3}, {3});
  ASSERT_EQ(relay_vm_set_input(vm, "x", &three.tensor), RELAY_OK);
  ExpectFailure(relay_vm_invoke(vm, nullptr, &result), RELAY_ERROR_RUNTIME, "reshape");
  HostTensor two({1, 2}, {2});
  ASSERT_EQ(relay_vm_set_input(vm, "x", &two.tensor), RELAY_OK);
  ASSERT_EQ(relay_vm_invoke(vm, nullptr, &result), RELAY_OK) << relay_last_error();
  relay_value_free(result);
  relay_vm_free(vm);
  relay_executable_free(exe);
}

TEST_F(CApi, ProgramsThatDoNotCompileKeepTheirKinds) {
  const std::string folder = "/tmp/relay-c-api-kinds-" + std::to_string(::getpid());
  std::filesystem::create_directories(folder);
  std::ofstream(folder + "/parse.relay") << "#[version = \"0.0.5\"]\ndef @main( {";
  std::ofstream(folder + "/type.relay")
      << "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2,), float32]) { add(%x, 1) }\n";
  relay_executable* exe = nullptr;
  ExpectFailure(relay_executable_load((folder + "/parse.relay").c_str(), nullptr, &exe),
                RELAY_ERROR_PARSE, "parse.relay:2");
  ExpectFailure(relay_executable_load((folder + "/type.relay").c_str(), nullptr, &exe),
                RELAY_ERROR_TYPE, "type.relay:2");
  std::filesystem::remove_all(folder);
}

TEST(CApiFromC, TheHeaderServesACCaller) {
  const std::string folder = "/tmp/relay-c-api-c-" + std::to_string(::getpid());
  std::filesystem::create_directories(folder);
  Ref<Tensor> w = Tensor::Empty(HostDevice(), {4, 3}, DType::kFloat32);
  for (int index = 0; index < 12; ++index) w->data<float>()[index] = index == 0 ? 2.0f : 0.0f;
  WriteNpz(folder + "/w.npz", {{"w", w}});
  float first = 0;
  EXPECT_EQ(relay_api_test_run_from_c(kProgram.c_str(), (folder + "/w.npz").c_str(), &first),
            RELAY_OK)
      << relay_last_error();
  EXPECT_FLOAT_EQ(first, 2.0f);  // relu(2 * x[0]) with x[0] = 1
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace relay

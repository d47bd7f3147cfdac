// The C++ embedding API (relay/runtime.h): loading each kind of program,
// inspecting functions, invoking with inputs by position and by name, every
// error a caller can cause, and VMs sharing one executable across threads.
// Expected values are computed here with plain loops over the inputs.
#include "relay/runtime.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "relay/devices.h"
#include "relay/dlpack.h"
#include "relay/npy.h"

namespace relay {
namespace {

namespace fs = std::filesystem;

const std::string kProgram = std::string(RELAY_TEST_FIXTURE_DIR) + "/api/program.relay";
const std::string kOnnxModel = std::string(RELAY_TEST_FIXTURE_DIR) + "/onnx/two_outputs.onnx";

const float kWeight[4][3] = {
    {0.5f, -1.0f, 0.25f}, {1.5f, 0.5f, -0.75f}, {-0.5f, 2.0f, 1.0f}, {0.0f, 0.125f, -2.0f}};

Ref<Tensor> Floats(Shape shape, const std::vector<float>& values) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), std::move(shape), DType::kFloat32);
  EXPECT_EQ(size_t(tensor->element_count()), values.size());
  std::copy(values.begin(), values.end(), tensor->data<float>());
  return tensor;
}

Ref<Tensor> Weight() {
  std::vector<float> values;
  for (const auto& row : kWeight) values.insert(values.end(), row, row + 3);
  return Floats({4, 3}, values);
}

// relu(x w^T), row by row.
std::vector<float> DenseRelu(const std::vector<float>& x) {
  std::vector<float> y;
  for (size_t row = 0; row < x.size() / 3; ++row) {
    for (const auto& w : kWeight) {
      float sum = 0;
      for (int k = 0; k < 3; ++k) sum += x[row * 3 + size_t(k)] * w[k];
      y.push_back(std::max(sum, 0.0f));
    }
  }
  return y;
}

void ExpectFloats(const Value& value, const Shape& shape, const std::vector<float>& expected) {
  ASSERT_TRUE(value);
  ASSERT_EQ(value->kind(), ObjectKind::kTensor);
  const auto& tensor = static_cast<const Tensor&>(*value);
  ASSERT_EQ(tensor.shape(), shape);
  for (size_t index = 0; index < expected.size(); ++index)
    EXPECT_NEAR(tensor.data<float>()[index], expected[index], 1e-5) << "element " << index;
}

ErrorKind KindOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.kind();
  }
  ADD_FAILURE() << "no error";
  return ErrorKind::kInternal;
}

TEST(RuntimeApi, DescribesTheProgramsFunctions) {
  Executable program = Executable::Load(kProgram);
  std::vector<std::string> names;
  for (const FunctionInfo& function : program.functions()) names.push_back(function.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "main"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "pair"), names.end());
  const FunctionInfo main = program.function();
  ASSERT_EQ(main.parameters.size(), 2u);
  EXPECT_EQ(main.parameters[0].name, "x");
  EXPECT_TRUE(main.parameters[0].is_tensor);
  EXPECT_EQ(main.parameters[0].dtype, DType::kFloat32);
  EXPECT_EQ(main.parameters[0].shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(main.parameters[0].type, "Tensor[(?, 3), float32]");
  EXPECT_EQ(program.function("@pair").parameters[1].shape, std::vector<int64_t>{});
  // Results: a tensor, a tuple's fields, a list whole.
  ASSERT_EQ(main.results.size(), 1u);
  EXPECT_EQ(main.results[0].name, "out0");
  EXPECT_EQ(main.results[0].shape, (std::vector<int64_t>{-1, 4}));
  const FunctionInfo pair = program.function("pair");
  ASSERT_EQ(pair.results.size(), 2u);
  EXPECT_EQ(pair.results[1].name, "out1");
  EXPECT_EQ(pair.results[1].type, "Tensor[(2,), float32]");
  const FunctionInfo count = program.function("count");
  ASSERT_EQ(count.results.size(), 1u);
  EXPECT_FALSE(count.results[0].is_tensor);
  EXPECT_EQ(count.results[0].type, "List[int32]");
  EXPECT_EQ(KindOf([&] { program.function("absent"); }), ErrorKind::kUsage);
  EXPECT_TRUE(program.onnx_output_names().empty());
}

TEST(RuntimeApi, RunsMainOnNamedInputsOfAnyBatch) {
  Executable program = Executable::Load(kProgram);
  VirtualMachine vm(program);
  vm.SetInput("w", Weight());
  for (int rows : {1, 2, 5}) {
    std::vector<float> x;
    for (int index = 0; index < rows * 3; ++index) x.push_back(float(index % 7) - 2.5f);
    vm.SetInput("x", Floats({rows, 3}, x));
    ExpectFloats(vm.Invoke(), {rows, 4}, DenseRelu(x));
  }
}

// @main's dense layer goes to each external codegen: the same results, at
// any batch; a misspelt codegen is a usage error.
TEST(RuntimeApi, HandsOperatorsToExternalCodegensOnRequest) {
  for (const char* codegens : {"dnnl", "cblas", "cblas,dnnl"}) {
    LoadOptions options;
    options.byoc = codegens;
    Executable program = Executable::Load(kProgram, options);
    VirtualMachine vm(program);
    vm.SetInput("w", Weight());
    for (int rows : {1, 5}) {
      std::vector<float> x;
      for (int index = 0; index < rows * 3; ++index) x.push_back(float(index % 7) - 2.5f);
      vm.SetInput("x", Floats({rows, 3}, x));
      ExpectFloats(vm.Invoke(), {rows, 4}, DenseRelu(x));
    }
  }
  LoadOptions misspelt;
  misspelt.byoc = "dnn";
  EXPECT_EQ(KindOf([&] { Executable::Load(kProgram, misspelt); }), ErrorKind::kUsage);
}

TEST(RuntimeApi, RunsOnAnOpenClDeviceWithResultsOnTheHost) {
  Executable program = Executable::Load(kProgram);
  std::optional<VirtualMachine> vm;
  try {
    vm.emplace(program, "opencl");
  } catch (const Error& error) {
    GTEST_SKIP() << error.what();  // no OpenCL platform here
  }
  vm->SetInput("w", Weight());
  const std::vector<float> x{1, -2, 3, 0.5f, 4, -1};
  vm->SetInput("x", Floats({2, 3}, x));
  const Value result = vm->Invoke();
  ASSERT_EQ(result->kind(), ObjectKind::kTensor);
  EXPECT_TRUE(static_cast<const Tensor&>(*result).on_host());
  ExpectFloats(result, {2, 4}, DenseRelu(x));
  EXPECT_EQ(KindOf([&] { VirtualMachine other(program, "tpu"); }), ErrorKind::kUsage);
}

TEST(RuntimeApi, BindsParamsFromAnNpz) {
  const fs::path folder = fs::temp_directory_path() / ("relay-api-" + std::to_string(::getpid()));
  fs::create_directories(folder);
  WriteNpz((folder / "w.npz").string(), {{"w", Weight()}});
  Executable program = Executable::Load(kProgram, LoadOptions{(folder / "w.npz").string(), {}, {}});
  ASSERT_EQ(program.function().parameters.size(), 1u);  // w is bound
  VirtualMachine vm(program);
  const std::vector<float> x = {1, 2, 3, -1, 0, 4};
  vm.SetInput("x", Floats({2, 3}, x));
  ExpectFloats(vm.Invoke(), {2, 4}, DenseRelu(x));
  WriteNpz((folder / "wrong.npz").string(), {{"v", Weight()}});
  EXPECT_EQ(KindOf([&] {
              Executable::Load(kProgram, LoadOptions{(folder / "wrong.npz").string(), {}, {}});
            }),
            ErrorKind::kUsage);
  fs::remove_all(folder);
}

// relu(x w^T)'s gradient by hand: each output element with a positive sum
// passes 1 back, d/dx[r][k] = sum over those outputs j of w[j][k], and
// d/dw[j][k] = sum over rows r with a positive output of x[r][k].
TEST(RuntimeApi, AddsGradientsOnRequest) {
  LoadOptions options;
  options.gradients = {"main"};
  Executable program = Executable::Load(kProgram, options);
  const FunctionInfo gradient = program.function("main_grad");
  ASSERT_EQ(gradient.parameters.size(), 2u);
  VirtualMachine vm(program);
  const std::vector<float> x = {1, 2, 3, -1, 0, 4};
  const std::vector<float> y = DenseRelu(x);
  std::vector<float> dx(6, 0), dw(12, 0);
  for (size_t row = 0; row < 2; ++row) {
    for (size_t j = 0; j < 4; ++j) {
      if (y[row * 4 + j] <= 0) continue;
      for (size_t k = 0; k < 3; ++k) {
        dx[row * 3 + k] += kWeight[j][k];
        dw[j * 3 + k] += x[row * 3 + k];
      }
    }
  }
  std::vector<Value> arguments = {Floats({2, 3}, x), Weight()};
  const Value result = vm.Invoke("main_grad", arguments);
  ASSERT_EQ(result->kind(), ObjectKind::kTuple);
  const auto& pair = static_cast<const Tuple&>(*result).fields();
  ExpectFloats(pair[0], {2, 4}, y);
  const auto& gradients = static_cast<const Tuple&>(*pair[1]).fields();
  ASSERT_EQ(gradients.size(), 2u);
  ExpectFloats(gradients[0], {2, 3}, dx);
  ExpectFloats(gradients[1], {4, 3}, dw);

  options.gradients = {"missing"};
  EXPECT_EQ(KindOf([&] { Executable::Load(kProgram, options); }), ErrorKind::kUsage);
}

TEST(RuntimeApi, InvokesByPositionAndByNameAndReturnsTuplesAndLists) {
  Executable program = Executable::Load(kProgram);
  VirtualMachine vm(program);
  Ref<Tensor> b = Tensor::Empty(HostDevice(), {}, DType::kFloat32);
  b->data<float>()[0] = 3.0f;
  std::vector<Value> arguments{Floats({2}, {1.0f, -2.0f}), b};
  Value pair = vm.Invoke("pair", arguments);
  ASSERT_EQ(pair->kind(), ObjectKind::kTuple);
  const auto& fields = static_cast<const Tuple&>(*pair).fields();
  ASSERT_EQ(fields.size(), 2u);
  ExpectFloats(fields[0], {2}, {4.0f, 1.0f});
  ExpectFloats(fields[1], {2}, {3.0f, -6.0f});
  Value by_name = vm.Invoke("pair", std::map<std::string, Value>{{"b", b}, {"a", arguments[0]}});
  ExpectFloats(static_cast<const Tuple&>(*by_name).fields()[1], {2}, {3.0f, -6.0f});

  Ref<Tensor> n = Tensor::Empty(HostDevice(), {}, DType::kInt32);
  n->data<int32_t>()[0] = 3;
  std::vector<Value> count{n};
  Value list = vm.Invoke("count", count);
  std::vector<int32_t> items;
  while (list->kind() == ObjectKind::kConstructed &&
         !static_cast<const Constructed&>(*list).fields().empty()) {
    const auto& cell = static_cast<const Constructed&>(*list).fields();
    items.push_back(static_cast<const Tensor&>(*cell[0]).data<int32_t>()[0]);
    list = cell[1];
  }
  EXPECT_EQ(items, (std::vector<int32_t>{3, 2, 1}));
}

TEST(RuntimeApi, ReportsEveryMisuseAsAUsageError) {
  Executable program = Executable::Load(kProgram);
  VirtualMachine vm(program);
  // Unknown input, wrong dtype, wrong rank, wrong fixed extent.
  EXPECT_EQ(KindOf([&] { vm.SetInput("y", Weight()); }), ErrorKind::kUsage);
  Ref<Tensor> ints = Tensor::Empty(HostDevice(), {2, 3}, DType::kInt32);
  EXPECT_EQ(KindOf([&] { vm.SetInput("x", ints); }), ErrorKind::kUsage);
  EXPECT_EQ(KindOf([&] { vm.SetInput("x", Floats({3}, {1, 2, 3})); }), ErrorKind::kUsage);
  EXPECT_EQ(KindOf([&] {
              vm.SetInput("w", Floats({3, 3}, std::vector<float>(9, 1)));
            }),
            ErrorKind::kUsage);
  EXPECT_EQ(KindOf([&] { vm.SetInput("x", Ref<Tensor>()); }), ErrorKind::kUsage);
  // A missing input, the wrong number of arguments, an unknown function or
  // parameter name.
  vm.SetInput("x", Floats({1, 3}, {1, 2, 3}));
  EXPECT_EQ(KindOf([&] { vm.Invoke(); }), ErrorKind::kUsage);
  std::vector<Value> one{Weight()};
  EXPECT_EQ(KindOf([&] { vm.Invoke("main", one); }), ErrorKind::kUsage);
  EXPECT_EQ(KindOf([&] { vm.Invoke("absent", one); }), ErrorKind::kUsage);
  EXPECT_EQ(KindOf([&] {
              vm.Invoke("main", std::map<std::string, Value>{{"z", Weight()}});
            }),
            ErrorKind::kUsage);
  // A runtime failure leaves the VM usable.
  std::vector<Value> three{Floats({3}, {1, 2, 3})};
  EXPECT_EQ(KindOf([&] { vm.Invoke("fail", three); }), ErrorKind::kRuntime);
  vm.SetInput("w", Weight());
  ExpectFloats(vm.Invoke(), {1, 4}, DenseRelu({1, 2, 3}));
  vm.ClearInputs();
  EXPECT_EQ(KindOf([&] { vm.Invoke(); }), ErrorKind::kUsage);
  // Devices the VM does not run on, and files that are not programs.
  EXPECT_EQ(KindOf([&] { VirtualMachine other(program, "cuda"); }), ErrorKind::kDevice);
  EXPECT_EQ(KindOf([&] { Executable::Load("/nonexistent/program.relay"); }), ErrorKind::kLoad);
  EXPECT_EQ(KindOf([&] { Executable::Load(kOnnxModel + ".absent"); }), ErrorKind::kLoad);
}

TEST(RuntimeApi, ParseAndTypeErrorsKeepTheirKinds) {
  const fs::path folder =
      fs::temp_directory_path() / ("relay-api-bad-" + std::to_string(::getpid()));
  fs::create_directories(folder);
  std::ofstream(folder / "parse.relay") << "#[version = \"0.0.5\"]\ndef @main( {";
  std::ofstream(folder / "type.relay")
      << "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2,), float32]) { add(%x, 1) }\n";
  EXPECT_EQ(KindOf([&] { Executable::Load((folder / "parse.relay").string()); }),
            ErrorKind::kParse);
  EXPECT_EQ(KindOf([&] { Executable::Load((folder / "type.relay").string()); }), ErrorKind::kType);
  fs::remove_all(folder);
}

TEST(RuntimeApi, OnnxModelsTakeInputsByTheirOnnxNames) {
  Executable model = Executable::Load(kOnnxModel);
  EXPECT_EQ(model.onnx_output_names(), (std::vector<std::string>{"out:0", "out:1"}));
  EXPECT_EQ(model.onnx_input_names().at("input_1"), "input.1");
  const FunctionInfo main = model.function();
  ASSERT_EQ(main.results.size(), 2u);
  EXPECT_EQ(main.results[0].name, "out:0");
  EXPECT_EQ(main.results[1].shape, (std::vector<int64_t>{-1, 4}));
  VirtualMachine vm(model);
  Ref<Tensor> x =
      ReadNpy(std::string(RELAY_TEST_FIXTURE_DIR) + "/onnx/two_outputs_input.npy", HostDevice());
  vm.SetInput("input.1", x);
  Value result = vm.Invoke();
  ASSERT_EQ(result->kind(), ObjectKind::kTuple);
  std::map<std::string, Ref<Tensor>> expected;
  for (NamedTensor& array : ReadNpz(
           std::string(RELAY_TEST_FIXTURE_DIR) + "/onnx/two_outputs_expected.npz", HostDevice()))
    expected[array.name] = array.tensor;
  const Ref<Tensor>& relu = expected.at("relu");
  ExpectFloats(
      static_cast<const Tuple&>(*result).fields()[0], relu->shape(),
      std::vector<float>(relu->data<float>(), relu->data<float>() + relu->element_count()));
}

TEST(RuntimeApi, DlpackTensorsAreInputsWithoutACopy) {
  Executable program = Executable::Load(kProgram);
  VirtualMachine vm(program);
  vm.SetInput("w", Weight());
  std::vector<float> x = {0.5f, 1.5f, -2.0f};
  Ref<Tensor> tensor = Floats({1, 3}, x);
  Ref<Tensor> shared = FromDLPack(ToDLPack(tensor));
  EXPECT_EQ(shared->host_data(), tensor->host_data());
  vm.SetInput("x", shared);
  ExpectFloats(vm.Invoke(), {1, 4}, DenseRelu(x));
}

// 16 threads, each with its own VM over one shared executable, invoke the
// dynamic-batch program 10^5 times in all on batches of 1-8 rows, checking
// every result. Run under ThreadSanitizer in CI's TSan build.
TEST(RuntimeApiThreads, SixteenVmsShareOneExecutable) {
  Executable program = Executable::Load(kProgram);
  constexpr int kThreads = 16;
  const int invocations = std::getenv("RELAY_API_STRESS_INVOCATIONS")
                              ? std::atoi(std::getenv("RELAY_API_STRESS_INVOCATIONS"))
                              : 100000;
  std::atomic<int> failures = 0;
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([&, thread] {
      VirtualMachine vm(program);
      vm.SetInput("w", Weight());
      for (int call = thread; call < invocations; call += kThreads) {
        const int rows = 1 + call % 8;
        std::vector<float> x;
        for (int index = 0; index < rows * 3; ++index)
          x.push_back(float((call + index) % 11) - 5.0f);
        vm.SetInput("x", Floats({rows, 3}, x));
        const Value result = vm.Invoke();
        const auto& y = static_cast<const Tensor&>(*result);
        const std::vector<float> expected = DenseRelu(x);
        bool same = y.shape() == Shape{rows, 4};
        for (size_t index = 0; same && index < expected.size(); ++index)
          same = std::abs(y.data<float>()[index] - expected[index]) < 1e-4f;
        if (!same) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  // The pool's memory stays bounded: at most a few MiB were ever in use at
  // once for 16 VMs of batches of 8 rows, however many invocations ran.
  const MemoryStatistics statistics = HostDevice().memory_statistics();
  EXPECT_LT(statistics.peak_bytes_in_use, size_t{16} << 20);
  EXPECT_LT(statistics.bytes_in_use + statistics.bytes_cached, size_t{16} << 20);
}

}  // namespace
}  // namespace relay

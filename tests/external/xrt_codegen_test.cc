// XRT as a codegen: manifests (read, refused with the problem), the rules
// they give, the state Compile writes and Load reads back (and refuses when
// corrupt, without crashing), and running a kernel: without a card, the
// error says there is no XRT device; with the stand-in driver of
// tests/devices (built as libxrt_core.so.2 for tools_tests), a
// manifest-matched kernel of tests/devices/data/vadd.xclbin computes what
// the test computes by itself.
#include "kernels/external/xrt/xrt_codegen.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "devices/external_kernels.h"
#include "kernels/attributes.h"
#include "kernels/external/xrt/xrt_manifest.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/external/graph_test_util.h"

namespace relay::kernels::external {
namespace {

using testing::Contains;
using testing::ErrorFrom;

const char* const kManifest = R"({"kernels": [
  {"name": "vadd", "pattern": ["add"], "dtype": "int32",
   "arguments": ["input0", "input1", "output", "output.shape[0]"]},
  {"name": "dense_relu", "pattern": ["nn.dense", "nn.relu"], "dtype": "float32",
   "arguments": ["input0", "input1", "output", "output.shape[0]", "output.shape[1]",
                 "input0.shape[1]"]}
]})";

// A file holding `text` in a directory of this test's own.
class ManifestFiles {
 public:
  ManifestFiles()
      : directory_(std::filesystem::temp_directory_path() /
                   ("xrt-codegen-test-" + std::to_string(getpid()) + "-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::create_directories(directory_);
  }
  ~ManifestFiles() { std::filesystem::remove_all(directory_); }

  std::string Write(const std::string& text) {
    const std::string path = directory_ / ("manifest" + std::to_string(count_++) + ".json");
    std::ofstream(path) << text;
    return path;
  }
  std::string directory() const { return directory_; }

 private:
  std::filesystem::path directory_;
  int count_ = 0;
};

FusedOperator Call(const std::string& op, std::vector<int32_t> inputs) {
  Attrs attrs;
  EXPECT_FALSE(NormalizeAttrs(FindOperator(op)->attributes, {}, attrs));
  return {op, attrs, std::move(inputs)};
}

// add(a, b) over `length` int32s; in the composite "xrt.vadd" if `composite`.
ExternalGraph VectorAdd(int64_t length = 1000, bool composite = true) {
  ExternalGraph graph;
  const ValueType vector = ValueType::Tensor({length}, DType::kInt32);
  graph.params = {vector, vector};
  graph.operators = {Call("add", {0, 1})};
  graph.composites = {composite ? 0 : -1};
  if (composite) graph.composite_names = {"xrt.vadd"};
  graph.types = {vector};
  return graph;
}

// relu(dense(w, x)) with x [2, 8] and w [4, 8] as parameters 1 and 0.
ExternalGraph DenseRelu() {
  ExternalGraph graph;
  graph.params = {ValueType::Tensor({4, 8}, DType::kFloat32),
                  ValueType::Tensor({2, 8}, DType::kFloat32)};
  graph.operators = {Call("nn.dense", {1, 0}), Call("nn.relu", {-1})};
  graph.composites = {0, 0};
  graph.composite_names = {"xrt.dense_relu"};
  graph.types = {ValueType::Tensor({2, 4}, DType::kFloat32),
                 ValueType::Tensor({2, 4}, DType::kFloat32)};
  return graph;
}

Ref<Tensor> Vector(int64_t length, const std::function<int32_t(int32_t)>& value) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {length}, DType::kInt32);
  for (int32_t index = 0; index < length; ++index) tensor->data<int32_t>()[index] = value(index);
  return tensor;
}

// ---- manifests -------------------------------------------------------------

TEST(XrtCodegenTest, AManifestGivesOneCompositeRulePerKernel) {
  ManifestFiles files;
  const std::shared_ptr<const ExternalCodegen> codegen =
      XrtCodegenFromManifest(files.Write(kManifest));
  EXPECT_EQ(codegen->name(), "xrt");
  EXPECT_FALSE(codegen->merges_regions());
  const RuleTable& rules = codegen->rules();
  EXPECT_TRUE(rules.operators.empty());
  ASSERT_EQ(rules.composites.size(), 2u);
  EXPECT_EQ(rules.composites[0].name, "xrt.vadd");
  EXPECT_EQ(rules.composites[1].name, "xrt.dense_relu");
  ASSERT_EQ(rules.composites[1].steps.size(), 2u);
  EXPECT_EQ(rules.composites[1].steps[0].ops, (std::vector<std::string>{"nn.dense"}));
  EXPECT_EQ(rules.composites[1].steps[1].ops, (std::vector<std::string>{"nn.relu"}));
  EXPECT_FALSE(rules.composites[1].steps[1].optional);

  // A step takes its kernel's dtype, in static shapes only.
  const CallPredicate& add = rules.composites[0].steps[0].accepts;
  Attrs none;
  auto accepts = [&](const ValueType& type) {
    const std::vector<ValueType> inputs = {type, type};
    return add({"add", none, inputs, type});
  };
  EXPECT_TRUE(accepts(ValueType::Tensor({1000}, DType::kInt32)));
  EXPECT_FALSE(accepts(ValueType::Tensor({1000}, DType::kFloat32)));
  EXPECT_FALSE(accepts(ValueType::Tensor({kAnyDim}, DType::kInt32)));

  const std::vector<XrtManifestKernel> kernels = ParseXrtManifest(kManifest, "m.json");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[1].input_count, 2);
  EXPECT_EQ(kernels[1].dtype, DType::kFloat32);
  ASSERT_EQ(kernels[1].arguments.size(), 6u);
  EXPECT_EQ(kernels[1].arguments[5], (XrtArgument{XrtArgument::Kind::kInteger, 0, 1}));

  EXPECT_TRUE(XrtCodegen().rules().composites.empty());
  EXPECT_FALSE(XrtCodegen().merges_regions());
  EXPECT_EQ(XrtCodegen().name(), "xrt");
}

TEST(XrtCodegenTest, TheArgumentGrammarIsStrict) {
  for (const char* good : {"input0", "input12", "output", "output.shape[0]", "input3.shape[10]"})
    EXPECT_EQ(ParseXrtArgument(good).value_or(XrtArgument{}).ToString(), good);
  for (const char* bad : {"", "input", "input01", "inputs0", "input-1", "output0", "out",
                          "output.shape[]", "output.shape[x]", "output.shape[1", "output.shape[1]x",
                          "input0.shape", "input1234567", " input0", "OUTPUT"})
    EXPECT_FALSE(ParseXrtArgument(bad).has_value()) << bad;
}

// Each problem is a usage error naming the file and what is wrong.
TEST(XrtCodegenTest, BadManifestsAreRefusedWithTheProblem) {
  ManifestFiles files;
  auto problem = [&](const std::string& path) {
    const Error error = ErrorFrom([&] { XrtCodegenFromManifest(path); });
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_TRUE(Contains(error.message(), "xrt manifest " + path + ": ")) << error.message();
    return error.message();
  };
  auto kernel = [&](const std::string& fields) {
    return problem(files.Write(R"({"kernels": [{)" + fields + "}]}"));
  };
  const std::string vadd_fields = R"("name": "vadd", "pattern": ["add"], "dtype": "int32", )";
  EXPECT_TRUE(Contains(problem(files.directory() + "/absent.json"),
                       "cannot be read (No such file or directory)"));
  EXPECT_TRUE(Contains(problem(files.directory()), "cannot be read (it is a directory)"));
  EXPECT_TRUE(Contains(problem(files.Write("{\"kernels\": [\n  {\"name\": }]}")),
                       "not JSON: parse error at line 2"));
  EXPECT_TRUE(Contains(problem(files.Write("[]")), "\"kernels\""));
  EXPECT_TRUE(Contains(problem(files.Write(R"({"kernels": []})")), "lists no kernels"));
  EXPECT_TRUE(Contains(problem(files.Write(R"({"kernels": [], "extra": 1})")), "\"kernels\""));
  EXPECT_TRUE(Contains(kernel(R"("name": "vadd", "pattern": ["vector_add"], "dtype": "int32",
                                 "arguments": ["output"])"),
                       "kernel 0 (vadd) \"vector_add\" is not an operator"));
  EXPECT_TRUE(Contains(kernel(vadd_fields + R"("arguments": ["input0", "input1", "out"])"),
                       "argument \"out\" is none of inputN, output"));
  EXPECT_TRUE(Contains(kernel(vadd_fields + R"("arguments": ["input0", "input2", "output"])"),
                       "argument \"input2\" names an input the pattern does not have (it has 2)"));
  EXPECT_TRUE(Contains(kernel(vadd_fields + R"("arguments": ["input0", "input1"])"),
                       "pass \"output\" 0 times, not once"));
  EXPECT_TRUE(Contains(kernel(vadd_fields + R"("arguments": ["input0", "output", "output"])"),
                       "pass \"output\" 2 times"));
  EXPECT_TRUE(Contains(kernel(vadd_fields + R"("arguments": ["input0", "output"])"),
                       "pass \"input1\" 0 times, not once"));
  EXPECT_TRUE(Contains(kernel(vadd_fields + R"("arguments": "input0")"),
                       "\"arguments\" is not a non-empty list of strings"));
  EXPECT_TRUE(Contains(kernel(R"("name": "vadd", "pattern": ["add"], "dtype": "int33",
                                 "arguments": ["output"])"),
                       "\"dtype\" is not a dtype name"));
  EXPECT_TRUE(Contains(kernel(R"("name": "v add", "pattern": ["add"], "dtype": "int32",
                                 "arguments": ["output"])"),
                       "\"name\" is not a kernel name"));
  EXPECT_TRUE(Contains(kernel(R"("pattern": ["add"], "dtype": "int32", "arguments": ["output"])"),
                       "kernel 0 lacks \"name\""));
  EXPECT_TRUE(Contains(kernel(vadd_fields + R"("arguments": ["output"], "attrs": {})"),
                       "unknown field \"attrs\""));
  const std::string duplicate = files.Write(
      R"({"kernels": [{"name": "vadd", "pattern": ["add"], "dtype": "int32",
                        "arguments": ["input0", "input1", "output"]},
                       {"name": "vadd", "pattern": ["subtract"], "dtype": "int32",
                        "arguments": ["input0", "input1", "output"]}]})");
  EXPECT_TRUE(Contains(problem(duplicate), "kernel 1 (vadd) is listed twice"));
}

// ---- state -------------------------------------------------------------------

TEST(XrtCodegenTest, CompileWritesTheKernelAndItsArgumentOrder) {
  ManifestFiles files;
  const std::shared_ptr<const ExternalCodegen> codegen =
      XrtCodegenFromManifest(files.Write(kManifest));
  // The pattern's inputs are the graph's parameters 1 and 0.
  const std::string dense_state = codegen->Compile(DenseRelu(), "xrt_0");
  EXPECT_EQ(dense_state,
            "kernel dense_relu\n"
            "arguments input1 input0 output output.shape[0] output.shape[1] input1.shape[1]\n");
  EXPECT_EQ(codegen->Compile(VectorAdd(), "xrt_1"),
            "kernel vadd\narguments input0 input1 output output.shape[0]\n");
  // A hand-written function calls the kernel its global_symbol names.
  EXPECT_EQ(XrtCodegen().Compile(VectorAdd(8, false), "vector_add"),
            "kernel vector_add\narguments input0 input1 output output.shape[0]\n");
  EXPECT_EQ(codegen->Compile(VectorAdd(8, false), "vector_add"),
            "kernel vector_add\narguments input0 input1 output output.shape[0]\n");
  // Loading needs no manifest: XrtCodegen() reads any xrt state.
  EXPECT_NE(XrtCodegen().Load(DenseRelu(), dense_state, "xrt_0"), nullptr);
}

TEST(XrtCodegenTest, FunctionsNoKernelCanRunAreCompileErrors) {
  ExternalGraph dynamic = VectorAdd(8, false);
  dynamic.params[0].shape = dynamic.params[1].shape = dynamic.types[0].shape = {kAnyDim};
  Error error = ErrorFrom([&] { XrtCodegen().Compile(dynamic, "vadd"); });
  EXPECT_EQ(error.kind(), ErrorKind::kCompile);
  EXPECT_EQ(error.message(), "vadd: an external kernel returns one tensor of static shape");
  ExternalGraph identity = VectorAdd(8, false);
  identity.operators.clear();
  identity.composites.clear();
  identity.types.clear();
  error = ErrorFrom([&] { XrtCodegen().Compile(identity, "vadd"); });
  EXPECT_EQ(error.message(), "vadd: an external function computes at least one operator");
  error = ErrorFrom([&] { XrtCodegen().Compile(VectorAdd(8, false), "v add"); });
  EXPECT_EQ(error.kind(), ErrorKind::kCompile);
  ManifestFiles files;
  const std::shared_ptr<const ExternalCodegen> codegen =
      XrtCodegenFromManifest(files.Write(kManifest));
  ExternalGraph unknown = VectorAdd();
  unknown.composite_names = {"xrt.vsub"};
  error = ErrorFrom([&] { codegen->Compile(unknown, "xrt_2"); });
  EXPECT_EQ(error.kind(), ErrorKind::kCompile);
  EXPECT_EQ(error.message(), "xrt_2: xrt.vsub is no kernel of the xrt manifest");
  error = ErrorFrom([&] { XrtCodegen().Compile(VectorAdd(), "xrt_2"); });
  EXPECT_EQ(error.message(),
            "xrt_2: xrt.vadd is a kernel of a manifest, which --byoc xrt:MANIFEST names");
  ExternalGraph wrong_pattern = DenseRelu();
  wrong_pattern.composite_names = {"xrt.vadd"};
  error = ErrorFrom([&] { codegen->Compile(wrong_pattern, "xrt_3"); });
  EXPECT_EQ(error.message(), "xrt_3: the function does not follow the pattern of xrt.vadd");
}

TEST(XrtCodegenTest, LoadRefusesStateThatDoesNotFitTheGraph) {
  const ExternalGraph graph = VectorAdd(8, false);
  auto load_error = [&](const std::string& state) {
    const Error error = ErrorFrom([&] { XrtCodegen().Load(graph, state, "xrt_5"); });
    EXPECT_EQ(error.kind(), ErrorKind::kLoad) << error.message();
    EXPECT_TRUE(Contains(error.message(), "xrt_5: ")) << error.message();
    return error.message();
  };
  EXPECT_TRUE(Contains(load_error(""), "malformed xrt state"));
  EXPECT_TRUE(Contains(load_error("kernel vadd\n"), "no line \"arguments...\""));
  EXPECT_TRUE(Contains(load_error("kernel vadd\narguments input0 output"), "no line"));
  EXPECT_TRUE(Contains(load_error("kernel vadd\narguments output\nmore\n"), "text after"));
  EXPECT_TRUE(Contains(load_error("kernel \narguments output\n"), "name is not printable"));
  EXPECT_TRUE(Contains(load_error("kernel vadd\narguments  output\n"), "one space"));
  EXPECT_TRUE(Contains(load_error("kernel vadd\narguments input0 outpt\n"), "is not an argument"));
  EXPECT_TRUE(Contains(load_error("kernel vadd\narguments input2 output\n"),
                       "argument input2 names a parameter the function does not have (it has 2)"));
  EXPECT_TRUE(Contains(load_error("kernel vadd\narguments input0 input1\n"),
                       "not passed its output exactly once"));
  EXPECT_TRUE(Contains(load_error("kernel vadd\narguments output output\n"),
                       "not passed its output exactly once"));
  EXPECT_TRUE(Contains(load_error("kernel vadd\narguments output output.shape[1]\n"),
                       "output.shape[1] is not a static dimension of a tensor of shape (8,)"));
  EXPECT_NE(XrtCodegen().Load(graph, "kernel vadd\narguments output input1 input1\n", "xrt_5"),
            nullptr);
}

// Every prefix and every single-byte change of a good state either loads
// or is a kLoad error: never a crash or another kind of error.
TEST(XrtCodegenTest, CorruptStateIsALoadErrorNeverACrash) {
  ManifestFiles files;
  const ExternalGraph graph = DenseRelu();
  const std::string state = XrtCodegenFromManifest(files.Write(kManifest))->Compile(graph, "xrt_0");
  auto load = [&](const std::string& bytes) {
    try {
      XrtCodegen().Load(graph, bytes, "xrt_0");
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::kLoad) << error.message();
    }
  };
  for (size_t length = 0; length < state.size(); ++length) {
    const Error error =
        ErrorFrom([&] { XrtCodegen().Load(graph, state.substr(0, length), "xrt_0"); });
    EXPECT_EQ(error.kind(), ErrorKind::kLoad) << length;
  }
  for (size_t position = 0; position < state.size(); ++position) {
    for (int value : {0x00, 0x01, 0x20, 0x0a, 0x30, 0x39, 0x5b, 0x5d, 0x7f, 0xff}) {
      std::string changed = state;
      changed[position] = char(value);
      load(changed);
      load(changed + state);
    }
  }
}

// ---- running ---------------------------------------------------------------------

// Where the test binary's build tree has the stand-in driver.
std::filesystem::path FakeXrtLibrary() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "fake-xrt" /
         "libxrt_core.so.2";
}

bool FakeXrtIsLoaded() {
  void* handle = dlopen(FakeXrtLibrary().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

TEST(XrtCodegenTest, InputsThatDoNotFitAreRefusedBeforeTheDevice) {
  const std::shared_ptr<const ExternalFunction> function = XrtCodegen().Load(
      VectorAdd(8, false), "kernel vadd\narguments input0 input1 output\n", "vadd");
  const Ref<Tensor> vector = Vector(8, [](int32_t index) { return index; });
  Error error = ErrorFrom([&] { function->Run(std::vector<Ref<Tensor>>{vector}); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.message(), "vadd takes 2 tensors, given 1");
  error = ErrorFrom([&] {
    function->Run(std::vector<Ref<Tensor>>{vector, Vector(9, [](int32_t) { return 0; })});
  });
  EXPECT_EQ(error.message(), "vadd's input 1 is Tensor[(8,), int32], given Tensor[(9,), int32]");
}

// The stand-in driver opened as XRT itself (dlopen finds a loaded library
// by its soname), with tests/devices/data/vadd.xclbin loaded on its card.
class XrtCodegenFakeDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(FakeXrtLibrary()))
      GTEST_SKIP() << FakeXrtLibrary() << " is not built (ninja fake_xrt_core)";
    if (dlopen(FakeXrtLibrary().c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr)
      FAIL() << "cannot load the stand-in XRT driver: " << dlerror();
    try {
      device_ = &GetDevice(DeviceId{DeviceKind::kXRT, 0});
    } catch (const Error& error) {
      GTEST_SKIP() << "XRT was opened before the stand-in driver was loaded (run this test on "
                      "its own, as ctest does): "
                   << error.message();
    }
    devices::ExternalKernelHostOf(*device_)->LoadKernelFile(RELAY_TEST_FIXTURE_DIR
                                                            "/../devices/data/vadd.xclbin");
  }

  Device* device_ = nullptr;
};

TEST_F(XrtCodegenFakeDriverTest, AManifestKernelRunsOnTheCard) {
  ManifestFiles files;
  const std::shared_ptr<const ExternalCodegen> codegen =
      XrtCodegenFromManifest(files.Write(kManifest));
  const ExternalGraph graph = VectorAdd(1000);
  const std::shared_ptr<const ExternalFunction> function =
      XrtCodegen().Load(graph, codegen->Compile(graph, "xrt_0"), "xrt_0");
  const Ref<Tensor> x = Vector(1000, [](int32_t index) { return index * 3 - 700; });
  const Ref<Tensor> y = Vector(1000, [](int32_t index) { return 5000 - index; });
  y->MarkImmutable();  // copied to the card once, then found again
  for (int repeat = 0; repeat < 2; ++repeat) {
    const Ref<Tensor> result = function->Run(std::vector<Ref<Tensor>>{x, y});
    EXPECT_EQ(result->device_id(), (DeviceId{DeviceKind::kXRT, 0}));
    // The result on the card feeds the next call without a trip to the host.
    const Ref<Tensor> twice = function->Run(std::vector<Ref<Tensor>>{result, y});
    const Ref<Tensor> host = CopyTensor(*twice, HostDevice());
    for (int32_t index = 0; index < 1000; ++index)
      ASSERT_EQ(host->data<int32_t>()[index], (index * 3 - 700) + 2 * (5000 - index)) << index;
  }
}

TEST_F(XrtCodegenFakeDriverTest, KernelsThatAreMissingOrDoNotFitAreNamed) {
  const Ref<Tensor> vector = Vector(1000, [](int32_t index) { return index; });
  const ExternalGraph graph = VectorAdd(1000, false);
  Error error = ErrorFrom([&] {
    XrtCodegen()
        .Load(graph, XrtCodegen().Compile(graph, "vsub"), "vsub")
        ->Run(std::vector<Ref<Tensor>>{vector, vector});
  });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.message(),
            "xrt kernel vsub is not loaded on xrt:0: give the .xclbin that holds it with --xclbin "
            "FILE");
  ExternalGraph three = graph;
  three.params.push_back(three.params[0]);
  three.operators.push_back(Call("add", {-1, 2}));
  three.composites.push_back(-1);
  three.types.push_back(three.types[0]);
  error = ErrorFrom([&] {
    XrtCodegen()
        .Load(three, XrtCodegen().Compile(three, "vadd"), "vadd")
        ->Run(std::vector<Ref<Tensor>>{vector, vector, vector});
  });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.message(),
            "xrt kernel vadd takes 3 buffers and 1 integer; the call gives 3 tensors and its "
            "result (4 buffers), and 1 dimension as integers (output.shape[0])");
}

// Here XRT finds no card (or is not installed, or not built): the call says
// so. After the stand-in driver's tests, which run first in one process,
// there is a card: ctest runs each test in a process of its own.
TEST(XrtCodegenNoDeviceTest, RunningWithoutAnXrtDeviceSaysSo) {
  if (FakeXrtIsLoaded()) GTEST_SKIP() << "the stand-in XRT driver was loaded by an earlier test";
  ManifestFiles files;
  const std::shared_ptr<const ExternalCodegen> codegen =
      XrtCodegenFromManifest(files.Write(kManifest));
  const ExternalGraph graph = VectorAdd(8);
  const std::shared_ptr<const ExternalFunction> function =
      XrtCodegen().Load(graph, codegen->Compile(graph, "xrt_0"), "xrt_0");
  const Ref<Tensor> vector = Vector(8, [](int32_t index) { return index; });
  try {
    function->Run(std::vector<Ref<Tensor>>{vector, vector});
    GTEST_SKIP() << "this machine has an XRT card with kernel vadd loaded";
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::kUsage && Contains(error.message(), "is not loaded on xrt:0"))
      GTEST_SKIP() << "this machine has an XRT card";
    EXPECT_EQ(error.kind(), ErrorKind::kDevice) << error.message();
    EXPECT_TRUE(Contains(error.message(), "no XRT device") ||
                Contains(error.message(), "no XRT driver") ||
                Contains(error.message(), "the XRT backend is not part of this build"))
        << error.message();
  }
}

}  // namespace
}  // namespace relay::kernels::external

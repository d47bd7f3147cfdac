// The ONNX importer (compiler/frontends/onnx) against ONNX's own node tests
// (Debian's libonnx-testdata): each test_*/model.onnx is imported, compiled
// and run on the VM with its test_data_set_*/input_K.pb, and every output
// compared with output_K.pb (ONNX's reference results, computed by NumPy).
// A model with an operator, attribute or dtype the importer does not convert
// is skipped, its reason printed; ImportCoverage prints the counts that
// docs/onnx.md keeps.
//
// Node tests pass every operand as a graph input, also those the importer
// needs while importing (a Reshape's shape, a Resize's scales, a Pad's
// pads). Such a case is run a second way too: its inputs after the first
// become initializers holding data set 0's values, and that data set runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/frontend.h"
#include "compiler/frontends/onnx/onnx_converters.h"
#include "compiler/frontends/onnx/onnx_import.h"
#include "compiler/passes/bind_params.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/kernels/fixture_cases.h"
#include "tests/kernels/onnx_testdata.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay::onnx_import {
namespace {

using kernels::testing::CompareValues;
using kernels::testing::ReadOnnxTensorFile;

const std::filesystem::path kDataDirectory = RELAY_ONNX_TESTDATA_DIR;

// ONNX's backend tests compare with a relative tolerance of 1e-3; our
// comparison is relative above 1 and absolute below (FloatsMatch).
constexpr double kTolerance = 1e-3;

// Cases that import but whose results differ from ONNX's, each with why:
// the gaps to close in the importer or the kernels.
const std::map<std::string, std::string> kKnownFailures = {};

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(kDataDirectory, error)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "model.onnx"))
      names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The executable of an imported model, its weights bound as constants.
std::shared_ptr<const vm::Executable> Compile(ImportedModel& model, const std::string& origin) {
  Diagnostics diagnostics(origin, std::make_shared<const std::string>(model.relay_text));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) {
    throw Error(ErrorKind::kInternal, "the imported program does not check:\n" +
                                          diagnostics.FormatAll() + "\n" + model.relay_text);
  }
  if (!model.weights.empty()) module = passes::BindParams(module, "main", model.weights, origin);
  return std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(module, &compiler::Prelude()));
}

// The model of `directory` with its graph inputs after the first turned
// into initializers holding data set 0's values, serialised.
std::string WithConstantOperands(const std::filesystem::path& directory) {
  onnx::ModelProto model;
  std::ifstream stream(directory / "model.onnx", std::ios::binary);
  if (!model.ParseFromIstream(&stream)) throw Error(ErrorKind::kLoad, "unreadable model");
  onnx::GraphProto& graph = *model.mutable_graph();
  while (graph.input_size() > 1) {
    const int index = graph.input_size() - 1;
    onnx::TensorProto tensor;
    std::ifstream data(directory / "test_data_set_0" / ("input_" + std::to_string(index) + ".pb"),
                       std::ios::binary);
    if (!tensor.ParseFromIstream(&data)) throw Error(ErrorKind::kLoad, "unreadable input");
    tensor.set_name(graph.input(index).name());
    *graph.add_initializer() = tensor;
    graph.mutable_input()->RemoveLast();
  }
  return model.SerializeAsString();
}

class OnnxImportTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxImportTest, MatchesOnnxReference) {
  const std::filesystem::path directory = kDataDirectory / GetParam();
  ImportedModel model;
  bool constant_operands = false;
  try {
    model = ImportOnnxFile((directory / "model.onnx").string());
  } catch (const Error& error) {
    if (std::string(error.what()).find("must be known while importing") == std::string::npos)
      GTEST_SKIP() << "not imported: " << error.what();
    try {
      model = ImportOnnxBytes(WithConstantOperands(directory), GetParam(), directory.string());
      constant_operands = true;
    } catch (const Error& again) {
      GTEST_SKIP() << "not imported, with constant operands either: " << again.what();
    }
  }
  if (auto known = kKnownFailures.find(GetParam()); known != kKnownFailures.end()) {
    GTEST_SKIP() << "known failure: " << known->second;
  }
  std::shared_ptr<const vm::Executable> executable;
  try {
    executable = Compile(model, GetParam());
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::kInternal) FAIL() << error.what();
    GTEST_SKIP() << "not compiled: " << error.what();
  }
  int data_sets = 0;
  for (int set = 0; !constant_operands || set == 0; ++set) {
    const std::filesystem::path data = directory / ("test_data_set_" + std::to_string(set));
    if (!std::filesystem::exists(data)) break;
    ++data_sets;
    std::vector<Value> inputs;
    for (size_t index = 0; index < model.inputs.size(); ++index) {
      inputs.push_back(
          ReadOnnxTensorFile((data / ("input_" + std::to_string(index) + ".pb")).string()));
    }
    vm::VirtualMachine machine(executable);
    Value result;
    try {
      result = machine.Invoke("main", inputs);
    } catch (const Error& error) {
      FAIL() << "data set " << set << ": " << error.what();
    }
    std::vector<Value> outputs{result};
    if (model.outputs.size() > 1) {
      ASSERT_EQ(result->kind(), ObjectKind::kTuple);
      outputs = static_cast<const Tuple*>(result.get())->fields();
    }
    ASSERT_EQ(outputs.size(), model.outputs.size());
    for (size_t index = 0; index < outputs.size(); ++index) {
      Ref<Tensor> expected =
          ReadOnnxTensorFile((data / ("output_" + std::to_string(index) + ".pb")).string());
      ASSERT_EQ(outputs[index]->kind(), ObjectKind::kTensor) << "output " << index;
      const auto& actual = static_cast<const Tensor&>(*outputs[index]);
      ASSERT_EQ(DTypeName(actual.dtype()), DTypeName(expected->dtype())) << "output " << index;
      ASSERT_EQ(ShapeToString(actual.shape()), ShapeToString(expected->shape()))
          << "output " << index;
      EXPECT_EQ(CompareValues(*expected, actual, kTolerance), 0)
          << "data set " << set << ", output " << index << "\n"
          << model.relay_text;
    }
  }
  EXPECT_GT(data_sets, 0);
}

INSTANTIATE_TEST_SUITE_P(NodeTests, OnnxImportTest, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// How many node tests import, and the operators of those that do not: the
// figures docs/onnx.md keeps.
TEST(OnnxImportCoverage, CountsImportedCases) {
  const std::vector<std::string> names = CaseNames();
  ASSERT_GT(names.size(), 500u) << "libonnx-testdata is missing: " << kDataDirectory;
  int imported = 0, with_constant_operands = 0;
  std::map<std::string, int> refused_operators;
  for (const std::string& name : names) {
    try {
      try {
        ImportOnnxFile((kDataDirectory / name / "model.onnx").string());
        ++imported;
      } catch (const Error& error) {
        if (std::string(error.what()).find("must be known while importing") == std::string::npos)
          throw;
        ImportOnnxBytes(WithConstantOperands(kDataDirectory / name), name,
                        (kDataDirectory / name).string());
        ++with_constant_operands;
      }
    } catch (const Error& error) {
      const std::string message = error.what();
      const size_t at = message.find("unsupported operators:");
      if (at == std::string::npos) {
        ++refused_operators["(an attribute, dtype or input form)"];
        continue;
      }
      std::istringstream ops(message.substr(at + std::strlen("unsupported operators:")));
      for (std::string op; ops >> op;) ++refused_operators[op];
    }
  }
  std::cout << "ONNX node tests: " << names.size() << " cases, " << imported << " imported, "
            << with_constant_operands << " more with constant operands, "
            << ConvertedOperators().size() << " operators converted\n";
  std::cout << "operators converted:";
  for (const std::string& op : ConvertedOperators()) std::cout << " " << op;
  std::cout << "\ncases not imported, by operator:";
  for (const auto& [op, count] : refused_operators) std::cout << " " << op << "(" << count << ")";
  std::cout << "\n";
  EXPECT_GT(imported, 0);
}

// x + c for a scalar constant c of `element_type` (FLOAT or DOUBLE), as a
// model's bytes.
std::string AddConstantModel(double constant,
                             onnx::TensorProto::DataType element_type = onnx::TensorProto::FLOAT) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("add_constant");
  for (const char* name : {"x", "y"}) {
    onnx::ValueInfoProto* info = name[0] == 'x' ? graph->add_input() : graph->add_output();
    info->set_name(name);
    onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(element_type);
    tensor->mutable_shape()->add_dim()->set_dim_value(2);
  }
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type("Constant");
  node->add_output("c");
  onnx::AttributeProto* value = node->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(element_type);
  if (element_type == onnx::TensorProto::DOUBLE) {
    value->mutable_t()->add_double_data(constant);
  } else {
    value->mutable_t()->add_float_data(float(constant));
  }
  onnx::NodeProto* add = graph->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("c");
  add->add_output("y");
  return model.SerializeAsString();
}

// A float64 constant is written into the program to its full precision.
TEST(OnnxImportValues, Float64ConstantsKeepTheirPrecision) {
  const double constant = 0.12345678901234567;
  ImportedModel model =
      ImportOnnxBytes(AddConstantModel(constant, onnx::TensorProto::DOUBLE), "add.onnx", ".");
  std::shared_ptr<const vm::Executable> executable = Compile(model, "add.onnx");
  Ref<Tensor> x = Tensor::Empty(HostDevice(), {2}, DType::kFloat64);
  x->data<double>()[0] = 1.0;
  x->data<double>()[1] = -1e-9;
  vm::VirtualMachine machine(executable);
  std::vector<Value> inputs{x};
  Value result = machine.Invoke("main", inputs);
  const auto& y = static_cast<const Tensor&>(*result);
  for (int index = 0; index < 2; ++index)
    EXPECT_EQ(y.data<double>()[index], x->data<double>()[index] + constant) << model.relay_text;
}

// A NaN or infinite constant has no Relay literal: it stays a weight, and
// the program computes with it exactly.
TEST(OnnxImportValues, NonFiniteConstantsStayWeights) {
  for (float constant :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 2.5f}) {
    ImportedModel model = ImportOnnxBytes(AddConstantModel(constant), "add.onnx", ".");
    std::shared_ptr<const vm::Executable> executable = Compile(model, "add.onnx");
    Ref<Tensor> x = Tensor::Empty(HostDevice(), {2}, DType::kFloat32);
    x->data<float>()[0] = 1.0f;
    x->data<float>()[1] = -4.0f;
    vm::VirtualMachine machine(executable);
    std::vector<Value> inputs{x};
    Value result = machine.Invoke("main", inputs);
    const auto& y = static_cast<const Tensor&>(*result);
    for (int index = 0; index < 2; ++index) {
      const float want = x->data<float>()[index] + constant;
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y.data<float>()[index])) << model.relay_text;
      } else {
        EXPECT_EQ(y.data<float>()[index], want) << model.relay_text;
      }
    }
  }
}

TEST(OnnxImportNames, InvalidIdentifiersAreRenamedPredictably) {
  EXPECT_EQ(RelayIdentifier("input"), "input");
  EXPECT_EQ(RelayIdentifier("input.1"), "input_1");
  EXPECT_EQ(RelayIdentifier("onnx::Conv_12"), "onnx__Conv_12");
  EXPECT_EQ(RelayIdentifier("x:0"), "x_0");
  EXPECT_EQ(RelayIdentifier("0"), "_0");
  EXPECT_EQ(RelayIdentifier(""), "_");
}

TEST(OnnxImportErrors, MalformedModelsAreLoadErrors) {
  auto load_error = [](const std::string& bytes) {
    try {
      ImportOnnxBytes(bytes, "bad.onnx", ".");
    } catch (const Error& error) {
      return error.kind() == ErrorKind::kLoad ? std::string(error.what()) : std::string();
    }
    return std::string("imported");
  };
  EXPECT_NE(load_error("").find("bad.onnx: not an ONNX model"), std::string::npos);
  EXPECT_NE(load_error("not a protobuf at all \xff\xff\xff").find("bad.onnx"), std::string::npos);
  // A real model cut short.
  std::ifstream stream(kDataDirectory / "test_relu" / "model.onnx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 20u);
  EXPECT_NE(load_error(bytes.substr(0, bytes.size() / 2)).find("bad.onnx"), std::string::npos);
}

}  // namespace
}  // namespace relay::onnx_import

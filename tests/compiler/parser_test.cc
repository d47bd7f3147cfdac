// Targeted tests of the lexer, parser and printer: literal values, operator
// precedence, comments, projections, attributes, and the TVM-printed form.
#include <gtest/gtest.h>

#include "compiler/frontend.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/parser/parser.h"
#include "compiler/parser/printer.h"
#include "kernels/operator.h"

namespace relay {
namespace {

using namespace relay::ir;

struct Parsed {
  std::unique_ptr<Diagnostics> diagnostics;
  Module module;
};

Parsed Parse(const std::string& text) {
  auto diagnostics =
      std::make_unique<Diagnostics>("test.relay", std::make_shared<const std::string>(text));
  Module module = parser::ParseModule(*diagnostics, &compiler::Prelude());
  return {std::move(diagnostics), std::move(module)};
}

// The body of @main of a file holding one expression.
Expr ParseExpression(const std::string& text) {
  Parsed parsed = Parse("#[version = \"0.0.5\"]\n" + text);
  EXPECT_FALSE(parsed.diagnostics->has_errors()) << parsed.diagnostics->FormatAll();
  if (parsed.diagnostics->has_errors()) return Expr();
  return parsed.module.FindFunction("main")->function->body;
}

const CallNode* AsOpCall(const Expr& expr, const std::string& op_name) {
  const auto* call = As<CallNode>(expr);
  EXPECT_NE(call, nullptr);
  if (call == nullptr) return nullptr;
  const auto* op = As<OpNode>(call->callee);
  EXPECT_NE(op, nullptr);
  if (op != nullptr) {
    EXPECT_EQ(op->name(), op_name);
  }
  return call;
}

std::string FirstError(const std::string& text) {
  Parsed parsed = Parse(text);
  if (!parsed.diagnostics->has_errors()) return "no error";
  const Error& error = parsed.diagnostics->errors().front();
  return error.span()->ToString() + ": " + error.message();
}

TEST(LiteralTest, ValuesAndDTypes) {
  struct Case {
    const char* text;
    DType dtype;
    double value;
  };
  const Case cases[] = {
      {"7", DType::kInt32, 7},
      {"-7", DType::kInt32, -7},
      {"7i64", DType::kInt64, 7},
      {"-2i8", DType::kInt8, -2},
      {"200u8", DType::kUInt8, 200},
      {"5i16", DType::kInt16, 5},
      {"1.5", DType::kFloat32, 1.5},
      {"1.5f", DType::kFloat32, 1.5},
      {"2f", DType::kFloat32, 2},
      {"-0.25f", DType::kFloat32, -0.25},
      {"1e-3f", DType::kFloat32, 1e-3f},
      {"2f16", DType::kFloat16, 2},
      {"0.5f64", DType::kFloat64, 0.5},
      {"True", DType::kBool, 1},
      {"False", DType::kBool, 0},
      {"-2147483648", DType::kInt32, -2147483648.0},
      {"65535u16", DType::kUInt16, 65535},
      {"4000000000u32", DType::kUInt32, 4000000000.0},
      {"18446744073709551615u64", DType::kUInt64, 18446744073709551615.0},
  };
  for (const Case& test_case : cases) {
    Expr expr = ParseExpression(test_case.text);
    const auto* constant = As<ConstantNode>(expr);
    ASSERT_NE(constant, nullptr) << test_case.text;
    const Tensor& tensor = *constant->value;
    EXPECT_EQ(tensor.dtype(), test_case.dtype) << test_case.text;
    EXPECT_TRUE(tensor.shape().empty());
    double value = 0;
    switch (tensor.dtype()) {
      case DType::kBool:
        value = *tensor.data<bool>();
        break;
      case DType::kInt8:
        value = *tensor.data<int8_t>();
        break;
      case DType::kInt16:
        value = *tensor.data<int16_t>();
        break;
      case DType::kInt32:
        value = *tensor.data<int32_t>();
        break;
      case DType::kInt64:
        value = double(*tensor.data<int64_t>());
        break;
      case DType::kUInt8:
        value = *tensor.data<uint8_t>();
        break;
      case DType::kUInt16:
        value = *tensor.data<uint16_t>();
        break;
      case DType::kUInt32:
        value = *tensor.data<uint32_t>();
        break;
      case DType::kUInt64:
        value = double(*tensor.data<uint64_t>());
        break;
      case DType::kFloat16:
        value = static_cast<float>(*tensor.data<Float16>());
        break;
      case DType::kFloat32:
        value = *tensor.data<float>();
        break;
      case DType::kFloat64:
        value = *tensor.data<double>();
        break;
    }
    EXPECT_EQ(value, test_case.value) << test_case.text;
  }
}

TEST(LiteralTest, OutOfRangeAndBadSuffixesAreErrors) {
  EXPECT_EQ(FirstError("3000000000"),
            "test.relay:1:1: integer literal 3000000000 does not fit in int32 (add a suffix such "
            "as i64)");
  EXPECT_EQ(FirstError("300u8"), "test.relay:1:1: integer literal 300u8 does not fit in uint8");
  EXPECT_EQ(FirstError("-1u32"), "test.relay:1:1: integer literal -1u32 does not fit in uint32");
  EXPECT_EQ(FirstError("18446744073709551616u64"),
            "test.relay:1:1: integer literal 18446744073709551616u64 does not fit in uint64");
  EXPECT_EQ(FirstError("1.5i32"),
            "test.relay:1:1: '1.5i32': an integer suffix on a fractional number");
  EXPECT_EQ(FirstError("3f8"),
            "test.relay:1:1: '3f8': unknown literal suffix 'f8' (expected f, f16, f32, f64, i8, "
            "i16, i32, i64, u8, u16, u32 or u64)");
  EXPECT_EQ(FirstError("1e999f"), "test.relay:1:1: '1e999f' is out of range for float32");
}

TEST(ParserTest, MultiplicationBindsTighterThanAddition) {
  // 1 + 2 * 3 - 4 == subtract(add(1, multiply(2, 3)), 4)
  Expr expr = ParseExpression("1 + 2 * 3 - 4");
  const CallNode* subtract = AsOpCall(expr, "subtract");
  ASSERT_NE(subtract, nullptr);
  const CallNode* add = AsOpCall(subtract->args[0], "add");
  ASSERT_NE(add, nullptr);
  AsOpCall(add->args[1], "multiply");
}

TEST(ParserTest, ComparisonsBindLooserThanArithmeticAndEqualityLoosest) {
  // 1 < 2 + 3 == True  is  equal(less(1, add(2, 3)), True)
  Expr expr = ParseExpression("1 < 2 + 3 == True");
  const CallNode* equal = AsOpCall(expr, "equal");
  ASSERT_NE(equal, nullptr);
  const CallNode* less = AsOpCall(equal->args[0], "less");
  ASSERT_NE(less, nullptr);
  AsOpCall(less->args[1], "add");
}

TEST(ParserTest, NestedCommentsAreSkipped) {
  Expr expr = ParseExpression("/* outer /* inner */ still comment */ 1 // trailing\n");
  EXPECT_NE(As<ConstantNode>(expr), nullptr);
  EXPECT_EQ(FirstError("#[version = \"0.0.5\"]\n/* never /* closed */\n1"),
            "test.relay:2:1: unterminated comment: '/*' has no matching '*/'");
}

TEST(ParserTest, ChainedProjections) {
  Expr expr = ParseExpression("free_var %t: ((int32, (float32, bool)), int8);\n%t.0.1.1");
  const auto* outer = As<TupleGetItemNode>(expr);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->index, 1);
  const auto* middle = As<TupleGetItemNode>(outer->tuple);
  ASSERT_NE(middle, nullptr);
  EXPECT_EQ(middle->index, 1);
  const auto* inner = As<TupleGetItemNode>(middle->tuple);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->index, 0);
}

TEST(ParserTest, AttributesAreNormalisedWithDefaults) {
  Expr expr = ParseExpression(
      "free_var %x: Tensor[(1, 3, 8, 8), float32];\nfree_var %w: Tensor[(4, 3, 3, 3), float32];\n"
      "nn.conv2d(%x, %w, padding=[1, 1], channels=4, kernel_size=[3, 3])");
  const CallNode* call = AsOpCall(expr, "nn.conv2d");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(kernels::GetAttr(call->attrs, "padding").as_int_list(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(kernels::GetAttr(call->attrs, "strides").as_int_list(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(kernels::GetAttr(call->attrs, "groups").as_int(), 1);
  EXPECT_EQ(kernels::GetAttr(call->attrs, "data_layout").as_string(), "NCHW");
}

TEST(ParserTest, UnknownAttributeIsReportedAtTheAttribute) {
  std::string error = FirstError(
      "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2, 3), float32]) {\n  sum(%x, axes=[1])\n}\n");
  EXPECT_EQ(error.rfind("test.relay:3:11: operator sum: unknown attribute 'axes'", 0), 0u) << error;
}

// The form TVM's text printer produces: type comments, graph bindings, a
// function attribute and a one-dimensional shape without a trailing comma.
TEST(ParserTest, ReadsTvmPrintedText) {
  const char* text = R"(#[version = "0.0.5"]
def @main(%data: Tensor[(1, 3), float32] /* ty=Tensor[(1, 3), float32] */, %bias: Tensor[(3), float32]) -> Tensor[(1, 3), float32] {
  %0 = fn (%p0: Tensor[(1, 3), float32], %p1: Tensor[(3), float32], Primitive=1) -> Tensor[(1, 3), float32] {
    %1 = nn.bias_add(%p0, %p1, axis=1) /* ty=Tensor[(1, 3), float32] */;
    nn.relu(%1) /* ty=Tensor[(1, 3), float32] */
  } /* ty=fn (Tensor[(1, 3), float32], Tensor[(3), float32]) -> Tensor[(1, 3), float32] */;
  %0(%data, %bias) /* ty=Tensor[(1, 3), float32] */
}
)";
  auto diagnostics =
      std::make_unique<Diagnostics>("tvm.relay", std::make_shared<const std::string>(text));
  Module module = compiler::ParseAndCheck(*diagnostics);
  ASSERT_FALSE(diagnostics->has_errors()) << diagnostics->FormatAll();
  EXPECT_EQ(TypeToString(module.FindFunction("main")->name->checked_type()),
            "fn (Tensor[(1, 3), float32], Tensor[(3,), float32]) -> Tensor[(1, 3), float32]");
  const auto* call = As<CallNode>(module.FindFunction("main")->function->body);
  ASSERT_NE(call, nullptr);
  const auto* primitive = As<FunctionNode>(call->callee);
  ASSERT_NE(primitive, nullptr);
  ASSERT_EQ(primitive->attrs.size(), 1u);
  EXPECT_EQ(primitive->attrs[0].first, "Primitive");
  EXPECT_EQ(primitive->attrs[0].second.as_int(), 1);
}

TEST(ParserTest, VersionHeaderIsChecked) {
  EXPECT_EQ(FirstError("#[version = \"0.0.4\"]\n1"),
            "test.relay:1:13: unsupported Relay text format version \"0.0.4\" (relay-vm reads "
            "version \"0.0.5\")");
  EXPECT_EQ(FirstError("1"), "no error");  // no header: accepted
}

TEST(ParserTest, MetadataIsRejectedWithAHintAboutParams) {
  std::string error =
      FirstError("#[version = \"0.0.5\"]\ndef @main() {\n  meta[relay.Constant][0]\n}\n");
  EXPECT_NE(error.find("--params"), std::string::npos) << error;
}

TEST(ParserTest, DeepNestingIsAnErrorNotACrash) {
  std::string text = std::string(100000, '(') + "1" + std::string(100000, ')');
  std::string error = FirstError(text);
  EXPECT_NE(error.find("nested too deeply"), std::string::npos) << error;
}

TEST(ParserTest, StrayBytesAreReportedOnce) {
  Parsed parsed = Parse(std::string("#[version = \"0.0.5\"]\n1 $ 2\x01"));
  ASSERT_TRUE(parsed.diagnostics->has_errors());
  EXPECT_EQ(parsed.diagnostics->errors().front().message(), "unexpected character '$'");
}

TEST(ParserTest, ErrorFloodIsCapped) {
  Parsed parsed = Parse(std::string(100000, '$'));
  EXPECT_EQ(parsed.diagnostics->errors().size(), Diagnostics::kMaxErrors);
}

TEST(PrinterTest, SharedNodesPrintOnceAsGraphBindings) {
  Expr expr = ParseExpression(
      "free_var %x: float32;\n%0 = add(%x, %x);\n%1 = multiply(%0, %0);\nsubtract(%1, %0)");
  std::string printed = parser::PrintExpression(expr);
  EXPECT_EQ(printed,
            "#[version = \"0.0.5\"]\n"
            "free_var %x: float32;\n"
            "%0 = add(%x, %x);\n"
            "%1 = multiply(%0, %0);\n"
            "subtract(%1, %0)\n");
}

TEST(PrinterTest, DistinctVariablesWithOneNameAreRenamed) {
  Parsed parsed =
      Parse("#[version = \"0.0.5\"]\ndef @main(%x: int32) {\n  let %x = %x + 1;\n  %x\n}\n");
  ASSERT_FALSE(parsed.diagnostics->has_errors()) << parsed.diagnostics->FormatAll();
  std::string printed = parser::PrintModule(parsed.module);
  EXPECT_NE(printed.find("let %x_1 = add(%x, 1);"), std::string::npos) << printed;
  Parsed reparsed = Parse(printed);
  ASSERT_FALSE(reparsed.diagnostics->has_errors()) << reparsed.diagnostics->FormatAll();
  EXPECT_TRUE(StructurallyEqual(parsed.module, reparsed.module));
}

TEST(PrinterTest, BindingUsedInBothBranchesIsHoistedAboveTheIf) {
  Parsed parsed = Parse(
      "#[version = \"0.0.5\"]\ndef @main(%c: bool, %x: float32) {\n  %0 = exp(%x);\n"
      "  if (%c) { %0 } else { negative(%0) }\n}\n");
  ASSERT_FALSE(parsed.diagnostics->has_errors()) << parsed.diagnostics->FormatAll();
  std::string printed = parser::PrintModule(parsed.module);
  Parsed reparsed = Parse(printed);
  ASSERT_FALSE(reparsed.diagnostics->has_errors()) << printed << reparsed.diagnostics->FormatAll();
  EXPECT_TRUE(StructurallyEqual(parsed.module, reparsed.module)) << printed;
  EXPECT_LT(printed.find("exp(%x)"), printed.find("if ("));
}

TEST(StructuralEqualTest, AlphaEquivalenceAndDifferences) {
  Expr a = ParseExpression("fn (%a: int32) { %a + 1 }");
  Expr b = ParseExpression("fn (%b: int32) { %b + 1 }");
  Expr c = ParseExpression("fn (%b: int32) { %b + 2 }");
  Expr d = ParseExpression("fn (%b: int64) { %b + 1i64 }");
  EXPECT_TRUE(StructurallyEqual(a, b));
  EXPECT_FALSE(StructurallyEqual(a, c));
  EXPECT_FALSE(StructurallyEqual(a, d));
}

}  // namespace
}  // namespace relay

// The IR's generic machinery: iterative traversal and rewriting, structural
// hashing, and iterative destruction of long chains.
#include <gtest/gtest.h>

#include "compiler/frontend.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/ir/structural_hash.h"
#include "compiler/parser/parser.h"
#include "kernels/operator.h"
#include "relay/devices.h"

namespace relay {
namespace {

using namespace relay::ir;

Expr FloatConstant(float value) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {}, DType::kFloat32);
  *tensor->data<float>() = value;
  return Make<ConstantNode>(tensor);
}

Expr Add(const Expr& a, const Expr& b) {
  return Make<CallNode>(Make<OpNode>(kernels::FindOperator("add")), std::vector<Expr>{a, b});
}

Expr ParseBody(const std::string& text) {
  Diagnostics diagnostics("test.relay",
                          std::make_shared<const std::string>("#[version = \"0.0.5\"]\n" + text));
  Module module = parser::ParseModule(diagnostics, &compiler::Prelude());
  EXPECT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  return diagnostics.has_errors() ? Expr() : module.FindFunction("main")->function->body;
}

// add(add(add(x, 1), 1), 1)... `depth` deep, built without the parser.
Expr DeepChain(const Var& x, int depth) {
  Expr expr = x;
  for (int index = 0; index < depth; ++index) expr = Add(expr, FloatConstant(1));
  return expr;
}

TEST(ExprFunctorTest, PostOrderVisitsChildrenFirstAndSharedNodesOnce) {
  Var x = Make<VarNode>("x", ScalarType(DType::kFloat32));
  Expr shared = Add(x, x);
  Expr root = Add(shared, shared);
  std::vector<const ExprNode*> order;
  PostOrderVisit(root, [&](const Expr& expr) { order.push_back(expr.get()); });
  // x, the two operator nodes, shared, root: each once, children first.
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order.back(), root.get());
  auto position = [&](const ExprNode* node) {
    return std::find(order.begin(), order.end(), node) - order.begin();
  };
  EXPECT_LT(position(x.get()), position(shared.get()));
  EXPECT_LT(position(shared.get()), position(root.get()));
}

TEST(ExprFunctorTest, DeepExpressionsNeedNoStack) {
  Var x = Make<VarNode>("x", ScalarType(DType::kFloat32));
  Expr chain = DeepChain(x, 200000);
  size_t count = 0;
  PostOrderVisit(chain, [&](const Expr&) { ++count; });
  // x, one shared add operator node per call (distinct nodes), constants, calls.
  EXPECT_EQ(count, 1u + 3u * 200000u);
}

// Replaces every float constant 1 with 2.
class OneToTwo : public ExprMutator {
 protected:
  Expr Rewrite(const Expr&, const Expr& rebuilt) override {
    if (const auto* constant = As<ConstantNode>(rebuilt)) {
      if (constant->value->dtype() == DType::kFloat32 && *constant->value->data<float>() == 1.0f) {
        return FloatConstant(2);
      }
    }
    return rebuilt;
  }
};

class Identity : public ExprMutator {};

TEST(ExprMutatorTest, RewritesDeepChainsAndKeepsUnchangedNodes) {
  Var x = Make<VarNode>("x", ScalarType(DType::kFloat32));
  Expr chain = DeepChain(x, 100000);
  EXPECT_EQ(Identity().Mutate(chain), chain);  // nothing changed: the same node
  Expr rewritten = OneToTwo().Mutate(chain);
  EXPECT_NE(rewritten, chain);
  const auto* top = As<CallNode>(rewritten);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(*As<ConstantNode>(top->args[1])->value->data<float>(), 2.0f);
}

TEST(ExprMutatorTest, SharingIsPreserved) {
  Var x = Make<VarNode>("x", ScalarType(DType::kFloat32));
  Expr shared = Add(x, FloatConstant(1));
  Expr root = Add(shared, shared);
  Expr rewritten = OneToTwo().Mutate(root);
  const auto* call = As<CallNode>(rewritten);
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->args[0], call->args[1]);
}

TEST(ExprMutatorTest, BindersAreKept) {
  Expr body = ParseBody(
      "def @main(%a: float32) {\n  let %b = %a + 1f;\n  match ((%b, %a)) { (%c, _) => %c + 1f "
      "}\n}\n");
  ASSERT_TRUE(body);
  Expr rewritten = OneToTwo().Mutate(body);
  Expr expected = ParseBody(
      "def @main(%a: float32) {\n  let %b = %a + 2f;\n  match ((%b, %a)) { (%c, _) => %c + 2f "
      "}\n}\n");
  ASSERT_TRUE(expected);
  // The free %a of each body pairs up on first sight.
  EXPECT_TRUE(StructurallyEqual(rewritten, expected));
}

TEST(StructuralHashTest, AlphaEquivalentProgramsHashAlike) {
  Expr a = ParseBody("fn [T](%p: T, %q: int32) -> T { let %r = %q + 1; %p }");
  Expr b = ParseBody("fn [U](%x: U, %y: int32) -> U { let %z = %y + 1; %x }");
  Expr c = ParseBody("fn [U](%x: U, %y: int32) -> U { let %z = %y + 2; %x }");
  Expr d = ParseBody("fn [U](%x: U, %y: int32) -> U { let %z = %y + 1; %z }");
  ASSERT_TRUE(a && b && c && d);
  EXPECT_TRUE(StructurallyEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  EXPECT_NE(StructuralHash(a), StructuralHash(c));
  EXPECT_NE(StructuralHash(a), StructuralHash(d));
  EXPECT_FALSE(StructurallyEqual(a, d));
}

TEST(StructuralHashTest, TypesAndAttributesCount) {
  EXPECT_EQ(StructuralHash(TensorType({2, kAnyDim}, DType::kFloat32)),
            StructuralHash(TensorType({2, kAnyDim}, DType::kFloat32)));
  EXPECT_NE(StructuralHash(TensorType({2, kAnyDim}, DType::kFloat32)),
            StructuralHash(TensorType({2, 3}, DType::kFloat32)));
  Expr a = ParseBody("free_var %x: Tensor[(2, 3), float32];\nsum(%x, axis=[1])");
  Expr b = ParseBody("free_var %x: Tensor[(2, 3), float32];\nsum(%x, axis=[0])");
  ASSERT_TRUE(a && b);
  EXPECT_NE(StructuralHash(a), StructuralHash(b));
  EXPECT_FALSE(StructurallyEqual(a, b));
}

TEST(StructuralHashTest, HeavilySharedDagHashesInLinearTime) {
  Var x = Make<VarNode>("x", ScalarType(DType::kFloat32));
  Expr expr = x;
  for (int index = 0; index < 100000; ++index) expr = Add(expr, expr);  // 2^100000 paths
  EXPECT_EQ(StructuralHash(expr), StructuralHash(expr));
  EXPECT_TRUE(StructurallyEqual(expr, expr));
}

TEST(NodeTest, LongChainsAreDestroyedWithoutRecursion) {
  Var x = Make<VarNode>("x", ScalarType(DType::kFloat32));
  Expr body = x;
  for (int index = 0; index < 1000000; ++index)
    body = Make<LetNode>(Make<VarNode>("v", Type()), x, body);
  body = Expr();  // would overflow the stack if destruction recursed
  SUCCEED();
}

}  // namespace
}  // namespace relay

// The kernel IR's builders, validation and printer, and the queries of
// kir/rewrite.h.
#include "kernels/kir/kir.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "kernels/kir/rewrite.h"

namespace relay::kernels::kir {
namespace {

Buffer MakeBuffer(const std::string& name, DType dtype, std::vector<Expr> shape) {
  return Buffer(new BufferNode(name, dtype, std::move(shape)));
}

TEST(KernelIrTest, IndexArithmeticFoldsConstants) {
  Var i(new VarNode("i"));
  EXPECT_EQ(PrintExpr(Add(Int(2), Int(3))), "5");
  EXPECT_EQ(PrintExpr(Multiply(Int(1), i)), "v0");
  EXPECT_EQ(PrintExpr(Add(Multiply(Int(0), i), Int(4))), "4");
  EXPECT_EQ(PrintExpr(Subtract(i, Int(0))), "v0");
  // Overflow is not folded: the expression stays as written.
  EXPECT_EQ(PrintExpr(Multiply(Int(INT64_MAX), Int(2))), "(9223372036854775807 * 2)");
}

TEST(KernelIrTest, FlatIndexIsRowMajor) {
  Var rows(new VarNode("rows"));
  Buffer buffer = MakeBuffer("a", DType::kFloat32, {rows, Int(3), Int(4)});
  Var i(new VarNode("i")), j(new VarNode("j")), k(new VarNode("k"));
  // ((i * 3) + j) * 4 + k, with names by first appearance.
  EXPECT_EQ(PrintExpr(FlatIndex(buffer, {i, j, k})), "((((v0 * 3) + v1) * 4) + v2)");
  EXPECT_EQ(PrintExpr(ElementCount(buffer)), "((v0 * 3) * 4)");
}

TEST(KernelIrTest, ComparisonsAreBoolAndOperandsMustAgree) {
  Expr x = Float(1.5, DType::kFloat32);
  EXPECT_EQ(Binary(BinaryOp::kLess, x, x)->dtype, DType::kBool);
  EXPECT_EQ(Binary(BinaryOp::kAdd, x, x)->dtype, DType::kFloat32);
  try {
    Binary(BinaryOp::kAdd, x, Float(1, DType::kFloat64));
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInternal);
  }
  EXPECT_THROW(Select(x, x, x), Error);  // non-bool condition
  EXPECT_THROW(Unary(UnaryOp::kNot, x), Error);
}

TEST(KernelIrTest, StoreChecksTheDType) {
  Buffer buffer = MakeBuffer("out", DType::kInt32, {Int(4)});
  EXPECT_THROW(Stmt(new StoreNode(buffer, Int(0), Float(1, DType::kFloat32))), Error);
  EXPECT_NO_THROW(
      Stmt(new StoreNode(buffer, Int(0), Cast(DType::kInt32, Float(1, DType::kFloat32)))));
}

TEST(KernelIrTest, PrintsAReadableKernel) {
  Var n(new VarNode("n"));
  Buffer a = MakeBuffer("a", DType::kFloat32, {n, Int(4)});
  Buffer b = MakeBuffer("b", DType::kFloat32, {Int(4)});
  Buffer out = MakeBuffer("out", DType::kFloat32, {n, Int(4)});
  Var i(new VarNode("i")), j(new VarNode("j"));
  Expr sum = Add(Load(a, FlatIndex(a, {i, j})), Load(b, j));
  Expr relu = Binary(BinaryOp::kMaximum, sum, Float(0, DType::kFloat32));
  Stmt store(new StoreNode(out, FlatIndex(out, {i, j}), relu));
  Stmt inner(new ForNode(j, Int(4), ForKind::kVectorized, store));
  Stmt outer(new ForNode(i, n, ForKind::kParallel, inner));
  Kernel kernel{"fused_add_relu", {a, b, out}, 1, {n}, outer};
  EXPECT_EQ(PrintKernel(kernel),
            "kernel fused_add_relu(b0: float32[v0, 4], b1: float32[4], out b2: float32[v0, 4]) {\n"
            "  parallel for v1 in 0..v0 {\n"
            "    vectorized for v2 in 0..4 {\n"
            "      b2[((v1 * 4) + v2)] = max((b0[((v1 * 4) + v2)] + b1[v2]), 0f)\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(KernelIrTest, KernelsThatDifferOnlyInNamesPrintAlike) {
  auto build = [](const std::string& prefix) {
    Var n(new VarNode(prefix + "n"));
    Buffer x = MakeBuffer(prefix + "x", DType::kFloat64, {n});
    Buffer y = MakeBuffer(prefix + "y", DType::kFloat64, {n});
    Var i(new VarNode(prefix + "i"));
    Stmt body(new ForNode(i, n, ForKind::kSerial,
                          Stmt(new StoreNode(y, i, Unary(UnaryOp::kExp, Load(x, i))))));
    return PrintKernel(Kernel{"exp", {x, y}, 1, {n}, body});
  };
  EXPECT_EQ(build("first_"), build("second_"));
}

}  // namespace
}  // namespace relay::kernels::kir

namespace relay::kernels::kir {
namespace {

TEST(KernelIrRewriteTest, FreeVariablesLeaveOutWhatReductionsBind) {
  // sum over k of (a[i, k] - max over m of a[i, m]): i is free; k and m are
  // bound, each by its own reduction, and the inner maximum alone has only
  // i free.
  Buffer a = MakeBuffer("a", DType::kFloat32, {Int(4), Int(5)});
  Var i(new VarNode("i")), k(new VarNode("k")), m(new VarNode("m"));
  Expr maximum = Reduce(ReduceOp::kMaximum, {m}, {Int(5)}, Float(-1e30, DType::kFloat32),
                        Load(a, FlatIndex(a, {i, m})));
  Expr sum = Reduce(ReduceOp::kSum, {k}, {Int(5)}, Float(0, DType::kFloat32),
                    Subtract(Load(a, FlatIndex(a, {i, k})), maximum));
  EXPECT_EQ(FreeVariables(sum), (std::unordered_set<const VarNode*>{i.get()}));
  EXPECT_EQ(FreeVariables(maximum), (std::unordered_set<const VarNode*>{i.get()}));
  // The body alone mentions k freely.
  EXPECT_EQ(FreeVariables(Subtract(Load(a, FlatIndex(a, {i, k})), maximum)),
            (std::unordered_set<const VarNode*>{i.get(), k.get()}));
}

TEST(KernelIrRewriteTest, SameExprComparesNodeForNode) {
  Buffer a = MakeBuffer("a", DType::kFloat32, {Int(4), Int(5)});
  Buffer b = MakeBuffer("a", DType::kFloat32, {Int(4), Int(5)});
  Var i(new VarNode("i")), j(new VarNode("i"));
  auto term = [](const Buffer& buffer, const Var& index) {
    return Unary(UnaryOp::kExp, Subtract(Load(buffer, index), Float(1.5, DType::kFloat32)));
  };
  // Built twice from the same buffer and variable: the same.
  EXPECT_TRUE(SameExpr(term(a, i), term(a, i)));
  // Another buffer or variable of the same name, another constant or
  // operator: not.
  EXPECT_FALSE(SameExpr(term(a, i), term(b, i)));
  EXPECT_FALSE(SameExpr(term(a, i), term(a, j)));
  EXPECT_FALSE(SameExpr(term(a, i),
                        Unary(UnaryOp::kExp, Subtract(Load(a, i), Float(2.5, DType::kFloat32)))));
  EXPECT_FALSE(SameExpr(term(a, i),
                        Unary(UnaryOp::kLog, Subtract(Load(a, i), Float(1.5, DType::kFloat32)))));
  // A reduction is only itself.
  Var k(new VarNode("k"));
  Expr sum = Reduce(ReduceOp::kSum, {k}, {Int(5)}, Float(0, DType::kFloat32), Load(a, k));
  EXPECT_TRUE(SameExpr(sum, sum));
  EXPECT_FALSE(
      SameExpr(sum, Reduce(ReduceOp::kSum, {k}, {Int(5)}, Float(0, DType::kFloat32), Load(a, k))));
  // FindSame finds the subexpression, outermost first.
  Expr whole = Binary(BinaryOp::kDivide, term(a, i), sum);
  EXPECT_EQ(FindSame(whole, term(a, i)), As<BinaryNode>(whole)->a.get());
  EXPECT_EQ(FindSame(whole, term(a, j)), nullptr);
}

}  // namespace
}  // namespace relay::kernels::kir

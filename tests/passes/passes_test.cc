// The IR passes one by one (compiler/passes/): what each must change, what
// it must leave alone, and that none recurses along long programs. Whole
// programs through every pass are checked against the reference evaluator
// by tests/vm (program_test, random_program_test).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_set>

#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/type.h"
#include "compiler/passes/a_normal_form.h"
#include "compiler/passes/common_subexpression.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/dead_code.h"
#include "compiler/passes/eta_expansion.h"
#include "compiler/passes/fuse_operators.h"
#include "compiler/passes/lambda_lifting.h"
#include "compiler/passes/loop_inlining.h"
#include "compiler/passes/loop_invariant_projection.h"
#include "compiler/passes/pad_convolutions.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/pipeline.h"
#include "compiler/passes/simplify_batch_norm.h"
#include "compiler/passes/split_to_slices.h"
#include "compiler/passes/tail_calls.h"
#include "kernels/operator.h"

namespace relay {
namespace {

using namespace relay::ir;

Module Check(const std::string& source) {
  Diagnostics diagnostics("test.relay",
                          std::make_shared<const std::string>("#[version = \"0.0.5\"]\n" + source));
  Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) throw Error(ErrorKind::kInternal, diagnostics.FormatAll());
  return module;
}

Function Global(const Module& module, const std::string& name) {
  const GlobalFunction* global = module.FindFunction(name);
  if (global == nullptr) throw Error(ErrorKind::kInternal, "no @" + name);
  return global->function;
}

// A-normal form, then `pass`.
template <typename Pass>
Function AfterAnf(const std::string& source, Pass pass, const std::string& name = "f") {
  return pass(passes::ToANormalForm(Global(Check(source), name)));
}

int CountCalls(const Expr& root, const std::string& op) {
  int count = 0;
  PostOrderVisit(root, [&](const Expr& expr) {
    const auto* call = As<CallNode>(expr);
    if (call == nullptr) return;
    if (const auto* callee = As<OpNode>(call->callee); callee && callee->name() == op) ++count;
  });
  return count;
}

int CountKind(const Expr& root, NodeKind kind) {
  int count = 0;
  PostOrderVisit(root, [&](const Expr& expr) { count += expr->kind() == kind; });
  return count;
}

// Every operand atomic, every if and match on an atom.
bool InANormalForm(const Expr& root) {
  bool ok = true;
  PostOrderVisit(root, [&](const Expr& expr) {
    switch (expr->kind()) {
      case NodeKind::kCall:
      case NodeKind::kTuple:
      case NodeKind::kTupleGetItem:
      case NodeKind::kRefCreate:
      case NodeKind::kRefRead:
      case NodeKind::kRefWrite:
        for (const Expr& child : ExprChildren(expr)) ok = ok && IsAtomic(*child);
        break;
      case NodeKind::kIf:
        ok = ok && IsAtomic(*As<IfNode>(expr)->condition);
        break;
      case NodeKind::kMatch:
        ok = ok && IsAtomic(*As<MatchNode>(expr)->data);
        break;
      default:
        break;
    }
  });
  return ok;
}

// ---- A-normal form ------------------------------------------------------------

TEST(ANormalFormTest, OperandsBecomeAtomicInEvaluationOrder) {
  Function f = passes::ToANormalForm(Global(Check(R"(
def @f(%x: float32) -> float32 { add(multiply(%x, %x), exp(%x)) }
)"),
                                            "f"));
  EXPECT_TRUE(InANormalForm(f->body));
  // multiply is evaluated first, so it is bound first.
  const auto* first = As<LetNode>(f->body);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(As<OpNode>(As<CallNode>(first->value)->callee)->name(), "multiply");
  // The last expression stays unbound.
  const auto* second = As<LetNode>(first->body);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(As<OpNode>(As<CallNode>(second->body)->callee)->name(), "add");
}

TEST(ANormalFormTest, SharedBindingUsedInBothBranchesIsBoundOnceBeforeTheIf) {
  Function f = passes::ToANormalForm(Global(Check(R"(
def @f(%x: float32, %c: bool) -> float32 {
  %0 = exp(%x);
  if (%c) { %0 } else { negative(%0) }
}
)"),
                                            "f"));
  EXPECT_EQ(CountCalls(f->body, "exp"), 1);
  const auto* let = As<LetNode>(f->body);
  ASSERT_NE(let, nullptr);
  EXPECT_EQ(As<OpNode>(As<CallNode>(let->value)->callee)->name(), "exp");
  EXPECT_NE(As<IfNode>(let->body), nullptr);
}

TEST(ANormalFormTest, SharedBindingUsedInOneBranchStaysInIt) {
  Function f = passes::ToANormalForm(Global(Check(R"(
def @f(%x: float32, %c: bool) -> float32 {
  %0 = exp(%x);
  if (%c) { add(%0, %0) } else { %x }
}
)"),
                                            "f"));
  const auto* branch = As<IfNode>(f->body);
  ASSERT_NE(branch, nullptr);  // nothing bound before the if
  EXPECT_EQ(CountCalls(branch->then_branch, "exp"), 1);
  EXPECT_EQ(CountCalls(branch->else_branch, "exp"), 0);
}

TEST(ANormalFormTest, CallsInTailPositionStayThere) {
  Function f = passes::ToANormalForm(Global(Check(R"(
def @f(%n: int32) -> int32 {
  if (equal(%n, 0)) { 0 } else { @f(subtract(%n, 1)) }
}
)"),
                                            "f"));
  const auto* let = As<LetNode>(f->body);
  ASSERT_NE(let, nullptr);
  const auto* branch = As<IfNode>(let->body);
  ASSERT_NE(branch, nullptr);
  const auto* bound = As<LetNode>(branch->else_branch);
  ASSERT_NE(bound, nullptr);
  const auto* call = As<CallNode>(bound->body);
  ASSERT_NE(call, nullptr);
  EXPECT_NE(As<GlobalVarNode>(call->callee), nullptr);
}

// 200,000 nested operator calls: one expression 200,000 levels deep.
TEST(PassesTest, DeepExpressionsDoNotRecurse) {
  Module module = Check("def @f(%x: float32) -> float32 { negative(%x) }\n");
  Function f = Global(module, "f");
  const auto* call = As<CallNode>(f->body);
  Expr body = f->params[0];
  for (int depth = 0; depth < 200000; ++depth) {
    body = Make<CallNode>(call->callee, std::vector<Expr>{body});
    body->set_checked_type(call->checked_type());
  }
  Function deep = Make<FunctionNode>(f->params, body, f->ret_type);
  Function result = passes::ToANormalForm(deep);
  EXPECT_TRUE(InANormalForm(result->body));
  result = passes::FoldConstants(result);
  result = passes::EliminateCommonSubexpressions(result);
  result = passes::EliminateDeadCode(result);
  EXPECT_EQ(CountCalls(result->body, "negative"), 200000);
  // And the whole pipeline (eta-expansion, fusion, lambda lifting too).
  Module deep_module;
  deep_module.AddFunction(Make<GlobalVarNode>("f"), deep);
  Module optimized = passes::OptimizeForVm(deep_module, nullptr).program;
  EXPECT_EQ(CountCalls(optimized.FindFunction("f")->function->body, "negative"), 200000);
}

// ---- dead code -------------------------------------------------------------------

TEST(DeadCodeTest, UnusedPureBindingsGoAndTakeTheirOperandsWithThem) {
  Function f = AfterAnf(R"(
def @f(%x: float32) -> float32 {
  let %a = exp(%x);
  let %b = add(%a, %a);
  let %t = (%a, %b);
  %x
}
)",
                        passes::EliminateDeadCode);
  EXPECT_EQ(As<VarNode>(f->body), f->params[0].get());
}

TEST(DeadCodeTest, EffectsStay) {
  Function f = AfterAnf(R"(
def @g(%r: ref(int32)) -> int32 { 0 }
def @f(%r: ref(int32)) -> int32 {
  let %u = ref_write(%r, 1);
  let %v = @g(%r);
  let %w = ref_read(%r);
  0
}
)",
                        passes::EliminateDeadCode);
  EXPECT_EQ(CountKind(f->body, NodeKind::kRefWrite), 1);
  EXPECT_EQ(CountKind(f->body, NodeKind::kCall), 1);
  // Reading a reference has no effect, but its value may still change
  // later; an unused read goes.
  EXPECT_EQ(CountKind(f->body, NodeKind::kRefRead), 0);
}

// ---- common subexpressions -----------------------------------------------------

TEST(CommonSubexpressionTest, EqualValuesInOneScopeAreComputedOnce) {
  Function f = AfterAnf(R"(
def @f(%x: float32, %y: float32) -> float32 {
  let %a = add(%x, %y);
  let %b = add(%x, %y);
  let %c = multiply(%a, 2f);
  let %d = multiply(%b, 2f);
  subtract(%c, %d)
}
)",
                        passes::EliminateCommonSubexpressions);
  // %d becomes %c once %b has become %a.
  EXPECT_EQ(CountCalls(f->body, "add"), 1);
  EXPECT_EQ(CountCalls(f->body, "multiply"), 1);
}

TEST(CommonSubexpressionTest, DifferentAttributesOrOperandsAreDifferentValues) {
  Function f = AfterAnf(R"(
def @f(%x: Tensor[(2, 2), float32]) -> Tensor[(2), float32] {
  let %a = sum(%x, axis=[0]);
  let %b = sum(%x, axis=[1]);
  let %c = add(%a, 1f);
  let %d = add(%a, 2f);
  add(add(%a, %b), multiply(%c, %d))
}
)",
                        passes::EliminateCommonSubexpressions);
  EXPECT_EQ(CountCalls(f->body, "sum"), 2);
  EXPECT_EQ(CountCalls(f->body, "add"), 4);
}

TEST(CommonSubexpressionTest, SiblingBranchesDoNotShareButNestedScopesReuse) {
  Function f = AfterAnf(R"(
def @f(%x: float32, %c: bool) -> float32 {
  let %outer = exp(%x);
  let %r = if (%c) { add(exp(%x), log(%x)) } else { log(%x) };
  %r
}
)",
                        passes::EliminateCommonSubexpressions);
  EXPECT_EQ(CountCalls(f->body, "exp"), 1);  // the branch's reuses %outer
  EXPECT_EQ(CountCalls(f->body, "log"), 2);  // one per branch
}

// ---- constant folding ------------------------------------------------------------

const Tensor* OnlyConstant(const Expr& root) {
  const Tensor* found = nullptr;
  int count = 0;
  PostOrderVisit(root, [&](const Expr& expr) {
    if (const auto* constant = As<ConstantNode>(expr)) {
      found = constant->value.get();
      ++count;
    }
  });
  return count == 1 ? found : nullptr;
}

TEST(ConstantFoldingTest, ScalarArithmeticFolds) {
  Function f = AfterAnf("def @f() -> int32 { multiply(add(2, 3), subtract(10, 3)) }\n",
                        passes::FoldConstants);
  const Tensor* value = OnlyConstant(f->body);
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(*value->data<int32_t>(), 35);  // (2 + 3) * (10 - 3)
  EXPECT_EQ(CountKind(f->body, NodeKind::kCall), 0);
}

TEST(ConstantFoldingTest, TensorOperatorsFoldThroughTheKernels) {
  Function f = AfterAnf(R"(
def @f() -> Tensor[(4), float32] {
  nn.relu(subtract(multiply(ones(shape=[4], dtype="float32"), 1.5f), 2f))
}
)",
                        passes::FoldConstants);
  const Tensor* value = OnlyConstant(f->body);
  ASSERT_NE(value, nullptr);
  ASSERT_EQ(value->element_count(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(value->data<float>()[i], 0.0f);  // relu(1.5 - 2)
}

TEST(ConstantFoldingTest, ConstantConditionsChooseTheirBranch) {
  Function f = AfterAnf(R"(
def @f(%x: float32) -> float32 {
  let %big = greater(3, 2);
  if (%big) { exp(%x) } else { log(%x) }
}
)",
                        passes::FoldConstants);
  EXPECT_EQ(CountKind(f->body, NodeKind::kIf), 0);
  EXPECT_EQ(CountCalls(f->body, "exp"), 1);
  EXPECT_EQ(CountCalls(f->body, "log"), 0);
}

TEST(ConstantFoldingTest, FieldsOfKnownTuplesAreTheirFields) {
  Function f = AfterAnf(R"(
def @f(%x: float32) -> float32 {
  let %t = (%x, 2f);
  add(%t.0, %t.1)
}
)",
                        passes::FoldConstants);
  EXPECT_EQ(CountKind(f->body, NodeKind::kTupleGetItem), 0);
}

TEST(ConstantFoldingTest, LargeResultsAreLeftForRunTime) {
  // 4 MiB of zeros stays a call: folding would store it in the executable.
  Function large = AfterAnf(R"(
def @f() -> Tensor[(1024, 1024), float32] { zeros(shape=[1024, 1024], dtype="float32") }
)",
                            passes::FoldConstants);
  EXPECT_EQ(CountCalls(large->body, "zeros"), 1);
  Function small = AfterAnf(R"(
def @f() -> Tensor[(16, 16), float32] { zeros(shape=[16, 16], dtype="float32") }
)",
                            passes::FoldConstants);
  EXPECT_EQ(CountCalls(small->body, "zeros"), 0);
}

// ---- eta-expansion -----------------------------------------------------------------

TEST(EtaExpansionTest, ConstructorsAndGlobalsUsedAsValuesBecomeFunctions) {
  Module module = Check(R"(
def @inc(%x: int32) -> int32 { add(%x, 1) }
def @f(%xs: List[int32]) -> (List[Option[int32]], List[int32]) {
  (@map(Some, %xs), @map(@inc, %xs))
}
)");
  Function f = passes::EtaExpand(Global(module, "f"), module, &compiler::Prelude());
  int literals = 0;
  PostOrderVisit(f->body, [&](const Expr& expr) {
    const auto* call = As<CallNode>(expr);
    if (call == nullptr) return;
    // Constructors and globals remain only as callees.
    for (const Expr& arg : call->args) {
      EXPECT_NE(arg->kind(), NodeKind::kConstructor);
      EXPECT_NE(arg->kind(), NodeKind::kGlobalVar);
      if (const auto* literal = As<FunctionNode>(arg)) {
        ++literals;
        ASSERT_EQ(literal->params.size(), 1u);
        const auto* forward = As<CallNode>(literal->body);
        ASSERT_NE(forward, nullptr);
        EXPECT_EQ(forward->args[0].get(), literal->params[0].get());
      }
    }
  });
  EXPECT_EQ(literals, 2);
}

// ---- tail calls -------------------------------------------------------------------

TEST(TailCallsTest, CallsWhoseValueIsTheResultAreMarked) {
  Function f = Global(Check(R"(
def @g(%x: int32) -> int32 { %x }
def @f(%x: int32, %o: Option[int32]) -> int32 {
  let %y = @g(%x);
  if (equal(%y, 0)) {
    match (%o) {
      Some(%v) => @g(%v),
      None => add(@g(1), 1),
    }
  } else {
    @f(subtract(%x, 1), %o)
  }
}
)"),
                      "f");
  const auto marked = passes::MarkTailCalls(*f);
  // @g(%v) and @f(...) are; @g(%x) (a let's value), @g(1) (an operand)
  // and the operator calls are not.
  std::vector<std::string> names;
  for (const CallNode* call : marked) {
    const auto* global = As<GlobalVarNode>(call->callee);
    ASSERT_NE(global, nullptr);
    names.push_back(global->name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"f", "g"}));
}

// ---- lambda lifting ---------------------------------------------------------------

TEST(LambdaLiftingTest, LiteralsBecomeGlobalsTakingTheirCapturedValues) {
  Module lifted = passes::OptimizeForVm(Check(R"(
def @f(%k: int32, %xs: List[int32]) -> List[int32] {
  let %scale = fn (%x: int32) -> int32 { multiply(%x, %k) };
  let %loop = fn (%n: int32, %acc: int32) -> int32 {
    if (equal(%n, 0)) { %acc } else { %loop(subtract(%n, 1), add(%acc, %k)) }
  };
  @map(%scale, Cons(%loop(3, 0), %xs))
}
)"),
                                        nullptr)
                      .program;
  int closures = 0;
  for (const GlobalFunction& global : lifted.functions()) {
    PostOrderVisit(global.function->body, [&](const Expr& expr) {
      EXPECT_TRUE(expr->kind() != NodeKind::kFunction ||
                  passes::IsPrimitive(*As<FunctionNode>(expr)))
          << "a literal left in @" << global.name->name;
    });
    const int captured = passes::CapturedCount(*global.function);
    if (captured < 0) continue;
    ++closures;
    // Each captures %k alone, as its first parameter.
    EXPECT_EQ(captured, 1) << global.name->name;
    EXPECT_EQ(global.function->params[0]->name_hint, "k");
  }
  EXPECT_EQ(closures, 2);
  // The loop names itself: a call of its own global with its captured
  // parameter, not a capture of itself.
  const GlobalFunction* loop = lifted.FindFunction("f.lambda2");
  ASSERT_NE(loop, nullptr);
  bool self_reference = false;
  PostOrderVisit(loop->function->body, [&](const Expr& expr) {
    const auto* call = As<CallNode>(expr);
    const auto* global = call ? As<GlobalVarNode>(call->callee) : nullptr;
    if (global && global->name == "f.lambda2") {
      ASSERT_EQ(call->args.size(), 1u);
      EXPECT_EQ(call->args[0].get(), loop->function->params[0].get());
      self_reference = true;
    }
  });
  EXPECT_TRUE(self_reference);
}

TEST(LambdaLiftingTest, ForwardingLiteralsAreTheirGlobals) {
  Module lifted = passes::OptimizeForVm(Check(R"(
def @inc(%x: int32) -> int32 { add(%x, 1) }
def @f(%xs: List[int32]) -> List[int32] { @map(@inc, %xs) }
)"),
                                        nullptr)
                      .program;
  // The eta-expanded @inc is @inc again: nothing was lifted.
  EXPECT_EQ(lifted.functions().size(), 2u);
}

// ---- loops: inlining the step, hoisting its projection ---------------------------

// An RNN's shape: a loop over a sequence calling a cell global with the
// step's slice. @cell_loop's global recursion and the closure's are both
// loops.
constexpr char kRnnLoops[] = R"(
def @cell(%x: Tensor[(1, 3), float32], %h: Tensor[(1, 2), float32],
          %w: Tensor[(2, 3), float32], %u: Tensor[(2, 2), float32]) -> Tensor[(1, 2), float32] {
  add(nn.dense(%x, %w), nn.dense(%h, %u))
}
def @f(%seq: Tensor[(?, 1, 3), float32], %w: Tensor[(2, 3), float32],
       %u: Tensor[(2, 2), float32]) -> Tensor[(1, 2), float32] {
  let %loop = fn (%i: int32, %h: Tensor[(1, 2), float32]) -> Tensor[(1, 2), float32] {
    if (less(%i, 4)) {
      let %twice = @cell(take(%seq, %i, axis=0), @cell(take(%seq, %i, axis=0), %h, %w, %u), %w, %u);
      %loop(add(%i, 1), %twice)
    } else { %h }
  };
  @cell(take(%seq, 0, axis=0), %loop(0, zeros(shape=[1, 2], dtype="float32")), %w, %u)
}
def @cell_loop(%seq: Tensor[(?, 1, 3), float32], %i: int32, %h: Tensor[(1, 2), float32],
               %w: Tensor[(2, 3), float32], %u: Tensor[(2, 2), float32]) -> Tensor[(1, 2), float32] {
  if (less(%i, 4)) {
    @cell_loop(%seq, add(%i, 1), @cell(take(%seq, %i, axis=0), %h, %w, %u), %w, %u)
  } else {
    @cell(take(%seq, %i, axis=0), %h, %w, %u)
  }
}
)";

Module InlinedRnnLoops() {
  return passes::InlineCallsInLoops(passes::RewriteFunctions(
      Check(kRnnLoops), [](const Function& function) { return passes::ToANormalForm(function); }));
}

int CountGlobalCalls(const Expr& root, const std::string& name) {
  int count = 0;
  PostOrderVisit(root, [&](const Expr& expr) {
    const auto* call = As<CallNode>(expr);
    const auto* global = call ? As<GlobalVarNode>(call->callee) : nullptr;
    count += global != nullptr && global->name == name;
  });
  return count;
}

TEST(LoopInliningTest, CellsTakingTheStepsSliceAreInlinedIntoLoops) {
  const Module inlined = InlinedRnnLoops();
  const Function f = Global(inlined, "f");
  // Both calls in the closure are gone (the outer one receives the slice
  // too); the call after the loop, outside it, keeps its frame.
  EXPECT_EQ(CountGlobalCalls(f->body, "cell"), 1);
  EXPECT_EQ(CountCalls(f->body, "nn.dense"), 4);
  EXPECT_TRUE(InANormalForm(f->body));
  // Each inlined copy binds variables of its own.
  std::unordered_set<const VarNode*> bound;
  PostOrderVisit(f->body, [&](const Expr& expr) {
    if (const auto* let = As<LetNode>(expr)) {
      EXPECT_TRUE(bound.insert(let->var.get()).second) << let->var->name_hint << " bound twice";
    }
  });
  // A recursive global is a loop too; its tail call of @cell also takes a
  // slice indexed by its parameter.
  EXPECT_EQ(CountGlobalCalls(Global(inlined, "cell_loop")->body, "cell"), 0);
}

TEST(LoopInliningTest, CallsWithoutASliceOrOfUnsuitableCalleesStay) {
  const Module inlined = passes::InlineCallsInLoops(passes::RewriteFunctions(
      Check(R"(
def @scale(%x: Tensor[(1, 3), float32]) -> Tensor[(1, 3), float32] { multiply(%x, 2f) }
def @pick(%x: Tensor[(1, 3), float32], %o: Option[int32]) -> Tensor[(1, 3), float32] {
  match (%o) { Some(%v) => %x, None => multiply(%x, 0f) }
}
def @f(%seq: Tensor[(4, 1, 3), float32]) -> Tensor[(1, 3), float32] {
  let %loop = fn (%i: int32, %acc: Tensor[(1, 3), float32]) -> Tensor[(1, 3), float32] {
    if (less(%i, 4)) {
      let %x = take(%seq, %i, axis=0);
      %loop(add(%i, 1), add(@scale(%acc), @pick(%x, Some(%i))))
    } else { %acc }
  };
  %loop(0, zeros(shape=[1, 3], dtype="float32"))
}
)"),
      [](const Function& function) { return passes::ToANormalForm(function); }));
  const Function f = Global(inlined, "f");
  EXPECT_EQ(CountGlobalCalls(f->body, "scale"), 1);  // no slice: keeps its frame
  EXPECT_EQ(CountGlobalCalls(f->body, "pick"), 1);   // a match: not inlinable
}

// The closure's body: the value of @f's `let %loop`.
const FunctionNode* LoopOf(const Function& f) {
  const FunctionNode* loop = nullptr;
  PostOrderVisit(f->body, [&](const Expr& expr) {
    const auto* let = As<LetNode>(expr);
    if (let != nullptr && let->var->name_hint == "loop") loop = As<FunctionNode>(let->value);
  });
  return loop;
}

TEST(LoopInvariantProjectionTest, EveryStepsProjectionIsOneProductBeforeTheLoop) {
  const Function f = passes::EliminateDeadCode(
      passes::HoistLoopInvariantProjections(Global(InlinedRnnLoops(), "f")));
  const FunctionNode* loop = LoopOf(f);
  ASSERT_NE(loop, nullptr);
  // In the loop: only the hidden state's products; the two slices of the
  // same sequence by the same weight share one projection, taken by row.
  EXPECT_EQ(CountCalls(loop->body, "nn.dense"), 2);
  EXPECT_EQ(CountCalls(loop->body, "take"), 2);
  int projections = 0;
  PostOrderVisit(f->body, [&](const Expr& expr) {
    const auto* let = As<LetNode>(expr);
    const auto* call = let ? As<CallNode>(let->value) : nullptr;
    const auto* op = call ? As<OpNode>(call->callee) : nullptr;
    if (op == nullptr || op->name() != "nn.dense" || call->args[0]->kind() != NodeKind::kVar)
      return;
    if (As<VarNode>(call->args[0])->name_hint != "seq") return;
    ++projections;
    EXPECT_EQ(ir::TypeToString(let->var->checked_type()), "Tensor[(?, 1, 2), float32]");
  });
  EXPECT_EQ(projections, 1);
}

TEST(LoopInvariantProjectionTest, WhatTheLoopChangesOrDoesNotCountStays) {
  const Function f = AfterAnf(R"(
def @f(%seq: Tensor[(4, 4, 3), float32], %w: Tensor[(2, 3), float32]) -> Tensor[(4, 2), float32] {
  let %loop = fn (%i: int32, %v: Tensor[(2, 3), float32], %acc: Tensor[(4, 2), float32]) -> Tensor[(4, 2), float32] {
    if (less(%i, 4)) {
      let %by_state = nn.dense(take(%seq, %i, axis=0), %v);
      let %by_constant_row = nn.dense(take(%seq, 1, axis=0), %w);
      let %by_axis_one = nn.dense(take(%seq, %i, axis=1), %w);
      %loop(add(%i, 1), multiply(%v, 2f), add(%acc, add(%by_state, add(%by_constant_row, %by_axis_one))))
    } else { %acc }
  };
  let %once = fn (%i: int32) -> Tensor[(4, 2), float32] { nn.dense(take(%seq, %i, axis=0), %w) };
  add(%loop(0, %w, zeros(shape=[4, 2], dtype="float32")), %once(1))
}
)",
                              passes::HoistLoopInvariantProjections);
  // A weight the loop passes on changed, a row that is not the step's, a
  // slice along another axis, and a function that is not a loop: nothing
  // moves.
  EXPECT_EQ(CountCalls(f->body, "nn.dense"), 4);
  const FunctionNode* loop = LoopOf(f);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(CountCalls(loop->body, "nn.dense"), 3);
}

// The strided_slice calls under `root`, as (begin, end, axes) lists.
std::vector<std::vector<std::vector<int64_t>>> Slices(const Expr& root) {
  std::vector<std::vector<std::vector<int64_t>>> slices;
  PostOrderVisit(root, [&](const Expr& expr) {
    const auto* call = As<CallNode>(expr);
    const auto* op = call ? As<OpNode>(call->callee) : nullptr;
    if (op == nullptr || op->name() != "strided_slice") return;
    std::vector<std::vector<int64_t>> lists(3);
    for (const auto& [name, value] : call->attrs) {
      if (name == "begin") lists[0] = value.as_int_list();
      if (name == "end") lists[1] = value.as_int_list();
      if (name == "axes") lists[2] = value.as_int_list();
    }
    slices.push_back(lists);
  });
  std::sort(slices.begin(), slices.end());
  return slices;
}

TEST(SplitToSlicesTest, ProjectionsBecomeSlicesOfTheSplitsOperand) {
  const Function f = AfterAnf(R"(
def @f(%x: Tensor[(2, 8), float32]) -> Tensor[(2, 3), float32] {
  let %parts = split(%x, indices_or_sections=[3, 5], axis=-1);
  add(%parts.0, multiply(%parts.2, sum(%parts.1, axis=[1], keepdims=True)))
}
)",
                              passes::SplitsToSlices);
  EXPECT_EQ(CountCalls(f->body, "split"), 0);
  EXPECT_EQ(CountKind(f->body, NodeKind::kTupleGetItem), 0);
  // Parts of 3, 2 and 3 columns along axis 1 (given as -1).
  const std::vector<std::vector<std::vector<int64_t>>> expected = {
      {{0}, {3}, {1}}, {{3}, {5}, {1}}, {{5}, {8}, {1}}};
  EXPECT_EQ(Slices(f->body), expected);
  // Each slice is typed as its part was.
  std::vector<std::vector<int64_t>> shapes;
  PostOrderVisit(f->body, [&](const Expr& expr) {
    const auto* call = As<CallNode>(expr);
    const auto* op = call ? As<OpNode>(call->callee) : nullptr;
    if (op == nullptr || op->name() != "strided_slice") return;
    const auto* type = As<TensorTypeNode>(expr->checked_type());
    ASSERT_NE(type, nullptr);
    shapes.push_back(type->shape);
  });
  std::sort(shapes.begin(), shapes.end());
  const std::vector<std::vector<int64_t>> expected_shapes = {{2, 2}, {2, 3}, {2, 3}};
  EXPECT_EQ(shapes, expected_shapes);
  // Every node the rewrite rebuilt keeps its type: the code generator reads them.
  PostOrderVisit(f->body, [](const Expr& expr) {
    if (expr->kind() == NodeKind::kOp) return;
    EXPECT_TRUE(expr->checked_type()) << "an untyped node of kind " << int(expr->kind());
  });
}

TEST(SplitToSlicesTest, ATupleUsedWholeOrOfUnknownPartsStays) {
  const Function whole = AfterAnf(R"(
def @f(%x: Tensor[(4, 2), float32]) -> ((Tensor[(2, 2), float32], Tensor[(2, 2), float32]), Tensor[(2, 2), float32]) {
  let %parts = split(%x, indices_or_sections=2, axis=0);
  (%parts, %parts.1)
}
)",
                                  passes::SplitsToSlices);
  EXPECT_EQ(CountCalls(whole->body, "split"), 1);
  EXPECT_TRUE(Slices(whole->body).empty());
  const Function unknown = AfterAnf(R"(
def @f(%x: Tensor[(?, 2), float32]) -> Tensor[(?, 2), float32] {
  let %parts = split(%x, indices_or_sections=2, axis=0);
  %parts.0
}
)",
                                    passes::SplitsToSlices);
  EXPECT_EQ(CountCalls(unknown->body, "split"), 1);
}

TEST(SimplifyBatchNormTest, AProjectedBatchNormBecomesAScaleAndShift) {
  const Function f = AfterAnf(R"(
def @f(%x: Tensor[(1, 4, 5, 5), float32], %g: Tensor[(4), float32], %b: Tensor[(4), float32],
       %m: Tensor[(4), float32], %v: Tensor[(4), float32]) -> Tensor[(1, 4, 5, 5), float32] {
  let %bn = nn.batch_norm(%x, %g, %b, %m, %v, epsilon=0.001f);
  nn.relu(%bn.0)
}
)",
                              passes::SimplifyBatchNorm);
  EXPECT_EQ(CountCalls(f->body, "nn.batch_norm"), 0);
  EXPECT_EQ(CountCalls(f->body, "rsqrt"), 1);
  // The channel vectors broadcast along the two axes after the channel's.
  EXPECT_EQ(CountCalls(f->body, "expand_dims"), 2);
  EXPECT_EQ(CountCalls(f->body, "nn.relu"), 1);
  // Without centre or scale, beta or gamma is not read.
  const Function bare = AfterAnf(R"(
def @f(%x: Tensor[(3, 4), float32], %g: Tensor[(4), float32], %b: Tensor[(4), float32],
       %m: Tensor[(4), float32], %v: Tensor[(4), float32]) -> Tensor[(3, 4), float32] {
  let %bn = nn.batch_norm(%x, %g, %b, %m, %v, axis=1, center=False, scale=False);
  %bn.0
}
)",
                                 passes::SimplifyBatchNorm);
  EXPECT_EQ(CountCalls(bare->body, "negative"), 1);
  EXPECT_EQ(CountCalls(bare->body, "expand_dims"), 0);
  std::unordered_set<const VarNode*> read;
  PostOrderVisit(bare->body, [&](const Expr& expr) {
    if (const auto* var = As<VarNode>(expr)) read.insert(var);
  });
  EXPECT_EQ(read.count(bare->params[1].get()), 0u);
  EXPECT_EQ(read.count(bare->params[2].get()), 0u);
}

TEST(SimplifyBatchNormTest, ABatchNormWhoseStatisticsAreUsedStays) {
  const Function f = AfterAnf(R"(
def @f(%x: Tensor[(2, 4), float32], %g: Tensor[(4), float32], %b: Tensor[(4), float32],
       %m: Tensor[(4), float32], %v: Tensor[(4), float32]) -> Tensor[(4), float32] {
  let %bn = nn.batch_norm(%x, %g, %b, %m, %v);
  add(sum(%bn.0, axis=[0]), %bn.1)
}
)",
                              passes::SimplifyBatchNorm);
  EXPECT_EQ(CountCalls(f->body, "nn.batch_norm"), 1);
}

// The primitive functions (fused kernels) under `root`, and the operator
// calls outside them.
int CountPrimitives(const Expr& root) {
  int count = 0;
  PostOrderVisit(root, [&](const Expr& expr) {
    const auto* function = As<FunctionNode>(expr);
    if (function != nullptr && passes::IsPrimitive(*function)) ++count;
  });
  return count;
}
int CountCallsOutsidePrimitives(const Expr& root, const std::string& op) {
  int count = CountCalls(root, op);
  PostOrderVisit(root, [&](const Expr& expr) {
    const auto* function = As<FunctionNode>(expr);
    if (function != nullptr && passes::IsPrimitive(*function)) {
      count -= CountCalls(function->body, op);
    }
  });
  return count;
}

TEST(FuseOperatorsTest, ASmallValueUsedTwiceJoinsItsUsersKernel) {
  const Function f = AfterAnf(R"(
def @f(%x: Tensor[(4, 8), float32], %w: Tensor[(16, 8), float32]) -> Tensor[(4, 16), float32] {
  let %gate = sigmoid(nn.dense(%x, %w));
  multiply(%gate, add(%gate, 1f))
}
)",
                              passes::FuseOperators);
  // One kernel evaluates the gate twice per element; the dense, which no
  // kernel computes twice, is a kernel of its own.
  EXPECT_EQ(CountPrimitives(f->body), 1);
  EXPECT_EQ(CountCallsOutsidePrimitives(f->body, "nn.dense"), 1);
  EXPECT_EQ(CountCallsOutsidePrimitives(f->body, "sigmoid"), 0);
  EXPECT_EQ(CountCallsOutsidePrimitives(f->body, "multiply"), 0);
}

TEST(FuseOperatorsTest, ALargeValueUsedTwiceIsComputedOnce) {
  const Function f = AfterAnf(R"(
def @f(%x: Tensor[(64, 8), float32], %w: Tensor[(64, 8), float32]) -> Tensor[(64, 64), float32] {
  let %gate = sigmoid(nn.dense(%x, %w));
  multiply(%gate, add(%gate, 1f))
}
)",
                              passes::FuseOperators);
  // 4096 elements: the dense and its sigmoid make one kernel, the rest
  // another that reads the gate.
  EXPECT_EQ(CountPrimitives(f->body), 2);
  EXPECT_EQ(CountCallsOutsidePrimitives(f->body, "nn.dense"), 0);
  EXPECT_EQ(CountCalls(f->body, "sigmoid"), 1);
}

TEST(FuseOperatorsTest, RepeatedEvaluationIsBoundedAndNeverOfAnAnchor) {
  // Each value is used twice by the next: evaluating v1 inside v6's kernel
  // would take 32 evaluations per element.
  const Function doubling = AfterAnf(R"(
def @f(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  let %v1 = add(%x, %x);
  let %v2 = add(%v1, %v1);
  let %v3 = add(%v2, %v2);
  let %v4 = add(%v3, %v3);
  let %v5 = add(%v4, %v4);
  add(%v5, %v5)
}
)",
                                     passes::FuseOperators);
  EXPECT_EQ(CountPrimitives(doubling->body), 2);
  const Function anchor = AfterAnf(R"(
def @f(%x: Tensor[(4, 8), float32], %w: Tensor[(16, 8), float32]) -> Tensor[(4, 16), float32] {
  let %d = nn.dense(%x, %w);
  multiply(%d, %d)
}
)",
                                   passes::FuseOperators);
  EXPECT_EQ(CountPrimitives(anchor->body), 0);
  EXPECT_EQ(CountCallsOutsidePrimitives(anchor->body, "nn.dense"), 1);
  // Scalars stay apart: the VM computes their arithmetic without a kernel.
  const Function scalar = AfterAnf(R"(
def @f(%x: float32) -> float32 {
  let %y = add(%x, 1f);
  multiply(%y, %y)
}
)",
                                   passes::FuseOperators);
  EXPECT_EQ(CountPrimitives(scalar->body), 0);
}

TEST(FuseOperatorsTest, AnAnchorsEpilogueIsPointwise) {
  // The relu may follow the dense into its kernel; the transpose after it
  // moves elements, so it takes the relu, and the dense stays alone.
  const Function f = AfterAnf(R"(
def @f(%x: Tensor[(4, 8), float32], %w: Tensor[(16, 8), float32]) -> Tensor[(16, 4), float32] {
  transpose(nn.relu(nn.dense(%x, %w)))
}
)",
                              passes::FuseOperators);
  EXPECT_EQ(CountPrimitives(f->body), 1);
  EXPECT_EQ(CountCallsOutsidePrimitives(f->body, "nn.dense"), 1);
  EXPECT_EQ(CountCallsOutsidePrimitives(f->body, "nn.relu"), 0);
}

TEST(FuseOperatorsTest, AConstantPadEndsAnAnchorsGroup) {
  // The convolution's schedule stores its relu'd elements at their padded
  // positions: one kernel, directly after the convolution too.
  const Function padded = AfterAnf(R"(
def @f(%x: Tensor[(1, 8, 12, 12), float32], %w: Tensor[(16, 8, 3, 3), float32],
       %v: Tensor[(16, 16, 3, 3), float32]) -> Tensor[(1, 16, 10, 12), float32] {
  let %y = nn.pad(nn.relu(nn.conv2d(%x, %w)), 0f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]]);
  nn.pad(nn.conv2d(%y, %v), 0f, pad_width=[[0, 0], [0, 0], [0, 0], [2, 0]])
}
)",
                                   passes::FuseOperators);
  EXPECT_EQ(CountPrimitives(padded->body), 2);
  EXPECT_EQ(CountCallsOutsidePrimitives(padded->body, "nn.conv2d"), 0);
  EXPECT_EQ(CountCallsOutsidePrimitives(padded->body, "nn.pad"), 0);
  // An edge pad moves elements the schedule does not store (a border
  // repeats them): the relu joins the pad, the convolution stays alone.
  const Function edge = AfterAnf(R"(
def @f(%x: Tensor[(1, 8, 12, 12), float32], %w: Tensor[(16, 8, 3, 3), float32]) -> Tensor[(1, 16, 12, 12), float32] {
  nn.pad(nn.relu(nn.conv2d(%x, %w)), 0f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]], pad_mode="edge")
}
)",
                                 passes::FuseOperators);
  EXPECT_EQ(CountPrimitives(edge->body), 1);
  EXPECT_EQ(CountCallsOutsidePrimitives(edge->body, "nn.conv2d"), 1);
  EXPECT_EQ(CountCallsOutsidePrimitives(edge->body, "nn.pad"), 0);
}

// The pad_width of the only nn.pad under `root`, and its type's shape.
std::pair<std::vector<std::vector<int64_t>>, std::vector<int64_t>> OnlyPad(const Expr& root) {
  std::pair<std::vector<std::vector<int64_t>>, std::vector<int64_t>> result;
  int pads = 0;
  PostOrderVisit(root, [&](const Expr& expr) {
    const auto* call = As<CallNode>(expr);
    const auto* op = call ? As<OpNode>(call->callee) : nullptr;
    if (op == nullptr || op->name() != "nn.pad") return;
    ++pads;
    for (const auto& [name, value] : call->attrs) {
      if (name != "pad_width") continue;
      for (const kernels::AttrValue& axis : value.as_list())
        result.first.push_back(axis.as_int_list());
    }
    result.second = As<TensorTypeNode>(expr->checked_type())->shape;
  });
  EXPECT_EQ(pads, 1);
  return result;
}

// The padding attribute of every nn.conv2d under `root`.
std::vector<std::vector<int64_t>> ConvolutionPaddings(const Expr& root) {
  std::vector<std::vector<int64_t>> paddings;
  PostOrderVisit(root, [&](const Expr& expr) {
    const auto* call = As<CallNode>(expr);
    const auto* op = call ? As<OpNode>(call->callee) : nullptr;
    if (op == nullptr || op->name() != "nn.conv2d") return;
    for (const auto& [name, value] : call->attrs) {
      if (name == "padding") paddings.push_back(value.as_int_list());
    }
  });
  return paddings;
}

TEST(PadConvolutionsTest, PaddingMovesIntoAPadOfTheInput) {
  // padding is (top, left, bottom, right); the pad widths follow the data
  // layout's H and W axes.
  const Function f = AfterAnf(R"(
def @f(%x: Tensor[(1, 3, 7, 9), float32], %w: Tensor[(4, 3, 3, 3), float32]) -> Tensor[(1, 4, 6, 10), float32] {
  let %y = nn.conv2d(%x, %w, padding=[1, 2, 0, 1]);
  nn.relu(%y)
}
)",
                              passes::PadConvolutionInputs);
  const auto [widths, shape] = OnlyPad(f->body);
  const std::vector<std::vector<int64_t>> expected_widths = {{0, 0}, {0, 0}, {1, 0}, {2, 1}};
  EXPECT_EQ(widths, expected_widths);
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 3, 8, 12}));
  EXPECT_EQ(ConvolutionPaddings(f->body), (std::vector<std::vector<int64_t>>{{0, 0, 0, 0}}));
  // The chain stays flat, and every rebuilt node typed.
  EXPECT_TRUE(InANormalForm(f->body));
  PostOrderVisit(f->body, [](const Expr& expr) {
    if (expr->kind() == NodeKind::kOp) return;
    EXPECT_TRUE(expr->checked_type()) << "an untyped node of kind " << int(expr->kind());
  });

  const Function nhwc = AfterAnf(R"(
def @f(%x: Tensor[(1, 7, 9, 3), float32], %w: Tensor[(4, 3, 3, 3), float32]) -> Tensor[(1, 7, 9, 4), float32] {
  nn.conv2d(%x, %w, padding=[1, 1], data_layout="NHWC")
}
)",
                                 passes::PadConvolutionInputs);
  const std::vector<std::vector<int64_t>> nhwc_widths = {{0, 0}, {1, 1}, {1, 1}, {0, 0}};
  EXPECT_EQ(OnlyPad(nhwc->body).first, nhwc_widths);
}

TEST(PadConvolutionsTest, DepthwiseUnpaddedHalfAndUnknownShapesStay) {
  for (
      const char* source :
      {// depthwise: its own schedule pads planes itself
       R"(def @f(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 1, 3, 3), float32]) -> Tensor[(1, 4, 8, 8), float32] {
  nn.conv2d(%x, %w, padding=[1, 1], groups=4)
})",
       // nothing to pad
       R"(def @f(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32]) -> Tensor[(1, 4, 6, 6), float32] {
  nn.conv2d(%x, %w)
})",
       // float16 keeps the naive schedule, which tests the border itself
       R"(def @f(%x: Tensor[(1, 4, 8, 8), float16], %w: Tensor[(4, 4, 3, 3), float16]) -> Tensor[(1, 4, 8, 8), float16] {
  nn.conv2d(%x, %w, padding=[1, 1])
})",
       // an unknown extent
       R"(def @f(%x: Tensor[(?, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32]) -> Tensor[(?, 4, 8, 8), float32] {
  nn.conv2d(%x, %w, padding=[1, 1])
})"}) {
    const Function f = AfterAnf(source, passes::PadConvolutionInputs);
    EXPECT_EQ(CountCalls(f->body, "nn.pad"), 0) << source;
  }
}

}  // namespace
}  // namespace relay

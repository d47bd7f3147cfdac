// The reference evaluator on small Relay programs. Every expected result was
// derived by hand from Relay's semantics (the tensor cases use small whole
// numbers, so their arithmetic is exact and checked by hand), never by
// running the evaluator.
#include "compiler/evaluator/reference_evaluator.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "relay/value.h"

namespace relay::evaluator {
namespace {

constexpr const char* kFile = "test.relay";

ir::Module Check(const std::string& source) {
  Diagnostics diagnostics(kFile, std::make_shared<const std::string>(source));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) ADD_FAILURE() << diagnostics.FormatAll();
  return module;
}

// Evaluates @entry of `source` and prints the result with the evaluator's names.
std::string Evaluated(const std::string& source, std::vector<Value> arguments = {},
                      const EvaluationOptions& options = {}, const std::string& entry = "main") {
  ir::Module module = Check(source);
  Value result = Evaluate(module, entry, arguments, options);
  return FormatValue(result, PrintOptionsFor(module));
}

// The error Evaluate throws on `source`; fails the test if it returns.
Error RunError(const std::string& source, std::vector<Value> arguments = {},
               const EvaluationOptions& options = {}, const std::string& entry = "main") {
  ir::Module module = Check(source);
  try {
    Value result = Evaluate(module, entry, arguments, options);
    ADD_FAILURE() << "expected an error, got " << FormatValue(result, PrintOptionsFor(module));
  } catch (const Error& error) {
    return error;
  }
  return Error(ErrorKind::kInternal, "no error");
}

template <typename T>
Value Scalar(T value) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {}, *DTypeOf<T>());
  *tensor->data<T>() = value;
  return tensor;
}

Value FloatTensor(Shape shape, const std::vector<float>& elements) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), std::move(shape), DType::kFloat32);
  EXPECT_EQ(static_cast<size_t>(tensor->element_count()), elements.size());
  for (size_t index = 0; index < elements.size(); ++index)
    tensor->data<float>()[index] = elements[index];
  return tensor;
}

// ---- programs without arguments, with their printed results ----------------

struct ProgramCase {
  const char* name;
  const char* source;
  const char* expected;
};

void PrintTo(const ProgramCase& program, std::ostream* out) {
  *out << program.name;
}

const ProgramCase kPrograms[] = {
    {"ScalarArithmetic", R"(
def @main() -> int32 { 1 + 2 * 3 - 4 }
)",
     "3"},
    {"FloatArithmetic", R"(
def @main() -> float32 { 2.5f * 2f + 0.5f }
)",
     "5.5f"},
    {"DtypesAndComparisons", R"(
def @main() { (7i64 / 2i64, 7 == 7, 3 < 2, 1.5f64 + 1f64) }
)",
     "(3i64, True, False, 2.5f64)"},
    {"IntegerDivisionAndModulo", R"(
def @main() { (17 / 5, mod(17, 5), 0 - 17 / 5) }
)",
     "(3, 2, -3)"},
    {"LetAndIf", R"(
def @main() -> int32 {
  let %x = 5;
  if (%x > 3) { %x * 10 } else { 0 }
}
)",
     "50"},
    {"LetShadowing", R"(
def @main() -> int32 {
  let %x = 1;
  let %x = %x + 1;
  %x * 10
}
)",
     "20"},
    {"IfChains", R"(
def @sign(%n: int32) -> int32 {
  if (%n < 0) { -1 } else { if (%n == 0) { 0 } else { 1 } }
}
def @main() { (@sign(-5), @sign(0), @sign(7)) }
)",
     "(-1, 0, 1)"},
    {"ClosureMakeAdder", R"(
def @make_adder(%n: int32) -> fn (int32) -> int32 {
  fn (%x: int32) -> int32 { %x + %n }
}
def @main() -> int32 {
  let %add5 = @make_adder(5);
  let %add7 = @make_adder(7);
  %add5(%add7(1))
}
)",
     "13"},
    {"ClosureCapturesByValue", R"(
def @main() -> (int32, int32) {
  let %cell = ref(1);
  let %v = ref_read(%cell);
  let %f = fn () -> int32 { %v };
  let %ignored = ref_write(%cell, 5);
  (%f(), ref_read(%cell))
}
)",
     "(1, 5)"},
    {"ClosureSharesReference", R"(
def @main() -> int32 {
  let %cell = ref(1);
  let %f = fn () -> int32 { ref_read(%cell) };
  let %ignored = ref_write(%cell, 5);
  %f()
}
)",
     "5"},
    {"CurriedClosures", R"(
def @main() -> int32 {
  let %add = fn (%a: int32) -> fn (int32) -> fn (int32) -> int32 {
    fn (%b: int32) -> fn (int32) -> int32 { fn (%c: int32) -> int32 { %a * 100 + %b * 10 + %c } }
  };
  %add(1)(2)(3)
}
)",
     "123"},
    {"MapSquares", R"(
def @main() -> List[int32] {
  @map(fn (%x: int32) -> int32 { %x * %x }, Cons(1, Cons(2, Cons(3, Nil))))
}
)",
     "Cons(1, Cons(4, Cons(9, Nil)))"},
    {"FoldlIsLeftAssociative", R"(
def @main() -> int32 {
  @foldl(fn (%acc: int32, %x: int32) -> int32 { %acc - %x }, 100, Cons(1, Cons(2, Cons(3, Nil))))
}
)",
     "94"},
    {"FoldrIsRightAssociative", R"(
def @main() -> int32 {
  @foldr(fn (%x: int32, %acc: int32) -> int32 { %x - %acc }, 0, Cons(1, Cons(2, Cons(3, Nil))))
}
)",
     "2"},
    {"Compose", R"(
def @main() -> (int32, int32) {
  let %inc = fn (%x: int32) -> int32 { %x + 1 };
  let %double = fn (%x: int32) -> int32 { %x * 2 };
  (@compose(%inc, %double)(5), @compose(%double, %inc)(5))
}
)",
     "(11, 12)"},
    {"Iterate", R"(
def @main() -> int32 {
  @iterate(fn (%x: int32) -> int32 { %x * 3 }, 4)(1)
}
)",
     "81"},
    {"PreludeListFunctions", R"(
def @main() {
  let %xs = Cons(1, Cons(2, Cons(3, Nil)));
  (@length(%xs), @rev(%xs), @sum(%xs), @nth(%xs, 2), @hd(%xs), @tl(%xs))
}
)",
     "(3, Cons(3, Cons(2, Cons(1, Nil))), 6, 3, 1, Cons(2, Cons(3, Nil)))"},
    {"FilterAndConcat", R"(
def @main() -> List[int32] {
  @filter(fn (%x: int32) -> bool { mod(%x, 2) == 0 },
          @concat(Cons(1, Cons(2, Nil)), Cons(3, Cons(4, Nil))))
}
)",
     "Cons(2, Cons(4, Nil))"},
    {"ZipDropsTheLongerTail", R"(
def @main() -> List[(int32, bool)] {
  @zip(Cons(1, Cons(2, Nil)), Cons(True, Nil))
}
)",
     "Cons((1, True), Nil)"},
    {"AdtExpressionEvaluator", R"(
type Expr {
  Num(int32),
  Add(Expr, Expr),
  Mul(Expr, Expr),
  Neg(Expr),
}
def @eval(%e: Expr) -> int32 {
  match (%e) {
    Num(%n) => %n,
    Add(%a, %b) => @eval(%a) + @eval(%b),
    Mul(%a, %b) => @eval(%a) * @eval(%b),
    Neg(%a) => 0 - @eval(%a),
  }
}
def @main() -> int32 { @eval(Add(Num(2), Mul(Num(3), Neg(Num(4))))) }
)",
     "-10"},
    {"NestedPatternsAndWildcards", R"(
type Expr {
  Num(int32),
  Add(Expr, Expr),
  Mul(Expr, Expr),
  Neg(Expr),
}
def @simplify(%e: Expr) -> Expr {
  match (%e) {
    Neg(Neg(%x)) => %x,
    Mul(Num(%a), Num(%b)) => Num(%a * %b),
    Add(_, Mul(_, _)) => Num(-1),
    _ => %e,
  }
}
def @main() {
  (@simplify(Neg(Neg(Num(5)))), @simplify(Mul(Num(6), Num(7))),
   @simplify(Add(Num(1), Mul(Num(2), Num(3)))), @simplify(Neg(Num(1))),
   @simplify(Mul(Num(1), Neg(Num(2)))))
}
)",
     "(Num(5), Num(42), Num(-1), Neg(Num(1)), Mul(Num(1), Neg(Num(2))))"},
    {"ClauseOrderMatters", R"(
def @classify(%xs: List[int32]) -> int32 {
  match (%xs) {
    Cons(%x, Cons(%y, _)) => %x + %y,
    Cons(%x, _) => %x,
    _ => -1,
  }
}
def @main() { (@classify(Cons(3, Cons(4, Cons(100, Nil)))), @classify(Cons(9, Nil)), @classify(Nil)) }
)",
     "(7, 9, -1)"},
    {"TuplePatterns", R"(
def @both(%a: Option[int32], %b: Option[int32]) -> Option[(int32, int32)] {
  match ((%a, %b)) {
    (Some(%x), Some(%y)) => Some((%x, %y)),
    _ => None,
  }
}
def @main() { (@both(Some(1), Some(2)), @both(Some(1), None), @both(None, Some(2))) }
)",
     "(Some((1, 2)), None, None)"},
    {"NestedTuplePatterns", R"(
def @pick(%value: ((int32, int32), bool)) -> int32 {
  match (%value) {
    ((%first, %second), %take_first) => if (%take_first) { %first } else { %second },
  }
}
def @swap(%pair: (int32, float32)) -> (float32, int32) {
  match (%pair) {
    (%i, %f) => (%f, %i),
  }
}
def @main() { (@pick(((1, 2), True)), @pick(((1, 2), False)), @swap((4, 0.5f))) }
)",
     "(1, 2, (0.5f, 4))"},
    {"LetRecFactorial", R"(
def @main() -> int32 {
  let %factorial = fn (%k: int32) -> int32 {
    if (%k <= 1) { 1 } else { %k * %factorial(%k - 1) }
  };
  %factorial(10)
}
)",
     "3628800"},
    {"LetRecInsideClosure", R"(
def @main() -> int32 {
  let %sum_below = fn (%limit: int32) -> int32 {
    let %loop = fn (%i: int32, %acc: int32) -> int32 {
      if (%i >= %limit) { %acc } else { %loop(%i + 1, %acc + %i) }
    };
    %loop(0, 0)
  };
  %sum_below(5) * 100 + %sum_below(3)
}
)",
     "1003"},
    {"Fibonacci", R"(
def @fib(%n: int32) -> int32 {
  if (%n < 2) { %n } else { @fib(%n - 1) + @fib(%n - 2) }
}
def @main() -> int32 { @fib(15) }
)",
     "610"},
    {"MutualRecursion", R"(
def @main() { (@is_even(10), @is_odd(7), @is_even(7)) }
def @is_even(%n: int32) -> bool { if (%n == 0) { True } else { @is_odd(%n - 1) } }
def @is_odd(%n: int32) -> bool { if (%n == 0) { False } else { @is_even(%n - 1) } }
)",
     "(True, True, False)"},
    {"MutualRecursionOverTrees", R"(
def @tree_sum(%t: Tree[int32]) -> int32 {
  match (%t) {
    Rose(%v, %kids) => %v + @forest_sum(%kids),
  }
}
def @forest_sum(%f: List[Tree[int32]]) -> int32 {
  match (%f) {
    Cons(%t, %rest) => @tree_sum(%t) + @forest_sum(%rest),
    Nil => 0,
  }
}
def @main() -> int32 {
  @tree_sum(Rose(1, Cons(Rose(2, Nil), Cons(Rose(3, Cons(Rose(4, Nil), Nil)), Nil))))
}
)",
     "10"},
    {"ReferenceCounter", R"(
def @main() -> int32 {
  let %counter = ref(0);
  let %ignored = ref_write(%counter, ref_read(%counter) + 1);
  let %unit: () = ref_write(%counter, ref_read(%counter) + 10);
  ref_read(%counter)
}
)",
     "11"},
    {"ReferenceSwap", R"(
def @swap_refs[A](%a: ref(A), %b: ref(A)) -> () {
  let %saved = ref_read(%a);
  let %ignored = ref_write(%a, ref_read(%b));
  ref_write(%b, %saved)
}
def @main() {
  let %x = ref(1);
  let %y = ref(2);
  let %unit = @swap_refs(%x, %y);
  (ref_read(%x), ref_read(%y), %unit, %x)
}
)",
     "(2, 1, (), ref(2))"},
    {"CounterClosures", R"(
def @make_counter() -> fn () -> int32 {
  let %count = ref(0);
  fn () -> int32 {
    let %ignored = ref_write(%count, ref_read(%count) + 1);
    ref_read(%count)
  }
}
def @main() {
  let %next = @make_counter();
  let %a = %next();
  let %b = %next();
  let %other = @make_counter();
  let %c = %other();
  (%a, %b, %next(), %c)
}
)",
     "(1, 2, 3, 1)"},
    {"ReferenceToList", R"(
def @main() -> List[int32] {
  let %stack = ref(Nil);
  let %push = fn (%x: int32) -> () { ref_write(%stack, Cons(%x, ref_read(%stack))) };
  let %a = %push(1);
  let %b = %push(2);
  let %c = %push(3);
  ref_read(%stack)
}
)",
     "Cons(3, Cons(2, Cons(1, Nil)))"},
    {"EvaluationIsLeftToRight", R"(
def @bump(%cell: ref(int32)) -> int32 {
  let %ignored = ref_write(%cell, ref_read(%cell) * 10 + 1);
  ref_read(%cell)
}
def @main() {
  let %cell = ref(0);
  let %pair = fn (%a: int32, %b: int32) -> (int32, int32) { (%a, %b) };
  (%pair(@bump(%cell), @bump(%cell)), @bump(%cell), Cons(@bump(%cell), Nil))
}
)",
     "((1, 11), 111, Cons(1111, Nil))"},
    {"Polymorphism", R"(
def @identity[A](%x: A) -> A { %x }
def @main() { (@identity(1), @identity(True), @identity(Cons(2f, Nil)), @identity(@identity)(7)) }
)",
     "(1, True, Cons(2f, Nil), 7)"},
    {"PolymorphicAdtFunction", R"(
def @option_map[A, B](%f: fn (A) -> B, %o: Option[A]) -> Option[B] {
  match (%o) {
    Some(%x) => Some(%f(%x)),
    None => None,
  }
}
def @main() {
  let %positive = fn (%x: int32) -> bool { %x > 0 };
  (@option_map(%positive, Some(3)), @option_map(%positive, None), @option_map(%positive, Some(-3)))
}
)",
     "(Some(True), None, Some(False))"},
    {"TuplesAndProjections", R"(
def @main() {
  let %t = (1, (2.5f, True), 3i64);
  (%t.1.0, %t.2, %t.1, (5,), ())
}
)",
     "(2.5f, 3i64, (2.5f, True), (5,), ())"},
    {"TupleProjectionOfCalls", R"(
def @divide_with_remainder(%a: int32, %b: int32) -> (int32, int32) {
  (%a / %b, mod(%a, %b))
}
def @main() -> int32 {
  %0 = @divide_with_remainder(47, 5);
  %0.0 * 100 + %0.1
}
)",
     "902"},
    {"ConstructorsAsValues", R"(
def @main() -> (List[Option[int32]], List[bool], fn (int32) -> Option[int32], Option[int32]) {
  let %wrap: fn (int32) -> Option[int32] = Some;
  (@map(Some, Cons(1, Cons(2, Nil))), @foldr(Cons, Nil, Cons(True, Cons(False, Nil))), %wrap,
   %wrap(3))
}
)",
     "(Cons(Some(1), Cons(Some(2), Nil)), Cons(True, Cons(False, Nil)), <closure Some>, Some(3))"},
    {"GlobalsAsValues", R"(
def @double(%x: int32) -> int32 { %x * 2 }
def @identity[A](%x: A) -> A { %x }
def @main() {
  %0 = (@double, 21);
  (@map(@double, Cons(1, Nil)), @map(@identity, Cons(True, Nil)), %0.0(%0.1), @double)
}
)",
     "(Cons(2, Nil), Cons(True, Nil), 42, <closure @double>)"},
    {"ClosuresPrintTheirFunctions", R"(
def @main() {
  let %named = fn (%x: int32) -> int32 { %named(%x) };
  (%named, fn (%y: int32) -> int32 { %y })
}
)",
     "(<closure @main.%named>, <closure @main.fn:4:12>)"},
    {"PreludeClosuresPrintTheirFunctions", R"(
def @double(%x: int32) -> int32 { %x * 2 }
def @main() -> (fn (int32) -> int32, int32) {
  let %quadruple = @compose(@double, @double);
  (%quadruple, %quadruple(5))
}
)",
     // The literal inside @compose, at compiler/prelude/prelude.relay:105:3.
     "(<closure @compose.fn:105:3>, 20)"},
    {"ClosuresInDataStructures", R"(
def @main() -> List[int32] {
  let %adders = @map(fn (%n: int32) -> fn (int32) -> int32 { fn (%x: int32) -> int32 { %x + %n } },
                     Cons(1, Cons(10, Cons(100, Nil))));
  @map(fn (%f: fn (int32) -> int32) -> int32 { %f(5) }, %adders)
}
)",
     "Cons(6, Cons(15, Cons(105, Nil)))"},
    {"ProgramShadowsPrelude", R"(
type List[A] {
  Cons(A, List[A]),
  Nil,
}
def @length[A](%xs: List[A]) -> int64 {
  match (%xs) {
    Cons(_, %rest) => 1i64 + @length(%rest),
    Nil => 0i64,
  }
}
def @main() { (@length(Cons(1, Cons(2, Nil))), Cons(5, Nil)) }
)",
     "(2i64, Cons(5, Nil))"},
    {"SharedGraphBindingRunsOnce", R"(
def @main() -> (int32, ((), ())) {
  let %cell = ref(0);
  %0 = ref_write(%cell, ref_read(%cell) + 1);
  let %pair = (%0, %0);
  (ref_read(%cell), %pair)
}
)",
     "(1, ((), ()))"},
    {"TensorsFromOperators", R"(
def @main() {
  (ones(shape=[2, 2], dtype="float32") + 1.5f, zeros(shape=[3], dtype="int32"),
   sum(ones(shape=[2, 3], dtype="float32"), axis=[1]))
}
)",
     "([[2.5, 2.5], [2.5, 2.5]], [0, 0, 0], [3, 3])"},
    {"TupleResultOperator", R"(
def @main() {
  %0 = split(arange(0f, 6f, 1f), indices_or_sections=3);
  (%0, %0.1 * 10f)
}
)",
     "(([0, 1], [2, 3], [4, 5]), [20, 30])"},
    {"TupleInputOperator", R"(
def @main() {
  concatenate((ones(shape=[1, 2], dtype="float32"), zeros(shape=[2, 2], dtype="float32")), axis=0)
}
)",
     "[[1, 1], [0, 0], [0, 0]]"},
    {"TensorLoop", R"(
def @grow(%i: int32, %acc: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  if (%i == 0) { %acc } else { @grow(%i - 1, %acc * 2f + ones(shape=[2], dtype="float32")) }
}
def @main() { @grow(4, zeros(shape=[2], dtype="float32")) }
)",
     "[15, 15]"},
};

class ProgramTest : public testing::TestWithParam<ProgramCase> {};

TEST_P(ProgramTest, PrintsExpectedResult) {
  EXPECT_EQ(Evaluated(GetParam().source), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Evaluator, ProgramTest, testing::ValuesIn(kPrograms),
                         [](const testing::TestParamInfo<ProgramCase>& info) {
                           return std::string(info.param.name);
                         });

// ---- programs with arguments --------------------------------------------------

TEST(EvaluatorArguments, ScalarArgument) {
  const char* source = R"(
def @main(%n: int32) -> int32 {
  let %factorial = fn (%k: int32) -> int32 {
    if (%k <= 1) { 1 } else { %k * %factorial(%k - 1) }
  };
  %factorial(%n)
}
)";
  EXPECT_EQ(Evaluated(source, {Scalar<int32_t>(6)}), "720");
}

TEST(EvaluatorArguments, TensorArithmetic) {
  // x - y = [[-1, 0, -2], [2, 3, 1]]; relu doubles to [[0, 0, 0], [4, 6, 2]];
  // the row sums of x are [3, 12].
  const char* program = R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3,), float32]) {
  (nn.relu(%x - %y) * 2f, sum(%x, axis=[1]))
}
)";
  EXPECT_EQ(
      Evaluated(program, {FloatTensor({2, 3}, {0, 1, 2, 3, 4, 5}), FloatTensor({3}, {1, 1, 4})}),
      "([[0, 0, 0], [4, 6, 2]], [3, 12])");
}

TEST(EvaluatorArguments, IfOnTensorComparison) {
  const char* program = R"(
def @main(%x: Tensor[(?,), float32]) -> int32 {
  if (sum(%x) > 10f) { 1 } else { 0 }
}
)";
  EXPECT_EQ(Evaluated(program, {FloatTensor({3}, {1, 2, 3})}), "0");
  EXPECT_EQ(Evaluated(program, {FloatTensor({4}, {1, 2, 3, 5})}), "1");
}

TEST(EvaluatorArguments, WrongArgumentsAreUsageErrors) {
  const char* program = "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] { %x }\n";
  EXPECT_EQ(RunError(program).kind(), ErrorKind::kUsage);
  Error wrong_shape = RunError(program, {FloatTensor({3}, {1, 2, 3})});
  EXPECT_EQ(wrong_shape.kind(), ErrorKind::kUsage);
  EXPECT_NE(wrong_shape.message().find("(3,)"), std::string::npos) << wrong_shape.message();
  EXPECT_EQ(RunError(program, {Scalar<int32_t>(1)}).kind(), ErrorKind::kUsage);
  Error missing = RunError(program, {}, {}, "absent");
  EXPECT_EQ(missing.kind(), ErrorKind::kUsage);
  EXPECT_NE(missing.message().find("@absent"), std::string::npos);
}

// ---- deep recursion -------------------------------------------------------------

TEST(EvaluatorDeep, MillionDeepNonTailRecursion) {
  const char* program = R"(
def @count(%n: int32) -> int32 {
  if (%n == 0) { 0 } else { 1 + @count(%n - 1) }
}
def @main() -> int32 { @count(1000000) }
)";
  EXPECT_EQ(Evaluated(program), "1000000");
}

TEST(EvaluatorDeep, MillionLongListPrintsAndIsDestroyed) {
  const char* program = R"(
def @build(%n: int32) -> List[int32] {
  if (%n == 0) { Nil } else { Cons(%n, @build(%n - 1)) }
}
def @main() -> (int32, List[int32]) {
  let %xs = @build(1000000);
  (@length(%xs), %xs)
}
)";
  std::string printed = Evaluated(program);
  const std::string prefix = "(1000000, Cons(1000000, Cons(999999, Cons(999998, ";
  ASSERT_GT(printed.size(), prefix.size());
  EXPECT_EQ(printed.substr(0, prefix.size()), prefix);
  // The list's last elements, then a parenthesis for each of its million
  // cells and one for the tuple.
  const std::string last = "Cons(2, Cons(1, Nil";
  const size_t position = printed.find(last);
  ASSERT_NE(position, std::string::npos);
  EXPECT_EQ(printed.substr(position + last.size()), std::string(1000001, ')'));
}

TEST(EvaluatorDeep, SharedBindingsAreEvaluatedOnce) {
  // 30 doublings of 1 through graph bindings used twice each: evaluating
  // every use would take 2^30 steps; the step limit proves it does not.
  std::string program = "def @main() -> int32 {\n  %0 = 1;\n";
  for (int level = 1; level <= 30; ++level) {
    program += "  %" + std::to_string(level) + " = %" + std::to_string(level - 1) + " + %" +
               std::to_string(level - 1) + ";\n";
  }
  program += "  %30\n}\n";
  EXPECT_EQ(Evaluated(program, {}, EvaluationOptions{.step_limit = 10000}), "1073741824");
}

// ---- runtime errors --------------------------------------------------------------

TEST(EvaluatorErrors, IncompleteMatchFailsWithLocationAndBacktrace) {
  const char* program = R"(def @unwrap(%o: Option[int32]) -> int32 {
  match? (%o) {
    Some(%v) => %v,
  }
}
def @main() -> int32 {
  1 + @unwrap(None)
}
)";
  Error error = RunError(program);
  EXPECT_EQ(error.kind(), ErrorKind::kRuntime);
  ASSERT_TRUE(error.span().has_value());
  EXPECT_EQ(error.span()->file, kFile);
  EXPECT_EQ(error.span()->line, 2);
  EXPECT_EQ(error.span()->column, 3);
  EXPECT_NE(error.message().find("match? has no clause for the value None"), std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find("@unwrap, @main"), std::string::npos) << error.message();
  ASSERT_EQ(error.backtrace().size(), 2u);
  EXPECT_EQ(error.backtrace()[0], "@unwrap (test.relay:2:3)");
  EXPECT_EQ(error.backtrace()[1], "@main (test.relay:7:7)");
}

TEST(EvaluatorErrors, CompleteMatchWithoutMatchingClauseFails) {
  // The type checker may reject such a match, so the IR is built by hand:
  // def @main() { match (None) { Some(%v) => %v } }, with `complete` set.
  const ir::Module& prelude = compiler::Prelude();
  ir::Var v = ir::Make<ir::VarNode>("v", ir::Type());
  ir::Pattern some = ir::Make<ir::PatternConstructorNode>(
      prelude.FindConstructor("Some"), std::vector<ir::Pattern>{ir::Make<ir::PatternVarNode>(v)});
  ir::Expr match = ir::Make<ir::MatchNode>(ir::Expr(prelude.FindConstructor("None")),
                                           std::vector<ir::Clause>{{some, ir::Expr(v)}},
                                           /*complete=*/true, ir::Span{2, 3, 4, 4});
  ir::Module module;
  module.set_source("handmade.relay", std::make_shared<const std::string>());
  module.AddFunction(ir::Make<ir::GlobalVarNode>("main"),
                     ir::Make<ir::FunctionNode>(std::vector<ir::Var>{}, match, ir::Type()));
  try {
    Evaluate(module, "main", {});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kRuntime);
    EXPECT_EQ(std::string(error.what()),
              "handmade.relay:2:3: error: match has no clause for the value None (backtrace, "
              "innermost first: @main)");
  }
}

TEST(EvaluatorErrors, PreludeHeadOfEmptyListFailsInThePrelude) {
  Error error = RunError("def @main() -> int32 { @nth(Cons(1, Nil), 1) }\n");
  EXPECT_EQ(error.kind(), ErrorKind::kRuntime);
  ASSERT_TRUE(error.span().has_value());
  EXPECT_EQ(error.span()->file, "prelude.relay");
  // @hd's `match?` in compiler/prelude/prelude.relay.
  EXPECT_EQ(error.span()->line, 23);
  EXPECT_NE(error.message().find("@hd, @nth, @nth, @main"), std::string::npos) << error.message();
}

TEST(EvaluatorErrors, OperatorShapeMismatchIsARuntimeError) {
  const char* program = R"(def @main(%a: Tensor[(?,), float32], %b: Tensor[(?,), float32]) {
  %a + %b
}
)";
  Error error = RunError(program, {FloatTensor({2}, {1, 2}), FloatTensor({3}, {1, 2, 3})});
  EXPECT_EQ(error.kind(), ErrorKind::kRuntime);
  ASSERT_TRUE(error.span().has_value());
  EXPECT_EQ(error.span()->line, 2);
  EXPECT_NE(error.message().find("add"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("@main"), std::string::npos) << error.message();
}

TEST(EvaluatorErrors, StepLimitStopsARunawayProgram) {
  const char* program = R"(def @loop(%n: int32) -> int32 { @loop(%n + 1) }
def @main() -> int32 { @loop(0) }
)";
  Error error = RunError(program, {}, EvaluationOptions{.step_limit = 10000});
  EXPECT_EQ(error.kind(), ErrorKind::kRuntime);
  EXPECT_NE(error.message().find("step limit of 10000 exceeded"), std::string::npos)
      << error.message();
  // Thousands of @loop frames are summarised, not listed.
  EXPECT_LE(error.backtrace().size(), 40u);
  EXPECT_NE(error.backtrace().back().find("more frames"), std::string::npos);
}

TEST(EvaluatorErrors, StepLimitAllowsAProgramWithinIt) {
  EXPECT_EQ(Evaluated("def @main() -> int32 { 1 + 2 }\n", {}, EvaluationOptions{.step_limit = 3}),
            "3");
  EXPECT_EQ(
      RunError("def @main() -> int32 { 1 + 2 }\n", {}, EvaluationOptions{.step_limit = 2}).kind(),
      ErrorKind::kRuntime);
}

// ---- numbering ---------------------------------------------------------------------

TEST(EvaluatorNumbering, ProgramConstructorsComeBeforeThePrelude) {
  ir::Module module = Check(R"(
type Color { Red, Green, Blue, }
type Pair[A] { MakePair(A, A), }
def @main() -> Color { Green }
)");
  std::vector<std::string> names = ConstructorNames(module);
  ASSERT_GE(names.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 6),
            (std::vector<std::string>{"Red", "Green", "Blue", "MakePair", "Cons", "Nil"}));
  Value green = Evaluate(module, "main", {});
  ASSERT_EQ(green->kind(), ObjectKind::kConstructed);
  EXPECT_EQ(static_cast<const Constructed*>(green.get())->tag(), 1);
}

}  // namespace
}  // namespace relay::evaluator

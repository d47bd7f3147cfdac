// Gradients of whole programs through Relay's control flow and data: if,
// recursion over a `?`-length sequence (an LSTM), a Tree-LSTM over the
// prelude's ADTs, closures, references, ADT parameters, and a gradient of a
// gradient. Each against central finite differences (gradient_check.h).
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>

#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "compiler/passes/gradient.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/autodiff/gradient_check.h"

namespace relay::testing {
namespace {

TEST(ProgramGradientTest, IfTakesTheBranchTheInputsChose) {
  const std::string program = R"(
def @main(%x: Tensor[(3,), float64], %y: Tensor[(3,), float64]) {
  if (greater(sum(%x), 0f64)) { multiply(%x, exp(%y)) } else { divide(sin(%y), %x) }
})";
  CheckGradient(program, {TensorOf({3}, {0.5, 0.25, -0.1}), TensorOf({3}, {0.3, -0.7, 0.2})});
  CheckGradient(program, {TensorOf({3}, {-0.5, 0.25, -0.1}), TensorOf({3}, {0.3, -0.7, 0.2})});
}

// TVM's while_loop shape: a recursive let-bound closure over a sequence
// whose length is a `?` dimension, reading one step with take.
const char* kLstm = R"(
def @cell(%input: Tensor[(1, 2), float64], %state: (Tensor[(1, 3), float64], Tensor[(1, 3), float64]),
          %wi: Tensor[(12, 2), float64], %wh: Tensor[(12, 3), float64], %b: Tensor[(12,), float64]) {
  let %gates = nn.bias_add(add(nn.dense(%input, %wi), nn.dense(%state.0, %wh)), %b);
  let %parts = split(%gates, indices_or_sections=4, axis=1);
  let %cell = add(multiply(sigmoid(%parts.1), %state.1), multiply(sigmoid(%parts.0), tanh(%parts.2)));
  (multiply(sigmoid(%parts.3), tanh(%cell)), %cell)
}
def @main(%sequence: Tensor[(?, 2), float64], %wi: Tensor[(12, 2), float64],
          %wh: Tensor[(12, 3), float64], %b: Tensor[(12,), float64], %c: Tensor[(1, 3), float64]) {
  let %length = take(shape_of(%sequence), 0, axis=0);
  let %loop = fn (%step: int32, %state: (Tensor[(1, 3), float64], Tensor[(1, 3), float64]))
              -> (Tensor[(1, 3), float64], Tensor[(1, 3), float64]) {
    if (less(%step, %length)) {
      let %input = expand_dims(take(%sequence, %step, axis=0), axis=0);
      %loop(add(%step, 1), @cell(%input, %state, %wi, %wh, %b))
    } else {
      %state
    }
  };
  let %zeros = zeros(shape=[1, 3], dtype="float64");
  multiply(%loop(0, (%zeros, %zeros)).0, %c)
})";

TEST(ProgramGradientTest, LstmOverASequenceOfAnyLength) {
  std::mt19937 random(21);
  for (int64_t length : {0, 1, 4}) {
    SCOPED_TRACE("length " + std::to_string(length));
    CheckGradient(kLstm, {RandomTensor({length, 2}, random), RandomTensor({12, 2}, random),
                          RandomTensor({12, 3}, random), RandomTensor({12}, random),
                          RandomTensor({1, 3}, random)});
  }
}

// The child-sum Tree-LSTM of examples/tree_lstm.relay, smaller, over a
// rose tree (the prelude's Tree[A]) built from a parent index per word.
const char* kTreeLstm = R"(
def @subtrees(%tokens: Tensor[(?, 2), float64], %heads: Tensor[(?,), int32], %parent: int32,
              %word: int32) -> List[Tree[Tensor[(1, 2), float64]]] {
  if (less(%word, take(shape_of(%heads), 0))) {
    let %later = @subtrees(%tokens, %heads, %parent, add(%word, 1));
    if (equal(take(%heads, %word), %parent)) {
      let %token = expand_dims(take(%tokens, %word, axis=0), axis=0);
      Cons(Rose(%token, @subtrees(%tokens, %heads, %word, 0)), %later)
    } else {
      %later
    }
  } else {
    Nil
  }
}
def @node(%tree: Tree[Tensor[(1, 2), float64]], %wx: Tensor[(9, 2), float64],
          %wh: Tensor[(9, 3), float64], %fx: Tensor[(3, 2), float64], %fh: Tensor[(3, 3), float64])
          -> (Tensor[(1, 3), float64], Tensor[(1, 3), float64]) {
  match (%tree) {
    Rose(%word, %children) => {
      let %states = @map(fn (%child: Tree[Tensor[(1, 2), float64]]) { @node(%child, %wx, %wh, %fx, %fh) },
                         %children);
      let %zeros = zeros(shape=[1, 3], dtype="float64");
      let %hidden = @foldl(fn (%sum: Tensor[(1, 3), float64],
                               %state: (Tensor[(1, 3), float64], Tensor[(1, 3), float64])) {
        add(%sum, %state.0)
      }, %zeros, %states);
      let %parts = split(add(nn.dense(%word, %wx), nn.dense(%hidden, %wh)), indices_or_sections=3, axis=1);
      let %forget_word = nn.dense(%word, %fx);
      let %kept = @foldl(fn (%sum: Tensor[(1, 3), float64],
                             %state: (Tensor[(1, 3), float64], Tensor[(1, 3), float64])) {
        add(%sum, multiply(sigmoid(add(%forget_word, nn.dense(%state.0, %fh))), %state.1))
      }, %zeros, %states);
      let %cell = add(multiply(sigmoid(%parts.0), tanh(%parts.2)), %kept);
      (multiply(sigmoid(%parts.1), tanh(%cell)), %cell)
    },
  }
}
def @main(%tokens: Tensor[(?, 2), float64], %heads: Tensor[(?,), int32],
          %wx: Tensor[(9, 2), float64], %wh: Tensor[(9, 3), float64],
          %fx: Tensor[(3, 2), float64], %fh: Tensor[(3, 3), float64], %c: Tensor[(1, 3), float64]) {
  let %root = @node(@hd(@subtrees(%tokens, %heads, -1, 0)), %wx, %wh, %fx, %fh);
  multiply(%root.0, %c)
})";

TEST(ProgramGradientTest, TreeLstmOverAnAdt) {
  std::mt19937 random(22);
  // Word 2 is the root; 0 and 3 hang from it, 1 from 0, 4 from 3.
  Ref<Tensor> heads = Tensor::Empty(HostDevice(), {5}, DType::kInt32);
  const int32_t parents[] = {2, 0, -1, 2, 3};
  std::copy(std::begin(parents), std::end(parents), heads->data<int32_t>());
  CheckGradient(kTreeLstm, {RandomTensor({5, 2}, random), heads, RandomTensor({9, 2}, random),
                            RandomTensor({9, 3}, random), RandomTensor({3, 2}, random),
                            RandomTensor({3, 3}, random), RandomTensor({1, 3}, random)});
}

TEST(ProgramGradientTest, ClosuresMadeCalledAndPassedAround) {
  const std::string program = R"(
def @scale_by(%s: Tensor[(3,), float64]) -> fn (Tensor[(3,), float64]) -> Tensor[(3,), float64] {
  fn (%v: Tensor[(3,), float64]) { multiply(%v, %s) }
}
def @main(%x: Tensor[(3,), float64], %s: Tensor[(3,), float64]) {
  let %f = @scale_by(tanh(%s));
  let %g = @compose(%f, fn (%v: Tensor[(3,), float64]) { sin(%v) });
  let %twice = @iterate(%g, 2);
  add(%twice(%x), @scale_by(%x)(%s))
})";
  CheckGradient(program, {TensorOf({3}, {0.4, -0.3, 0.9}), TensorOf({3}, {0.2, 0.6, -0.5})});
}

TEST(ProgramGradientTest, ReferencesReadAndWrittenInALoop) {
  const std::string program = R"(
def @main(%x: Tensor[(2, 2), float64], %w: Tensor[(2, 2), float64]) {
  let %acc = ref(%x);
  let %loop = fn (%i: int32) -> () {
    if (less(%i, 3)) {
      let %unit = ref_write(%acc, tanh(nn.dense(ref_read(%acc), %w)));
      %loop(add(%i, 1))
    } else {
      ()
    }
  };
  let %done = %loop(0);
  ref_read(%acc)
})";
  std::mt19937 random(23);
  CheckGradient(program, {RandomTensor({2, 2}, random), RandomTensor({2, 2}, random)});
}

// A List[Tensor] parameter is lifted element by element and gets no slot.
// @main_grad (derived by the front end for @from_list) takes the list;
// @wrap builds the same list from tensors, so its own gradient, checked
// against finite differences, is the oracle for d/dw.
TEST(ProgramGradientTest, AdtParametersAreLiftedAndGetNoSlot) {
  const std::string program = R"(
def @main(%xs: List[Tensor[(2,), float64]], %w: Tensor[(2,), float64]) {
  @foldl(fn (%h: Tensor[(2,), float64], %x: Tensor[(2,), float64]) { tanh(add(multiply(%h, %w), %x)) },
         %w, %xs)
}
def @wrap(%a: Tensor[(2,), float64], %b: Tensor[(2,), float64], %w: Tensor[(2,), float64]) {
  @main(Cons(%a, Cons(%b, Nil)), %w)
}
def @from_list(%a: Tensor[(2,), float64], %b: Tensor[(2,), float64], %w: Tensor[(2,), float64]) {
  let %gradient = @main_grad(Cons(%a, Cons(%b, Nil)), %w);
  (%gradient.0, %gradient.1.0)
})";
  std::vector<Value> arguments = {TensorOf({2}, {0.1, 0.2}), TensorOf({2}, {-0.3, 0.5}),
                                  TensorOf({2}, {0.7, -0.4})};
  CheckGradient(program, arguments, {.entry = "wrap"});
  ExpectSameAsGradientOf(program, "from_list", "wrap", arguments, /*slot=*/2);
}

// The pass composes with itself: @main calls @f_grad (derived by the front
// end), and its own gradient is then f's second derivative (times the
// weights).
TEST(ProgramGradientTest, SecondOrderGradientOfAScalarFunction) {
  const std::string program = R"(
def @f(%x: Tensor[(3,), float64]) {
  sum(multiply(sin(%x), exp(%x)))
}
def @main(%x: Tensor[(3,), float64], %c: Tensor[(3,), float64]) {
  multiply(@f_grad(%x).1.0, %c)
})";
  CheckGradient(program, {TensorOf({3}, {0.3, -0.8, 1.1}), TensorOf({3}, {0.5, 1.5, -1.0})});
}

// The dataflow fast path, used for @main, gives the same as the general
// one, used for @wrap (which calls a global).
TEST(ProgramGradientTest, DataflowAndGeneralPathsAgree) {
  const std::string program = R"(
def @main(%x: Tensor[(2, 3), float64], %w: Tensor[(3,), float64]) {
  let %t = (multiply(%x, %w), exp(%x));
  add(tanh(%t.0), %t.1)
}
def @wrap(%x: Tensor[(2, 3), float64], %w: Tensor[(3,), float64]) {
  @main(%x, %w)
})";
  std::mt19937 random(24);
  std::vector<Value> arguments = {RandomTensor({2, 3}, random), RandomTensor({3}, random)};
  CheckGradient(program, arguments);
  CheckGradient(program, arguments, {.entry = "wrap"});
}

// ---- errors ------------------------------------------------------------------------------

Error GradientError(const std::string& program, const std::string& entry = "main") {
  auto text = std::make_shared<const std::string>("#[version = \"0.0.5\"]\n" + program);
  Diagnostics diagnostics("errors.relay", text);
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  EXPECT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  try {
    passes::AddGradient(module, &compiler::Prelude(), entry);
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "no error";
  return Error(ErrorKind::kInternal, "none");
}

TEST(ProgramGradientTest, ErrorsNameWhatCannotBeDifferentiated) {
  Error missing = GradientError("def @main(%x: float32) { %x }", "loss");
  EXPECT_EQ(missing.kind(), ErrorKind::kUsage);
  EXPECT_NE(missing.message().find("@loss"), std::string::npos) << missing.message();

  Error function_parameter =
      GradientError("def @main(%f: fn (float32) -> float32, %x: float32) { %f(%x) }");
  EXPECT_EQ(function_parameter.kind(), ErrorKind::kType);
  EXPECT_NE(function_parameter.message().find("%f"), std::string::npos)
      << function_parameter.message();

  Error adt_result = GradientError("def @main(%x: float32) { Cons(%x, Nil) }");
  EXPECT_EQ(adt_result.kind(), ErrorKind::kType);
  EXPECT_NE(adt_result.message().find("List[float32]"), std::string::npos) << adt_result.message();

  Error monomorphic = GradientError(R"(
type Pair { MakePair(Tensor[(2,), float32], Tensor[(2,), float32]) }
def @main(%x: Tensor[(2,), float32]) {
  match (MakePair(%x, %x)) { MakePair(%a, %b) => add(%a, %b) }
})");
  EXPECT_EQ(monomorphic.kind(), ErrorKind::kType);
  EXPECT_NE(monomorphic.message().find("Pair"), std::string::npos) << monomorphic.message();
  ASSERT_TRUE(monomorphic.span().has_value());
}

TEST(ProgramGradientTest, ACallOfAGradientThatCannotBeDerivedIsReported) {
  auto text = std::make_shared<const std::string>(
      "#[version = \"0.0.5\"]\n"
      "def @f(%x: float32) -> float32 { @f_grad(%x).0 }\n");
  Diagnostics diagnostics("cycle.relay", text);
  compiler::ParseAndCheck(diagnostics);
  ASSERT_TRUE(diagnostics.has_errors());
  EXPECT_NE(diagnostics.FormatAll().find("@f itself needs it"), std::string::npos)
      << diagnostics.FormatAll();
}

}  // namespace
}  // namespace relay::testing

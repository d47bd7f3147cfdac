// Type inference on small programs whose types follow from Relay's rules.
#include <gtest/gtest.h>

#include "compiler/frontend.h"

namespace relay {
namespace {

using namespace relay::ir;

// The type of each global, or the first error.
std::string Check(const std::string& body) {
  Diagnostics diagnostics("test.relay",
                          std::make_shared<const std::string>("#[version = \"0.0.5\"]\n" + body));
  Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) {
    const Error& first = diagnostics.errors().front();
    return "error " + first.span()->ToString() + ": " + first.message();
  }
  std::string types;
  for (const GlobalFunction& global : module.functions()) {
    types += (types.empty() ? "" : "; ") + global.name->name + ": " +
             TypeToString(global.name->checked_type());
  }
  return types;
}

TEST(TypeInferenceTest, PolymorphicGlobalIsInstantiatedAtEachUse) {
  EXPECT_EQ(Check("def @id[A](%x: A) -> A { %x }\n"
                  "def @main(%i: int32, %f: float32) { (@id(%i), @id(%f)) }\n"),
            "id: fn [A](A) -> A; main: fn (int32, float32) -> (int32, float32)");
}

TEST(TypeInferenceTest, UnannotatedLambdaParameterIsSolvedByItsCall) {
  EXPECT_EQ(Check("def @main() { let %f = fn (%x) { add(%x, 1f) }; %f(2f) }\n"),
            "main: fn () -> float32");
}

TEST(TypeInferenceTest, StaticShapeIsAcceptedWhereUnknownIsDeclared) {
  EXPECT_EQ(Check("def @f(%x: Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32] { nn.relu(%x) }\n"
                  "def @main(%y: Tensor[(5, 3), float32]) { @f(%y) }\n"),
            "f: fn (Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32]; "
            "main: fn (Tensor[(5, 3), float32]) -> Tensor[(?, 3), float32]");
}

TEST(TypeInferenceTest, UnknownDimensionsBroadcastAgainstKnownOnes) {
  EXPECT_EQ(
      Check("def @main(%a: Tensor[(?, 1), float32], %b: Tensor[(4,), float32]) { add(%a, %b) }\n"),
      "main: fn (Tensor[(?, 1), float32], Tensor[(4,), float32]) -> Tensor[(?, 4), float32]");
}

TEST(TypeInferenceTest, ConstructorsAndMatchOverPreludeLists) {
  EXPECT_EQ(Check("def @main(%l: List[float32]) -> Option[float32] {\n"
                  "  match (%l) { Cons(%h, _) => Some(%h), Nil => None }\n}\n"),
            "main: fn (List[float32]) -> Option[float32]");
}

TEST(TypeInferenceTest, ReferencesRoundTrip) {
  EXPECT_EQ(Check("def @main(%x: int64) { let %r = ref(%x); let %u = ref_write(%r, 3i64); "
                  "(ref_read(%r), %u) }\n"),
            "main: fn (int64) -> (int64, ())");
}

TEST(TypeInferenceTest, MutualRecursionWithAnnotations) {
  EXPECT_EQ(
      Check("def @even(%n: int32) -> bool { if (%n == 0) { True } else { @odd(%n - 1) } }\n"
            "def @odd(%n: int32) -> bool { if (%n == 0) { False } else { @even(%n - 1) } }\n"),
      "even: fn (int32) -> bool; odd: fn (int32) -> bool");
}

TEST(TypeInferenceTest, OperatorErrorNamesBothShapes) {
  EXPECT_EQ(Check("def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(4, 3), float32]) {\n  "
                  "add(%a, %b)\n}\n"),
            "error test.relay:3:3: operator add: operands of shapes (2, 3) and (4, 3) cannot be "
            "broadcast");
}

TEST(TypeInferenceTest, ArgumentMismatchNamesTheCalleeAndBothTypes) {
  EXPECT_EQ(
      Check("def @f(%x: int32) -> int32 { %x }\ndef @main() { @f(1f) }\n"),
      "error test.relay:3:18: type mismatch in argument 1 of @f: expected int32, found float32");
}

TEST(TypeInferenceTest, IndependentErrorsInDifferentGlobalsAreAllReported) {
  Diagnostics diagnostics(
      "test.relay", std::make_shared<const std::string>("#[version = \"0.0.5\"]\n"
                                                        "def @a() -> int32 { 1f }\n"
                                                        "def @b() { if (1) { 1 } else { 2 } }\n"
                                                        "def @c() -> bool { True }\n"));
  compiler::ParseAndCheck(diagnostics);
  ASSERT_EQ(diagnostics.errors().size(), 2u) << diagnostics.FormatAll();
  EXPECT_EQ(diagnostics.errors()[0].span()->line, 2);
  EXPECT_EQ(diagnostics.errors()[1].span()->line, 3);
}

TEST(TypeInferenceTest, UninferableParameterIsReported) {
  EXPECT_EQ(Check("def @main(%x) { 1 }\n"),
            "error test.relay:2:11: cannot infer the type of parameter %x of @main; annotate it");
}

TEST(TypeInferenceTest, ProgramsShadowThePrelude) {
  EXPECT_EQ(Check("def @length(%x: int32) -> int32 { %x }\ndef @main() { @length(4) }\n"),
            "length: fn (int32) -> int32; main: fn () -> int32");
}

}  // namespace
}  // namespace relay

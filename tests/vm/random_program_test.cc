// Differential testing: thousands of random well-typed programs
// (tests/vm/program_generator.h) run on the VM and on the reference
// evaluator, which must print the same result or fail with the same kind of
// error. A failure prints the program, reproducible from its seed.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/evaluator/reference_evaluator.h"
#include "compiler/frontend.h"
#include "relay/error.h"
#include "tests/vm/program_generator.h"
#include "tests/vm/value_text.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

// Programs per test case; the cases split the seeds so ctest runs them in
// parallel and a failure names a small range.
constexpr uint64_t kProgramsPerCase = 1000;

struct Outcome {
  std::optional<ErrorKind> error;
  std::string text;  // the printed value, or the error's summary
};

void CheckSeeds(uint64_t first) {
  for (uint64_t seed = first; seed < first + kProgramsPerCase; ++seed) {
    const std::string text = testing::GenerateProgram(seed);
    Diagnostics diagnostics("random.relay", std::make_shared<const std::string>(text));
    ir::Module module = compiler::ParseAndCheck(diagnostics);
    ASSERT_FALSE(diagnostics.has_errors())
        << "seed " << seed << ": the generator wrote an ill-typed program\n"
        << diagnostics.FormatAll() << text;
    Outcome vm_outcome, evaluator_outcome;
    try {
      auto executable = std::make_shared<const vm::Executable>(
          codegen::CompileToBytecode(module, &compiler::Prelude()));
      vm::VirtualMachine machine(executable);
      vm_outcome.text = FormatValue(machine.Invoke("main", {}), executable->PrintOptions());
    } catch (const Error& error) {
      vm_outcome = {error.kind(), error.what()};
    }
    try {
      evaluator_outcome.text =
          FormatValue(evaluator::Evaluate(module, "main", {}), evaluator::PrintOptionsFor(module));
    } catch (const Error& error) {
      evaluator_outcome = {error.kind(), error.what()};
    }
    ASSERT_EQ(vm_outcome.error, evaluator_outcome.error)
        << "seed " << seed << "\nVM: " << vm_outcome.text
        << "\nevaluator: " << evaluator_outcome.text << "\n"
        << text;
    if (!vm_outcome.error) {
      ASSERT_TRUE(testing::SameValueText(vm_outcome.text, evaluator_outcome.text))
          << "seed " << seed << "\nVM: " << vm_outcome.text
          << "\nevaluator: " << evaluator_outcome.text << "\n"
          << text;
    }
  }
}

class RandomProgramTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(RandomProgramTest, VmAgreesWithTheEvaluator) {
  CheckSeeds(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomProgramTest,
                         ::testing::Values(uint64_t{1}, 1 + kProgramsPerCase,
                                           1 + 2 * kProgramsPerCase, 1 + 3 * kProgramsPerCase),
                         [](const auto& info) { return "from_" + std::to_string(info.param); });

TEST(ValueTextTest, ComparesNumbersLooselyAndTheRestExactly) {
  EXPECT_TRUE(testing::SameValueText("[[3.2890115, -0.26169533]]", "[[3.2890112, -0.26169533]]"));
  EXPECT_TRUE(testing::SameValueText("(1, Cons(2.5f, Nil))", "(1, Cons(2.5f, Nil))"));
  EXPECT_FALSE(testing::SameValueText("Cons(1, Nil)", "Cons(2, Nil)"));
  EXPECT_FALSE(testing::SameValueText("[3]", "[30]"));
  EXPECT_FALSE(testing::SameValueText("2.5f", "2.5f64"));
  EXPECT_FALSE(testing::SameValueText("(1, 2)", "(1, 2, 3)"));
  EXPECT_FALSE(testing::SameValueText("[1.001]", "[1]"));
  EXPECT_FALSE(testing::SameValueText("Some(1)", "None"));
}

TEST(ProgramGeneratorTest, IsDeterministicAndVaried) {
  EXPECT_EQ(testing::GenerateProgram(7), testing::GenerateProgram(7));
  EXPECT_NE(testing::GenerateProgram(7), testing::GenerateProgram(8));
}

}  // namespace
}  // namespace relay

// The operator table and the gradient rules agree: every operator marked
// kGradient has a rule, and no other operator has one.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "compiler/passes/operator_gradients/operator_gradients.h"
#include "kernels/operator.h"

namespace relay {
namespace {

TEST(GradientRulesTest, EveryDifferentiableOperatorHasARuleAndNoOtherDoes) {
  std::set<std::string> with_rules;
  for (std::string_view name : passes::OperatorsWithGradientRules()) {
    with_rules.insert(std::string(name));
  }
  for (const kernels::OperatorDefinition* definition : kernels::AllOperators()) {
    bool marked = definition->differentiability == kernels::Differentiability::kGradient;
    EXPECT_EQ(marked, with_rules.count(definition->name) == 1)
        << definition->name
        << (marked ? " is marked differentiable but has no gradient rule"
                   : " has a gradient rule but is not marked kGradient");
    with_rules.erase(definition->name);
  }
  EXPECT_TRUE(with_rules.empty()) << "rules for unknown operators, e.g. " << *with_rules.begin();
}

}  // namespace
}  // namespace relay

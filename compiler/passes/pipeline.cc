#include "compiler/passes/pipeline.h"

#include "compiler/passes/a_normal_form.h"
#include "compiler/passes/common_subexpression.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/dead_code.h"
#include "compiler/passes/eta_expansion.h"
#include "compiler/passes/fuse_operators.h"
#include "compiler/passes/lambda_lifting.h"
#include "compiler/passes/pass_util.h"

namespace relay::passes {

namespace {

ir::Function Optimize(const ir::Function& function, const ir::Module& scope,
                      const ir::Module* fallback) {
  ir::Function result = EtaExpand(function, scope, fallback);
  result = ToANormalForm(result);
  result = FoldConstants(result);
  result = EliminateCommonSubexpressions(result);
  result = EliminateDeadCode(result);
  return FuseOperators(result);
}

}  // namespace

OptimizedProgram OptimizeForVm(const ir::Module& program, const ir::Module* prelude) {
  OptimizedProgram optimized{RewriteFunctions(program,
                                              [&](const ir::Function& function) {
                                                return Optimize(function, program, prelude);
                                              }),
                             std::nullopt};
  if (prelude != nullptr) {
    optimized.prelude = RewriteFunctions(*prelude, [&](const ir::Function& function) {
      return Optimize(function, *prelude, nullptr);
    });
  }
  // Last: lifting leaves recursive literals' self-references as operands
  // that are not atomic.
  optimized.program = LiftLambdas(optimized.program);
  if (optimized.prelude) optimized.prelude = LiftLambdas(*optimized.prelude);
  return optimized;
}

}  // namespace relay::passes

#include "compiler/passes/pipeline.h"

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
#include "compiler/passes/partition_graph.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/plan_devices.h"
#include "compiler/passes/simplify_batch_norm.h"
#include "compiler/passes/split_to_slices.h"

namespace relay::passes {

namespace {

// Up to inlining, which needs every function in A-normal form.
ir::Module Normalize(const ir::Module& module, const ir::Module* fallback) {
  ir::Module normal = RewriteFunctions(module, [&](const ir::Function& function) {
    return ToANormalForm(EtaExpand(function, module, fallback));
  });
  return InlineCallsInLoops(normal);
}

// Up to partitioning: what every program gets, whoever runs its operators.
ir::Function Simplify(const ir::Function& function) {
  ir::Function result = HoistLoopInvariantProjections(function);
  result = SimplifyBatchNorm(result);
  result = FoldConstants(result);
  result = EliminateCommonSubexpressions(result);
  result = EliminateDeadCode(result);
  return SplitsToSlices(result);
}

// From partitioning on: for relay-vm's own kernels.
ir::Function Lower(const ir::Function& function) {
  return PlanDevices(FuseOperators(PadConvolutionInputs(function)));
}

}  // namespace

OptimizedProgram OptimizeForVm(const ir::Module& program, const ir::Module* prelude,
                               ExternalCodegens codegens) {
  ir::Module simplified = RewriteFunctions(Normalize(program, prelude), Simplify);
  // Partitioned before padding and fusion, which would hide a convolution's
  // padding and its epilogue from the codegens' rules.
  if (!codegens.empty()) simplified = PartitionGraph(simplified, codegens);
  OptimizedProgram optimized{RewriteFunctions(simplified, Lower), std::nullopt};
  if (prelude != nullptr) {
    optimized.prelude =
        RewriteFunctions(RewriteFunctions(Normalize(*prelude, nullptr), Simplify), Lower);
  }
  // Last: lifting leaves recursive literals' self-references as operands
  // that are not atomic.
  optimized.program = LiftLambdas(optimized.program);
  if (optimized.prelude) optimized.prelude = LiftLambdas(*optimized.prelude);
  return optimized;
}

}  // namespace relay::passes

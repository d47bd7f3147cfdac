#include "compiler/passes/tail_calls.h"

#include <vector>

#include "compiler/passes/pass_util.h"

namespace relay::passes {

using namespace relay::ir;

std::unordered_set<const CallNode*> MarkTailCalls(const FunctionNode& function) {
  std::unordered_set<const CallNode*> marked;
  std::vector<const ExprNode*> pending{function.body.get()};
  while (!pending.empty()) {
    const ExprNode* expr = pending.back();
    pending.pop_back();
    while (const auto* let = As<LetNode>(expr)) expr = let->body.get();  // long chains: a loop
    if (const auto* branch = As<IfNode>(expr)) {
      pending.push_back(branch->then_branch.get());
      pending.push_back(branch->else_branch.get());
    } else if (const auto* match = As<MatchNode>(expr)) {
      for (const Clause& clause : match->clauses) pending.push_back(clause.body.get());
    } else if (const auto* call = As<CallNode>(expr)) {
      const auto* callee_function = As<FunctionNode>(call->callee);
      const bool kernel = As<OpNode>(call->callee) != nullptr ||
                          (callee_function != nullptr && IsPrimitive(*callee_function));
      if (!kernel && As<ConstructorNode>(call->callee) == nullptr) marked.insert(call);
    }
  }
  return marked;
}

}  // namespace relay::passes

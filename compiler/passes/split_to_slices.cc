#include "compiler/passes/split_to_slices.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"
#include "kernels/operator.h"
#include "relay/error.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

// A split that becomes slices: its operand and, per part, where the part
// starts and ends along the axis.
struct SplitParts {
  Expr data;
  int64_t axis = 0;
  std::vector<int64_t> begins, ends;
};

// The parts of `value` when it is a split whose parts all have a known
// extent along its axis; nullopt otherwise.
std::optional<SplitParts> PartsOfSplit(const Expr& value) {
  const auto* call = As<CallNode>(value);
  if (call == nullptr || call->args.size() != 1) return std::nullopt;
  const auto* op = As<OpNode>(call->callee);
  if (op == nullptr || op->name() != "split") return std::nullopt;
  const auto* data_type = As<TensorTypeNode>(call->args[0]->checked_type());
  const auto* tuple_type = As<TupleTypeNode>(call->checked_type());
  if (data_type == nullptr || tuple_type == nullptr || data_type->shape.empty()) {
    return std::nullopt;
  }
  const int64_t rank = static_cast<int64_t>(data_type->shape.size());
  int64_t axis = 0;
  for (const auto& [name, attr] : call->attrs) {
    if (name == "axis") axis = attr.as_int();
  }
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  SplitParts parts{.data = call->args[0], .axis = axis, .begins = {}, .ends = {}};
  int64_t begin = 0;
  for (const Type& field : tuple_type->fields) {
    const auto* part = As<TensorTypeNode>(field);
    if (part == nullptr || part->shape.size() != data_type->shape.size() ||
        part->shape[axis] == kAnyDim) {
      return std::nullopt;
    }
    parts.begins.push_back(begin);
    begin += part->shape[axis];
    parts.ends.push_back(begin);
  }
  return parts;
}

class SplitRewriter : public TypedExprMutator {
 public:
  explicit SplitRewriter(const Expr& body) {
    // Splits bound by a let, and how their variables are used: by
    // projections only, or otherwise too.
    std::unordered_map<const VarNode*, int> other_uses;
    PostOrderVisit(body, [&](const Expr& expr) {
      if (const auto* let = As<LetNode>(expr)) {
        if (std::optional<SplitParts> parts = PartsOfSplit(let->value)) {
          splits_.emplace(let->var.get(), std::move(*parts));
        }
      }
      if (expr->kind() == NodeKind::kTupleGetItem) return;  // a projection
      for (const Expr& child : ExprChildren(expr)) {
        if (const auto* var = As<VarNode>(child)) ++other_uses[var];
      }
    });
    std::erase_if(splits_, [&](const auto& entry) { return other_uses.count(entry.first) > 0; });
  }

 protected:
  Expr RewriteTyped(const Expr& original, const Expr& rebuilt) override {
    if (const auto* projection = As<TupleGetItemNode>(rebuilt)) {
      const auto* var = As<VarNode>(projection->tuple);
      auto split = var ? splits_.find(var) : splits_.end();
      if (split == splits_.end()) return rebuilt;
      return Slice(split->second, static_cast<size_t>(projection->index), original);
    }
    if (const auto* let = As<LetNode>(rebuilt)) {
      if (splits_.count(let->var.get())) return let->body;  // every use is a slice now
    }
    return rebuilt;
  }

 private:
  // strided_slice(data, begin=[b], end=[e], axes=[axis]), typed like `part`.
  static Expr Slice(const SplitParts& split, size_t index, const Expr& part) {
    static const kernels::OperatorDefinition* const definition =
        kernels::FindOperator("strided_slice");
    const kernels::Attrs given{{"begin", kernels::AttrValue::IntList({split.begins.at(index)})},
                               {"end", kernels::AttrValue::IntList({split.ends.at(index)})},
                               {"axes", kernels::AttrValue::IntList({split.axis})}};
    kernels::Attrs attrs;
    const std::optional<std::string> problem =
        kernels::NormalizeAttrs(definition->attributes, given, attrs);
    RELAY_CHECK(!problem,
                "strided_slice refused the attributes of a split's part: " + problem.value_or(""));
    Expr slice =
        Make<CallNode>(Make<OpNode>(definition, part->span()), std::vector<Expr>{split.data},
                       std::move(attrs), std::vector<Type>{}, part->span());
    slice->set_checked_type(part->checked_type());
    return slice;
  }

  std::unordered_map<const VarNode*, SplitParts> splits_;
};

}  // namespace

Function SplitsToSlices(const Function& function) {
  SplitRewriter rewriter(function->body);
  return WithBody(function, rewriter.Mutate(function->body));
}

}  // namespace relay::passes

#include "compiler/ir/expr.h"

#include "kernels/operator.h"

namespace relay::ir {

namespace {
void CheckAll(const std::vector<Expr>& exprs, const char* what) {
  for (const Expr& expr : exprs) RELAY_CHECK(expr, what);
}
}  // namespace

ConstantNode::ConstantNode(Ref<Tensor> value_in, Span span)
    : ExprNode(kKind, span), value(std::move(value_in)) {
  RELAY_CHECK(value && value->device_id().kind == DeviceKind::kCPU,
              "constants must be host tensors");
}

TupleNode::TupleNode(std::vector<Expr> fields_in, Span span)
    : ExprNode(kKind, span), fields(std::move(fields_in)) {
  CheckAll(fields, "tuple with a null field");
}

TupleGetItemNode::TupleGetItemNode(Expr tuple_in, int index_in, Span span)
    : ExprNode(kKind, span), tuple(std::move(tuple_in)), index(index_in) {
  RELAY_CHECK(tuple && index >= 0, "tuple projection of null or at a negative index");
}

OpNode::OpNode(const kernels::OperatorDefinition* definition_in, Span span)
    : ExprNode(kKind, span), definition(definition_in) {
  RELAY_CHECK(definition, "operator node without a definition");
}

const std::string& OpNode::name() const {
  return definition->name;
}

CallNode::CallNode(Expr callee_in, std::vector<Expr> args_in, kernels::Attrs attrs_in,
                   std::vector<Type> type_args_in, Span span)
    : ExprNode(kKind, span),
      callee(std::move(callee_in)),
      args(std::move(args_in)),
      attrs(std::move(attrs_in)),
      type_args(std::move(type_args_in)) {
  RELAY_CHECK(callee, "call without a callee");
  CheckAll(args, "call with a null argument");
}

FunctionNode::FunctionNode(std::vector<Var> params_in, Expr body_in, Type ret_type_in,
                           std::vector<TypeVar> type_params_in, kernels::Attrs attrs_in, Span span)
    : ExprNode(kKind, span),
      params(std::move(params_in)),
      body(std::move(body_in)),
      ret_type(std::move(ret_type_in)),
      type_params(std::move(type_params_in)),
      attrs(std::move(attrs_in)) {
  RELAY_CHECK(body, "function without a body");
  for (const Var& param : params) RELAY_CHECK(param, "function with a null parameter");
}

LetNode::LetNode(Var var_in, Expr value_in, Expr body_in, Span span)
    : ExprNode(kKind, span),
      var(std::move(var_in)),
      value(std::move(value_in)),
      body(std::move(body_in)) {
  RELAY_CHECK(var && value && body, "let with a null part");
}

IfNode::IfNode(Expr condition_in, Expr then_in, Expr else_in, Span span)
    : ExprNode(kKind, span),
      condition(std::move(condition_in)),
      then_branch(std::move(then_in)),
      else_branch(std::move(else_in)) {
  RELAY_CHECK(condition && then_branch && else_branch, "if with a null part");
}

ConstructorNode::ConstructorNode(std::string name_in, std::vector<Type> inputs_in,
                                 GlobalTypeVar adt_in, int tag_in, Span span)
    : ExprNode(kKind, span),
      name(std::move(name_in)),
      inputs(std::move(inputs_in)),
      adt(std::move(adt_in)),
      tag(tag_in) {
  RELAY_CHECK(adt && tag >= 0, "constructor without a type or with a negative tag");
}

PatternVarNode::PatternVarNode(Var var_in, Span span)
    : PatternNode(kKind, span), var(std::move(var_in)) {
  RELAY_CHECK(var, "pattern variable without a variable");
}

PatternConstructorNode::PatternConstructorNode(Constructor constructor_in,
                                               std::vector<Pattern> patterns_in, Span span)
    : PatternNode(kKind, span),
      constructor(std::move(constructor_in)),
      patterns(std::move(patterns_in)) {
  RELAY_CHECK(constructor, "constructor pattern without a constructor");
  RELAY_CHECK(patterns.size() == constructor->inputs.size(),
              "constructor pattern arity differs from the constructor's");
}

PatternTupleNode::PatternTupleNode(std::vector<Pattern> patterns_in, Span span)
    : PatternNode(kKind, span), patterns(std::move(patterns_in)) {
  for (const Pattern& pattern : patterns) RELAY_CHECK(pattern, "tuple pattern with a null field");
}

MatchNode::MatchNode(Expr data_in, std::vector<Clause> clauses_in, bool complete_in, Span span)
    : ExprNode(kKind, span),
      data(std::move(data_in)),
      clauses(std::move(clauses_in)),
      complete(complete_in) {
  RELAY_CHECK(data, "match without data");
  for (const Clause& clause : clauses)
    RELAY_CHECK(clause.pattern && clause.body, "match clause with a null part");
}

RefCreateNode::RefCreateNode(Expr value_in, Span span)
    : ExprNode(kKind, span), value(std::move(value_in)) {
  RELAY_CHECK(value, "ref() of null");
}

RefReadNode::RefReadNode(Expr ref_in, Span span) : ExprNode(kKind, span), ref(std::move(ref_in)) {
  RELAY_CHECK(ref, "ref_read of null");
}

RefWriteNode::RefWriteNode(Expr ref_in, Expr value_in, Span span)
    : ExprNode(kKind, span), ref(std::move(ref_in)), value(std::move(value_in)) {
  RELAY_CHECK(ref && value, "ref_write with a null part");
}

}  // namespace relay::ir

#include "kernels/kir/kir.h"

#include <cctype>
#include <charconv>
#include <unordered_map>

namespace relay::kernels::kir {

namespace {

bool IsIndex(const Expr& expr) {
  return expr && expr->dtype == DType::kInt64;
}

DType BinaryResultType(BinaryOp op, const Expr& a, const Expr& b) {
  RELAY_CHECK(a && b, "binary kernel expression with a null operand");
  RELAY_CHECK(a->dtype == b->dtype, "binary kernel expression with operands of different dtypes");
  if (op == BinaryOp::kAnd || op == BinaryOp::kOr) {
    RELAY_CHECK(a->dtype == DType::kBool, "logical kernel expression on non-bool operands");
  }
  return IsComparison(op) ? DType::kBool : a->dtype;
}

const IntImmNode* AsConstant(const Expr& expr) {
  return As<IntImmNode>(expr);
}

}  // namespace

std::string_view BinaryOpText(BinaryOp op) {
  switch (op) {
#define RELAY_KIR_CASE(enumerator, text) \
  case BinaryOp::enumerator:             \
    return text;
    RELAY_KIR_BINARY_OPS(RELAY_KIR_CASE)
#undef RELAY_KIR_CASE
  }
  return "?";
}

bool IsComparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEqual:
    case BinaryOp::kNotEqual:
    case BinaryOp::kLess:
    case BinaryOp::kLessEqual:
    case BinaryOp::kGreater:
    case BinaryOp::kGreaterEqual:
      return true;
    default:
      return false;
  }
}

std::string_view UnaryOpText(UnaryOp op) {
  switch (op) {
#define RELAY_KIR_CASE(enumerator, text) \
  case UnaryOp::enumerator:              \
    return text;
    RELAY_KIR_UNARY_OPS(RELAY_KIR_CASE)
#undef RELAY_KIR_CASE
  }
  return "?";
}

std::string_view ReduceOpText(ReduceOp op) {
  switch (op) {
#define RELAY_KIR_CASE(enumerator, text) \
  case ReduceOp::enumerator:             \
    return text;
    RELAY_KIR_REDUCE_OPS(RELAY_KIR_CASE)
#undef RELAY_KIR_CASE
  }
  return "?";
}

std::string_view ForKindText(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial:
      return "for";
    case ForKind::kParallel:
      return "parallel for";
    case ForKind::kVectorized:
      return "vectorized for";
    case ForKind::kUnrolled:
      return "unrolled for";
    case ForKind::kParallelAlternating:
      return "parallel alternating for";
    case ForKind::kDeviceThreads:
      return "device threads for";
    case ForKind::kDeviceGroups:
      return "device groups for";
    case ForKind::kDeviceLanes:
      return "device lanes for";
  }
  return "for";
}

// ---- constructors -------------------------------------------------------------------

IntImmNode::IntImmNode(int64_t value_in, DType dtype_in)
    : ExprNode(kKind, dtype_in), value(value_in) {
  RELAY_CHECK(!IsFloat(dtype_in), "integer immediate of a float dtype");
}

FloatImmNode::FloatImmNode(double value_in, DType dtype_in)
    : ExprNode(kKind, dtype_in), value(value_in) {
  RELAY_CHECK(IsFloat(dtype_in), "float immediate of a non-float dtype");
}

BufferNode::BufferNode(std::string name_in, DType dtype_in, std::vector<Expr> shape_in)
    : Object(ObjectKind::kKernelIR),
      name(std::move(name_in)),
      dtype(dtype_in),
      shape(std::move(shape_in)) {
  for (const Expr& dimension : shape)
    RELAY_CHECK(IsIndex(dimension), "buffer dimension that is not an int64 expression");
}

LoadNode::LoadNode(Buffer buffer_in, Expr index_in)
    : ExprNode(kKind, buffer_in->dtype), buffer(std::move(buffer_in)), index(std::move(index_in)) {
  RELAY_CHECK(IsIndex(index), "load with a non-int64 index");
}

BinaryNode::BinaryNode(BinaryOp op_in, Expr a_in, Expr b_in)
    : ExprNode(kKind, BinaryResultType(op_in, a_in, b_in)),
      op(op_in),
      a(std::move(a_in)),
      b(std::move(b_in)) {}

UnaryNode::UnaryNode(UnaryOp op_in, Expr a_in)
    : ExprNode(kKind, op_in == UnaryOp::kNot ? DType::kBool : a_in->dtype),
      op(op_in),
      a(std::move(a_in)) {
  RELAY_CHECK(op != UnaryOp::kNot || a->dtype == DType::kBool,
              "logical not of a non-bool expression");
}

SelectNode::SelectNode(Expr condition_in, Expr if_true_in, Expr if_false_in)
    : ExprNode(kKind, if_true_in->dtype),
      condition(std::move(condition_in)),
      if_true(std::move(if_true_in)),
      if_false(std::move(if_false_in)) {
  RELAY_CHECK(condition->dtype == DType::kBool, "select on a non-bool condition");
  RELAY_CHECK(if_true->dtype == if_false->dtype, "select between different dtypes");
}

namespace {
bool IsArgReduce(ReduceOp op) {
  return op == ReduceOp::kArgMin || op == ReduceOp::kArgMax;
}
}  // namespace

ReduceNode::ReduceNode(ReduceOp op_in, std::vector<Var> axes_in, std::vector<Expr> extents_in,
                       Expr init_in, Expr body_in, bool select_last_in)
    : ExprNode(kKind, IsArgReduce(op_in) ? DType::kInt32 : body_in->dtype),
      op(op_in),
      axes(std::move(axes_in)),
      extents(std::move(extents_in)),
      init(std::move(init_in)),
      body(std::move(body_in)),
      select_last(select_last_in) {
  RELAY_CHECK(axes.size() == extents.size(), "reduction with an extent count unlike its axes'");
  for (size_t axis = 0; axis < axes.size(); ++axis)
    RELAY_CHECK(axes[axis] && IsIndex(extents[axis]), "malformed reduction axis");
  RELAY_CHECK(init && init->dtype == body->dtype,
              "reduction whose init differs from its body's dtype");
  RELAY_CHECK(!select_last || IsArgReduce(op),
              "select_last on a reduction that is not arg-min/max");
  RELAY_CHECK((op != ReduceOp::kSum && op != ReduceOp::kProduct) || body->dtype != DType::kBool,
              "sum or product of bools in a kernel");
}

ForNode::ForNode(Var var_in, Expr extent_in, ForKind kind_in, Stmt body_in)
    : StmtNode(kKind),
      var(std::move(var_in)),
      extent(std::move(extent_in)),
      kind(kind_in),
      body(std::move(body_in)) {
  RELAY_CHECK(var && IsIndex(extent) && body, "malformed for loop");
}

StoreNode::StoreNode(Buffer buffer_in, Expr index_in, Expr value_in)
    : StmtNode(kKind),
      buffer(std::move(buffer_in)),
      index(std::move(index_in)),
      value(std::move(value_in)) {
  RELAY_CHECK(buffer && IsIndex(index) && value, "malformed store");
  RELAY_CHECK(value->dtype == buffer->dtype,
              "store of a value whose dtype differs from the buffer's");
}

SequenceNode::SequenceNode(std::vector<Stmt> statements_in)
    : StmtNode(kKind), statements(std::move(statements_in)) {
  for (const Stmt& statement : statements) RELAY_CHECK(statement, "sequence with a null statement");
}

IfThenElseNode::IfThenElseNode(Expr condition_in, Stmt then_in, Stmt else_in)
    : StmtNode(kKind),
      condition(std::move(condition_in)),
      then_body(std::move(then_in)),
      else_body(std::move(else_in)) {
  RELAY_CHECK(condition && condition->dtype == DType::kBool && then_body, "malformed if");
}

AllocateNode::AllocateNode(Buffer buffer_in, Stmt body_in, MemoryScope scope_in)
    : StmtNode(kKind), buffer(std::move(buffer_in)), body(std::move(body_in)), scope(scope_in) {
  for (const Expr& dimension : buffer->shape)
    RELAY_CHECK(AsConstant(dimension), "scratch buffer of non-constant size");
}

PrefetchNode::PrefetchNode(Buffer buffer_in, Expr index_in)
    : StmtNode(kKind), buffer(std::move(buffer_in)), index(std::move(index_in)) {
  RELAY_CHECK(buffer && IsIndex(index), "malformed prefetch");
}

LetStmtNode::LetStmtNode(Var var_in, Expr value_in, Stmt body_in)
    : StmtNode(kKind),
      var(std::move(var_in)),
      value(std::move(value_in)),
      body(std::move(body_in)) {
  RELAY_CHECK(var && IsIndex(value) && body, "malformed let");
}

// ---- builders -----------------------------------------------------------------------

Expr Int(int64_t value) {
  return Expr(new IntImmNode(value, DType::kInt64));
}

Expr Float(double value, DType dtype) {
  return Expr(new FloatImmNode(value, dtype));
}

Expr Binary(BinaryOp op, Expr a, Expr b) {
  // Fold constant index arithmetic so shapes and indices stay readable and
  // cheap; wider algebra is left to the target compiler.
  if (IsIndex(a) && IsIndex(b)) {
    const IntImmNode* left = AsConstant(a);
    const IntImmNode* right = AsConstant(b);
    int64_t result;
    if (left && right) {
      switch (op) {
        case BinaryOp::kAdd:
          if (!__builtin_add_overflow(left->value, right->value, &result)) return Int(result);
          break;
        case BinaryOp::kSubtract:
          if (!__builtin_sub_overflow(left->value, right->value, &result)) return Int(result);
          break;
        case BinaryOp::kMultiply:
          if (!__builtin_mul_overflow(left->value, right->value, &result)) return Int(result);
          break;
        default:
          break;
      }
    }
    if (op == BinaryOp::kAdd && left && left->value == 0) return b;
    if ((op == BinaryOp::kAdd || op == BinaryOp::kSubtract) && right && right->value == 0) return a;
    if (op == BinaryOp::kMultiply) {
      if (left && left->value == 1) return b;
      if (right && right->value == 1) return a;
      if ((left && left->value == 0) || (right && right->value == 0)) return Int(0);
    }
  }
  return Expr(new BinaryNode(op, std::move(a), std::move(b)));
}

Expr Add(Expr a, Expr b) {
  return Binary(BinaryOp::kAdd, std::move(a), std::move(b));
}
Expr Subtract(Expr a, Expr b) {
  return Binary(BinaryOp::kSubtract, std::move(a), std::move(b));
}
Expr Multiply(Expr a, Expr b) {
  return Binary(BinaryOp::kMultiply, std::move(a), std::move(b));
}
Expr Unary(UnaryOp op, Expr a) {
  return Expr(new UnaryNode(op, std::move(a)));
}
Expr Select(Expr condition, Expr if_true, Expr if_false) {
  return Expr(new SelectNode(std::move(condition), std::move(if_true), std::move(if_false)));
}
Expr Cast(DType dtype, Expr value) {
  if (value->dtype == dtype) return value;
  return Expr(new CastNode(dtype, std::move(value)));
}
Expr Reduce(ReduceOp op, std::vector<Var> axes, std::vector<Expr> extents, Expr init, Expr body,
            bool select_last) {
  return Expr(new ReduceNode(op, std::move(axes), std::move(extents), std::move(init),
                             std::move(body), select_last));
}
Expr Load(const Buffer& buffer, Expr index) {
  return Expr(new LoadNode(buffer, std::move(index)));
}

Expr FlatIndex(const Buffer& buffer, const std::vector<Expr>& indices) {
  RELAY_CHECK(indices.size() == buffer->shape.size(),
              "index of the wrong rank for " + buffer->name);
  Expr flat = Int(0);
  for (size_t axis = 0; axis < indices.size(); ++axis) {
    flat = Add(Multiply(flat, buffer->shape[axis]), indices[axis]);
  }
  return flat;
}

Expr ElementCount(const Buffer& buffer) {
  Expr count = Int(1);
  for (const Expr& dimension : buffer->shape) count = Multiply(count, dimension);
  return count;
}

// ---- printing -----------------------------------------------------------------------

namespace {

class Printer {
 public:
  std::string Kernel(const kir::Kernel& kernel) {
    for (const Var& dim : kernel.dims) Name(dim.get());
    std::string out = "kernel " + kernel.name + "(";
    for (size_t index = 0; index < kernel.params.size(); ++index) {
      const Buffer& buffer = kernel.params[index];
      out += index ? ", " : "";
      if (index >= kernel.params.size() - kernel.workspace_count) {
        out += "workspace ";
      } else if (index >= kernel.input_count()) {
        out += "out ";
      }
      out += BufferName(buffer.get());
      out += ": " + std::string(DTypeName(buffer->dtype)) + "[";
      out += Shape(buffer);
      out += "]";
    }
    out += ") {\n";
    Statement(kernel.body, 1, out);
    return out + "}\n";
  }

  std::string Expression(const Expr& expr) {
    switch (expr->node_kind()) {
      case NodeKind::kIntImm: {
        const auto* imm = As<IntImmNode>(expr);
        return std::to_string(imm->value) +
               (imm->dtype == DType::kInt64 ? "" : std::string(DTypeName(imm->dtype)));
      }
      case NodeKind::kFloatImm: {
        const auto* imm = As<FloatImmNode>(expr);
        char buffer[64];
        auto result = std::to_chars(buffer, buffer + sizeof buffer, imm->value);
        return std::string(buffer, result.ptr) +
               (imm->dtype == DType::kFloat32 ? "f" : std::string(DTypeName(imm->dtype)));
      }
      case NodeKind::kVar:
        return Name(As<VarNode>(expr));
      case NodeKind::kLoad: {
        const auto* load = As<LoadNode>(expr);
        std::string buffer = BufferName(load->buffer.get());
        return buffer + "[" + Expression(load->index) + "]";
      }
      case NodeKind::kBinary: {
        // Operands are printed in order (names are given by first
        // appearance, and C++ leaves the order of `+` operands open).
        const auto* binary = As<BinaryNode>(expr);
        std::string_view text = BinaryOpText(binary->op);
        std::string left = Expression(binary->a);
        std::string right = Expression(binary->b);
        if (std::isalpha(static_cast<unsigned char>(text[0]))) {
          return std::string(text) + "(" + left + ", " + right + ")";
        }
        return "(" + left + " " + std::string(text) + " " + right + ")";
      }
      case NodeKind::kUnary: {
        const auto* unary = As<UnaryNode>(expr);
        return std::string(UnaryOpText(unary->op)) + "(" + Expression(unary->a) + ")";
      }
      case NodeKind::kSelect: {
        const auto* select = As<SelectNode>(expr);
        std::string condition = Expression(select->condition);
        std::string if_true = Expression(select->if_true);
        return "select(" + condition + ", " + if_true + ", " + Expression(select->if_false) + ")";
      }
      case NodeKind::kCast: {
        const auto* cast = As<CastNode>(expr);
        return std::string(DTypeName(cast->dtype)) + "(" + Expression(cast->value) + ")";
      }
      case NodeKind::kReduce: {
        // sum(v3 in 0..v1, v4 in 0..v2; init 0f; body), axes named first so
        // that their names come before the body's.
        const auto* reduce = As<ReduceNode>(expr);
        std::string out = std::string(ReduceOpText(reduce->op));
        out += reduce->select_last ? "_last(" : "(";
        for (size_t axis = 0; axis < reduce->axes.size(); ++axis) {
          out += axis ? ", " : "";
          out += Name(reduce->axes[axis].get());
          out += " in 0.." + Expression(reduce->extents[axis]);
        }
        out += "; init " + Expression(reduce->init);
        return out + "; " + Expression(reduce->body) + ")";
      }
      default:
        RELAY_UNREACHABLE("printing a kernel statement as an expression");
    }
  }

 private:
  static void Indent(int level, std::string& out) {
    out.append(static_cast<size_t>(level) * 2, ' ');
  }

  void Statement(const Stmt& stmt, int level, std::string& out) {
    switch (stmt->node_kind()) {
      case NodeKind::kFor: {
        const auto* loop = As<ForNode>(stmt);
        Indent(level, out);
        out += std::string(ForKindText(loop->kind)) + " ";
        out += Name(loop->var.get());
        out += " in 0.." + Expression(loop->extent) + " {\n";
        Statement(loop->body, level + 1, out);
        Indent(level, out);
        out += "}\n";
        return;
      }
      case NodeKind::kStore: {
        const auto* store = As<StoreNode>(stmt);
        Indent(level, out);
        out += BufferName(store->buffer.get());
        out += "[" + Expression(store->index) + "] = ";
        out += Expression(store->value) + "\n";
        return;
      }
      case NodeKind::kSequence:
        for (const Stmt& statement : As<SequenceNode>(stmt)->statements)
          Statement(statement, level, out);
        return;
      case NodeKind::kIfThenElse: {
        const auto* branch = As<IfThenElseNode>(stmt);
        Indent(level, out);
        out += "if " + Expression(branch->condition) + " {\n";
        Statement(branch->then_body, level + 1, out);
        if (branch->else_body) {
          Indent(level, out);
          out += "} else {\n";
          Statement(branch->else_body, level + 1, out);
        }
        Indent(level, out);
        out += "}\n";
        return;
      }
      case NodeKind::kAllocate: {
        const auto* allocate = As<AllocateNode>(stmt);
        Indent(level, out);
        out += allocate->scope == MemoryScope::kShared ? "allocate shared " : "allocate ";
        out += BufferName(allocate->buffer.get());
        out += ": " + std::string(DTypeName(allocate->buffer->dtype)) + "[" +
               Shape(allocate->buffer) + "]\n";
        Statement(allocate->body, level, out);
        return;
      }
      case NodeKind::kLetStmt: {
        const auto* let = As<LetStmtNode>(stmt);
        Indent(level, out);
        out += "let " + Name(let->var.get());
        out += " = " + Expression(let->value) + "\n";
        Statement(let->body, level, out);
        return;
      }
      case NodeKind::kPrefetch: {
        const auto* prefetch = As<PrefetchNode>(stmt);
        Indent(level, out);
        out += "prefetch " + BufferName(prefetch->buffer.get());
        out += "[" + Expression(prefetch->index) + "]\n";
        return;
      }
      case NodeKind::kBarrier:
        Indent(level, out);
        out += "barrier\n";
        return;
      default:
        RELAY_UNREACHABLE("printing a kernel expression as a statement");
    }
  }

  std::string Shape(const Buffer& buffer) {
    std::string out;
    for (size_t axis = 0; axis < buffer->shape.size(); ++axis) {
      out += axis ? ", " : "";
      out += Expression(buffer->shape[axis]);
    }
    return out;
  }

  // Names are made unique by order of first appearance, so the text (the
  // cache identity) does not depend on how a variable was spelled.
  std::string Name(const VarNode* var) {
    auto [position, inserted] = var_names_.emplace(var, "");
    if (inserted) position->second = "v" + std::to_string(var_names_.size() - 1);
    return position->second;
  }
  std::string BufferName(const BufferNode* buffer) {
    auto [position, inserted] = buffer_names_.emplace(buffer, "");
    if (inserted) position->second = "b" + std::to_string(buffer_names_.size() - 1);
    return position->second;
  }

  std::unordered_map<const VarNode*, std::string> var_names_;
  std::unordered_map<const BufferNode*, std::string> buffer_names_;
};

}  // namespace

std::string PrintKernel(const kir::Kernel& kernel) {
  return Printer().Kernel(kernel);
}
std::string PrintExpr(const Expr& expr) {
  return Printer().Expression(expr);
}

}  // namespace relay::kernels::kir

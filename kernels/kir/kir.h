// The kernel IR: a small, device-neutral, loop-level IR (docs/architecture.md,
// "Kernel IR, schedules and the LLVM JIT").
//
// An operator's compute definition, and a fused primitive function made of
// several, becomes one Kernel: a loop nest over buffers with scalar
// expressions inside. Dimensions may be symbolic (Var), so one kernel serves
// every value of a `?` dimension. Schedules mark loops parallel, vectorised
// or unrolled; each target (LLVM for the CPU, later CUDA C and OpenCL C)
// lowers the same IR.
//
// Nodes are immutable and reference counted; expressions carry their dtype.
// Index arithmetic is int64. The calling convention of every lowered kernel
// is one function `void entry(void* const* buffers, const int64_t* dims)`:
// `buffers[i]` is the first element of parameter i, `dims[j]` the value of
// dimension variable j. Parameters are the inputs, then the outputs, then
// workspaces: scratch memory of constant size that the caller allocates
// (from its memory pool, so a kernel never allocates or fails to) and whose
// contents on entry do not matter.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "relay/dtype.h"
#include "relay/error.h"
#include "relay/object.h"

namespace relay::kernels::kir {

enum class NodeKind : uint8_t {
  // expressions
  kIntImm,
  kFloatImm,
  kVar,
  kLoad,
  kBinary,
  kUnary,
  kSelect,
  kCast,
  kReduce,
  // statements
  kFor,
  kStore,
  kSequence,
  kIfThenElse,
  kAllocate,
  kLetStmt,
  kPrefetch,
  kBarrier,
};

class Node : public Object {
 public:
  explicit Node(NodeKind kind) : Object(ObjectKind::kKernelIR), node_kind_(kind) {}
  NodeKind node_kind() const { return node_kind_; }

 private:
  const NodeKind node_kind_;
};

template <typename T, typename U>
const T* As(const Ref<const U>& node) {
  return node && node->node_kind() == T::kKind ? static_cast<const T*>(node.get()) : nullptr;
}

// ---- expressions ---------------------------------------------------------------

class ExprNode : public Node {
 public:
  ExprNode(NodeKind kind, DType dtype) : Node(kind), dtype(dtype) {}
  const DType dtype;
};
using Expr = Ref<const ExprNode>;

class IntImmNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kIntImm;
  IntImmNode(int64_t value, DType dtype);
  const int64_t value;
};

class FloatImmNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kFloatImm;
  FloatImmNode(double value, DType dtype);
  const double value;
};

// A loop index or a symbolic dimension: always int64. Identity is the node.
class VarNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kVar;
  explicit VarNode(std::string name) : ExprNode(kKind, DType::kInt64), name(std::move(name)) {}
  const std::string name;
};
using Var = Ref<const VarNode>;

// A kernel parameter or a local scratch buffer: compact, row-major.
class BufferNode final : public Object {
 public:
  BufferNode(std::string name, DType dtype, std::vector<Expr> shape);
  const std::string name;
  const DType dtype;
  const std::vector<Expr> shape;  // int64 expressions: constants or dimension variables
};
using Buffer = Ref<const BufferNode>;

class LoadNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kLoad;
  LoadNode(Buffer buffer, Expr index);
  const Buffer buffer;
  const Expr index;  // flat element index, int64
};

#define RELAY_KIR_BINARY_OPS(X) \
  X(kAdd, "+")                  \
  X(kSubtract, "-")             \
  X(kMultiply, "*")             \
  X(kDivide, "/")               \
  X(kFloorDivide, "floordiv")   \
  X(kFloorMod, "floormod")      \
  X(kTruncMod, "truncmod")      \
  X(kMinimum, "min")            \
  X(kMaximum, "max")            \
  X(kPower, "pow")              \
  X(kShiftLeft, "<<")           \
  X(kShiftRight, ">>")          \
  X(kAnd, "&&")                 \
  X(kOr, "||")                  \
  X(kEqual, "==")               \
  X(kNotEqual, "!=")            \
  X(kLess, "<")                 \
  X(kLessEqual, "<=")           \
  X(kGreater, ">")              \
  X(kGreaterEqual, ">=")

enum class BinaryOp : uint8_t {
#define RELAY_KIR_ENUMERATOR(enumerator, text) enumerator,
  RELAY_KIR_BINARY_OPS(RELAY_KIR_ENUMERATOR)
#undef RELAY_KIR_ENUMERATOR
};
std::string_view BinaryOpText(BinaryOp op);
bool IsComparison(BinaryOp op);  // == != < <= > >=: result is bool

class BinaryNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kBinary;
  // Operands must share a dtype; logical ops take bool.
  BinaryNode(BinaryOp op, Expr a, Expr b);
  const BinaryOp op;
  const Expr a;
  const Expr b;
};

#define RELAY_KIR_UNARY_OPS(X) \
  X(kNegate, "neg")            \
  X(kAbs, "abs")               \
  X(kExp, "exp")               \
  X(kLog, "log")               \
  X(kSqrt, "sqrt")             \
  X(kTanh, "tanh")             \
  X(kErf, "erf")               \
  X(kFloor, "floor")           \
  X(kCeil, "ceil")             \
  X(kRound, "round")           \
  X(kSin, "sin")               \
  X(kCos, "cos")               \
  X(kTan, "tan")               \
  X(kAsin, "asin")             \
  X(kAcos, "acos")             \
  X(kAtan, "atan")             \
  X(kSinh, "sinh")             \
  X(kCosh, "cosh")             \
  X(kNot, "!")

enum class UnaryOp : uint8_t {
#define RELAY_KIR_ENUMERATOR(enumerator, text) enumerator,
  RELAY_KIR_UNARY_OPS(RELAY_KIR_ENUMERATOR)
#undef RELAY_KIR_ENUMERATOR
};
std::string_view UnaryOpText(UnaryOp op);

class UnaryNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kUnary;
  UnaryNode(UnaryOp op, Expr a);
  const UnaryOp op;
  const Expr a;
};

class SelectNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kSelect;
  SelectNode(Expr condition, Expr if_true, Expr if_false);
  const Expr condition;
  const Expr if_true;
  const Expr if_false;
};

class CastNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kCast;
  CastNode(DType dtype, Expr value) : ExprNode(kKind, dtype), value(std::move(value)) {}
  const Expr value;
};

#define RELAY_KIR_REDUCE_OPS(X) \
  X(kSum, "sum")                \
  X(kProduct, "product")        \
  X(kMinimum, "min")            \
  X(kMaximum, "max")            \
  X(kArgMin, "argmin")          \
  X(kArgMax, "argmax")

enum class ReduceOp : uint8_t {
#define RELAY_KIR_ENUMERATOR(enumerator, text) enumerator,
  RELAY_KIR_REDUCE_OPS(RELAY_KIR_ENUMERATOR)
#undef RELAY_KIR_ENUMERATOR
};
std::string_view ReduceOpText(ReduceOp op);

// A reduction over the iteration space `axes` (each from 0 to its extent,
// the last axis fastest) of `body`, which may mention the axes, starting
// from `init` (body's dtype; the identity of the operator for an empty
// space).
//
// - kSum and kProduct accumulate in body's dtype (integers wrap).
// - kMinimum and kMaximum propagate NaN, as numpy.min and numpy.max; on bool
//   they are logical AND and OR.
// - kArgMin and kArgMax yield the int32 flat (row-major) position over
//   `axes` of the first extremum, or of the last one when `select_last` is
//   set; a NaN counts as the extremum (the first NaN, as numpy.argmax), and
//   `init` is the value every element is compared against first (the
//   lowest value for kArgMax). An empty space yields 0.
class ReduceNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kReduce;
  ReduceNode(ReduceOp op, std::vector<Var> axes, std::vector<Expr> extents, Expr init, Expr body,
             bool select_last = false);
  const ReduceOp op;
  const std::vector<Var> axes;
  const std::vector<Expr> extents;  // int64, one per axis
  const Expr init;
  const Expr body;
  const bool select_last;
};

// ---- statements ------------------------------------------------------------------

class StmtNode : public Node {
 public:
  using Node::Node;
};
using Stmt = Ref<const StmtNode>;

// How a target may run a loop's iterations.
// kParallelAlternating is kParallel whose successive runs take each
// thread's chunks in alternating orders (devices/cpu/thread_pool.h): for a
// kernel that reads, every call, a weight about as large as the cores'
// caches. kDeviceThreads gives each iteration a thread of its own on a GPU
// (an OpenCL work-item, a CUDA thread): only the outermost loop of a kernel
// may be one, and the launcher starts as many threads as its extent (a
// CPU runs it as a serial loop). kDeviceGroups and kDeviceLanes are the
// same split in two: the outermost loop over work-groups (thread blocks),
// and inside it (and its shared allocations) a loop over the group's
// threads, whose extent is the launch's group size; the lanes of a group
// share kShared scratch and wait for each other at barriers. Only GPU
// kernels have them.
enum class ForKind : uint8_t {
  kSerial,
  kParallel,
  kVectorized,
  kUnrolled,
  kParallelAlternating,
  kDeviceThreads,
  kDeviceGroups,
  kDeviceLanes,
};
std::string_view ForKindText(ForKind kind);

// for (var = 0; var < extent; ++var) body
class ForNode final : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kFor;
  ForNode(Var var, Expr extent, ForKind kind, Stmt body);
  const Var var;
  const Expr extent;
  const ForKind kind;
  const Stmt body;
};

class StoreNode final : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kStore;
  StoreNode(Buffer buffer, Expr index, Expr value);
  const Buffer buffer;
  const Expr index;
  const Expr value;
};

class SequenceNode final : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kSequence;
  explicit SequenceNode(std::vector<Stmt> statements);
  const std::vector<Stmt> statements;
};

class IfThenElseNode final : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kIfThenElse;
  // `else_body` may be null.
  IfThenElseNode(Expr condition, Stmt then_body, Stmt else_body);
  const Expr condition;
  const Stmt then_body;
  const Stmt else_body;
};

// Where a scratch buffer lives: a thread's own (registers, the stack), or
// shared by the lanes of a GPU work-group (OpenCL __local, CUDA
// __shared__), allocated around the lanes loop.
enum class MemoryScope : uint8_t { kPrivate, kShared };

// A scratch buffer of constant size that lives for `body` (an accumulator).
class AllocateNode final : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kAllocate;
  AllocateNode(Buffer buffer, Stmt body, MemoryScope scope = MemoryScope::kPrivate);
  const Buffer buffer;
  const Stmt body;
  const MemoryScope scope;
};

// Every lane of the work-group waits here until all have arrived, and sees
// what the others stored to shared scratch before it. Only inside a
// kDeviceLanes loop, reached by all of its lanes.
class BarrierNode final : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kBarrier;
  BarrierNode() : StmtNode(kKind) {}
};

class LetStmtNode final : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kLetStmt;
  LetStmtNode(Var var, Expr value, Stmt body);
  const Var var;
  const Expr value;
  const Stmt body;
};

// A hint that buffer[index] will be read soon: the target fetches its cache
// line into the caches near the core (not the nearest one) without waiting
// for it. Changes nothing the kernel computes; an index past the buffer's
// end is clamped to its last element.
class PrefetchNode final : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kPrefetch;
  PrefetchNode(Buffer buffer, Expr index);
  const Buffer buffer;
  const Expr index;
};

// ---- kernels ---------------------------------------------------------------------

struct Kernel {
  std::string name;
  std::vector<Buffer> params;  // inputs, then outputs, then workspaces
  size_t output_count = 1;
  std::vector<Var> dims;  // symbolic dimensions, in calling-convention order
  Stmt body;
  size_t workspace_count = 0;

  // A workspace computed from one input alone (the contraction schedule's
  // packed weight panels) by a kernel of its own, `fill`, whose one input is
  // that input and whose one output is the workspace; `body` only reads it.
  // A launcher runs `fill` before `body`, or, for an immutable input
  // (Tensor::MarkImmutable), reuses what an earlier launch filled.
  struct DerivedWorkspace {
    size_t input = 0;      // among the inputs
    size_t workspace = 0;  // among the workspaces
    std::shared_ptr<const Kernel> fill;
  };
  std::optional<DerivedWorkspace> derived_workspace = std::nullopt;

  size_t input_count() const { return params.size() - output_count - workspace_count; }
};

// Readable text of a kernel, also its identity for caching: two kernels with
// the same text compute the same thing.
std::string PrintKernel(const Kernel& kernel);
std::string PrintExpr(const Expr& expr);

// ---- builders (fold constants in index arithmetic) ---------------------------------

Expr Int(int64_t value);
Expr Float(double value, DType dtype);
Expr Add(Expr a, Expr b);
Expr Subtract(Expr a, Expr b);
Expr Multiply(Expr a, Expr b);
Expr Binary(BinaryOp op, Expr a, Expr b);
Expr Unary(UnaryOp op, Expr a);
Expr Select(Expr condition, Expr if_true, Expr if_false);
Expr Cast(DType dtype, Expr value);  // the value itself when it already has `dtype`
Expr Reduce(ReduceOp op, std::vector<Var> axes, std::vector<Expr> extents, Expr init, Expr body,
            bool select_last = false);
Expr Load(const Buffer& buffer, Expr index);
// Row-major flat index of `indices` into `buffer`.
Expr FlatIndex(const Buffer& buffer, const std::vector<Expr>& indices);
// The product of a buffer's dimensions.
Expr ElementCount(const Buffer& buffer);

}  // namespace relay::kernels::kir

#include "kernels/compute/gpu_schedule.h"

#include <unordered_set>

#include "kernels/codegen/gpu/kernel_source.h"
#include "kernels/kir/rewrite.h"

namespace relay::kernels {

using namespace relay::kernels::kir;

namespace {

// A work-group per element serves outputs of at most this many elements
// (enough groups to fill a GPU, few enough that each has real work)...
constexpr int64_t kMostGroupElements = 16384;
// ...each reducing at least this many values (a few per lane).
constexpr int64_t kLeastGroupReduction = 1024;

// The position along each of `shape`'s axes of flat (row-major) index
// `flat`, the last axis fastest.
std::vector<Expr> Unflatten(const Expr& flat, const std::vector<Expr>& shape) {
  std::vector<Expr> indices(shape.size());
  Expr stride = Int(1);
  for (size_t axis = shape.size(); axis-- > 0;) {
    const Expr quotient = Binary(BinaryOp::kFloorDivide, flat, stride);
    indices[axis] = axis == 0 ? quotient : Binary(BinaryOp::kFloorMod, quotient, shape[axis]);
    stride = Multiply(stride, shape[axis]);
  }
  return indices;
}

Expr Product(const std::vector<Expr>& extents) {
  Expr product = Int(1);
  for (const Expr& extent : extents) product = Multiply(product, extent);
  return product;
}

// One thread per row (the output's last axis), when the element holds
// reductions that do not depend on its position along that axis (softmax's
// row maximum and sum, a normalisation's statistics): the thread computes
// each of them once, then the row's elements from them. With a thread per
// element, each would compute them again: a softmax over a fused matrix
// product would cost a row of dot products per element.
std::optional<kir::Kernel> RowPerThread(const std::string& name, std::vector<Buffer> params,
                                        const std::vector<Var>& dims, const Buffer& out,
                                        const TensorExpr& output) {
  const size_t rank = output.ndim();
  if (rank == 0) return std::nullopt;
  const Var row(new VarNode("row")), column(new VarNode("i"));
  std::vector<Expr> indices =
      Unflatten(row, std::vector<Expr>(output.shape.begin(), output.shape.end() - 1));
  indices.push_back(column);
  Expr element = output.at(indices);
  // A reduction is invariant along the row when it mentions neither the
  // column nor the axes of a reduction around it.
  std::unordered_set<const VarNode*> excluded{column.get()};
  const std::vector<const ReduceNode*> reductions = FindReductions(element);
  for (const ReduceNode* reduction : reductions) {
    for (const Var& axis : reduction->axes) excluded.insert(axis.get());
  }
  Replacements hoisted;
  std::vector<Stmt> prologue;
  std::vector<Buffer> row_values;
  // Innermost first, so that an outer reduction reads the inner ones' values.
  for (auto reduction = reductions.rbegin(); reduction != reductions.rend(); ++reduction) {
    const std::unordered_set<const VarNode*> free = FreeVariables(Expr(*reduction));
    bool invariant = true;
    for (const VarNode* var : free) invariant = invariant && !excluded.contains(var);
    if (!invariant || hoisted.contains(*reduction)) continue;
    row_values.push_back(Buffer(
        new BufferNode("row" + std::to_string(row_values.size()), (*reduction)->dtype, {Int(1)})));
    prologue.push_back(
        Stmt(new StoreNode(row_values.back(), Int(0), Substitute(Expr(*reduction), hoisted))));
    hoisted[*reduction] = Load(row_values.back(), Int(0));
  }
  if (hoisted.empty()) return std::nullopt;
  const Expr& inner = output.shape[rank - 1];
  prologue.push_back(Stmt(new ForNode(
      column, inner, ForKind::kSerial,
      Stmt(new StoreNode(out, Add(Multiply(row, inner), column), Substitute(element, hoisted))))));
  Stmt body(new SequenceNode(std::move(prologue)));
  for (const Buffer& value : row_values) body = Stmt(new AllocateNode(value, body));
  const Expr rows = Product(std::vector<Expr>(output.shape.begin(), output.shape.end() - 1));
  params.push_back(out);
  return kir::Kernel{name, std::move(params), 1, dims,
                     Stmt(new ForNode(row, rows, ForKind::kDeviceThreads, body))};
}

// The reduction operators a work-group can combine pairwise in a tree.
std::optional<BinaryOp> PairwiseCombine(const ReduceNode& reduce) {
  if (reduce.body->dtype == DType::kBool) return std::nullopt;
  switch (reduce.op) {
    case ReduceOp::kSum:
      return BinaryOp::kAdd;
    case ReduceOp::kMaximum:
      return BinaryOp::kMaximum;
    case ReduceOp::kMinimum:
      return BinaryOp::kMinimum;
    default:
      return std::nullopt;  // products (overflow order) and arg-reductions stay serial
  }
}

// A work-group per output element, for few elements that each reduce many
// values (a matrix-vector product: an LSTM step's dense; a sum over a long
// axis): its lanes each combine a strided share of the reduction's space
// (neighbouring lanes reading neighbouring elements), then combine their
// partial values in shared memory in a tree, and lane 0 stores the element
// with the reduction's value. With a thread per element, a handful of
// threads would each read a whole row.
std::optional<kir::Kernel> GroupPerElement(const std::string& name, std::vector<Buffer> params,
                                           const std::vector<Var>& dims, const Buffer& out,
                                           const TensorExpr& output) {
  const Expr element_count = Product(output.shape);
  const auto* elements = As<IntImmNode>(element_count);
  if (elements == nullptr || elements->value > kMostGroupElements || elements->value == 0) {
    return std::nullopt;
  }
  const Var group(new VarNode("group")), lane(new VarNode("lane"));
  const Expr element = output.at(Unflatten(group, output.shape));
  const std::vector<const ReduceNode*> reductions = FindReductions(element);
  if (reductions.size() != 1) return std::nullopt;
  const ReduceNode& reduce = *reductions[0];
  const std::optional<BinaryOp> combine = PairwiseCombine(reduce);
  const Expr space_size = Product(reduce.extents);
  const auto* space = As<IntImmNode>(space_size);
  if (!combine || space == nullptr || space->value < kLeastGroupReduction) return std::nullopt;

  const int64_t lanes = gpu::kGroupLanes;
  const DType dtype = reduce.body->dtype;
  const Buffer partial(new BufferNode("partial", dtype, {Int(1)}));
  const Buffer shared(new BufferNode("shared", dtype, {Int(lanes)}));
  // This lane's share: positions lane, lane + lanes, ... of the flat space.
  const Var step(new VarNode("step"));
  const Expr flat = Add(Multiply(step, Int(lanes)), lane);
  Replacements axes;
  const std::vector<Expr> position = Unflatten(flat, reduce.extents);
  for (size_t axis = 0; axis < reduce.axes.size(); ++axis)
    axes[reduce.axes[axis].get()] = position[axis];
  const Expr term = Substitute(reduce.body, axes);
  std::vector<Stmt> lane_body;
  lane_body.push_back(Stmt(new StoreNode(partial, Int(0), reduce.init)));
  lane_body.push_back(Stmt(new ForNode(
      step, Int((space->value + lanes - 1) / lanes), ForKind::kSerial,
      Stmt(new IfThenElseNode(
          Binary(BinaryOp::kLess, flat, Int(space->value)),
          Stmt(new StoreNode(partial, Int(0), Binary(*combine, Load(partial, Int(0)), term))),
          nullptr)))));
  lane_body.push_back(Stmt(new StoreNode(shared, lane, Load(partial, Int(0)))));
  lane_body.push_back(Stmt(new BarrierNode()));
  // The tree: halves fold onto the lower half, every lane at every barrier.
  for (int64_t half = lanes / 2; half >= 1; half /= 2) {
    lane_body.push_back(
        Stmt(new IfThenElseNode(Binary(BinaryOp::kLess, lane, Int(half)),
                                Stmt(new StoreNode(shared, lane,
                                                   Binary(*combine, Load(shared, lane),
                                                          Load(shared, Add(lane, Int(half)))))),
                                nullptr)));
    lane_body.push_back(Stmt(new BarrierNode()));
  }
  const Expr value =
      Substitute(element, {{static_cast<const ExprNode*>(&reduce), Load(shared, Int(0))}});
  lane_body.push_back(Stmt(new IfThenElseNode(Binary(BinaryOp::kEqual, lane, Int(0)),
                                              Stmt(new StoreNode(out, group, value)), nullptr)));
  Stmt lanes_loop(new ForNode(lane, Int(lanes), ForKind::kDeviceLanes,
                              Stmt(new AllocateNode(partial, Stmt(new SequenceNode(lane_body))))));
  params.push_back(out);
  return kir::Kernel{
      name, std::move(params), 1, dims,
      Stmt(new ForNode(group, Int(elements->value), ForKind::kDeviceGroups,
                       Stmt(new AllocateNode(shared, lanes_loop, MemoryScope::kShared))))};
}

}  // namespace

kir::Kernel BuildGpuKernel(const std::string& name, const std::vector<Buffer>& inputs,
                           const std::vector<Var>& dims, const TensorExpr& output) {
  const Buffer out(new BufferNode("out", output.dtype, output.shape));
  if (std::optional<kir::Kernel> per_group = GroupPerElement(name, inputs, dims, out, output)) {
    return std::move(*per_group);
  }
  if (std::optional<kir::Kernel> per_row = RowPerThread(name, inputs, dims, out, output)) {
    return std::move(*per_row);
  }
  // One thread per element, neighbouring threads storing neighbouring
  // elements (coalesced).
  const Var thread(new VarNode("thread"));
  Stmt store(new StoreNode(out, thread, output.at(Unflatten(thread, output.shape))));
  std::vector<Buffer> params = inputs;
  params.push_back(out);
  return kir::Kernel{
      name, std::move(params), 1, dims,
      Stmt(new ForNode(thread, Product(output.shape), ForKind::kDeviceThreads, store))};
}

}  // namespace relay::kernels

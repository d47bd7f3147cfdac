#include "kernels/compute/gpu_schedule.h"

#include <unordered_set>

#include "kernels/kir/rewrite.h"

namespace relay::kernels {

using namespace relay::kernels::kir;

namespace {

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

}  // namespace

kir::Kernel BuildGpuKernel(const std::string& name, const std::vector<Buffer>& inputs,
                           const std::vector<Var>& dims, const TensorExpr& output) {
  const Buffer out(new BufferNode("out", output.dtype, output.shape));
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

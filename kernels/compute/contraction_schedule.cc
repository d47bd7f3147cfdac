#include "kernels/compute/contraction_schedule.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "kernels/compute/pad_schedule.h"
#include "kernels/kir/rewrite.h"

namespace relay::kernels {

using namespace relay::kernels::kir;

namespace {

// Less work than this (multiply-adds) does not pay for packing.
constexpr int64_t kMinimumWork = int64_t{1} << 15;
// The small-rows schedule gives each parallel task at least this much work
// (multiply-adds): a few microseconds, well above a wake-up of the pool.
constexpr int64_t kSmallRowsWorkPerTask = int64_t{1} << 15;
// When all of y's packed panels (for one batch) take at most this many bytes,
// they stay in a core's cache while a task sweeps them for each row block:
// row blocks go outermost, and x (the larger operand then, often an im2col
// of a convolution's input) is read once instead of once per panel.
constexpr int64_t kPanelsInCacheBytes = int64_t{192} << 10;
// y read in place (a vector row of each of its k rows per panel) for at
// most this many k: more rows than that, each in a page of its own, would
// not stay in the nearest cache and TLB while the panel's row blocks use
// them.
constexpr int64_t kInPlaceDepthLimit = 1024;
// ... and for more than this many k, only when its k rows' stride spreads
// them over the cache's sets.
constexpr int64_t kConflictFreeDepth = 64;
// Packed y panels of more than this many bytes (for one batch) are
// prefetched panel by panel (see the compute loop), and so are panels
// too many for the cache that each task's run of at most this many row
// blocks reads.
constexpr int64_t kPrefetchPanelsBytes = int64_t{1} << 20;
constexpr int64_t kPrefetchMaximumBlocks = 16;
// The wide tile (ContractionTiling::wide_column_bytes) serves products of
// at least this many rows and this many k, or of at least
// kWidePlainTileMinimum of each when x is a plain operand.
constexpr int64_t kWideTileMinimumRows = 128;
constexpr int64_t kWideTileMinimumDepth = 256;
constexpr int64_t kWidePlainTileMinimum = 16;
// The tall tile (ContractionTiling::tall_rows) serves products of at least
// this many rows.
constexpr int64_t kTallTileMinimumRows = 48;
// Window panels (AxisRoles::window_panels) serve products of at most this
// many k: where each column's product is short, storing a tile of output
// channels as columns would scatter it across planes and cost as much as
// the product.
constexpr int64_t kWindowPanelsMaximumDepth = 256;

Expr Min(Expr a, Expr b) {
  return Binary(BinaryOp::kMinimum, std::move(a), std::move(b));
}
Expr Div(Expr a, int64_t b) {
  return b == 1 ? a : Binary(BinaryOp::kFloorDivide, std::move(a), Int(b));
}
Expr Mod(Expr a, int64_t b) {
  return b == 1 ? Int(0) : Binary(BinaryOp::kFloorMod, std::move(a), Int(b));
}
int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
int64_t Product(const std::vector<int64_t>& extents) {
  int64_t product = 1;
  for (int64_t extent : extents) product *= extent;
  return product;
}
// The extents of the output axes `which`.
std::vector<int64_t> ExtentsOf(const std::vector<size_t>& which,
                               const std::vector<int64_t>& out_extents) {
  std::vector<int64_t> extents;
  for (size_t axis : which) extents.push_back(out_extents[axis]);
  return extents;
}

// The per-axis indices of the row-major position `flat` in `extents`.
std::vector<Expr> Unflatten(const Expr& flat, const std::vector<int64_t>& extents) {
  std::vector<Expr> indices(extents.size());
  int64_t stride = 1;
  for (size_t axis = extents.size(); axis-- > 0;) {
    Expr quotient = Div(flat, stride);
    indices[axis] = axis == 0 ? quotient : Mod(quotient, extents[axis]);
    stride *= extents[axis];
  }
  return indices;
}

// The row-major position of `indices` in `extents`.
Expr Flatten(const std::vector<Expr>& indices, const std::vector<int64_t>& extents) {
  Expr flat = Int(0);
  for (size_t axis = 0; axis < indices.size(); ++axis)
    flat = Add(Multiply(flat, Int(extents[axis])), indices[axis]);
  return flat;
}

// Wraps `body` in one loop per variable, the first outermost.
Stmt Nest(const std::vector<Var>& vars, const std::vector<int64_t>& extents, ForKind kind,
          Stmt body) {
  for (size_t axis = vars.size(); axis-- > 0;)
    body = Stmt(new ForNode(vars[axis], Int(extents[axis]), kind, std::move(body)));
  return body;
}

Stmt Loop(const Var& var, Expr extent, ForKind kind, Stmt body) {
  return Stmt(new ForNode(var, std::move(extent), kind, std::move(body)));
}

// Whether reading `operand` costs more than a load: a select (padding) or
// index arithmetic beyond sums and products (window positions). Such an
// operand is packed once rather than evaluated per multiply-add.
bool NeedsPacking(const Expr& operand) {
  if (operand->node_kind() == NodeKind::kSelect) return true;
  if (const auto* binary = As<BinaryNode>(operand)) {
    if (binary->op != BinaryOp::kAdd && binary->op != BinaryOp::kSubtract &&
        binary->op != BinaryOp::kMultiply) {
      return true;
    }
  }
  for (const Expr& child : Operands(operand)) {
    if (NeedsPacking(child)) return true;
  }
  return false;
}

// Whether `operand` is a plain load that reads the output axes `which`
// (consecutive, in order) as one contiguous run: each axis's stride the
// product of the later ones' extents.
bool ContiguousAlong(const Expr& operand, const std::vector<size_t>& which,
                     const std::vector<Var>& axes, const std::vector<int64_t>& extents) {
  // Every other variable (output axes, the sum's axes) at 0.
  std::vector<Var> others;
  if (const auto* load = As<LoadNode>(operand)) {
    for (const VarNode* var : FreeVariables(load->index)) others.push_back(Var(var));
  }
  int64_t stride = 1;
  for (size_t index = which.size(); index-- > 0;) {
    const size_t axis = which[index];
    if (StrideAlong(operand, axes[axis], others) != stride) return false;
    stride *= extents[axis];
  }
  return true;
}

// Whether `operand` is a plain load that reads the sum's one axis of more
// than one element contiguously (its others have one): a dense layer's
// data or weight, a 1x1 convolution's weight; not a convolution's window.
bool PlainAlongOneK(const Expr& operand, const std::vector<Var>& axes,
                    const std::vector<Var>& k_axes, const std::vector<int64_t>& k_extents) {
  std::optional<size_t> along;
  for (size_t index = 0; index < k_extents.size(); ++index) {
    if (k_extents[index] == 1) continue;
    if (along) return false;
    along = index;
  }
  if (!along) return false;
  std::vector<Var> others(axes.begin(), axes.end());
  others.insert(others.end(), k_axes.begin(), k_axes.end());
  return StrideAlong(operand, k_axes[*along], others) == 1;
}

// The output axes by which operand they index.
struct AxisRoles {
  // Mentioned by y only: the vectorised, packed axis. Usually one; several
  // when they are the output's last axes (a 1x1 convolution's output pixels
  // (oh, ow)), flattened into one. Then y reads them as one contiguous run,
  // or (`contiguous_columns` false: at stride 2, say) y must be packed.
  std::vector<size_t> columns;
  bool contiguous_columns = true;
  std::vector<size_t> rows;   // mentioned by x only
  std::vector<size_t> batch;  // the rest
  // The column is the output's last axis alone (the others y mentions are
  // batch axes), along which y reads with gaps: a strided convolution's
  // window, whose whole im2col would copy its input many times over. Each
  // task packs the panel it computes, just before computing it.
  bool window_panels = false;
  size_t column() const { return columns.back(); }
};

// `roles` with only its last column axis as the column, the others batch
// axes: the window panels of a convolution whose output pixels y reads with
// gaps (at stride 2). Nothing when y reads the last axis contiguously.
std::optional<AxisRoles> WindowColumns(AxisRoles roles, const std::vector<Var>& axes,
                                       const Expr& y) {
  std::vector<Var> others;
  if (const auto* load = As<LoadNode>(y)) {
    for (const VarNode* var : FreeVariables(load->index)) others.push_back(Var(var));
  }
  const std::optional<int64_t> stride = StrideAlong(y, axes[roles.column()], others);
  if (!stride || *stride == 1) return std::nullopt;
  roles.batch.insert(roles.batch.end(), roles.columns.begin(), roles.columns.end() - 1);
  std::sort(roles.batch.begin(), roles.batch.end());
  roles.columns = {roles.column()};
  roles.contiguous_columns = true;
  roles.window_panels = true;
  return roles;
}

// Roles for x and y, or nothing when no axis is mentioned by y alone.
std::optional<AxisRoles> ClassifyAxes(const std::vector<Var>& axes,
                                      const std::vector<int64_t>& extents, const Expr& x,
                                      const Expr& y) {
  AxisRoles roles;
  std::vector<size_t> y_only;
  for (size_t axis = 0; axis < axes.size(); ++axis) {
    std::unordered_set<const VarNode*> var{axes[axis].get()};
    bool in_x = MentionsAny(x, var), in_y = MentionsAny(y, var);
    if (in_y && !in_x) {
      y_only.push_back(axis);
    } else if (in_x && !in_y) {
      roles.rows.push_back(axis);
    } else {
      roles.batch.push_back(axis);
    }
  }
  if (roles.rows.empty()) {
    // An axis neither operand mentions (one of extent 1, which broadcasting
    // indexes by a constant 0) serves as the row axis.
    for (size_t position = 0; position < roles.batch.size(); ++position) {
      std::unordered_set<const VarNode*> var{axes[roles.batch[position]].get()};
      if (!MentionsAny(x, var) && !MentionsAny(y, var)) {
        roles.rows.push_back(roles.batch[position]);
        roles.batch.erase(roles.batch.begin() + std::ptrdiff_t(position));
        break;
      }
    }
  }
  // Of several axes y alone mentions, those of extent 1 (a batch of one)
  // are batch axes.
  if (y_only.size() > 1) {
    for (size_t position = y_only.size(); position-- > 0 && y_only.size() > 1;) {
      if (extents[y_only[position]] != 1) continue;
      roles.batch.push_back(y_only[position]);
      y_only.erase(y_only.begin() + std::ptrdiff_t(position));
    }
    std::sort(roles.batch.begin(), roles.batch.end());
  }
  if (y_only.empty() || roles.rows.empty()) return std::nullopt;
  // Several column axes: the output's last ones, in order.
  if (y_only.size() > 1) {
    for (size_t index = 0; index < y_only.size(); ++index) {
      if (y_only[index] != axes.size() - y_only.size() + index) return std::nullopt;
    }
    roles.contiguous_columns = ContiguousAlong(y, y_only, axes, extents);
  }
  roles.columns = y_only;
  return roles;
}

// The column axes' values at flat column `column`.
void BindColumns(const AxisRoles& roles, const std::vector<Var>& axes,
                 const std::vector<int64_t>& extents, const Expr& column, Replacements& at) {
  std::vector<int64_t> column_extents;
  for (size_t axis : roles.columns) column_extents.push_back(extents[axis]);
  const std::vector<Expr> values = Unflatten(column, column_extents);
  for (size_t index = 0; index < roles.columns.size(); ++index)
    at[axes[roles.columns[index]].get()] = values[index];
}

// `load` (a plain load, contiguous along the flattened columns) at flat
// column `column`, with `at` binding every other axis: its index at column
// 0 plus the column, so that no division by an axis's extent is left.
Expr LoadAtColumn(const AxisRoles& roles, const std::vector<Var>& axes, const Expr& load,
                  const Expr& column, Replacements at) {
  for (size_t axis : roles.columns) at[axes[axis].get()] = Int(0);
  const auto* node = As<LoadNode>(load);
  return Load(node->buffer, Add(Substitute(node->index, at), column));
}

// The position in `inputs` of the one buffer `operand` loads from, when it
// loads from one only and that buffer's shape is constant.
std::optional<size_t> SoleInputRead(const Expr& operand, const std::vector<Buffer>& inputs) {
  std::vector<Expr> loads;
  CollectLoads(operand, nullptr, loads);
  if (loads.empty()) return std::nullopt;
  const BufferNode* buffer = As<LoadNode>(loads[0])->buffer.get();
  for (const Expr& load : loads) {
    if (As<LoadNode>(load)->buffer.get() != buffer) return std::nullopt;
  }
  for (const Expr& dimension : buffer->shape) {
    if (As<IntImmNode>(dimension) == nullptr) return std::nullopt;
  }
  for (size_t index = 0; index < inputs.size(); ++index) {
    if (inputs[index].get() == buffer) return index;
  }
  return std::nullopt;
}

// The sum of `count` consecutive elements of `tile` from `first` (a
// vector's horizontal sum): a sum over a lane axis, which the LLVM lowering
// makes one vector reduction.
Expr SumOfLanes(const Buffer& tile, int64_t first, int64_t count) {
  if (count == 1) return Load(tile, Int(first));
  Var lane(new VarNode("lane"));
  return Expr(new ReduceNode(ReduceOp::kSum, {lane}, {Int(count)}, Float(0, tile->dtype),
                             Load(tile, Add(Int(first), lane))));
}

// What the schedules need to know of a contraction's output element.
struct Contraction {
  std::vector<int64_t> out_extents;
  std::vector<Var> axes;  // one per output axis
  Expr element;           // the output element at `axes`
  const ReduceNode* sum = nullptr;
  DType dtype = DType::kFloat32;
  Expr x, y;  // the product's operands; y has the column axis
  AxisRoles roles;
  std::vector<int64_t> k_extents;
};

// The small-rows schedule described in the header, or nothing when the
// operands are not both contiguous along one k axis.
std::optional<Kernel> BuildSmallRowsKernel(const std::string& name,
                                           const std::vector<Buffer>& inputs,
                                           const TensorExpr& output, const Contraction& c,
                                           const ContractionTiling& tiling) {
  if (c.k_extents.size() != 1 || c.roles.columns.size() != 1 || NeedsPacking(c.x) ||
      NeedsPacking(c.y)) {
    return std::nullopt;
  }
  const Var& k_var = c.sum->axes[0];
  if (StrideAlong(c.x, k_var, c.axes) != 1 || StrideAlong(c.y, k_var, c.axes) != 1)
    return std::nullopt;

  auto extents_of = [&](const std::vector<size_t>& which) {
    return ExtentsOf(which, c.out_extents);
  };
  const std::vector<int64_t> row_extents = extents_of(c.roles.rows);
  const std::vector<int64_t> batch_extents = extents_of(c.roles.batch);
  const int64_t rows = Product(row_extents), columns = c.out_extents[c.roles.column()];
  const int64_t depth = c.k_extents[0], batches = Product(batch_extents);
  // Register budget (sixteen vectors): R x C accumulators, R values of x
  // and the C of y in flight.
  const int64_t tile_rows = std::min<int64_t>(rows, 4);
  const int64_t tile_columns = tile_rows <= 2 ? 4 : tile_rows == 3 ? 3 : 2;
  const int64_t lanes =
      std::max<int64_t>(1, tiling.vector_bytes / static_cast<int64_t>(DTypeSize(c.dtype)));
  const int64_t row_blocks = CeilDiv(rows, tile_rows);
  const int64_t column_blocks = CeilDiv(columns, tile_columns);
  const int64_t units = batches * row_blocks * column_blocks;
  // Waking the thread pool pays off only for enough multiply-adds a task.
  const int64_t work = batches * rows * columns * depth;
  const int64_t wanted_tasks = std::clamp<int64_t>(work / kSmallRowsWorkPerTask, 1,
                                                   std::max<int64_t>(1, tiling.parallel_tasks));
  const int64_t units_per_task = CeilDiv(units, wanted_tasks);
  const int64_t tasks = CeilDiv(units, units_per_task);
  const int64_t k_vectors = depth / lanes, k_tail = depth % lanes;

  Var task(new VarNode("task")), step(new VarNode("unit")), kv(new VarNode("kv"));
  Var kt(new VarNode("kt")), r(new VarNode("r")), col(new VarNode("c")), lane(new VarNode("l"));
  // The unit: (batch, column block, row block), row blocks fastest, so that
  // the few columns of y a unit reads stay in the nearest cache while every
  // row block uses them: y is read from memory once per call (x, a few
  // rows, stays cached throughout).
  const Expr unit = Add(Multiply(task, Int(units_per_task)), step);
  const Expr row_block = Mod(unit, row_blocks);
  const Expr column_block = Mod(Div(unit, row_blocks), column_blocks);
  const std::vector<Expr> batch_values =
      Unflatten(Div(unit, column_blocks * row_blocks), batch_extents);
  const Expr row0 = Multiply(row_block, Int(tile_rows));
  const Expr column0 = Multiply(column_block, Int(tile_columns));
  const Expr row = Add(row0, r), column = Add(column0, col);

  auto bind = [&](const Expr& row_value, const Expr& column_value, Replacements& at) {
    const std::vector<Expr> row_indices = Unflatten(row_value, row_extents);
    for (size_t index = 0; index < c.roles.rows.size(); ++index)
      at[c.axes[c.roles.rows[index]].get()] = row_indices[index];
    for (size_t index = 0; index < c.roles.batch.size(); ++index)
      at[c.axes[c.roles.batch[index]].get()] = batch_values[index];
    at[c.axes[c.roles.column()].get()] = column_value;
  };
  // Operands at k, with rows and columns past the end clamped to the last
  // (computed again, never stored).
  auto product_at = [&](const Expr& k) {
    Replacements at;
    bind(Min(row, Int(rows - 1)), Min(column, Int(columns - 1)), at);
    at[k_var.get()] = k;
    return Binary(BinaryOp::kMultiply, Substitute(c.x, at), Substitute(c.y, at));
  };

  const Buffer tile(new BufferNode("tile", c.dtype, {Int(tile_rows * tile_columns * lanes)}));
  const Expr accumulator = Multiply(Add(Multiply(r, Int(tile_columns)), col), Int(lanes));
  auto over_accumulators = [&](Stmt body) {
    return Loop(r, Int(tile_rows), ForKind::kUnrolled,
                Loop(col, Int(tile_columns), ForKind::kUnrolled, std::move(body)));
  };
  std::vector<Stmt> block;
  block.push_back(
      over_accumulators(Loop(lane, Int(lanes), ForKind::kVectorized,
                             Stmt(new StoreNode(tile, Add(accumulator, lane), c.sum->init)))));
  if (k_vectors > 0) {
    const Expr index = Add(accumulator, lane);
    block.push_back(
        Loop(kv, Int(k_vectors), ForKind::kSerial,
             over_accumulators(Loop(
                 lane, Int(lanes), ForKind::kVectorized,
                 Stmt(new StoreNode(
                     tile, index,
                     Add(Load(tile, index), product_at(Add(Multiply(kv, Int(lanes)), lane)))))))));
  }
  if (k_tail > 0) {
    block.push_back(
        Loop(kt, Int(k_tail), ForKind::kSerial,
             over_accumulators(Stmt(new StoreNode(
                 tile, accumulator,
                 Add(Load(tile, accumulator), product_at(Add(Int(k_vectors * lanes), kt))))))));
  }
  // The epilogue on each accumulator's lanes summed, for the block's valid
  // rows and columns.
  {
    const Buffer out(new BufferNode("out", output.dtype, output.shape));
    std::vector<Stmt> stores;
    for (int64_t tile_row = 0; tile_row < tile_rows; ++tile_row) {
      for (int64_t tile_column = 0; tile_column < tile_columns; ++tile_column) {
        Replacements at;
        const Expr this_row = Add(row0, Int(tile_row)),
                   this_column = Add(column0, Int(tile_column));
        bind(this_row, this_column, at);
        std::vector<Expr> out_indices;
        for (const Var& axis : c.axes) out_indices.push_back(at.at(axis.get()));
        at[c.sum] = SumOfLanes(tile, (tile_row * tile_columns + tile_column) * lanes, lanes);
        Stmt store(new StoreNode(out, FlatIndex(out, out_indices), Substitute(c.element, at)));
        Expr inside = Binary(BinaryOp::kAnd, Binary(BinaryOp::kLess, this_row, Int(rows)),
                             Binary(BinaryOp::kLess, this_column, Int(columns)));
        stores.push_back(Stmt(new IfThenElseNode(inside, store, nullptr)));
      }
    }
    block.push_back(Stmt(new SequenceNode(std::move(stores))));
    Stmt units_of_task = Loop(
        step, Min(Int(units_per_task), Subtract(Int(units), Multiply(task, Int(units_per_task)))),
        ForKind::kSerial, Stmt(new AllocateNode(tile, Stmt(new SequenceNode(std::move(block))))));
    std::vector<Buffer> params = inputs;
    params.push_back(out);
    return Kernel{
        name,
        std::move(params),
        1,
        {},
        // Alternating: every call reads the whole weight, in the same shares
        // (devices/cpu/thread_pool.h).
        Loop(task, Int(tasks), tasks > 1 ? ForKind::kParallelAlternating : ForKind::kSerial,
             units_of_task)};
  }
}

}  // namespace

std::optional<Kernel> BuildContractionKernel(const std::string& name,
                                             const std::vector<Buffer>& inputs,
                                             const TensorExpr& output,
                                             const ContractionTiling& tiling,
                                             const ConstantPadding* padding) {
  std::vector<int64_t> out_extents;
  for (const Expr& dimension : output.shape) {
    const auto* constant = As<IntImmNode>(dimension);
    if (constant == nullptr || constant->value <= 0) return std::nullopt;
    out_extents.push_back(constant->value);
  }
  if (out_extents.empty()) return std::nullopt;
  std::vector<Var> axes;
  for (size_t axis = 0; axis < out_extents.size(); ++axis)
    axes.push_back(Var(new VarNode("i" + std::to_string(axis))));
  const Expr element = output.at(std::vector<Expr>(axes.begin(), axes.end()));

  // One floating-point sum of a product, starting from a constant.
  const std::vector<const ReduceNode*> reductions = FindReductions(element);
  if (reductions.size() != 1) return std::nullopt;
  const ReduceNode* sum = reductions[0];
  const DType dtype = sum->body->dtype;
  if (sum->op != ReduceOp::kSum || (dtype != DType::kFloat32 && dtype != DType::kFloat64) ||
      As<FloatImmNode>(sum->init) == nullptr) {
    return std::nullopt;
  }
  const auto* product = As<BinaryNode>(sum->body);
  if (product == nullptr || product->op != BinaryOp::kMultiply) return std::nullopt;
  std::vector<int64_t> k_extents;
  for (const Expr& extent : sum->extents) {
    const auto* constant = As<IntImmNode>(extent);
    if (constant == nullptr || constant->value <= 0) return std::nullopt;
    k_extents.push_back(constant->value);
  }

  // y is the operand with axes of its own, preferably the output's last (so
  // that a tile stores whole vectors, and an epilogue's residual loads them:
  // the other way round, each is a scatter or gather across planes), unless
  // those columns leave more than a seventh of their tiles empty and the
  // other way tiles clearly better (49 pixels of a 7x7 convolution as
  // columns: two panels of 32, a third of them wasted, against channels
  // that tile evenly; the 196 of a 14x14 map fill 7 panels well enough).
  Expr x = product->a, y = product->b;
  // Flattened columns that y does not read contiguously are packed, which
  // pays when the panels hold no more than what y reads (a 1x1 convolution
  // at stride 2: a quarter of its data), not when they repeat it (a 3x3
  // window's nine copies of each pixel: there the channels are the
  // columns, of the packed weight, and the data is read in place).
  const int64_t depth = Product(k_extents);
  const int64_t dtype_columns =
      std::max<int64_t>(1, tiling.column_bytes / static_cast<int64_t>(DTypeSize(dtype)));
  auto classify = [&](const Expr& row_operand, const Expr& column_operand) {
    std::optional<AxisRoles> classified =
        ClassifyAxes(axes, out_extents, row_operand, column_operand);
    if (classified && !classified->contiguous_columns) {
      const std::optional<size_t> read = SoleInputRead(column_operand, inputs);
      const int64_t packed = Product(ExtentsOf(classified->columns, out_extents)) * depth;
      // SoleInputRead finds only buffers of constant shape.
      if (!read || packed > As<IntImmNode>(ElementCount(inputs[*read]))->value) {
        // Window panels hold a whole tile's columns (the last panel is
        // shifted back to end at the last column).
        classified = depth <= kWindowPanelsMaximumDepth && classified->columns.size() > 1 &&
                             out_extents[classified->column()] >= dtype_columns
                         ? WindowColumns(*classified, axes, column_operand)
                         : std::nullopt;
      }
    }
    return classified;
  };
  std::optional<AxisRoles> roles = classify(x, y);
  std::optional<AxisRoles> swapped = classify(y, x);
  const size_t last = out_extents.size() - 1;
  auto extents_of = [&](const std::vector<size_t>& which) { return ExtentsOf(which, out_extents); };
  auto tiled_work = [&](const AxisRoles& which) {
    const int64_t rows = Product(extents_of(which.rows));
    const int64_t columns = Product(extents_of(which.columns));
    return Product(extents_of(which.batch)) * CeilDiv(rows, tiling.rows) * tiling.rows *
           CeilDiv(columns, dtype_columns) * dtype_columns;
  };
  auto fills_panels = [&](const AxisRoles& which) {
    const int64_t columns = Product(extents_of(which.columns));
    return 7 * CeilDiv(columns, dtype_columns) * dtype_columns <= 8 * columns;
  };
  if (swapped && (!roles || (swapped->column() == last && roles->column() != last &&
                             (fills_panels(*swapped) ||
                              10 * tiled_work(*swapped) <= 11 * tiled_work(*roles))))) {
    std::swap(x, y);
    roles = swapped;
  }
  if (!roles) return std::nullopt;

  // A padded output is stored by the packed schedule's tiles, one output
  // element each, at its position shifted into the padding; flattened
  // columns only stay contiguous there when the padding leaves all but
  // their first axis alone.
  if (padding != nullptr) {
    if (Product(extents_of(roles->rows)) <= kSmallRowsLimit) return std::nullopt;
    for (size_t index = 1; index < roles->columns.size(); ++index) {
      const size_t axis = roles->columns[index];
      if (padding->before[axis] != 0 || padding->after[axis] != 0) return std::nullopt;
    }
  }
  if (Product(extents_of(roles->rows)) <= kSmallRowsLimit) {
    const Contraction contraction{out_extents, axes, element, sum, dtype, x, y, *roles, k_extents};
    if (std::optional<Kernel> kernel =
            BuildSmallRowsKernel(name, inputs, output, contraction, tiling)) {
      return kernel;
    }
  }

  // The batch axes each operand depends on: an operand is packed once per
  // combination of those only (a weight shared by a batch is packed once).
  auto batch_axes_of = [&](const Expr& operand) {
    std::vector<size_t> which;
    for (size_t axis : roles->batch) {
      if (MentionsAny(operand, {axes[axis].get()})) which.push_back(axis);
    }
    return which;
  };
  const std::vector<size_t> x_batch = batch_axes_of(x), y_batch = batch_axes_of(y);
  const std::vector<int64_t> row_extents = extents_of(roles->rows);
  const std::vector<int64_t> batch_extents = extents_of(roles->batch);
  const std::vector<int64_t> x_batch_extents = extents_of(x_batch);
  const std::vector<int64_t> y_batch_extents = extents_of(y_batch);
  const std::vector<int64_t> column_extents = extents_of(roles->columns);
  const int64_t rows = Product(row_extents), columns = Product(column_extents);
  const int64_t batches = Product(batch_extents);
  int64_t tile_rows = tiling.rows;
  const int64_t narrow_columns =
      std::max<int64_t>(1, tiling.column_bytes / static_cast<int64_t>(DTypeSize(dtype)));
  if (batches * rows * columns * depth < kMinimumWork || 2 * columns < narrow_columns) {
    return std::nullopt;
  }
  // The wide tile, where the target has one, where its columns divide into
  // it: twice the multiply-adds per broadcast of x. It pays for long
  // products over many rows (stride-1 3x3 convolutions of 64-256 channels:
  // 15-25% faster), and for any but tiny ones when x is a plain operand
  // read along one k axis (a 1x1 convolution's weight, a dense layer's
  // data: MobileNetV2's 1x1 layers of 16-24 channels, 3% of the model).
  // With x a window, a short product (a 7x7 stem's 147 k: 35% slower) or
  // few rows (a 7x7 map's 49 pixels: 22% slower) do worse on it.
  const int64_t wide_columns = tiling.wide_column_bytes / static_cast<int64_t>(DTypeSize(dtype));
  const bool long_product = rows >= kWideTileMinimumRows && depth >= kWideTileMinimumDepth;
  const bool plain_product = rows >= kWidePlainTileMinimum && depth >= kWidePlainTileMinimum &&
                             PlainAlongOneK(x, axes, sum->axes, k_extents);
  const bool wide = wide_columns > narrow_columns && columns % wide_columns == 0 &&
                    (long_product || plain_product);
  const int64_t tile_columns = wide ? wide_columns : narrow_columns;
  // packed_x[xb][row block][r][k], packed_y[yb][panel][k][c]. x is read
  // in place when it is a plain load (a dense layer's data): packing would
  // only copy it. With row blocks outermost, each task packs x one row block
  // at a time, just before using it, into its own packed_x[task][r][k]: the
  // block is still in the nearest cache when the panels read it.
  const bool pack_x_operand = NeedsPacking(x);
  // y is read in place too when x is (so that the k loops are x's own, and
  // y's address along them a sum of strides) and y is a plain load
  // contiguous along the columns, not too deep for its rows to stay in
  // cache: a 1x1 convolution's data, whose packing would cost as much
  // memory traffic as the product itself. With fewer columns than a tile
  // has, there is no room for the last panel's shift (below): it is packed.
  // Nor when its k rows lie a multiple of 1 KiB apart (more than a few
  // dozen of them): they would share a handful of cache sets and evict each
  // other (a 1024-wide matmul's weight, 4 KiB apart: 117 GFLOP/s in place,
  // 300 packed).
  bool conflicting_rows = false;
  if (depth > kConflictFreeDepth) {
    std::vector<Var> others(axes.begin(), axes.end());
    others.insert(others.end(), sum->axes.begin(), sum->axes.end());
    for (size_t index = 0; index < sum->axes.size(); ++index) {
      if (k_extents[index] == 1) continue;
      const std::optional<int64_t> stride = StrideAlong(y, sum->axes[index], others);
      const int64_t bytes = stride.value_or(0) * int64_t(DTypeSize(dtype));
      if (bytes % 1024 == 0) conflicting_rows = true;
    }
  }
  const bool pack_y_operand =
      pack_x_operand || NeedsPacking(y) || !ContiguousAlong(y, roles->columns, axes, out_extents) ||
      columns < tile_columns || depth > kInPlaceDepthLimit || conflicting_rows;
  // The narrow tile takes `exact_rows` rows where that count divides the
  // rows and the usual count would leave more than a twentieth of its last
  // blocks' rows empty: a 7x7 map's 49 pixels in 9 blocks of 6 compute 54
  // rows, in 7 blocks of 7 none too many (MobileNetV2's 7x7 1x1 layers and
  // ResNet-18's 512-channel 3x3 ones: 9-13% faster). Where 6 rows waste
  // next to nothing (a 7x7 stem's 12544 pixels) 7 rows were 10% slower.
  const int64_t wasted_rows = CeilDiv(rows, tile_rows) * tile_rows - rows;
  if (!wide && tiling.exact_rows > 0 && rows % tiling.exact_rows == 0 && 20 * wasted_rows > rows) {
    tile_rows = tiling.exact_rows;
  } else if (!wide && !pack_y_operand && tiling.tall_rows > tile_rows &&
             rows >= kTallTileMinimumRows) {
    // With y read in place (a 1x1 convolution's data, its k rows a plane
    // apart, each vector row straddling cache lines), each row block reads
    // all of the panel's k rows again: the tall tile's twice as many rows
    // read them half as often (MobileNetV2's 14x14 1x1 layers: 7% faster).
    tile_rows = tiling.tall_rows;
  }
  const int64_t panels = CeilDiv(columns, tile_columns);
  const int64_t row_blocks = CeilDiv(rows, tile_rows);

  // Tasks: (batch, panel, chunk of row blocks), the chunk fastest so that a
  // thread's consecutive tasks share a panel; or, when the panels fit in
  // cache together, (batch, chunk of row blocks) sweeping every panel for
  // each row block.
  // With window panels, each task takes a run of (batch, panel) units, and
  // packs each unit's panel into a slot of its own before computing every
  // row block of it.
  const bool window_panels = roles->window_panels;
  const bool rows_outer =
      !window_panels &&
      panels * depth * tile_columns * int64_t(DTypeSize(dtype)) <= kPanelsInCacheBytes;
  const int64_t outer = rows_outer ? batches : batches * panels;
  int64_t chunks = std::clamp<int64_t>(CeilDiv(tiling.parallel_tasks, outer), 1, row_blocks);
  if (window_panels) chunks = 1;
  const int64_t blocks_per_chunk = CeilDiv(row_blocks, chunks);
  chunks = CeilDiv(row_blocks, blocks_per_chunk);
  const int64_t units = outer * chunks;
  const int64_t units_per_task =
      window_panels ? CeilDiv(units, std::min(tiling.parallel_tasks, units)) : 1;
  const int64_t tasks = CeilDiv(units, units_per_task);

  std::vector<Expr> out_shape = output.shape;
  if (padding != nullptr) {
    for (size_t axis = 0; axis < out_shape.size(); ++axis)
      out_shape[axis] = Int(padding->PaddedExtents()[axis]);
  }
  const Buffer out(new BufferNode("out", output.dtype, out_shape));
  // The output's flat index of the element at `indices`.
  auto out_position = [&](std::vector<Expr> indices) {
    if (padding != nullptr) {
      for (size_t axis = 0; axis < indices.size(); ++axis)
        indices[axis] = Add(indices[axis], Int(padding->before[axis]));
    }
    return FlatIndex(out, indices);
  };
  const int64_t packed_x_blocks = rows_outer ? tasks : Product(x_batch_extents) * row_blocks;
  const Buffer packed_x(
      new BufferNode("packed_x", dtype, {Int(packed_x_blocks * depth * tile_rows)}));
  const int64_t packed_y_panels = window_panels ? tasks : Product(y_batch_extents) * panels;
  const Buffer packed_y(
      new BufferNode("packed_y", dtype, {Int(packed_y_panels * depth * tile_columns)}));
  const std::vector<Var>& k_vars = sum->axes;
  const Expr k_flat = Flatten(std::vector<Expr>(k_vars.begin(), k_vars.end()), k_extents);
  auto bind_batch = [&](const std::vector<size_t>& which, const std::vector<Expr>& values,
                        Replacements& at) {
    for (size_t index = 0; index < which.size(); ++index)
      at[axes[which[index]].get()] = values[index];
  };
  auto bind_rows = [&](const Expr& row, Replacements& at) {
    bind_batch(roles->rows, Unflatten(row, row_extents), at);
  };

  // Packing y: column panel p holds y(.., column p * C + c, k) at [p][k][c],
  // zero past the last column.
  Stmt pack_y;
  {
    Var task(new VarNode("panel")), lane(new VarNode("c"));
    const Expr panel = Mod(task, panels);
    const Expr column = Add(Multiply(panel, Int(tile_columns)), lane);
    Replacements at;
    bind_batch(y_batch, Unflatten(Div(task, panels), y_batch_extents), at);
    const Expr clamped = Min(column, Int(columns - 1));
    Expr y_value;
    if (roles->columns.size() == 1) {
      at[axes[roles->column()].get()] = clamped;
      y_value = Substitute(y, at);
    } else if (roles->contiguous_columns) {
      y_value = LoadAtColumn(*roles, axes, y, clamped, at);
    } else {
      BindColumns(*roles, axes, out_extents, clamped, at);
      y_value = Substitute(y, at);
    }
    Expr value = Select(Binary(BinaryOp::kLess, column, Int(columns)), y_value, Float(0, dtype));
    Expr index = Add(Multiply(Add(Multiply(task, Int(depth)), k_flat), Int(tile_columns)), lane);
    pack_y = Loop(task, Int(Product(y_batch_extents) * panels), ForKind::kParallel,
                  Nest(k_vars, k_extents, ForKind::kSerial,
                       Loop(lane, Int(tile_columns), ForKind::kVectorized,
                            Stmt(new StoreNode(packed_y, index, value)))));
  }

  // Packing x: block b holds x(row R * (first row block) + r, .., k) at
  // [b][r][k]. Rows past the end repeat the last row (computed, never
  // stored). For a convolution this is im2col: the window's index arithmetic
  // and padding tests run once per element here instead of once per
  // multiply-add.
  auto pack_x_block = [&](const Expr& block, const Expr& row_block,
                          const std::vector<Expr>& batch_values) {
    Var lane(new VarNode("r"));
    Replacements at;
    bind_rows(Min(Add(Multiply(row_block, Int(tile_rows)), lane), Int(rows - 1)), at);
    bind_batch(x_batch, batch_values, at);
    Expr index = Add(Multiply(Add(Multiply(block, Int(tile_rows)), lane), Int(depth)), k_flat);
    return Nest(k_vars, k_extents, ForKind::kSerial,
                Loop(lane, Int(tile_rows), ForKind::kUnrolled,
                     Stmt(new StoreNode(packed_x, index, Substitute(x, at)))));
  };
  Stmt pack_x;  // all of x, before the products (panels outermost only)
  if (!rows_outer) {
    Var block(new VarNode("block"));
    pack_x = Loop(block, Int(Product(x_batch_extents) * row_blocks), ForKind::kParallel,
                  pack_x_block(block, Mod(block, row_blocks),
                               Unflatten(Div(block, row_blocks), x_batch_extents)));
  }

  Stmt compute;
  {
    Var task(new VarNode("task")), block(new VarNode("block")), k(new VarNode("k"));
    Var r(new VarNode("r")), c(new VarNode("c")), panel_var(new VarNode("panel"));
    Var local(new VarNode("unit"));
    // The task's (batch, panel, chunk of row blocks) unit: the task itself,
    // or with window panels each of its run in turn.
    const Expr unit = window_panels ? Add(Multiply(task, Int(units_per_task)), local) : Expr(task);
    const std::vector<Expr> batch_values = Unflatten(Div(unit, units / batches), batch_extents);
    auto batch_position = [&](const std::vector<size_t>& which) {
      std::vector<Expr> values;
      for (size_t axis : which) {
        size_t position =
            std::find(roles->batch.begin(), roles->batch.end(), axis) - roles->batch.begin();
        values.push_back(batch_values[position]);
      }
      return values;
    };
    const Expr panel = rows_outer ? Expr(panel_var) : Mod(Div(unit, chunks), panels);
    const Expr first_block = Multiply(Mod(unit, chunks), Int(blocks_per_chunk));
    const Expr row_block = Add(first_block, block);
    const Expr row0 = Multiply(row_block, Int(tile_rows));
    // y read in place, or packed in window panels, has no zero tail: the
    // last panel reads (and computes) the last `tile_columns` columns
    // instead, some of which the panel before has stored, and stores only
    // the others.
    const bool shift_last_panel = (!pack_y_operand || window_panels) && columns % tile_columns != 0;
    const Expr stored_from = Multiply(panel, Int(tile_columns));
    const Expr column0 =
        shift_last_panel ? Min(stored_from, Int(columns - tile_columns)) : stored_from;
    const Buffer tile(new BufferNode("tile", dtype, {Int(tile_rows * tile_columns)}));
    const std::vector<Expr> x_batch_values = batch_position(x_batch);
    // One block of `width` columns from column0, storing those from
    // stored_from on: the whole tile, or the narrower last panel (below).
    auto block_of = [&](int64_t width, const Expr& column0, const Expr& stored_from) -> Stmt {
      const Expr tile_index = Add(Multiply(r, Int(width)), c);
      auto over_tile = [&](Stmt body) {
        return Loop(r, Int(tile_rows), ForKind::kUnrolled,
                    Loop(c, Int(width), ForKind::kVectorized, std::move(body)));
      };

      Stmt clear = over_tile(Stmt(new StoreNode(tile, tile_index, sum->init)));

      // Per k: `rows` broadcast values of x times a vector row of y's panel.
      const Expr x_block =
          rows_outer
              ? Expr(task)
              : Add(Multiply(Flatten(x_batch_values, x_batch_extents), Int(row_blocks)), row_block);
      const Expr y_slot =
          window_panels
              ? Expr(task)
              : Add(Multiply(Flatten(batch_position(y_batch), y_batch_extents), Int(panels)),
                    panel);
      const Expr y_base = Multiply(y_slot, Int(depth));
      // Packed x is read along the flat k; x read in place (a dense layer's
      // data, an unpadded convolution's input) along its own k axes, one loop
      // each, so that its address is a sum of the loops' strides rather than
      // a division per multiply-add.
      Expr x_value;
      if (pack_x_operand) {
        x_value =
            Load(packed_x, Add(Multiply(Add(Multiply(x_block, Int(tile_rows)), r), Int(depth)), k));
      } else {
        Replacements at;
        bind_rows(Min(Add(row0, r), Int(rows - 1)), at);  // clamped: extra rows are not stored
        bind_batch(roles->batch, batch_values, at);
        x_value = Substitute(x, at);
      }
      const Expr k_position = pack_x_operand ? Expr(k) : k_flat;
      Expr y_value;
      if (pack_y_operand) {
        y_value = Load(packed_y, Add(Multiply(Add(y_base, k_position), Int(tile_columns)), c));
      } else {
        Replacements at;
        bind_batch(roles->batch, batch_values, at);
        y_value = LoadAtColumn(*roles, axes, y, Add(column0, c), at);
      }
      Stmt multiply_add_one = over_tile(Stmt(new StoreNode(
          tile, tile_index,
          Add(Load(tile, tile_index), Binary(BinaryOp::kMultiply, x_value, y_value)))));
      // Panels too many to stay in a core's cache come from memory, and the
      // first row block to read one would wait for it while the memory
      // system idles during the others: every fourth k step of the task's row
      // blocks (every second, with the wide tile's twice longer steps) also
      // prefetches a cache line of what follows the panel (a line per 24
      // cycles or so, about a core's share of memory bandwidth), so that the
      // next panel streams in while this one is used (512-channel 3x3
      // convolutions in a model: 9.4 MB of weights, 1.0 -> 0.88 ms each).
      // So do smaller panels when a task has few row blocks to spread a
      // panel's wait over (MobileNetV2's 7x7 1x1 layers, 368-614 KB of
      // weights over 7 row blocks: 690-815 -> 626-720 us summed).
      const int64_t y_bytes = panels * depth * tile_columns * int64_t(DTypeSize(dtype));
      if (pack_y_operand && !rows_outer && !window_panels &&
          (y_bytes > kPrefetchPanelsBytes || blocks_per_chunk <= kPrefetchMaximumBlocks)) {
        const int64_t line_elements = std::max<int64_t>(1, 64 / int64_t(DTypeSize(dtype)));
        const int64_t k_steps_per_line = std::max<int64_t>(1, 4 * narrow_columns / tile_columns);
        const Expr line = Div(Add(Multiply(block, Int(depth)), k_position), k_steps_per_line);
        const Expr next_panel = Multiply(Add(y_base, Int(depth)), Int(tile_columns));
        multiply_add_one = Stmt(new SequenceNode(
            {Stmt(new PrefetchNode(packed_y, Add(next_panel, Multiply(line, Int(line_elements))))),
             multiply_add_one}));
      }
      Stmt multiply_add = pack_x_operand
                              ? Loop(k, Int(depth), ForKind::kSerial, multiply_add_one)
                              : Nest(k_vars, k_extents, ForKind::kSerial, multiply_add_one);

      // The epilogue: the output expression with the sum replaced by the tile.
      // The tile is stored by loops of constant extent, so that every index
      // into it is a constant once they are unrolled and the tile can live in
      // registers throughout; a block at the edge stores only its valid part.
      Replacements out_at;
      bind_rows(Add(row0, r), out_at);
      bind_batch(roles->batch, batch_values, out_at);
      const Expr column = Add(column0, c);
      Expr out_index;
      if (roles->columns.size() == 1) {
        out_at[axes[roles->column()].get()] = column;
        std::vector<Expr> out_indices;
        for (const Var& axis : axes) out_indices.push_back(out_at.at(axis.get()));
        out_index = out_position(out_indices);
      } else {
        // Flattened columns are the output's last axes: the element's index
        // is its index at column 0 plus the column, and so is that of every
        // load of the epilogue that reads them contiguously (a residual);
        // others divide the column into its axes.
        Replacements at_column_zero = out_at;
        for (size_t axis : roles->columns) at_column_zero[axes[axis].get()] = Int(0);
        std::vector<Expr> out_indices;
        for (const Var& axis : axes) out_indices.push_back(at_column_zero.at(axis.get()));
        out_index = Add(out_position(out_indices), column);
        std::vector<Expr> loads;
        CollectLoads(element, sum, loads);
        BindColumns(*roles, axes, out_extents, column, out_at);
        for (const Expr& load : loads) {
          if (ContiguousAlong(load, roles->columns, axes, out_extents))
            out_at[load.get()] = LoadAtColumn(*roles, axes, load, column, out_at);
        }
      }
      out_at[sum] = Load(tile, tile_index);
      Stmt store(new StoreNode(out, out_index, Substitute(element, out_at)));
      Expr whole =
          Binary(BinaryOp::kAnd, Binary(BinaryOp::kLessEqual, Add(row0, Int(tile_rows)), Int(rows)),
                 Binary(BinaryOp::kLessEqual, Add(stored_from, Int(width)), Int(columns)));
      Expr inside = Binary(BinaryOp::kAnd, Binary(BinaryOp::kLess, Add(row0, r), Int(rows)),
                           Binary(BinaryOp::kLess, column, Int(columns)));
      if (shift_last_panel) {
        inside = Binary(BinaryOp::kAnd, inside, Binary(BinaryOp::kLessEqual, stored_from, column));
      }
      Stmt store_tile(new IfThenElseNode(
          whole, over_tile(store), over_tile(Stmt(new IfThenElseNode(inside, store, nullptr)))));

      return Stmt(new SequenceNode({clear, multiply_add, store_tile}));
    };
    Stmt block_body = block_of(tile_columns, column0, stored_from);
    // y read in place: a last panel of at most half a tile's columns takes a
    // tile half as wide, shifted to end at the last column, rather than a
    // whole one shifted back (196 pixels of a 14x14 map: 6 panels of 32
    // and one of 16 compute 208 columns instead of 224). So does a window
    // panel's, whose task packs only those columns (112 pixels of an
    // output row: 3 panels of 32 and one of 16).
    const int64_t half = tile_columns / 2;
    const bool half_last_panel = shift_last_panel && columns % tile_columns <= half && half >= 2;
    const Expr before_last = Binary(BinaryOp::kLess, panel, Int(panels - 1));
    if (half_last_panel) {
      block_body = Stmt(new IfThenElseNode(
          before_last, block_body,
          block_of(half, Int(columns - half), Int((panels - 1) * tile_columns))));
    }
    if (rows_outer) {
      block_body = Loop(panel_var, Int(panels), ForKind::kSerial, block_body);
      if (pack_x_operand) {
        block_body = Stmt(new SequenceNode(
            {pack_x_block(task, row_block, x_batch_values), std::move(block_body)}));
      }
    }
    Stmt blocks = Loop(block, Min(Int(blocks_per_chunk), Subtract(Int(row_blocks), first_block)),
                       ForKind::kSerial, block_body);
    if (window_panels) {
      // The unit's panel into the task's slot: `width` columns from
      // `first`, all of them valid, so that the copy's addresses are affine
      // in its lanes (strided vector loads, no gathers).
      auto pack_window = [&](const Expr& first, int64_t width) {
        Var lane(new VarNode("c"));
        Replacements at;
        bind_batch(y_batch, batch_position(y_batch), at);
        at[axes[roles->column()].get()] = Add(first, lane);
        const Expr index =
            Add(Multiply(Add(Multiply(task, Int(depth)), k_flat), Int(tile_columns)), lane);
        return Nest(k_vars, k_extents, ForKind::kSerial,
                    Loop(lane, Int(width), ForKind::kVectorized,
                         Stmt(new StoreNode(packed_y, index, Substitute(y, at)))));
      };
      Stmt pack = pack_window(column0, tile_columns);
      if (half_last_panel) {
        pack = Stmt(new IfThenElseNode(before_last, pack, pack_window(Int(columns - half), half)));
      }
      const Expr first_unit = Multiply(task, Int(units_per_task));
      blocks = Loop(local, Min(Int(units_per_task), Subtract(Int(units), first_unit)),
                    ForKind::kSerial, Stmt(new SequenceNode({pack, std::move(blocks)})));
    }
    compute = Loop(task, Int(tasks), ForKind::kParallel, Stmt(new AllocateNode(tile, blocks)));
  }

  std::vector<Buffer> params = inputs;
  params.push_back(out);
  std::vector<Stmt> statements;
  if (padding != nullptr) statements.push_back(StorePadded(out, *padding, nullptr));
  if (pack_x_operand) {
    params.push_back(packed_x);
    if (!rows_outer) statements.push_back(pack_x);
  }
  // y's panels depend on y alone: when y reads one input (a weight), they
  // are filled by a kernel of their own, so that the launcher can fill them
  // once for a weight that never changes.
  std::optional<size_t> y_input;
  if (pack_y_operand) {
    params.push_back(packed_y);
    if (!window_panels) y_input = SoleInputRead(y, inputs);
    if (!y_input && !window_panels) statements.push_back(pack_y);
  }
  statements.push_back(compute);
  Kernel kernel{name, std::move(params), 1, {}, Stmt(new SequenceNode(std::move(statements)))};
  kernel.workspace_count = size_t(pack_x_operand) + size_t(pack_y_operand);
  if (y_input) {
    auto fill = std::make_shared<Kernel>(
        Kernel{name + ".pack_panels", {inputs[*y_input], packed_y}, 1, {}, pack_y});
    kernel.derived_workspace = Kernel::DerivedWorkspace{*y_input, kernel.workspace_count - 1, fill};
  }
  return kernel;
}

}  // namespace relay::kernels

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
// A warp's worth of lanes per element serves reductions of at least this
// many values (two per lane).
constexpr int64_t kWarpLanes = 32;
constexpr int64_t kLeastWarpReduction = 64;

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

// Whether every load in `body` that mentions `axis` reads consecutive
// elements as `axis` steps by one (with every other variable at 0): a dot
// product along rows, a sum over the last axis. Then lanes that split the
// reduction read neighbouring elements.
bool LoadsStepByOneAlong(const Expr& body, const Var& axis) {
  std::vector<Expr> loads;
  CollectLoads(body, nullptr, loads);
  const std::unordered_set<const VarNode*> along{axis.get()};
  bool any = false;
  for (const Expr& load : loads) {
    const Expr& index = As<LoadNode>(load)->index;
    if (!MentionsAny(index, along)) continue;
    any = true;
    std::vector<Var> others;
    for (const VarNode* var : FreeVariables(index)) others.push_back(Var(var));
    if (StrideAlong(load, axis, others) != 1) return false;
  }
  return any;
}

// Lanes per output element for a reduction of `space` values into `count`
// elements (0: no group reduction). A whole work-group for few elements
// with long reductions; a warp's worth (32) for shorter reductions read
// contiguously (a matrix-vector product of 512: an LSTM step's dense), where
// a thread per element would read its own row, uncoalesced. A reduction
// across rows (a column sum) stays a thread per element, whose neighbours
// read neighbouring columns.
int64_t LanesPerElement(int64_t count, int64_t space, bool contiguous,
                        const GpuScheduleOptions& options) {
  if (space >= kLeastGroupReduction && count <= kMostGroupElements) return gpu::kGroupLanes;
  if (options.split_row_reductions && space >= kLeastWarpReduction && contiguous) return kWarpLanes;
  return 0;
}

// A work-group per output element, or a segment of one (LanesPerElement),
// for elements that each reduce many values (a matrix-vector product; a
// sum over a long axis): the segment's lanes each combine a strided share
// of the reduction's space (neighbouring lanes reading neighbouring
// elements), then combine their partial values in shared memory in a tree,
// and the segment's first lane stores the element with the reduction's
// value. With a thread per element, a handful of threads would each read a
// whole row.
std::optional<kir::Kernel> GroupReduction(const std::string& name, std::vector<Buffer> params,
                                          const std::vector<Var>& dims, const Buffer& out,
                                          const TensorExpr& output,
                                          const GpuScheduleOptions& options) {
  const Expr element_count = Product(output.shape);
  const auto* elements = As<IntImmNode>(element_count);
  if (elements == nullptr || elements->value == 0) return std::nullopt;
  const int64_t count = elements->value;
  // The reduction, seen from an element of the output.
  std::vector<Var> axes;
  for (size_t axis = 0; axis < output.ndim(); ++axis)
    axes.push_back(Var(new VarNode("a" + std::to_string(axis))));
  const Expr sample = output.at(std::vector<Expr>(axes.begin(), axes.end()));
  const std::vector<const ReduceNode*> sample_reductions = FindReductions(sample);
  if (sample_reductions.size() != 1) return std::nullopt;
  const Expr sample_space_size = Product(sample_reductions[0]->extents);
  const auto* sample_space = As<IntImmNode>(sample_space_size);
  if (sample_space == nullptr || !PairwiseCombine(*sample_reductions[0])) return std::nullopt;
  // A reduction over no axes (the sum of a scalar) has nothing to share out.
  if (sample_reductions[0]->axes.empty()) return std::nullopt;
  const int64_t lanes_per_element = LanesPerElement(
      count, sample_space->value,
      LoadsStepByOneAlong(sample_reductions[0]->body, sample_reductions[0]->axes.back()), options);
  if (lanes_per_element == 0) return std::nullopt;

  const int64_t lanes = gpu::kGroupLanes, per_group = lanes / lanes_per_element;
  const Var group(new VarNode("group")), lane(new VarNode("lane"));
  const Expr segment_lane = Binary(BinaryOp::kFloorMod, lane, Int(lanes_per_element));
  const Expr index = Add(Multiply(group, Int(per_group)),
                         Binary(BinaryOp::kFloorDivide, lane, Int(lanes_per_element)));
  const Expr inside = Binary(BinaryOp::kLess, index, Int(count));
  // Lanes past the last element (of a group's last segments) still meet the
  // barriers; they read nothing and store nothing.
  const Expr element =
      output.at(Unflatten(Binary(BinaryOp::kMinimum, index, Int(count - 1)), output.shape));
  const std::vector<const ReduceNode*> reductions = FindReductions(element);
  RELAY_CHECK(reductions.size() == 1, "an element holds the reduction its sample holds");
  const ReduceNode& reduce = *reductions[0];
  const BinaryOp combine = *PairwiseCombine(reduce);
  const int64_t space = sample_space->value;

  const DType dtype = reduce.body->dtype;
  const Buffer partial(new BufferNode("partial", dtype, {Int(1)}));
  const Buffer shared(new BufferNode("shared", dtype, {Int(lanes)}));
  // This lane's share: positions segment_lane, + lanes_per_element, ... of
  // the flat space.
  const Var step(new VarNode("step"));
  const Expr flat = Add(Multiply(step, Int(lanes_per_element)), segment_lane);
  Replacements positions;
  const std::vector<Expr> position = Unflatten(flat, reduce.extents);
  for (size_t axis = 0; axis < reduce.axes.size(); ++axis)
    positions[reduce.axes[axis].get()] = position[axis];
  const Expr term = Substitute(reduce.body, positions);
  std::vector<Stmt> lane_body;
  lane_body.push_back(Stmt(new StoreNode(partial, Int(0), reduce.init)));
  lane_body.push_back(Stmt(new ForNode(
      step, Int((space + lanes_per_element - 1) / lanes_per_element), ForKind::kSerial,
      Stmt(new IfThenElseNode(
          Binary(BinaryOp::kAnd, inside, Binary(BinaryOp::kLess, flat, Int(space))),
          Stmt(new StoreNode(partial, Int(0), Binary(combine, Load(partial, Int(0)), term))),
          nullptr)))));
  lane_body.push_back(Stmt(new StoreNode(shared, lane, Load(partial, Int(0)))));
  lane_body.push_back(Stmt(new BarrierNode()));
  // The tree: each segment's halves fold onto its lower half, every lane at
  // every barrier.
  for (int64_t half = lanes_per_element / 2; half >= 1; half /= 2) {
    lane_body.push_back(Stmt(new IfThenElseNode(
        Binary(BinaryOp::kLess, segment_lane, Int(half)),
        Stmt(new StoreNode(
            shared, lane, Binary(combine, Load(shared, lane), Load(shared, Add(lane, Int(half)))))),
        nullptr)));
    lane_body.push_back(Stmt(new BarrierNode()));
  }
  const Expr value =
      Substitute(element, {{static_cast<const ExprNode*>(&reduce), Load(shared, lane)}});
  lane_body.push_back(Stmt(new IfThenElseNode(
      Binary(BinaryOp::kAnd, inside, Binary(BinaryOp::kEqual, segment_lane, Int(0))),
      Stmt(new StoreNode(out, index, value)), nullptr)));
  Stmt lanes_loop(new ForNode(lane, Int(lanes), ForKind::kDeviceLanes,
                              Stmt(new AllocateNode(partial, Stmt(new SequenceNode(lane_body))))));
  params.push_back(out);
  return kir::Kernel{
      name, std::move(params), 1, dims,
      Stmt(new ForNode(group, Int((count + per_group - 1) / per_group), ForKind::kDeviceGroups,
                       Stmt(new AllocateNode(shared, lanes_loop, MemoryScope::kShared))))};
}

// A contraction's output tile per work-group: for a sum of products
// out = f(sum_k x(.., k) * y(.., k)) (dense, matmul, batch_matmul, conv2d
// with any fused epilogue), the output axes split into rows (mentioned by x
// alone), columns (by y alone) and batch axes (the rest). A group computes a
// tile of `tile_rows` x `tile_columns` (rows and columns each flattened) of
// one batch position; its 16 x 16 lanes each accumulate a `tile_rows / 16` x
// `tile_columns / 16` register tile, strided by 16 so that neighbouring
// lanes store neighbouring columns. The sum runs in steps of kTileDepth: the
// lanes copy the step's slices of x and y into shared memory together
// (neighbouring lanes reading neighbouring k), meet at a barrier, and each
// then reads every value it needs from shared memory instead of global: per
// step a lane loads rows + columns values for rows x columns multiply-adds,
// where a thread per element loads two per multiply-add. Ragged edges (of
// rows, columns and k) load zeros and store nothing. Symbolic extents (a
// `?` sequence length) are fine: they only enter the loop bounds and guards.
constexpr int64_t kTileDepth = 16;
constexpr int64_t kLaneGrid = 16;  // lanes along each tile side: kGroupLanes = 16 x 16

// Each side of a tile: 64 where the extent is symbolic or large, else the
// smallest of 16 and 32 that holds it.
int64_t TileSide(const Expr& extent) {
  const auto* constant = As<IntImmNode>(extent);
  if (constant == nullptr || constant->value > 32) return 64;
  return constant->value > 16 ? 32 : 16;
}

Expr CeilDivide(const Expr& a, int64_t b) {
  return Binary(BinaryOp::kFloorDivide, Add(a, Int(b - 1)), Int(b));
}

Expr Both(const Expr& a, const Expr& b) {
  return Binary(BinaryOp::kAnd, a, b);
}
Expr Below(const Expr& a, const Expr& b) {
  return Binary(BinaryOp::kLess, a, b);
}

// Whether `target` lies in a branch of a select inside `expr`: then `expr`
// evaluates it only where the condition allows (an output padded after a
// convolution computes its sum only inside the padding).
bool UnderSelect(const Expr& expr, const ExprNode* target) {
  if (expr.get() == target) return false;
  if (const auto* select = As<SelectNode>(expr)) {
    for (const Expr& branch : {select->if_true, select->if_false}) {
      for (const ReduceNode* reduction : FindReductions(branch)) {
        if (reduction == target) return true;
      }
    }
  }
  for (const Expr& operand : Operands(expr)) {
    if (UnderSelect(operand, target)) return true;
  }
  return false;
}

// Adds to `clamped` each load inside `expr` (inner loads first) rewritten
// to read at its index clamped into its buffer.
void ClampLoads(const Expr& expr, Replacements& clamped) {
  for (const Expr& operand : Operands(expr)) ClampLoads(operand, clamped);
  const auto* load = As<LoadNode>(expr);
  if (load == nullptr || clamped.contains(load)) return;
  const Expr index = Substitute(load->index, clamped);
  const Expr last = Subtract(ElementCount(load->buffer), Int(1));
  clamped[load] = Load(load->buffer,
                       Binary(BinaryOp::kMinimum, Binary(BinaryOp::kMaximum, index, Int(0)), last));
}

// `operand` with every load kept inside its buffer. A tile loads a
// contraction's operands for every position of the tile, also where the
// element would not evaluate them (a select's other branch: the padding of
// an output padded after a convolution, whose window there starts before
// the input); those values are never used, but their reads must be safe.
Expr WithLoadsInBounds(const Expr& operand) {
  Replacements clamped;
  ClampLoads(operand, clamped);
  return Substitute(operand, clamped);
}

// At least this many rows, columns and k (where constant) for a tile to pay:
// a 16 x 16 tile of a product of 8 is mostly guards.
constexpr int64_t kLeastTileSide = 16;
constexpr int64_t kLeastTileDepth = 8;

std::optional<kir::Kernel> TiledContraction(const std::string& name, std::vector<Buffer> params,
                                            const std::vector<Var>& dims, const Buffer& out,
                                            const TensorExpr& output) {
  const size_t rank = output.ndim();
  if (rank == 0) return std::nullopt;
  std::vector<Var> axes;
  for (size_t axis = 0; axis < rank; ++axis)
    axes.push_back(Var(new VarNode("a" + std::to_string(axis))));
  const Expr element = output.at(std::vector<Expr>(axes.begin(), axes.end()));
  const std::vector<const ReduceNode*> reductions = FindReductions(element);
  if (reductions.size() != 1) return std::nullopt;
  const ReduceNode& sum = *reductions[0];
  const DType dtype = sum.dtype;
  if (sum.op != ReduceOp::kSum || (dtype != DType::kFloat32 && dtype != DType::kFloat64) ||
      As<FloatImmNode>(sum.init) == nullptr) {
    return std::nullopt;
  }
  const auto* product = As<BinaryNode>(sum.body);
  if (product == nullptr || product->op != BinaryOp::kMultiply) return std::nullopt;
  std::unordered_set<const VarNode*> output_axes;
  for (const Var& axis : axes) output_axes.insert(axis.get());
  for (const Expr& extent : sum.extents) {
    if (MentionsAny(extent, output_axes)) return std::nullopt;
  }

  // Rows: axes x alone reads; columns: y alone; batch: the others. The
  // output's last axis should be a column, so that lanes store along it.
  Expr x = product->a, y = product->b;
  if (UnderSelect(element, &sum)) x = WithLoadsInBounds(x), y = WithLoadsInBounds(y);
  std::vector<size_t> rows, columns, batch;
  auto classify = [&] {
    rows.clear(), columns.clear(), batch.clear();
    for (size_t axis = 0; axis < rank; ++axis) {
      const std::unordered_set<const VarNode*> var{axes[axis].get()};
      const bool in_x = MentionsAny(x, var), in_y = MentionsAny(y, var);
      (in_x && !in_y ? rows : in_y && !in_x ? columns : batch).push_back(axis);
    }
  };
  classify();
  if (!rows.empty() && rows.back() == rank - 1) {
    std::swap(x, y);  // a product of floats is the same either way round
    classify();
  }
  if (rows.empty() || columns.empty()) return std::nullopt;
  auto extents_of = [&](const std::vector<size_t>& which) {
    std::vector<Expr> extents;
    for (size_t axis : which) extents.push_back(output.shape[axis]);
    return extents;
  };
  const std::vector<Expr> row_extents = extents_of(rows), column_extents = extents_of(columns),
                          batch_extents = extents_of(batch);
  const Expr row_count = Product(row_extents), column_count = Product(column_extents),
             batch_count = Product(batch_extents), depth = Product(sum.extents);
  auto at_least = [](const Expr& extent, int64_t least) {
    const auto* constant = As<IntImmNode>(extent);
    return constant == nullptr || constant->value >= least;
  };
  if (!at_least(row_count, kLeastTileSide) || !at_least(column_count, kLeastTileSide) ||
      !at_least(depth, kLeastTileDepth)) {
    return std::nullopt;
  }

  const int64_t tile_rows = TileSide(row_count), tile_columns = TileSide(column_count);
  const int64_t lane_rows = tile_rows / kLaneGrid, lane_columns = tile_columns / kLaneGrid;
  // Shared slices, k-major, each k's row padded by one so that lanes storing
  // neighbouring k hit different banks.
  const int64_t x_stride = tile_rows + 1, y_stride = tile_columns + 1;
  const Buffer x_tile(new BufferNode("x_tile", x->dtype, {Int(kTileDepth * x_stride)}));
  const Buffer y_tile(new BufferNode("y_tile", y->dtype, {Int(kTileDepth * y_stride)}));
  const Buffer accumulators(new BufferNode("accumulators", dtype, {Int(lane_rows * lane_columns)}));

  const Var group(new VarNode("group")), lane(new VarNode("lane"));
  const Expr row_tiles = CeilDivide(row_count, tile_rows),
             column_tiles = CeilDivide(column_count, tile_columns);
  const Var batch_index(new VarNode("batch")), row_origin(new VarNode("row0")),
      column_origin(new VarNode("column0")), k_origin(new VarNode("k0"));
  const Expr lane_row = Binary(BinaryOp::kFloorDivide, lane, Int(kLaneGrid));
  const Expr lane_column = Binary(BinaryOp::kFloorMod, lane, Int(kLaneGrid));

  // `operand` at flat row (or column) `position` and flat k `k`, in this
  // group's batch position.
  auto operand_at = [&](const Expr& operand, const std::vector<size_t>& own,
                        const std::vector<Expr>& own_extents, const Expr& position, const Expr& k) {
    Replacements bound;
    const std::vector<Expr> own_indices = Unflatten(position, own_extents);
    for (size_t index = 0; index < own.size(); ++index)
      bound[axes[own[index]].get()] = own_indices[index];
    const std::vector<Expr> batch_indices = Unflatten(batch_index, batch_extents);
    for (size_t index = 0; index < batch.size(); ++index)
      bound[axes[batch[index]].get()] = batch_indices[index];
    const std::vector<Expr> k_indices = Unflatten(k, sum.extents);
    for (size_t index = 0; index < sum.axes.size(); ++index)
      bound[sum.axes[index].get()] = k_indices[index];
    return Substitute(operand, bound);
  };
  // The lanes copy a step's slice of `operand` (side x kTileDepth values,
  // k fastest) into `tile`, zeros past the edges.
  auto copy_slice = [&](const Buffer& tile, const Expr& operand, const std::vector<size_t>& own,
                        const std::vector<Expr>& own_extents, const Expr& own_count,
                        const Expr& own_origin, int64_t side, int64_t stride) {
    const Var pass(new VarNode("pass"));
    const Expr slot = Add(Multiply(pass, Int(gpu::kGroupLanes)), lane);
    const Expr offset = Binary(BinaryOp::kFloorDivide, slot, Int(kTileDepth));
    const Expr kk = Binary(BinaryOp::kFloorMod, slot, Int(kTileDepth));
    const Expr position = Add(own_origin, offset), k = Add(k_origin, kk);
    const Expr index = Add(Multiply(kk, Int(stride)), offset);
    return Stmt(new ForNode(
        pass, Int(side * kTileDepth / gpu::kGroupLanes), ForKind::kSerial,
        Stmt(new IfThenElseNode(
            Both(Below(position, own_count), Below(k, depth)),
            Stmt(new StoreNode(tile, index, operand_at(operand, own, own_extents, position, k))),
            Stmt(new StoreNode(tile, index, Float(0.0, operand->dtype)))))));
  };

  const Var i(new VarNode("i")), j(new VarNode("j")), kk(new VarNode("kk"));
  const Expr accumulator = Add(Multiply(i, Int(lane_columns)), j);
  const Expr my_row = Add(lane_row, Multiply(i, Int(kLaneGrid)));
  const Expr my_column = Add(lane_column, Multiply(j, Int(kLaneGrid)));
  auto over_register_tile = [&](Stmt body) {
    return Stmt(new ForNode(i, Int(lane_rows), ForKind::kSerial,
                            Stmt(new ForNode(j, Int(lane_columns), ForKind::kSerial, body))));
  };

  std::vector<Stmt> lane_body;
  lane_body.push_back(over_register_tile(Stmt(new StoreNode(accumulators, accumulator, sum.init))));
  std::vector<Stmt> step;
  step.push_back(
      copy_slice(x_tile, x, rows, row_extents, row_count, row_origin, tile_rows, x_stride));
  step.push_back(copy_slice(y_tile, y, columns, column_extents, column_count, column_origin,
                            tile_columns, y_stride));
  step.push_back(Stmt(new BarrierNode()));
  const Expr term =
      Binary(BinaryOp::kMultiply, Load(x_tile, Add(Multiply(kk, Int(x_stride)), my_row)),
             Load(y_tile, Add(Multiply(kk, Int(y_stride)), my_column)));
  step.push_back(Stmt(new ForNode(
      kk, Int(kTileDepth), ForKind::kSerial,
      over_register_tile(Stmt(new StoreNode(
          accumulators, accumulator, Add(Load(accumulators, accumulator), Cast(dtype, term))))))));
  step.push_back(Stmt(new BarrierNode()));
  const Var k_step(new VarNode("k_step"));
  lane_body.push_back(
      Stmt(new ForNode(k_step, CeilDivide(depth, kTileDepth), ForKind::kSerial,
                       Stmt(new LetStmtNode(k_origin, Multiply(k_step, Int(kTileDepth)),
                                            Stmt(new SequenceNode(std::move(step))))))));

  // The epilogue: each of the lane's elements inside the output, with the
  // sum replaced by its accumulator.
  const Expr row = Add(row_origin, my_row), column = Add(column_origin, my_column);
  std::vector<Expr> indices(rank);
  const std::vector<Expr> row_indices = Unflatten(row, row_extents),
                          column_indices = Unflatten(column, column_extents),
                          batch_indices = Unflatten(batch_index, batch_extents);
  for (size_t index = 0; index < rows.size(); ++index) indices[rows[index]] = row_indices[index];
  for (size_t index = 0; index < columns.size(); ++index)
    indices[columns[index]] = column_indices[index];
  for (size_t index = 0; index < batch.size(); ++index)
    indices[batch[index]] = batch_indices[index];
  const Expr stored = output.at(indices);
  const std::vector<const ReduceNode*> stored_sums = FindReductions(stored);
  RELAY_CHECK(stored_sums.size() == 1, "a contraction's element holds its one sum");
  const Expr value = Substitute(
      stored, {{static_cast<const ExprNode*>(stored_sums[0]), Load(accumulators, accumulator)}});
  lane_body.push_back(over_register_tile(
      Stmt(new IfThenElseNode(Both(Below(row, row_count), Below(column, column_count)),
                              Stmt(new StoreNode(out, FlatIndex(out, indices), value)), nullptr))));

  Stmt per_lane(new AllocateNode(accumulators, Stmt(new SequenceNode(std::move(lane_body)))));
  Stmt lanes(new ForNode(lane, Int(gpu::kGroupLanes), ForKind::kDeviceLanes, per_lane));
  // The group's tile: batch position, then row tile, then column tile
  // (neighbouring groups share their rows of x).
  Stmt placed(new LetStmtNode(
      batch_index, Binary(BinaryOp::kFloorDivide, group, Multiply(row_tiles, column_tiles)),
      Stmt(new LetStmtNode(
          row_origin,
          Multiply(Binary(BinaryOp::kFloorMod, Binary(BinaryOp::kFloorDivide, group, column_tiles),
                          row_tiles),
                   Int(tile_rows)),
          Stmt(new LetStmtNode(
              column_origin,
              Multiply(Binary(BinaryOp::kFloorMod, group, column_tiles), Int(tile_columns)),
              lanes))))));
  placed = Stmt(new AllocateNode(y_tile, placed, MemoryScope::kShared));
  placed = Stmt(new AllocateNode(x_tile, placed, MemoryScope::kShared));
  params.push_back(out);
  return kir::Kernel{
      name, std::move(params), 1, dims,
      Stmt(new ForNode(group, Multiply(batch_count, Multiply(row_tiles, column_tiles)),
                       ForKind::kDeviceGroups, placed))};
}

}  // namespace

kir::Kernel BuildGpuKernel(const std::string& name, const std::vector<Buffer>& inputs,
                           const std::vector<Var>& dims, const TensorExpr& output,
                           const GpuScheduleOptions& options) {
  const Buffer out(new BufferNode("out", output.dtype, output.shape));
  if (std::optional<kir::Kernel> tiled = TiledContraction(name, inputs, dims, out, output)) {
    return std::move(*tiled);
  }
  if (std::optional<kir::Kernel> grouped =
          GroupReduction(name, inputs, dims, out, output, options)) {
    return std::move(*grouped);
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

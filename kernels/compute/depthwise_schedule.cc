#include "kernels/compute/depthwise_schedule.h"

#include <algorithm>
#include <array>
#include <bit>
#include <functional>

#include "kernels/compute/convolution_compute.h"
#include "kernels/kir/rewrite.h"

namespace relay::kernels {

using namespace relay::kernels::kir;

namespace {

std::optional<std::vector<int64_t>> ConstantShape(const Buffer& buffer) {
  std::vector<int64_t> shape;
  for (const Expr& dimension : buffer->shape) {
    const auto* constant = As<IntImmNode>(dimension);
    if (constant == nullptr) return std::nullopt;
    shape.push_back(constant->value);
  }
  return shape;
}

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

Stmt Loop(const Var& var, Expr extent, ForKind kind, Stmt body) {
  return Stmt(new ForNode(var, std::move(extent), kind, std::move(body)));
}

// Output rows whose length is a multiple of this are left to LLVM's loop
// vectoriser, which covers them without a remainder.
constexpr int64_t kLanesLeftToLlvm = 8;
// Others go in chunks of this many lanes (fewer when shorter).
constexpr int64_t kChunkLanes = 16;

// body(i) for i in [0, extent), vectorised. A length that LLVM's vectors
// divide is one loop (56: seven 8-lane vectors), unless `chunked`. Any
// other goes in chunks of a power-of-two count of lanes, each chunk one
// vector statement (see the LLVM lowering), the last moved back to end at
// `extent` (an i computed twice is stored alike), rather than leave LLVM a
// scalar remainder: a 28-wide row was three 8-lane vectors and four scalar
// windows (144x56x56 at stride 2 alone: 54 -> 35 us).
Stmt VectorLoop(int64_t extent, const std::function<Stmt(const Expr&)>& body,
                bool chunked = false) {
  Var chunk(new VarNode("chunk")), lane(new VarNode("lane"));
  if (!chunked && extent % kLanesLeftToLlvm == 0)
    return Loop(lane, Int(extent), ForKind::kVectorized, body(lane));
  const int64_t lanes = std::min<int64_t>(kChunkLanes, std::bit_floor(uint64_t(extent)));
  const Expr i =
      Add(Binary(BinaryOp::kMinimum, Multiply(chunk, Int(lanes)), Int(extent - lanes)), lane);
  return Loop(chunk, Int(CeilDiv(extent, lanes)), ForKind::kSerial,
              Loop(lane, Int(lanes), ForKind::kVectorized, body(i)));
}

// The largest window this schedule writes out in full.
constexpr int64_t kMaximumWindow = 49;
// Slices of more than this many bytes are copied row by row as the output
// rows need them, at stride 2 (see BuildWindowKernel).
constexpr int64_t kInterleavedCopyBytes = int64_t{32} << 10;
// Maps at most this wide (at stride 1) are computed along the padded plane
// as one run rather than row by row.
constexpr int64_t kRunWidth = 32;

// What a window kernel reduces: each output element (n, c, y, x) of
// `element`'s one reduction is replaced by the window's values combined
// with `op` (a sum of products with the weight's channel, or a maximum),
// starting from the reduction's initial value, which also fills the
// padding (zero for a sum, the lowest value for a maximum).
struct WindowShape {
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t window_height = 0, window_width = 0;
  std::array<int64_t, 2> strides{}, dilation{};
  // Padding on each side; bottom and right cover all that the output's
  // windows reach (ceil_mode's extra border included).
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  int64_t out_height = 0, out_width = 0;
};

std::optional<Kernel> BuildWindowKernel(const std::string& name, const std::vector<Buffer>& inputs,
                                        const TensorExpr& output, size_t data,
                                        std::optional<size_t> weight, ReduceOp op,
                                        const WindowShape& shape, int64_t parallel_tasks);

// The constant output shape of `output`, if it is one.
std::optional<std::vector<int64_t>> ConstantOutputShape(const TensorExpr& output) {
  std::vector<int64_t> out_shape;
  for (const Expr& dimension : output.shape) {
    const auto* constant = As<IntImmNode>(dimension);
    if (constant == nullptr) return std::nullopt;
    out_shape.push_back(constant->value);
  }
  return out_shape;
}

}  // namespace

std::optional<Kernel> BuildDepthwiseKernel(const std::string& name,
                                           const std::vector<Buffer>& inputs,
                                           const TensorExpr& output, const Attrs& conv_attributes,
                                           size_t data, size_t weight, int64_t parallel_tasks) {
  if (data >= inputs.size() || weight >= inputs.size()) return std::nullopt;
  if (GetAttr(conv_attributes, "data_layout").as_string() != "NCHW" ||
      GetAttr(conv_attributes, "kernel_layout").as_string() != "OIHW") {
    return std::nullopt;
  }
  const std::string& out_layout = GetAttr(conv_attributes, "out_layout").as_string();
  if (!out_layout.empty() && out_layout != "NCHW") return std::nullopt;
  const std::optional<std::vector<int64_t>> data_shape = ConstantShape(inputs[data]);
  const std::optional<std::vector<int64_t>> weight_shape = ConstantShape(inputs[weight]);
  const std::array<int64_t, 2> strides = SpatialPair(conv_attributes, "strides");
  const std::array<int64_t, 2> dilation = SpatialPair(conv_attributes, "dilation");
  if (!data_shape || !weight_shape || data_shape->size() != 4 || weight_shape->size() != 4 ||
      output.ndim() != 4) {
    return std::nullopt;
  }
  const int64_t batch = (*data_shape)[0], channels = (*data_shape)[1];
  const int64_t height = (*data_shape)[2], width = (*data_shape)[3];
  const int64_t window_height = (*weight_shape)[2], window_width = (*weight_shape)[3];
  const int64_t groups = GetAttr(conv_attributes, "groups").as_int();
  if (groups != channels || (*weight_shape)[0] != channels || (*weight_shape)[1] != 1 ||
      window_height * window_width > kMaximumWindow) {
    return std::nullopt;
  }
  const std::optional<std::vector<int64_t>> out_shape = ConstantOutputShape(output);
  if (!out_shape || (*out_shape)[0] != batch || (*out_shape)[1] != channels) return std::nullopt;
  const auto [top, left, bottom, right] = Padding(conv_attributes);
  const WindowShape shape{
      batch,    channels, height, width,  window_height, window_width,    strides,
      dilation, top,      left,   bottom, right,         (*out_shape)[2], (*out_shape)[3]};
  return BuildWindowKernel(name, inputs, output, data, weight, ReduceOp::kSum, shape,
                           parallel_tasks);
}

std::optional<Kernel> BuildMaxPoolKernel(const std::string& name, const std::vector<Buffer>& inputs,
                                         const TensorExpr& output, const Attrs& pool_attributes,
                                         size_t data, int64_t parallel_tasks) {
  if (data >= inputs.size()) return std::nullopt;
  const std::string& out_layout = GetAttr(pool_attributes, "out_layout").as_string();
  if (GetAttr(pool_attributes, "layout").as_string() != "NCHW" ||
      (!out_layout.empty() && out_layout != "NCHW")) {
    return std::nullopt;
  }
  const std::optional<std::vector<int64_t>> data_shape = ConstantShape(inputs[data]);
  const std::optional<std::vector<int64_t>> out_shape = ConstantOutputShape(output);
  if (!data_shape || !out_shape || data_shape->size() != 4 || out_shape->size() != 4 ||
      (*out_shape)[0] != (*data_shape)[0] || (*out_shape)[1] != (*data_shape)[1]) {
    return std::nullopt;
  }
  const std::array<int64_t, 2> pool = SpatialPair(pool_attributes, "pool_size");
  if (pool[0] * pool[1] > kMaximumWindow) return std::nullopt;
  WindowShape shape;
  shape.batch = (*data_shape)[0];
  shape.channels = (*data_shape)[1];
  shape.height = (*data_shape)[2];
  shape.width = (*data_shape)[3];
  shape.window_height = pool[0];
  shape.window_width = pool[1];
  shape.strides = SpatialPair(pool_attributes, "strides");
  shape.dilation = SpatialPair(pool_attributes, "dilation");
  const std::array<int64_t, 4> padding = Padding(pool_attributes);
  shape.top = padding[0];
  shape.left = padding[1];
  shape.out_height = (*out_shape)[2];
  shape.out_width = (*out_shape)[3];
  // ceil_mode's windows may reach past the padding: the slice covers them.
  auto reach = [](int64_t out, int64_t stride, int64_t window, int64_t dilation) {
    return (out - 1) * stride + (window - 1) * dilation + 1;
  };
  shape.bottom =
      std::max(padding[2], reach(shape.out_height, shape.strides[0], pool[0], shape.dilation[0]) -
                               shape.top - shape.height);
  shape.right =
      std::max(padding[3], reach(shape.out_width, shape.strides[1], pool[1], shape.dilation[1]) -
                               shape.left - shape.width);
  return BuildWindowKernel(name, inputs, output, data, std::nullopt, ReduceOp::kMaximum, shape,
                           parallel_tasks);
}

namespace {

std::optional<Kernel> BuildWindowKernel(const std::string& name, const std::vector<Buffer>& inputs,
                                        const TensorExpr& output, size_t data,
                                        std::optional<size_t> weight, ReduceOp op,
                                        const WindowShape& shape, int64_t parallel_tasks) {
  const auto [batch, channels, height, width, window_height, window_width, strides, dilation, top,
              left, bottom, right, out_height, out_width] = shape;
  // The output element, with the window's reduction to be replaced.
  std::vector<Var> axes;
  for (const char* axis_name : {"n", "k", "y", "x"}) axes.push_back(Var(new VarNode(axis_name)));
  const Expr element = output.at(std::vector<Expr>(axes.begin(), axes.end()));
  const std::vector<const ReduceNode*> reductions = FindReductions(element);
  if (reductions.size() != 1 || reductions[0]->op != op) return std::nullopt;
  const ReduceNode* sum = reductions[0];
  const DType accumulator = sum->dtype;
  const DType data_dtype = inputs[data]->dtype;
  if (!IsFloat(accumulator) || !IsFloat(data_dtype)) return std::nullopt;
  // The padding's value: the reduction's start (0, or the lowest value).
  const Expr fill = sum->init;

  const int64_t padded_height = height + top + bottom, padded_width = width + left + right;
  const int64_t planes = batch * channels;
  const int64_t plane_size = padded_height * padded_width;

  // Tasks take runs of whole planes. Unless the data can be read in place
  // (no padding, already of the accumulator's type), each task copies its
  // current plane into its own slice of the workspace first, bordered with
  // the padding's value:
  // the slice stays in the nearest caches while the plane's rows read it,
  // so the data crosses memory once.
  const int64_t task_count = std::clamp<int64_t>(parallel_tasks, 1, planes);
  const int64_t planes_per_task = CeilDiv(planes, task_count);
  const int64_t tasks = CeilDiv(planes, planes_per_task);
  const bool in_place =
      top == 0 && left == 0 && bottom == 0 && right == 0 && data_dtype == accumulator;
  // A narrow map at stride 1 is computed along the padded plane as one run:
  // element i of the run (row i / padded_width, column i % padded_width)
  // reads the slice at i plus the window's offsets, so the loop vectorises
  // over whole rows, however short (a 7x7 map's rows are shorter than a
  // vector). The run's elements past each row's end are computed and
  // dropped: its sums go to the slice's tail, and the rows are then copied
  // out through the epilogue. The window reads up to `overrun` elements
  // past the padded plane, filled for the purpose.
  const bool as_run = !in_place && strides[0] == 1 && strides[1] == 1 && out_width <= kRunWidth;
  const int64_t overrun = as_run ? (window_width - 1) * dilation[1] : 0;
  const int64_t run = out_height * padded_width;
  const int64_t slice_size = plane_size + overrun + (as_run ? run : 0);
  // At stride 2 along the rows (dilation 1), each slice row holds the
  // padded row's even columns and then its odd ones: output column c then
  // reads even column c + kw / 2 for even kw and odd column c + kw / 2 for
  // odd kw, contiguous in c, where the plain layout would read every other
  // element.
  const bool split_columns = !in_place && strides[1] == 2 && dilation[1] == 1;
  const int64_t even_columns = (padded_width + 1) / 2;
  const Buffer padded(new BufferNode("padded", accumulator, {Int(tasks * slice_size)}));
  Var task(new VarNode("task")), local(new VarNode("local"));
  const Expr plane = Add(Multiply(task, Int(planes_per_task)), local);
  const Expr slice = Multiply(task, Int(slice_size));

  // At stride 2, a slice larger than the nearest cache is copied row by
  // row just before the output rows that first need it (see the compute
  // below), rather than whole before them: read at once, its first rows
  // would leave that cache before the output rows read them.
  const bool interleave_copy = !in_place && !as_run && strides[0] == 2 &&
                               plane_size * int64_t(DTypeSize(accumulator)) > kInterleavedCopyBytes;
  std::vector<Stmt> per_task;  // before the task's planes: fill the borders
  std::vector<Stmt> per_plane;
  Var row(new VarNode("row"));
  Stmt copy_row;  // copies data row `row` into the slice
  if (!in_place) {
    Var column(new VarNode("column"));
    auto at = [&](const Expr& padded_row, const Expr& padded_column) {
      return Add(slice, Add(Multiply(padded_row, Int(padded_width)), padded_column));
    };
    auto fill_rows = [&](int64_t first, int64_t count) {
      if (count == 0) return;
      per_task.push_back(
          Loop(row, Int(count), ForKind::kSerial,
               Loop(column, Int(padded_width), ForKind::kVectorized,
                    Stmt(new StoreNode(padded, at(Add(row, Int(first)), column), fill)))));
    };
    auto fill_columns = [&](int64_t first, int64_t count) {
      if (count == 0) return;
      per_task.push_back(Loop(
          row, Int(height), ForKind::kSerial,
          Loop(
              column, Int(count), ForKind::kSerial,
              Stmt(new StoreNode(padded, at(Add(row, Int(top)), Add(column, Int(first))), fill)))));
    };
    if (split_columns) {
      // The padding's places are less regular: all of the slice is filled.
      fill_rows(0, padded_height);
    } else {
      fill_rows(0, top);
      fill_rows(top + height, bottom);
      fill_columns(0, left);
      fill_columns(left + width, right);
    }
    if (overrun > 0) {
      per_task.push_back(
          Loop(column, Int(overrun), ForKind::kSerial,
               Stmt(new StoreNode(padded, Add(slice, Add(column, Int(plane_size))), fill))));
    }
    auto data_at = [&](const Expr& data_column) {
      return Cast(
          accumulator,
          Load(inputs[data],
               Add(Multiply(Add(Multiply(plane, Int(height)), row), Int(width)), data_column)));
    };
    if (split_columns) {
      // Data columns 2 m and 2 m + 1 go to the two parities' halves, at
      // slice columns (2 m + left) / 2 and (2 m + 1 + left) / 2 of theirs:
      // one loop over m, so that its loads are one interleaved pair that
      // vectorises as two plain loads and a shuffle (a loop per parity reads
      // every other element, a gather). An odd width's last column after.
      auto copy_column = [&](const Expr& m, int64_t offset) {
        // Data column 2 m + offset is padded column 2 m + offset + left.
        const int64_t parity = (offset + left) % 2;
        const Expr j = Add(m, Int((offset + left) / 2 + parity * even_columns));
        return Stmt(new StoreNode(padded, at(Add(row, Int(top)), j),
                                  data_at(Add(Multiply(m, Int(2)), Int(offset)))));
      };
      // The pairs always go in chunks, each one vector statement (a
      // contiguous load and a shuffle per parity): left to LLVM, a loop
      // over them is unrolled and its strided loads become gathers.
      std::vector<Stmt> copies;
      const int64_t pairs = width / 2;
      if (pairs >= 1) {
        copies.push_back(VectorLoop(
            pairs,
            [&](const Expr& m) {
              return Stmt(new SequenceNode({copy_column(m, 0), copy_column(m, 1)}));
            },
            /*chunked=*/true));
      }
      if (width % 2 == 1) copies.push_back(copy_column(Int(width / 2), 0));
      copy_row = Stmt(new SequenceNode(std::move(copies)));
    } else {
      copy_row = Loop(column, Int(width), ForKind::kVectorized,
                      Stmt(new StoreNode(padded, at(Add(row, Int(top)), Add(column, Int(left))),
                                         data_at(column))));
    }
    if (!interleave_copy) per_plane.push_back(Loop(row, Int(height), ForKind::kSerial, copy_row));
  }

  // The plane's output rows, each element its window's products written
  // out in full.
  const Expr channel = Binary(BinaryOp::kFloorMod, plane, Int(channels));
  Var out_row(new VarNode("out_row"));
  const Var& x = axes[3];
  // A window element's term (times the weight's, for a convolution), and
  // the terms combined.
  auto term = [&](const Expr& value, int64_t window_row, int64_t window_column) -> Expr {
    if (!weight) return value;
    const Expr filter = Cast(
        accumulator, Load(inputs[*weight], Add(Multiply(channel, Int(window_height * window_width)),
                                               Int(window_row * window_width + window_column))));
    return Binary(BinaryOp::kMultiply, value, filter);
  };
  auto combine = [&](const Expr& total, const Expr& next) -> Expr {
    if (!total) return next;
    return op == ReduceOp::kSum ? Add(total, next) : Binary(BinaryOp::kMaximum, total, next);
  };
  Expr total;
  for (int64_t window_row = 0; window_row < window_height; ++window_row) {
    for (int64_t window_column = 0; window_column < window_width; ++window_column) {
      const Expr padded_row =
          Add(Multiply(out_row, Int(strides[0])), Int(window_row * dilation[0]));
      const Expr padded_column =
          split_columns ? Add(x, Int(window_column / 2 + (window_column % 2) * even_columns))
                        : Add(Multiply(x, Int(strides[1])), Int(window_column * dilation[1]));
      const Expr position = Add(Multiply(padded_row, Int(padded_width)), padded_column);
      const Expr value = in_place
                             ? Load(inputs[data], Add(Multiply(plane, Int(plane_size)), position))
                             : Load(padded, Add(slice, position));
      total = combine(total, term(value, window_row, window_column));
    }
  }
  Replacements at;
  at[axes[0].get()] = Binary(BinaryOp::kFloorDivide, plane, Int(channels));
  at[axes[1].get()] = channel;
  at[axes[2].get()] = out_row;
  at[sum] = total;
  const Buffer out(new BufferNode("out", output.dtype, output.shape));
  if (as_run) {
    // The sums along the run, then the rows out of it.
    Var position(new VarNode("position"));
    Expr run_total;
    for (int64_t window_row = 0; window_row < window_height; ++window_row) {
      for (int64_t window_column = 0; window_column < window_width; ++window_column) {
        const int64_t offset =
            window_row * dilation[0] * padded_width + window_column * dilation[1];
        run_total = combine(run_total, term(Load(padded, Add(slice, Add(position, Int(offset)))),
                                            window_row, window_column));
      }
    }
    const Expr run_start = Add(slice, Int(plane_size + overrun));
    per_plane.push_back(Loop(position, Int(run), ForKind::kVectorized,
                             Stmt(new StoreNode(padded, Add(run_start, position), run_total))));
    at[sum] = Load(padded, Add(run_start, Add(Multiply(out_row, Int(padded_width)), x)));
  }
  Stmt compute_row = VectorLoop(out_width, [&](const Expr& i) {
    return Stmt(new StoreNode(
        out, Add(Multiply(Add(Multiply(plane, Int(out_height)), out_row), Int(out_width)), i),
        Substitute(Substitute(element, at), Replacements{{x.get(), i}})));
  });
  if (interleave_copy) {
    // The copy interleaved with the output rows: before output row r, the
    // data rows it is the first to need, which are still in the nearest
    // cache when r reads them, and whose reading from memory overlaps the
    // computing of the rows before (96x112x112 at stride 2 alone: 406-420
    // -> 228-240 us on one thread; in MobileNetV2 230 -> 170-190 us, and
    // ResNet-18's max pool 220-230 -> 180-200 us). At stride 1, and for
    // slices that fit in that cache, it was slower (192x28x28 at stride
    // 2: 21 -> 40 us), hence the size.
    const int64_t first_rows = std::clamp<int64_t>((window_height - 1) * dilation[0] - top + 1, 0,
                                                   height);  // output row 0's
    per_plane.push_back(Loop(row, Int(first_rows), ForKind::kSerial, copy_row));
    Var step(new VarNode("step"));
    // Output row r >= 1 first needs data rows (r - 1) s + first_rows + step.
    const Expr next_row =
        Add(Add(Multiply(Subtract(out_row, Int(1)), Int(strides[0])), Int(first_rows)), step);
    Stmt copy_new_rows = Loop(
        step, Int(strides[0]), ForKind::kSerial,
        Stmt(new IfThenElseNode(Binary(BinaryOp::kAnd, Binary(BinaryOp::kLess, Int(0), out_row),
                                       Binary(BinaryOp::kLess, next_row, Int(height))),
                                Stmt(new LetStmtNode(row, next_row, copy_row)), nullptr)));
    per_plane.push_back(Loop(out_row, Int(out_height), ForKind::kSerial,
                             Stmt(new SequenceNode({copy_new_rows, compute_row}))));
  } else {
    per_plane.push_back(Loop(out_row, Int(out_height), ForKind::kSerial, compute_row));
  }

  per_task.push_back(Loop(local,
                          Binary(BinaryOp::kMinimum, Int(planes_per_task),
                                 Subtract(Int(planes), Multiply(task, Int(planes_per_task)))),
                          ForKind::kSerial, Stmt(new SequenceNode(std::move(per_plane)))));
  Stmt compute =
      Loop(task, Int(tasks), ForKind::kParallel, Stmt(new SequenceNode(std::move(per_task))));
  std::vector<Buffer> params = inputs;
  params.push_back(out);
  if (!in_place) params.push_back(padded);
  Kernel kernel{name, std::move(params), 1, {}, std::move(compute)};
  kernel.workspace_count = in_place ? 0 : 1;
  return kernel;
}

}  // namespace
}  // namespace relay::kernels

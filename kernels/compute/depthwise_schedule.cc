#include "kernels/compute/depthwise_schedule.h"

#include <array>

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

Stmt Loop(const Var& var, Expr extent, ForKind kind, Stmt body) {
  return Stmt(new ForNode(var, std::move(extent), kind, std::move(body)));
}

// The largest window this schedule writes out in full.
constexpr int64_t kMaximumWindow = 49;
// Output elements per parallel task, at least.
constexpr int64_t kElementsPerTask = 4096;

}  // namespace

std::optional<Kernel> BuildDepthwiseKernel(const std::string& name,
                                           const std::vector<Buffer>& inputs,
                                           const TensorExpr& output, const Attrs& conv_attributes,
                                           size_t data, size_t weight) {
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
  std::vector<int64_t> out_shape;
  for (const Expr& dimension : output.shape) {
    const auto* constant = As<IntImmNode>(dimension);
    if (constant == nullptr) return std::nullopt;
    out_shape.push_back(constant->value);
  }
  if (out_shape[0] != batch || out_shape[1] != channels) return std::nullopt;
  const int64_t out_height = out_shape[2], out_width = out_shape[3];

  // The output element, with the convolution's sum to be replaced.
  std::vector<Var> axes;
  for (const char* axis_name : {"n", "k", "y", "x"}) axes.push_back(Var(new VarNode(axis_name)));
  const Expr element = output.at(std::vector<Expr>(axes.begin(), axes.end()));
  const std::vector<const ReduceNode*> reductions = FindReductions(element);
  if (reductions.size() != 1 || reductions[0]->op != ReduceOp::kSum) return std::nullopt;
  const ReduceNode* sum = reductions[0];
  const DType accumulator = sum->dtype;
  const DType data_dtype = inputs[data]->dtype;
  if (!IsFloat(accumulator) || !IsFloat(data_dtype)) return std::nullopt;

  const auto [top, left, bottom, right] = Padding(conv_attributes);
  const int64_t padded_height = height + top + bottom, padded_width = width + left + right;
  const int64_t planes = batch * channels;
  const Buffer padded(
      new BufferNode("padded", accumulator, {Int(planes * padded_height * padded_width)}));

  // Each plane padded with zeros (and converted to the accumulator's type).
  Stmt pack;
  {
    Var plane(new VarNode("plane")), row(new VarNode("row")), column(new VarNode("column"));
    const Expr source_row = Subtract(row, Int(top)), source_column = Subtract(column, Int(left));
    auto clamp = [](const Expr& index, int64_t extent) {
      return Binary(BinaryOp::kMaximum, Binary(BinaryOp::kMinimum, index, Int(extent - 1)), Int(0));
    };
    auto in_range = [](const Expr& index, int64_t extent) {
      return Binary(BinaryOp::kAnd, Binary(BinaryOp::kGreaterEqual, index, Int(0)),
                    Binary(BinaryOp::kLess, index, Int(extent)));
    };
    const Expr value = Cast(
        accumulator,
        Load(inputs[data],
             Add(Multiply(Add(Multiply(plane, Int(height)), clamp(source_row, height)), Int(width)),
                 clamp(source_column, width))));
    const Expr inside =
        Binary(BinaryOp::kAnd, in_range(source_row, height), in_range(source_column, width));
    const Expr index =
        Add(Multiply(Add(Multiply(plane, Int(padded_height)), row), Int(padded_width)), column);
    pack = Loop(plane, Int(planes), ForKind::kParallel,
                Loop(row, Int(padded_height), ForKind::kSerial,
                     Loop(column, Int(padded_width), ForKind::kVectorized,
                          Stmt(new StoreNode(padded, index,
                                             Select(inside, value, Float(0, accumulator)))))));
  }

  // Rows of the output in parallel tasks: (plane, output row) flattened.
  Stmt compute;
  {
    const int64_t rows = planes * out_height;
    const int64_t rows_per_task =
        std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(out_width, 1));
    const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
    Var task(new VarNode("task")), local(new VarNode("row"));
    const Expr row = Add(Multiply(task, Int(rows_per_task)), local);
    const Expr plane = Binary(BinaryOp::kFloorDivide, row, Int(out_height));
    const Expr out_row = Binary(BinaryOp::kFloorMod, row, Int(out_height));
    const Expr channel = Binary(BinaryOp::kFloorMod, plane, Int(channels));
    const Var& x = axes[3];
    Expr total;
    for (int64_t window_row = 0; window_row < window_height; ++window_row) {
      for (int64_t window_column = 0; window_column < window_width; ++window_column) {
        const Expr padded_row =
            Add(Multiply(out_row, Int(strides[0])), Int(window_row * dilation[0]));
        const Expr padded_column =
            Add(Multiply(x, Int(strides[1])), Int(window_column * dilation[1]));
        const Expr value = Load(
            padded,
            Add(Multiply(Add(Multiply(plane, Int(padded_height)), padded_row), Int(padded_width)),
                padded_column));
        const Expr filter =
            Cast(accumulator,
                 Load(inputs[weight], Add(Multiply(channel, Int(window_height * window_width)),
                                          Int(window_row * window_width + window_column))));
        const Expr product = Binary(BinaryOp::kMultiply, value, filter);
        total = total ? Add(total, product) : product;
      }
    }
    Replacements at;
    at[axes[0].get()] = Binary(BinaryOp::kFloorDivide, plane, Int(channels));
    at[axes[1].get()] = channel;
    at[axes[2].get()] = out_row;
    at[sum] = total;
    const Buffer out(new BufferNode("out", output.dtype, output.shape));
    Stmt store(new StoreNode(out, Add(Multiply(row, Int(out_width)), x), Substitute(element, at)));
    compute = Loop(task, Int(tasks), ForKind::kParallel,
                   Loop(local,
                        Binary(BinaryOp::kMinimum, Int(rows_per_task),
                               Subtract(Int(rows), Multiply(task, Int(rows_per_task)))),
                        ForKind::kSerial, Loop(x, Int(out_width), ForKind::kVectorized, store)));
    std::vector<Buffer> params = inputs;
    params.push_back(out);
    params.push_back(padded);
    Kernel kernel{name, std::move(params), 1, {}, Stmt(new SequenceNode({pack, compute}))};
    kernel.workspace_count = 1;
    return kernel;
  }
}

}  // namespace relay::kernels

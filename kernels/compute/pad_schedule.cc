#include "kernels/compute/pad_schedule.h"

#include <algorithm>

#include "kernels/kir/rewrite.h"

namespace relay::kernels {

using namespace relay::kernels::kir;

namespace {

// Elements per parallel chunk of rows: as the injective schedule's.
constexpr int64_t kChunkElements = 16384;

Stmt Loop(const Var& var, Expr extent, ForKind kind, Stmt body) {
  return Stmt(new ForNode(var, std::move(extent), kind, std::move(body)));
}

}  // namespace

std::vector<int64_t> ConstantPadding::PaddedExtents() const {
  std::vector<int64_t> padded;
  for (size_t axis = 0; axis < extents.size(); ++axis)
    padded.push_back(before[axis] + extents[axis] + after[axis]);
  return padded;
}

std::optional<ConstantPadding> ConstantPaddingOf(const TensorExpr& data,
                                                 const TensorExpr& pad_value,
                                                 const Attrs& pad_attributes) {
  if (GetAttr(pad_attributes, "pad_mode").as_string() != "constant" || data.ndim() == 0) {
    return std::nullopt;
  }
  const std::vector<AttrValue>& pairs = GetAttr(pad_attributes, "pad_width").as_list();
  if (pairs.size() != data.ndim()) return std::nullopt;
  ConstantPadding padding;
  for (size_t axis = 0; axis < data.ndim(); ++axis) {
    const auto* extent = As<IntImmNode>(data.shape[axis]);
    const std::vector<AttrValue>& pair = pairs[axis].as_list();
    if (extent == nullptr || extent->value <= 0 || pair[0].as_int() < 0 || pair[1].as_int() < 0) {
      return std::nullopt;
    }
    padding.extents.push_back(extent->value);
    padding.before.push_back(pair[0].as_int());
    padding.after.push_back(pair[1].as_int());
  }
  padding.value = Cast(data.dtype, pad_value.at({}));
  return padding;
}

Stmt StorePadded(const Buffer& out, const ConstantPadding& padding, const TensorExpr* interior) {
  const std::vector<int64_t> padded = padding.PaddedExtents();
  const std::vector<int64_t>& extents = padding.extents;
  const size_t rank = padded.size(), last = rank - 1;
  const int64_t width = padded[last];
  int64_t rows = 1;
  for (size_t axis = 0; axis < last; ++axis) rows *= padded[axis];
  const int64_t rows_per_chunk = std::max<int64_t>(1, kChunkElements / width);
  const int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;

  Var chunk(new VarNode("chunk")), local(new VarNode("row")), column(new VarNode("j"));
  const Expr row = Add(Multiply(chunk, Int(rows_per_chunk)), local);
  const Expr row_start = Multiply(row, Int(width));
  // The row's index along each leading axis, shifted into the data, and
  // whether the row lies in the padding along any of them.
  std::vector<Expr> source(rank);
  Expr border;
  int64_t stride = 1;
  for (size_t axis = last; axis-- > 0;) {
    Expr index = Binary(BinaryOp::kFloorDivide, row, Int(stride));
    if (axis > 0) index = Binary(BinaryOp::kFloorMod, index, Int(padded[axis]));
    stride *= padded[axis];
    source[axis] = Subtract(index, Int(padding.before[axis]));
    if (padded[axis] == extents[axis]) continue;
    Expr outside = Binary(BinaryOp::kOr, Binary(BinaryOp::kLess, source[axis], Int(0)),
                          Binary(BinaryOp::kLessEqual, Int(extents[axis]), source[axis]));
    border = border ? Binary(BinaryOp::kOr, border, outside) : outside;
  }
  source[last] = column;

  // A run of `extent` elements from `offset` in the row, each `value`.
  auto run = [&](int64_t offset, int64_t extent, const Expr& value) -> Stmt {
    if (extent == 0) return Stmt();
    return Loop(column, Int(extent), ForKind::kVectorized,
                Stmt(new StoreNode(out, Add(row_start, Add(Int(offset), column)), value)));
  };
  std::vector<Stmt> runs;
  const int64_t interior_start = padding.before[last];
  for (Stmt part : {run(0, interior_start, padding.value),
                    interior ? run(interior_start, extents[last], interior->at(source)) : Stmt(),
                    run(interior_start + extents[last], padding.after[last], padding.value)}) {
    if (part) runs.push_back(std::move(part));
  }
  Stmt body = runs.empty()       ? Stmt()
              : runs.size() == 1 ? runs[0]
                                 : Stmt(new SequenceNode(std::move(runs)));
  if (border) body = Stmt(new IfThenElseNode(border, run(0, width, padding.value), body));
  if (!body) return Stmt(new SequenceNode({}));  // no padding, nothing interior
  body = Loop(local,
              Binary(BinaryOp::kMinimum, Int(rows_per_chunk),
                     Subtract(Int(rows), Multiply(chunk, Int(rows_per_chunk)))),
              ForKind::kSerial, body);
  return Loop(chunk, Int(chunks), ForKind::kParallel, body);
}

std::optional<Kernel> BuildPadKernel(const std::string& name, const std::vector<Buffer>& inputs,
                                     const TensorExpr& data, const TensorExpr& pad_value,
                                     const Attrs& pad_attributes) {
  std::optional<ConstantPadding> padding = ConstantPaddingOf(data, pad_value, pad_attributes);
  if (!padding) return std::nullopt;
  std::vector<Var> probe;
  for (size_t axis = 0; axis < data.ndim(); ++axis) probe.push_back(Var(new VarNode("i")));
  if (!FindReductions(data.at(std::vector<Expr>(probe.begin(), probe.end()))).empty()) {
    return std::nullopt;
  }
  std::vector<Expr> out_shape;
  for (int64_t extent : padding->PaddedExtents()) out_shape.push_back(Int(extent));
  const Buffer out(new BufferNode("out", data.dtype, out_shape));
  std::vector<Buffer> params = inputs;
  params.push_back(out);
  return Kernel{name, std::move(params), 1, {}, StorePadded(out, *padding, &data)};
}

}  // namespace relay::kernels

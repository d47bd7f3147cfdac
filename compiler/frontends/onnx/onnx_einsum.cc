// Einsum: the equation's subscripts parsed (with `...` and the implicit
// output), repeated subscripts of one operand reduced to their diagonal,
// then either one batched matrix product (two operands of static shapes)
// or, in general, the operands aligned on every subscript, multiplied with
// broadcasting and summed over the subscripts the output lacks.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

// One operand: its expression, and one subscript per axis (the axes of
// `...` get the characters '0', '1', ... from the right).
struct Operand {
  std::string expr;
  std::string subscripts;
  std::vector<int64_t> shape;  // -1 for `?`
};

// How many axes the `...` of `term` stands for in an operand of rank
// `rank` (0 without one).
size_t EllipsisAxes(const std::string& term, size_t rank) {
  const size_t at = term.find("...");
  const size_t letters = at == std::string::npos ? term.size() : term.size() - 3;
  if (at == std::string::npos ? letters != rank : letters > rank)
    Refuse("subscripts '" + term + "' for an operand of rank " + std::to_string(rank));
  if (at != std::string::npos && term.find('.', at + 3) != std::string::npos)
    Refuse("a malformed ellipsis in '" + term + "'");
  if (at == std::string::npos && term.find('.') != std::string::npos)
    Refuse("a malformed ellipsis in '" + term + "'");
  return rank - letters;
}

// `term` with its `...` replaced by the subscripts of its `count` axes:
// the last `count` of the `ellipsis_rank` broadcast axes '0', '1', ...
std::string ExpandEllipsis(const std::string& term, size_t count, size_t ellipsis_rank) {
  const size_t at = term.find("...");
  if (at == std::string::npos) return term;
  std::string middle;
  for (size_t axis = 0; axis < count; ++axis) middle += char('0' + (ellipsis_rank - count + axis));
  return term.substr(0, at) + middle + term.substr(at + 3);
}

// Removes repeated subscripts of `operand` by taking their diagonal: the
// elements whose two indices agree, summed over the second axis.
void TakeDiagonals(ConvertContext& context, Operand& operand, DType dtype) {
  for (size_t first = 0; first < operand.subscripts.size(); ++first) {
    for (size_t second = first + 1; second < operand.subscripts.size();) {
      if (operand.subscripts[second] != operand.subscripts[first]) {
        ++second;
        continue;
      }
      const size_t rank = operand.subscripts.size();
      const std::string extent = context.Bind(Extent(operand.expr, operand.shape, first));
      auto positions = [&](size_t axis) { return PositionsAlong(extent, axis, rank); };
      operand.expr = context.Bind(Call("sum",
                                       {Where(Call("equal", {positions(first), positions(second)}),
                                              operand.expr, ZeroLiteral(dtype))},
                                       {"axis=" + IntList({int64_t(second)})}));
      operand.subscripts.erase(second, 1);
      operand.shape.erase(operand.shape.begin() + int64_t(second));
    }
  }
}

// `operand` with its axes in the order of `order` (a permutation of its
// subscripts).
std::string Transposed(const Operand& operand, const std::string& order) {
  std::vector<int64_t> axes;
  for (char letter : order) axes.push_back(int64_t(operand.subscripts.find(letter)));
  bool identity = true;
  for (size_t axis = 0; axis < axes.size(); ++axis) identity &= axes[axis] == int64_t(axis);
  return identity ? operand.expr : Call("transpose", {operand.expr}, {"axes=" + IntList(axes)});
}

// Sums `operand` over the subscripts not in `keep`.
void SumAway(Operand& operand, const std::string& keep) {
  std::vector<int64_t> axes;
  std::string kept;
  std::vector<int64_t> shape;
  for (size_t axis = 0; axis < operand.subscripts.size(); ++axis) {
    if (keep.find(operand.subscripts[axis]) == std::string::npos) {
      axes.push_back(int64_t(axis));
    } else {
      kept += operand.subscripts[axis];
      shape.push_back(operand.shape[axis]);
    }
  }
  if (axes.empty()) return;
  operand.expr = Call("sum", {operand.expr}, {"axis=" + IntList(axes)});
  operand.subscripts = kept;
  operand.shape = shape;
}

bool Static(const Operand& operand) {
  return std::all_of(operand.shape.begin(), operand.shape.end(), [](int64_t d) { return d >= 0; });
}

// Two operands of static shapes: one nn.batch_matmul of (batch, rows,
// contracted) by (batch, columns, contracted).
std::optional<std::string> AsBatchMatmul(Operand a, Operand b, const std::string& output) {
  if (!Static(a) || !Static(b)) return std::nullopt;
  SumAway(a, output + b.subscripts);
  SumAway(b, output + a.subscripts);
  std::string batch, rows, columns, contracted;
  std::map<char, int64_t> extent;
  for (size_t axis = 0; axis < a.subscripts.size(); ++axis)
    extent[a.subscripts[axis]] = a.shape[axis];
  for (size_t axis = 0; axis < b.subscripts.size(); ++axis) {
    const char letter = b.subscripts[axis];
    if (extent.count(letter) && extent[letter] != b.shape[axis]) return std::nullopt;  // broadcast
    extent[letter] = b.shape[axis];
  }
  for (char letter : a.subscripts) {
    const bool in_b = b.subscripts.find(letter) != std::string::npos;
    const bool in_output = output.find(letter) != std::string::npos;
    (in_b ? (in_output ? batch : contracted) : rows) += letter;
  }
  for (char letter : b.subscripts) {
    if (a.subscripts.find(letter) == std::string::npos) columns += letter;
  }
  auto product = [&](const std::string& letters) {
    std::vector<int64_t> dims;
    for (char letter : letters) dims.push_back(extent[letter]);
    return Product(dims);
  };
  const std::string left =
      Call("reshape", {Transposed(a, batch + rows + contracted)},
           {"newshape=" + IntList({product(batch), product(rows), product(contracted)})});
  const std::string right =
      Call("reshape", {Transposed(b, batch + columns + contracted)},
           {"newshape=" + IntList({product(batch), product(columns), product(contracted)})});
  std::vector<int64_t> dims;
  for (char letter : batch + rows + columns) dims.push_back(extent[letter]);
  Operand result{
      Call("reshape", {Call("nn.batch_matmul", {left, right})}, {"newshape=" + IntList(dims)}),
      batch + rows + columns, dims};
  return Transposed(result, output);
}

std::vector<OnnxValue> ConvertEinsum(ConvertContext& context) {
  std::string equation;
  for (char c : context.StringAttribute("equation", "")) {
    if (c != ' ') equation += c;
  }
  const size_t arrow = equation.find("->");
  const std::string inputs = equation.substr(0, arrow);
  std::vector<std::string> terms{""};
  for (char c : inputs) {
    if (c == ',') {
      terms.emplace_back();
    } else {
      terms.back() += c;
    }
  }
  if (terms.size() != context.input_count()) Refuse("an equation for another number of inputs");
  const DType dtype = context.Input(0).dtype;
  std::vector<size_t> ellipsis_axes;
  size_t ellipsis_rank = 0;
  for (size_t index = 0; index < terms.size(); ++index) {
    for (char c : terms[index]) {
      if (!std::isalpha(static_cast<unsigned char>(c)) && c != '.')
        Refuse("subscript '" + std::string(1, c) + "' in the equation");
    }
    const OnnxValue& input = context.Input(index);
    if (input.dtype != dtype) Refuse("operands of different dtypes");
    if (!input.shape) Refuse("an operand of unknown rank");
    ellipsis_axes.push_back(EllipsisAxes(terms[index], input.shape->size()));
    ellipsis_rank = std::max(ellipsis_rank, ellipsis_axes.back());
  }
  if (ellipsis_rank > 10) Refuse("an ellipsis of more than 10 axes");
  std::vector<Operand> operands;
  for (size_t index = 0; index < terms.size(); ++index) {
    operands.push_back(Operand{context.Tensor(index),
                               ExpandEllipsis(terms[index], ellipsis_axes[index], ellipsis_rank),
                               *context.Input(index).shape});
  }
  // The output: as written (its `...` the broadcast axes), or the
  // subscripts used once, in alphabetical order, after the `...` axes.
  std::string ellipsis;
  for (size_t axis = 0; axis < ellipsis_rank; ++axis) ellipsis += char('0' + axis);
  std::string output;
  if (arrow != std::string::npos) {
    output = equation.substr(arrow + 2);
    const size_t at = output.find("...");
    if (at != std::string::npos) output.replace(at, 3, ellipsis);
  } else {
    std::map<char, int> uses;
    for (const Operand& operand : operands) {
      for (char letter : operand.subscripts) ++uses[letter];
    }
    output = ellipsis;
    for (const auto& [letter, count] : uses) {
      if (count == 1 && std::isalpha(static_cast<unsigned char>(letter))) output += letter;
    }
  }
  for (char letter : output) {
    if (std::count(output.begin(), output.end(), letter) != 1)
      Refuse("an output subscript repeated");
    if (std::none_of(operands.begin(), operands.end(), [&](const Operand& operand) {
          return operand.subscripts.find(letter) != std::string::npos;
        }))
      Refuse("an output subscript no operand has");
  }
  for (Operand& operand : operands) TakeDiagonals(context, operand, dtype);

  std::string result;
  if (operands.size() == 2) {
    if (std::optional<std::string> product = AsBatchMatmul(operands[0], operands[1], output))
      result = *product;
  }
  if (result.empty()) {
    // Every subscript in one order, the output's first; each operand
    // transposed to it and given axes of extent 1 for the others.
    std::string order = output;
    for (const Operand& operand : operands) {
      for (char letter : operand.subscripts) {
        if (order.find(letter) == std::string::npos) order += letter;
      }
    }
    for (Operand& operand : operands) {
      std::string own;
      for (char letter : order) {
        if (operand.subscripts.find(letter) != std::string::npos) own += letter;
      }
      std::string aligned = Transposed(operand, own);
      for (size_t axis = 0; axis < order.size(); ++axis) {
        if (operand.subscripts.find(order[axis]) == std::string::npos)
          aligned = Call("expand_dims", {aligned}, {"axis=" + std::to_string(axis)});
      }
      result = result.empty() ? aligned : Call("multiply", {result, aligned});
    }
    std::vector<int64_t> contracted;
    for (size_t axis = output.size(); axis < order.size(); ++axis)
      contracted.push_back(int64_t(axis));
    if (!contracted.empty()) result = Call("sum", {result}, {"axis=" + IntList(contracted)});
  }
  OnnxValue value = Result(result);
  value.dtype = dtype;
  return {value};
}

}  // namespace

void AddEinsumConverter(std::map<std::string, Converter>& table) {
  table["Einsum"] = ConvertEinsum;
}

}  // namespace relay::onnx_import

// The ONNX operators the importer converts, each to a Relay expression
// over its inputs' expressions (onnx_import.h holds the rest of the
// importer: reading the model, naming values, writing the module).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "relay/dtype.h"
#include "relay/tensor.h"

namespace onnx {
class NodeProto;
class AttributeProto;
}  // namespace onnx

namespace relay::onnx_import {

// What the importer knows of a value of the graph.
struct OnnxValue {
  // Its Relay expression: a variable, or a scalar literal. Empty for a
  // constant that is not yet a variable (see ConvertContext::Tensor).
  std::string expr;
  DType dtype = DType::kFloat32;
  // Its shape when its rank is known, each dimension -1 when unknown.
  std::optional<std::vector<int64_t>> shape;
  // Its value, when known while importing (an initializer, a Constant
  // node's output, a folded shape computation).
  Ref<Tensor> constant;
  // For a 1-D int64 shape computed while running (Shape of a tensor with
  // `?` dimensions): the entries known while importing, -1 for the others,
  // so that picking only known ones folds.
  std::optional<std::vector<int64_t>> known_entries;
};

// Why a node cannot be converted: names what is missing, for the
// importer's one message listing every such node.
struct Unsupported {
  std::string reason;
};

// One node being converted.
class ConvertContext {
 public:
  virtual ~ConvertContext() = default;
  virtual const onnx::NodeProto& node() const = 0;
  virtual int64_t opset() const = 0;
  // Where the model's external data files are.
  virtual const std::string& model_folder() const = 0;
  // The node's inputs (an omitted optional input is absent).
  virtual size_t input_count() const = 0;
  virtual bool HasInput(size_t index) const = 0;
  virtual const OnnxValue& Input(size_t index) const = 0;
  // Input `index` as a Relay expression: a constant becomes a weight of
  // @main (or a literal for a scalar) the first time it is used so.
  virtual std::string Tensor(size_t index) = 0;
  // `value` as a weight of @main (named from `hint`), for a constant the
  // converter derives while importing (a weight reshaped, say).
  virtual std::string Weight(const std::string& hint, Ref<relay::Tensor> value) = 0;
  // Makes a block's result from its outputs' expressions.
  using BlockResult = std::function<std::string(const std::vector<std::string>& outputs)>;
  // The graph attribute `attribute` (an If's branch, a Loop's body) as a
  // Relay block, `{ let ...; result }`, and its outputs' values: its inputs
  // are `inputs` (expressions of the enclosing function's parameters, say),
  // and its result is `result` of its outputs, or a tuple of them when
  // `result` is empty.
  virtual std::string Subgraph(const std::string& attribute, const std::vector<OnnxValue>& inputs,
                               std::vector<OnnxValue>& outputs, const BlockResult& result = {}) = 0;
  // A variable name not used before, from `hint`: `%hint`, `%hint_2`, ...
  virtual std::string Fresh(const std::string& hint) = 0;
  // Binds `expr` to `variable` (from Fresh) in the block being written.
  virtual void Let(const std::string& variable, const std::string& expr) = 0;
  // Binds `expr` to a fresh variable of the program and returns it (for a
  // value several outputs project, such as a split's tuple).
  std::string Bind(const std::string& expr);
  // Saves the importer's state; calling the result undoes everything
  // converted since (to convert a subgraph again, under other assumptions).
  virtual std::function<void()> Checkpoint() = 0;
  // Adds a global function, `def @NAME...` with NAME standing for its
  // unique name (from `hint`), and returns that name.
  virtual std::string AddGlobal(const std::string& hint, const std::string& definition) = 0;
  // Whether anything reads the node's output `index` (a node of the graph,
  // or the graph's outputs).
  virtual bool OutputUsed(size_t index) const = 0;
  // Input `index`'s value, which must be known while importing (a shape, an
  // axis list, a clip bound): Unsupported otherwise.
  const Ref<relay::Tensor>& Constant(size_t index) const;

  // Attributes, with defaults; a value of the wrong kind is Unsupported.
  const onnx::AttributeProto* Attribute(const std::string& name) const;
  int64_t IntAttribute(const std::string& name, int64_t fallback) const;
  float FloatAttribute(const std::string& name, float fallback) const;
  std::string StringAttribute(const std::string& name, const std::string& fallback) const;
  std::optional<std::vector<int64_t>> IntsAttribute(const std::string& name) const;
};

// A converter returns its outputs' expressions (one per node output it
// defines), each with what is known of its dtype, shape and value.
using Converter = std::function<std::vector<OnnxValue>(ConvertContext&)>;

// The converter of `op_type` (the default ONNX domain), or null.
const Converter* FindConverter(const std::string& op_type);

// Every operator type with a converter, sorted (for docs and tests).
std::vector<std::string> ConvertedOperators();

// A Relay literal of a scalar (0-d) host tensor: 1.5f, 3i64, True, ...
std::string ScalarLiteral(const relay::Tensor& scalar);

// A Relay expression whose value is `tensor`: its elements' literals
// stacked and reshaped. Empty where an element has no literal (a
// non-finite float, a dtype without literals).
std::string TensorLiteral(const relay::Tensor& tensor);

}  // namespace relay::onnx_import

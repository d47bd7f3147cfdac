#include "compiler/frontends/onnx/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "compiler/frontends/onnx/onnx_legacy_opsets.h"
#include "compiler/frontends/onnx/onnx_opset18.h"
#include "compiler/frontends/onnx/onnx_tensors.h"
#include "relay/error.h"

namespace relay::onnx_import {

namespace {

// The default domain's opsets the converters read: written for 7 on; the
// forms of opsets 1-6 that differ are refused node by node
// (onnx_legacy_opsets.h).
constexpr int64_t kMinimumOpset = 1;
constexpr int64_t kMaximumOpset = 18;

bool IsIdentifierStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdentifierPart(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// A value's type as ONNX's shape inference or the graph declares it.
struct DeclaredType {
  int32_t element_type = 0;
  std::optional<std::vector<int64_t>> shape;  // -1 for a dimension unknown until run time
};

DeclaredType TypeOf(const onnx::ValueInfoProto& info) {
  DeclaredType type;
  if (!info.type().has_tensor_type()) return type;
  const onnx::TypeProto_Tensor& tensor = info.type().tensor_type();
  type.element_type = tensor.elem_type();
  if (tensor.has_shape()) {
    std::vector<int64_t> dims;
    for (const onnx::TensorShapeProto_Dimension& dim : tensor.shape().dim())
      dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : -1);
    type.shape = std::move(dims);
  }
  return type;
}

// How errors name a node: nodes need no name, and an unnamed one goes by
// its first output.
std::string NodeLabel(const onnx::NodeProto& node) {
  return (node.name().empty() && node.output_size() > 0 ? "node of output '" + node.output(0) + "'"
                                                        : "node '" + node.name() + "'") +
         " (" + node.op_type() + ")";
}

class Importer {
 public:
  Importer(onnx::ModelProto& model, std::string origin, std::string folder, ImportOptions options)
      : model_(model), origin_(std::move(origin)), folder_(std::move(folder)), options_(options) {}

  ImportedModel Run() {
    opset_ = DefaultOpset();
    source_opset_ = opset_;
    if (opset_ == 18) {
      // ONNX 1.12 knows opsets up to 17 (onnx_opset18.h).
      RewriteOpset18As17(model_, origin_, folder_);
      opset_ = 17;
    }
    Check();
    const onnx::GraphProto& graph = model_.graph();
    DefineGraphValues(graph);
    for (const onnx::ValueInfoProto& input : graph.input()) {
      if (values_.count(input.name())) continue;  // an initializer's default value
      DeclareInput(input);
    }
    MarkUsed(graph);
    for (const onnx::NodeProto& node : graph.node()) ConvertNode(node);
    if (!problems_.empty()) ReportProblems();

    std::vector<std::string> results;
    for (const onnx::ValueInfoProto& output : graph.output()) {
      imported_.outputs.push_back(output.name());
      results.push_back(Materialize(output.name(), "graph output"));
    }
    InlineSmallWeights();
    std::ostringstream text;
    text << "#[version = \"0.0.5\"]\n";
    text << "// Imported from " << std::filesystem::path(origin_).filename().string() << " (opset "
         << source_opset_ << ").\n";
    for (const std::string& global : globals_) text << global << "\n";
    text << "def @main(";
    for (size_t index = 0; index < parameters_.size(); ++index)
      text << (index ? ",\n          " : "") << parameters_[index];
    text << ") ";
    text << Block(scopes_.back(), results, "") << "\n";
    imported_.relay_text = text.str();
    return std::move(imported_);
  }

  // The body of a function or branch: its bindings, then its result (a
  // tuple of several), indented by `indent` more than its braces.
  static std::string Block(const std::vector<std::string>& bindings,
                           const std::vector<std::string>& results, const std::string& indent) {
    std::string text = "{\n";
    for (const std::string& binding : bindings) text += indent + "  " + binding + "\n";
    text += indent + "  ";
    if (results.size() == 1) {
      text += results[0];
    } else {
      text += "(";
      for (size_t index = 0; index < results.size(); ++index)
        text += (index ? ", " : "") + results[index];
      text += ")";
    }
    return text + "\n" + indent + "}";
  }

  // A subgraph (an If's branch, a Loop's or Scan's body) as a Relay block,
  // its outputs' values in `outputs`: its inputs are `inputs` (a body's
  // parameters), its nodes are converted in a scope of their own and may
  // read any value of the scopes around it, and `result` (when given) makes
  // the block's result from its outputs' expressions.
  std::string Subgraph(const onnx::GraphProto& graph, const std::vector<OnnxValue>& inputs,
                       std::vector<OnnxValue>& outputs, const ConvertContext::BlockResult& result) {
    if (size_t(graph.input_size()) != inputs.size()) {
      throw Unsupported{"a subgraph with " + std::to_string(graph.input_size()) + " inputs where " +
                        std::to_string(inputs.size()) + " are given"};
    }
    // What the subgraph defines is gone when it ends, as in Relay's scopes.
    std::set<std::string> outer;
    for (const auto& [name, value] : values_) outer.insert(name);
    // Its inputs hide values of the same names around it until it ends.
    std::vector<std::pair<std::string, OnnxValue>> hidden;
    for (int index = 0; index < graph.input_size(); ++index) {
      const std::string& name = graph.input(index).name();
      auto found = values_.find(name);
      if (found != values_.end()) hidden.emplace_back(name, found->second);
      outer.erase(name);
      poisoned_.erase(name);
      values_[name] = inputs[size_t(index)];
    }
    DefineGraphValues(graph);
    scopes_.emplace_back();
    // An input given as a call (a slice of a scanned tensor) is bound once,
    // at the block's start.
    for (int index = 0; index < graph.input_size(); ++index) {
      OnnxValue& value = values_[graph.input(index).name()];
      if (value.expr.find('(') == std::string::npos) continue;
      const std::string variable = Fresh(graph.input(index).name());
      Let(variable, value.expr);
      value.expr = variable;
    }
    const size_t problems = problems_.size();
    for (const onnx::NodeProto& node : graph.node()) ConvertNode(node);
    auto leave = [&]() {
      scopes_.pop_back();
      std::erase_if(values_, [&](const auto& entry) { return !outer.count(entry.first); });
      for (auto& [name, value] : hidden) values_[name] = value;
    };
    if (problems_.size() != problems) {
      leave();
      throw Unsupported{"its subgraph holds nodes that do not convert (listed)"};
    }
    std::vector<std::string> results;
    try {
      for (const onnx::ValueInfoProto& output : graph.output()) {
        results.push_back(Materialize(output.name(), "subgraph output"));
        outputs.push_back(values_.at(output.name()));
      }
      if (result) results = {result(results)};
    } catch (...) {
      leave();
      throw;
    }
    const std::string indent(2 * scopes_.size() - 2, ' ');
    std::string block = Block(scopes_.back(), results, indent);
    leave();
    return block;
  }

  // Everything converting may change, to undo a trial conversion.
  struct State {
    std::unordered_map<std::string, OnnxValue> values;
    std::set<std::string> used_identifiers, poisoned;
    std::vector<std::string> parameters, globals, problems;
    std::vector<std::vector<std::string>> scopes;
    std::set<std::string> unsupported_operators;
    std::map<std::string, Ref<Tensor>> weights;
  };
  State Save() const {
    return State{values_,          used_identifiers_, poisoned_, parameters_,
                 globals_,         problems_,         scopes_,   unsupported_operators_,
                 imported_.weights};
  }
  void Restore(State state) {
    // Values are restored in place: the node being converted holds
    // pointers to its inputs, which must stay valid.
    std::erase_if(values_, [&](const auto& entry) { return !state.values.count(entry.first); });
    for (auto& [name, value] : state.values) values_[name] = std::move(value);
    used_identifiers_ = std::move(state.used_identifiers);
    poisoned_ = std::move(state.poisoned);
    parameters_ = std::move(state.parameters);
    globals_ = std::move(state.globals);
    problems_ = std::move(state.problems);
    scopes_ = std::move(state.scopes);
    unsupported_operators_ = std::move(state.unsupported_operators);
    imported_.weights = std::move(state.weights);
  }

  // Input `name` as a Relay expression (see ConvertContext::Tensor).
  std::string Materialize(const std::string& name, const std::string& what) {
    auto found = values_.find(name);
    if (found == values_.end()) Fail(what + " '" + name + "' is not defined");
    OnnxValue& value = found->second;
    if (!value.expr.empty()) return value.expr;
    if (value.constant->ndim() == 0) {
      std::string literal = ScalarLiteral(*value.constant);
      if (!literal.empty()) return literal;
    }
    value.expr = AddWeight(name, value.constant);
    return value.expr;
  }

  // A parameter of @main for the weight `tensor`, named from `name`.
  std::string AddWeight(const std::string& name, Ref<Tensor> tensor) {
    const std::string identifier = UniqueIdentifier(name);
    parameters_.push_back("%" + identifier + ": " +
                          TypeText(tensor->dtype(), std::vector<int64_t>(tensor->shape().begin(),
                                                                         tensor->shape().end())));
    imported_.weights[identifier] = std::move(tensor);
    return "%" + identifier;
  }

  int64_t opset() const { return opset_; }
  const std::string& folder() const { return folder_; }
  std::string AddGlobal(const std::string& hint, const std::string& definition) {
    const std::string name = UniqueIdentifier(hint);
    std::string text = definition;
    for (size_t at = text.find("@NAME"); at != std::string::npos; at = text.find("@NAME", at))
      text.replace(at, 5, "@" + name);
    globals_.push_back(text);
    return "@" + name;
  }
  bool Used(const std::string& name) const { return !name.empty() && used_.count(name) != 0; }
  std::string Fresh(const std::string& hint) { return "%" + UniqueIdentifier(hint); }
  void Let(const std::string& variable, const std::string& expr) {
    scopes_.back().push_back("let " + variable + " = " + expr + ";");
  }
  const OnnxValue* Find(const std::string& name) const {
    auto found = values_.find(name);
    return found == values_.end() ? nullptr : &found->second;
  }

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw Error(ErrorKind::kLoad, origin_ + ": " + message);
  }

  int64_t DefaultOpset() const {
    for (const onnx::OperatorSetIdProto& entry : model_.opset_import()) {
      if (entry.domain().empty() || entry.domain() == "ai.onnx") return entry.version();
    }
    Fail("the model imports no opset of the default ONNX domain");
  }

  // Weights small enough (ImportOptions) become bindings at the start of
  // @main instead of its parameters.
  void InlineSmallWeights() {
    std::vector<std::string> bindings;
    for (auto weight = imported_.weights.begin(); weight != imported_.weights.end();) {
      const auto& [identifier, tensor] = *weight;
      const std::string literal = tensor->element_count() <= options_.inline_weight_elements
                                      ? TensorLiteral(*tensor)
                                      : std::string();
      if (literal.empty()) {
        ++weight;
        continue;
      }
      bindings.push_back("let %" + identifier + " = " + literal + ";");
      std::erase_if(parameters_, [&](const std::string& parameter) {
        return parameter.starts_with("%" + identifier + ": ");
      });
      weight = imported_.weights.erase(weight);
    }
    scopes_.front().insert(scopes_.front().begin(), bindings.begin(), bindings.end());
  }

  // The checker and shape inference of Debian's ONNX library.
  void Check() {
    if (opset_ < kMinimumOpset || opset_ > kMaximumOpset) {
      throw Error(ErrorKind::kCompile,
                  origin_ + ": opset " + std::to_string(opset_) + " is outside the supported " +
                      std::to_string(kMinimumOpset) + "-" + std::to_string(kMaximumOpset));
    }
    try {
      onnx::checker::check_model(model_);
      // Shape inference reads some inputs' tensor types without checking
      // (MaxUnpool's indices given as a sparse tensor crash it).
      for (const onnx::ValueInfoProto& input : model_.graph().input()) {
        if (!input.type().has_tensor_type()) Fail("input '" + input.name() + "' is not a tensor");
      }
      CheckRawDataSizes(model_.graph());
      CheckWindowAttributes(model_.graph());
      onnx::shape_inference::InferShapes(model_);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& error) {
      Fail(std::string("not a valid ONNX model: ") + error.what());
    }
  }

  // ONNX 1.12's shape inference copies a constant's raw bytes by its
  // shape without checking their count (a Resize's scales overflowed the
  // buffer), so every tensor of the model, initializers and node
  // attributes in every graph, must hold as many bytes as its shape needs.
  void CheckRawDataSizes(const onnx::GraphProto& graph) const {
    auto check = [&](const onnx::TensorProto& tensor) {
      if (!tensor.has_raw_data()) return;
      const std::optional<DType> dtype = DTypeOfElementType(tensor.data_type());
      if (!dtype) return;  // refused where it is read
      uint64_t count = 1;
      for (int64_t dim : tensor.dims()) {
        if (dim < 0 || (dim > 0 && count > (uint64_t(1) << 40) / uint64_t(dim)))
          Fail("tensor '" + tensor.name() + "' has an invalid shape");
        count *= uint64_t(dim);
      }
      if (count * DTypeSize(*dtype) != tensor.raw_data().size())
        Fail("tensor '" + tensor.name() + "' has " + std::to_string(tensor.raw_data().size()) +
             " bytes of data for " + std::to_string(count) + " elements");
    };
    for (const onnx::TensorProto& tensor : graph.initializer()) check(tensor);
    for (const onnx::NodeProto& node : graph.node()) {
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        if (attribute.has_t()) check(attribute.t());
        for (const onnx::TensorProto& tensor : attribute.tensors()) check(tensor);
        if (attribute.has_g()) CheckRawDataSizes(attribute.g());
        for (const onnx::GraphProto& inner : attribute.graphs()) CheckRawDataSizes(inner);
      }
    }
  }

  // The ranks of tensors known before inference: weights and inputs.
  static std::map<std::string, int> KnownRanks(const onnx::GraphProto& graph) {
    std::map<std::string, int> ranks;
    for (const onnx::TensorProto& tensor : graph.initializer())
      ranks[tensor.name()] = tensor.dims_size();
    for (const onnx::ValueInfoProto& info : graph.input()) {
      if (info.type().has_tensor_type() && info.type().tensor_type().has_shape())
        ranks.emplace(info.name(), info.type().tensor_type().shape().dim_size());
    }
    return ranks;
  }

  // ONNX 1.12's inference of DFT and STFT reads axes of the signal (and
  // STFT's window) without checking their ranks (the fuzzer crashed it with
  // a 2-D STFT signal), so ranks they cannot have are refused first: a DFT
  // signal's axis must be one of its axes before the last, an STFT signal
  // is (batch, length, 1 or 2) and its window 1-D.
  void CheckSignalRanks(const onnx::NodeProto& node,
                        const std::map<std::string, int>& ranks) const {
    auto rank_of = [&](int input) -> std::optional<int> {
      if (node.input_size() <= input || !ranks.count(node.input(input))) return std::nullopt;
      return ranks.at(node.input(input));
    };
    if (node.op_type() == "DFT") {
      int64_t axis = 1;
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        if (attribute.name() == "axis") axis = attribute.i();
      }
      const std::optional<int> rank = rank_of(0);
      if (rank && (*rank < 2 || axis < -*rank || axis >= *rank - 1 || (axis < 0 && axis > -2)))
        Fail(NodeLabel(node) + ": its axis is not an axis of its signal before the last");
    } else if (node.op_type() == "STFT") {
      if (rank_of(0) && *rank_of(0) != 3)
        Fail(NodeLabel(node) + ": its signal is not (batch, length, 1 or 2)");
      if (rank_of(2) && *rank_of(2) != 1) Fail(NodeLabel(node) + ": its window is not 1-D");
    }
  }

  // ONNX 1.12's shape inference trusts a window's attributes: it divides by
  // its strides and dilations and indexes its pads by the kernel's rank
  // without checking them (a zero stride, or pads too few, crash it). Such
  // attributes are refused before it runs, in every graph of the model.
  void CheckWindowAttributes(const onnx::GraphProto& graph) const {
    static const std::set<std::string> kWindowOperators = {
        "Conv",        "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool",
        "AveragePool", "LpPool",        "MaxUnpool",   "MaxRoiPool"};
    const std::map<std::string, int> ranks = KnownRanks(graph);
    for (const onnx::NodeProto& node : graph.node()) {
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        if (attribute.has_g()) CheckWindowAttributes(attribute.g());
        for (const onnx::GraphProto& inner : attribute.graphs()) CheckWindowAttributes(inner);
      }
      CheckSignalRanks(node, ranks);
      if (!kWindowOperators.count(node.op_type())) continue;
      // The number of spatial axes: the kernel's, or the weight's rank - 2.
      int spatial = -1;
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        if (attribute.name() == "kernel_shape") spatial = attribute.ints_size();
      }
      const int weight = node.op_type() == "QLinearConv" ? 3 : 1;
      if (spatial < 0 && node.input_size() > weight && ranks.count(node.input(weight)))
        spatial = ranks.at(node.input(weight)) - 2;
      if (spatial <= 0) Fail(NodeLabel(node) + ": its kernel's rank is unknown or not positive");
      if (node.input_size() > 0 && ranks.count(node.input(0)) &&
          ranks.at(node.input(0)) != spatial + 2)
        Fail(NodeLabel(node) + ": its data's rank does not match its kernel's");
      // MaxUnpool's indices are shaped as its data (inference reads them so).
      if (node.op_type() == "MaxUnpool" && node.input_size() > 1 && ranks.count(node.input(1)) &&
          ranks.at(node.input(1)) != spatial + 2)
        Fail(NodeLabel(node) + ": its indices' rank does not match its kernel's");
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        const std::string& name = attribute.name();
        const bool positive = name == "strides" || name == "dilations" || name == "kernel_shape";
        const bool non_negative = name == "pads" || name == "output_padding";
        for (int64_t value : attribute.ints()) {
          if ((positive && value <= 0) || (non_negative && value < 0)) {
            Fail(NodeLabel(node) + " has " + name + " " + std::to_string(value));
          }
        }
        const int expected = name == "pads" ? 2 * spatial
                             : positive || name == "output_padding" || name == "output_shape"
                                 ? spatial
                                 : -1;
        if (expected >= 0 && attribute.ints_size() != expected) {
          Fail(NodeLabel(node) + " has " + std::to_string(attribute.ints_size()) + " " + name +
               " for " + std::to_string(spatial) + " spatial axes");
        }
        if (name == "group" && attribute.i() <= 0) {
          Fail(NodeLabel(node) + " has group " + std::to_string(attribute.i()));
        }
      }
    }
  }

  std::string UniqueIdentifier(const std::string& onnx_name) {
    std::string identifier = RelayIdentifier(onnx_name);
    if (used_identifiers_.insert(identifier).second) return identifier;
    for (int suffix = 2;; ++suffix) {
      const std::string candidate = identifier + "_" + std::to_string(suffix);
      if (used_identifiers_.insert(candidate).second) return candidate;
    }
  }

  // What `graph` declares of its values' types (its own and ONNX's shape
  // inference's), and its initializers as constants.
  void DefineGraphValues(const onnx::GraphProto& graph) {
    for (const onnx::ValueInfoProto& info : graph.value_info())
      declared_[info.name()] = TypeOf(info);
    for (const onnx::ValueInfoProto& info : graph.output()) declared_[info.name()] = TypeOf(info);
    for (const onnx::TensorProto& initializer : graph.initializer()) {
      OnnxValue value;
      value.constant =
          TensorFromProto(initializer, folder_, "initializer '" + initializer.name() + "'");
      value.dtype = value.constant->dtype();
      value.shape =
          std::vector<int64_t>(value.constant->shape().begin(), value.constant->shape().end());
      values_[initializer.name()] = value;
    }
  }

  // Marks every value a node reads, in `graph` and the graphs of its
  // nodes' attributes (branches read values of the scopes around them).
  void MarkUsed(const onnx::GraphProto& graph) {
    for (const onnx::NodeProto& node : graph.node()) {
      for (const std::string& input : node.input()) used_.insert(input);
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        if (attribute.has_g()) MarkUsed(attribute.g());
        for (const onnx::GraphProto& inner : attribute.graphs()) MarkUsed(inner);
      }
    }
    for (const onnx::ValueInfoProto& output : graph.output()) used_.insert(output.name());
  }

  void DeclareInput(const onnx::ValueInfoProto& input) {
    const DeclaredType type = TypeOf(input);
    if (!input.type().has_tensor_type()) Fail("input '" + input.name() + "' is not a tensor");
    const std::optional<DType> dtype = DTypeOfElementType(type.element_type);
    if (!dtype) {
      Fail("input '" + input.name() + "' has element type " + ElementTypeName(type.element_type) +
           ", which relay-vm does not support");
    }
    if (!type.shape) Fail("input '" + input.name() + "' has no shape (its rank is needed)");
    const std::string identifier = UniqueIdentifier(input.name());
    parameters_.push_back("%" + identifier + ": " + TypeText(*dtype, *type.shape));
    imported_.inputs.emplace_back(input.name(), identifier);
    OnnxValue value;
    value.expr = "%" + identifier;
    value.dtype = *dtype;
    value.shape = type.shape;
    values_[input.name()] = value;
  }

  void ConvertNode(const onnx::NodeProto& node);

  void ReportProblems() const {
    std::string message = origin_ + ": cannot import " + std::to_string(problems_.size()) +
                          " node" + (problems_.size() == 1 ? "" : "s") + " (opset " +
                          std::to_string(source_opset_) + "):";
    for (const std::string& problem : problems_) message += "\n  " + problem;
    if (!unsupported_operators_.empty()) {
      message += "\nunsupported operators:";
      for (const std::string& op : unsupported_operators_) message += " " + op;
    }
    throw Error(ErrorKind::kCompile, message);
  }

  onnx::ModelProto& model_;
  const std::string origin_;
  const std::string folder_;
  const ImportOptions options_;
  int64_t opset_ = 0;         // the opset the converters see
  int64_t source_opset_ = 0;  // the model's (18 is converted as 17)
  std::unordered_map<std::string, DeclaredType> declared_;
  std::unordered_map<std::string, OnnxValue> values_;
  std::set<std::string> used_identifiers_;
  std::set<std::string> poisoned_;  // outputs of nodes that failed
  std::vector<std::string> parameters_;
  // The bindings of @main's body, then of each branch being converted.
  std::vector<std::vector<std::string>> scopes_{1};
  std::vector<std::string> globals_;
  std::set<std::string> used_;  // values some node or the graph's outputs read
  std::vector<std::string> problems_;
  std::set<std::string> unsupported_operators_;
  ImportedModel imported_;
};

class NodeContext final : public ConvertContext {
 public:
  NodeContext(Importer& importer, const onnx::NodeProto& node, std::vector<const OnnxValue*> inputs)
      : importer_(importer), node_(node), inputs_(std::move(inputs)) {}

  const onnx::NodeProto& node() const override { return node_; }
  int64_t opset() const override { return importer_.opset(); }
  const std::string& model_folder() const override { return importer_.folder(); }
  size_t input_count() const override { return inputs_.size(); }
  bool HasInput(size_t index) const override {
    return index < inputs_.size() && inputs_[index] != nullptr;
  }
  const OnnxValue& Input(size_t index) const override {
    if (!HasInput(index)) throw Unsupported{"input " + std::to_string(index) + " is required"};
    return *inputs_[index];
  }
  std::string Tensor(size_t index) override {
    Input(index);
    return importer_.Materialize(node_.input(int(index)), "input");
  }
  std::string Fresh(const std::string& hint) override { return importer_.Fresh(hint); }
  void Let(const std::string& variable, const std::string& expr) override {
    importer_.Let(variable, expr);
  }
  std::string Subgraph(const std::string& attribute, const std::vector<OnnxValue>& inputs,
                       std::vector<OnnxValue>& outputs, const BlockResult& result) override {
    const onnx::AttributeProto* graph = Attribute(attribute);
    if (graph == nullptr || !graph->has_g()) throw Unsupported{"its " + attribute + " is missing"};
    return importer_.Subgraph(graph->g(), inputs, outputs, result);
  }
  std::function<void()> Checkpoint() override {
    auto state = std::make_shared<Importer::State>(importer_.Save());
    return [this, state]() { importer_.Restore(std::move(*state)); };
  }
  std::string Weight(const std::string& hint, Ref<relay::Tensor> value) override {
    return importer_.AddWeight(hint, std::move(value));
  }
  std::string AddGlobal(const std::string& hint, const std::string& definition) override {
    return importer_.AddGlobal(hint, definition);
  }
  bool OutputUsed(size_t index) const override {
    return index < size_t(node_.output_size()) && importer_.Used(node_.output(int(index)));
  }

 private:
  Importer& importer_;
  const onnx::NodeProto& node_;
  std::vector<const OnnxValue*> inputs_;
};

void Importer::ConvertNode(const onnx::NodeProto& node) {
  const std::string label = NodeLabel(node);
  auto poison = [&]() {
    for (const std::string& output : node.output()) poisoned_.insert(output);
  };
  std::vector<const OnnxValue*> inputs;
  for (const std::string& name : node.input()) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    if (poisoned_.count(name)) return poison();  // reported at its producer
    const OnnxValue* value = Find(name);
    if (value == nullptr) Fail(label + ": input '" + name + "' is not defined");
    inputs.push_back(value);
  }
  const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
  const Converter* converter = default_domain ? FindConverter(node.op_type()) : nullptr;
  if (converter == nullptr) {
    const std::string op = (default_domain ? "" : node.domain() + ".") + node.op_type();
    problems_.push_back(label + ": no converter for " + op);
    unsupported_operators_.insert(op);
    return poison();
  }
  if (opset_ < 7) {
    if (std::optional<std::string> problem = LegacyFormProblem(node, opset_)) {
      problems_.push_back(label + ": " + *problem);
      return poison();
    }
  }
  std::vector<OnnxValue> results;
  try {
    NodeContext context(*this, node, inputs);
    results = (*converter)(context);
  } catch (const Unsupported& unsupported) {
    problems_.push_back(label + ": " + unsupported.reason);
    return poison();
  }
  for (size_t index = 0; index < results.size() && index < size_t(node.output_size()); ++index) {
    const std::string& name = node.output(int(index));
    if (!Used(name)) continue;  // nothing reads it: no binding
    OnnxValue value = std::move(results[index]);
    auto declared = declared_.find(name);
    if (declared != declared_.end()) {
      if (std::optional<DType> dtype = DTypeOfElementType(declared->second.element_type))
        value.dtype = *dtype;
      // ONNX's shape inference, or the converter's where that knows more
      // (shapes computed from Shape, which ONNX's inference gives up on).
      const std::optional<std::vector<int64_t>>& inferred = declared->second.shape;
      if (inferred && !value.constant) {
        if (!value.shape || value.shape->size() != inferred->size()) {
          value.shape = inferred;
        } else {
          for (size_t axis = 0; axis < inferred->size(); ++axis) {
            if ((*value.shape)[axis] < 0) (*value.shape)[axis] = (*inferred)[axis];
          }
        }
      }
    }
    // A call is bound to a variable; a variable, a projection or a
    // literal (an Identity's) is used as it is.
    if (value.expr.find('(') != std::string::npos) {
      const std::string identifier = UniqueIdentifier(name);
      scopes_.back().push_back("let %" + identifier + " = " + value.expr + ";");
      value.expr = "%" + identifier;
    }
    values_[name] = std::move(value);
  }
}

}  // namespace

std::string RelayIdentifier(const std::string& onnx_name) {
  std::string identifier;
  for (char c : onnx_name) identifier += IsIdentifierPart(c) ? c : '_';
  if (identifier.empty() || !IsIdentifierStart(identifier[0])) identifier = "_" + identifier;
  return identifier;
}

ImportedModel ImportOnnxBytes(const std::string& bytes, const std::string& origin,
                              const std::string& folder, const ImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes)) {
    throw Error(ErrorKind::kLoad, origin + ": not an ONNX model (the protobuf does not parse)");
  }
  if (!model.has_graph()) throw Error(ErrorKind::kLoad, origin + ": the model has no graph");
  return Importer(model, origin, folder, options).Run();
}

ImportedModel ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw Error(ErrorKind::kLoad, "cannot read " + path);
  std::ostringstream bytes;
  bytes << stream.rdbuf();
  if (!stream && !stream.eof()) throw Error(ErrorKind::kLoad, "cannot read " + path);
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  return ImportOnnxBytes(bytes.str(), path, folder.empty() ? "." : folder.string(), options);
}

}  // namespace relay::onnx_import

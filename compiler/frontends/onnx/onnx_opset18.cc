#include "compiler/frontends/onnx/onnx_opset18.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>

#include "compiler/frontends/onnx/onnx_tensors.h"
#include "relay/error.h"

namespace relay::onnx_import {

namespace {

// The reductions whose axes became an input in opset 18 (ReduceSum's did
// in 13).
const std::set<std::string> kReductions = {"ReduceL1",        "ReduceL2",   "ReduceLogSum",
                                           "ReduceLogSumExp", "ReduceMax",  "ReduceMean",
                                           "ReduceMin",       "ReduceProd", "ReduceSumSquare"};

class Rewriter {
 public:
  Rewriter(std::string origin, std::string folder)
      : origin_(std::move(origin)), folder_(std::move(folder)) {}

  // The initializers the rewrite adds to the main graph (full pads).
  std::vector<onnx::TensorProto>& added() { return added_; }

  // Rewrites `graph`'s nodes, and those of its subgraphs, which also see
  // its constants and ranks.
  void RewriteGraph(onnx::GraphProto& graph) {
    for (const onnx::TensorProto& tensor : graph.initializer()) {
      constants_[tensor.name()] = &tensor;
      ranks_[tensor.name()] = tensor.dims_size();
    }
    for (const onnx::ValueInfoProto& info : graph.input()) NoteRank(info);
    for (const onnx::ValueInfoProto& info : graph.value_info()) NoteRank(info);
    // Nodes a rewrite adds, to go right after the node they follow.
    std::map<int, std::vector<onnx::NodeProto>> following;
    for (int index = 0; index < graph.node_size(); ++index) {
      onnx::NodeProto& node = *graph.mutable_node(index);
      if (node.op_type() == "Constant" && node.output_size() == 1) {
        for (const onnx::AttributeProto& attribute : node.attribute()) {
          if (attribute.name() == "value" && attribute.has_t())
            constants_[node.output(0)] = &attribute.t();
        }
      }
      if (node.domain().empty() || node.domain() == "ai.onnx") {
        std::vector<onnx::NodeProto> added = RewriteNode(node);
        if (!added.empty()) following[index] = std::move(added);
      }
      for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
        if (attribute.has_g()) RewriteGraph(*attribute.mutable_g());
        for (onnx::GraphProto& inner : *attribute.mutable_graphs()) RewriteGraph(inner);
      }
    }
    if (following.empty()) return;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int index = 0; index < graph.node_size(); ++index) {
      *nodes.Add() = graph.node(index);
      auto added = following.find(index);
      if (added == following.end()) continue;
      for (onnx::NodeProto& node : added->second) *nodes.Add() = std::move(node);
    }
    graph.mutable_node()->Swap(&nodes);
  }

 private:
  void NoteRank(const onnx::ValueInfoProto& info) {
    if (info.type().has_tensor_type() && info.type().tensor_type().has_shape())
      ranks_[info.name()] = info.type().tensor_type().shape().dim_size();
  }

  [[noreturn]] void Fail(const onnx::NodeProto& node, const std::string& why) const {
    throw Error(ErrorKind::kCompile,
                origin_ + ": node '" +
                    (node.name().empty() && node.output_size() > 0 ? node.output(0) : node.name()) +
                    "' (" + node.op_type() + ", opset 18): " + why);
  }

  // The integer values of input `index` of `node`, which must be a constant.
  std::vector<int64_t> ConstantInts(const onnx::NodeProto& node, int index) const {
    auto found = constants_.find(node.input(index));
    if (found == constants_.end())
      Fail(node, "input " + std::to_string(index) + " must be a constant to import opset 18");
    const Ref<Tensor> tensor = TensorFromProto(*found->second, folder_, "axes");
    std::vector<int64_t> values;
    for (int64_t at = 0; at < tensor->element_count(); ++at) {
      if (tensor->dtype() == DType::kInt64)
        values.push_back(tensor->data<int64_t>()[at]);
      else if (tensor->dtype() == DType::kInt32)
        values.push_back(tensor->data<int32_t>()[at]);
      else
        Fail(node, "axes other than int32 or int64");
    }
    return values;
  }

  static onnx::AttributeProto* FindAttribute(onnx::NodeProto& node, const std::string& name) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.name() == name) return &attribute;
    }
    return nullptr;
  }

  static void RemoveAttribute(onnx::NodeProto& node, const std::string& name) {
    auto& attributes = *node.mutable_attribute();
    for (int at = 0; at < attributes.size(); ++at) {
      if (attributes[at].name() == name) {
        attributes.DeleteSubrange(at, 1);
        return;
      }
    }
  }

  static void SetInts(onnx::NodeProto& node, const std::string& name,
                      const std::vector<int64_t>& values) {
    onnx::AttributeProto* attribute = node.add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto::INTS);
    for (int64_t value : values) attribute->add_ints(value);
  }

  // Rewrites `node` in place; returns the nodes to add after it.
  std::vector<onnx::NodeProto> RewriteNode(onnx::NodeProto& node) {
    const std::string& op = node.op_type();
    if (op == "Mish" && node.input_size() == 1 && node.output_size() == 1) {
      // x * tanh(softplus(x)), as its function body writes it.
      const std::string x = node.input(0), y = node.output(0);
      const std::string softplus = y + "_mish_softplus", tanh = y + "_mish_tanh";
      node.set_op_type("Softplus");
      node.set_output(0, softplus);
      onnx::NodeProto tanh_node, product;
      tanh_node.set_op_type("Tanh");
      tanh_node.add_input(softplus);
      tanh_node.add_output(tanh);
      product.set_op_type("Mul");
      product.add_input(x);
      product.add_input(tanh);
      product.add_output(y);
      return {tanh_node, product};
    }
    if (kReductions.count(op)) {
      // Axes from the input to the attribute; no axes with
      // noop_with_empty_axes is the identity.
      const bool has_axes = node.input_size() > 1 && !node.input(1).empty();
      const onnx::AttributeProto* noop = FindAttribute(node, "noop_with_empty_axes");
      const bool identity = !has_axes && noop != nullptr && noop->i() != 0;
      std::vector<int64_t> axes;
      if (has_axes) axes = ConstantInts(node, 1);
      RemoveAttribute(node, "noop_with_empty_axes");
      while (node.input_size() > 1) node.mutable_input()->RemoveLast();
      if (identity) {
        node.set_op_type("Identity");
        node.clear_attribute();
      } else if (has_axes) {
        SetInts(node, "axes", axes);
      }
    } else if (op == "Split") {
      // num_outputs: equal parts, as Split-13 without `split` makes them.
      RemoveAttribute(node, "num_outputs");
    } else if (op == "Pad" && node.input_size() > 3 && !node.input(3).empty()) {
      // Pads for the listed axes become pads for every axis.
      auto rank = ranks_.find(node.input(0));
      if (rank == ranks_.end()) Fail(node, "Pad with axes needs its data's rank declared");
      const std::vector<int64_t> axes = ConstantInts(node, 3);
      const std::vector<int64_t> pads = ConstantInts(node, 1);
      if (pads.size() != 2 * axes.size()) Fail(node, "pads do not match its axes");
      std::vector<int64_t> full(size_t(2 * rank->second), 0);
      for (size_t at = 0; at < axes.size(); ++at) {
        int64_t axis = axes[at] < 0 ? axes[at] + rank->second : axes[at];
        if (axis < 0 || axis >= rank->second) Fail(node, "an axis outside its data's rank");
        full[size_t(axis)] = pads[at];
        full[size_t(axis + rank->second)] = pads[at + axes.size()];
      }
      // A new initializer holds the full pads (added to the main graph).
      const std::string name = node.input(1) + "_all_axes_" + std::to_string(added_.size());
      onnx::TensorProto tensor;
      tensor.set_name(name);
      tensor.set_data_type(onnx::TensorProto::INT64);
      tensor.add_dims(int64_t(full.size()));
      for (int64_t pad : full) tensor.add_int64_data(pad);
      added_.push_back(tensor);
      node.set_input(1, name);
      node.mutable_input()->RemoveLast();
    } else if (op == "Resize") {
      const onnx::AttributeProto* antialias = FindAttribute(node, "antialias");
      if (antialias != nullptr && antialias->i() != 0) Fail(node, "antialias is not supported");
      const onnx::AttributeProto* policy = FindAttribute(node, "keep_aspect_ratio_policy");
      if (policy != nullptr && policy->s() != "stretch")
        Fail(node, "keep_aspect_ratio_policy " + policy->s() + " is not supported");
      if (FindAttribute(node, "axes") != nullptr) Fail(node, "axes are not supported");
      RemoveAttribute(node, "antialias");
      RemoveAttribute(node, "keep_aspect_ratio_policy");
    }
    return {};
  }

  const std::string origin_;
  const std::string folder_;
  std::map<std::string, const onnx::TensorProto*> constants_;
  std::map<std::string, int> ranks_;
  std::vector<onnx::TensorProto> added_;
};

}  // namespace

void RewriteOpset18As17(onnx::ModelProto& model, const std::string& origin,
                        const std::string& folder) {
  Rewriter rewriter(origin, folder);
  rewriter.RewriteGraph(*model.mutable_graph());
  for (onnx::TensorProto& tensor : rewriter.added())
    *model.mutable_graph()->add_initializer() = std::move(tensor);
  for (onnx::OperatorSetIdProto& entry : *model.mutable_opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") entry.set_version(17);
  }
}

}  // namespace relay::onnx_import

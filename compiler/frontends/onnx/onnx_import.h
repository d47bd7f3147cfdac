// Importing ONNX models into Relay (`relay-vm import`, and `run`, `check`,
// `compile`, ... on a .onnx file).
//
// The model is read with Debian's ONNX library (the protobuf classes of
// onnx.proto), checked by its checker and typed by its shape inference;
// each node becomes a Relay expression through the converter table
// (onnx_converters.h), bound by `let` in the graph's order, in a Relay
// module whose @main takes the graph's inputs and then the weights
// (initializers and constant tensors that the program reads as tensors).
// Dimensions named by `dim_param`, or missing, become `?`.
//
// Names: an ONNX name that is a valid Relay identifier ([A-Za-z_][A-Za-z0-9_]*)
// is kept; any other has each character outside [A-Za-z0-9_] replaced by '_',
// and '_' put in front when it would start with a digit (`input.1` ->
// `input_1`, `onnx::Conv_12` -> `onnx__Conv_12`, `0` -> `_0`); a name that
// then collides with an earlier one gets a suffix `_2`, `_3`, ...
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "relay/tensor.h"

namespace relay::onnx_import {

struct ImportedModel {
  // A Relay module (text format 0.0.5) whose @main computes the graph.
  std::string relay_text;
  // @main's parameters after the graph's inputs, by Relay name: the
  // model's weights.
  std::map<std::string, Ref<Tensor>> weights;
  // The graph's inputs, in order: the name as the model writes it, and
  // @main's parameter name.
  std::vector<std::pair<std::string, std::string>> inputs;
  // The graph's output names as the model writes them, in order: @main
  // returns one tensor, or a tuple of them when there are several.
  std::vector<std::string> outputs;
};

struct ImportOptions {
  // Weights of at most this many elements are written into the program as
  // constant expressions rather than made parameters of @main (for
  // `relay-vm import` without --params-out); 0 keeps every weight a
  // parameter.
  int64_t inline_weight_elements = 0;
};

// Imports the model at `path` (external data files are read from its
// folder). Throws relay::Error: kLoad for a file that cannot be read or is
// not a valid ONNX model; kCompile naming every node that cannot be
// converted (with its operator, opset and why) in one message.
ImportedModel ImportOnnxFile(const std::string& path, const ImportOptions& options = {});

// As ImportOnnxFile, for a model's serialised bytes; `origin` names it in
// errors and `folder` is where external data files are read from.
ImportedModel ImportOnnxBytes(const std::string& bytes, const std::string& origin,
                              const std::string& folder, const ImportOptions& options = {});

// The Relay identifier for an ONNX name (the rule above, without the
// collision suffix).
std::string RelayIdentifier(const std::string& onnx_name);

}  // namespace relay::onnx_import

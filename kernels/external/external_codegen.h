// Bring Your Own Codegen: the interface between relay-vm and a library or
// accelerator that runs parts of a program (oneDNN, OpenBLAS, an FPGA's
// kernels through XRT), after the BYOC paper and TVM.
//
// A codegen supplies two things:
//   - a rule table (what it can run): predicates on single operator calls and
//     composite patterns (a chain of calls taken as a whole). The partitioner
//     (compiler/passes/partition_graph.*) annotates a program's calls with
//     it, merges adjacent supported calls into regions and outlines each
//     region into a global function marked Compiler="NAME",
//     global_symbol="NAME_N";
//   - a compiler and loader for such a function, given as an ExternalGraph
//     (external_graph.h): Compile returns the codegen's serialisable state
//     (kept in the .rbc file beside the graph), Load turns graph and state
//     into an ExternalFunction that the VM calls like one of its kernels.
//
// Adding a codegen is one folder under kernels/external/ holding its rule
// table and its ExternalCodegen, and one line in codegen_registry.cc;
// docs/byoc.md walks through it.
//
// Thread-safety: codegens and loaded functions are immutable to their users
// and every method may be called from many threads at once (a function
// caches per-shape state under its own lock).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/external/external_graph.h"
#include "kernels/operator.h"
#include "relay/tensor.h"

namespace relay::kernels::external {

// What a rule sees of one operator call: its operator, normalised attributes
// and the types of its inputs and result (kAnyDim for `?`).
struct CallView {
  std::string_view op;
  const Attrs& attrs;
  std::span<const ValueType> inputs;
  const ValueType& result;
};
using CallPredicate = std::function<bool(const CallView& call)>;

// A single call the codegen runs by itself: operator `op`, when `accepts`
// (null: always) holds.
struct OperatorRule {
  std::string op;
  CallPredicate accepts;
};

// One step of a composite pattern: a call of any of `ops` whose `accepts`
// holds (null: always). After the first step, a step's call takes the
// previous step's result as one of its inputs, and that result has no other
// use. An optional step may be absent.
struct PatternStep {
  std::vector<std::string> ops;
  bool optional = false;
  CallPredicate accepts;
};

// Calls matched as a whole, or not at all: "dnnl.conv2d_bias_relu" is
// nn.conv2d, then an optional nn.bias_add or add, then an optional nn.relu.
// Inside the partitioned function the matched calls are a local function
// marked Composite="NAME", called once.
struct CompositeRule {
  std::string name;
  std::vector<PatternStep> steps;
};

// Everything a codegen can run. Composite rules are tried first, in order,
// each matching as many of its optional steps as it can; then the operator
// rules.
struct RuleTable {
  std::vector<CompositeRule> composites;
  std::vector<OperatorRule> operators;
};

// A partitioned function, loaded: the VM's kernel for its calls.
class ExternalFunction {
 public:
  virtual ~ExternalFunction() = default;
  // Runs the function on `inputs` (its parameters' values, in order, on any
  // device: it copies what it needs where it runs) and returns its result.
  // Shapes are those the graph was typed for, with each `?` any extent; a
  // shape its operators refuse is kUsage naming the operator; a library's
  // failure is kDevice naming the library and the operation.
  virtual Ref<Tensor> Run(std::span<const Ref<Tensor>> inputs) const = 0;
};

class ExternalCodegen {
 public:
  virtual ~ExternalCodegen() = default;
  // The Compiler attribute's value: "dnnl", "cblas", "xrt".
  virtual std::string_view name() const = 0;
  virtual const RuleTable& rules() const = 0;
  // Whether adjacent supported regions may be merged into one function
  // (a library of operators: yes; an FPGA kernel per pattern: no).
  virtual bool merges_regions() const { return true; }
  // Compiles a partitioned function named `symbol` (its global_symbol) into
  // the codegen's state, which Load receives back (possibly from a file).
  // Throws kCompile naming `symbol` for a graph it cannot run.
  virtual std::string Compile(const ExternalGraph& graph, const std::string& symbol) const = 0;
  // The function for `graph` and `state` (validated: ReadGraph's checks
  // have passed). Throws kLoad naming `symbol` for state that is not what
  // Compile writes.
  virtual std::shared_ptr<const ExternalFunction> Load(const ExternalGraph& graph,
                                                       std::string_view state,
                                                       const std::string& symbol) const = 0;
};

// The codegen a .rbc file's external function names ("dnnl"), or null when
// this build has none of that name. Codegens live for the whole process.
const ExternalCodegen* FindCodegen(std::string_view name);

// The codegens `--byoc` names, in priority order: a comma-separated list of
// "dnnl", "cblas" and "xrt:MANIFEST" (XRT kernels a manifest file
// describes: xrt/xrt_codegen.h); empty: none. Throws kUsage for an unknown name, a
// repeated one, a codegen this build lacks, or a manifest it cannot read.
std::vector<std::shared_ptr<const ExternalCodegen>> ParseCodegenList(std::string_view list);

// The names of this build's codegens ("dnnl", "cblas", "xrt"), for error
// messages.
std::vector<std::string> CodegenNames();

}  // namespace relay::kernels::external

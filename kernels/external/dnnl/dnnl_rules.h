// Internal to the oneDNN codegen: its rule table (what it runs) and the split
// of a partitioned function's graph into units, each a composite instance or
// a single operator, checked against that table.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/external/external_codegen.h"
#include "kernels/external/external_graph.h"

namespace relay::kernels::external::onednn {

// The codegen's rules: float32 only; see dnnl_rules.cc for the table.
const RuleTable& DnnlRules();

// Operators [first, end) of a graph that run as one: a composite instance
// (`composite` its rule: nn.conv2d or nn.dense, then its steps' calls, each
// taking the previous one's result) or one operator (`composite` null).
struct Unit {
  size_t first = 0;
  size_t end = 0;
  const CompositeRule* composite = nullptr;
};

// The graph's operators as units, each matched against DnnlRules() with the
// graph's recorded types: a composite instance by the rule its composite
// name names (operators sharing a composite index form as many instances as
// the rule's first step starts), any other operator by its operator rule.
// Throws relay::Error of `kind` naming `symbol` and the first operator that
// is not one this codegen runs.
std::vector<Unit> SplitIntoUnits(const ExternalGraph& graph, ErrorKind kind,
                                 const std::string& symbol);

// A window's padding, normalised (validated by the type relation) from one,
// two or four values to [top, left, bottom, right].
std::array<int64_t, 4> PaddingSides(const Attrs& attrs);
// A per-axis pair (strides, dilation, pool_size) from one or two values.
std::array<int64_t, 2> SpatialPair(const Attrs& attrs, std::string_view name);

// The float32 activations a composite applies as a oneDNN eltwise post-op.
bool IsActivation(std::string_view op);

}  // namespace relay::kernels::external::onednn

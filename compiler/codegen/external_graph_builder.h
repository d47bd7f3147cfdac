// A partitioned function (marked Compiler="NAME") as the neutral graph an
// external codegen receives (kernels/external/external_graph.h).
//
// The body is what the partitioner writes (compiler/passes/partition_graph.h)
// or a user writes by hand: operator calls over the function's parameters,
// bound by lets or nested, and local functions marked Composite="NAME"
// called once, whose calls join the graph labelled with that composite. The
// function's result must be its last operator call's, one tensor.
#pragma once

#include <string>

#include "compiler/ir/expr.h"
#include "kernels/external/external_graph.h"

namespace relay::codegen {

// Throws Error(kCompile) naming `name` and located at what it cannot take:
// a parameter or result that is not a tensor, a constant (the partitioner
// passes constants as arguments), a call of anything but an operator or a
// composite function, a tuple.
kernels::external::ExternalGraph BuildExternalGraph(const ir::FunctionNode& function,
                                                    const std::string& name,
                                                    const std::string& source);

}  // namespace relay::codegen

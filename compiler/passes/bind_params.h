// Binding parameters to constants (TVM's bind_params_by_name): `relay-vm
// compile --params P.npz` bakes weights into the executable, where constant
// folding can then work on them. The entry function's parameters named in
// `values` (without '%') leave its signature and become those constants.
#pragma once

#include <map>
#include <string>

#include "compiler/ir/module.h"
#include "relay/tensor.h"

namespace relay::passes {

// Names in `values` that are not parameters of @`entry` are ignored (a
// params file may hold more). Throws Error(kUsage) when @`entry` does not
// exist or a value's dtype or shape does not fit its parameter's type
// (`?` dimensions take any size), naming the parameter and `origin`.
ir::Module BindParams(const ir::Module& module, const std::string& entry,
                      const std::map<std::string, Ref<Tensor>>& values, const std::string& origin);

}  // namespace relay::passes

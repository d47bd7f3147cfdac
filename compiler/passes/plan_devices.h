// Device planning: where each kernel call of a function runs, from the
// program's on_device and device_copy annotations (kernels/operators/
// device_annotations.h), as TVM's PlanDevices and Nimble's device placement
// do it.
//
// Values bound by lets form device domains, joined by union-find: a kernel
// call's result joins the domain of each of its tensor arguments (scalars,
// 0-d tensors, stay out: they are the host's loop counters and flags, moved
// where needed at run time); on_device(%x, D) fixes the domain of %x to D;
// device_copy(%x, S, D) fixes %x's domain to S and its result's to D. Then:
//   - a call in a domain fixed to D becomes on_device(call, device_type=D),
//     which the code generator compiles as that call placed on D;
//   - an on_device whose value is already fixed to D becomes an alias of
//     it; one whose value is fixed elsewhere, a device_copy from there;
//   - an argument fixed to another device than its call's reaches it
//     through a device_copy inserted before the call.
// Calls whose domain nothing fixes stay unannotated and run on the VM's
// device (relay-vm run --device). Values that cross function calls,
// tuples, ADTs and references are not planned: the VM copies a tensor to
// the device of the kernel that reads it, once for an immutable one (a
// constant or weight), which is what hoisting such copies out of a loop
// would achieve.
//
// Runs after operator fusion (a primitive function is one call), before
// lambda lifting. `fmt --optimized` shows its result.
#pragma once

#include "compiler/ir/expr.h"

namespace relay::passes {

ir::Function PlanDevices(const ir::Function& function);

}  // namespace relay::passes

#include "kernels/compute/cpu_kernels.h"

#include <algorithm>
#include <atomic>
#include <unordered_set>

#include "devices/cpu/thread_pool.h"
#include "kernels/codegen/gpu/kernel_source.h"
#include "kernels/codegen/llvm/llvm_jit.h"
#include "kernels/codegen/llvm/lower_kernel.h"
#include "kernels/compute/contraction_schedule.h"
#include "kernels/compute/depthwise_schedule.h"
#include "kernels/compute/elementwise_compute.h"
#include "kernels/compute/gpu_schedule.h"
#include "kernels/compute/neural_network_compute.h"
#include "kernels/compute/pad_schedule.h"
#include "kernels/compute/reduction_compute.h"
#include "kernels/compute/transform_compute.h"
#include "kernels/kir/rewrite.h"
#include "kernels/operator.h"
#include "relay/devices.h"

namespace relay::kernels {

using namespace relay::kernels::kir;

namespace {

std::atomic<uint64_t> launch_count{0};

// Elements per parallel chunk of a one-dimensional loop: large enough that
// waking a thread pays off, small enough to spread work over the cores.
constexpr int64_t kChunkElements = 16384;

// A hoisted sum's terms shared with the element (see ScheduleInjective)
// take a row of at most this many elements on the stack.
constexpr int64_t kMaximumSharedTerms = 4096;

// Whether `expr` applies a unary function (exp, log, ...) anywhere.
bool HasUnary(const Expr& expr) {
  if (expr->node_kind() == NodeKind::kUnary) return true;
  for (const Expr& operand : Operands(expr)) {
    if (HasUnary(operand)) return true;
  }
  return false;
}

// The loop nest storing `output` into `out`. Schedule: the innermost axis
// is vectorised; the others are flattened into rows, which run in parallel
// in chunks of at least kChunkElements elements (so a batch of one still
// spreads over the threads, and a small tensor wakes no thread); a
// one-dimensional output is split into chunks of its one axis.
Stmt ScheduleInjective(const Buffer& out, const TensorExpr& output) {
  size_t rank = output.ndim();
  if (rank == 0) return Stmt(new StoreNode(out, Int(0), output.at({})));
  if (rank == 1) {
    Var chunk(new VarNode("chunk")), offset(new VarNode("offset"));
    Expr index = Add(Multiply(chunk, Int(kChunkElements)), offset);
    Expr remaining = Subtract(output.shape[0], Multiply(chunk, Int(kChunkElements)));
    Expr inner_extent = Binary(BinaryOp::kMinimum, remaining, Int(kChunkElements));
    Expr chunk_count = Binary(BinaryOp::kFloorDivide, Add(output.shape[0], Int(kChunkElements - 1)),
                              Int(kChunkElements));
    Stmt store(new StoreNode(out, index, output.at({index})));
    return Stmt(new ForNode(chunk, chunk_count, ForKind::kParallel,
                            Stmt(new ForNode(offset, inner_extent, ForKind::kVectorized, store))));
  }
  const Expr& inner = output.shape[rank - 1];
  Expr rows = Int(1);
  for (size_t axis = 0; axis + 1 < rank; ++axis) rows = Multiply(rows, output.shape[axis]);
  const Expr rows_per_chunk = Binary(BinaryOp::kMaximum,
                                     Binary(BinaryOp::kFloorDivide, Int(kChunkElements),
                                            Binary(BinaryOp::kMaximum, inner, Int(1))),
                                     Int(1));
  const Expr chunk_count =
      Binary(BinaryOp::kFloorDivide, Subtract(Add(rows, rows_per_chunk), Int(1)), rows_per_chunk);
  Var chunk(new VarNode("chunk")), local(new VarNode("row")), column(new VarNode("i"));
  const Expr first_row = Multiply(chunk, rows_per_chunk);
  const Expr row = Add(first_row, local);
  // The row's index along each outer axis.
  std::vector<Expr> indices(rank);
  {
    Expr stride = Int(1);
    for (size_t axis = rank - 1; axis-- > 0;) {
      Expr quotient = Binary(BinaryOp::kFloorDivide, row, stride);
      indices[axis] =
          axis == 0 ? quotient : Binary(BinaryOp::kFloorMod, quotient, output.shape[axis]);
      stride = Multiply(stride, output.shape[axis]);
    }
  }
  indices[rank - 1] = column;
  Expr element = output.at(indices);
  // Reductions that do not depend on the innermost axis (softmax's row
  // maximum and sum, a normalisation's statistics) are computed once per
  // row, before the innermost loop, instead of once per element.
  std::unordered_set<const VarNode*> row_invariant_excluded{column.get()};
  const std::vector<const ReduceNode*> reductions = FindReductions(element);
  for (const ReduceNode* reduction : reductions) {
    for (const Var& axis : reduction->axes) row_invariant_excluded.insert(axis.get());
  }
  Replacements hoisted;
  std::vector<Stmt> prologue;
  std::vector<Buffer> row_values;
  // Terms of a hoisted sum that the element also computes at its own
  // position (softmax's exponentials: exp(x_j - max) in the sum and in the
  // element) are computed once, into a row of their own, which the sum reads
  // and the element loads; where they hold something costlier than
  // arithmetic (a unary function) and the row is short enough for the stack.
  const auto* inner_extent = As<IntImmNode>(inner);
  std::vector<std::pair<Expr, Buffer>> shared_terms;  // a term at `column`, its row
  for (auto reduction = reductions.rbegin(); reduction != reductions.rend(); ++reduction) {
    const std::unordered_set<const VarNode*> free = FreeVariables(Expr(*reduction));
    const bool invariant = std::none_of(free.begin(), free.end(), [&](const VarNode* var) {
      return row_invariant_excluded.contains(var);
    });
    // A reduction met twice (softmax's maximum, in its sum and in the
    // element) is hoisted once.
    if (!invariant || hoisted.contains(*reduction)) continue;
    Expr value = Substitute(Expr(*reduction), hoisted);
    const auto* sum = As<ReduceNode>(value);
    if (sum != nullptr && sum->op == ReduceOp::kSum && sum->axes.size() == 1 &&
        inner_extent != nullptr && inner_extent->value <= kMaximumSharedTerms &&
        SameExpr(sum->extents[0], inner) && HasUnary(sum->body)) {
      const Expr term = Substitute(sum->body, {{sum->axes[0].get(), column}});
      if (FindSame(Substitute(element, hoisted), term) != nullptr) {
        const Buffer terms(
            new BufferNode("terms" + std::to_string(shared_terms.size()), term->dtype, {inner}));
        prologue.push_back(Stmt(new ForNode(column, inner, ForKind::kVectorized,
                                            Stmt(new StoreNode(terms, column, term)))));
        value =
            Reduce(ReduceOp::kSum, sum->axes, sum->extents, sum->init, Load(terms, sum->axes[0]));
        shared_terms.emplace_back(term, terms);
      }
    }
    row_values.push_back(Buffer(
        new BufferNode("row" + std::to_string(row_values.size()), (*reduction)->dtype, {Int(1)})));
    prologue.push_back(Stmt(new StoreNode(row_values.back(), Int(0), value)));
    hoisted[*reduction] = Load(row_values.back(), Int(0));
  }
  if (!hoisted.empty()) element = Substitute(element, hoisted);
  for (const auto& [term, terms] : shared_terms) {
    if (const ExprNode* found = FindSame(element, term)) {
      element = Substitute(element, {{found, Load(terms, column)}});
    }
    row_values.push_back(terms);
  }
  Stmt body(new StoreNode(out, Add(Multiply(row, inner), column), element));
  body = Stmt(new ForNode(column, inner, ForKind::kVectorized, body));
  if (!prologue.empty()) {
    prologue.push_back(body);
    body = Stmt(new SequenceNode(std::move(prologue)));
    for (const Buffer& row_value : row_values) body = Stmt(new AllocateNode(row_value, body));
  }
  body =
      Stmt(new ForNode(local, Binary(BinaryOp::kMinimum, rows_per_chunk, Subtract(rows, first_row)),
                       ForKind::kSerial, body));
  return Stmt(new ForNode(chunk, chunk_count, ForKind::kParallel, body));
}

// The register tile for the host CPU: two vectors wide, six rows (twelve
// accumulator registers of the sixteen or thirty-two there are, leaving
// room for the operands), and enough tasks to keep every thread busy
// despite uneven chunks. With AVX-512's thirty-two registers, a wide tile
// of four vectors by six rows (twenty-four accumulators) where it pays,
// seven rows instead of six where seven divide the rows and six would not,
// and twelve where y is read in place.
ContractionTiling HostContractionTiling() {
  ContractionTiling tiling;
  tiling.column_bytes = 2 * llvm_backend::HostVectorBytes();
  if (llvm_backend::HostVectorBytes() >= 64) {
    tiling.wide_column_bytes = 4 * llvm_backend::HostVectorBytes();
    tiling.exact_rows = 7;
    tiling.tall_rows = 12;
  }
  tiling.vector_bytes = llvm_backend::HostVectorBytes();
  tiling.parallel_tasks = 4 * int64_t{devices::HostThreadPool().worker_count() + 1};
  return tiling;
}

// The element count of a buffer of constant shape (a workspace).
int64_t ConstantElementCount(const Buffer& buffer) {
  const Expr count = ElementCount(buffer);
  const auto* constant = As<IntImmNode>(count);
  RELAY_CHECK(constant != nullptr, "workspace " + buffer->name + " of symbolic size");
  return constant->value;
}

std::vector<kernels::ValueType> ValueTypesOf(std::span<const Ref<Tensor>> inputs) {
  std::vector<kernels::ValueType> types;
  for (const Ref<Tensor>& input : inputs)
    types.push_back(kernels::ValueType::Tensor(input->shape(), input->dtype()));
  return types;
}

}  // namespace

kir::Kernel BuildInjectiveKernel(const std::string& name, const std::vector<Buffer>& inputs,
                                 const std::vector<Var>& dims, const TensorExpr& output) {
  Buffer out(new BufferNode("out", output.dtype, output.shape));
  std::vector<Buffer> params = inputs;
  params.push_back(out);
  return kir::Kernel{name, std::move(params), 1, dims, ScheduleInjective(out, output)};
}

namespace {

// The kernel for `output`, whose first operator `op` (attributes
// normalised) reads inputs[first_inputs[i]]: the depthwise convolution's
// or max pool's own schedule where it applies, else BuildCpuKernel's.
kir::Kernel BuildCpuKernelAfter(const std::string& name, const std::vector<Buffer>& inputs,
                                const TensorExpr& output, std::string_view op, const Attrs& attrs,
                                std::span<const int32_t> first_inputs) {
  if (op == "nn.conv2d" && first_inputs.size() == 2 && first_inputs[0] >= 0 &&
      first_inputs[1] >= 0) {
    if (std::optional<kir::Kernel> depthwise =
            BuildDepthwiseKernel(name, inputs, output, attrs, size_t(first_inputs[0]),
                                 size_t(first_inputs[1]), HostContractionTiling().parallel_tasks)) {
      return std::move(*depthwise);
    }
  }
  if (op == "nn.max_pool2d" && first_inputs.size() == 1 && first_inputs[0] >= 0) {
    if (std::optional<kir::Kernel> pool =
            BuildMaxPoolKernel(name, inputs, output, attrs, size_t(first_inputs[0]),
                               HostContractionTiling().parallel_tasks)) {
      return std::move(*pool);
    }
  }
  return BuildCpuKernel(name, inputs, output);
}

// `inner` (a kernel of constant shape) followed by padding its output
// into the kernel's output, through a workspace: for a padded anchor whose
// own schedule cannot store its tiles padded.
kir::Kernel PaddedAfter(kir::Kernel inner, const ConstantPadding& padding) {
  const size_t input_count = inner.input_count();
  const Buffer inner_out = inner.params[input_count];
  std::vector<Expr> padded_shape;
  for (int64_t extent : padding.PaddedExtents()) padded_shape.push_back(Int(extent));
  const Buffer out(new BufferNode("out", inner_out->dtype, padded_shape));
  std::vector<Buffer> params(inner.params.begin(), inner.params.begin() + input_count);
  params.push_back(out);
  params.insert(params.end(), inner.params.begin() + input_count + 1, inner.params.end());
  params.push_back(inner_out);  // the last workspace
  const TensorExpr unpadded = FromBuffer(inner_out);
  kir::Kernel kernel{inner.name, std::move(params), 1, inner.dims,
                     Stmt(new SequenceNode({inner.body, StorePadded(out, padding, &unpadded)}))};
  kernel.workspace_count = inner.workspace_count + 1;
  kernel.derived_workspace = inner.derived_workspace;
  return kernel;
}

}  // namespace

kir::Kernel BuildCpuKernel(const std::string& name, const std::vector<Buffer>& inputs,
                           const TensorExpr& output) {
  if (std::optional<kir::Kernel> contraction =
          BuildContractionKernel(name, inputs, output, HostContractionTiling())) {
    return std::move(*contraction);
  }
  return BuildInjectiveKernel(name, inputs, {}, output);
}

namespace {

// Checks `inputs` against the kernel's input parameters.
void CheckKernelInputs(const kir::Kernel& kernel, std::span<const Ref<Tensor>> inputs) {
  if (inputs.size() != kernel.input_count()) {
    throw Error(ErrorKind::kUsage, "kernel " + kernel.name + " takes " +
                                       std::to_string(kernel.input_count()) + " inputs, got " +
                                       std::to_string(inputs.size()));
  }
  for (size_t index = 0; index < inputs.size(); ++index) {
    const Ref<Tensor>& input = inputs[index];
    if (!input || input->device_id().kind != DeviceKind::kCPU ||
        input->dtype() != kernel.params[index]->dtype) {
      throw Error(ErrorKind::kUsage, "kernel " + kernel.name + ": input " + std::to_string(index) +
                                         " must be a host tensor of dtype " +
                                         std::string(DTypeName(kernel.params[index]->dtype)));
    }
  }
}

// Compiles `kernel` for `device` (null: the host) and records what
// launching it needs.
PreparedKernel PrepareKernel(const kir::Kernel& kernel, const Shape& output_shape,
                             std::span<const int64_t> dim_values, Device* device = nullptr) {
  RELAY_CHECK(kernel.output_count == 1, "a prepared kernel has one output");
  if (dim_values.size() != kernel.dims.size()) {
    throw Error(ErrorKind::kUsage,
                "kernel " + kernel.name + " has " + std::to_string(kernel.dims.size()) +
                    " symbolic dimensions, given " + std::to_string(dim_values.size()) + " values");
  }
  PreparedKernel prepared;
  if (device != nullptr) {
    RELAY_CHECK(!kernel.derived_workspace, "device kernels fill no derived workspaces");
    DeviceKernel compiled = CompileDeviceKernel(kernel, *device);
    prepared.device = device;
    prepared.device_kernel = std::move(compiled.loaded);
    prepared.threads = gpu::EvaluateIndexExpr(compiled.thread_count, kernel.dims, dim_values);
  } else {
    prepared.entry = llvm_backend::CompileKernel(kernel);
  }
  prepared.output_shape = output_shape;
  prepared.output_dtype = kernel.params[kernel.input_count()]->dtype;
  prepared.dim_values.assign(dim_values.begin(), dim_values.end());
  for (size_t index = kernel.params.size() - kernel.workspace_count; index < kernel.params.size();
       ++index) {
    prepared.workspaces.push_back(
        {ConstantElementCount(kernel.params[index]), kernel.params[index]->dtype});
  }
  if (const auto& derived = kernel.derived_workspace) {
    RELAY_CHECK(derived->fill && derived->fill->dims.empty() &&
                    derived->input < kernel.input_count() &&
                    derived->workspace < kernel.workspace_count,
                "a derived workspace is filled from one input, with no symbolic dimensions");
    prepared.fill = PreparedKernel::WorkspaceFill{llvm_backend::CompileKernel(*derived->fill),
                                                  derived->input, derived->workspace};
  }
  return prepared;
}

}  // namespace

void PreparedKernel::RunHostFunction(std::span<const Ref<Tensor>> inputs,
                                     const Tensor& output) const {
  launch_count.fetch_add(1, std::memory_order_relaxed);
  const bool all_on_host = std::all_of(inputs.begin(), inputs.end(),
                                       [](const Ref<Tensor>& input) { return input->on_host(); });
  if (all_on_host && output.on_host()) {
    host_function(inputs, output);
    return;
  }
  // Copies through the host; a device's queue is drained by reading.
  std::vector<Ref<Tensor>> host_inputs;
  for (const Ref<Tensor>& input : inputs) {
    host_inputs.push_back(input->on_host() ? input : CopyTensor(*input, HostDevice()));
  }
  if (output.on_host()) {
    host_function(host_inputs, output);
    return;
  }
  Ref<Tensor> result = Tensor::Empty(HostDevice(), output.shape(), output.dtype());
  host_function(host_inputs, *result);
  output.storage()->device()->CopyFromHost(result->host_data(), output.storage()->handle(),
                                           output.byte_offset(), output.byte_size());
}

Ref<Tensor> PreparedKernel::Launch(std::span<const Ref<Tensor>> inputs) const {
  Ref<Tensor> result =
      Tensor::Empty(device != nullptr ? *device : HostDevice(), output_shape, output_dtype);
  LaunchInto(inputs, *result);
  return result;
}

void PreparedKernel::LaunchInto(std::span<const Ref<Tensor>> inputs, const Tensor& output) const {
  if (host_function) {
    RunHostFunction(inputs, output);
    return;
  }
  if (device_kernel != nullptr) {
    LaunchOnDevice(inputs, output);
    return;
  }
  // The pointers live on the stack for small calls (the VM's scalar
  // arithmetic), so a launch allocates nothing but workspaces.
  constexpr size_t kInlinePointers = 16;
  void* inline_pointers[kInlinePointers];
  std::vector<void*> heap_pointers;
  const size_t count = inputs.size() + 1 + workspaces.size();
  void** pointers = inline_pointers;
  if (count > kInlinePointers) {
    heap_pointers.resize(count);
    pointers = heap_pointers.data();
  }
  size_t next = 0;
  for (const Ref<Tensor>& input : inputs) pointers[next++] = input->host_data();
  pointers[next++] = output.host_data();
  // Workspaces come from the pool; they live for the call, except one
  // filled from an immutable input, which lives with that input.
  std::vector<Ref<Tensor>> scratch;
  for (size_t index = 0; index < workspaces.size(); ++index) {
    const auto& [element_count, dtype] = workspaces[index];
    if (fill && index == fill->workspace) {
      const Tensor& source = *inputs[fill->input];
      // Keyed by the fill kernel's entry, which names what it computes for
      // the life of the process: the host JIT never unloads code.
      Ref<Object> filled =
          source.Derived(reinterpret_cast<const void*>(fill->entry), [&]() -> Ref<Object> {
            // It lives with its input, an immutable tensor (a constant, a
            // weight), beyond any run: no run's memory budget counts it.
            ScopedStorageObserver unobserved(nullptr);
            Ref<Tensor> workspace = Tensor::Empty(HostDevice(), {element_count}, dtype);
            void* fill_pointers[2] = {source.host_data(), workspace->host_data()};
            fill->entry(fill_pointers, nullptr);
            return workspace;
          });
      scratch.push_back(Ref<Tensor>(static_cast<Tensor*>(filled.get())));
    } else {
      scratch.push_back(Tensor::Empty(HostDevice(), {element_count}, dtype));
    }
    pointers[next++] = scratch.back()->host_data();
  }
  entry(pointers, dim_values.data());
  launch_count.fetch_add(1, std::memory_order_relaxed);
}

void PreparedKernel::LaunchOnDevice(std::span<const Ref<Tensor>> inputs,
                                    const Tensor& output) const {
  std::vector<devices::BufferArgument> buffers;
  buffers.reserve(inputs.size() + 1 + workspaces.size());
  for (const Ref<Tensor>& input : inputs)
    buffers.push_back({input->storage()->handle(), input->byte_offset()});
  buffers.push_back({output.storage()->handle(), output.byte_offset()});
  // Freed at once, but only to the device's pool, whose next user queues
  // behind this launch on the device's in-order queue.
  std::vector<Ref<Tensor>> scratch;
  for (const auto& [element_count, dtype] : workspaces) {
    scratch.push_back(Tensor::Empty(*device, {element_count}, dtype));
    buffers.push_back({scratch.back()->storage()->handle(), 0});
  }
  device_kernel->Launch(buffers, dim_values, threads);
  launch_count.fetch_add(1, std::memory_order_relaxed);
}

Ref<Tensor> RunKernel(const kir::Kernel& kernel, std::span<const Ref<Tensor>> inputs,
                      const Shape& output_shape, std::span<const int64_t> dim_values) {
  CheckKernelInputs(kernel, inputs);
  return PrepareKernel(kernel, output_shape, dim_values).Launch(inputs);
}

namespace {

// The device holding every one of `tensors`: null for the host, else the
// device whose kernels they run. Throws kUsage for a null tensor and for
// tensors on more than one device.
Device* DeviceOfInputs(const std::string& subject, std::span<const Ref<Tensor>> tensors) {
  std::optional<DeviceId> found;
  Device* device = nullptr;
  for (const Ref<Tensor>& tensor : tensors) {
    if (!tensor) throw Error(ErrorKind::kUsage, subject + ": null input");
    const DeviceId id = tensor->device_id();
    if (found && *found != id) {
      throw Error(ErrorKind::kUsage, subject + ": inputs on " + found->ToString() + " and " +
                                         id.ToString() + "; copy them to one device first");
    }
    found = id;
    // The device that allocated the tensor (a test's stand-in device too),
    // else (imported memory) the registry's.
    if (device == nullptr) device = tensor->storage()->device();
  }
  if (!found || found->kind == DeviceKind::kCPU) return nullptr;
  return device != nullptr ? device : &GetDevice(*found);
}

const OperatorDefinition& FindDefinition(std::string_view name, size_t input_count) {
  const OperatorDefinition* definition = FindOperator(name);
  if (definition == nullptr)
    throw Error(ErrorKind::kUsage, "unknown operator '" + std::string(name) + "'");
  if (input_count != definition->input_names.size()) {
    throw Error(ErrorKind::kUsage, "operator " + definition->name + " takes " +
                                       std::to_string(definition->input_names.size()) +
                                       " inputs, got " + std::to_string(input_count));
  }
  return *definition;
}

// An operator computed by C++ code: one prepared kernel per result tensor,
// each calling the code for its result (kernels/host/).
std::shared_ptr<const PreparedOperator> PrepareHostKernel(const OperatorDefinition& definition,
                                                          const ValueType& output_type,
                                                          const Attrs& attrs, Device* device) {
  auto prepared = std::make_shared<PreparedOperator>();
  prepared->name = definition.name;
  prepared->depends_on_values = definition.shape_dependence == ShapeDependence::kInputValues;
  prepared->tuple_result = output_type.is_tuple;
  const std::vector<ValueType> results =
      output_type.is_tuple ? output_type.fields : std::vector<ValueType>{output_type};
  for (size_t result = 0; result < results.size(); ++result) {
    PreparedKernel kernel;
    kernel.device = device;
    kernel.output_shape = results[result].shape;
    kernel.output_dtype = results[result].dtype;
    kernel.host_function = [code = definition.host_kernel, attrs, result](
                               std::span<const Ref<Tensor>> inputs, const Tensor& output) {
      std::vector<const Tensor*> tensors;
      tensors.reserve(inputs.size());
      for (const Ref<Tensor>& input : inputs) tensors.push_back(input.get());
      code(tensors, attrs, result, output);
    };
    prepared->kernels.push_back(std::move(kernel));
  }
  return prepared;
}

// Prepares `definition` for `tensors`, the flat list of its input tensors
// (a tuple input contributes its fields in order), typed for the relation
// as `input_types` (one per operator input): one kernel per result tensor
// (one, or a tuple result's fields).
std::shared_ptr<const PreparedOperator> PrepareDefinition(const OperatorDefinition& definition,
                                                          std::span<const Ref<Tensor>> tensors,
                                                          const std::vector<ValueType>& input_types,
                                                          const Attrs& attrs) {
  Device* const device = DeviceOfInputs(definition.name, tensors);
  Attrs normalized;
  if (std::optional<std::string> problem =
          NormalizeAttrs(definition.attributes, attrs, normalized)) {
    throw Error(ErrorKind::kUsage, "operator " + definition.name + ": " + *problem);
  }
  // An operator whose shape depends on values (arange) sees its inputs as
  // constants: they are host tensors.
  const bool needs_values = definition.shape_dependence == ShapeDependence::kInputValues;
  // A C++ kernel reads its inputs on the host anyway: its relation reads
  // host copies of them too.
  std::vector<Ref<Tensor>> host_copies;
  if (needs_values && device != nullptr && definition.host_kernel) {
    for (const Ref<Tensor>& tensor : tensors)
      host_copies.push_back(CopyTensor(*tensor, HostDevice()));
    tensors = host_copies;
  }
  if (needs_values && device != nullptr && !definition.host_kernel) {
    throw Error(ErrorKind::kUsage, "operator " + definition.name +
                                       " reads its inputs' values for its shape: give it host "
                                       "tensors, not tensors on " +
                                       device->id().ToString());
  }
  RELAY_CHECK(!needs_values || input_types.size() == tensors.size(),
              "an operator shaped by values takes no tuple");
  std::vector<RelationInput> relation_inputs;
  for (size_t index = 0; index < input_types.size(); ++index) {
    relation_inputs.push_back({&input_types[index], needs_values ? tensors[index].get() : nullptr});
  }
  ValueType output_type;
  try {
    output_type = definition.relation(relation_inputs, normalized);
  } catch (const OperatorTypeError& error) {
    throw Error(ErrorKind::kUsage, "operator " + definition.name + ": " + error.message);
  }
  if (definition.host_kernel) return PrepareHostKernel(definition, output_type, normalized, device);
  // Which dimensions the kernel leaves symbolic, so that one compiled kernel
  // serves many shapes (the JIT's cache compiles each distinct kernel once):
  // - broadcasting computes, and outputs sized by values (arange): one
  //   variable per output axis, which every input dimension other than 1
  //   equals (so broadcasting needs no run-time test);
  // - reductions: one variable per input dimension other than 0 and 1;
  // - everything else (windows, data movement, tuple results) indexes its
  //   inputs by extents its definition computes from constants: exact shapes.
  enum class Symbolic { kNone, kOutputAxes, kInputDimensions };
  const Symbolic symbolic = output_type.is_tuple ? Symbolic::kNone
                            : IsBroadcastCompute(definition.name) || needs_values
                                ? Symbolic::kOutputAxes
                            : IsReductionCompute(definition.name) ? Symbolic::kInputDimensions
                                                                  : Symbolic::kNone;
  // Tuple results (split, nn.batch_norm, nn.dropout) have compute
  // definitions beside the table's.
  if (!output_type.is_tuple && !definition.compute) {
    throw Error(ErrorKind::kUsage, "operator " + definition.name + " has no CPU kernel yet");
  }

  const Shape& output_shape = output_type.shape;
  std::vector<Var> dims;
  std::vector<int64_t> dim_values;
  if (symbolic == Symbolic::kOutputAxes) {
    for (size_t axis = 0; axis < output_shape.size(); ++axis) {
      dims.push_back(Var(new VarNode("d" + std::to_string(axis))));
      dim_values.push_back(output_shape[axis]);
    }
  }
  std::vector<Buffer> buffers;
  std::vector<TensorExpr> tensor_inputs;
  for (size_t index = 0; index < tensors.size(); ++index) {
    const Shape& shape = tensors[index]->shape();
    std::vector<Expr> dimensions;
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      if (symbolic == Symbolic::kOutputAxes && shape[axis] != 1) {
        RELAY_CHECK(shape.size() <= output_shape.size(), "broadcast input of higher rank");
        dimensions.push_back(dims[output_shape.size() - shape.size() + axis]);
      } else if (symbolic == Symbolic::kInputDimensions && shape[axis] > 1) {
        dims.push_back(Var(new VarNode("d" + std::to_string(dims.size()))));
        dim_values.push_back(shape[axis]);
        dimensions.push_back(dims.back());
      } else {
        dimensions.push_back(Int(shape[axis]));
      }
    }
    std::string buffer_name = tensors.size() == definition.input_names.size()
                                  ? definition.input_names[index]
                                  : definition.input_names[0] + std::to_string(index);
    buffers.push_back(Buffer(new BufferNode(buffer_name, tensors[index]->dtype(), dimensions)));
    tensor_inputs.push_back(FromBuffer(buffers.back()));
  }
  std::vector<TensorExpr> outputs;
  std::vector<ValueType> output_types;
  if (output_type.is_tuple) {
    std::optional<std::vector<TensorExpr>> fields =
        NeuralNetworkTupleResult(definition.name, tensor_inputs, normalized);
    outputs = fields ? std::move(*fields)
                     : ComputeTupleResult(definition.name, tensor_inputs, normalized);
    output_types = output_type.fields;
  } else {
    outputs = {definition.compute(tensor_inputs, normalized)};
    output_types = {output_type};
    if (symbolic == Symbolic::kOutputAxes) {
      outputs[0].shape = std::vector<Expr>(dims.begin(), dims.end());
    }
  }
  RELAY_CHECK(outputs.size() == output_types.size(),
              "operator " + definition.name + ": compute and type relation disagree on arity");

  // One kernel per result tensor: a tuple's fields are independent loops.
  auto prepared = std::make_shared<PreparedOperator>();
  prepared->name = definition.name;
  prepared->depends_on_values = needs_values;
  prepared->tuple_result = output_type.is_tuple;
  for (size_t field = 0; field < outputs.size(); ++field) {
    const TensorExpr& output = outputs[field];
    const ValueType& type = output_types[field];
    RELAY_CHECK(output.ndim() == type.shape.size() && output.dtype == type.dtype,
                "operator " + definition.name + ": compute and type relation disagree");
    // The operator reads its inputs in order (for the schedules that take a
    // convolution's data and weight, or a pool's data).
    static constexpr int32_t kInOrder[] = {0, 1};
    const std::span<const int32_t> first_inputs =
        tensors.size() <= 2 ? std::span<const int32_t>(kInOrder, tensors.size())
                            : std::span<const int32_t>();
    if (device != nullptr) {
      prepared->kernels.push_back(PrepareKernel(
          BuildGpuKernel(definition.name, buffers, dims, output, GpuScheduleOptionsFor(*device)),
          type.shape, dim_values, device));
      continue;
    }
    std::optional<kir::Kernel> padding;
    if (definition.name == "nn.pad" && symbolic == Symbolic::kNone) {
      padding =
          BuildPadKernel(definition.name, buffers, tensor_inputs[0], tensor_inputs[1], normalized);
    }
    const kir::Kernel kernel = padding ? std::move(*padding)
                               : symbolic == Symbolic::kNone
                                   ? BuildCpuKernelAfter(definition.name, buffers, output,
                                                         definition.name, normalized, first_inputs)
                                   : BuildInjectiveKernel(definition.name, buffers, dims, output);
    prepared->kernels.push_back(PrepareKernel(kernel, type.shape, dim_values));
  }
  return prepared;
}

Ref<Tensor> SingleResult(const PreparedOperator& prepared, std::vector<Ref<Tensor>> results) {
  if (prepared.tuple_result) {
    throw Error(ErrorKind::kUsage, "operator " + prepared.name +
                                       " returns a tuple: run it with RunOperatorWithTupleResult");
  }
  return results[0];
}

}  // namespace

std::vector<Ref<Tensor>> PreparedOperator::Run(std::span<const Ref<Tensor>> tensors) const {
  std::vector<Ref<Tensor>> results;
  results.reserve(kernels.size());
  for (const PreparedKernel& kernel : kernels) results.push_back(kernel.Launch(tensors));
  return results;
}

bool PreparedCallSite::Matches(std::span<const Ref<Tensor>> tensors) const {
  if (prepared_ == nullptr || prepared_->depends_on_values || dtypes_.size() != tensors.size()) {
    return false;
  }
  for (size_t index = 0; index < tensors.size(); ++index) {
    if (dtypes_[index] != tensors[index]->dtype() || shapes_[index] != tensors[index]->shape() ||
        devices_[index] != tensors[index]->storage()->device()) {
      return false;
    }
  }
  return true;
}

void PreparedCallSite::Remember(std::span<const Ref<Tensor>> tensors,
                                std::shared_ptr<const PreparedOperator> prepared) {
  prepared_ = std::move(prepared);
  dtypes_.clear();
  shapes_.clear();
  devices_.clear();
  for (const Ref<Tensor>& tensor : tensors) {
    dtypes_.push_back(tensor->dtype());
    shapes_.push_back(tensor->shape());
    devices_.push_back(tensor->storage()->device());
  }
}

std::shared_ptr<const PreparedOperator> PrepareOperator(std::string_view name,
                                                        std::span<const Ref<Tensor>> tensors,
                                                        const Attrs& attrs, InputForm form) {
  const OperatorDefinition& definition =
      FindDefinition(name, form == InputForm::kTuple ? 1 : tensors.size());
  for (const Ref<Tensor>& tensor : tensors) {
    if (!tensor) throw Error(ErrorKind::kUsage, "operator " + definition.name + ": null input");
  }
  std::vector<ValueType> types = ValueTypesOf(tensors);
  if (form == InputForm::kTuple) types = {ValueType::Tuple(std::move(types))};
  return PrepareDefinition(definition, tensors, types, attrs);
}

std::shared_ptr<const PreparedOperator> PrepareFusedOperators(
    std::span<const FusedOperator> operators, std::span<const Ref<Tensor>> tensors) {
  if (operators.empty()) throw Error(ErrorKind::kUsage, "an empty fused group");
  Device* const device = DeviceOfInputs("a fused kernel", tensors);
  std::vector<Buffer> buffers;
  std::vector<TensorExpr> inputs;
  std::vector<ValueType> input_types;
  for (size_t index = 0; index < tensors.size(); ++index) {
    const Ref<Tensor>& tensor = tensors[index];
    std::vector<Expr> shape;
    for (int64_t dim : tensor->shape()) shape.push_back(Int(dim));
    buffers.push_back(Buffer(new BufferNode("in" + std::to_string(index), tensor->dtype(), shape)));
    inputs.push_back(FromBuffer(buffers.back()));
    input_types.push_back(ValueType::Tensor(tensor->shape(), tensor->dtype()));
  }
  std::vector<TensorExpr> results;
  std::vector<ValueType> result_types;
  Attrs first_attributes;  // the first operator's, normalised
  Attrs last_attributes;   // the last one's, normalised
  std::vector<TensorExpr> last_arguments;
  std::string name;  // the operators joined by '+', as profiles name them
  for (const FusedOperator& fused : operators) {
    const OperatorDefinition& definition = FindDefinition(fused.op, fused.inputs.size());
    if (!definition.compute || definition.shape_dependence != ShapeDependence::kInputShapes) {
      throw Error(ErrorKind::kUsage, "operator " + definition.name + " cannot be fused");
    }
    Attrs normalized;
    if (std::optional<std::string> problem =
            NormalizeAttrs(definition.attributes, fused.attrs, normalized)) {
      throw Error(ErrorKind::kUsage, "operator " + definition.name + ": " + *problem);
    }
    std::vector<TensorExpr> arguments;
    std::vector<RelationInput> relation_inputs;
    for (int32_t input : fused.inputs) {
      const size_t position = input >= 0 ? size_t(input) : size_t(-1 - input);
      const bool from_group = input < 0;
      if (from_group ? position >= results.size() : position >= inputs.size()) {
        throw Error(ErrorKind::kUsage,
                    "fused operator " + definition.name + " refers to a missing input");
      }
      arguments.push_back(from_group ? results[position] : inputs[position]);
      relation_inputs.push_back(
          {from_group ? &result_types[position] : &input_types[position], nullptr});
    }
    ValueType type;
    try {
      type = definition.relation(relation_inputs, normalized);
    } catch (const OperatorTypeError& error) {
      throw Error(ErrorKind::kUsage, "operator " + definition.name + ": " + error.message);
    }
    if (type.is_tuple) {
      throw Error(ErrorKind::kUsage,
                  "operator " + definition.name + " returns a tuple: not fusable");
    }
    results.push_back(definition.compute(arguments, normalized));
    if (results.size() == 1) first_attributes = normalized;
    last_attributes = normalized;
    last_arguments = std::move(arguments);
    RELAY_CHECK(results.back().ndim() == type.shape.size() && results.back().dtype == type.dtype,
                "operator " + definition.name + ": compute and type relation disagree");
    result_types.push_back(std::move(type));
    name += (name.empty() ? "" : "+") + definition.name;
  }
  auto prepared = std::make_shared<PreparedOperator>();
  prepared->name = name;
  if (device != nullptr) {
    prepared->kernels.push_back(PrepareKernel(
        BuildGpuKernel(name, buffers, {}, results.back(), GpuScheduleOptionsFor(*device)),
        result_types.back().shape, {}, device));
    return prepared;
  }
  // A group ending in a constant pad takes the pad's schedule (a bias and
  // activation, padded for the convolution after them), or, after a
  // contraction (a convolution before them too), the contraction's with its
  // tiles stored padded; else the group's first operator's, padded through
  // a workspace.
  std::optional<kir::Kernel> padding;
  if (operators.size() > 1 && operators.back().op == "nn.pad") {
    const TensorExpr& data = last_arguments[0];
    padding = BuildPadKernel(name, buffers, data, last_arguments[1], last_attributes);
    const std::optional<ConstantPadding> constant =
        ConstantPaddingOf(data, last_arguments[1], last_attributes);
    if (!padding && constant) {
      padding = BuildContractionKernel(name, buffers, data, HostContractionTiling(), &*constant);
    }
    if (!padding && constant) {
      padding = PaddedAfter(BuildCpuKernelAfter(name, buffers, data, operators[0].op,
                                                first_attributes, operators[0].inputs),
                            *constant);
    }
  }
  const kir::Kernel kernel =
      padding ? std::move(*padding)
              : BuildCpuKernelAfter(name, buffers, results.back(), operators[0].op,
                                    first_attributes, operators[0].inputs);
  prepared->kernels.push_back(PrepareKernel(kernel, result_types.back().shape, {}));
  return prepared;
}

Ref<Tensor> RunOperator(std::string_view name, std::span<const Ref<Tensor>> inputs,
                        const Attrs& attrs) {
  auto prepared = PrepareOperator(name, inputs, attrs, InputForm::kTensors);
  return SingleResult(*prepared, prepared->Run(inputs));
}

std::vector<Ref<Tensor>> RunOperatorWithTupleResult(std::string_view name,
                                                    std::span<const Ref<Tensor>> inputs,
                                                    const Attrs& attrs) {
  return PrepareOperator(name, inputs, attrs, InputForm::kTensors)->Run(inputs);
}

Ref<Tensor> RunOperatorOnTuple(std::string_view name, std::span<const Ref<Tensor>> fields,
                               const Attrs& attrs) {
  auto prepared = PrepareOperator(name, fields, attrs, InputForm::kTuple);
  return SingleResult(*prepared, prepared->Run(fields));
}

uint64_t KernelLaunchCount() {
  return launch_count.load(std::memory_order_relaxed);
}

}  // namespace relay::kernels

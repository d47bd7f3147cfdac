// The oneDNN codegen: its ExternalCodegen, the loaded function (a plan per
// distinct input shapes, cached) and running a plan.
#include "kernels/external/dnnl/dnnl_codegen.h"

#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "kernels/compute/cpu_kernels.h"
#include "kernels/external/dnnl/dnnl_plan.h"
#include "kernels/external/dnnl/dnnl_rules.h"
#include "relay/devices.h"
#include "relay/storage.h"

namespace relay::kernels::external {
namespace onednn {
namespace {

// What Compile writes and Load expects: the graph says everything else.
constexpr std::string_view kState = "relay-vm dnnl 1";

// The most plans a function keeps (one per distinct input shapes); past it,
// one is dropped (runs holding it keep it alive).
constexpr size_t kMaxPlans = 64;

// A buffer of `bytes` on the host (float32 elements, at least one).
Ref<Tensor> Allocate(size_t bytes) {
  const int64_t elements = std::max<int64_t>(1, int64_t((bytes + 3) / 4));
  return Tensor::Empty(HostDevice(), {elements}, DType::kFloat32);
}

// `buffer`'s bytes as a float32 tensor of `shape`.
Ref<Tensor> ViewAs(const Ref<Tensor>& buffer, const Shape& shape) {
  if (buffer->shape() == shape) return buffer;
  return Tensor::View(buffer->storage(), buffer->byte_offset(), shape, DType::kFloat32);
}

void Execute(const Step& step, std::vector<Ref<Tensor>>& slots, const Plan& plan,
             const Ref<Tensor>& scratchpad, dnnl::stream& stream) {
  std::unordered_map<int, dnnl::memory> arguments;
  for (const Argument& argument : step.arguments) {
    void* data = nullptr;
    if (argument.buffer == kScratchpadBuffer) {
      data = scratchpad->host_data();
    } else {
      Ref<Tensor>& slot = slots[argument.buffer];
      if (!slot) {
        slot = argument.buffer == plan.result_buffer
                   ? Tensor::Empty(HostDevice(), plan.result_shape, DType::kFloat32)
                   : Allocate(plan.buffers[argument.buffer].layout.get_size());
      }
      data = slot->host_data();
    }
    arguments.emplace(argument.argument, dnnl::memory(argument.layout, CpuEngine(), data));
  }
  step.primitive.execute(stream, arguments);
}

// An input's reorder: kept with an immutable input (its weights reordered
// once), else made for this run.
void ExecuteInputReorder(const Step& step, std::vector<Ref<Tensor>>& slots, const Plan& plan,
                         const Ref<Tensor>& scratchpad, dnnl::stream& stream) {
  const Tensor& source = *slots[step.arguments[0].buffer];
  const size_t target = step.arguments[1].buffer;
  auto reorder = [&] {
    Execute(step, slots, plan, scratchpad, stream);
    stream.wait();
    return slots[target];
  };
  if (!source.immutable()) {
    reorder();
    return;
  }
  Ref<Object> kept = source.Derived(step.derived_key, [&]() -> Ref<Object> {
    // It lives with its input beyond any run: no run's memory budget counts it.
    ScopedStorageObserver unobserved(nullptr);
    slots[target] = Allocate(plan.buffers[target].layout.get_size());
    return reorder();
  });
  slots[target] = Ref<Tensor>(static_cast<Tensor*>(kept.get()));
}

void ExecuteRelayKernels(const Step& step, std::vector<Ref<Tensor>>& slots, const Plan& plan,
                         const ExternalGraph& graph) {
  std::vector<Ref<Tensor>> results;
  for (size_t position = step.first_operator; position < step.end_operator; ++position) {
    const FusedOperator& call = graph.operators[position];
    const std::vector<int64_t>& operands = step.operands[position - step.first_operator];
    std::vector<Ref<Tensor>> inputs;
    for (size_t index = 0; index < operands.size(); ++index) {
      const int64_t operand = operands[index];
      if (operand < 0) {
        inputs.push_back(results[size_t(-(operand + 1))]);
        continue;
      }
      const int32_t input = call.inputs[index];
      const size_t value = input >= 0 ? size_t(input) : graph.params.size() + size_t(-(input + 1));
      inputs.push_back(ViewAs(slots[size_t(operand)], plan.value_shapes[value]));
    }
    results.push_back(RunOperator(call.op, inputs, call.attrs));
  }
  slots[step.output] = results.back();
}

}  // namespace

Ref<Tensor> RunPlan(const Plan& plan, const ExternalGraph& graph,
                    std::span<const Ref<Tensor>> inputs) {
  std::vector<Ref<Tensor>> slots(plan.buffers.size());
  for (size_t buffer = 0; buffer < plan.buffers.size(); ++buffer) {
    if (plan.buffers[buffer].input) slots[buffer] = inputs[plan.buffers[buffer].input_index];
  }
  const Ref<Tensor> scratchpad =
      plan.scratchpad_bytes > 0 ? Allocate(plan.scratchpad_bytes) : Ref<Tensor>();
  std::optional<dnnl::stream> stream;
  std::string operation = "creating a stream";
  try {
    stream.emplace(CpuEngine());
    for (const Step& step : plan.steps) {
      operation = step.operation;
      switch (step.kind) {
        case Step::Kind::kPrimitive:
          Execute(step, slots, plan, scratchpad, *stream);
          break;
        case Step::Kind::kInputReorder:
          ExecuteInputReorder(step, slots, plan, scratchpad, *stream);
          break;
        case Step::Kind::kRelayKernels:
          stream->wait();
          ExecuteRelayKernels(step, slots, plan, graph);
          break;
      }
      for (size_t buffer : step.released) slots[buffer] = nullptr;
    }
    operation = "waiting for the stream";
    stream->wait();
  } catch (const dnnl::error& error) {
    throw DeviceError(operation, error);
  }
  return ViewAs(slots[plan.result_buffer], plan.result_shape);
}

namespace {

class DnnlFunction final : public ExternalFunction {
 public:
  DnnlFunction(ExternalGraph graph, std::vector<Unit> units)
      : graph_(std::move(graph)), units_(std::move(units)) {}

  Ref<Tensor> Run(std::span<const Ref<Tensor>> inputs) const override {
    if (inputs.size() != graph_.params.size()) {
      throw Error(ErrorKind::kUsage, "the dnnl function takes " +
                                         std::to_string(graph_.params.size()) + " tensors, given " +
                                         std::to_string(inputs.size()));
    }
    std::vector<Ref<Tensor>> host;
    std::vector<Shape> shapes;
    std::vector<bool> immutable;
    for (size_t index = 0; index < inputs.size(); ++index) {
      const Ref<Tensor>& input = inputs[index];
      if (!input || input->dtype() != DType::kFloat32) {
        throw Error(ErrorKind::kUsage, "the dnnl function's input " + std::to_string(index) +
                                           " must be a float32 tensor");
      }
      host.push_back(TensorOn(input, HostDevice()));
      shapes.push_back(input->shape());
      immutable.push_back(host.back()->immutable());
    }
    return RunPlan(*PlanFor(shapes, immutable), graph_, host);
  }

 private:
  using PlanKey = std::pair<std::vector<Shape>, std::vector<bool>>;

  std::shared_ptr<const Plan> PlanFor(const std::vector<Shape>& shapes,
                                      const std::vector<bool>& immutable) const {
    PlanKey key(shapes, immutable);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = plans_.find(key);
      if (found != plans_.end()) return found->second;
    }
    // Built unlocked: other shapes need not wait. Two threads building the
    // same plan keep the first.
    std::shared_ptr<const Plan> plan = BuildPlan(graph_, units_, shapes, immutable);
    std::lock_guard<std::mutex> lock(mutex_);
    if (plans_.size() >= kMaxPlans && !plans_.contains(key)) plans_.erase(plans_.begin());
    return plans_.emplace(std::move(key), std::move(plan)).first->second;
  }

  const ExternalGraph graph_;
  const std::vector<Unit> units_;
  mutable std::mutex mutex_;
  mutable std::map<PlanKey, std::shared_ptr<const Plan>> plans_;
};

class Codegen final : public ExternalCodegen {
 public:
  std::string_view name() const override { return "dnnl"; }
  const RuleTable& rules() const override { return DnnlRules(); }
  bool merges_regions() const override { return true; }

  std::string Compile(const ExternalGraph& graph, const std::string& symbol) const override {
    SplitIntoUnits(graph, ErrorKind::kCompile, symbol);
    return std::string(kState);
  }

  std::shared_ptr<const ExternalFunction> Load(const ExternalGraph& graph, std::string_view state,
                                               const std::string& symbol) const override {
    if (state != kState) {
      throw Error(ErrorKind::kLoad, symbol +
                                        ": the dnnl codegen's state is not what this build's "
                                        "Compile writes");
    }
    std::vector<Unit> units = SplitIntoUnits(graph, ErrorKind::kLoad, symbol);
    return std::make_shared<DnnlFunction>(graph, std::move(units));
  }
};

}  // namespace
}  // namespace onednn

const ExternalCodegen& DnnlCodegen() {
  static const onednn::Codegen codegen;
  return codegen;
}

}  // namespace relay::kernels::external

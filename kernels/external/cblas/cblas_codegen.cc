// The OpenBLAS codegen, the walk-through example of docs/byoc.md: a rule
// table, a Compile that checks the graph holds only what the rules accept,
// and a loaded function that runs the graph's operators in order on the host,
// each product as cblas_sgemm calls and everything else with relay-vm's own
// kernels.
#include "kernels/external/cblas/cblas_codegen.h"

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "devices/driver_library.h"
#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"

namespace relay::kernels::external {
namespace {

// ---- what cblas runs ------------------------------------------------------------

bool IsFloat32(const ValueType& type) {
  return !type.is_tuple && type.dtype == DType::kFloat32;
}

bool HasFloat32Result(const CallView& call) {
  return IsFloat32(call.result);
}

// nn.dense, nn.matmul or nn.batch_matmul of float32 tensors into float32.
bool AcceptsProduct(const CallView& call) {
  const std::string& out_dtype = GetAttr(call.attrs, "out_dtype").as_string();
  return (out_dtype.empty() || out_dtype == "float32") && IsFloat32(call.result) &&
         std::all_of(call.inputs.begin(), call.inputs.end(), IsFloat32);
}

// A float32 vector added along the product's last axis: sgemm starts from
// it (beta = 1) instead of from zero.
bool AcceptsBias(const CallView& call) {
  if (!IsFloat32(call.result) || !std::all_of(call.inputs.begin(), call.inputs.end(), IsFloat32))
    return false;
  const int64_t last_axis = int64_t(call.result.shape.size()) - 1;
  if (call.op == "nn.bias_add") {
    const int64_t axis = GetAttr(call.attrs, "axis").as_int();
    return call.inputs[1].shape.size() == 1 && (axis == last_axis || axis == -1);
  }
  // add: the product (of the result's type) and a vector, either side.
  auto is_vector = [](const ValueType& input) { return input.shape.size() == 1; };
  return (call.inputs[0] == call.result && is_vector(call.inputs[1])) ||
         (call.inputs[1] == call.result && is_vector(call.inputs[0]));
}

const RuleTable& CblasRules() {
  static const RuleTable rules = {
      .composites = {{.name = "cblas.dense_bias",
                      .steps = {{.ops = {"nn.dense"}, .accepts = AcceptsProduct},
                                {.ops = {"nn.bias_add", "add"}, .accepts = AcceptsBias},
                                {.ops = {"nn.relu", "nn.leaky_relu", "clip", "sigmoid", "tanh"},
                                 .optional = true,
                                 .accepts = HasFloat32Result}}}},
      .operators = {{"nn.dense", AcceptsProduct},
                    {"nn.matmul", AcceptsProduct},
                    {"nn.batch_matmul", AcceptsProduct}},
  };
  return rules;
}

// Whether `rules` accept `call`, a call of the composite pattern named
// `composite` (empty: a call of its own).
bool RulesAccept(const RuleTable& rules, std::string_view composite, const CallView& call) {
  auto holds = [&](const CallPredicate& predicate) { return !predicate || predicate(call); };
  if (composite.empty()) {
    return std::any_of(
        rules.operators.begin(), rules.operators.end(),
        [&](const OperatorRule& rule) { return rule.op == call.op && holds(rule.accepts); });
  }
  for (const CompositeRule& rule : rules.composites) {
    if (rule.name != composite) continue;
    return std::any_of(rule.steps.begin(), rule.steps.end(), [&](const PatternStep& step) {
      return std::find(step.ops.begin(), step.ops.end(), call.op) != step.ops.end() &&
             holds(step.accepts);
    });
  }
  return false;
}

// Throws `kind` naming `symbol` unless the rules accept every operator of
// `graph` (a graph from a file need not come from the partitioner).
void CheckGraphIsSupported(const ExternalGraph& graph, ErrorKind kind, const std::string& symbol) {
  for (size_t position = 0; position < graph.operators.size(); ++position) {
    const FusedOperator& call = graph.operators[position];
    std::vector<ValueType> inputs;
    for (int32_t input : call.inputs)
      inputs.push_back(input >= 0 ? graph.params[size_t(input)] : graph.types[size_t(-1 - input)]);
    const std::string_view composite = graph.CompositeOf(position);
    if (!RulesAccept(CblasRules(), composite,
                     {call.op, call.attrs, inputs, graph.types[position]})) {
      throw Error(kind, symbol + ": cblas does not run operator " + std::to_string(position) +
                            " (" + call.op +
                            (composite.empty() ? "" : " in " + std::string(composite)) + ")");
    }
  }
}

// ---- running a product ------------------------------------------------------------

bool IsProduct(std::string_view op) {
  return op == "nn.dense" || op == "nn.matmul" || op == "nn.batch_matmul";
}

// A product as `batch` sgemm calls, C_i (m x n) = op(A_i) op(B_i) + beta C_i,
// row-major; a stride of 0 broadcasts one matrix over the batch.
struct Gemm {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transpose_a = false, transpose_b = false;
  int64_t a_stride = 0, b_stride = 0;
};

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t axis = begin; axis < end; ++axis) product *= shape[axis];
  return product;
}

// The sgemm calls of `call` on operands of shapes `a` and `b` (which
// InferShapes accepted). nn.dense is nn.matmul with transpose_b; nn.matmul's
// leading dimensions are rows of A, or with transpose_a a batch of (K, M)
// matrices.
Gemm GemmOf(const FusedOperator& call, const Shape& a, const Shape& b) {
  Gemm gemm;
  const bool batched = call.op == "nn.batch_matmul";
  gemm.transpose_a = call.op != "nn.dense" && GetAttr(call.attrs, "transpose_a").as_bool();
  gemm.transpose_b = call.op == "nn.dense" || GetAttr(call.attrs, "transpose_b").as_bool();
  const size_t rank = a.size();
  if (batched || gemm.transpose_a) {
    gemm.batch = batched ? (a[0] == 1 ? b[0] : a[0]) : Product(a, 0, rank - 2);
    gemm.m = gemm.transpose_a ? a[rank - 1] : a[rank - 2];
    gemm.k = gemm.transpose_a ? a[rank - 2] : a[rank - 1];
    gemm.a_stride = batched && a[0] == 1 ? 0 : gemm.m * gemm.k;
  } else {
    gemm.m = Product(a, 0, rank - 1);
    gemm.k = a[rank - 1];
  }
  const size_t b_rank = b.size();
  gemm.n = gemm.transpose_b ? b[b_rank - 2] : b[b_rank - 1];
  if (batched) gemm.b_stride = b[0] == 1 ? 0 : gemm.k * gemm.n;
  return gemm;
}

// cblas_sgemm of the system's CBLAS, opened on first use rather than
// linked: OpenBLAS starts a thread pool as it loads, which every relay-vm
// process would otherwise carry, and whose threads (created before
// `relay-vm serve` blocks its signals for its own signal thread) would take
// SIGTERM and end the process. Opened here, from a thread that runs
// programs, the pool inherits that thread's signal mask.
using Sgemm = decltype(&cblas_sgemm);
Sgemm LoadSgemm() {
  static const std::pair<Sgemm, std::string> loaded = []() -> std::pair<Sgemm, std::string> {
    std::string failure;
    std::optional<devices::DriverLibrary> library =
        devices::OpenDriverLibrary({"libopenblas.so.0", "libcblas.so.3", "libblas.so.3"}, failure);
    if (!library) return {nullptr, failure};
    void* entry = library->resolver()("cblas_sgemm");
    if (entry == nullptr) return {nullptr, library->name + " has no cblas_sgemm"};
    return {reinterpret_cast<Sgemm>(entry), ""};
  }();
  if (loaded.first == nullptr) {
    throw Error(ErrorKind::kDevice,
                "the cblas codegen found no CBLAS library (install Debian's "
                "libopenblas0): " +
                    loaded.second);
  }
  return loaded.first;
}

void RunGemm(const Gemm& gemm, const float* a, const float* b, float* c, float beta,
             const std::string& symbol) {
  if (gemm.m == 0 || gemm.n == 0 || gemm.batch == 0) return;
  if (gemm.k == 0) {
    if (beta == 0) std::fill_n(c, gemm.batch * gemm.m * gemm.n, 0.0f);
    return;
  }
  constexpr int64_t kLargest = std::numeric_limits<blasint>::max();
  if (gemm.m > kLargest || gemm.n > kLargest || gemm.k > kLargest) {
    throw Error(ErrorKind::kUsage, symbol + ": a " + std::to_string(gemm.m) + " x " +
                                       std::to_string(gemm.k) + " by " + std::to_string(gemm.k) +
                                       " x " + std::to_string(gemm.n) +
                                       " product exceeds OpenBLAS's 32-bit sizes");
  }
  const auto m = blasint(gemm.m), n = blasint(gemm.n), k = blasint(gemm.k);
  const Sgemm sgemm = LoadSgemm();
  for (int64_t index = 0; index < gemm.batch; ++index) {
    sgemm(CblasRowMajor, gemm.transpose_a ? CblasTrans : CblasNoTrans,
          gemm.transpose_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a + index * gemm.a_stride,
          gemm.transpose_a ? m : k, b + index * gemm.b_stride, gemm.transpose_b ? k : n, beta,
          c + index * gemm.m * gemm.n, n);
  }
}

// ---- the loaded function ------------------------------------------------------------

class CblasFunction final : public ExternalFunction {
 public:
  CblasFunction(ExternalGraph graph, std::string symbol)
      : graph_(std::move(graph)),
        symbol_(std::move(symbol)),
        bias_input_(graph_.operators.size(), -1) {
    for (size_t position = 0; position + 1 < graph_.operators.size(); ++position)
      bias_input_[position] = BiasInputAfter(position);
  }

  Ref<Tensor> Run(std::span<const Ref<Tensor>> inputs) const override {
    if (inputs.size() != graph_.params.size()) {
      throw Error(ErrorKind::kUsage, symbol_ + " takes " + std::to_string(graph_.params.size()) +
                                         " tensors, given " + std::to_string(inputs.size()));
    }
    std::vector<Ref<Tensor>> params;
    std::vector<Shape> param_shapes;
    for (size_t index = 0; index < inputs.size(); ++index) {
      const Ref<Tensor>& input = inputs[index];
      if (input->dtype() != graph_.params[index].dtype) {
        throw Error(ErrorKind::kUsage, symbol_ + "'s input " + std::to_string(index) + " is " +
                                           graph_.params[index].ToString() + ", given " +
                                           std::string(DTypeName(input->dtype())));
      }
      params.push_back(TensorOn(input, HostDevice()));
      param_shapes.push_back(input->shape());
    }
    const std::vector<Shape> shapes = InferShapes(graph_, param_shapes);
    std::vector<Ref<Tensor>> results(graph_.operators.size());
    for (size_t position = 0; position < graph_.operators.size(); ++position) {
      if (results[position]) continue;  // a bias added by the product before it
      const FusedOperator& call = graph_.operators[position];
      std::vector<Ref<Tensor>> operands;
      for (int32_t input : call.inputs)
        operands.push_back(input >= 0 ? params[size_t(input)] : results[size_t(-1 - input)]);
      if (!IsProduct(call.op)) {
        results[position] = RunOperator(call.op, operands, call.attrs);
        continue;
      }
      Ref<Tensor> result = Tensor::Empty(HostDevice(), shapes[position], DType::kFloat32);
      const Gemm gemm = GemmOf(call, operands[0]->shape(), operands[1]->shape());
      Ref<Tensor> bias = FusedBias(position, shapes, params, results);
      if (bias) {
        // Every row of C starts as the bias.
        float* rows = result->data<float>();
        const float* values = bias->data<float>();
        const int64_t row_count = gemm.n == 0 ? 0 : result->element_count() / gemm.n;
        for (int64_t row = 0; row < row_count; ++row)
          std::copy_n(values, gemm.n, rows + row * gemm.n);
        results[position + 1] = result;
      }
      RunGemm(gemm, operands[0]->data<float>(), operands[1]->data<float>(), result->data<float>(),
              bias ? 1.0f : 0.0f, symbol_);
      results[position] = result;
    }
    return results.back();
  }

 private:
  // Which input of the operator after product `position` is a bias that the
  // product's sgemm may add: that operator is the bias step of the same
  // composite, and the product's result has no other use. -1: none.
  int32_t BiasInputAfter(size_t position) const {
    const FusedOperator& product = graph_.operators[position];
    const FusedOperator& next = graph_.operators[position + 1];
    const int32_t composite = graph_.composites[position];
    if (!IsProduct(product.op) || composite < 0 || graph_.composites[position + 1] != composite)
      return -1;
    const int32_t product_value = -1 - int32_t(position);
    size_t uses = 0;
    for (const FusedOperator& call : graph_.operators)
      uses += size_t(std::count(call.inputs.begin(), call.inputs.end(), product_value));
    if (uses != 1) return -1;
    const size_t rank = graph_.types[position].shape.size();
    if (next.op == "nn.bias_add") {
      const int64_t axis = GetAttr(next.attrs, "axis").as_int();
      const bool last_axis = axis == -1 || axis == int64_t(rank) - 1;
      return next.inputs[0] == product_value && last_axis ? 1 : -1;
    }
    if (next.op != "add") return -1;
    return next.inputs[0] == product_value ? 1 : next.inputs[1] == product_value ? 0 : -1;
  }

  // The bias to start product `position`'s C from, or null where the next
  // operator must run by itself (its bias broadcasts otherwise at this shape).
  Ref<Tensor> FusedBias(size_t position, const std::vector<Shape>& shapes,
                        const std::vector<Ref<Tensor>>& params,
                        const std::vector<Ref<Tensor>>& results) const {
    if (bias_input_[position] < 0) return {};
    const int32_t input = graph_.operators[position + 1].inputs[size_t(bias_input_[position])];
    const Ref<Tensor>& bias = input >= 0 ? params[size_t(input)] : results[size_t(-1 - input)];
    const Shape& product_shape = shapes[position];
    const bool fits = shapes[position + 1] == product_shape && bias->ndim() == 1 &&
                      !product_shape.empty() && bias->shape()[0] == product_shape.back();
    return fits ? bias : Ref<Tensor>();
  }

  const ExternalGraph graph_;
  const std::string symbol_;
  std::vector<int32_t> bias_input_;  // by operator: BiasInputAfter
};

// ---- the codegen ------------------------------------------------------------

class OpenBlasCodegen final : public ExternalCodegen {
 public:
  std::string_view name() const override { return "cblas"; }
  const RuleTable& rules() const override { return CblasRules(); }

  // Nothing to compile ahead: sgemm takes its shapes at each call.
  std::string Compile(const ExternalGraph& graph, const std::string& symbol) const override {
    CheckGraphIsSupported(graph, ErrorKind::kCompile, symbol);
    return {};
  }

  std::shared_ptr<const ExternalFunction> Load(const ExternalGraph& graph, std::string_view state,
                                               const std::string& symbol) const override {
    if (!state.empty()) {
      throw Error(ErrorKind::kLoad, symbol + ": cblas keeps no compiled state, found " +
                                        std::to_string(state.size()) + " bytes");
    }
    CheckGraphIsSupported(graph, ErrorKind::kLoad, symbol);
    return std::make_shared<CblasFunction>(graph, symbol);
  }
};

}  // namespace

const ExternalCodegen& CblasCodegen() {
  static const OpenBlasCodegen codegen;
  return codegen;
}

}  // namespace relay::kernels::external

// Accuracy and shape of the vector math library (vector_math.h). Each
// function is JIT-compiled over an array twice, as a loop over <16 x T>
// vectors and as a scalar loop the optimiser may not vectorise, and compared
// with glibc's long double function (the oracle) rounded to T, in ulps of T.
#include "kernels/codegen/llvm/vector_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include "kernels/codegen/llvm/llvm_jit.h"

namespace relay::kernels::llvm_backend {
namespace {

enum class MathFunction { kExp, kLog, kTanh, kErf, kSigmoid };

constexpr MathFunction kAllFunctions[] = {MathFunction::kExp, MathFunction::kLog,
                                          MathFunction::kTanh, MathFunction::kErf,
                                          MathFunction::kSigmoid};

// The error bounds vector_math.h documents, in ulps of the result.
constexpr double kFloatUlpBound = 1.5;
constexpr double kDoubleUlpBound = 2.0;

constexpr unsigned kVectorLanes = 16;

llvm::Value* EmitMath(MathFunction function, llvm::IRBuilderBase& builder, llvm::Value* x) {
  switch (function) {
    case MathFunction::kExp:
      return EmitExp(builder, x);
    case MathFunction::kLog:
      return EmitLog(builder, x);
    case MathFunction::kTanh:
      return EmitTanh(builder, x);
    case MathFunction::kErf:
      return EmitErf(builder, x);
    case MathFunction::kSigmoid:
      return EmitSigmoid(builder, x);
  }
  return nullptr;
}

long double Oracle(MathFunction function, long double x) {
  switch (function) {
    case MathFunction::kExp:
      return std::exp(x);
    case MathFunction::kLog:
      return std::log(x);
    case MathFunction::kTanh:
      return std::tanh(x);
    case MathFunction::kErf:
      return std::erf(x);
    case MathFunction::kSigmoid: {
      if (std::isnan(x)) return x;
      long double e = std::exp(-std::fabs(x));
      return (x >= 0 ? 1.0L : e) / (1.0L + e);
    }
  }
  return 0;
}

// ---- JIT-compiled array functions ---------------------------------------------------

using ArrayFunction = void (*)(const void* input, void* output, int64_t count);

// void apply(const T* input, T* output, int64_t count): output[i] = f(input[i]),
// `lanes` elements per iteration (count must be a multiple). A scalar loop
// (lanes == 1) carries metadata that keeps it scalar.
BuiltModule ArrayModule(MathFunction function, bool is_double, unsigned lanes) {
  BuiltModule built;
  built.context = std::make_unique<llvm::LLVMContext>();
  built.module = std::make_unique<llvm::Module>("vector_math", *built.context);
  llvm::LLVMContext& context = *built.context;
  llvm::IRBuilder<> builder(context);
  llvm::Type* element = is_double ? builder.getDoubleTy() : builder.getFloatTy();
  llvm::Type* value_type = lanes == 1 ? element : llvm::FixedVectorType::get(element, lanes);
  llvm::Type* pointer = builder.getPtrTy();
  llvm::Type* index_type = builder.getInt64Ty();
  auto* type = llvm::FunctionType::get(builder.getVoidTy(), {pointer, pointer, index_type}, false);
  auto* apply =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, "apply", *built.module);
  auto* entry = llvm::BasicBlock::Create(context, "entry", apply);
  auto* header = llvm::BasicBlock::Create(context, "header", apply);
  auto* body = llvm::BasicBlock::Create(context, "body", apply);
  auto* exit = llvm::BasicBlock::Create(context, "exit", apply);
  builder.SetInsertPoint(entry);
  builder.CreateBr(header);
  builder.SetInsertPoint(header);
  llvm::PHINode* index = builder.CreatePHI(index_type, 2);
  index->addIncoming(builder.getInt64(0), entry);
  builder.CreateCondBr(builder.CreateICmpSLT(index, apply->getArg(2)), body, exit);
  builder.SetInsertPoint(body);
  llvm::Align alignment(is_double ? 8 : 4);
  llvm::Value* x = builder.CreateAlignedLoad(
      value_type, builder.CreateGEP(element, apply->getArg(0), index), alignment);
  builder.CreateAlignedStore(EmitMath(function, builder, x),
                             builder.CreateGEP(element, apply->getArg(1), index), alignment);
  llvm::Value* next = builder.CreateAdd(index, builder.getInt64(lanes));
  index->addIncoming(next, body);
  llvm::BranchInst* back_edge = builder.CreateBr(header);
  if (lanes == 1) {
    auto property = [&](const char* name, llvm::Constant* value) -> llvm::Metadata* {
      return llvm::MDNode::get(
          context, {llvm::MDString::get(context, name), llvm::ConstantAsMetadata::get(value)});
    };
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(
        context, {nullptr, property("llvm.loop.vectorize.enable", builder.getFalse()),
                  property("llvm.loop.interleave.count", builder.getInt32(1)),
                  property("llvm.loop.unroll.disable", builder.getTrue())});
    loop_id->replaceOperandWith(0, loop_id);
    back_edge->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  }
  builder.SetInsertPoint(exit);
  builder.CreateRetVoid();
  return built;
}

LlvmJit& TestJit() {
  static LlvmJit* jit = new LlvmJit("");
  return *jit;
}

ArrayFunction CompiledArrayFunction(MathFunction function, bool is_double, unsigned lanes) {
  static std::map<std::tuple<MathFunction, bool, unsigned>, ArrayFunction> compiled;
  auto key = std::make_tuple(function, is_double, lanes);
  auto found = compiled.find(key);
  if (found != compiled.end()) return found->second;
  BuiltModule built = ArrayModule(function, is_double, lanes);
  auto address = reinterpret_cast<ArrayFunction>(
      TestJit().Compile(std::move(built.module), std::move(built.context), "apply"));
  compiled[key] = address;
  return address;
}

// ---- ulp error ------------------------------------------------------------------------

// |actual - exact| in ulps of exact's binade in T (the denormal ulp below
// the normal range). Where exact rounds to infinity, only that infinity is
// right; a NaN is right only where exact is NaN; an infinite `actual` for
// a finite rounded result counts as 2^(max exponent + 1).
template <typename T>
double UlpError(T actual, long double exact) {
  using Limits = std::numeric_limits<T>;
  if (std::isnan(exact)) return std::isnan(actual) ? 0.0 : INFINITY;
  if (std::isnan(actual)) return INFINITY;
  T rounded = static_cast<T>(exact);
  if (std::isinf(rounded)) return actual == rounded ? 0.0 : INFINITY;
  long double actual_value = actual;
  if (std::isinf(actual))
    actual_value = std::copysign(std::ldexp(1.0L, Limits::max_exponent), actual);
  int exponent = exact == 0 ? Limits::min_exponent - 1 : std::ilogb(exact);
  exponent = std::max(exponent, Limits::min_exponent - 1);
  long double ulp = std::ldexp(1.0L, exponent - (Limits::digits - 1));
  return static_cast<double>(std::fabs(actual_value - exact) / ulp);
}

template <typename T>
struct AccuracyReport {
  double max_ulp = 0;
  T worst_input = 0;
  T worst_output = 0;
  size_t checked = 0;
};

// Runs `function` over `inputs` as a vector loop and as a scalar loop and
// returns the worse of the two reports.
template <typename T>
AccuracyReport<T> MeasureAccuracy(MathFunction function, std::vector<T> inputs) {
  constexpr bool is_double = std::is_same_v<T, double>;
  while (inputs.size() % kVectorLanes != 0) inputs.push_back(T(1));
  std::vector<long double> exact(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) exact[i] = Oracle(function, inputs[i]);
  AccuracyReport<T> report;
  for (unsigned lanes : {kVectorLanes, 1u}) {
    std::vector<T> outputs(inputs.size());
    CompiledArrayFunction(function, is_double, lanes)(inputs.data(), outputs.data(),
                                                      static_cast<int64_t>(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      double error = UlpError(outputs[i], exact[i]);
      if (!(error <= report.max_ulp)) {
        report.max_ulp = error;
        report.worst_input = inputs[i];
        report.worst_output = outputs[i];
      }
    }
    report.checked += inputs.size();
  }
  return report;
}

const char* Name(MathFunction function) {
  switch (function) {
    case MathFunction::kExp:
      return "exp";
    case MathFunction::kLog:
      return "log";
    case MathFunction::kTanh:
      return "tanh";
    case MathFunction::kErf:
      return "erf";
    case MathFunction::kSigmoid:
      return "sigmoid";
  }
  return "";
}

// The range where each function is neither constant nor trivially
// overflowing, swept densely.
std::pair<double, double> InterestingRange(MathFunction function, bool is_double) {
  switch (function) {
    case MathFunction::kExp:
      return is_double ? std::pair{-746.0, 710.0} : std::pair{-104.0, 89.0};
    case MathFunction::kLog:
      return {0.0, 4.0};
    case MathFunction::kTanh:
      return is_double ? std::pair{-20.0, 20.0} : std::pair{-10.0, 10.0};
    case MathFunction::kErf:
      return is_double ? std::pair{-6.0, 6.0} : std::pair{-4.0, 4.0};
    case MathFunction::kSigmoid:
      return is_double ? std::pair{-750.0, 40.0} : std::pair{-105.0, 20.0};
  }
  return {0, 0};
}

template <typename T>
std::vector<T> DenseSweep(MathFunction function, size_t count) {
  auto [low, high] = InterestingRange(function, std::is_same_v<T, double>);
  std::vector<T> inputs;
  for (size_t i = 0; i < count; ++i) {
    inputs.push_back(static_cast<T>(low + (high - low) * static_cast<double>(i) /
                                              static_cast<double>(count - 1)));
  }
  return inputs;
}

template <typename T>
void ExpectAccurate(MathFunction function, const char* set, const std::vector<T>& inputs,
                    double bound) {
  AccuracyReport<T> report = MeasureAccuracy(function, inputs);
  // Printed so that the documented accuracy can be re-measured.
  std::printf("%-8s %-6s %-10s max %.3f ulp (input %.9g -> %.9g, %zu checked)\n", Name(function),
              std::is_same_v<T, double> ? "double" : "float", set, report.max_ulp,
              static_cast<double>(report.worst_input), static_cast<double>(report.worst_output),
              report.checked);
  EXPECT_LE(report.max_ulp, bound) << Name(function) << " " << set << " worst input "
                                   << report.worst_input << " gave " << report.worst_output;
}

// ---- inputs ---------------------------------------------------------------------------

// Every 8191st float bit pattern (8191 is odd, so all low-bit patterns and
// every binade, including NaNs, infinities and denormals, are visited).
std::vector<float> FloatBitSweep() {
  std::vector<float> inputs;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 8191) {
    uint32_t pattern = static_cast<uint32_t>(bits);
    float value;
    std::memcpy(&value, &pattern, sizeof(value));
    inputs.push_back(value);
  }
  return inputs;
}

template <typename T>
std::vector<T> Denormals() {
  using Bits = std::conditional_t<std::is_same_v<T, double>, uint64_t, uint32_t>;
  constexpr Bits kLargestDenormal = (Bits{1} << (std::numeric_limits<T>::digits - 1)) - 1;
  std::vector<T> inputs;
  std::mt19937_64 random(7);
  for (int i = 0; i < 1 << 14; ++i) {
    Bits pattern = static_cast<Bits>(random() % kLargestDenormal) + 1;
    if (i < 64) pattern = static_cast<Bits>(i + 1);  // the smallest ones
    T value;
    std::memcpy(&value, &pattern, sizeof(value));
    inputs.push_back(value);
    inputs.push_back(-value);
  }
  return inputs;
}

// Random doubles: all bit patterns, and log-uniform magnitudes in
// [2^-40, 2^11) where every function does something non-trivial.
std::vector<double> RandomDoubles() {
  std::vector<double> inputs;
  std::mt19937_64 random(11);
  for (int i = 0; i < 1 << 16; ++i) {
    uint64_t pattern = random();
    double value;
    std::memcpy(&value, &pattern, sizeof(value));
    inputs.push_back(value);
  }
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-40, 10);
  for (int i = 0; i < 1 << 18; ++i) {
    double value = std::ldexp(mantissa(random), exponent(random));
    inputs.push_back(i % 2 ? value : -value);
  }
  return inputs;
}

template <typename T>
std::vector<T> SpecialValues() {
  using Limits = std::numeric_limits<T>;
  std::vector<T> inputs = {T(0),
                           -T(0),
                           Limits::infinity(),
                           -Limits::infinity(),
                           Limits::quiet_NaN(),
                           -Limits::quiet_NaN(),
                           Limits::max(),
                           Limits::lowest(),
                           Limits::min(),
                           -Limits::min(),
                           Limits::denorm_min(),
                           -Limits::denorm_min(),
                           Limits::epsilon(),
                           T(1),
                           T(-1),
                           T(0.5),
                           T(0.625),
                           T(2),
                           T(4),
                           T(6),
                           std::nextafter(T(1), T(0)),
                           std::nextafter(T(1), T(2))};
  // Around the overflow and underflow thresholds of exp.
  for (long double threshold : {std::log(static_cast<long double>(Limits::max())),
                                std::log(static_cast<long double>(Limits::min())),
                                std::log(static_cast<long double>(Limits::denorm_min())),
                                std::log(static_cast<long double>(Limits::denorm_min()) / 2)}) {
    T center = static_cast<T>(threshold);
    for (int step = 0; step < 64; ++step) {
      inputs.push_back(center);
      inputs.push_back(-center);
      center = std::nextafter(center, T(0));
    }
  }
  return inputs;
}

// ---- tests ----------------------------------------------------------------------------

TEST(VectorMathTest, FloatAccuracy) {
  std::vector<float> bit_sweep = FloatBitSweep();
  for (MathFunction function : kAllFunctions) {
    ExpectAccurate<float>(function, "bit-sweep", bit_sweep, kFloatUlpBound);
    ExpectAccurate<float>(function, "dense", DenseSweep<float>(function, 1 << 17), kFloatUlpBound);
    ExpectAccurate<float>(function, "denormal", Denormals<float>(), kFloatUlpBound);
    ExpectAccurate<float>(function, "special", SpecialValues<float>(), kFloatUlpBound);
  }
}

TEST(VectorMathTest, DoubleAccuracy) {
  std::vector<double> random = RandomDoubles();
  for (MathFunction function : kAllFunctions) {
    ExpectAccurate<double>(function, "random", random, kDoubleUlpBound);
    ExpectAccurate<double>(function, "dense", DenseSweep<double>(function, 1 << 17),
                           kDoubleUlpBound);
    ExpectAccurate<double>(function, "denormal", Denormals<double>(), kDoubleUlpBound);
    ExpectAccurate<double>(function, "special", SpecialValues<double>(), kDoubleUlpBound);
  }
}

// The IEEE special cases exactly, including signs (the ulp measure above
// does not see the sign of a zero).
template <typename T>
void ExpectSpecialCases() {
  using Limits = std::numeric_limits<T>;
  constexpr bool is_double = std::is_same_v<T, double>;
  const T inf = Limits::infinity();
  const T nan = Limits::quiet_NaN();
  auto apply = [&](MathFunction function, T x) {
    std::vector<T> input(kVectorLanes, x);
    std::vector<T> output(kVectorLanes);
    T scalar;
    CompiledArrayFunction(function, is_double, kVectorLanes)(input.data(), output.data(),
                                                             kVectorLanes);
    CompiledArrayFunction(function, is_double, 1)(&x, &scalar, 1);
    EXPECT_EQ(std::memcmp(&scalar, &output[0], sizeof(T)), 0) << Name(function) << "(" << x << ")";
    return output[0];
  };
  auto is_positive_zero = [](T value) { return value == 0 && !std::signbit(value); };
  auto is_negative_zero = [](T value) { return value == 0 && std::signbit(value); };
  EXPECT_TRUE(is_positive_zero(apply(MathFunction::kExp, -inf)));
  EXPECT_EQ(apply(MathFunction::kExp, inf), inf);
  EXPECT_EQ(apply(MathFunction::kExp, Limits::max()), inf);
  EXPECT_TRUE(is_positive_zero(apply(MathFunction::kExp, Limits::lowest())));
  EXPECT_EQ(apply(MathFunction::kExp, T(0)), T(1));
  EXPECT_EQ(apply(MathFunction::kExp, -T(0)), T(1));
  EXPECT_EQ(apply(MathFunction::kLog, T(0)), -inf);
  EXPECT_EQ(apply(MathFunction::kLog, -T(0)), -inf);
  EXPECT_EQ(apply(MathFunction::kLog, inf), inf);
  EXPECT_TRUE(is_positive_zero(apply(MathFunction::kLog, T(1))));
  EXPECT_TRUE(std::isnan(apply(MathFunction::kLog, T(-1))));
  EXPECT_TRUE(std::isnan(apply(MathFunction::kLog, -inf)));
  EXPECT_TRUE(std::isnan(apply(MathFunction::kLog, -Limits::denorm_min())));
  EXPECT_EQ(apply(MathFunction::kTanh, inf), T(1));
  EXPECT_EQ(apply(MathFunction::kTanh, -inf), T(-1));
  EXPECT_TRUE(is_negative_zero(apply(MathFunction::kTanh, -T(0))));
  EXPECT_TRUE(is_positive_zero(apply(MathFunction::kTanh, T(0))));
  EXPECT_EQ(apply(MathFunction::kTanh, -Limits::denorm_min()), -Limits::denorm_min());
  EXPECT_EQ(apply(MathFunction::kErf, inf), T(1));
  EXPECT_EQ(apply(MathFunction::kErf, -inf), T(-1));
  EXPECT_TRUE(is_negative_zero(apply(MathFunction::kErf, -T(0))));
  EXPECT_EQ(apply(MathFunction::kSigmoid, inf), T(1));
  EXPECT_TRUE(is_positive_zero(apply(MathFunction::kSigmoid, -inf)));
  EXPECT_EQ(apply(MathFunction::kSigmoid, T(0)), T(0.5));
  for (MathFunction function : kAllFunctions) {
    EXPECT_TRUE(std::isnan(apply(function, nan))) << Name(function);
    EXPECT_TRUE(std::isnan(apply(function, -nan))) << Name(function);
  }
}

TEST(VectorMathTest, FloatSpecialCases) {
  ExpectSpecialCases<float>();
}

TEST(VectorMathTest, DoubleSpecialCases) {
  ExpectSpecialCases<double>();
}

// The emitted IR is one basic block whose only calls are to intrinsics that
// every target lowers inline, so the vectorisers can widen it.
TEST(VectorMathTest, EmitsStraightLineCodeWithoutCalls) {
  llvm::LLVMContext context;
  llvm::Module module("straight_line", context);
  llvm::IRBuilder<> builder(context);
  std::vector<llvm::Type*> types = {builder.getFloatTy(), builder.getDoubleTy(),
                                    llvm::FixedVectorType::get(builder.getFloatTy(), 16),
                                    llvm::FixedVectorType::get(builder.getDoubleTy(), 8)};
  for (llvm::Type* type : types) {
    for (MathFunction function : kAllFunctions) {
      auto* function_type = llvm::FunctionType::get(type, {type}, false);
      auto* emitted = llvm::Function::Create(function_type, llvm::Function::ExternalLinkage,
                                             Name(function), module);
      builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", emitted));
      llvm::Value* result = EmitMath(function, builder, emitted->getArg(0));
      EXPECT_EQ(result->getType(), type);
      builder.CreateRet(result);
      EXPECT_EQ(emitted->size(), 1u) << Name(function);
      for (const llvm::Instruction& instruction : emitted->getEntryBlock()) {
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction)) {
          const auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(call);
          ASSERT_NE(intrinsic, nullptr) << Name(function) << " calls a function";
          llvm::Intrinsic::ID id = intrinsic->getIntrinsicID();
          EXPECT_TRUE(id == llvm::Intrinsic::fma || id == llvm::Intrinsic::fabs ||
                      id == llvm::Intrinsic::copysign || id == llvm::Intrinsic::roundeven)
              << Name(function) << " uses " << intrinsic->getCalledFunction()->getName().str();
        }
        EXPECT_FALSE(instruction.mayReadOrWriteMemory() && !llvm::isa<llvm::CallBase>(&instruction))
            << Name(function);
      }
    }
  }
}

// A scalar loop over an array that applies a function is widened by LLVM's
// loop vectoriser: the optimised loop computes on vectors and calls nothing.
TEST(VectorMathTest, ScalarLoopVectorises) {
  for (MathFunction function : kAllFunctions) {
    for (bool is_double : {false, true}) {
      BuiltModule built;
      built.context = std::make_unique<llvm::LLVMContext>();
      built.module = std::make_unique<llvm::Module>("vectorises", *built.context);
      llvm::LLVMContext& context = *built.context;
      llvm::IRBuilder<> builder(context);
      llvm::Type* element = is_double ? builder.getDoubleTy() : builder.getFloatTy();
      llvm::Type* pointer = builder.getPtrTy();
      auto* type = llvm::FunctionType::get(builder.getVoidTy(),
                                           {pointer, pointer, builder.getInt64Ty()}, false);
      auto* apply =
          llvm::Function::Create(type, llvm::Function::ExternalLinkage, "apply", *built.module);
      apply->addParamAttr(0, llvm::Attribute::NoAlias);
      apply->addParamAttr(1, llvm::Attribute::NoAlias);
      auto* entry = llvm::BasicBlock::Create(context, "entry", apply);
      auto* header = llvm::BasicBlock::Create(context, "header", apply);
      auto* body = llvm::BasicBlock::Create(context, "body", apply);
      auto* exit = llvm::BasicBlock::Create(context, "exit", apply);
      builder.SetInsertPoint(entry);
      builder.CreateBr(header);
      builder.SetInsertPoint(header);
      llvm::PHINode* index = builder.CreatePHI(builder.getInt64Ty(), 2);
      index->addIncoming(builder.getInt64(0), entry);
      builder.CreateCondBr(builder.CreateICmpSLT(index, apply->getArg(2)), body, exit);
      builder.SetInsertPoint(body);
      llvm::Value* x =
          builder.CreateLoad(element, builder.CreateGEP(element, apply->getArg(0), index));
      builder.CreateStore(EmitMath(function, builder, x),
                          builder.CreateGEP(element, apply->getArg(1), index));
      index->addIncoming(builder.CreateAdd(index, builder.getInt64(1)), body);
      builder.CreateBr(header);
      builder.SetInsertPoint(exit);
      builder.CreateRetVoid();

      TestJit().Optimize(*built.module);
      bool has_vector_fma = false;
      for (const llvm::BasicBlock& block : *built.module->getFunction("apply")) {
        for (const llvm::Instruction& instruction : block) {
          if (const auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction)) {
            if (intrinsic->getIntrinsicID() == llvm::Intrinsic::fma &&
                intrinsic->getType()->isVectorTy()) {
              has_vector_fma = true;
            }
          } else {
            EXPECT_FALSE(llvm::isa<llvm::CallBase>(&instruction)) << Name(function);
          }
        }
      }
      EXPECT_TRUE(has_vector_fma) << Name(function) << (is_double ? " double" : " float");
    }
  }
}

}  // namespace
}  // namespace relay::kernels::llvm_backend

// Cost of turning a small kernel into host code with LlvmJit: a cold compile
// (verify, O3, code generation, link), a disk-cache hit (read, check, link)
// and a memory-cache hit, plus the cost of creating a JIT.
//
//   ninja -C build llvm_jit_bench && build/bench/llvm_jit_bench
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "kernels/codegen/llvm/llvm_jit.h"

namespace relay::kernels::llvm_backend {
namespace {

// void scale_add(const float* a, const float* b, float* out, int64_t n):
//   out[i] = a[i] * 2 + b[i], the size of a small fused elementwise kernel.
BuiltModule ScaleAddModule() {
  BuiltModule built;
  built.context = std::make_unique<llvm::LLVMContext>();
  built.module = std::make_unique<llvm::Module>("scale_add", *built.context);
  llvm::LLVMContext& context = *built.context;
  llvm::IRBuilder<> builder(context);
  llvm::Type* pointer = builder.getPtrTy();
  llvm::Type* index_type = builder.getInt64Ty();
  llvm::Type* float_type = builder.getFloatTy();
  auto* type =
      llvm::FunctionType::get(builder.getVoidTy(), {pointer, pointer, pointer, index_type}, false);
  auto* function =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, "scale_add", *built.module);
  for (unsigned argument = 0; argument < 3; ++argument) {
    function->addParamAttr(argument, llvm::Attribute::NoAlias);
  }
  auto* entry = llvm::BasicBlock::Create(context, "entry", function);
  auto* header = llvm::BasicBlock::Create(context, "header", function);
  auto* body = llvm::BasicBlock::Create(context, "body", function);
  auto* exit = llvm::BasicBlock::Create(context, "exit", function);
  builder.SetInsertPoint(entry);
  builder.CreateBr(header);
  builder.SetInsertPoint(header);
  llvm::PHINode* index = builder.CreatePHI(index_type, 2);
  index->addIncoming(builder.getInt64(0), entry);
  builder.CreateCondBr(builder.CreateICmpSLT(index, function->getArg(3)), body, exit);
  builder.SetInsertPoint(body);
  llvm::Value* a =
      builder.CreateLoad(float_type, builder.CreateGEP(float_type, function->getArg(0), index));
  llvm::Value* b =
      builder.CreateLoad(float_type, builder.CreateGEP(float_type, function->getArg(1), index));
  llvm::Value* result =
      builder.CreateFAdd(builder.CreateFMul(a, llvm::ConstantFP::get(float_type, 2.0)), b);
  builder.CreateStore(result, builder.CreateGEP(float_type, function->getArg(2), index));
  index->addIncoming(builder.CreateAdd(index, builder.getInt64(1)), body);
  builder.CreateBr(header);
  builder.SetInsertPoint(exit);
  builder.CreateRetVoid();
  return built;
}

class TemporaryCacheDirectory {
 public:
  TemporaryCacheDirectory() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "relay-llvm-jit-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TemporaryCacheDirectory() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void BM_CompileCold(benchmark::State& state) {
  LlvmJit jit("");
  for (auto _ : state) {
    BuiltModule built = ScaleAddModule();
    benchmark::DoNotOptimize(
        jit.Compile(std::move(built.module), std::move(built.context), "scale_add"));
  }
}
BENCHMARK(BM_CompileCold)->Unit(benchmark::kMillisecond);

// What a second process pays for a kernel it finds on disk: a fresh JIT
// (created inside the timed region, compare BM_CreateJit) reading, checking
// and linking the cached object.
void BM_CompileOrReuseDiskHit(benchmark::State& state) {
  TemporaryCacheDirectory cache;
  LlvmJit(cache.path()).CompileOrReuse("scale_add/f32", ScaleAddModule, "scale_add");
  for (auto _ : state) {
    LlvmJit jit(cache.path());
    benchmark::DoNotOptimize(jit.CompileOrReuse(
        "scale_add/f32", []() -> BuiltModule { throw std::logic_error("cache missed"); },
        "scale_add"));
  }
}
BENCHMARK(BM_CompileOrReuseDiskHit)->Unit(benchmark::kMicrosecond);

void BM_CreateJit(benchmark::State& state) {
  for (auto _ : state) {
    LlvmJit jit("");
    benchmark::DoNotOptimize(&jit);
  }
}
BENCHMARK(BM_CreateJit)->Unit(benchmark::kMicrosecond);

void BM_CompileOrReuseMemoryHit(benchmark::State& state) {
  LlvmJit jit("");
  jit.CompileOrReuse("scale_add/f32", ScaleAddModule, "scale_add");
  for (auto _ : state) {
    benchmark::DoNotOptimize(jit.CompileOrReuse("scale_add/f32", ScaleAddModule, "scale_add"));
  }
}
BENCHMARK(BM_CompileOrReuseMemoryHit);

}  // namespace
}  // namespace relay::kernels::llvm_backend

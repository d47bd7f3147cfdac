#include "kernels/codegen/llvm/llvm_jit.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>
#include <llvm/TargetParser/Host.h>

#include "relay/error.h"

extern char** environ;

namespace relay::kernels::llvm_backend {
namespace {

namespace fs = std::filesystem;

using AddFunction = void (*)(const float*, const float*, float*, int64_t);

// ---- modules built with IRBuilder --------------------------------------------

BuiltModule NewModule(const std::string& name) {
  BuiltModule built;
  built.context = std::make_unique<llvm::LLVMContext>();
  built.module = std::make_unique<llvm::Module>(name, *built.context);
  return built;
}

// void NAME(const float* a, const float* b, float* out, int64_t n):
//   out[i] = a[i] + b[i] for i in [0, n)
void AddVectorAddFunction(llvm::Module& module, const std::string& name) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::Type* pointer = builder.getPtrTy();
  llvm::Type* index_type = builder.getInt64Ty();
  auto* type =
      llvm::FunctionType::get(builder.getVoidTy(), {pointer, pointer, pointer, index_type}, false);
  auto* function = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  for (unsigned argument = 0; argument < 3; ++argument) {
    function->addParamAttr(argument, llvm::Attribute::NoAlias);
  }
  llvm::Argument* a = function->getArg(0);
  llvm::Argument* b = function->getArg(1);
  llvm::Argument* out = function->getArg(2);
  llvm::Argument* count = function->getArg(3);

  auto* entry = llvm::BasicBlock::Create(context, "entry", function);
  auto* header = llvm::BasicBlock::Create(context, "header", function);
  auto* body = llvm::BasicBlock::Create(context, "body", function);
  auto* exit = llvm::BasicBlock::Create(context, "exit", function);

  builder.SetInsertPoint(entry);
  builder.CreateBr(header);

  builder.SetInsertPoint(header);
  llvm::PHINode* index = builder.CreatePHI(index_type, 2, "index");
  index->addIncoming(builder.getInt64(0), entry);
  builder.CreateCondBr(builder.CreateICmpSLT(index, count), body, exit);

  builder.SetInsertPoint(body);
  llvm::Type* float_type = builder.getFloatTy();
  llvm::Value* left = builder.CreateLoad(float_type, builder.CreateGEP(float_type, a, index));
  llvm::Value* right = builder.CreateLoad(float_type, builder.CreateGEP(float_type, b, index));
  builder.CreateStore(builder.CreateFAdd(left, right), builder.CreateGEP(float_type, out, index));
  llvm::Value* next = builder.CreateAdd(index, builder.getInt64(1));
  index->addIncoming(next, body);
  builder.CreateBr(header);

  builder.SetInsertPoint(exit);
  builder.CreateRetVoid();
}

BuiltModule VectorAddModule() {
  BuiltModule built = NewModule("vector_add");
  AddVectorAddFunction(*built.module, "add");
  return built;
}

// float NAME(float x) { return CALLEE(x); } with CALLEE declared external.
BuiltModule UnaryCallModule(const std::string& name, const std::string& callee_name) {
  BuiltModule built = NewModule(name);
  llvm::IRBuilder<> builder(*built.context);
  auto* type = llvm::FunctionType::get(builder.getFloatTy(), {builder.getFloatTy()}, false);
  llvm::FunctionCallee callee = built.module->getOrInsertFunction(callee_name, type);
  auto* function =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, *built.module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(*built.context, "entry", function));
  builder.CreateRet(builder.CreateCall(callee, {function->getArg(0)}));
  return built;
}

// int64_t NAME(int64_t x) { return CALLEE(x) + 1; }
BuiltModule HostCallModule(const std::string& name, const std::string& callee_name) {
  BuiltModule built = NewModule(name);
  llvm::IRBuilder<> builder(*built.context);
  auto* type = llvm::FunctionType::get(builder.getInt64Ty(), {builder.getInt64Ty()}, false);
  llvm::FunctionCallee callee = built.module->getOrInsertFunction(callee_name, type);
  auto* function =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, *built.module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(*built.context, "entry", function));
  llvm::Value* result = builder.CreateCall(callee, {function->getArg(0)});
  builder.CreateRet(builder.CreateAdd(result, builder.getInt64(1)));
  return built;
}

// ---- helpers ----------------------------------------------------------------

void* CompileBuilt(LlvmJit& jit, BuiltModule built, const std::string& entry) {
  return jit.Compile(std::move(built.module), std::move(built.context), entry);
}

// Runs `add` on inputs whose sums are exact in float and checks each element
// against the sum computed here.
void ExpectAddsVectors(void* address, int64_t count) {
  ASSERT_NE(address, nullptr);
  std::vector<float> a(count), b(count), out(count, -1.0f);
  for (int64_t index = 0; index < count; ++index) {
    a[index] = static_cast<float>(index) * 0.5f;
    b[index] = 1000.0f - static_cast<float>(3 * index);
  }
  reinterpret_cast<AddFunction>(address)(a.data(), b.data(), out.data(), count);
  for (int64_t index = 0; index < count; ++index) {
    ASSERT_EQ(out[index], static_cast<float>(index) * 0.5f + (1000.0f - 3.0f * index))
        << "element " << index;
  }
}

class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (fs::temp_directory_path() / "relay-llvm-jit-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code error;
    fs::remove_all(path_, error);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<fs::path> CacheFiles(const std::string& directory) {
  std::vector<fs::path> files;
  if (!fs::exists(directory)) return files;
  for (const auto& entry : fs::directory_iterator(directory)) files.push_back(entry.path());
  return files;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Sets an environment variable for one scope and restores it afterwards.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_value_ = old;
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnvironment() {
    if (old_value_) {
      ::setenv(name_, old_value_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_value_;
};

// ---- compiling and calling ---------------------------------------------------

TEST(LlvmJit, CompiledVectorAddMatchesScalarSums) {
  LlvmJit jit("");
  void* address = CompileBuilt(jit, VectorAddModule(), "add");
  // Lengths around the vector width exercise the vector body and the
  // scalar remainder loop.
  for (int64_t count : {0, 1, 7, 8, 15, 16, 17, 33, 1000}) ExpectAddsVectors(address, count);
  EXPECT_EQ(jit.statistics().compiles, 1u);
}

TEST(LlvmJit, CallsToExpfResolveInTheProcess) {
  LlvmJit jit("");
  auto function = reinterpret_cast<float (*)(float)>(
      CompileBuilt(jit, UnaryCallModule("apply_exp", "expf"), "apply_exp"));
  for (float x : {-3.0f, -0.5f, 0.0f, 1.0f, 2.5f}) {
    EXPECT_NEAR(function(x), std::exp(static_cast<double>(x)), 1e-6 * std::exp(std::abs(x)))
        << "x = " << x;
  }
}

std::atomic<int> host_callback_calls{0};

int64_t HostCallback(int64_t value) {
  ++host_callback_calls;
  return value * 3;
}

TEST(LlvmJit, RegisteredHostSymbolIsCalled) {
  LlvmJit jit("");
  jit.DefineSymbol("relay_test_host_callback", reinterpret_cast<void*>(&HostCallback));
  // Binding the same address again is allowed.
  jit.DefineSymbol("relay_test_host_callback", reinterpret_cast<void*>(&HostCallback));
  auto function = reinterpret_cast<int64_t (*)(int64_t)>(
      CompileBuilt(jit, HostCallModule("call_host", "relay_test_host_callback"), "call_host"));
  host_callback_calls = 0;
  EXPECT_EQ(function(14), 43);
  EXPECT_EQ(function(-2), -5);
  EXPECT_EQ(host_callback_calls.load(), 2);
}

TEST(LlvmJit, RebindingAHostSymbolIsAUsageError) {
  LlvmJit jit("");
  int first = 0;
  int second = 0;
  jit.DefineSymbol("relay_test_data", &first);
  try {
    jit.DefineSymbol("relay_test_data", &second);
    FAIL() << "expected a usage error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_NE(error.message().find("relay_test_data"), std::string::npos) << error.message();
  }
}

TEST(LlvmJit, UnresolvedSymbolIsAnInternalErrorNamingIt) {
  LlvmJit jit("");
  try {
    CompileBuilt(jit, HostCallModule("call_missing", "relay_test_missing_symbol"), "call_missing");
    FAIL() << "expected an internal error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInternal);
    EXPECT_NE(error.message().find("relay_test_missing_symbol"), std::string::npos)
        << error.message();
  }
  // The failed kernel does not affect later ones.
  ExpectAddsVectors(CompileBuilt(jit, VectorAddModule(), "add"), 20);
}

TEST(LlvmJit, MissingEntrySymbolIsAnInternalError) {
  LlvmJit jit("");
  try {
    CompileBuilt(jit, VectorAddModule(), "no_such_function");
    FAIL() << "expected an internal error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInternal);
    EXPECT_NE(error.message().find("no_such_function"), std::string::npos) << error.message();
  }
}

TEST(LlvmJit, InvalidIrIsAnInternalErrorWithTheVerifierReport) {
  LlvmJit jit("");
  BuiltModule built = NewModule("broken");
  llvm::IRBuilder<> builder(*built.context);
  auto* type = llvm::FunctionType::get(builder.getVoidTy(), {}, false);
  auto* function =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, "broken", *built.module);
  // A block without a terminator.
  builder.SetInsertPoint(llvm::BasicBlock::Create(*built.context, "entry", function));
  builder.CreateAlloca(builder.getInt32Ty());
  try {
    CompileBuilt(jit, std::move(built), "broken");
    FAIL() << "expected an internal error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInternal);
    EXPECT_NE(error.message().find("not valid LLVM IR"), std::string::npos) << error.message();
    EXPECT_NE(error.message().find("does not have terminator"), std::string::npos)
        << error.message();
  }
  EXPECT_EQ(jit.statistics().compiles, 0u);
}

TEST(LlvmJit, SameNamesInSeparateKernelsDoNotClash) {
  LlvmJit jit("");
  void* first = CompileBuilt(jit, VectorAddModule(), "add");
  void* second = CompileBuilt(jit, VectorAddModule(), "add");
  EXPECT_NE(first, second);
  ExpectAddsVectors(first, 10);
  ExpectAddsVectors(second, 10);
}

// ---- the target ----------------------------------------------------------------

std::string CpuFlagsFromProcCpuinfo() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) return line + " ";
  }
  return "";
}

TEST(LlvmJit, TargetDescriptionNamesTheHostCpuAndItsVectorFeatures) {
  LlvmJit jit("");
  const std::string& description = jit.TargetDescription();
  EXPECT_NE(description.find("cpu=" + llvm::sys::getHostCPUName().str() + " "), std::string::npos)
      << description;
  EXPECT_EQ(description.rfind(llvm::sys::getProcessTriple(), 0), 0u) << description;
  // The kernel's own view of the CPU is the independent oracle for features.
  std::string flags = CpuFlagsFromProcCpuinfo();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags line";
  for (const char* feature : {"avx2", "avx512f", "fma"}) {
    bool host_has_it = flags.find(std::string(" ") + feature + " ") != std::string::npos;
    bool described = description.find(std::string("+") + feature + ",") != std::string::npos ||
                     description.ends_with(std::string("+") + feature);
    EXPECT_EQ(described, host_has_it) << feature << " in " << description;
  }
}

TEST(LlvmJit, OptimizeVectorisesWithTheHostVectorWidth) {
  LlvmJit jit("");
  BuiltModule built = VectorAddModule();
  jit.Optimize(*built.module);
  std::string text;
  llvm::raw_string_ostream stream(text);
  built.module->print(stream, nullptr);
  stream.flush();
  EXPECT_NE(text.find("x float>"), std::string::npos) << "loop not vectorised:\n" << text;
  if (jit.TargetDescription().find("+avx2") != std::string::npos) {
    // 256-bit registers hold 8 floats; AVX-512 hosts may use 16.
    EXPECT_TRUE(text.find("<8 x float>") != std::string::npos ||
                text.find("<16 x float>") != std::string::npos)
        << text;
  }
}

TEST(LlvmJit, HostJitIsOneSharedInstance) {
  LlvmJit& jit = HostJit();
  EXPECT_EQ(&jit, &HostJit());
  ExpectAddsVectors(CompileBuilt(jit, VectorAddModule(), "add"), 40);
}

TEST(LlvmJit, DefaultCacheDirectoryFollowsTheEnvironment) {
  {
    ScopedEnvironment relay("RELAY_CACHE_DIR", "off");
    EXPECT_EQ(DefaultKernelCacheDirectory(), "");
  }
  {
    ScopedEnvironment relay("RELAY_CACHE_DIR", "");
    EXPECT_EQ(DefaultKernelCacheDirectory(), "");
  }
  {
    ScopedEnvironment relay("RELAY_CACHE_DIR", "/some/where");
    EXPECT_EQ(DefaultKernelCacheDirectory(), "/some/where");
  }
  ScopedEnvironment relay("RELAY_CACHE_DIR", nullptr);
  {
    ScopedEnvironment xdg("XDG_CACHE_HOME", "/xdg/cache");
    EXPECT_EQ(DefaultKernelCacheDirectory(), "/xdg/cache/relay-vm/kernels");
  }
  ScopedEnvironment xdg("XDG_CACHE_HOME", "relative/ignored");
  {
    ScopedEnvironment home("HOME", "/home/someone");
    EXPECT_EQ(DefaultKernelCacheDirectory(), "/home/someone/.cache/relay-vm/kernels");
  }
  ScopedEnvironment home("HOME", nullptr);
  EXPECT_EQ(DefaultKernelCacheDirectory(), "");
}

// ---- the caches ------------------------------------------------------------------

// A build callback that counts its calls.
struct CountingBuild {
  std::atomic<int> calls{0};
  BuildModuleFn Function() {
    return [this] {
      ++calls;
      return VectorAddModule();
    };
  }
};

BuildModuleFn MustNotBuild() {
  return []() -> BuiltModule {
    ADD_FAILURE() << "build called although the kernel was cached";
    return VectorAddModule();
  };
}

TEST(LlvmJitCache, SecondRequestIsAMemoryHit) {
  TemporaryDirectory cache;
  LlvmJit jit(cache.path());
  CountingBuild build;
  void* first = jit.CompileOrReuse("vector_add/f32", build.Function(), "add");
  void* second = jit.CompileOrReuse("vector_add/f32", build.Function(), "add");
  EXPECT_EQ(first, second);
  EXPECT_EQ(build.calls.load(), 1);
  LlvmJitStatistics statistics = jit.statistics();
  EXPECT_EQ(statistics.compiles, 1u);
  EXPECT_EQ(statistics.memory_hits, 1u);
  EXPECT_EQ(statistics.disk_hits, 0u);
  EXPECT_EQ(statistics.disk_writes, 1u);
  EXPECT_EQ(CacheFiles(cache.path()).size(), 1u);
  ExpectAddsVectors(first, 100);
}

TEST(LlvmJitCache, AnotherEntryOfACachedModuleIsFoundWithoutRebuilding) {
  TemporaryDirectory cache;
  LlvmJit jit(cache.path());
  std::atomic<int> calls{0};
  BuildModuleFn build = [&calls] {
    ++calls;
    BuiltModule built = NewModule("two_entries");
    AddVectorAddFunction(*built.module, "add_first");
    AddVectorAddFunction(*built.module, "add_second");
    return built;
  };
  void* first = jit.CompileOrReuse("two_entries", build, "add_first");
  void* second = jit.CompileOrReuse("two_entries", build, "add_second");
  EXPECT_EQ(calls.load(), 1);
  EXPECT_NE(first, second);
  ExpectAddsVectors(first, 30);
  ExpectAddsVectors(second, 30);
}

TEST(LlvmJitCache, FreshJitReusesTheDiskObjectWithoutBuilding) {
  TemporaryDirectory cache;
  {
    LlvmJit writer(cache.path());
    CountingBuild build;
    ExpectAddsVectors(writer.CompileOrReuse("vector_add/f32", build.Function(), "add"), 50);
    EXPECT_EQ(writer.statistics().disk_writes, 1u);
  }
  LlvmJit reader(cache.path());
  void* address = reader.CompileOrReuse("vector_add/f32", MustNotBuild(), "add");
  ExpectAddsVectors(address, 50);
  LlvmJitStatistics statistics = reader.statistics();
  EXPECT_EQ(statistics.disk_hits, 1u);
  EXPECT_EQ(statistics.compiles, 0u);
  EXPECT_EQ(statistics.disk_writes, 0u);
  EXPECT_EQ(statistics.disk_rejects, 0u);
  // After the disk hit the key is in memory.
  EXPECT_EQ(reader.CompileOrReuse("vector_add/f32", MustNotBuild(), "add"), address);
  EXPECT_EQ(reader.statistics().memory_hits, 1u);
}

TEST(LlvmJitCache, DistinctKeysAreDistinctEntries) {
  TemporaryDirectory cache;
  LlvmJit jit(cache.path());
  CountingBuild build;
  jit.CompileOrReuse("key-one", build.Function(), "add");
  jit.CompileOrReuse("key-two", build.Function(), "add");
  EXPECT_EQ(build.calls.load(), 2);
  EXPECT_EQ(CacheFiles(cache.path()).size(), 2u);
}

TEST(LlvmJitCache, CompileWithoutAKeyWritesNothing) {
  TemporaryDirectory cache;
  LlvmJit jit(cache.path());
  CompileBuilt(jit, VectorAddModule(), "add");
  EXPECT_TRUE(CacheFiles(cache.path()).empty());
  EXPECT_EQ(jit.statistics().disk_writes, 0u);
}

TEST(LlvmJitCache, DisabledCacheOnlyUsesMemory) {
  LlvmJit jit("");
  CountingBuild build;
  jit.CompileOrReuse("vector_add/f32", build.Function(), "add");
  jit.CompileOrReuse("vector_add/f32", build.Function(), "add");
  LlvmJitStatistics statistics = jit.statistics();
  EXPECT_EQ(build.calls.load(), 1);
  EXPECT_EQ(statistics.disk_writes, 0u);
  EXPECT_EQ(statistics.disk_write_failures, 0u);
  EXPECT_EQ(statistics.memory_hits, 1u);
}

TEST(LlvmJitCache, UnwritableDirectoryIsCountedNotFatal) {
  TemporaryDirectory cache;
  // A regular file where the cache directory should be.
  std::string blocked = cache.path() + "/not-a-directory";
  WriteFile(blocked, "x");
  LlvmJit jit(blocked + "/kernels");
  CountingBuild build;
  ExpectAddsVectors(jit.CompileOrReuse("vector_add/f32", build.Function(), "add"), 25);
  EXPECT_EQ(jit.statistics().disk_write_failures, 1u);
  EXPECT_EQ(jit.statistics().disk_writes, 0u);
}

TEST(LlvmJitCache, BuildErrorsReachTheCallerAndAreNotCached) {
  LlvmJit jit("");
  BuildModuleFn failing = []() -> BuiltModule {
    throw Error(ErrorKind::kCompile, "cannot lower this kernel");
  };
  EXPECT_THROW(jit.CompileOrReuse("flaky", failing, "add"), Error);
  CountingBuild build;
  ExpectAddsVectors(jit.CompileOrReuse("flaky", build.Function(), "add"), 12);
  EXPECT_EQ(build.calls.load(), 1);
}

// Writes one entry with a fresh JIT, damages the file with `damage`, and
// checks that another fresh JIT rejects it, rebuilds and rewrites it, and that
// a third reuses the rewritten entry.
void ExpectDamagedEntryIsRebuilt(void (*damage)(std::string& bytes)) {
  TemporaryDirectory cache;
  {
    LlvmJit writer(cache.path());
    CountingBuild build;
    writer.CompileOrReuse("vector_add/f32", build.Function(), "add");
  }
  std::vector<fs::path> files = CacheFiles(cache.path());
  ASSERT_EQ(files.size(), 1u);
  std::string bytes = ReadFile(files[0]);
  damage(bytes);
  WriteFile(files[0], bytes);
  {
    LlvmJit rebuilder(cache.path());
    CountingBuild build;
    ExpectAddsVectors(rebuilder.CompileOrReuse("vector_add/f32", build.Function(), "add"), 64);
    EXPECT_EQ(build.calls.load(), 1);
    LlvmJitStatistics statistics = rebuilder.statistics();
    EXPECT_EQ(statistics.disk_rejects, 1u);
    EXPECT_EQ(statistics.disk_hits, 0u);
    EXPECT_EQ(statistics.compiles, 1u);
    EXPECT_EQ(statistics.disk_writes, 1u);
  }
  LlvmJit reader(cache.path());
  ExpectAddsVectors(reader.CompileOrReuse("vector_add/f32", MustNotBuild(), "add"), 64);
  EXPECT_EQ(reader.statistics().disk_hits, 1u);
}

// Offset of the object file in a cache entry: the 32-byte header (whose
// key-size field is at byte 12) and the key precede it.
size_t PayloadOffset(const std::string& bytes) {
  uint32_t key_size = 0;
  std::memcpy(&key_size, bytes.data() + 12, sizeof(key_size));
  return 32 + key_size;
}

TEST(LlvmJitCache, FlippedPayloadByteIsRejectedAndRebuilt) {
  // A byte of the ELF identification padding, which linkers ignore: only the
  // checksum can notice it.
  ExpectDamagedEntryIsRebuilt([](std::string& bytes) { bytes[PayloadOffset(bytes) + 10] ^= 0x5a; });
}

TEST(LlvmJitCache, DamagedObjectThatFailsToLinkIsRejectedAndRebuilt) {
  // Damage that the linker notices (the ELF class byte), checked only by
  // the link since the checksum is rewritten to match.
  ExpectDamagedEntryIsRebuilt([](std::string& bytes) {
    size_t payload = PayloadOffset(bytes);
    bytes[payload + 4] = 0x7f;
    uint64_t checksum = llvm::xxh3_64bits(llvm::StringRef(bytes).substr(payload));
    std::memcpy(bytes.data() + 24, &checksum, sizeof(checksum));
  });
}

TEST(LlvmJitCache, TruncatedEntryIsRejectedAndRebuilt) {
  ExpectDamagedEntryIsRebuilt([](std::string& bytes) { bytes.resize(bytes.size() / 2); });
}

TEST(LlvmJitCache, EntryCutInsideTheHeaderIsRejectedAndRebuilt) {
  ExpectDamagedEntryIsRebuilt([](std::string& bytes) { bytes.resize(10); });
}

TEST(LlvmJitCache, DamagedMagicIsRejectedAndRebuilt) {
  ExpectDamagedEntryIsRebuilt([](std::string& bytes) { bytes[0] = 'X'; });
}

TEST(LlvmJitCache, HugeSizeFieldsAreRejectedAndRebuilt) {
  // Key size and payload size fields (bytes 12..23) set to all ones.
  ExpectDamagedEntryIsRebuilt([](std::string& bytes) {
    for (size_t index = 12; index < 24; ++index) bytes[index] = '\xff';
  });
}

TEST(LlvmJitCache, ConcurrentRequestsBuildEachKeyOnce) {
  TemporaryDirectory cache;
  LlvmJit jit(cache.path());
  constexpr int kThreads = 4;
  CountingBuild shared_build;
  std::vector<CountingBuild> distinct_builds(kThreads);
  std::vector<void*> shared_addresses(kThreads);
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([&, thread] {
      // Half the threads ask for their own key first, so shared and distinct
      // builds overlap.
      void* distinct = nullptr;
      if (thread % 2 == 0) {
        distinct = jit.CompileOrReuse("distinct/" + std::to_string(thread),
                                      distinct_builds[thread].Function(), "add");
      }
      shared_addresses[thread] = jit.CompileOrReuse("shared", shared_build.Function(), "add");
      if (thread % 2 == 1) {
        distinct = jit.CompileOrReuse("distinct/" + std::to_string(thread),
                                      distinct_builds[thread].Function(), "add");
      }
      ExpectAddsVectors(distinct, 77);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(shared_build.calls.load(), 1);
  for (int thread = 0; thread < kThreads; ++thread) {
    EXPECT_EQ(distinct_builds[thread].calls.load(), 1) << "thread " << thread;
    EXPECT_EQ(shared_addresses[thread], shared_addresses[0]);
  }
  ExpectAddsVectors(shared_addresses[0], 77);
  LlvmJitStatistics statistics = jit.statistics();
  EXPECT_EQ(statistics.compiles, kThreads + 1u);
  EXPECT_EQ(statistics.memory_hits, kThreads - 1u);
  EXPECT_EQ(statistics.disk_writes, kThreads + 1u);
  EXPECT_EQ(CacheFiles(cache.path()).size(), kThreads + 1u);
}

// ---- a second process --------------------------------------------------------------

constexpr char kChildCacheVariable[] = "RELAY_LLVM_JIT_TEST_CHILD_CACHE";
constexpr char kChildKey[] = "vector_add/f32/second-process";

// Runs only inside the child that SecondProcessReusesTheDiskCache starts.
TEST(LlvmJitChildProcess, ReusesTheDiskCache) {
  const char* directory = std::getenv(kChildCacheVariable);
  if (directory == nullptr) GTEST_SKIP() << "run by LlvmJitCache.SecondProcessReusesTheDiskCache";
  LlvmJit jit(directory);
  ExpectAddsVectors(jit.CompileOrReuse(kChildKey, MustNotBuild(), "add"), 90);
  LlvmJitStatistics statistics = jit.statistics();
  ASSERT_EQ(statistics.disk_hits, 1u);
  ASSERT_EQ(statistics.compiles, 0u);
  if (!::testing::Test::HasFailure()) WriteFile(fs::path(directory) / "child-passed", "yes");
}

TEST(LlvmJitCache, SecondProcessReusesTheDiskCache) {
  TemporaryDirectory cache;
  {
    LlvmJit writer(cache.path());
    CountingBuild build;
    writer.CompileOrReuse(kChildKey, build.Function(), "add");
    ASSERT_EQ(writer.statistics().disk_writes, 1u);
  }
  std::string executable = fs::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=LlvmJitChildProcess.ReusesTheDiskCache";
  std::vector<char*> arguments = {executable.data(), filter.data(), nullptr};
  std::string child_variable = std::string(kChildCacheVariable) + "=" + cache.path();
  std::vector<char*> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    environment.push_back(*variable);
  }
  environment.push_back(child_variable.data());
  environment.push_back(nullptr);
  pid_t child = 0;
  ASSERT_EQ(::posix_spawn(&child, executable.c_str(), nullptr, nullptr, arguments.data(),
                          environment.data()),
            0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child ended abnormally, status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(fs::exists(fs::path(cache.path()) / "child-passed"));
}

}  // namespace
}  // namespace relay::kernels::llvm_backend

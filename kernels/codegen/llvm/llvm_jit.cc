#include "kernels/codegen/llvm/llvm_jit.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "kernels/codegen/llvm/perf_map.h"
#include "relay/error.h"

namespace relay::kernels::llvm_backend {
namespace {

// ---- converting LLVM's errors --------------------------------------------

// LLVM is built without exceptions, so nothing may be thrown through its
// frames; errors are taken out of llvm::Error values here, at each call site.
[[noreturn]] void ThrowLlvmFailure(ErrorKind kind, std::string_view operation, llvm::Error error,
                                   const std::string& detail = {}) {
  std::string message = "LLVM JIT: " + std::string(operation) + " failed: ";
  message += llvm::toString(std::move(error));
  if (!detail.empty()) message += "\n" + detail;
  throw Error(kind, std::move(message));
}

void CheckLlvm(llvm::Error error, ErrorKind kind, std::string_view operation) {
  if (error) ThrowLlvmFailure(kind, operation, std::move(error));
}

template <typename T>
T UnwrapLlvm(llvm::Expected<T> value, ErrorKind kind, std::string_view operation) {
  if (!value) ThrowLlvmFailure(kind, operation, value.takeError());
  if constexpr (std::is_reference_v<T>) {
    return *value;
  } else {
    return std::move(*value);
  }
}

// ORC reports failures of materialisation (for instance an unresolved
// external symbol) to the session's error reporter, while the lookup that
// triggered it only says that the symbol could not be materialised. The
// reporter keeps the detailed text for the failing thread: with no compile
// threads, ORC links on the thread that asked for the symbol.
thread_local std::string session_errors;

void RecordSessionError(llvm::Error error) {
  if (!session_errors.empty()) session_errors += "\n";
  session_errors += llvm::toString(std::move(error));
}

// ---- process-wide LLVM set-up ----------------------------------------------

void InitializeLlvmOnce() {
  static const bool initialized = [] {
    // Each returns true on failure.
    return !llvm::InitializeNativeTarget() && !llvm::InitializeNativeTargetAsmPrinter() &&
           !llvm::InitializeNativeTargetAsmParser();
  }();
  if (!initialized) {
    throw Error(ErrorKind::kDevice,
                "LLVM JIT: this build of LLVM cannot generate code for the host CPU (" +
                    llvm::sys::getProcessTriple() + ")");
  }
}

struct HostTarget {
  llvm::orc::JITTargetMachineBuilder builder;
  std::string description;
};

HostTarget DetectHostTarget() {
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string cpu = llvm::sys::getHostCPUName().str();
  llvm::orc::JITTargetMachineBuilder builder(triple);
  builder.setCPU(cpu);
  std::vector<std::string> enabled_features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    // Disabled features are passed on too: a CPU name implies features that
    // a virtual machine may have switched off.
    builder.getFeatures().AddFeature(feature.first(), feature.second);
    if (feature.second) enabled_features.push_back("+" + feature.first().str());
  }
  // Position-independent code with the small code model: calls to libm and
  // to host symbols go through GOT/PLT stubs that the linker builds, so the
  // JIT's memory may lie anywhere relative to the process's libraries, and
  // the code keeps the short RIP-relative forms of the small model.
  builder.setRelocationModel(llvm::Reloc::PIC_);
  builder.setCodeModel(llvm::CodeModel::Small);
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);

  std::sort(enabled_features.begin(), enabled_features.end());
  std::string description = triple.str() + " cpu=" + cpu + " features=";
  for (size_t index = 0; index < enabled_features.size(); ++index) {
    if (index > 0) description += ",";
    description += enabled_features[index];
  }
  return {std::move(builder), std::move(description)};
}

// One CompileOrReuse key. `mutex` is held while the key is being built, so
// concurrent callers of the same key wait for one build.
struct CacheSlot {
  std::mutex mutex;
  llvm::orc::JITDylib* dylib = nullptr;  // set once the object is linked
  std::unordered_map<std::string, void*> entries;
};

}  // namespace

// ---- the JIT -----------------------------------------------------------------

class LlvmJit::Impl {
 public:
  explicit Impl(std::string cache_directory)
      : disk_(std::move(cache_directory), kKernelCacheFormatVersion, ".relay-object") {
    InitializeLlvmOnce();
    HostTarget host = DetectHostTarget();
    target_builder_ = std::move(host.builder);
    target_description_ = std::move(host.description);

    // No platform: kernels have no static initialisers, thread-locals or
    // exception tables to register. Process symbols are reached only through
    // the host dylib below, which is explicit about what kernels may call.
    jit_ = UnwrapLlvm(llvm::orc::LLJITBuilder()
                          .setJITTargetMachineBuilder(target_builder_)
                          .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
                          .setLinkProcessSymbolsByDefault(false)
                          .create(),
                      ErrorKind::kDevice, "creating the host JIT");
    jit_->getExecutionSession().setErrorReporter(RecordSessionError);
    if (PerfMapRequested()) {
      if (auto* layer = llvm::dyn_cast<llvm::orc::ObjectLinkingLayer>(&jit_->getObjLinkingLayer()))
        AddPerfMapPlugin(*layer);
    }

    host_dylib_ = &UnwrapLlvm<llvm::orc::JITDylib&>(jit_->createJITDylib("relay.host"),
                                                    ErrorKind::kDevice, "creating the host dylib");
    auto process_symbols =
        UnwrapLlvm(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                       jit_->getDataLayout().getGlobalPrefix()),
                   ErrorKind::kDevice, "opening the process's symbol table");
    host_dylib_->addGenerator(std::move(process_symbols));
  }

  const std::string& target_description() const { return target_description_; }
  const std::string& cache_directory() const { return disk_.directory(); }

  void DefineSymbol(const std::string& name, void* address) {
    std::lock_guard lock(mutex_);
    auto existing = defined_symbols_.find(name);
    if (existing != defined_symbols_.end()) {
      if (existing->second == address) return;
      throw Error(ErrorKind::kUsage,
                  "LLVM JIT: host symbol '" + name + "' is already bound to another address");
    }
    llvm::orc::SymbolMap symbols;
    symbols[jit_->mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported);
    CheckLlvm(host_dylib_->define(llvm::orc::absoluteSymbols(std::move(symbols))),
              ErrorKind::kUsage, "binding host symbol '" + name + "'");
    defined_symbols_.emplace(name, address);
  }

  std::unique_ptr<llvm::TargetMachine> CreateTargetMachine() const {
    // A TargetMachine is not safe to share between threads that generate
    // code, so each compile gets its own; the builder is copied so that
    // concurrent compiles only read the shared one.
    llvm::orc::JITTargetMachineBuilder builder = target_builder_;
    return UnwrapLlvm(builder.createTargetMachine(), ErrorKind::kDevice,
                      "creating a target machine for the host");
  }

  void OptimizeWith(llvm::TargetMachine& target_machine, llvm::Module& module) const {
    std::string report;
    llvm::raw_string_ostream report_stream(report);
    if (llvm::verifyModule(module, &report_stream)) {
      report_stream.flush();
      throw Error(ErrorKind::kInternal, "LLVM JIT: module '" + module.getModuleIdentifier() +
                                            "' is not valid LLVM IR:\n" + report);
    }
    module.setTargetTriple(target_machine.getTargetTriple().str());
    module.setDataLayout(target_machine.createDataLayout());
    // The vectoriser asks the target about each function; without these
    // attributes it would still see the TargetMachine's CPU, but inlining
    // between functions with different attributes is refused, so all get
    // the same ones unless the caller chose otherwise.
    for (llvm::Function& function : module) {
      if (function.isDeclaration()) continue;
      if (!function.hasFnAttribute("target-cpu")) {
        function.addFnAttr("target-cpu", target_machine.getTargetCPU());
      }
      if (!function.hasFnAttribute("target-features")) {
        function.addFnAttr("target-features", target_machine.getTargetFeatureString());
      }
      // LLVM's AVX-512 targets prefer 256-bit vectors in loops it vectorises
      // itself, to spare clock speed; the contraction tiles use 512-bit ones
      // anyway, so elementwise loops may too (GELU of 256x1024: 102 -> 81 us).
      if (HostVectorBytes() >= 64 && !function.hasFnAttribute("prefer-vector-width")) {
        function.addFnAttr("prefer-vector-width", "512");
      }
    }

    llvm::PipelineTuningOptions tuning;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    tuning.LoopUnrolling = true;
    // Declared in this order so that each manager outlives those that hold
    // proxies to it.
    llvm::LoopAnalysisManager loop_analyses;
    llvm::FunctionAnalysisManager function_analyses;
    llvm::CGSCCAnalysisManager call_graph_analyses;
    llvm::ModuleAnalysisManager module_analyses;
    llvm::PassBuilder pass_builder(&target_machine, tuning);
    pass_builder.registerModuleAnalyses(module_analyses);
    pass_builder.registerCGSCCAnalyses(call_graph_analyses);
    pass_builder.registerFunctionAnalyses(function_analyses);
    pass_builder.registerLoopAnalyses(loop_analyses);
    pass_builder.crossRegisterProxies(loop_analyses, function_analyses, call_graph_analyses,
                                      module_analyses);
    llvm::ModulePassManager passes =
        pass_builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    passes.run(module, module_analyses);
  }

  void Optimize(llvm::Module& module) const {
    std::unique_ptr<llvm::TargetMachine> target_machine = CreateTargetMachine();
    OptimizeWith(*target_machine, module);
  }

  // Clang's -fsanitize=function (part of -fsanitize=undefined) makes every
  // indirect call read the 8 bytes before the callee, where clang-built
  // functions keep a type signature. A JIT function at the start of its
  // code segment has no mapped memory there, so a sanitised caller would
  // fault. 16 bytes of zeros before each definition keep that read in
  // mapped memory (zeros are not the signature, so the check is skipped)
  // and keep entry points 16-byte aligned.
  static void AddCallerSafePrefixes(llvm::Module& module) {
    llvm::Type* prefix_type = llvm::ArrayType::get(llvm::Type::getInt32Ty(module.getContext()), 4);
    llvm::Constant* zeros = llvm::ConstantAggregateZero::get(prefix_type);
    for (llvm::Function& function : module) {
      if (!function.isDeclaration() && !function.hasPrefixData()) function.setPrefixData(zeros);
    }
  }

  // Optimises and compiles to a relocatable object; frees the module. With
  // a key and $RELAY_DUMP_KERNELS set, also writes what it compiled there.
  std::unique_ptr<llvm::MemoryBuffer> CompileToObject(BuiltModule built,
                                                      const std::string* key = nullptr) {
    RELAY_CHECK(built.module != nullptr && built.context != nullptr,
                "a module to compile and its context");
    RELAY_CHECK(&built.module->getContext() == built.context.get(),
                "the module belongs to the context handed over with it");
    std::unique_ptr<llvm::TargetMachine> target_machine = CreateTargetMachine();
    OptimizeWith(*target_machine, *built.module);
    AddCallerSafePrefixes(*built.module);
    if (key != nullptr) DumpKernel(*key, *target_machine, *built.module);
    llvm::orc::SimpleCompiler compiler(*target_machine);
    std::unique_ptr<llvm::MemoryBuffer> object =
        UnwrapLlvm(compiler(*built.module), ErrorKind::kInternal,
                   "compiling module '" + built.module->getModuleIdentifier() + "'");
    {
      std::lock_guard lock(mutex_);
      ++statistics_.compiles;
    }
    return object;
  }

  // Links `object` into a dylib of its own and returns that dylib with the
  // address of `entry_symbol`. On failure the dylib is removed again.
  std::pair<llvm::orc::JITDylib*, void*> Link(std::unique_ptr<llvm::MemoryBuffer> object,
                                              const std::string& entry_symbol) {
    // A dylib per object keeps kernels' symbol names independent of one
    // another (two kernels may both define "kernel"), makes a cached object
    // loadable without renaming, and lets a failed link be thrown away
    // without poisoning other kernels.
    std::string dylib_name;
    {
      std::lock_guard lock(mutex_);
      dylib_name = "relay.kernel." + std::to_string(next_dylib_number_++);
    }
    llvm::orc::JITDylib& dylib = UnwrapLlvm<llvm::orc::JITDylib&>(
        jit_->createJITDylib(dylib_name), ErrorKind::kInternal, "creating a kernel dylib");
    dylib.addToLinkOrder(*host_dylib_);
    session_errors.clear();
    auto remove_and_throw = [&](std::string_view operation, llvm::Error error) {
      std::string detail = std::move(session_errors);
      session_errors.clear();
      llvm::consumeError(jit_->getExecutionSession().removeJITDylib(dylib));
      ThrowLlvmFailure(ErrorKind::kInternal, operation, std::move(error), detail);
    };
    if (llvm::Error error = jit_->addObjectFile(dylib, std::move(object))) {
      remove_and_throw("adding the object of " + dylib_name, std::move(error));
    }
    llvm::Expected<llvm::orc::ExecutorAddr> address = jit_->lookup(dylib, entry_symbol);
    if (!address) {
      remove_and_throw("linking " + dylib_name + " and finding '" + entry_symbol + "'",
                       address.takeError());
    }
    return {&dylib, address->toPtr<void*>()};
  }

  void* LookupIn(llvm::orc::JITDylib& dylib, const std::string& entry_symbol) {
    session_errors.clear();
    llvm::Expected<llvm::orc::ExecutorAddr> address = jit_->lookup(dylib, entry_symbol);
    if (!address) {
      std::string detail = std::move(session_errors);
      session_errors.clear();
      ThrowLlvmFailure(ErrorKind::kInternal, "finding '" + entry_symbol + "'", address.takeError(),
                       detail);
    }
    return address->toPtr<void*>();
  }

  void* Compile(BuiltModule built, const std::string& entry_symbol) {
    return Link(CompileToObject(std::move(built)), entry_symbol).second;
  }

  void* CompileOrReuse(const std::string& key, const BuildModuleFn& build,
                       const std::string& entry_symbol) {
    std::shared_ptr<CacheSlot> slot;
    {
      std::lock_guard lock(mutex_);
      std::shared_ptr<CacheSlot>& entry = slots_[key];
      if (!entry) entry = std::make_shared<CacheSlot>();
      slot = entry;
    }
    std::lock_guard slot_lock(slot->mutex);
    if (slot->dylib != nullptr) {
      CountStatistic(&LlvmJitStatistics::memory_hits);
      auto known = slot->entries.find(entry_symbol);
      if (known != slot->entries.end()) return known->second;
      void* address = LookupIn(*slot->dylib, entry_symbol);
      slot->entries.emplace(entry_symbol, address);
      return address;
    }

    std::string full_key = DiskKey(key);
    if (disk_.enabled()) {
      std::string payload;
      devices::KernelDiskCache::LoadOutcome outcome = disk_.Load(full_key, payload);
      if (outcome == devices::KernelDiskCache::LoadOutcome::kFound) {
        try {
          auto [dylib, address] = Link(
              llvm::MemoryBuffer::getMemBufferCopy(payload, "cached:" + disk_.PathFor(full_key)),
              entry_symbol);
          CountStatistic(&LlvmJitStatistics::disk_hits);
          return Remember(*slot, dylib, entry_symbol, address);
        } catch (const Error&) {
          // An entry that passed its checksum but does not link (for example
          // one whose references the process cannot satisfy) is rebuilt; if
          // the rebuilt object fails the same way, that error is reported.
          outcome = devices::KernelDiskCache::LoadOutcome::kRejected;
        }
      }
      if (outcome == devices::KernelDiskCache::LoadOutcome::kRejected) {
        CountStatistic(&LlvmJitStatistics::disk_rejects);
      }
    }

    std::unique_ptr<llvm::MemoryBuffer> object = CompileToObject(build(), &key);
    if (disk_.enabled()) {
      bool written = disk_.Store(full_key, object->getBuffer());
      CountStatistic(written ? &LlvmJitStatistics::disk_writes
                             : &LlvmJitStatistics::disk_write_failures);
    }
    auto [dylib, address] = Link(std::move(object), entry_symbol);
    return Remember(*slot, dylib, entry_symbol, address);
  }

  LlvmJitStatistics statistics() const {
    std::lock_guard lock(mutex_);
    return statistics_;
  }

 private:
  // For whoever tunes schedules: with $RELAY_DUMP_KERNELS naming a
  // directory, each compiled kernel leaves there its key (the kernel IR's
  // text), its optimised LLVM IR and its assembly, as kernel-<hash>.{txt,ll,s}.
  // Best effort: a directory that cannot be written is ignored.
  static void DumpKernel(const std::string& key, llvm::TargetMachine& target_machine,
                         llvm::Module& module) {
    const char* directory = std::getenv("RELAY_DUMP_KERNELS");
    if (directory == nullptr || *directory == '\0') return;
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(llvm::xxh3_64bits(key)));
    std::string stem = std::string(directory) + "/kernel-" + hash;
    std::error_code error;
    {
      llvm::raw_fd_ostream text(stem + ".txt", error);
      if (error) return;
      text << key;
    }
    {
      llvm::raw_fd_ostream ir(stem + ".ll", error);
      if (!error) module.print(ir, nullptr);
    }
    llvm::raw_fd_ostream assembly(stem + ".s", error);
    if (error) return;
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
    llvm::legacy::PassManager passes;
    if (!target_machine.addPassesToEmitFile(passes, assembly, nullptr,
                                            llvm::CodeGenFileType::AssemblyFile)) {
      passes.run(*copy);
    }
  }

  std::string DiskKey(const std::string& key) const {
    return "relay-vm kernel cache v" + std::to_string(kKernelCacheFormatVersion) + "\nllvm " +
           LLVM_VERSION_STRING + "\n" + target_description_ + "\n" + key;
  }

  static void* Remember(CacheSlot& slot, llvm::orc::JITDylib* dylib,
                        const std::string& entry_symbol, void* address) {
    slot.dylib = dylib;
    slot.entries.emplace(entry_symbol, address);
    return address;
  }

  void CountStatistic(uint64_t LlvmJitStatistics::*counter) {
    std::lock_guard lock(mutex_);
    ++(statistics_.*counter);
  }

  devices::KernelDiskCache disk_;
  llvm::orc::JITTargetMachineBuilder target_builder_{llvm::Triple()};
  std::string target_description_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  llvm::orc::JITDylib* host_dylib_ = nullptr;

  mutable std::mutex mutex_;  // guards the members below
  std::unordered_map<std::string, void*> defined_symbols_;
  std::unordered_map<std::string, std::shared_ptr<CacheSlot>> slots_;
  LlvmJitStatistics statistics_;
  uint64_t next_dylib_number_ = 0;
};

// ---- public interface ----------------------------------------------------------

LlvmJit::LlvmJit(std::string cache_directory)
    : impl_(std::make_unique<Impl>(std::move(cache_directory))) {}

LlvmJit::~LlvmJit() = default;

const std::string& LlvmJit::TargetDescription() const {
  return impl_->target_description();
}

const std::string& LlvmJit::cache_directory() const {
  return impl_->cache_directory();
}

void LlvmJit::DefineSymbol(const std::string& name, void* address) {
  impl_->DefineSymbol(name, address);
}

void LlvmJit::Optimize(llvm::Module& module) const {
  impl_->Optimize(module);
}

void* LlvmJit::Compile(std::unique_ptr<llvm::Module> module,
                       std::unique_ptr<llvm::LLVMContext> context,
                       const std::string& entry_symbol) {
  BuiltModule built;
  built.context = std::move(context);
  built.module = std::move(module);
  return impl_->Compile(std::move(built), entry_symbol);
}

void* LlvmJit::CompileOrReuse(const std::string& key, const BuildModuleFn& build,
                              const std::string& entry_symbol) {
  return impl_->CompileOrReuse(key, build, entry_symbol);
}

LlvmJitStatistics LlvmJit::statistics() const {
  return impl_->statistics();
}

int64_t HostVectorBytes() {
  static const int64_t bytes = [] {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    auto has = [&](const char* name) {
      auto found = features.find(name);
      return found != features.end() && found->second;
    };
    return has("avx512f") ? 64 : has("avx") ? 32 : 16;
  }();
  return bytes;
}

std::string FormatStatistics(const LlvmJitStatistics& statistics) {
  return "relay-vm: kernels: " + std::to_string(statistics.compiles) + " compiled, " +
         std::to_string(statistics.disk_hits) + " from the disk cache, " +
         std::to_string(statistics.memory_hits) + " from memory, " +
         std::to_string(statistics.disk_writes) + " written to the disk cache, " +
         std::to_string(statistics.disk_rejects) + " cache entries rejected";
}

namespace {

void PrintHostJitStatistics() {
  std::string line = FormatStatistics(HostJit().statistics()) + "\n";
  std::fputs(line.c_str(), stderr);
}

}  // namespace

LlvmJit& HostJit() {
  static LlvmJit* const host_jit = [] {
    auto* jit = new LlvmJit(DefaultKernelCacheDirectory());
    const char* wanted = std::getenv("RELAY_KERNEL_STATS");
    if (wanted != nullptr && *wanted != '\0' && std::string_view(wanted) != "0") {
      std::atexit(PrintHostJitStatistics);
    }
    return jit;
  }();
  return *host_jit;
}

}  // namespace relay::kernels::llvm_backend

#include "kernels/codegen/llvm/perf_map.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>

namespace relay::kernels::llvm_backend {

namespace {

// The process's map file, opened on first use; writes are serialised
// because kernels of distinct keys link on several threads.
class PerfMapFile {
 public:
  void Write(uint64_t address, uint64_t size, llvm::StringRef name) {
    std::lock_guard lock(mutex_);
    if (file_ == nullptr && !failed_) {
      const std::string path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
      file_ = std::fopen(path.c_str(), "a");
      if (file_ == nullptr) {
        // Profiling aid only: say so once, never fail a kernel for it.
        std::fprintf(stderr, "relay-vm: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
        failed_ = true;
      }
    }
    if (file_ == nullptr) return;
    std::fprintf(file_, "%" PRIx64 " %" PRIx64 " %.*s\n", address, size,
                 static_cast<int>(name.size()), name.data());
    std::fflush(file_);  // perf reads it after we exit, maybe abruptly
  }

 private:
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
  bool failed_ = false;
};

PerfMapFile& TheMapFile() {
  static PerfMapFile* file = new PerfMapFile();  // lives until exit: kernels may link late
  return *file;
}

llvm::Error RecordFunctions(llvm::jitlink::LinkGraph& graph) {
  for (llvm::jitlink::Symbol* symbol : graph.defined_symbols()) {
    if (!symbol->isCallable() || !symbol->hasName() || symbol->getSize() == 0) continue;
    TheMapFile().Write(symbol->getAddress().getValue(), symbol->getSize(), symbol->getName());
  }
  return llvm::Error::success();
}

class PerfMapPlugin : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  void modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph&,
                        llvm::jitlink::PassConfiguration& config) override {
    // After fix-up every symbol has its final address. (GCC 12 warns,
    // wrongly, that moving a captureless lambda into LLVM's unique_function
    // reads uninitialised storage.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    config.PostFixupPasses.emplace_back(&RecordFunctions);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility&) override {
    return llvm::Error::success();
  }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey,
                                   llvm::orc::ResourceKey) override {}
};

}  // namespace

bool PerfMapRequested() {
  const char* value = std::getenv("RELAY_PERF_MAP");
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

void AddPerfMapPlugin(llvm::orc::ObjectLinkingLayer& layer) {
  layer.addPlugin(std::make_unique<PerfMapPlugin>());
}

}  // namespace relay::kernels::llvm_backend

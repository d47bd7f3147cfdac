// Names for JIT-compiled kernels in `perf report`.
//
// Linux perf attributes samples in anonymous executable memory to symbols
// listed in /tmp/perf-PID.map ("START SIZE NAME" per line, hexadecimal),
// the convention JITs such as V8 and the JVM use. With $RELAY_PERF_MAP set
// (and not "0"), the host JIT appends every function it links there (a
// kernel is named after its operators, its outlined parallel loops after it
// with ".parallel.N"), whether compiled now or loaded from the disk cache.
// The file is this process's: it is never truncated while the process runs
// and is left for perf to read after the process exits.
//
// Only llvm_jit.cc uses this (it installs the plugin).
#pragma once

#include <memory>

namespace llvm::orc {
class ObjectLinkingLayer;
}  // namespace llvm::orc

namespace relay::kernels::llvm_backend {

// Whether the environment asks for a perf map ($RELAY_PERF_MAP).
bool PerfMapRequested();

// Makes `layer` report every function it links to /tmp/perf-PID.map.
void AddPerfMapPlugin(llvm::orc::ObjectLinkingLayer& layer);

}  // namespace relay::kernels::llvm_backend

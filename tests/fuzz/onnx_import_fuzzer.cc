// libFuzzer target over the ONNX importer (compiler/frontends/onnx).
//
// Any bytes may be rejected, but only with a kLoad error (not a valid model)
// or a kCompile one (a node that does not convert): a crash, a hang, a
// sanitizer report or any other kind of error is a bug. A model that imports
// must give Relay text that parses; it may fail type inference, with type
// errors only (ONNX's checker and shape inference pass models whose declared
// shapes contradict each other, such as a Concat of mismatched inputs, and
// `run` reports those as the imported program's type errors). External data
// is read from a folder that does not exist, so no input reaches files.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "compiler/frontend.h"
#include "compiler/frontends/onnx/onnx_import.h"
#include "relay/error.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "onnx_import_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  relay::onnx_import::ImportedModel model;
  try {
    model = relay::onnx_import::ImportOnnxBytes(bytes, "fuzz.onnx", "/nonexistent-onnx-folder");
  } catch (const relay::Error& error) {
    if (error.kind() != relay::ErrorKind::kLoad && error.kind() != relay::ErrorKind::kCompile)
      Fail("an error of another kind", error.what());
    return 0;
  }
  relay::Diagnostics diagnostics("imported.relay",
                                 std::make_shared<const std::string>(model.relay_text));
  relay::compiler::ParseAndCheck(diagnostics);
  for (const relay::Error& error : diagnostics.errors()) {
    if (error.kind() != relay::ErrorKind::kType)
      Fail("the imported program does not parse",
           model.relay_text + "\n" + diagnostics.FormatAll());
  }
  return 0;
}

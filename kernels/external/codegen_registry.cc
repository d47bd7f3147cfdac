// Which external codegens this build has, and `--byoc`'s list of them.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/external/cblas/cblas_codegen.h"
#include "kernels/external/dnnl/dnnl_codegen.h"
#include "kernels/external/external_codegen.h"
#include "kernels/external/xrt/xrt_codegen.h"
#include "relay/error.h"

namespace relay::kernels::external {
namespace {

// The codegens that need no argument, by name.
const std::vector<const ExternalCodegen*>& BuiltInCodegens() {
  static const std::vector<const ExternalCodegen*> codegens = {&DnnlCodegen(), &CblasCodegen(),
                                                               &XrtCodegen()};
  return codegens;
}

}  // namespace

const ExternalCodegen* FindCodegen(std::string_view name) {
  for (const ExternalCodegen* codegen : BuiltInCodegens()) {
    if (codegen->name() == name) return codegen;
  }
  return nullptr;
}

std::vector<std::string> CodegenNames() {
  std::vector<std::string> names;
  for (const ExternalCodegen* codegen : BuiltInCodegens()) names.emplace_back(codegen->name());
  return names;
}

std::vector<std::shared_ptr<const ExternalCodegen>> ParseCodegenList(std::string_view list) {
  std::vector<std::shared_ptr<const ExternalCodegen>> codegens;
  if (list.empty()) return codegens;
  auto usage = [](const std::string& problem) {
    return Error(ErrorKind::kUsage,
                 "--byoc takes a comma-separated list of dnnl, cblas and xrt:MANIFEST: " + problem);
  };
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(',', begin), list.size());
    const std::string item(list.substr(begin, end - begin));
    begin = end + 1;
    if (item.empty()) throw usage("an empty name in '" + std::string(list) + "'");
    std::shared_ptr<const ExternalCodegen> codegen;
    if (item.rfind("xrt:", 0) == 0) {
      codegen = XrtCodegenFromManifest(item.substr(4));
    } else if (item == "xrt") {
      throw usage("xrt needs its kernels' manifest: xrt:MANIFEST");
    } else if (const ExternalCodegen* built_in = FindCodegen(item)) {
      // Built-in codegens live for the whole process: no ownership.
      codegen = std::shared_ptr<const ExternalCodegen>(built_in, [](const ExternalCodegen*) {});
    } else {
      throw usage("unknown codegen '" + item + "'");
    }
    for (const auto& earlier : codegens) {
      if (earlier->name() == codegen->name()) throw usage(item + " is named twice");
    }
    codegens.push_back(std::move(codegen));
    if (end == list.size()) break;
  }
  return codegens;
}

}  // namespace relay::kernels::external

// librelay_vm's one source of its own: the shared library's contents are
// relay_api and what it links (api/CMakeLists.txt); this names the build.
#include "relay/relay_vm.h"
#include "relay/version.h"

extern "C" const char* relay_vm_library_build(void) {
  return "relay-vm " RELAY_VERSION_STRING;
}

// relay-vm devices: the devices each backend finds (memory, compute units,
// how kernels are compiled for them) and why a backend has none.
#include <ostream>

#include "relay/devices.h"
#include "tools/command_line.h"
#include "tools/subcommands.h"

namespace relay::tools {

int RunDevicesCommand(std::span<const std::string_view> arguments, std::ostream& out,
                      std::ostream& err) {
  if (!arguments.empty()) {
    err << "relay-vm devices: takes no arguments\n";
    return kExitUsage;
  }
  for (const BackendSurvey& survey : SurveyDevices()) {
    const std::string_view kind = DeviceKindName(survey.kind);
    if (survey.devices.empty()) {
      out << kind << ": unavailable: " << survey.unavailable << "\n";
    }
    for (const std::string& device : survey.devices) out << device << "\n";
    if (!survey.compiler.empty()) out << "  " << kind << " kernels: " << survey.compiler << "\n";
  }
  return kExitSuccess;
}

}  // namespace relay::tools

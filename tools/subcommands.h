// The subcommands of relay-vm, one file each.
#pragma once

#include <iosfwd>
#include <span>
#include <string_view>

namespace relay::tools {

// Each takes the arguments after its name and returns the exit code.
int RunCompileCommand(std::span<const std::string_view> arguments, std::ostream& out,
                      std::ostream& err);
int RunCheckCommand(std::span<const std::string_view> arguments, std::ostream& out,
                    std::ostream& err);
int RunFmtCommand(std::span<const std::string_view> arguments, std::ostream& out,
                  std::ostream& err);
int RunRunCommand(std::span<const std::string_view> arguments, std::ostream& out,
                  std::ostream& err);
int RunImportCommand(std::span<const std::string_view> arguments, std::ostream& out,
                     std::ostream& err);
int RunReplCommand(std::span<const std::string_view> arguments, std::ostream& out,
                   std::ostream& err);
int RunDebugCommand(std::span<const std::string_view> arguments, std::ostream& out,
                    std::ostream& err);
int RunServeCommand(std::span<const std::string_view> arguments, std::ostream& out,
                    std::ostream& err);
int RunDevicesCommand(std::span<const std::string_view> arguments, std::ostream& out,
                      std::ostream& err);
int RunGradCommand(std::span<const std::string_view> arguments, std::ostream& out,
                   std::ostream& err);
int RunDisasmCommand(std::span<const std::string_view> arguments, std::ostream& out,
                     std::ostream& err);

}  // namespace relay::tools

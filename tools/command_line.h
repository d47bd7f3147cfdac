// The relay-vm command: subcommand table and dispatch.
#pragma once

#include <iosfwd>
#include <span>
#include <string_view>

namespace relay::tools {

// Exit codes shared by every subcommand.
inline constexpr int kExitSuccess = 0;
inline constexpr int kExitFailure = 1;  // the input was rejected or the program failed
inline constexpr int kExitUsage = 2;  // the command line was wrong, or the subcommand is not built

// Runs the command line `arguments` (without the program name), writing
// results to `out` and diagnostics to `err`. Returns the exit code; throws
// relay::Error for failures that main() reports.
int RunCommandLine(std::span<const std::string_view> arguments, std::ostream& out,
                   std::ostream& err);

}  // namespace relay::tools

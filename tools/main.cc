// Entry point of the relay-vm command: the only place that decides to exit.
#include <exception>
#include <iostream>
#include <string_view>
#include <vector>

#include "relay/error.h"
#include "tools/command_line.h"

int main(int argc, char** argv) {
  std::vector<std::string_view> arguments(argv + 1, argv + argc);
  try {
    return relay::tools::RunCommandLine(arguments, std::cout, std::cerr);
  } catch (const relay::Error& error) {
    std::cerr << "relay-vm: " << error.Format() << "\n";
    return error.kind() == relay::ErrorKind::kUsage ? relay::tools::kExitUsage
                                                    : relay::tools::kExitFailure;
  } catch (const std::bad_alloc&) {
    std::cerr << "relay-vm: error: out of host memory\n";
    return relay::tools::kExitFailure;
  } catch (const std::exception& exception) {
    std::cerr << "relay-vm: internal error: " << exception.what()
              << " (this is a bug in relay-vm)\n";
    return relay::tools::kExitFailure;
  }
}

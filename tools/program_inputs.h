// The inputs of a run from the command line: --entry, --input NAME=FILE.npy
// or NAME=SCALAR, --params P.npz and --random-inputs, shared by the
// subcommands that run a program (run, debug).
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "relay/value.h"
#include "vm/bytecode/bytecode.h"

namespace relay::tools {

struct InputOptions {
  std::string entry = "main";                 // without '@'
  std::map<std::string, std::string> inputs;  // name -> .npy file or scalar text
  std::string params;                         // .npz whose arrays fill missing inputs
  bool random_inputs = false;
};

// When arguments[index] is one of the options above, takes it (and its
// value, advancing `index`) into `options` and returns true. Usage errors
// name `command` ("run").
bool TakeInputOption(std::span<const std::string_view> arguments, size_t& index,
                     InputOptions& options, std::string_view command);

// The arguments of function `entry`, in its parameters' order: each from
// --input, else from --params, else random with --random-inputs; checked
// against the parameter's type (kUsage errors naming the input). An
// imported model's inputs may be named as the model names them (`aliases`:
// model name -> parameter).
std::vector<Value> BindInputs(InputOptions options, const vm::Function& entry,
                              const std::map<std::string, std::string>& aliases);

}  // namespace relay::tools

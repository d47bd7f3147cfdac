#include "tools/command_line.h"

#include <ostream>
#include <string>

#include "relay/version.h"
#include "tools/subcommands.h"

namespace relay::tools {

namespace {

using Handler = int (*)(std::span<const std::string_view> arguments, std::ostream& out,
                        std::ostream& err);

struct Subcommand {
  std::string_view name;
  std::string_view usage;
  std::string_view summary;
  Handler handler;                // null while the subcommand is not built yet
  std::string_view arrives_with;  // for an unbuilt subcommand: what will build it
};

constexpr Subcommand kSubcommands[] = {
    {"compile",
     "compile IN.relay|IN.onnx -o OUT.rbc [--params P.npz] [--strip-debug]\n"
     "               [--device cpu|opencl[:N]|cuda[:N]] [--byoc dnnl,cblas,xrt:MANIFEST]\n\n"
     "--device records the device 'relay-vm run OUT.rbc' puts the tensor work on\n"
     "unless given another; it need not be present when compiling. --byoc partitions\n"
     "the program for external codegens, as 'run --byoc' does; the executable keeps\n"
     "the partitioned functions' graphs and the codegens' state (docs/byoc.md).",
     "compile Relay source (or an ONNX model) to a verified bytecode executable", RunCompileCommand,
     ""},
    {"import",
     "import MODEL.onnx -o OUT.relay [--params-out OUT.npz]\n\n"
     "Writes the model as a Relay program, and its weights (initializers and constant\n"
     "tensors) as an .npz for 'run OUT.relay --params OUT.npz'; scalar constants are\n"
     "written into the program. Without --params-out, weights of up to 4096 elements\n"
     "are written into the program too (as constant expressions), and a model with\n"
     "larger ones is refused. Inputs keep their ONNX names where those are Relay\n"
     "identifiers ([A-Za-z_][A-Za-z0-9_]*); in any other, each character outside\n"
     "[A-Za-z0-9_] becomes '_', and '_' goes in front of a leading digit ('input.1'\n"
     "-> 'input_1', 'onnx::Conv_12' -> 'onnx__Conv_12'); a name that then collides\n"
     "with an earlier one gets '_2', '_3', ... 'run', 'compile', 'check', 'fmt' and\n"
     "'disasm' take a .onnx model too, and 'run' its inputs by their ONNX names.",
     "import an ONNX model as a Relay program and its weights", RunImportCommand, ""},
    {"run",
     "run IN.relay|IN.onnx|IN.rbc [--entry NAME] [--input NAME=FILE.npy | NAME=SCALAR]...\n"
     "           [--params P.npz] [--output OUT.npy|OUT.npz] [--repeat N [--warmup SECONDS]]\n"
     "           [--random-inputs] [--profile] [--trace FILE.json]\n"
     "           [--device cpu|opencl[:N]|cuda[:N]] [--xclbin FILE.xclbin]\n"
     "           [--byoc dnnl,cblas,xrt:MANIFEST] [--memory-budget SIZE] [--stats]\n\n"
     "--output writes a tensor result to a .npy file, a tuple of tensors to a .npz file\n"
     "(out0, out1, ...; nested tuples depth-first: (r, (a, b)) gives out0 to out2).\n"
     "--device runs the program's tensor work on that device (see 'relay-vm devices'):\n"
     "kernels are compiled for it and queued there, while shapes, scalars and control\n"
     "flow stay on the host, as in TVM's VM; the result is copied back to the host.\n"
     "--xclbin loads an FPGA's kernels onto xrt:0; a function marked Compiler=\"xrt\",\n"
     "global_symbol=\"NAME\" then runs kernel NAME there (its buffer arguments: the\n"
     "function's tensors, then its result; its integer arguments: the result's\n"
     "dimensions), and its body is what the reference evaluator runs.\n"
     "--byoc (Bring Your Own Codegen) hands the operators that external codegens run\n"
     "to them, the first named first: dnnl (oneDNN: convolutions with their bias,\n"
     "activation and residual add, dense, matmul, batch_matmul, pooling, softmax,\n"
     "layer_norm), cblas (OpenBLAS: dense, matmul, batch_matmul) and xrt:MANIFEST (an\n"
     "FPGA's kernels that the JSON manifest describes; load them with --xclbin).\n"
     "Anything they do not run stays on relay-vm's own kernels. 'fmt --optimized\n"
     "--byoc' shows the partition; 'compile --byoc' keeps it. See docs/byoc.md.\n"
     "--memory-budget (bytes, or 64K, 64M, 2G) keeps the bytes of the tensors the run\n"
     "holds at once under SIZE by evicting operator results and recomputing them when\n"
     "they are used again (Dynamic Tensor Rematerialization; CPU runs; docs/dtr.md);\n"
     "a budget too small to run fails naming the bytes needed. --stats prints the\n"
     "run's peak memory, evictions and recomputations to standard error.",
     "run a program on NumPy inputs and print or save its result", RunRunCommand, ""},
    {"repl",
     "repl [FILE.relay] [--params P.npz]\n\n"
     "An interactive Relay session: definitions (def @f, type T) added to the\n"
     "session's module, 'let %x = EXPR' session variables, and expressions\n"
     "type-checked, compiled, run and printed; :type, :load, :reload, :list,\n"
     ":disasm @f, :optimized @f, :grad @f, :time, :debug EXPR, :help, :quit. On a terminal:\n"
     "line editing, history (~/.relay_vm_history), tab completion, multi-line\n"
     "input while brackets are open, Ctrl-C interrupting an evaluation. Without a\n"
     "terminal, no prompts: each input's output, errors on stderr, exit 0 at the\n"
     "end of the input. --params binds each array of P.npz as a session variable\n"
     "of its name. See docs/repl.md.",
     "an interactive Relay session", RunReplCommand, ""},
    {"debug",
     "debug PROGRAM.relay|PROGRAM.onnx|PROGRAM.rbc [--entry NAME]\n"
     "             [--input NAME=FILE.npy | NAME=SCALAR]... [--params P.npz] [--random-inputs]\n\n"
     "Steps through one call of the program, reading commands from standard input\n"
     "(gdb's names): break @name|LINE|FILE:LINE, delete [N], info breakpoints, run,\n"
     "continue (c), step (s), next (n), stepi (si), finish, backtrace (bt),\n"
     "frame (f) N, up, down, print (p) %var, info locals, list (l) [LINE],\n"
     "watch %ref, help, quit (q). See docs/repl.md.\n"
     "A kernel call is one step. Without a terminal, no prompt is shown and each\n"
     "command's output only is printed, so sessions can be scripted.",
     "step through a program in Relay's terms (functions, lines, variables)", RunDebugCommand, ""},
    {"serve",
     "serve MODEL.relay|MODEL.onnx|MODEL.rbc [--params P.npz] [--byoc LIST] [--name NAME]\n"
     "             [--host 127.0.0.1] [--port 8000] [--workers N]\n"
     "             [--max-batch ROWS [--batch-timeout-us 500]] [--max-body-bytes 67108864]\n"
     "             [--max-connections 1024] [--max-inflight-bytes 4*max-body-bytes]\n"
     "             [--header-timeout 10] [--body-timeout 30] [--idle-timeout 5]\n"
     "             [--write-timeout 30] [--shutdown-timeout 5] [--http-threads N]\n\n"
     "Serves @main over the Open Inference Protocol (KServe v2) REST API, as Triton\n"
     "and KServe speak it: GET /v2/health/live, /v2/health/ready, /v2/models/NAME,\n"
     "/v2/models/NAME/ready; POST /v2/models/NAME/infer with JSON tensors (or\n"
     "Triton's binary tensor data); GET /metrics in Prometheus's format. NAME is\n"
     "--name, else the file's name without its extension. Outputs are named out0,\n"
     "out1, ... in @main's tuple order (an ONNX model's by its output names).\n"
     "--workers VMs run requests (default 1).\n"
     "--max-batch concatenates concurrent requests along the leading ? dimension\n"
     "that every input and output must have, up to ROWS rows, waiting at most\n"
     "--batch-timeout-us microseconds for a batch to fill; off by default. Bad\n"
     "requests get a 4xx answer and a runtime error in the model a 500, each with\n"
     "a JSON body {\"error\": \"...\"}. Connections are cut when a request's headers\n"
     "or body, or the next request on a kept-alive connection, or the reading of an\n"
     "answer take longer than the timeouts (seconds); past --max-connections a new\n"
     "connection closes the oldest one that has sent no complete request, or is\n"
     "refused (503); bodies past --max-inflight-bytes in all are refused (503).\n"
     "SIGTERM or SIGINT stops accepting, cuts connections without a complete request,\n"
     "answers the requests received within --shutdown-timeout and exits 0 (1 if runs\n"
     "were still going then). --byoc hands what external codegens run to them, as\n"
     "'run --byoc' does. See docs/serving.md.",
     "serve a model over HTTP (KServe v2 / Triton inference protocol)", RunServeCommand, ""},
    {"check", "check FILE.relay|FILE.onnx",
     "type-check a Relay program and print each global's type", RunCheckCommand, ""},
    {"fmt", "fmt [--optimized [--byoc LIST]] FILE.relay|FILE.onnx",
     "print a Relay program in canonical text form (--optimized: after the IR passes)",
     RunFmtCommand, ""},
    {"grad",
     "grad IN.relay [--entry NAME] [-o OUT.relay]\n\n"
     "Writes the program with @NAME_grad added (NAME is main unless --entry says):\n"
     "reverse-mode automatic differentiation of @NAME. @NAME_grad takes @NAME's\n"
     "parameters and returns (result, (d_p1, ..., d_pK)): @NAME's result, then the\n"
     "gradient of the sum of all its elements with respect to each parameter that is\n"
     "a floating-point tensor, in parameter order. Integer and bool tensors, tuples\n"
     "and ADT values get no slot: they are skipped, not given zeros. The result must\n"
     "be a tensor or a tuple of tensors (each element is seeded with 1). A plain\n"
     "dataflow @NAME gets a dataflow gradient; with if, match, closures, references\n"
     "or calls of globals, the globals it reaches get @G_reverse versions. Without\n"
     "-o the program goes to standard output. See docs/autodiff.md.",
     "add the reverse-mode gradient of a function to a program", RunGradCommand, ""},
    {"disasm", "disasm IN.relay|IN.onnx|IN.rbc", "print the bytecode of each function",
     RunDisasmCommand, ""},
    {"devices",
     "devices\n\n"
     "Lists the devices each backend finds (cpu:0, opencl:N, cuda:N, xrt:N) with\n"
     "their memory and compute units, says how each backend compiles kernels, and\n"
     "why a backend has no device (no driver, no platform, not built).",
     "list the devices found, their memory and compute units", RunDevicesCommand, ""},
};

void PrintHelp(std::ostream& out) {
  out << "relay-vm " RELAY_VERSION_STRING
         ": compiler and virtual machine for the Relay IR\n\n"
         "usage: relay-vm <command> [arguments]\n"
         "       relay-vm --help | --version\n\n"
         "commands:\n";
  for (const Subcommand& subcommand : kSubcommands) {
    std::string name(subcommand.name);
    name.resize(10, ' ');
    out << "  " << name << subcommand.summary << "\n";
  }
  out << "\nRun 'relay-vm <command> --help' for a command's arguments.\n";
}

const Subcommand* FindSubcommand(std::string_view name) {
  for (const Subcommand& subcommand : kSubcommands) {
    if (subcommand.name == name) return &subcommand;
  }
  return nullptr;
}

}  // namespace

int RunCommandLine(std::span<const std::string_view> arguments, std::ostream& out,
                   std::ostream& err) {
  if (arguments.empty()) {
    PrintHelp(err);
    return kExitUsage;
  }
  std::string_view first = arguments.front();
  if (first == "--help" || first == "-h" || first == "help") {
    PrintHelp(out);
    return kExitSuccess;
  }
  if (first == "--version") {
    out << "relay-vm " RELAY_VERSION_STRING "\n";
    return kExitSuccess;
  }
  const Subcommand* subcommand = FindSubcommand(first);
  if (subcommand == nullptr) {
    err << "relay-vm: error: unknown command '" << first
        << "'; run 'relay-vm --help' for the list of commands\n";
    return kExitUsage;
  }
  std::span<const std::string_view> rest = arguments.subspan(1);
  if (!rest.empty() && (rest.front() == "--help" || rest.front() == "-h")) {
    out << "usage: relay-vm " << subcommand->usage << "\n\n" << subcommand->summary << "\n";
    if (subcommand->handler == nullptr) {
      out << "(not built yet: arrives with " << subcommand->arrives_with << ")\n";
    }
    return kExitSuccess;
  }
  if (subcommand->handler == nullptr) {
    err << "relay-vm " << subcommand->name << ": not built yet: arrives with "
        << subcommand->arrives_with << "\n";
    return kExitUsage;
  }
  return subcommand->handler(rest, out, err);
}

}  // namespace relay::tools

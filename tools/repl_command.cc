// relay-vm repl [FILE.relay] [--params P.npz]
//
// --params binds each array of P.npz as a session variable of its name.
// The interactive Relay session (tools/repl_session.h). On a terminal:
// line editing and history (libedit; kept in ~/.relay_vm_history), tab
// completion of globals, constructors, operators, session variables and
// commands, a continuation prompt while brackets are open, and Ctrl-C
// interrupting a running evaluation. Otherwise: no prompts and no editing,
// each input's output on stdout and errors on stderr, exit status 0 at the
// end of the input, so that sessions can be scripted.
#include <editline/readline.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "relay/devices.h"
#include "relay/error.h"
#include "relay/npy.h"
#include "tools/command_line.h"
#include "tools/debugger.h"
#include "tools/repl_session.h"
#include "tools/subcommands.h"

namespace relay::tools {

namespace {

ReplSession* completing_session = nullptr;  // for libedit's C callbacks

// libedit's generator: the completions of `text`, one per call.
char* CompletionGenerator(const char* text, int state) {
  static std::vector<std::string> matches;
  static size_t next = 0;
  if (state == 0) {
    matches.clear();
    next = 0;
    if (completing_session != nullptr) {
      for (std::string& name : completing_session->Completions()) {
        if (name.starts_with(text)) matches.push_back(std::move(name));
      }
    }
  }
  if (next >= matches.size()) return nullptr;
  return strdup(matches[next++].c_str());
}

char** Complete(const char* text, int, int) {
  rl_attempted_completion_over = 1;  // no file names
  return rl_completion_matches(text, CompletionGenerator);
}

// Ctrl-C stops an evaluation, or the program being debugged under :debug.
void OnInterrupt(int) {
  ReplSession::interrupted = true;
  Debugger::interrupted = true;
}

std::string HistoryPath() {
  const char* home = std::getenv("HOME");
  return home != nullptr ? std::string(home) + "/.relay_vm_history" : std::string();
}

}  // namespace

int RunReplCommand(std::span<const std::string_view> arguments, std::ostream& out,
                   std::ostream& err) {
  std::string file;
  std::string params;
  for (size_t index = 0; index < arguments.size(); ++index) {
    std::string_view argument = arguments[index];
    if (argument == "--params") {
      if (index + 1 >= arguments.size())
        throw Error(ErrorKind::kUsage, "relay-vm repl: --params needs a .npz file");
      params = std::string(arguments[++index]);
      continue;
    }
    if (argument.starts_with("-")) {
      throw Error(ErrorKind::kUsage,
                  "relay-vm repl: unknown option '" + std::string(argument) + "'");
    }
    if (!file.empty()) throw Error(ErrorKind::kUsage, "relay-vm repl: expected one file");
    file = std::string(argument);
  }
  const bool terminal = isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0;
  const std::string history = HistoryPath();

  // One line of input: libedit on a terminal, plain reading otherwise.
  auto read_line = [&](const char* prompt) -> std::optional<std::string> {
    if (!terminal) {
      std::string line;
      if (!std::getline(std::cin, line)) return std::nullopt;
      return line;
    }
    char* raw = readline(prompt);
    if (raw == nullptr) return std::nullopt;
    std::string line(raw);
    std::free(raw);
    return line;
  };
  ReplSession session(out, err, read_line);
  if (terminal) {
    completing_session = &session;
    rl_attempted_completion_function = Complete;
    // Words keep their sigils (@f, %x, :type) and dots (nn.dense).
    static char word_breaks[] = " \t\n\"\\'`><=;|&{}()[],";
    rl_basic_word_break_characters = word_breaks;
    rl_completer_word_break_characters = word_breaks;
    rl_completion_append_character = '\0';
    using_history();
    if (!history.empty()) read_history(history.c_str());
    // Ctrl-C stops an evaluation (ReplSession::interrupted); at the prompt
    // it does nothing.
    struct sigaction action {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    out << "relay-vm repl: :help lists the commands, :quit leaves\n";
  }
  // Weights become session variables of their names.
  if (!params.empty()) {
    for (NamedTensor& array : ReadNpz(params, HostDevice()))
      session.AddVariable(array.name, std::move(array.tensor));
  }
  if (!file.empty()) session.Load(file);

  while (true) {
    std::optional<std::string> line = read_line("relay> ");
    if (!line) break;
    std::string input = *line;
    // An open bracket continues the input on the next line.
    while (ReplSession::Unfinished(input)) {
      std::optional<std::string> more = read_line("...... ");
      if (!more) break;
      input += "\n" + *more;
    }
    if (terminal && input.find_first_not_of(" \t\n") != std::string::npos) {
      add_history(input.c_str());
      if (!history.empty()) write_history(history.c_str());
    }
    if (!session.Handle(input)) break;
    out << std::flush;
    err << std::flush;
  }
  if (terminal) out << "\n";
  return kExitSuccess;
}

}  // namespace relay::tools

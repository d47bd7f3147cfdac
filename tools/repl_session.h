// The state and commands of `relay-vm repl` (repl_command.cc reads the
// lines): a module of definitions that grows as they are entered, session
// variables bound by `let`, and expressions type-checked, compiled and run
// on the VM as one more function of that module.
//
//   def @f(...) { ... }, type T = ...   add to the module; a redefinition
//                                        replaces, and the whole module is
//                                        checked again (refused if it breaks)
//   let %x = EXPR                        a session variable for later inputs
//   EXPR                                 evaluated and printed as `run` does
//   :type EXPR  :load FILE  :reload  :list  :disasm @f  :optimized @f  :grad @f
//   :time EXPR  :debug EXPR  :help  :quit
//
// Errors (parse, type, runtime) are printed with their caret; none ends the
// session.
#pragma once

#include <atomic>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/module.h"
#include "relay/tensor.h"
#include "relay/value.h"
#include "vm/bytecode/bytecode.h"

namespace relay::tools {

class ReplSession {
 public:
  // Results go to `out`, errors to `err`. `read_line` gives the debugger
  // of `:debug` its commands (nullopt at the end of the input).
  ReplSession(std::ostream& out, std::ostream& err,
              std::function<std::optional<std::string>(const char* prompt)> read_line);

  // Handles one complete input (several lines for a multi-line one);
  // false after :quit.
  bool Handle(const std::string& input);

  // Whether `text` leaves a bracket open, so the input goes on.
  static bool Unfinished(std::string_view text);

  // Set from a SIGINT handler: the running evaluation stops at its next
  // check (every 10^5 instructions) and is dropped.
  static std::atomic<bool> interrupted;

  // For tab completion: the globals, constructors, types, session
  // variables and commands known now.
  std::vector<std::string> Completions() const;

  // Reads `path` and adds its definitions (as :load).
  void Load(const std::string& path);
  // Binds session variable %name to `tensor` (--params).
  void AddVariable(const std::string& name, Ref<Tensor> tensor);

 private:
  // One top-level definition as entered: its name ("f" for def @f, "T"
  // for type T) and text.
  struct Definition {
    std::string name;
    bool is_type = false;
    std::string text;
  };
  struct Variable {
    std::string name;  // without '%'
    std::string type;  // Relay type text
    Value value;
  };

  void Define(std::vector<Definition> added);
  void Evaluate(std::string_view expression, bool timed);
  void Bind(std::string_view name, std::string_view expression);
  void ShowType(std::string_view expression);
  void List();
  void Disassemble(std::string_view name);
  void ShowOptimized(std::string_view name);
  void ShowGradient(std::string_view name);
  void Debug(std::string_view expression);
  void Help();

  // The module of `definitions` (and, given, the expression as the body of
  // a function taking the session variables), checked; nullopt after
  // printing the errors.
  // Where each definition (and the expression) lies in the module's text,
  // so that errors point into what was typed, not into the module.
  struct Segment {
    int first_line = 0;
    int last_line = 0;
    std::string name;  // "<input>" for what was just entered, else the definition's name
    std::string text;
  };
  struct Checked {
    ir::Module module;
    std::shared_ptr<const std::string> text;
    std::vector<Segment> segments;
  };
  // `fresh` names the definitions just entered.
  std::optional<Checked> Check(const std::vector<Definition>& definitions,
                               std::optional<std::string_view> expression,
                               const std::vector<std::string>& fresh = {}) const;
  // The session's module, checked, when it defines global `name` ("@f");
  // else nullopt after saying why (`command` names the asker).
  std::optional<Checked> ModuleWithGlobal(std::string_view name, std::string_view command) const;
  // `error` with its caret under the segment it lies in.
  static std::string FormatError(const Error& error, const std::vector<Segment>& segments);
  static std::string InSegments(const std::string& text, const std::vector<Segment>& segments);
  // The checked module compiled; the expression's function, if any, is
  // kEvalFunction.
  std::shared_ptr<const vm::Executable> Compile(const Checked& checked) const;
  std::vector<Value> VariableValues() const;
  // Runs the expression's function of `checked` (compiled as `executable`)
  // on the session variables, in slices that Ctrl-C can stop; nullopt after
  // saying why not (a runtime error, or Ctrl-C).
  std::optional<Value> Run(const Checked& checked,
                           const std::shared_ptr<const vm::Executable>& executable) const;

  std::ostream& out_;
  std::ostream& err_;
  std::function<std::optional<std::string>(const char* prompt)> read_line_;
  std::vector<Definition> definitions_;
  std::vector<Variable> variables_;
  std::vector<std::string> loaded_;  // files :reload reads again
};

// The top-level definitions of Relay source `text` ("def @..." and "type
// ..." at depth 0), each with its text; the version header is skipped.
// Throws kParse for text that is neither.
std::vector<std::pair<std::string, std::string>> SplitDefinitions(std::string_view text);

}  // namespace relay::tools

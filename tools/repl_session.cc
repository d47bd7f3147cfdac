#include "tools/repl_session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>

#include "api/source_file.h"
#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "compiler/ir/expr.h"
#include "compiler/ir/type.h"
#include "compiler/parser/printer.h"
#include "compiler/passes/gradient.h"
#include "compiler/passes/pipeline.h"
#include "kernels/operator.h"
#include "relay/error.h"
#include "tools/debugger.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay::tools {

std::atomic<bool> ReplSession::interrupted{false};

namespace {

constexpr std::string_view kEvalFunction = "__repl_eval";
constexpr uint64_t kInstructionsBetweenChecks = 100'000;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

bool IsIdentifierCharacter(char character) {
  return std::isalnum(static_cast<unsigned char>(character)) || character == '_' ||
         character == '.';
}

// Walks Relay source, skipping comments and strings, and calls `visit` with
// each other character's position and the bracket depth before it.
template <typename Visit>
void ScanCode(std::string_view text, const Visit& visit) {
  int depth = 0;
  for (size_t at = 0; at < text.size(); ++at) {
    const char character = text[at];
    if (character == '/' && at + 1 < text.size() && text[at + 1] == '/') {
      while (at < text.size() && text[at] != '\n') ++at;
      continue;
    }
    if (character == '/' && at + 1 < text.size() && text[at + 1] == '*') {
      size_t end = text.find("*/", at + 2);
      at = end == std::string_view::npos ? text.size() : end + 1;
      continue;
    }
    if (character == '"') {
      for (++at; at < text.size() && text[at] != '"'; ++at) {
        if (text[at] == '\\') ++at;
      }
      continue;
    }
    visit(at, depth);
    if (character == '(' || character == '[' || character == '{') ++depth;
    if (character == ')' || character == ']' || character == '}') --depth;
  }
}

// Whether `value` is or holds (in a tuple, ADT value or reference) a
// closure. Walked with an explicit stack: a long list is deep.
bool HoldsClosure(const Value& value) {
  std::vector<const Object*> pending{value.get()};
  while (!pending.empty()) {
    const Object* object = pending.back();
    pending.pop_back();
    if (object == nullptr) continue;
    switch (object->kind()) {
      case ObjectKind::kClosure:
        return true;
      case ObjectKind::kTuple:
        for (const Value& field : static_cast<const Tuple*>(object)->fields())
          pending.push_back(field.get());
        break;
      case ObjectKind::kConstructed:
        for (const Value& field : static_cast<const Constructed*>(object)->fields())
          pending.push_back(field.get());
        break;
      case ObjectKind::kReference:
        pending.push_back(static_cast<const Reference*>(object)->Read().get());
        break;
      default:
        break;
    }
  }
  return false;
}

bool StartsWithWord(std::string_view text, std::string_view word) {
  return text.starts_with(word) && text.size() > word.size() &&
         std::isspace(static_cast<unsigned char>(text[word.size()]));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SplitDefinitions(std::string_view text) {
  std::vector<size_t> starts;
  bool at_token_start = true;
  // Code before the first definition: only a version header may be there.
  std::optional<size_t> stray;
  size_t header_end = 0;
  ScanCode(text, [&](size_t at, int depth) {
    const char character = text[at];
    if (depth == 0 && at_token_start &&
        (StartsWithWord(text.substr(at), "def") || StartsWithWord(text.substr(at), "type")))
      starts.push_back(at);
    if (starts.empty() && !stray && at >= header_end &&
        !std::isspace(static_cast<unsigned char>(character))) {
      if (text.substr(at).starts_with("#[")) {
        size_t end = text.find(']', at);
        header_end = end == std::string_view::npos ? text.size() : end + 1;
      } else {
        stray = at;
      }
    }
    at_token_start =
        std::isspace(static_cast<unsigned char>(character)) || character == '}' || character == ';';
  });
  std::vector<std::pair<std::string, std::string>> definitions;
  if (stray) {
    throw Error(ErrorKind::kParse, "expected a definition (def @name or type Name), got '" +
                                       std::string(Trim(text.substr(*stray, 40))) + "'");
  }
  for (size_t index = 0; index < starts.size(); ++index) {
    const size_t end = index + 1 < starts.size() ? starts[index + 1] : text.size();
    std::string_view definition = Trim(text.substr(starts[index], end - starts[index]));
    const bool is_type = definition.starts_with("type");
    std::string_view rest = Trim(definition.substr(is_type ? 4 : 3));
    if (!is_type) {
      if (!rest.starts_with("@")) throw Error(ErrorKind::kParse, "expected '@name' after 'def'");
      rest.remove_prefix(1);
    }
    size_t length = 0;
    while (length < rest.size() && IsIdentifierCharacter(rest[length])) ++length;
    if (length == 0) throw Error(ErrorKind::kParse, "a definition without a name");
    definitions.emplace_back((is_type ? "type " : "@") + std::string(rest.substr(0, length)),
                             std::string(definition));
  }
  return definitions;
}

ReplSession::ReplSession(std::ostream& out, std::ostream& err,
                         std::function<std::optional<std::string>(const char* prompt)> read_line)
    : out_(out), err_(err), read_line_(std::move(read_line)) {}

bool ReplSession::Unfinished(std::string_view text) {
  int depth = 0;
  ScanCode(text, [&](size_t at, int before) {
    const char character = text[at];
    depth = before + ((character == '(' || character == '[' || character == '{')   ? 1
                      : (character == ')' || character == ']' || character == '}') ? -1
                                                                                   : 0);
  });
  return depth > 0;
}

bool ReplSession::Handle(const std::string& input) {
  std::string_view text = Trim(input);
  bool has_code = false;
  ScanCode(text, [&](size_t at, int) {
    has_code = has_code || !std::isspace(static_cast<unsigned char>(text[at]));
  });
  if (!has_code) return true;  // blank, or only comments
  try {
    if (text.starts_with(":")) {
      size_t space = text.find_first_of(" \t\n");
      std::string_view command = text.substr(0, space);
      std::string_view argument =
          space == std::string_view::npos ? std::string_view() : Trim(text.substr(space));
      if (command == ":quit" || command == ":q") return false;
      if (command == ":type" || command == ":t") {
        ShowType(argument);
      } else if (command == ":load" || command == ":l") {
        Load(std::string(argument));
      } else if (command == ":reload" || command == ":r") {
        if (loaded_.empty()) err_ << "error: nothing loaded to reload\n";
        for (const std::string& path : std::vector<std::string>(loaded_)) Load(path);
      } else if (command == ":list") {
        List();
      } else if (command == ":disasm") {
        Disassemble(argument);
      } else if (command == ":optimized") {
        ShowOptimized(argument);
      } else if (command == ":grad") {
        ShowGradient(argument);
      } else if (command == ":time") {
        Evaluate(argument, true);
      } else if (command == ":debug") {
        Debug(argument);
      } else if (command == ":help" || command == ":h" || command == ":?") {
        Help();
      } else {
        err_ << "error: unknown command " << command << " (:help lists them)\n";
      }
      return true;
    }
    if (StartsWithWord(text, "def") || StartsWithWord(text, "type")) {
      std::vector<Definition> added;
      for (auto& [name, definition] : SplitDefinitions(text))
        added.push_back({name, name.starts_with("type "), std::move(definition)});
      Define(std::move(added));
      return true;
    }
    if (StartsWithWord(text, "let")) {
      std::string_view rest = Trim(text.substr(3));
      size_t equals = rest.find('=');
      std::string_view name = Trim(rest.substr(0, equals));
      if (equals == std::string_view::npos || !name.starts_with("%") || name.size() < 2) {
        err_ << "error: a session variable is bound as: let %name = EXPR\n";
        return true;
      }
      std::string_view expression = Trim(rest.substr(equals + 1));
      if (expression.ends_with(";")) expression.remove_suffix(1);
      Bind(name.substr(1), expression);
      return true;
    }
    Evaluate(text, false);
  } catch (const Error& error) {
    err_ << error.Format() << "\n";
  }
  return true;
}

std::optional<ReplSession::Checked> ReplSession::Check(
    const std::vector<Definition>& definitions, std::optional<std::string_view> expression,
    const std::vector<std::string>& fresh) const {
  std::string text = "#[version = \"0.0.5\"]\n";
  int line = 2;
  std::vector<Segment> segments;
  auto add = [&](std::string name, std::string_view segment) {
    const int lines = 1 + static_cast<int>(std::count(segment.begin(), segment.end(), '\n'));
    segments.push_back({line, line + lines - 1, std::move(name), std::string(segment)});
    text += std::string(segment) + "\n";
    line += lines;
  };
  for (const Definition& definition : definitions) {
    const bool is_fresh = std::find(fresh.begin(), fresh.end(), definition.name) != fresh.end();
    add(is_fresh ? "<input>" : definition.name, definition.text);
  }
  if (expression) {
    text += "def @" + std::string(kEvalFunction) + "(";
    for (size_t index = 0; index < variables_.size(); ++index) {
      text += (index ? ", %" : "%") + variables_[index].name + ": " + variables_[index].type;
    }
    text += ") {\n";
    ++line;
    add("<input>", *expression);
    text += "}\n";
  }
  auto shared = std::make_shared<const std::string>(std::move(text));
  Diagnostics diagnostics("<repl>", shared);
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) {
    for (const Error& error : diagnostics.errors()) err_ << FormatError(error, segments) << "\n";
    return std::nullopt;
  }
  return Checked{std::move(module), shared, std::move(segments)};
}

// `text` with each "<repl>:LINE:COL" (a backtrace frame's location) said
// as the definition or input it lies in.
std::string ReplSession::InSegments(const std::string& text, const std::vector<Segment>& segments) {
  const std::string marker = "<repl>:";
  std::string out;
  size_t at = 0;
  while (true) {
    size_t found = text.find(marker, at);
    if (found == std::string::npos) break;
    out += text.substr(at, found - at);
    size_t digits = found + marker.size();
    size_t end = digits;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    const int line = end > digits ? std::atoi(text.c_str() + digits) : 0;
    auto segment = std::find_if(segments.begin(), segments.end(), [&](const Segment& each) {
      return line >= each.first_line && line <= each.last_line;
    });
    if (segment == segments.end()) {
      out += text.substr(found, end - found);
    } else {
      out += segment->name + ":" + std::to_string(line - segment->first_line + 1);
    }
    at = end;
  }
  return out + text.substr(at);
}

std::string ReplSession::FormatError(const Error& error, const std::vector<Segment>& segments) {
  const std::optional<SourceSpan>& span = error.span();
  if (span && span->file == "<repl>") {
    for (const Segment& segment : segments) {
      if (span->line < segment.first_line || span->line > segment.last_line) continue;
      const int shift = segment.first_line - 1;
      SourceSpan inside{segment.name, span->line - shift, span->column,
                        span->end_line > 0 ? span->end_line - shift : 0, span->end_column};
      std::vector<std::string> backtrace;
      for (const std::string& frame : error.backtrace())
        backtrace.push_back(InSegments(frame, segments));
      return Error(error.kind(), error.message(), inside, backtrace).Format(segment.text);
    }
  }
  return error.Format();
}

std::shared_ptr<const vm::Executable> ReplSession::Compile(const Checked& checked) const {
  return std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(checked.module, &compiler::Prelude()));
}

std::vector<Value> ReplSession::VariableValues() const {
  std::vector<Value> values;
  for (const Variable& variable : variables_) values.push_back(variable.value);
  return values;
}

void ReplSession::Define(std::vector<Definition> added) {
  std::vector<Definition> updated = definitions_;
  std::vector<std::string> fresh;
  for (const Definition& definition : added) fresh.push_back(definition.name);
  for (Definition& definition : added) {
    auto same = std::find_if(updated.begin(), updated.end(),
                             [&](const Definition& each) { return each.name == definition.name; });
    if (same != updated.end()) {
      *same = std::move(definition);
    } else {
      updated.push_back(std::move(definition));
    }
  }
  // The whole module is checked again: a redefinition that breaks a global
  // using it is refused, with that global's errors.
  std::optional<Checked> checked = Check(updated, std::nullopt, fresh);
  if (!checked) return;
  std::vector<std::string> names;
  for (const Definition& definition : updated) {
    const bool is_new =
        std::none_of(definitions_.begin(), definitions_.end(), [&](const Definition& each) {
          return each.name == definition.name && each.text == definition.text;
        });
    if (is_new) names.push_back(definition.name);
  }
  definitions_ = std::move(updated);
  for (const std::string& name : names) {
    if (name.starts_with("type ")) {
      out_ << name << "\n";
      continue;
    }
    const ir::GlobalFunction* global = checked->module.FindFunction(name.substr(1));
    if (global != nullptr)
      out_ << name << ": " << ir::TypeToString(global->name->checked_type()) << "\n";
  }
}

std::optional<Value> ReplSession::Run(
    const Checked& checked, const std::shared_ptr<const vm::Executable>& executable) const {
  vm::VirtualMachine machine(executable);
  interrupted = false;
  try {
    machine.Start(kEvalFunction, VariableValues());
    while (true) {
      if (std::optional<Value> result = machine.Resume(kInstructionsBetweenChecks)) return result;
      if (interrupted) {
        err_ << "Interrupted.\n";
        return std::nullopt;
      }
    }
  } catch (const Error& error) {
    err_ << FormatError(error, checked.segments) << "\n";
    return std::nullopt;
  }
}

void ReplSession::Evaluate(std::string_view expression, bool timed) {
  if (Trim(expression).empty()) {
    err_ << "error: expected an expression\n";
    return;
  }
  std::optional<Checked> checked = Check(definitions_, expression);
  if (!checked) return;
  std::shared_ptr<const vm::Executable> executable = Compile(*checked);
  const auto start = std::chrono::steady_clock::now();
  std::optional<Value> result = Run(*checked, executable);
  if (!result) return;
  const double milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out_ << FormatValue(*result, executable->PrintOptions()) << "\n";
  if (timed) {
    char line[64];
    std::snprintf(line, sizeof line, "Time: %.3f ms\n", milliseconds);
    out_ << line;
  }
}

void ReplSession::Bind(std::string_view name, std::string_view expression) {
  std::optional<Checked> checked = Check(definitions_, expression);
  if (!checked) return;
  const ir::GlobalFunction* eval = checked->module.FindFunction(kEvalFunction);
  const std::string type = ir::TypeToString(eval->function->body->checked_type());
  std::optional<Value> result = Run(*checked, Compile(*checked));
  if (!result) return;
  if (HoldsClosure(*result)) {
    // A closure names a function of the executable that made it, and each
    // input is compiled anew.
    err_ << "error: %" << name << " would hold a function value, which a session variable "
         << "cannot keep from one input to the next: define it as a global with def\n";
    return;
  }
  std::erase_if(variables_, [&](const Variable& variable) { return variable.name == name; });
  variables_.push_back({std::string(name), type, *result});
  out_ << "%" << name << ": " << type << "\n";
}

void ReplSession::ShowType(std::string_view expression) {
  // A global alone: its declared type, which may be polymorphic (@map),
  // where an expression's type must be one.
  std::string_view name = Trim(expression);
  if (name.starts_with("@") && name.size() > 1 &&
      std::all_of(name.begin() + 1, name.end(), IsIdentifierCharacter)) {
    std::optional<Checked> module =
        definitions_.empty() ? std::nullopt : Check(definitions_, std::nullopt);
    const ir::GlobalFunction* global =
        module ? module->module.FindFunction(name.substr(1)) : nullptr;
    if (global == nullptr) global = compiler::Prelude().FindFunction(name.substr(1));
    if (global != nullptr) {
      out_ << ir::TypeToString(global->name->checked_type()) << "\n";
      return;
    }
  }
  std::optional<Checked> checked = Check(definitions_, expression);
  if (!checked) return;
  const ir::GlobalFunction* eval = checked->module.FindFunction(kEvalFunction);
  out_ << ir::TypeToString(eval->function->body->checked_type()) << "\n";
}

void ReplSession::List() {
  if (definitions_.empty() && variables_.empty()) {
    out_ << "(nothing defined yet)\n";
    return;
  }
  std::optional<Checked> checked =
      definitions_.empty() ? std::nullopt : Check(definitions_, std::nullopt);
  if (!definitions_.empty() && !checked) return;
  for (const Definition& definition : definitions_) {
    if (definition.is_type) {
      out_ << definition.name << "\n";
      continue;
    }
    const ir::GlobalFunction* global = checked->module.FindFunction(definition.name.substr(1));
    if (global != nullptr)
      out_ << definition.name << ": " << ir::TypeToString(global->name->checked_type()) << "\n";
  }
  for (const Variable& variable : variables_)
    out_ << "%" << variable.name << ": " << variable.type << "\n";
}

std::optional<ReplSession::Checked> ReplSession::ModuleWithGlobal(std::string_view name,
                                                                  std::string_view command) const {
  if (!name.starts_with("@")) {
    err_ << "error: " << command << " takes a global: " << command << " @name\n";
    return std::nullopt;
  }
  std::optional<Checked> checked =
      definitions_.empty() ? std::nullopt : Check(definitions_, std::nullopt);
  if (!definitions_.empty() && !checked) return std::nullopt;
  if (!checked || checked->module.FindFunction(name.substr(1)) == nullptr) {
    err_ << "error: no global " << name << " in this session\n";
    return std::nullopt;
  }
  return checked;
}

void ReplSession::Disassemble(std::string_view name) {
  std::optional<Checked> checked = ModuleWithGlobal(name, ":disasm");
  if (!checked) return;
  std::shared_ptr<const vm::Executable> executable = Compile(*checked);
  // The function and the closures lifted out of it (@f.lambda1, ...).
  const std::string lifted = std::string(name) + ".";
  for (size_t index = 0; index < executable->functions.size(); ++index) {
    const std::string& function = executable->functions[index].name;
    if (function == name || function.starts_with(lifted))
      out_ << vm::DisassembleFunction(*executable, index);
  }
}

void ReplSession::ShowOptimized(std::string_view name) {
  std::optional<Checked> checked = ModuleWithGlobal(name, ":optimized");
  if (!checked) return;
  passes::OptimizedProgram optimized = passes::OptimizeForVm(checked->module, &compiler::Prelude());
  parser::PrintOptions options;
  options.tensor_constants_as_meta = true;
  const std::string text = parser::PrintModule(optimized.program, options);
  // Its definition and those of the closures lifted out of it.
  for (const auto& [global, definition] : SplitDefinitions(text)) {
    if (global == name || global.starts_with(std::string(name) + ".")) out_ << definition << "\n";
  }
}

void ReplSession::ShowGradient(std::string_view name) {
  std::optional<Checked> checked = ModuleWithGlobal(name, ":grad");
  if (!checked) return;
  ir::Module differentiated =
      passes::AddGradient(checked->module, &compiler::Prelude(), name.substr(1));
  // The new globals only: the gradient and the reverse versions it calls.
  ir::Module added;
  for (const ir::GlobalFunction& function : differentiated.functions()) {
    if (checked->module.FindFunction(function.name->name) == nullptr) {
      added.AddFunction(function.name, function.function);
    }
  }
  for (const auto& [global, definition] : SplitDefinitions(parser::PrintModule(added))) {
    out_ << definition << "\n";
  }
  out_ << "(call " << name << "_grad like any global: it is derived again when " << name
       << " changes)\n";
}

void ReplSession::Debug(std::string_view expression) {
  std::optional<Checked> checked = Check(definitions_, expression);
  if (!checked) return;
  std::shared_ptr<const vm::Executable> executable = Compile(*checked);
  Debugger debugger(executable, std::string(kEvalFunction), VariableValues(),
                    {{"<repl>", *checked->text}}, out_);
  out_ << "Debugging; 'run' starts, 'quit' returns to the REPL.\n";
  while (std::optional<std::string> line = read_line_("(rdb) ")) {
    if (!debugger.Execute(*line)) break;
    out_ << std::flush;
  }
}

void ReplSession::Load(const std::string& path) {
  std::shared_ptr<const std::string> text = api::ReadSourceFile(path);
  std::vector<Definition> added;
  for (auto& [name, definition] : SplitDefinitions(*text))
    added.push_back({name, name.starts_with("type "), std::move(definition)});
  Define(std::move(added));
  if (std::find(loaded_.begin(), loaded_.end(), path) == loaded_.end()) loaded_.push_back(path);
}

void ReplSession::AddVariable(const std::string& name, Ref<Tensor> tensor) {
  std::string type = "Tensor[(";
  for (size_t axis = 0; axis < tensor->shape().size(); ++axis)
    type += (axis ? ", " : "") + std::to_string(tensor->shape()[axis]);
  type += tensor->shape().size() == 1 ? ",), " : "), ";
  type += std::string(DTypeName(tensor->dtype())) + "]";
  if (tensor->ndim() == 0) type = std::string(DTypeName(tensor->dtype()));
  std::erase_if(variables_, [&](const Variable& variable) { return variable.name == name; });
  variables_.push_back({name, type, std::move(tensor)});
}

std::vector<std::string> ReplSession::Completions() const {
  std::vector<std::string> names = {":type", ":load", ":reload", ":list", ":disasm", ":optimized",
                                    ":grad", ":time", ":debug",  ":help", ":quit",   "def",
                                    "type",  "let",   "match",   "if",    "else",    "fn"};
  for (const Definition& definition : definitions_)
    names.push_back(definition.is_type ? definition.name.substr(5) : definition.name);
  for (const Variable& variable : variables_) names.push_back("%" + variable.name);
  const ir::Module& prelude = compiler::Prelude();
  for (const ir::GlobalFunction& global : prelude.functions())
    names.push_back("@" + global.name->name);
  for (const ir::TypeDefinition& type : prelude.type_definitions()) {
    names.push_back(type.name->name);
    for (const ir::Constructor& constructor : type.constructors) names.push_back(constructor->name);
  }
  for (const kernels::OperatorDefinition* op : kernels::AllOperators()) names.push_back(op->name);
  return names;
}

void ReplSession::Help() {
  out_ << "def @f(...) { ... }   define (or redefine) a global function\n"
          "type T[...] { ... }   define an algebraic data type\n"
          "let %x = EXPR         bind a session variable\n"
          "EXPR                  type-check, compile, run and print an expression\n"
          ":type EXPR            the type of an expression\n"
          ":load FILE            add a file's definitions; :reload reads them again\n"
          ":list                 the definitions and session variables with their types\n"
          ":disasm @f            @f's bytecode\n"
          ":optimized @f         @f after the compiler's passes\n"
          ":grad @f              @f_grad, @f's reverse-mode gradient (callable as is)\n"
          ":time EXPR            evaluate and say how long it took\n"
          ":debug EXPR           step through an expression (the debugger's commands)\n"
          ":help, :quit\n";
}

}  // namespace relay::tools

#include "tools/debugger.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <ostream>
#include <sstream>

#include "relay/error.h"
#include "relay/float16.h"
#include "relay/tensor.h"

namespace relay::tools {

std::atomic<bool> Debugger::interrupted{false};

namespace {

// Splits "command rest" at the first space.
std::pair<std::string_view, std::string_view> SplitCommand(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
    line.remove_suffix(1);
  size_t space = line.find_first_of(" \t");
  if (space == std::string_view::npos) return {line, {}};
  std::string_view rest = line.substr(space + 1);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  return {line.substr(0, space), rest};
}

std::optional<int64_t> ParseNumber(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string WithoutPercent(std::string_view name) {
  return std::string(name.starts_with("%") ? name.substr(1) : name);
}

template <typename T>
double AsDouble(T value) {
  if constexpr (std::is_same_v<T, Float16>) {
    return static_cast<float>(value);
  } else {
    return static_cast<double>(value);
  }
}

// Elements of a tensor as doubles, for a summary.
std::vector<double> ElementsOf(const Tensor& tensor) {
  std::vector<double> values;
  values.reserve(static_cast<size_t>(tensor.element_count()));
  for (int64_t index = 0; index < tensor.element_count(); ++index) {
    switch (tensor.dtype()) {
#define RELAY_DTYPE(kind, name, ctype, size, code, numpy_kind) \
  case DType::kind:                                            \
    values.push_back(AsDouble(tensor.data<ctype>()[index]));   \
    break;
#include "relay/dtypes.def"
#undef RELAY_DTYPE
    }
  }
  return values;
}

std::string Number(double value) {
  std::ostringstream text;
  text.precision(6);
  text << value;
  return text.str();
}

}  // namespace

Debugger::Debugger(std::shared_ptr<const vm::Executable> executable, std::string entry,
                   std::vector<Value> arguments, std::map<std::string, std::string> sources,
                   std::ostream& out)
    : executable_(std::move(executable)),
      entry_(std::move(entry)),
      arguments_(std::move(arguments)),
      sources_(std::move(sources)),
      out_(out),
      machine_(executable_) {
  machine_.set_keep_failed_run(true);
}

bool Debugger::Execute(std::string_view line) {
  auto [command, argument] = SplitCommand(line);
  if (command.empty() || command.starts_with("#")) return true;  // a comment, as in gdb
  try {
    if (command == "quit" || command == "q") return false;
    if (command == "break" || command == "b") {
      Break(argument);
    } else if (command == "delete" || command == "d") {
      Delete(argument);
    } else if (command == "info" || command == "i") {
      if (argument == "breakpoints" || argument == "b" || argument == "break") {
        InfoBreakpoints();
      } else if (argument == "locals") {
        InfoLocals();
      } else {
        out_ << "info takes 'breakpoints' or 'locals'\n";
      }
    } else if (command == "run" || command == "r") {
      Run();
    } else if (command == "continue" || command == "c") {
      if (Running()) Advance(Mode::kContinue);
    } else if (command == "step" || command == "s") {
      if (Running()) Advance(Mode::kStep);
    } else if (command == "next" || command == "n") {
      if (Running()) Advance(Mode::kNext);
    } else if (command == "stepi" || command == "si") {
      if (Running()) Advance(Mode::kStepInstruction);
    } else if (command == "finish") {
      if (Running()) Advance(Mode::kFinish);
    } else if (command == "frame" || command == "f" || command == "up" || command == "down") {
      SelectFrame(command, argument);
    } else if (command == "backtrace" || command == "bt" || command == "where") {
      Backtrace();
    } else if (command == "print" || command == "p") {
      Print(argument);
    } else if (command == "list" || command == "l") {
      List(argument);
    } else if (command == "watch") {
      AddWatch(argument);
    } else if (command == "help" || command == "h") {
      Help();
    } else {
      out_ << "Undefined command: \"" << command << "\".  Try \"help\".\n";
    }
  } catch (const Error& error) {
    // A command's own failure (a file that cannot be read, say) ends the
    // command, not the session.
    out_ << "error: " << error.message() << "\n";
  }
  return true;
}

size_t Debugger::EntryOf(int32_t function) const {
  const std::vector<vm::Instruction>& code = FunctionAt(function).code;
  size_t pc = 0;
  while (pc + 1 < code.size() &&
         (code[pc].opcode == vm::Opcode::kLoadConst || code[pc].opcode == vm::Opcode::kLoadSelf ||
          code[pc].opcode == vm::Opcode::kAllocStorage))
    ++pc;
  return pc;
}

bool Debugger::Running() const {
  if (machine_.paused()) return true;
  out_ << (machine_.failed() ? "The program stopped with an error; 'run' starts it again.\n"
                             : "The program is not being run.\n");
  return false;
}

bool Debugger::Stopped() const {
  if (machine_.paused() || machine_.failed()) return true;
  out_ << "No stack.\n";
  return false;
}

Debugger::Position Debugger::Here() const {
  Position position;
  std::vector<vm::VirtualMachine::FrameView> frames = machine_.frames();
  position.depth = frames.size();
  if (frames.empty()) return position;
  position.function = frames.back().function;
  position.pc = frames.back().pc;
  const vm::Function& function = FunctionAt(position.function);
  if (position.pc < function.code.size()) position.location = function.code[position.pc].location;
  return position;
}

std::string Debugger::Describe(size_t depth) const {
  std::vector<vm::VirtualMachine::FrameView> frames = machine_.frames();
  const vm::VirtualMachine::FrameView& frame = frames.at(depth);
  const vm::Function& function = FunctionAt(frame.function);
  std::string text = function.name;
  if (frame.pc < function.code.size() && function.code[frame.pc].location.line > 0) {
    const vm::SourceLocation& location = function.code[frame.pc].location;
    text += " (" + function.source + ":" + std::to_string(location.line) + ":" +
            std::to_string(location.column) + ")";
  }
  return text;
}

std::string Debugger::SourceLine(const std::string& file, int32_t line) const {
  auto source = sources_.find(file);
  if (source == sources_.end() || line <= 0) return "";
  std::istringstream lines(source->second);
  std::string text;
  for (int32_t number = 1; std::getline(lines, text); ++number) {
    if (number == line) return std::to_string(line) + "\t" + text;
  }
  return "";
}

void Debugger::ShowPosition(bool with_function) {
  Position here = Here();
  if (here.depth == 0) return;
  if (with_function) out_ << Describe(here.depth - 1) << "\n";
  const vm::Function& function = FunctionAt(here.function);
  std::string text = SourceLine(function.source, here.location.line);
  if (!text.empty()) out_ << text << "\n";
  list_line_ = here.location.line;
}

void Debugger::Break(std::string_view argument) {
  Breakpoint breakpoint;
  if (argument.starts_with("@")) {
    const int32_t index = executable_->FindFunction(argument);
    if (index < 0) {
      out_ << "No function " << argument << ".\n";
      return;
    }
    breakpoint.function = index;
    const vm::Function& function = FunctionAt(index);
    breakpoint.where = function.name;
    for (size_t pc = EntryOf(index); pc < function.code.size(); ++pc) {
      const vm::SourceLocation& location = function.code[pc].location;
      if (location.line > 0) {
        breakpoint.where += " (" + function.source + ":" + std::to_string(location.line) + ":" +
                            std::to_string(location.column) + ")";
        break;
      }
    }
  } else {
    std::string file;
    std::string_view line_text = argument;
    if (size_t colon = argument.rfind(':'); colon != std::string_view::npos) {
      file = std::string(argument.substr(0, colon));
      line_text = argument.substr(colon + 1);
    }
    std::optional<int64_t> line = ParseNumber(line_text);
    if (argument.empty() || !line || *line <= 0 || *line > std::numeric_limits<int32_t>::max()) {
      out_ << "break takes @function, LINE or FILE:LINE\n";
      return;
    }
    // The first instruction on the line, in any function of the file.
    for (size_t index = 0; index < executable_->functions.size() && breakpoint.where.empty();
         ++index) {
      const vm::Function& function = executable_->functions[index];
      if (!file.empty() && function.source != file && !function.source.ends_with("/" + file))
        continue;
      for (size_t pc = EntryOf(int32_t(index)); pc < function.code.size(); ++pc) {
        const vm::Instruction& instruction = function.code[pc];
        if (instruction.location.line != *line) continue;
        breakpoint.file = function.source;
        breakpoint.line = static_cast<int32_t>(*line);
        breakpoint.where = function.name + " (" + function.source + ":" + std::to_string(*line) +
                           ":" + std::to_string(instruction.location.column) + ")";
        break;
      }
    }
    if (breakpoint.where.empty()) {
      out_ << "No code at line " << *line << (file.empty() ? "" : " of " + file) << ".\n";
      return;
    }
  }
  breakpoint.number = next_number_++;
  out_ << "Breakpoint " << breakpoint.number << " at " << breakpoint.where << "\n";
  breakpoints_.push_back(std::move(breakpoint));
}

void Debugger::Delete(std::string_view argument) {
  if (argument.empty()) {
    breakpoints_.clear();
    watches_.clear();
    return;
  }
  std::optional<int64_t> number = ParseNumber(argument);
  auto matches = [&](const auto& each) { return number && each.number == *number; };
  size_t before = breakpoints_.size() + watches_.size();
  std::erase_if(breakpoints_, matches);
  std::erase_if(watches_, matches);
  if (breakpoints_.size() + watches_.size() == before)
    out_ << "No breakpoint number " << argument << ".\n";
}

void Debugger::InfoBreakpoints() {
  if (breakpoints_.empty() && watches_.empty()) {
    out_ << "No breakpoints or watchpoints.\n";
    return;
  }
  out_ << "Num     Type           What\n";
  for (const Breakpoint& breakpoint : breakpoints_) {
    std::string number = std::to_string(breakpoint.number);
    number.resize(8, ' ');
    out_ << number << "breakpoint     " << breakpoint.where << "\n";
  }
  for (const Watch& watch : watches_) {
    std::string number = std::to_string(watch.number);
    number.resize(8, ' ');
    out_ << number << "watchpoint     %" << watch.name << "\n";
  }
}

void Debugger::Run() {
  // A watchpoint follows a reference cell of the run it was set in.
  for (const Watch& watch : watches_)
    out_ << "Watchpoint " << watch.number << " deleted: %" << watch.name
         << " was a reference of the previous run.\n";
  watches_.clear();
  machine_.Start(entry_, arguments_);
  selected_ = 0;
  // A breakpoint on the entry function (or its first line) stops before
  // anything runs.
  Position start = Here();
  if (std::optional<int> hit = TriggeredBreakpoint(Position{}, start)) {
    out_ << "\nBreakpoint " << *hit << ", " << Describe(start.depth - 1) << "\n";
    ShowPosition(false);
    return;
  }
  Advance(Mode::kContinue);
}

std::optional<int> Debugger::TriggeredBreakpoint(const Position& before,
                                                 const Position& after) const {
  for (const Breakpoint& breakpoint : breakpoints_) {
    if (breakpoint.function >= 0) {
      // Entering the function: reaching its first instruction after the
      // prologue, from a call, a tail call or a recursive call that was
      // compiled as a jump back.
      const size_t entry = EntryOf(breakpoint.function);
      if (after.function == breakpoint.function && after.pc == entry &&
          !(before.depth == after.depth && before.function == after.function && before.pc == entry))
        return breakpoint.number;
      continue;
    }
    // Reaching the line from another line of the same frame, or in a new
    // frame; not returning into the line from a call made on it.
    if (after.location.line != breakpoint.line || after.function < 0 ||
        after.pc < EntryOf(after.function) || FunctionAt(after.function).source != breakpoint.file)
      continue;
    if (after.depth > before.depth ||
        (after.depth == before.depth &&
         (before.function != after.function || before.location.line != breakpoint.line)))
      return breakpoint.number;
  }
  return std::nullopt;
}

bool Debugger::Advance(Mode mode) {
  selected_ = 0;
  const Position start = Here();
  // `finish` reports the value the frame returns into its caller's register.
  const std::vector<vm::VirtualMachine::FrameView> start_frames = machine_.frames();
  if (mode == Mode::kFinish) {
    if (start.depth <= 1) {
      out_ << "\"finish\" not meaningful in the outermost frame.\n";
      return true;
    }
    out_ << "Run till exit from #0 " << Describe(start.depth - 1) << "\n";
  }
  Position before = start;
  interrupted = false;
  while (true) {
    std::optional<Value> result;
    try {
      result = machine_.Resume(1);
    } catch (const Error& error) {
      Failed(error);
      return false;
    }
    if (result) {
      Finished(*result);
      return false;
    }
    Position after = Here();
    // An instruction without a location, or one of a function's prologue
    // (located at its first use), is on the line that ran before it.
    if ((after.location.line == 0 || after.pc < EntryOf(after.function)) &&
        after.depth == before.depth && after.function == before.function)
      after.location = before.location;
    for (Watch& watch : watches_) {
      const Value& content = static_cast<const Reference&>(*watch.reference).Read();
      if (content.get() == watch.content.get()) continue;
      // A write of an equal value is no change.
      const bool changed = FormatForPrint(content) != FormatForPrint(watch.content);
      if (!changed) {
        watch.content = content;
        continue;
      }
      {
        out_ << "\nWatchpoint " << watch.number << ": %" << watch.name << "\n\n"
             << "Old value = " << FormatForPrint(watch.content) << "\n"
             << "New value = " << FormatForPrint(content) << "\n";
        watch.content = content;
        out_ << Describe(after.depth - 1) << "\n";
        ShowPosition(false);
        return true;
      }
    }
    if (interrupted.exchange(false)) {
      out_ << "\nInterrupted, " << Describe(after.depth - 1) << "\n";
      ShowPosition(false);
      return true;
    }
    if (std::optional<int> hit = TriggeredBreakpoint(before, after)) {
      out_ << "\nBreakpoint " << *hit << ", " << Describe(after.depth - 1) << "\n";
      ShowPosition(false);
      return true;
    }
    const bool located = after.location.line > 0 && after.pc >= EntryOf(after.function);
    const bool new_line = after.depth != start.depth || after.function != start.function ||
                          after.location.line != start.location.line;
    switch (mode) {
      case Mode::kContinue:
        break;
      case Mode::kStepInstruction:
        out_ << Describe(after.depth - 1) << "\n"
             << vm::DisassembleInstruction(*executable_, size_t(after.function), after.pc) << "\n";
        list_line_ = after.location.line;
        return true;
      case Mode::kStep:
        if (located && new_line) {
          ShowPosition(after.depth != start.depth || after.function != start.function);
          return true;
        }
        break;
      case Mode::kNext:
        if (located && after.depth <= start.depth && new_line) {
          ShowPosition(after.depth != start.depth || after.function != start.function);
          return true;
        }
        break;
      case Mode::kFinish:
        if (after.depth < start.depth) {
          const vm::VirtualMachine::FrameView& finished = start_frames[start.depth - 1];
          const Value& returned = machine_.RegisterOf(after.depth - 1, finished.return_register);
          out_ << Describe(after.depth - 1) << "\n";
          ShowPosition(false);
          out_ << "Value returned: " << FormatForPrint(returned) << "\n";
          return true;
        }
        break;
    }
    before = after;
  }
}

void Debugger::Finished(const Value& result) {
  out_ << FormatValue(result, executable_->PrintOptions()) << "\n[program finished]\n";
}

void Debugger::Failed(const Error& error) {
  out_ << "\nProgram stopped by an error: " << error.message() << "\n";
  if (machine_.failed()) {
    out_ << Describe(machine_.frames().size() - 1) << "\n";
    ShowPosition(false);
  }
}

void Debugger::Backtrace() {
  if (!Stopped()) return;
  std::vector<vm::VirtualMachine::FrameView> frames = machine_.frames();
  for (size_t level = 0; level < frames.size(); ++level)
    out_ << "#" << level << "  " << Describe(frames.size() - 1 - level) << "\n";
}

void Debugger::SelectFrame(std::string_view command, std::string_view argument) {
  if (!Stopped()) return;
  const size_t count = machine_.frames().size();
  int64_t level = static_cast<int64_t>(selected_);
  std::optional<int64_t> number =
      argument.empty() ? std::optional<int64_t>(command == "frame" || command == "f" ? level : 1)
                       : ParseNumber(argument);
  if (!number || *number < 0) {
    out_ << command << " takes a frame number\n";
    return;
  }
  if (command == "up") level += *number;
  if (command == "down") level -= *number;
  if (command == "frame" || command == "f") level = *number;
  if (level < 0 || level >= static_cast<int64_t>(count)) {
    out_ << (level < 0 ? "Bottom (innermost) frame selected; you cannot go down.\n"
                       : "No frame at level " + std::to_string(level) + ".\n");
    return;
  }
  selected_ = static_cast<size_t>(level);
  const size_t depth = count - 1 - selected_;
  out_ << "#" << selected_ << "  " << Describe(depth) << "\n";
  const vm::VirtualMachine::FrameView frame = machine_.frames()[depth];
  const vm::Function& function = FunctionAt(frame.function);
  if (frame.pc < function.code.size()) {
    std::string text = SourceLine(function.source, function.code[frame.pc].location.line);
    if (!text.empty()) out_ << text << "\n";
  }
}

std::optional<vm::VariableRange> Debugger::Lookup(size_t depth, std::string_view name) const {
  const vm::VirtualMachine::FrameView frame = machine_.frames().at(depth);
  std::optional<vm::VariableRange> found;
  for (const vm::VariableRange& variable : FunctionAt(frame.function).variables) {
    if (variable.name != name || frame.pc < variable.begin || frame.pc >= variable.end) continue;
    if (!found || variable.begin >= found->begin) found = variable;
  }
  return found;
}

std::string Debugger::FormatForPrint(const Value& value) const {
  if (!value) return "<not available: not computed yet, or freed after its last use>";
  constexpr int64_t kWholeTensorLimit = 32;
  if (value->kind() == ObjectKind::kTensor) {
    const Tensor& tensor = static_cast<const Tensor&>(*value);
    if (tensor.element_count() > kWholeTensorLimit && tensor.on_host()) {
      std::vector<double> elements = ElementsOf(tensor);
      auto [low, high] = std::minmax_element(elements.begin(), elements.end());
      double sum = 0;
      for (double element : elements) sum += element;
      std::string text = "Tensor[(";
      for (size_t axis = 0; axis < tensor.shape().size(); ++axis)
        text += (axis ? ", " : "") + std::to_string(tensor.shape()[axis]);
      text += tensor.shape().size() == 1 ? ",)" : ")";
      text += ", " + std::string(DTypeName(tensor.dtype())) + "] min " + Number(*low) + ", max " +
              Number(*high) + ", mean " + Number(sum / double(elements.size())) + ", first [";
      for (size_t index = 0; index < 8; ++index)
        text += (index ? ", " : "") + Number(elements[index]);
      return text + ", ...]";
    }
  }
  ValuePrintOptions options = executable_->PrintOptions();
  options.tensor_element_limit = kWholeTensorLimit;
  return FormatValue(value, options);
}

void Debugger::Print(std::string_view argument) {
  if (argument.empty()) {
    out_ << "print takes a variable: print %name\n";
    return;
  }
  if (!Stopped()) return;
  const size_t depth = SelectedDepth();
  std::string name = WithoutPercent(argument);
  std::optional<vm::VariableRange> variable = Lookup(depth, name);
  if (!variable) {
    out_ << "No variable %" << name << " here.\n";
    return;
  }
  out_ << "%" << name << " = " << FormatForPrint(machine_.RegisterOf(depth, variable->reg)) << "\n";
}

void Debugger::InfoLocals() {
  if (!Stopped()) return;
  const size_t depth = SelectedDepth();
  const vm::VirtualMachine::FrameView frame = machine_.frames()[depth];
  std::vector<std::string> shown;
  bool any = false;
  for (const vm::VariableRange& variable : FunctionAt(frame.function).variables) {
    if (frame.pc < variable.begin || frame.pc >= variable.end) continue;
    if (std::find(shown.begin(), shown.end(), variable.name) != shown.end()) continue;
    shown.push_back(variable.name);
    std::optional<vm::VariableRange> innermost = Lookup(depth, variable.name);
    out_ << "%" << variable.name << " = "
         << FormatForPrint(machine_.RegisterOf(depth, innermost->reg)) << "\n";
    any = true;
  }
  if (!any) out_ << "No locals.\n";
}

void Debugger::List(std::string_view argument) {
  std::string file;
  int32_t center = list_line_;
  Position here = Here();
  if (here.function >= 0) {
    file = FunctionAt(here.function).source;
  } else {
    const int32_t entry = executable_->FindFunction(entry_);
    if (entry >= 0) file = FunctionAt(entry).source;
    for (const vm::Instruction& instruction : FunctionAt(std::max(entry, 0)).code) {
      if (center == 0 && instruction.location.line > 0) center = instruction.location.line;
    }
  }
  if (!argument.empty()) {
    std::optional<int64_t> line = ParseNumber(argument);
    if (!line || *line <= 0) {
      out_ << "list takes a line number\n";
      return;
    }
    center = static_cast<int32_t>(*line);
  }
  if (sources_.find(file) == sources_.end()) {
    out_ << "No source text for " << (file.empty() ? "this program" : file) << ".\n";
    return;
  }
  const int32_t current = here.depth > 0 ? here.location.line : 0;
  const int32_t first = std::max(1, center - 4);
  for (int32_t line = first; line < first + 10; ++line) {
    std::string text = SourceLine(file, line);
    if (text.empty()) break;
    out_ << (line == current ? "=> " : "   ") << text << "\n";
  }
  list_line_ = first + 10 + 4;
}

void Debugger::AddWatch(std::string_view argument) {
  if (argument.empty()) {
    out_ << "watch takes a variable holding a reference: watch %name\n";
    return;
  }
  if (!Stopped()) return;
  const size_t depth = machine_.frames().size() - 1;
  std::string name = WithoutPercent(argument);
  std::optional<vm::VariableRange> variable = Lookup(depth, name);
  if (!variable) {
    out_ << "No variable %" << name << " here.\n";
    return;
  }
  const Value& value = machine_.RegisterOf(depth, variable->reg);
  if (!value || value->kind() != ObjectKind::kReference) {
    out_ << "%" << name << " is not a reference: watch follows a reference cell's writes\n";
    return;
  }
  Watch watch{next_number_++, name, value, static_cast<const Reference&>(*value).Read()};
  out_ << "Watchpoint " << watch.number << ": %" << name << "\n";
  watches_.push_back(std::move(watch));
}

void Debugger::Help() {
  out_ << "break @name | LINE | FILE:LINE  stop on entering a function or reaching a line\n"
          "delete [N]                      delete breakpoint N (all without N)\n"
          "info breakpoints | locals       list breakpoints, or the variables in scope\n"
          "run (r)                         start the program (again)\n"
          "continue (c)                    resume until a breakpoint or the end\n"
          "step (s)                        to the next source location, entering calls\n"
          "next (n)                        to the next source location, over calls\n"
          "stepi (si)                      one bytecode instruction\n"
          "finish                          until the current function returns\n"
          "backtrace (bt)                  the active functions, innermost first\n"
          "frame (f) N, up [N], down [N]   select the frame that print and info locals read\n"
          "print (p) %var                  a variable's value\n"
          "list (l) [LINE]                 source around the current line\n"
          "watch %var                      stop when a reference cell changes\n"
          "quit (q)                        leave\n";
}

}  // namespace relay::tools

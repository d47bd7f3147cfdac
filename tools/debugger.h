// The step debugger of `relay-vm debug`: runs one call of a program on the
// VM a step at a time, in Relay's terms (functions, source lines,
// variables), with gdb's command names and their one-letter forms:
//
//   break @name | LINE | FILE:LINE   delete [N]   info breakpoints
//   run   continue (c)   step (s)   next (n)   stepi (si)   finish
//   backtrace (bt)   frame (f) N   up   down   print (p) %var   info locals   list (l)
//   watch %var (a reference)   help   quit (q)
//
// The VM pauses between instructions (vm::VirtualMachine::Resume with a
// budget of one), so the program being debugged runs the same bytecode as
// `relay-vm run`; a kernel call is one step. Variables come from the
// executable's debug information (vm::Function::variables).
#pragma once

#include <atomic>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relay/value.h"
#include "vm/bytecode/bytecode.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay::tools {

class Debugger {
 public:
  // Debugs the call of `entry` on `arguments`. `sources` holds the text of
  // the files the executable's locations name (by the name they use), for
  // showing lines; a file missing from it shows no text.
  Debugger(std::shared_ptr<const vm::Executable> executable, std::string entry,
           std::vector<Value> arguments, std::map<std::string, std::string> sources,
           std::ostream& out);

  // Runs one command line; false once the session should end (quit).
  bool Execute(std::string_view line);

  // Set from a SIGINT handler: a running program stops at its next
  // instruction, paused, as at a breakpoint.
  static std::atomic<bool> interrupted;

 private:
  struct Breakpoint {
    int number = 0;
    int32_t function = -1;  // break @name: entering this function
    std::string file;       // break LINE: reaching this line of this file
    int32_t line = 0;
    std::string where;  // "@name (FILE:LINE:COL)"
  };
  struct Watch {
    int number = 0;
    std::string name;
    Value reference;  // the Reference watched
    Value content;    // what it held when last looked at
  };
  // Where the innermost frame is, as the run's position.
  struct Position {
    size_t depth = 0;  // frames
    int32_t function = -1;
    size_t pc = 0;
    vm::SourceLocation location;
  };

  void Break(std::string_view argument);
  void Delete(std::string_view argument);
  void InfoBreakpoints();
  void Run();
  // Resumes one instruction at a time until `stop` says so (given the
  // position before and after each instruction), a breakpoint or watch
  // triggers, the run ends or fails. Returns whether the run is still
  // paused.
  enum class Mode { kContinue, kStep, kNext, kStepInstruction, kFinish };
  bool Advance(Mode mode);
  void Backtrace();
  void SelectFrame(std::string_view command, std::string_view argument);
  // The selected frame's depth (0: outermost).
  size_t SelectedDepth() const { return machine_.frames().size() - 1 - selected_; }
  void Print(std::string_view argument);
  void InfoLocals();
  void List(std::string_view argument);
  void AddWatch(std::string_view argument);
  void Help();

  bool Running() const;  // a run is paused (not finished, not failed)
  bool Stopped() const;  // a run is paused or failed: frames to look at
  Position Here() const;
  const vm::Function& FunctionAt(int32_t index) const { return executable_->functions[index]; }
  // Where function `function` starts after its prologue (the loads of its
  // constants and the allocation of its memory block, which are located
  // at their first use): the instruction a `break @name` stops at.
  size_t EntryOf(int32_t function) const;
  // "@name (FILE:LINE:COL)" of frame `depth`'s current instruction.
  std::string Describe(size_t depth) const;
  // The source line `line` of `file`, as "LINE\tTEXT" (empty if unknown).
  std::string SourceLine(const std::string& file, int32_t line) const;
  void ShowPosition(bool with_function);
  // The variable `name` in scope in frame `depth` (innermost binding).
  std::optional<vm::VariableRange> Lookup(size_t depth, std::string_view name) const;
  // A value as `relay-vm run` prints it; a large tensor summarised.
  std::string FormatForPrint(const Value& value) const;
  std::optional<int> TriggeredBreakpoint(const Position& before, const Position& after) const;
  void Finished(const Value& result);
  void Failed(const Error& error);

  std::shared_ptr<const vm::Executable> executable_;
  std::string entry_;
  std::vector<Value> arguments_;
  std::map<std::string, std::string> sources_;
  std::ostream& out_;
  vm::VirtualMachine machine_;
  std::vector<Breakpoint> breakpoints_;
  std::vector<Watch> watches_;
  int next_number_ = 1;
  int32_t list_line_ = 0;  // where the next bare `list` continues
  size_t selected_ = 0;    // the frame print reads: 0 innermost, as bt numbers them
};

}  // namespace relay::tools

// Instruction dispatch for the interpreter loop (virtual_machine.cc), behind
// one macro layer so that the same handlers compile in either of two modes:
//
//  - Computed goto (threaded code), the default where __GNUC__ is defined
//    (GCC, Clang): a table of handler addresses generated from isa.def, and
//    every handler ends by fetching the next instruction and jumping
//    straight to its handler. Each handler has its own indirect branch, so
//    the branch predictor learns which opcode tends to follow which.
//  - A switch in a loop, the portable form: the default elsewhere, and
//    forced anywhere by compiling with -DRELAY_VM_SWITCH_DISPATCH=1 (for
//    instance cmake -DCMAKE_CXX_FLAGS=-DRELAY_VM_SWITCH_DISPATCH=1), to
//    compare the two or for a compiler without labels as values.
//
// How the loop uses it:
//
//   #define RELAY_VM_FETCH() ...   // a statement that starts the next
//                                  // instruction, or leaves the loop (goto,
//                                  // return) when the run must stop
//   #define RELAY_VM_OPCODE() ...  // the Opcode of the instruction started
//   RELAY_VM_HANDLER_TABLE = {     // in the function, before the loop
//   #define RELAY_OPCODE RELAY_VM_HANDLER_TABLE_ENTRY
//   #include "vm/bytecode/isa.def"
//   #undef RELAY_OPCODE
//   };
//   RELAY_VM_DISPATCH_BEGIN()
//   RELAY_VM_CASE(kMove) {
//     ...
//     RELAY_VM_NEXT();
//   }
//   ...                            // one handler per opcode
//   RELAY_VM_DISPATCH_END()
//
// The handler table comes from isa.def, as the Opcode enum does, so the two
// cannot disagree, and its size is checked against kOpcodeCount. An opcode
// without a handler is an undefined label (computed goto) or a -Wswitch
// warning (switch). A handler ends with RELAY_VM_NEXT(), by leaving the loop
// (return, goto) or with a [[noreturn]] call: one that falls off its end runs
// into the next handler (-Wimplicit-fallthrough reports it in the switch
// mode). RELAY_VM_NEXT() must not sit in the scope of a local with a
// destructor: Clang rejects an indirect goto out of such a scope and GCC
// silently skips the destructor, so such locals live in an inner block or a
// helper function. Opcodes come from verified bytecode (Verify rejects
// unknown ones), so neither mode checks their range.
#pragma once

#include <cstddef>

#include "vm/bytecode/bytecode.h"

#ifndef RELAY_VM_SWITCH_DISPATCH
#ifdef __GNUC__
#define RELAY_VM_SWITCH_DISPATCH 0
#else
#define RELAY_VM_SWITCH_DISPATCH 1
#endif
#endif

#if defined(__GNUC__)
#define RELAY_VM_UNREACHABLE() __builtin_unreachable()
#elif defined(_MSC_VER)
#define RELAY_VM_UNREACHABLE() __assume(false)
#else
#define RELAY_VM_UNREACHABLE() static_cast<void>(0)
#endif

#if RELAY_VM_SWITCH_DISPATCH

// The switch needs no addresses; the table lists the opcodes instead, which
// keeps the loop's text the same in both modes.
#define RELAY_VM_HANDLER_TABLE \
  [[maybe_unused]] static constexpr ::relay::vm::Opcode relay_vm_handlers[]
#define RELAY_VM_HANDLER_TABLE_ENTRY(name, ...) ::relay::vm::Opcode::k##name,
// RELAY_VM_NEXT() is a goto rather than `continue` so that it means the
// same inside a loop of the handler.
#define RELAY_VM_DISPATCH_BEGIN() \
  RELAY_VM_CHECK_HANDLER_TABLE(); \
  relay_vm_next_instruction:      \
  RELAY_VM_FETCH();               \
  switch (RELAY_VM_OPCODE()) {
#define RELAY_VM_CASE(opcode) case ::relay::vm::Opcode::opcode:
#define RELAY_VM_NEXT() goto relay_vm_next_instruction
#define RELAY_VM_DISPATCH_END() \
  }                             \
  RELAY_VM_UNREACHABLE();

#else  // computed goto

#define RELAY_VM_HANDLER_TABLE static const void* const relay_vm_handlers[]
#define RELAY_VM_HANDLER_TABLE_ENTRY(name, ...) &&relay_vm_handler_k##name,
#define RELAY_VM_DISPATCH_BEGIN() \
  RELAY_VM_CHECK_HANDLER_TABLE(); \
  RELAY_VM_NEXT();                \
  {
#define RELAY_VM_CASE(opcode) relay_vm_handler_##opcode:
#define RELAY_VM_NEXT()                                                   \
  do {                                                                    \
    RELAY_VM_FETCH();                                                     \
    goto* relay_vm_handlers[static_cast<std::size_t>(RELAY_VM_OPCODE())]; \
  } while (false)
#define RELAY_VM_DISPATCH_END() \
  }                             \
  RELAY_VM_UNREACHABLE();

#endif

#define RELAY_VM_CHECK_HANDLER_TABLE()                                                       \
  static_assert(                                                                             \
      sizeof(relay_vm_handlers) / sizeof(relay_vm_handlers[0]) == ::relay::vm::kOpcodeCount, \
      "the handler table has one entry per line of isa.def")

#include "tests/vm/program_generator.h"

#include <random>
#include <vector>

namespace relay::testing {

namespace {

enum class Type { kInt, kBool, kTensor, kList, kOption, kPair, kIntFunction, kIntReference };
constexpr Type kValueTypes[] = {Type::kInt,    Type::kBool, Type::kTensor,      Type::kList,
                                Type::kOption, Type::kPair, Type::kIntReference};

std::string TypeText(Type type) {
  switch (type) {
    case Type::kInt:
      return "int32";
    case Type::kBool:
      return "bool";
    case Type::kTensor:
      return "Tensor[(2, 3), float32]";
    case Type::kList:
      return "List[int32]";
    case Type::kOption:
      return "Option[int32]";
    case Type::kPair:
      return "(int32, bool)";
    case Type::kIntFunction:
      return "fn (int32) -> int32";
    case Type::kIntReference:
      return "ref(int32)";
  }
  return "";
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : random_(seed) {}

  std::string Program() {
    const int results = 2 + Pick(3);
    std::string body = "(";
    std::string type = "(";
    for (int index = 0; index < results; ++index) {
      Type result = kValueTypes[Pick(std::size(kValueTypes))];
      body += (index ? ", " : "") + Expr(result, 4);
      type += (index ? ", " : "") + TypeText(result);
    }
    std::string text = "#[version = \"0.0.5\"]\n";
    for (const std::string& global : globals_) text += global;
    return text + "def @main() -> " + type + ") {\n  " + body + ")\n}\n";
  }

 private:
  int Pick(int choices) { return static_cast<int>(random_() % static_cast<uint64_t>(choices)); }
  bool Chance(int percent) { return Pick(100) < percent; }
  std::string Fresh(const char* prefix) {
    return "%" + std::string(prefix) + std::to_string(++names_);
  }
  std::string Literal() { return std::to_string(Pick(10)); }

  // A variable of `type` in scope, or "".
  std::string VariableOf(Type type) {
    std::vector<const std::string*> candidates;
    for (const auto& [name, bound] : scope_) {
      if (bound == type) candidates.push_back(&name);
    }
    return candidates.empty() ? "" : *candidates[Pick(static_cast<int>(candidates.size()))];
  }

  std::string Leaf(Type type) {
    if (Chance(40)) {
      std::string variable = VariableOf(type);
      if (!variable.empty()) return variable;
    }
    switch (type) {
      case Type::kInt:
        return Literal();
      case Type::kBool:
        return Chance(50) ? "True" : "False";
      case Type::kTensor: {
        const char* forms[] = {"ones(shape=[2, 3], dtype=\"float32\")",
                               "zeros(shape=[2, 3], dtype=\"float32\")",
                               "full(2f, shape=[2, 3], dtype=\"float32\")"};
        return forms[Pick(3)];
      }
      case Type::kList:
        return "Cons(" + Literal() + ", Nil)";
      case Type::kOption:
        return "Some(" + Literal() + ")";
      case Type::kPair:
        return "(" + Literal() + ", " + Leaf(Type::kBool) + ")";
      case Type::kIntFunction: {
        std::string param = Fresh("x");
        return "fn (" + param + ": int32) -> int32 { add(" + param + ", " + Literal() + ") }";
      }
      case Type::kIntReference:
        return "ref(" + Literal() + ")";
    }
    return "";
  }

  // `let NAME = VALUE; BODY`, with NAME in scope for BODY.
  std::string Let(Type bound, int depth, Type result) {
    std::string name = Fresh("v");
    std::string value = bound == Type::kOption && Chance(30) ? "None" : Expr(bound, depth - 1);
    std::string annotation = bound == Type::kOption ? ": Option[int32]" : "";
    scope_.push_back({name, bound});
    std::string body = Expr(result, depth - 1);
    scope_.pop_back();
    return "(let " + name + annotation + " = " + value + ";\n  " + body + ")";
  }

  std::string If(Type type, int depth) {
    return "if (" + Expr(Type::kBool, depth - 1) + ") { " + Expr(type, depth - 1) + " } else { " +
           Expr(type, depth - 1) + " }";
  }

  // A global loop `@loopN(n, acc)` running its generated step n times.
  std::string Loop(int depth) {
    std::string name = "@loop" + std::to_string(++names_);
    std::vector<std::pair<std::string, Type>> outer;
    outer.swap(scope_);
    scope_ = {{"%n", Type::kInt}, {"%acc", Type::kInt}};
    std::string step = Expr(Type::kInt, 2);
    scope_.swap(outer);
    globals_.push_back("def " + name + "(%n: int32, %acc: int32) -> int32 {\n" +
                       "  if (less_equal(%n, 0)) { %acc } else { " + name + "(subtract(%n, 1), " +
                       step + ") }\n}\n");
    return name + "(" + std::to_string(Pick(5)) + ", " + Expr(Type::kInt, depth - 1) + ")";
  }

  // A let-bound loop `%fN(a, b, k)`: a closure that calls itself in tail
  // position with its first two parameters crossed (a parallel move when it
  // compiles to a loop), and may capture the variables around it.
  std::string LocalLoop(int depth) {
    std::string name = Fresh("f"), a = Fresh("a"), b = Fresh("b"), k = Fresh("k");
    scope_.push_back({a, Type::kInt});
    scope_.push_back({b, Type::kInt});
    std::string step = Expr(Type::kInt, 2);
    scope_.pop_back();
    scope_.pop_back();
    return "(let " + name + " = fn (" + a + ": int32, " + b + ": int32, " + k +
           ": int32) -> int32 {\n    if (less_equal(" + k + ", 0)) { subtract(" + a + ", " + b +
           ") } else { " + name + "(" + b + ", " + step + ", subtract(" + k + ", 1)) }\n  };\n  " +
           name + "(" + Expr(Type::kInt, depth - 1) + ", " + Literal() + ", " +
           std::to_string(Pick(5)) + "))";
  }

  std::string Int(int depth) {
    if (Chance(4)) return LocalLoop(depth);
    switch (Pick(12)) {
      case 0:
        return "add(" + Expr(Type::kInt, depth - 1) + ", " + Expr(Type::kInt, depth - 1) + ")";
      case 1:
        return "subtract(" + Expr(Type::kInt, depth - 1) + ", " + Expr(Type::kInt, depth - 1) + ")";
      case 2:
        return "multiply(" + Expr(Type::kInt, depth - 1) + ", " + Expr(Type::kInt, depth - 1) + ")";
      case 3: {
        std::string head = Fresh("h"), tail = Fresh("t");
        std::string list = Expr(Type::kList, depth - 1);
        scope_.push_back({head, Type::kInt});
        scope_.push_back({tail, Type::kList});
        std::string cons = Expr(Type::kInt, depth - 1);
        scope_.pop_back();
        scope_.pop_back();
        return "match (" + list + ") {\n    Cons(" + head + ", " + tail + ") => " + cons +
               ",\n    Nil => " + Expr(Type::kInt, depth - 1) + ",\n  }";
      }
      case 4: {
        std::string inner = Fresh("s");
        std::string option = Expr(Type::kOption, depth - 1);
        scope_.push_back({inner, Type::kInt});
        std::string some = Expr(Type::kInt, depth - 1);
        scope_.pop_back();
        return "match (" + option + ") {\n    Some(" + inner + ") => " + some + ",\n    None => " +
               Expr(Type::kInt, depth - 1) + ",\n  }";
      }
      case 5: {
        std::string function = Fresh("f");
        std::string value = Expr(Type::kIntFunction, depth - 1);
        return "(let " + function + " = " + value + ";\n  " + function + "(" +
               Expr(Type::kInt, depth - 1) + "))";
      }
      case 6:
        return "ref_read(" + Expr(Type::kIntReference, depth - 1) + ")";
      case 7: {
        std::string reference = VariableOf(Type::kIntReference);
        if (reference.empty()) return Let(Type::kIntReference, depth, Type::kInt);
        std::string unit = Fresh("u");
        return "(let " + unit + " = ref_write(" + reference + ", " + Expr(Type::kInt, depth - 1) +
               ");\n  ref_read(" + reference + "))";
      }
      case 8:
        return Chance(50) ? "@length(" + Expr(Type::kList, depth - 1) + ")"
                          : "@sum(" + Expr(Type::kList, depth - 1) + ")";
      case 9:
        return Loop(depth);
      case 10:
        return "(" + Expr(Type::kPair, depth - 1) + ").0";
      default:
        return Let(kValueTypes[Pick(std::size(kValueTypes))], depth, Type::kInt);
    }
  }

  std::string Expr(Type type, int depth) {
    if (depth <= 0) return Leaf(type);
    if (Chance(15)) return Leaf(type);
    if (Chance(10)) return If(type, depth);
    switch (type) {
      case Type::kInt:
        return Int(depth);
      case Type::kBool: {
        const char* comparisons[] = {"equal", "less", "greater_equal"};
        switch (Pick(4)) {
          case 0:
            return "logical_not(" + Expr(Type::kBool, depth - 1) + ")";
          case 1:
            return "logical_and(" + Expr(Type::kBool, depth - 1) + ", " +
                   Expr(Type::kBool, depth - 1) + ")";
          case 2:
            return "(" + Expr(Type::kPair, depth - 1) + ").1";
          default:
            return std::string(comparisons[Pick(3)]) + "(" + Expr(Type::kInt, depth - 1) + ", " +
                   Expr(Type::kInt, depth - 1) + ")";
        }
      }
      case Type::kTensor: {
        const char* binary[] = {"add", "subtract", "multiply"};
        switch (Pick(4)) {
          case 0:
            return "nn.relu(" + Expr(Type::kTensor, depth - 1) + ")";
          case 1:
            return "negative(" + Expr(Type::kTensor, depth - 1) + ")";
          case 2:
            return "multiply(" + Expr(Type::kTensor, depth - 1) + ", " + std::to_string(Pick(4)) +
                   "f)";
          default:
            return std::string(binary[Pick(3)]) + "(" + Expr(Type::kTensor, depth - 1) + ", " +
                   Expr(Type::kTensor, depth - 1) + ")";
        }
      }
      case Type::kList:
        switch (Pick(4)) {
          case 0:
            return "@map(" + Expr(Type::kIntFunction, depth - 1) + ", " +
                   Expr(Type::kList, depth - 1) + ")";
          case 1:
            return "@rev(" + Expr(Type::kList, depth - 1) + ")";
          case 2:
            return "@concat(" + Expr(Type::kList, depth - 1) + ", " + Expr(Type::kList, depth - 1) +
                   ")";
          default:
            return "Cons(" + Expr(Type::kInt, depth - 1) + ", " + Expr(Type::kList, depth - 1) +
                   ")";
        }
      case Type::kOption:
        return "Some(" + Expr(Type::kInt, depth - 1) + ")";
      case Type::kPair:
        return "(" + Expr(Type::kInt, depth - 1) + ", " + Expr(Type::kBool, depth - 1) + ")";
      case Type::kIntFunction: {
        std::string param = Fresh("x");
        scope_.push_back({param, Type::kInt});
        std::string body = Expr(Type::kInt, depth - 1);
        scope_.pop_back();
        return "fn (" + param + ": int32) -> int32 {\n    " + body + "\n  }";
      }
      case Type::kIntReference:
        return "ref(" + Expr(Type::kInt, depth - 1) + ")";
    }
    return Leaf(type);
  }

  std::mt19937_64 random_;
  int names_ = 0;
  std::vector<std::string> globals_;
  std::vector<std::pair<std::string, Type>> scope_;
};

}  // namespace

std::string GenerateProgram(uint64_t seed) {
  return Generator(seed).Program();
}

}  // namespace relay::testing

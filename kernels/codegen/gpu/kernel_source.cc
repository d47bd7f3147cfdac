#include "kernels/codegen/gpu/kernel_source.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <unordered_map>

namespace relay::kernels::gpu {

using namespace relay::kernels::kir;

namespace {

// The C spelling of one dtype in one dialect.
struct TypeNames {
  const char* memory;     // in a buffer
  const char* reg;        // in an expression
  const char* unsigned_;  // the unsigned type of the same width (integers)
  const char* suffix;     // helper-name suffix
};

TypeNames NamesOf(DType dtype, SourceDialect dialect) {
  const bool cl = dialect == SourceDialect::kOpenClC;
  switch (dtype) {
    case DType::kBool:
      return {cl ? "uchar" : "unsigned char", "bool", cl ? "uchar" : "unsigned char", "bool"};
    case DType::kInt8:
      return {cl ? "char" : "signed char", cl ? "char" : "signed char",
              cl ? "uchar" : "unsigned char", "i8"};
    case DType::kInt16:
      return {"short", "short", cl ? "ushort" : "unsigned short", "i16"};
    case DType::kInt32:
      return {"int", "int", cl ? "uint" : "unsigned int", "i32"};
    case DType::kInt64:
      return {cl ? "long" : "long long", cl ? "long" : "long long",
              cl ? "ulong" : "unsigned long long", "i64"};
    case DType::kUInt8:
      return {cl ? "uchar" : "unsigned char", cl ? "uchar" : "unsigned char",
              cl ? "uchar" : "unsigned char", "u8"};
    case DType::kUInt16:
      return {cl ? "ushort" : "unsigned short", cl ? "ushort" : "unsigned short",
              cl ? "ushort" : "unsigned short", "u16"};
    case DType::kUInt32:
      return {cl ? "uint" : "unsigned int", cl ? "uint" : "unsigned int",
              cl ? "uint" : "unsigned int", "u32"};
    case DType::kUInt64:
      return {cl ? "ulong" : "unsigned long long", cl ? "ulong" : "unsigned long long",
              cl ? "ulong" : "unsigned long long", "u64"};
    case DType::kFloat16:
      return {cl ? "half" : "unsigned short", "float", "", "f16"};
    case DType::kFloat32:
      return {"float", "float", "", "f32"};
    case DType::kFloat64:
      return {"double", "double", "", "f64"};
  }
  RELAY_UNREACHABLE("dtype without a C type");
}

// The smallest and one past the largest value of an integer dtype, as
// doubles (exact: powers of two), for saturating conversions.
std::pair<double, double> IntegerRange(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return {-128.0, 128.0};
    case DType::kInt16:
      return {-32768.0, 32768.0};
    case DType::kInt32:
      return {-2147483648.0, 2147483648.0};
    case DType::kInt64:
      return {-9223372036854775808.0, 9223372036854775808.0};
    case DType::kUInt8:
      return {0.0, 256.0};
    case DType::kUInt16:
      return {0.0, 65536.0};
    case DType::kUInt32:
      return {0.0, 4294967296.0};
    case DType::kUInt64:
      return {0.0, 18446744073709551616.0};
    default:
      RELAY_UNREACHABLE("not an integer dtype");
  }
}

class Emitter {
 public:
  Emitter(const Kernel& kernel, SourceDialect dialect) : kernel_(kernel), dialect_(dialect) {}

  KernelSource Run() {
    std::string signature;
    std::string prologue;
    for (size_t index = 0; index < kernel_.params.size(); ++index) {
      const Buffer& buffer = kernel_.params[index];
      const std::string name = "p" + std::to_string(index);
      buffers_[buffer.get()] = {name, true};
      const std::string type = Names(buffer->dtype).memory;
      if (!signature.empty()) signature += ",\n    ";
      if (cl()) {
        signature += "__global " + type + "* " + name + "_base, long " + name + "_offset";
        prologue += "  __global " + type + "* restrict " + name + " = (__global " + type +
                    "*)((__global char*)" + name + "_base + " + name + "_offset);\n";
      } else {
        signature += type + "* __restrict__ " + name;
      }
    }
    for (size_t index = 0; index < kernel_.dims.size(); ++index) {
      const std::string name = "d" + std::to_string(index);
      vars_[kernel_.dims[index].get()] = name;
      if (!signature.empty()) signature += ",\n    ";
      signature += IndexType() + " " + name;
    }
    indent_ = 1;
    Stmt body = kernel_.body;
    Expr thread_count = Int(1);
    if (const auto* loop = As<ForNode>(body); loop && loop->kind == ForKind::kDeviceGroups) {
      thread_count = Multiply(loop->extent, Int(LanesPerGroup(loop->body)));
      const std::string var = Bind(loop->var);
      Line(IndexType() + " " + var + " = " +
           (cl() ? std::string("(long)get_group_id(0)") : std::string("(long long)blockIdx.x")) +
           ";");
      body = loop->body;
    } else if (const auto* loop = As<ForNode>(body);
               loop && loop->kind == ForKind::kDeviceThreads) {
      thread_count = loop->extent;
      const std::string var = Bind(loop->var);
      Line(IndexType() + " " + var + " = " +
           (cl() ? std::string("(long)get_global_id(0)")
                 : std::string("(long long)blockIdx.x * blockDim.x + threadIdx.x")) +
           ";");
      const std::string extent = Emit(loop->extent);
      Line("if (" + var + " >= " + extent + ") return;");
      body = loop->body;
    } else {
      Line("if (" +
           std::string(cl() ? "get_global_id(0)" : "blockIdx.x * blockDim.x + threadIdx.x") +
           " != 0) return;");
    }
    EmitStatement(body);

    std::string text = "// " + kernel_.name + "\n";
    if (cl() && uses_double_) text += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    for (const auto& [name, helper] : helpers_) text += helper;
    // Work-groups of exactly kGroupLanes lanes: a launch with others is an
    // error, never a wrong reduction.
    const bool grouped = As<ForNode>(kernel_.body) != nullptr &&
                         As<ForNode>(kernel_.body)->kind == ForKind::kDeviceGroups;
    const std::string lanes = std::to_string(kGroupLanes);
    if (cl()) {
      text += grouped ? "__kernel __attribute__((reqd_work_group_size(" + lanes + ", 1, 1))) void "
                      : "__kernel void ";
    } else {
      text += grouped ? "extern \"C\" __global__ void __launch_bounds__(" + lanes + ") "
                      : "extern \"C\" __global__ void ";
    }
    text += std::string(kKernelEntry) + "(\n    " + signature + ") {\n" + prologue +
            shared_declarations_ + body_ + "}\n";
    return {std::move(text), thread_count};
  }

 private:
  struct BufferName {
    std::string name;
    bool param;  // in global memory (else a thread's private scratch)
  };

  bool cl() const { return dialect_ == SourceDialect::kOpenClC; }

  // The constant extent of the lanes loop inside a device-groups loop (past
  // the group's shared allocations and index lets): the threads a group
  // launches.
  static int64_t LanesPerGroup(Stmt body) {
    for (;;) {
      if (const auto* allocate = As<AllocateNode>(body)) {
        body = allocate->body;
      } else if (const auto* let = As<LetStmtNode>(body)) {
        body = let->body;
      } else {
        break;
      }
    }
    const auto* lanes = As<ForNode>(body);
    RELAY_CHECK(lanes != nullptr && lanes->kind == ForKind::kDeviceLanes,
                "a device-groups loop holds its lanes loop");
    const auto* extent = As<IntImmNode>(lanes->extent);
    RELAY_CHECK(extent != nullptr && extent->value == kGroupLanes,
                "a work-group has " + std::to_string(kGroupLanes) + " lanes");
    return extent->value;
  }
  std::string IndexType() const { return cl() ? "long" : "long long"; }
  TypeNames Names(DType dtype) {
    if (dtype == DType::kFloat64) uses_double_ = true;
    return NamesOf(dtype, dialect_);
  }
  std::string Reg(DType dtype) { return Names(dtype).reg; }
  // Qualifiers of a helper function.
  std::string HelperPrefix() const {
    return cl() ? "static inline " : "static __device__ __forceinline__ ";
  }

  void Line(const std::string& text) {
    body_.append(size_t(indent_) * 2, ' ');
    body_ += text;
    body_ += '\n';
  }

  std::string Fresh(const char* stem) { return stem + std::to_string(temporary_count_++); }

  // Names `var` in the statements emitted next. A variable bound again (a
  // reduction's axes, reused by a reduction nested inside it) gets a new
  // name, and Unbind gives the outer binding back.
  std::string Bind(const Var& var) {
    std::string name = "i" + std::to_string(binding_count_++);
    auto [position, inserted] = vars_.try_emplace(var.get(), name);
    if (!inserted) {
      shadowed_.emplace_back(var.get(), position->second);
      position->second = name;
    } else {
      shadowed_.emplace_back(var.get(), std::string());
    }
    return name;
  }
  void Unbind() {
    auto [var, outer] = std::move(shadowed_.back());
    shadowed_.pop_back();
    if (outer.empty()) {
      vars_.erase(var);
    } else {
      vars_[var] = std::move(outer);
    }
  }

  void Helper(const std::string& name, const std::string& text) {
    if (!helpers_.count(name)) helpers_[name] = text;
  }

  // ---- literals --------------------------------------------------------------------

  std::string IntLiteral(int64_t value, DType dtype) {
    if (dtype == DType::kBool) return value != 0 ? "true" : "false";
    std::string digits;
    if (value == std::numeric_limits<int64_t>::min()) {
      digits = cl() ? "(-9223372036854775807L - 1L)" : "(-9223372036854775807LL - 1LL)";
    } else if (dtype == DType::kInt64) {
      digits = "(" + std::to_string(value) + (cl() ? "L" : "LL") + ")";
    } else if (value == std::numeric_limits<int32_t>::min()) {
      digits = "(-2147483647 - 1)";
    } else {
      digits = "(" + std::to_string(value) + ")";
    }
    if (dtype == DType::kInt64 || dtype == DType::kInt32) return digits;
    return "((" + Reg(dtype) + ")" + digits + ")";
  }

  std::string FloatLiteral(double value, DType dtype) {
    const bool is_double = dtype == DType::kFloat64;
    if (is_double) uses_double_ = true;
    if (std::isnan(value)) {
      if (cl()) return is_double ? "((double)NAN)" : "NAN";
      return is_double ? "__longlong_as_double(0x7ff8000000000000LL)"
                       : "__int_as_float(0x7fc00000)";
    }
    if (std::isinf(value)) {
      const std::string sign = value < 0 ? "-" : "";
      if (cl()) return "(" + sign + (is_double ? "(double)INFINITY" : "INFINITY") + ")";
      return "(" + sign +
             (is_double ? "__longlong_as_double(0x7ff0000000000000LL)"
                        : "__int_as_float(0x7f800000)") +
             ")";
    }
    char text[64];
    if (is_double) {
      std::snprintf(text, sizeof text, "(%a)", value);
    } else {
      std::snprintf(text, sizeof text, "(%af)", double(float(value)));
    }
    return text;
  }

  // ---- helpers ------------------------------------------------------------------

  // NaN-propagating min or max of two floats: a NaN first operand is the
  // result, and a NaN second one wins the comparison.
  std::string FloatExtreme(bool maximum, DType dtype) {
    const std::string type = Reg(dtype);
    const std::string name =
        std::string(maximum ? "relay_max_" : "relay_min_") + Names(dtype).suffix;
    Helper(name, HelperPrefix() + type + " " + name + "(" + type + " a, " + type +
                     " b) { return a != a ? a : (a " + (maximum ? ">" : "<") + " b ? a : b); }\n");
    return name;
  }

  // Integer division and remainder that never trap (see kernel_source.h).
  std::string IntegerDivision(BinaryOp op, DType dtype) {
    const TypeNames names = Names(dtype);
    const std::string type = names.reg;
    const char* stem = op == BinaryOp::kDivide        ? "relay_div_"
                       : op == BinaryOp::kFloorDivide ? "relay_floordiv_"
                       : op == BinaryOp::kFloorMod    ? "relay_floormod_"
                                                      : "relay_truncmod_";
    const std::string name = stem + std::string(names.suffix);
    std::string body;
    if (!IsSignedInteger(dtype)) {
      const bool remainder = op == BinaryOp::kFloorMod || op == BinaryOp::kTruncMod;
      body = std::string("if (b == 0) return 0; return a ") + (remainder ? "%" : "/") + " b;";
    } else {
      // a / -1 is -a, wrapping for the smallest value; a % -1 is 0.
      const std::string negated = "(" + type + ")(0 - (" + names.unsigned_ + ")a)";
      switch (op) {
        case BinaryOp::kDivide:
          body = "if (b == 0) return 0; if (b == -1) return " + negated + "; return a / b;";
          break;
        case BinaryOp::kTruncMod:
          body = "if (b == 0 || b == -1) return 0; return a % b;";
          break;
        case BinaryOp::kFloorDivide:
          body = "if (b == 0) return 0; if (b == -1) return " + negated + "; " + type +
                 " q = a / b; " + type + " r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? (" +
                 type + ")(q - 1) : q;";
          break;
        default:  // kFloorMod
          body = "if (b == 0 || b == -1) return 0; " + type +
                 " r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? (" + type + ")(r + b) : r;";
          break;
      }
    }
    Helper(name, HelperPrefix() + type + " " + name + "(" + type + " a, " + type + " b) { " + body +
                     " }\n");
    return name;
  }

  // A float converted to an integer dtype, clamped to its range; NaN is 0.
  std::string SaturatingCast(DType from, DType to) {
    const std::string source = Reg(from);
    const std::string target = Reg(to);
    const std::string name =
        std::string("relay_sat_") + Names(to).suffix + "_" + Names(from).suffix;
    const auto [lowest, past_highest] = IntegerRange(to);
    const DType bound_dtype = from == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
    const std::string lower = FloatLiteral(lowest, bound_dtype);
    const std::string upper = FloatLiteral(past_highest, bound_dtype);
    const std::string highest =
        to == DType::kUInt8    ? "255"
        : to == DType::kUInt64 ? (cl() ? "18446744073709551615UL" : "18446744073709551615ULL")
        : to == DType::kUInt32 ? "4294967295U"
        : to == DType::kInt64  ? (cl() ? "9223372036854775807L" : "9223372036854775807LL")
                               : std::to_string(int64_t(past_highest) - 1);
    const std::string smallest =
        to == DType::kInt64   ? IntLiteral(std::numeric_limits<int64_t>::min(), to)
        : to == DType::kInt32 ? IntLiteral(std::numeric_limits<int32_t>::min(), to)
                              : "(" + std::to_string(int64_t(lowest)) + ")";
    Helper(name, HelperPrefix() + target + " " + name + "(" + source +
                     " x) { if (x != x) return 0; if (x <= " + lower + ") return (" + target + ")" +
                     smallest + "; if (x >= " + upper + ") return (" + target + ")" + highest +
                     "; return (" + target + ")x; }\n");
    return name;
  }

  // CUDA: IEEE half to and from float or double, exactly as the hardware
  // converts (round to nearest even).
  std::string CudaHalfToFloat() {
    Helper("relay_h2f",
           HelperPrefix() +
               "float relay_h2f(unsigned short h) { float f; asm(\"cvt.f32.f16 %0, %1;\" "
               ": \"=f\"(f) : \"h\"(h)); return f; }\n");
    return "relay_h2f";
  }
  std::string CudaToHalf(DType from) {
    if (from == DType::kFloat64) {
      Helper("relay_d2h",
             HelperPrefix() +
                 "unsigned short relay_d2h(double d) { unsigned short h; "
                 "asm(\"cvt.rn.f16.f64 %0, %1;\" : \"=h\"(h) : \"d\"(d)); return h; }\n");
      return "relay_d2h";
    }
    Helper("relay_f2h",
           HelperPrefix() +
               "unsigned short relay_f2h(float f) { unsigned short h; "
               "asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n");
    return "relay_f2h";
  }

  // A math function of a float dtype: OpenCL's built-ins are overloaded,
  // CUDA's float versions carry an f.
  std::string MathFunction(const char* name, DType dtype) {
    if (cl() || dtype == DType::kFloat64) return name;
    return std::string(name) + "f";
  }

  // ---- expressions --------------------------------------------------------------

  // The C expression for `expr`; reductions inside it are emitted as loop
  // nests (lines) before the statement that uses the expression.
  std::string Emit(const Expr& expr) {
    switch (expr->node_kind()) {
      case NodeKind::kIntImm:
        return IntLiteral(As<IntImmNode>(expr)->value, expr->dtype);
      case NodeKind::kFloatImm: {
        // float16 values are computed in float.
        const DType dtype = expr->dtype == DType::kFloat16 ? DType::kFloat32 : expr->dtype;
        return FloatLiteral(As<FloatImmNode>(expr)->value, dtype);
      }
      case NodeKind::kVar: {
        auto found = vars_.find(As<VarNode>(expr));
        RELAY_CHECK(found != vars_.end(),
                    "kernel uses variable " + As<VarNode>(expr)->name + " unbound");
        return found->second;
      }
      case NodeKind::kLoad: {
        const auto* load = As<LoadNode>(expr);
        const BufferName& buffer = BufferOf(load->buffer);
        const std::string index = Emit(load->index);
        if (!buffer.param) return buffer.name + "[" + index + "]";
        switch (load->buffer->dtype) {
          case DType::kBool:
            return "(" + buffer.name + "[" + index + "] != 0)";
          case DType::kFloat16:
            return cl() ? "vload_half(" + index + ", " + buffer.name + ")"
                        : CudaHalfToFloat() + "(" + buffer.name + "[" + index + "])";
          default:
            return buffer.name + "[" + index + "]";
        }
      }
      case NodeKind::kBinary: {
        const auto* binary = As<BinaryNode>(expr);
        return EmitBinary(binary->op, binary->a->dtype, Emit(binary->a), Emit(binary->b));
      }
      case NodeKind::kUnary: {
        const auto* unary = As<UnaryNode>(expr);
        return EmitUnary(unary->op, unary->a->dtype, Emit(unary->a));
      }
      case NodeKind::kSelect: {
        const auto* select = As<SelectNode>(expr);
        const std::string condition = Emit(select->condition);
        const std::string if_true = Emit(select->if_true);
        const std::string if_false = Emit(select->if_false);
        return "(" + condition + " ? " + if_true + " : " + if_false + ")";
      }
      case NodeKind::kCast: {
        const auto* cast = As<CastNode>(expr);
        return EmitCast(Emit(cast->value), cast->value->dtype, cast->dtype);
      }
      case NodeKind::kReduce:
        return EmitReduce(As<ReduceNode>(expr));
      default:
        RELAY_UNREACHABLE("a kernel statement used as an expression");
    }
  }

  const BufferName& BufferOf(const Buffer& buffer) {
    auto found = buffers_.find(buffer.get());
    RELAY_CHECK(found != buffers_.end(),
                "kernel uses buffer " + buffer->name + " it does not declare");
    return found->second;
  }

  // Integer arithmetic that may overflow wraps, as on the CPU: int32 goes
  // through its unsigned type (signed overflow is undefined in C); narrower
  // types compute in int and wrap on conversion back. Index arithmetic
  // (int64) never overflows and stays plain, so compilers can fold it.
  // A shift defined for every amount, as the CPU's: an amount outside
  // [0, width) leaves 0, or the sign's bits for a right shift of a signed
  // value. The bits move as unsigned (C leaves signed left shifts of
  // negative values undefined).
  std::string Shift(bool left, DType dtype) {
    const TypeNames names = Names(dtype);
    const std::string name = std::string(left ? "relay_shl_" : "relay_shr_") + names.suffix;
    const std::string type = names.reg;
    const std::string unsigned_type = names.unsigned_;
    const std::string width = std::to_string(DTypeSize(dtype) * 8);
    const std::string in_range = "(" + unsigned_type + ")b < " + width;
    std::string body;
    if (left) {
      body = "return " + in_range + " ? (" + type + ")((" + unsigned_type + ")a << b) : (" + type +
             ")0;";
    } else if (IsSignedInteger(dtype)) {
      body = "return " + in_range + " ? (" + type + ")(a >> b) : (" + type + ")(a < 0 ? -1 : 0);";
    } else {
      body = "return " + in_range + " ? (" + type + ")(a >> b) : (" + type + ")0;";
    }
    Helper(name, HelperPrefix() + type + " " + name + "(" + type + " a, " + type + " b) { " + body +
                     " }\n");
    return name;
  }

  std::string Wrapping(const char* op, DType dtype, const std::string& a, const std::string& b) {
    const TypeNames names = Names(dtype);
    if (dtype == DType::kInt32) {
      return "((int)((" + std::string(names.unsigned_) + ")" + a + " " + op + " (" +
             names.unsigned_ + ")" + b + "))";
    }
    if (dtype == DType::kInt64) return "(" + a + " " + op + " " + b + ")";
    return "((" + std::string(names.reg) + ")(" + a + " " + op + " " + b + "))";
  }

  std::string EmitBinary(BinaryOp op, DType dtype, const std::string& a, const std::string& b) {
    if (IsFloat(dtype)) {
      const DType computed = dtype == DType::kFloat16 ? DType::kFloat32 : dtype;
      switch (op) {
        case BinaryOp::kAdd:
          return "(" + a + " + " + b + ")";
        case BinaryOp::kSubtract:
          return "(" + a + " - " + b + ")";
        case BinaryOp::kMultiply:
          return "(" + a + " * " + b + ")";
        case BinaryOp::kDivide:
          return "(" + a + " / " + b + ")";
        case BinaryOp::kFloorDivide:
          return MathFunction("floor", computed) + "(" + a + " / " + b + ")";
        case BinaryOp::kTruncMod:
          return MathFunction("fmod", computed) + "(" + a + ", " + b + ")";
        case BinaryOp::kFloorMod: {
          const std::string name = std::string("relay_floormod_") + Names(computed).suffix;
          const std::string type = Reg(computed);
          Helper(name, HelperPrefix() + type + " " + name + "(" + type + " a, " + type +
                           " b) { return a - " + MathFunction("floor", computed) +
                           "(a / b) * b; }\n");
          return name + "(" + a + ", " + b + ")";
        }
        case BinaryOp::kMinimum:
        case BinaryOp::kMaximum:
          return FloatExtreme(op == BinaryOp::kMaximum, computed) + "(" + a + ", " + b + ")";
        case BinaryOp::kPower:
          return MathFunction("pow", computed) + "(" + a + ", " + b + ")";
        default:
          break;
      }
    } else {
      switch (op) {
        case BinaryOp::kAdd:
          return Wrapping("+", dtype, a, b);
        case BinaryOp::kSubtract:
          return Wrapping("-", dtype, a, b);
        case BinaryOp::kMultiply:
          return Wrapping("*", dtype, a, b);
        case BinaryOp::kDivide:
        case BinaryOp::kFloorDivide:
        case BinaryOp::kFloorMod:
        case BinaryOp::kTruncMod:
          return IntegerDivision(op, dtype) + "(" + a + ", " + b + ")";
        case BinaryOp::kMinimum:
          return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
        case BinaryOp::kMaximum:
          return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
        case BinaryOp::kPower:
          // In double, exact enough for the integer ranges involved, then
          // saturated as the CPU does.
          return SaturatingCast(DType::kFloat64, dtype) + "(" +
                 MathFunction("pow", DType::kFloat64) + "((double)" + a + ", (double)" + b + "))";
        case BinaryOp::kShiftLeft:
        case BinaryOp::kShiftRight:
          return Shift(op == BinaryOp::kShiftLeft, dtype) + "(" + a + ", " + b + ")";
        case BinaryOp::kAnd:
          return "(" + a + " && " + b + ")";
        case BinaryOp::kOr:
          return "(" + a + " || " + b + ")";
        default:
          break;
      }
    }
    // Comparisons, the same for every dtype (IEEE: false with a NaN, but !=).
    std::string text(BinaryOpText(op));
    RELAY_CHECK(IsComparison(op), "operator " + text + " on " + std::string(DTypeName(dtype)));
    return "(" + a + " " + text + " " + b + ")";
  }

  std::string EmitUnary(UnaryOp op, DType dtype, const std::string& a) {
    const bool is_float = IsFloat(dtype);
    const DType computed = dtype == DType::kFloat16 ? DType::kFloat32 : dtype;
    auto math = [&](const char* name) { return MathFunction(name, computed) + "(" + a + ")"; };
    switch (op) {
      case UnaryOp::kNegate:
        if (is_float) return "(-" + a + ")";
        return Wrapping("-", dtype, IntLiteral(0, dtype), a);
      case UnaryOp::kAbs:
        if (is_float) return math("fabs");
        if (!IsSignedInteger(dtype)) return a;
        return "(" + a + " < 0 ? " + Wrapping("-", dtype, IntLiteral(0, dtype), a) + " : " + a +
               ")";
      case UnaryOp::kExp:
        return math("exp");
      case UnaryOp::kLog:
        return math("log");
      case UnaryOp::kSqrt:
        return math("sqrt");
      case UnaryOp::kTanh:
        return math("tanh");
      case UnaryOp::kErf:
        return math("erf");
      case UnaryOp::kFloor:
        return is_float ? math("floor") : a;
      case UnaryOp::kCeil:
        return is_float ? math("ceil") : a;
      case UnaryOp::kRound:  // halves to even, as NumPy
        return is_float ? math("rint") : a;
      case UnaryOp::kSin:
        return math("sin");
      case UnaryOp::kCos:
        return math("cos");
      case UnaryOp::kTan:
        return math("tan");
      case UnaryOp::kAsin:
        return math("asin");
      case UnaryOp::kAcos:
        return math("acos");
      case UnaryOp::kAtan:
        return math("atan");
      case UnaryOp::kSinh:
        return math("sinh");
      case UnaryOp::kCosh:
        return math("cosh");
      case UnaryOp::kNot:
        return "(!" + a + ")";
    }
    RELAY_UNREACHABLE("unknown unary kernel operator");
  }

  std::string EmitCast(const std::string& value, DType from, DType to) {
    if (from == to) return value;
    if (to == DType::kBool) return "(" + value + " != 0)";  // NaN is true, as on the CPU
    const bool from_float = IsFloat(from);
    if (from_float && !IsFloat(to))
      return SaturatingCast(from == DType::kFloat16 ? DType::kFloat32 : from, to) + "(" + value +
             ")";
    return "((" + Reg(to) + ")" + value + ")";
  }

  std::string EmitReduce(const ReduceNode* reduce) {
    const DType dtype = reduce->body->dtype;
    const std::string type = Reg(dtype);
    const bool is_arg = reduce->op == ReduceOp::kArgMin || reduce->op == ReduceOp::kArgMax;
    std::vector<std::string> extents;
    for (const Expr& extent : reduce->extents) extents.push_back(Emit(extent));
    const std::string accumulator = Fresh("acc");
    Line(type + " " + accumulator + " = " + Emit(reduce->init) + ";");
    std::string best, position;
    if (is_arg) {
      best = Fresh("best");
      position = Fresh("pos");
      Line(IndexType() + " " + best + " = 0, " + position + " = 0;");
    }
    for (size_t axis = 0; axis < reduce->axes.size(); ++axis) {
      const std::string var = Bind(reduce->axes[axis]);
      Line("for (" + IndexType() + " " + var + " = 0; " + var + " < " + extents[axis] + "; ++" +
           var + ") {");
      ++indent_;
    }
    const std::string value = Fresh("v");
    Line(type + " " + value + " = " + Emit(reduce->body) + ";");
    if (!is_arg) {
      Line(accumulator + " = " + Combine(reduce->op, dtype, accumulator, value) + ";");
    } else {
      Line("if (" + ArgTakes(reduce, value, accumulator) + ") { " + accumulator + " = " + value +
           "; " + best + " = " + position + "; }");
      Line("++" + position + ";");
    }
    for (size_t axis = 0; axis < reduce->axes.size(); ++axis) {
      --indent_;
      Line("}");
      Unbind();
    }
    return is_arg ? "((int)" + best + ")" : accumulator;
  }

  std::string Combine(ReduceOp op, DType dtype, const std::string& accumulator,
                      const std::string& value) {
    const DType computed = dtype == DType::kFloat16 ? DType::kFloat32 : dtype;
    switch (op) {
      case ReduceOp::kSum:
        if (dtype == DType::kBool) return "(" + accumulator + " != " + value + ")";  // i1 add
        return EmitBinary(BinaryOp::kAdd, dtype, accumulator, value);
      case ReduceOp::kProduct:
        if (dtype == DType::kBool) return "(" + accumulator + " && " + value + ")";
        return EmitBinary(BinaryOp::kMultiply, dtype, accumulator, value);
      case ReduceOp::kMinimum:
        if (dtype == DType::kBool) return "(" + accumulator + " && " + value + ")";
        return EmitBinary(BinaryOp::kMinimum, computed, accumulator, value);
      case ReduceOp::kMaximum:
        if (dtype == DType::kBool) return "(" + accumulator + " || " + value + ")";
        return EmitBinary(BinaryOp::kMaximum, computed, accumulator, value);
      default:
        RELAY_UNREACHABLE("arg reductions take positions");
    }
  }

  // Whether `value` replaces the best so far, as the CPU decides: strictly
  // better (or as good, selecting the last), and a NaN is the extremum (the
  // first NaN, or the last one when selecting the last).
  std::string ArgTakes(const ReduceNode* reduce, const std::string& value,
                       const std::string& best) {
    const bool is_max = reduce->op == ReduceOp::kArgMax;
    const bool last = reduce->select_last;
    const std::string comparison =
        "(" + value + (is_max ? (last ? " >= " : " > ") : (last ? " <= " : " < ")) + best + ")";
    if (!IsFloat(reduce->body->dtype)) return comparison;
    const std::string nan_wins =
        last ? "(" + value + " != " + value + ")"
             : "(" + value + " != " + value + " && " + best + " == " + best + ")";
    return "(" + comparison + " || " + nan_wins + ")";
  }

  // ---- statements ------------------------------------------------------------------

  void EmitStatement(const Stmt& stmt) {
    switch (stmt->node_kind()) {
      case NodeKind::kFor: {
        const auto* loop = As<ForNode>(stmt);
        RELAY_CHECK(loop->kind != ForKind::kDeviceThreads && loop->kind != ForKind::kDeviceGroups,
                    "a device-threads or device-groups loop must be a kernel's outermost "
                    "statement");
        if (loop->kind == ForKind::kDeviceLanes) {
          // Its extent is the group size the launch uses: every lane runs.
          Line("{");
          ++indent_;
          Line(IndexType() + " " + Bind(loop->var) + " = " +
               (cl() ? std::string("(long)get_local_id(0)")
                     : std::string("(long long)threadIdx.x")) +
               ";");
          EmitStatement(loop->body);
          Unbind();
          --indent_;
          Line("}");
          return;
        }
        const std::string extent = Emit(loop->extent);
        const std::string var = Bind(loop->var);
        Line("for (" + IndexType() + " " + var + " = 0; " + var + " < " + extent + "; ++" + var +
             ") {");
        ++indent_;
        EmitStatement(loop->body);
        --indent_;
        Line("}");
        Unbind();
        return;
      }
      case NodeKind::kStore: {
        const auto* store = As<StoreNode>(stmt);
        // Reductions in the index or value emit their loops in a block of
        // their own, before the store.
        Line("{");
        ++indent_;
        const BufferName& buffer = BufferOf(store->buffer);
        const std::string index = Emit(store->index);
        const std::string value = Emit(store->value);
        const std::string element = buffer.name + "[" + index + "]";
        if (!buffer.param) {
          Line(element + " = " + value + ";");
        } else if (store->buffer->dtype == DType::kBool) {
          Line(element + " = (" + std::string(Names(DType::kBool).memory) + ")(" + value + ");");
        } else if (store->buffer->dtype == DType::kFloat16) {
          Line(cl() ? "vstore_half(" + value + ", " + index + ", " + buffer.name + ");"
                    : element + " = " +
                          CudaToHalf(store->value->dtype == DType::kFloat64 ? DType::kFloat64
                                                                            : DType::kFloat32) +
                          "(" + value + ");");
        } else {
          Line(element + " = " + value + ";");
        }
        --indent_;
        Line("}");
        return;
      }
      case NodeKind::kSequence:
        for (const Stmt& statement : As<SequenceNode>(stmt)->statements) EmitStatement(statement);
        return;
      case NodeKind::kIfThenElse: {
        const auto* branch = As<IfThenElseNode>(stmt);
        Line("{");
        ++indent_;
        Line("if (" + Emit(branch->condition) + ") {");
        ++indent_;
        EmitStatement(branch->then_body);
        --indent_;
        if (branch->else_body) {
          Line("} else {");
          ++indent_;
          EmitStatement(branch->else_body);
          --indent_;
        }
        Line("}");
        --indent_;
        Line("}");
        return;
      }
      case NodeKind::kAllocate: {
        const auto* allocate = As<AllocateNode>(stmt);
        const Expr element_count = ElementCount(allocate->buffer);
        const auto* count = As<IntImmNode>(element_count);
        RELAY_CHECK(count != nullptr,
                    "scratch buffer " + allocate->buffer->name + " of symbolic size");
        const std::string name = Fresh("s");
        buffers_[allocate->buffer.get()] = {name, false};
        if (allocate->scope == MemoryScope::kShared) {
          // OpenCL wants __local arrays at the kernel's outermost scope.
          shared_declarations_ += std::string("  ") + (cl() ? "__local " : "__shared__ ") +
                                  Reg(allocate->buffer->dtype) + " " + name + "[" +
                                  std::to_string(std::max<int64_t>(count->value, 1)) + "];\n";
          EmitStatement(allocate->body);
          return;
        }
        Line("{");
        ++indent_;
        Line(Reg(allocate->buffer->dtype) + " " + name + "[" +
             std::to_string(std::max<int64_t>(count->value, 1)) + "];");
        EmitStatement(allocate->body);
        --indent_;
        Line("}");
        return;
      }
      case NodeKind::kLetStmt: {
        const auto* let = As<LetStmtNode>(stmt);
        Line("{");
        ++indent_;
        const std::string value = Emit(let->value);
        Line(IndexType() + " " + Bind(let->var) + " = " + value + ";");
        EmitStatement(let->body);
        Unbind();
        --indent_;
        Line("}");
        return;
      }
      case NodeKind::kPrefetch:
        return;  // a hint for the CPU's caches
      case NodeKind::kBarrier:
        Line(cl() ? "barrier(CLK_LOCAL_MEM_FENCE);" : "__syncthreads();");
        return;
      default:
        RELAY_UNREACHABLE("an expression used as a kernel statement");
    }
  }

  const Kernel& kernel_;
  const SourceDialect dialect_;
  std::unordered_map<const VarNode*, std::string> vars_;
  // Per binding, innermost last: the variable and the name it had before
  // ("" for none).
  std::vector<std::pair<const VarNode*, std::string>> shadowed_;
  int binding_count_ = 0;
  std::unordered_map<const BufferNode*, BufferName> buffers_;
  std::map<std::string, std::string> helpers_;  // by name, printed in name order
  std::string body_;
  std::string shared_declarations_;  // a work-group's shared scratch, at the kernel's top
  int indent_ = 0;
  int temporary_count_ = 0;
  bool uses_double_ = false;
};

}  // namespace

KernelSource EmitKernelSource(const Kernel& kernel, SourceDialect dialect) {
  return Emitter(kernel, dialect).Run();
}

int64_t EvaluateIndexExpr(const Expr& expr, std::span<const Var> dims,
                          std::span<const int64_t> dim_values) {
  switch (expr->node_kind()) {
    case NodeKind::kIntImm:
      return As<IntImmNode>(expr)->value;
    case NodeKind::kVar:
      for (size_t index = 0; index < dims.size() && index < dim_values.size(); ++index) {
        if (dims[index].get() == As<VarNode>(expr)) return dim_values[index];
      }
      throw Error(ErrorKind::kUsage, "index expression mentions " + As<VarNode>(expr)->name +
                                         ", which is not a dimension of the kernel");
    case NodeKind::kBinary: {
      const auto* binary = As<BinaryNode>(expr);
      const int64_t a = EvaluateIndexExpr(binary->a, dims, dim_values);
      const int64_t b = EvaluateIndexExpr(binary->b, dims, dim_values);
      switch (binary->op) {
        case BinaryOp::kAdd:
          return a + b;
        case BinaryOp::kSubtract:
          return a - b;
        case BinaryOp::kMultiply:
          return a * b;
        case BinaryOp::kFloorDivide: {
          if (b == 0) return 0;
          const int64_t quotient = a / b;
          return (a % b != 0 && ((a % b < 0) != (b < 0))) ? quotient - 1 : quotient;
        }
        case BinaryOp::kFloorMod: {
          if (b == 0) return 0;
          const int64_t remainder = a % b;
          return (remainder != 0 && ((remainder < 0) != (b < 0))) ? remainder + b : remainder;
        }
        case BinaryOp::kMinimum:
          return std::min(a, b);
        case BinaryOp::kMaximum:
          return std::max(a, b);
        default:
          break;
      }
      break;
    }
    default:
      break;
  }
  throw Error(ErrorKind::kUsage, "not an index expression: " + PrintExpr(expr));
}

}  // namespace relay::kernels::gpu

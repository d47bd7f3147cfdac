#include "vm/bytecode/executable_file.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>

#include "kernels/operator.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "vm/core/zip_archive.h"

namespace relay::vm {

namespace {

constexpr std::array<uint8_t, 8> kMagic = {0x89, 'R', 'B', 'C', 0x0D, 0x0A, 0x1A, 0x0A};

enum class SectionId : uint32_t {
  kStrings = 1,
  kConstants = 2,
  kKernels = 3,
  kConstructors = 4,
  kFunctions = 5,
  kDebug = 6,   // optional
  kDevice = 7,  // optional
};
// Sections 1 .. kRequiredSectionCount are always present; the debug and
// device sections may follow.
constexpr uint32_t kRequiredSectionCount = 5;
constexpr uint32_t kMaxSectionCount = 7;
constexpr size_t kSectionEntryBytes = 4 + 4 + 8 + 8;
constexpr size_t kInstructionBytes = 1 + 3 * 4 + 4 + 4 + 4 + 4;

const char* SectionName(uint32_t id) {
  switch (static_cast<SectionId>(id)) {
    case SectionId::kStrings:
      return "strings";
    case SectionId::kConstants:
      return "constants";
    case SectionId::kKernels:
      return "kernels";
    case SectionId::kConstructors:
      return "constructors";
    case SectionId::kFunctions:
      return "functions";
    case SectionId::kDebug:
      return "debug";
    case SectionId::kDevice:
      return "device";
  }
  return "unknown";
}

std::span<const uint8_t> BytesOf(const std::string& bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

// ---- writing ---------------------------------------------------------------------------

class Writer {
 public:
  void U8(uint8_t value) { bytes_.push_back(char(value)); }
  void U32(uint32_t value) { Little(value); }
  void I32(int32_t value) { Little(uint32_t(value)); }
  void U64(uint64_t value) { Little(value); }
  void I64(int64_t value) { Little(uint64_t(value)); }
  void F64(double value) { Little(std::bit_cast<uint64_t>(value)); }
  void Count(size_t count) {
    if (count > std::numeric_limits<uint32_t>::max()) {
      throw Error(ErrorKind::kUsage, "executable too large to save: a count exceeds 2^32 - 1");
    }
    U32(uint32_t(count));
  }
  void String(std::string_view text) {
    Count(text.size());
    bytes_.append(text);
  }
  void Bytes(const void* data, size_t size) { bytes_.append(static_cast<const char*>(data), size); }
  std::string& bytes() { return bytes_; }

 private:
  template <typename T>
  void Little(T value) {
    for (size_t byte = 0; byte < sizeof(T); ++byte) bytes_.push_back(char(value >> (8 * byte)));
  }
  std::string bytes_;
};

void WriteAttrValue(Writer& out, const kernels::AttrValue& value) {
  using Kind = kernels::AttrValue::Kind;
  out.U8(static_cast<uint8_t>(value.kind()));
  switch (value.kind()) {
    case Kind::kNone:
      break;
    case Kind::kBool:
      out.U8(value.as_bool() ? 1 : 0);
      break;
    case Kind::kInt:
      out.I64(value.as_int());
      break;
    case Kind::kFloat:
      out.F64(value.as_float());
      break;
    case Kind::kString:
      out.String(value.as_string());
      break;
    case Kind::kList:
      out.Count(value.as_list().size());
      for (const kernels::AttrValue& item : value.as_list()) WriteAttrValue(out, item);
      break;
  }
}

void WriteAttrs(Writer& out, const kernels::Attrs& attrs) {
  out.Count(attrs.size());
  for (const auto& [name, value] : attrs) {
    out.String(name);
    WriteAttrValue(out, value);
  }
}

void WriteShape(Writer& out, const std::vector<int64_t>& shape) {
  out.Count(shape.size());
  for (int64_t dim : shape) out.I64(dim);
}

std::string StringsSection(const Executable& executable) {
  Writer out;
  out.Count(executable.strings.size());
  for (const std::string& text : executable.strings) out.String(text);
  return std::move(out.bytes());
}

std::string ConstantsSection(const Executable& executable) {
  Writer out;
  out.Count(executable.constants.size());
  for (const Value& constant : executable.constants) {
    if (!constant || constant->kind() != ObjectKind::kTensor) {
      throw Error(ErrorKind::kUsage, "cannot save an executable whose constant is not a tensor");
    }
    const Tensor& tensor = *static_cast<const Tensor*>(constant.get());
    if (tensor.device_id().kind != DeviceKind::kCPU) {
      throw Error(ErrorKind::kUsage, "cannot save an executable with a constant on " +
                                         tensor.device_id().ToString() + ": copy it to the host");
    }
    out.U8(static_cast<uint8_t>(tensor.dtype()));
    WriteShape(out, tensor.shape());
    out.Bytes(tensor.host_data(), tensor.byte_size());
  }
  return std::move(out.bytes());
}

// The device runs of the executable use unless told otherwise.
std::string DeviceSection(const Executable& executable) {
  Writer out;
  out.U8(static_cast<uint8_t>(executable.default_device->kind));
  out.I32(executable.default_device->index);
  return std::move(out.bytes());
}

void WriteValueType(Writer& out, const kernels::ValueType& type) {
  out.U8(static_cast<uint8_t>(type.dtype));
  WriteShape(out, type.shape);
}

// A function compiled by an external codegen: its neutral graph and the
// codegen's state (executable_file.h lists the fields).
void WriteExternal(Writer& out, const KernelCall::External& external) {
  const kernels::external::ExternalGraph& graph = external.graph;
  out.String(external.compiler);
  out.String(external.symbol);
  out.Count(graph.params.size());
  for (const kernels::ValueType& param : graph.params) WriteValueType(out, param);
  out.Count(graph.operators.size());
  for (size_t position = 0; position < graph.operators.size(); ++position) {
    const kernels::FusedOperator& call = graph.operators[position];
    out.String(call.op);
    WriteAttrs(out, call.attrs);
    out.Count(call.inputs.size());
    for (int32_t input : call.inputs) out.I32(input);
    out.I32(graph.composites[position]);
    WriteValueType(out, graph.types[position]);
  }
  out.Count(graph.composite_names.size());
  for (const std::string& name : graph.composite_names) out.String(name);
  out.String(external.state);
}

std::string KernelsSection(const Executable& executable) {
  Writer out;
  out.Count(executable.kernels.size());
  for (const KernelCall& kernel : executable.kernels) {
    out.String(kernel.op);
    out.U8((kernel.tuple_input ? 1 : 0) | (kernel.tuple_result ? 2 : 0) | (kernel.device ? 4 : 0) |
           (kernel.external ? 8 : 0));
    if (kernel.device) {
      out.U8(static_cast<uint8_t>(kernel.device->kind));
      out.I32(kernel.device->index);
    }
    if (kernel.external) WriteExternal(out, *kernel.external);
    WriteAttrs(out, kernel.attrs);
    out.Count(kernel.fused.size());
    for (const kernels::FusedOperator& fused : kernel.fused) {
      out.String(fused.op);
      WriteAttrs(out, fused.attrs);
      out.Count(fused.inputs.size());
      for (int32_t input : fused.inputs) out.I32(input);
    }
  }
  return std::move(out.bytes());
}

std::string ConstructorsSection(const Executable& executable) {
  Writer out;
  out.Count(executable.constructors.size());
  for (const ConstructorInfo& constructor : executable.constructors) {
    out.String(constructor.name);
    out.U32(constructor.arity);
  }
  return std::move(out.bytes());
}

std::string FunctionsSection(const Executable& executable) {
  Writer out;
  out.Count(executable.functions.size());
  for (const Function& function : executable.functions) {
    out.String(function.name);
    out.String(function.source);
    out.U32(function.param_count);
    out.U32(function.captured_count);
    out.U32(function.register_count);
    for (const std::vector<ParamInfo>* described : {&function.params, &function.results}) {
      out.Count(described->size());
      for (const ParamInfo& param : *described) {
        out.String(param.name);
        out.U8(param.is_tensor ? 1 : 0);
        out.U8(static_cast<uint8_t>(param.dtype));
        WriteShape(out, param.shape);
        out.String(param.type_text);
      }
    }
    out.Count(function.code.size());
    for (const Instruction& instruction : function.code) {
      out.U8(static_cast<uint8_t>(instruction.opcode));
      for (int32_t operand : instruction.operands) out.I32(operand);
      out.U32(instruction.list_begin);
      out.U32(instruction.list_size);
      out.I32(instruction.location.line);
      out.I32(instruction.location.column);
    }
    out.Count(function.lists.size());
    for (int32_t reg : function.lists) out.I32(reg);
  }
  return std::move(out.bytes());
}

bool HasDebugInformation(const Executable& executable) {
  return std::any_of(executable.functions.begin(), executable.functions.end(),
                     [](const Function& function) { return !function.variables.empty(); });
}

std::string DebugSection(const Executable& executable) {
  Writer out;
  out.Count(executable.functions.size());
  for (const Function& function : executable.functions) {
    out.Count(function.variables.size());
    for (const VariableRange& variable : function.variables) {
      out.String(variable.name);
      out.I32(variable.reg);
      out.U32(variable.begin);
      out.U32(variable.end);
    }
  }
  return std::move(out.bytes());
}

// ---- reading ---------------------------------------------------------------------------

// Reads one section (or the header) with bounds checks; every failure is a
// kLoad error naming the file and, where known, the section.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const std::string& name, std::string where)
      : bytes_(bytes), name_(name), where_(std::move(where)) {}

  [[noreturn]] void Fail(const std::string& problem) const {
    throw Error(ErrorKind::kLoad,
                name_ + ": " + (where_.empty() ? "" : where_ + " section: ") + problem);
  }

  size_t remaining() const { return bytes_.size() - position_; }
  bool at_end() const { return position_ == bytes_.size(); }

  std::span<const uint8_t> Take(size_t size) {
    if (size > remaining()) Fail("truncated (needs " + std::to_string(size) + " more bytes)");
    std::span<const uint8_t> taken = bytes_.subspan(position_, size);
    position_ += size;
    return taken;
  }
  uint8_t U8() { return Take(1)[0]; }
  uint32_t U32() { return uint32_t(Little(4)); }
  int32_t I32() { return int32_t(uint32_t(Little(4))); }
  uint64_t U64() { return Little(8); }
  int64_t I64() { return int64_t(Little(8)); }
  double F64() { return std::bit_cast<double>(Little(8)); }
  bool Bool(const char* what) {
    uint8_t value = U8();
    if (value > 1) Fail(std::string(what) + " is " + std::to_string(value) + ", not 0 or 1");
    return value == 1;
  }
  // A count of items of at least `min_item_bytes` each: rejected when the
  // bytes left could not hold them, so nothing is allocated for a lie.
  uint32_t Count(size_t min_item_bytes, const char* what) {
    uint32_t count = U32();
    if (uint64_t(count) * std::max<size_t>(min_item_bytes, 1) > remaining()) {
      Fail(std::string(what) + " count " + std::to_string(count) +
           " exceeds the bytes that remain");
    }
    return count;
  }
  std::string String(const char* what) {
    uint32_t size = Count(1, what);
    std::span<const uint8_t> text = Take(size);
    return std::string(text.begin(), text.end());
  }
  void ExpectEnd() {
    if (!at_end()) Fail(std::to_string(remaining()) + " unexpected bytes after its contents");
  }

 private:
  uint64_t Little(size_t width) {
    std::span<const uint8_t> raw = Take(width);
    uint64_t value = 0;
    for (size_t byte = 0; byte < width; ++byte) value |= uint64_t(raw[byte]) << (8 * byte);
    return value;
  }

  std::span<const uint8_t> bytes_;
  size_t position_ = 0;
  const std::string& name_;
  std::string where_;
};

DType ReadDType(Reader& in) {
  uint8_t code = in.U8();
  if (code >= kDTypeCount) in.Fail("unknown dtype code " + std::to_string(code));
  return static_cast<DType>(code);
}

// Dimensions; `allow_unknown` admits -1 (a `?` dimension).
std::vector<int64_t> ReadShape(Reader& in, bool allow_unknown) {
  uint32_t rank = in.Count(8, "rank");
  if (rank > kMaxTensorRank) in.Fail("rank " + std::to_string(rank) + " is too large");
  std::vector<int64_t> shape(rank);
  for (int64_t& dim : shape) {
    dim = in.I64();
    if (dim < (allow_unknown ? -1 : 0)) in.Fail("negative dimension " + std::to_string(dim));
  }
  return shape;
}

kernels::AttrValue ReadAttrValue(Reader& in, int depth) {
  using kernels::AttrValue;
  if (depth > kMaxAttributeDepth) {
    in.Fail("attribute lists nest deeper than " + std::to_string(kMaxAttributeDepth));
  }
  const uint8_t kind = in.U8();
  switch (kind) {
    case uint8_t(AttrValue::Kind::kNone):
      return AttrValue();
    case uint8_t(AttrValue::Kind::kBool):
      return AttrValue::Bool(in.Bool("a bool attribute"));
    case uint8_t(AttrValue::Kind::kInt):
      return AttrValue::Int(in.I64());
    case uint8_t(AttrValue::Kind::kFloat):
      return AttrValue::Float(in.F64());
    case uint8_t(AttrValue::Kind::kString):
      return AttrValue::String(in.String("attribute string length"));
    case uint8_t(AttrValue::Kind::kList): {
      uint32_t count = in.Count(1, "attribute list");
      std::vector<AttrValue> items;
      items.reserve(count);
      for (uint32_t index = 0; index < count; ++index)
        items.push_back(ReadAttrValue(in, depth + 1));
      return AttrValue::List(std::move(items));
    }
    default:
      in.Fail("unknown attribute kind " + std::to_string(kind));
  }
}

kernels::Attrs ReadAttrs(Reader& in) {
  uint32_t count = in.Count(4 + 1, "attribute");
  kernels::Attrs attrs;
  attrs.reserve(count);
  for (uint32_t attr = 0; attr < count; ++attr) {
    std::string name = in.String("attribute name length");
    kernels::AttrValue value = ReadAttrValue(in, 0);
    attrs.emplace_back(std::move(name), std::move(value));
  }
  return attrs;
}

void ReadStrings(Reader& in, Executable& executable) {
  uint32_t count = in.Count(4, "string");
  executable.strings.reserve(count);
  for (uint32_t index = 0; index < count; ++index)
    executable.strings.push_back(in.String("string length"));
}

void ReadConstants(Reader& in, Executable& executable) {
  uint32_t count = in.Count(1 + 4, "constant");
  executable.constants.reserve(count);
  for (uint32_t index = 0; index < count; ++index) {
    const DType dtype = ReadDType(in);
    Shape shape = ReadShape(in, false);
    // The element count, bounded by the bytes left before any allocation.
    uint64_t bytes = DTypeSize(dtype);
    for (int64_t dim : shape) {
      if (dim != 0 && bytes > in.remaining() / uint64_t(dim)) {
        // Only a zero dimension could still make this fit.
        if (std::find(shape.begin(), shape.end(), 0) == shape.end()) {
          in.Fail("constant " + std::to_string(index) + " is larger than the bytes that remain");
        }
        bytes = 0;
        break;
      }
      bytes *= uint64_t(dim);
    }
    std::span<const uint8_t> data = in.Take(bytes);
    if (dtype == DType::kBool) {
      for (uint8_t byte : data) {
        if (byte > 1) in.Fail("constant " + std::to_string(index) + " has a bool that is not 0/1");
      }
    }
    Ref<Tensor> tensor;
    try {
      tensor = Tensor::Empty(HostDevice(), std::move(shape), dtype);
    } catch (const Error& error) {
      in.Fail("constant " + std::to_string(index) + ": " + error.message());
    }
    if (!data.empty()) std::memcpy(tensor->host_data(), data.data(), data.size());
    tensor->MarkImmutable();  // as the compiler's constants are
    executable.constants.push_back(std::move(tensor));
  }
}

// A device: its kind (DLPack code) u8 and index i32; `subject` begins the
// message for one relay-vm does not know.
DeviceId ReadDevice(Reader& in, const std::string& subject) {
  const uint8_t kind = in.U8();
  const int32_t device_index = in.I32();
  for (DeviceKind candidate :
       {DeviceKind::kCPU, DeviceKind::kCUDA, DeviceKind::kOpenCL, DeviceKind::kXRT}) {
    if (static_cast<uint8_t>(candidate) == kind && device_index >= 0 && device_index <= 1024) {
      return DeviceId{candidate, device_index};
    }
  }
  in.Fail(subject + " an unknown device (kind " + std::to_string(kind) + ", index " +
          std::to_string(device_index) + ")");
}

void ReadDefaultDevice(Reader& in, Executable& executable) {
  executable.default_device = ReadDevice(in, "the executable names");
}

kernels::ValueType ReadValueType(Reader& in) {
  const DType dtype = ReadDType(in);
  return kernels::ValueType::Tensor(ReadShape(in, true), dtype);
}

// An external function's graph and state (CheckKernels validates them and
// has its codegen load them).
KernelCall::External ReadExternal(Reader& in) {
  KernelCall::External external;
  kernels::external::ExternalGraph& graph = external.graph;
  external.compiler = in.String("external compiler name length");
  external.symbol = in.String("external symbol length");
  const uint32_t param_count = in.Count(1 + 4, "external parameter");
  for (uint32_t index = 0; index < param_count; ++index) graph.params.push_back(ReadValueType(in));
  const uint32_t operator_count = in.Count(4 + 4 + 4 + 4 + 1 + 4, "external operator");
  for (uint32_t position = 0; position < operator_count; ++position) {
    kernels::FusedOperator call;
    call.op = in.String("operator name length");
    call.attrs = ReadAttrs(in);
    call.inputs.resize(in.Count(4, "external operator input"));
    for (int32_t& input : call.inputs) input = in.I32();
    graph.operators.push_back(std::move(call));
    graph.composites.push_back(in.I32());
    graph.types.push_back(ReadValueType(in));
  }
  const uint32_t composite_count = in.Count(4, "composite name");
  for (uint32_t index = 0; index < composite_count; ++index)
    graph.composite_names.push_back(in.String("composite name length"));
  external.state = in.String("external state length");
  return external;
}

void ReadKernels(Reader& in, Executable& executable) {
  uint32_t count = in.Count(4 + 1 + 4, "kernel");
  executable.kernels.reserve(count);
  for (uint32_t index = 0; index < count; ++index) {
    KernelCall kernel;
    kernel.op = in.String("operator name length");
    uint8_t flags = in.U8();
    if (flags > 15) in.Fail("kernel " + std::to_string(index) + " has unknown flags");
    kernel.tuple_input = (flags & 1) != 0;
    kernel.tuple_result = (flags & 2) != 0;
    if ((flags & 4) != 0) {  // placed on a device by the program
      kernel.device = ReadDevice(in, "kernel " + std::to_string(index) + " is placed on");
    }
    if ((flags & 8) != 0) kernel.external = ReadExternal(in);
    kernel.attrs = ReadAttrs(in);
    uint32_t fused_count = in.Count(4 + 4 + 4, "fused operator");
    kernel.fused.reserve(fused_count);
    for (uint32_t position = 0; position < fused_count; ++position) {
      kernels::FusedOperator fused;
      fused.op = in.String("operator name length");
      fused.attrs = ReadAttrs(in);
      uint32_t input_count = in.Count(4, "fused operator input");
      fused.inputs.resize(input_count);
      for (int32_t& input : fused.inputs) input = in.I32();
      kernel.fused.push_back(std::move(fused));
    }
    executable.kernels.push_back(std::move(kernel));
  }
}

void ReadConstructors(Reader& in, Executable& executable) {
  uint32_t count = in.Count(4 + 4, "constructor");
  executable.constructors.reserve(count);
  for (uint32_t index = 0; index < count; ++index) {
    ConstructorInfo constructor;
    constructor.name = in.String("constructor name length");
    constructor.arity = in.U32();
    executable.constructors.push_back(std::move(constructor));
  }
}

void ReadFunctions(Reader& in, Executable& executable) {
  constexpr size_t kMinFunctionBytes = 4 + 4 + 4 * 3 + 4 + 4 + 4;
  uint32_t count = in.Count(kMinFunctionBytes, "function");
  executable.functions.reserve(count);
  for (uint32_t index = 0; index < count; ++index) {
    Function function;
    function.name = in.String("function name length");
    function.source = in.String("source name length");
    function.param_count = in.U32();
    function.captured_count = in.U32();
    function.register_count = in.U32();
    if (function.register_count > kMaxRegisterCount) {
      in.Fail(detail::PrintableExcerpt(function.name) + " has " +
              std::to_string(function.register_count) + " registers, more than the limit of " +
              std::to_string(kMaxRegisterCount));
    }
    for (std::vector<ParamInfo>* described : {&function.params, &function.results}) {
      const uint32_t described_count = in.Count(4 + 1 + 1 + 4 + 4, "parameter description");
      described->reserve(described_count);
      for (uint32_t param_index = 0; param_index < described_count; ++param_index) {
        ParamInfo param;
        param.name = in.String("parameter name length");
        param.is_tensor = in.Bool("a parameter's tensor flag");
        param.dtype = ReadDType(in);
        param.shape = ReadShape(in, true);
        param.type_text = in.String("parameter type length");
        described->push_back(std::move(param));
      }
    }
    if (!function.params.empty() &&
        (function.captured_count != 0 || function.params.size() != function.param_count)) {
      in.Fail(detail::PrintableExcerpt(function.name) + " describes " +
              std::to_string(function.params.size()) + " parameters but takes " +
              std::to_string(function.param_count));
    }
    uint32_t code_size = in.Count(kInstructionBytes, "instruction");
    function.code.reserve(code_size);
    for (uint32_t pc = 0; pc < code_size; ++pc) {
      Instruction instruction;
      uint8_t opcode = in.U8();
      if (opcode >= kOpcodeCount) {
        in.Fail(detail::PrintableExcerpt(function.name) + " instruction " + std::to_string(pc) +
                ": unknown opcode " + std::to_string(opcode));
      }
      instruction.opcode = static_cast<Opcode>(opcode);
      for (int32_t& operand : instruction.operands) operand = in.I32();
      instruction.list_begin = in.U32();
      instruction.list_size = in.U32();
      instruction.location.line = in.I32();
      instruction.location.column = in.I32();
      function.code.push_back(instruction);
    }
    uint32_t list_size = in.Count(4, "register list");
    function.lists.resize(list_size);
    for (int32_t& reg : function.lists) reg = in.I32();
    executable.functions.push_back(std::move(function));
  }
}

// After the functions section: the same functions, in order. Bounds of
// registers and ranges are Verify's.
void ReadDebug(Reader& in, Executable& executable) {
  const uint32_t count = in.Count(4, "debug function");
  if (count != executable.functions.size()) {
    in.Fail("describes " + std::to_string(count) + " functions, the functions section has " +
            std::to_string(executable.functions.size()));
  }
  for (Function& function : executable.functions) {
    const uint32_t variable_count = in.Count(4 + 4 + 4 + 4, "variable");
    function.variables.reserve(variable_count);
    for (uint32_t index = 0; index < variable_count; ++index) {
      VariableRange variable;
      variable.name = in.String("variable name length");
      variable.reg = in.I32();
      variable.begin = in.U32();
      variable.end = in.U32();
      function.variables.push_back(std::move(variable));
    }
  }
}

// `op` must be an operator of the table and `attrs` normalise against its
// schema; they are replaced by their normalised form.
void NormalizeCall(const std::string& label, const std::string& op, kernels::Attrs& attrs) {
  const kernels::OperatorDefinition* definition = kernels::FindOperator(op);
  if (definition == nullptr) throw Error(ErrorKind::kLoad, label + ": unknown operator");
  kernels::Attrs normalized;
  if (std::optional<std::string> problem =
          kernels::NormalizeAttrs(definition->attributes, attrs, normalized)) {
    throw Error(ErrorKind::kLoad, label + ": " + detail::PrintableExcerpt(*problem, 400));
  }
  attrs = std::move(normalized);
}

// An external function's graph must be valid and its codegen's state load.
void CheckExternal(KernelCall& kernel, const std::string& label) {
  KernelCall::External& external = *kernel.external;
  if (external.symbol.empty() || kernel.op != external.compiler + ":" + external.symbol ||
      !kernel.fused.empty() || !kernel.attrs.empty() || kernel.tuple_input || kernel.tuple_result) {
    throw Error(ErrorKind::kLoad, label + ": not an external function this build can call");
  }
  const kernels::external::ExternalCodegen* codegen =
      kernels::external::FindCodegen(external.compiler);
  if (codegen == nullptr) {
    throw Error(ErrorKind::kLoad, label + ": external codegen '" +
                                      detail::PrintableExcerpt(external.compiler) +
                                      "' is not in this build");
  }
  kernels::external::ValidateGraph(external.graph, ErrorKind::kLoad, label);
  external.function = codegen->Load(external.graph, external.state, label);
}

// What Verify leaves to the kernel table: operators that exist, attributes
// their schemas accept, and a tuple input passed as exactly one register.
void CheckKernels(Executable& executable, const std::string& name) {
  // For each fused group, how many inputs its operators read.
  std::vector<int64_t> group_inputs(executable.kernels.size(), 0);
  for (size_t index = 0; index < executable.kernels.size(); ++index) {
    KernelCall& kernel = executable.kernels[index];
    const std::string label = name + ": kernel " + std::to_string(index) + " (" +
                              detail::PrintableExcerpt(kernel.op) + ")";
    if (kernel.external) {
      CheckExternal(kernel, label);
      group_inputs[index] = int64_t(kernel.external->graph.params.size());
      continue;
    }
    if (kernel.fused.empty()) {
      NormalizeCall(label, kernel.op, kernel.attrs);
      continue;
    }
    // A fused group: its operators' calls, each input a group input or an
    // earlier operator's result.
    if (kernel.tuple_input || kernel.tuple_result || !kernel.attrs.empty()) {
      throw Error(ErrorKind::kLoad, label + ": a fused group has no attributes or tuple forms");
    }
    for (size_t position = 0; position < kernel.fused.size(); ++position) {
      kernels::FusedOperator& fused = kernel.fused[position];
      NormalizeCall(label + " operator " + std::to_string(position), fused.op, fused.attrs);
      for (int32_t input : fused.inputs) {
        if (input < 0 && size_t(-(int64_t(input) + 1)) >= position) {
          throw Error(ErrorKind::kLoad, label + " operator " + std::to_string(position) +
                                            ": input " + std::to_string(input) +
                                            " is not an earlier operator's result");
        }
        if (input >= 0) group_inputs[index] = std::max<int64_t>(group_inputs[index], input + 1);
      }
    }
  }
  for (const Function& function : executable.functions) {
    for (size_t pc = 0; pc < function.code.size(); ++pc) {
      const Instruction& instruction = function.code[pc];
      if (instruction.opcode != Opcode::kInvokeKernel) continue;
      const int32_t kernel = instruction.operands[1];
      if (kernel < 0 || size_t(kernel) >= executable.kernels.size()) continue;  // Verify's
      const auto reject = [&](const std::string& problem) {
        throw Error(ErrorKind::kLoad, name + ": invalid bytecode in " +
                                          detail::PrintableExcerpt(function.name) +
                                          " at instruction " + std::to_string(pc) + ": " + problem);
      };
      if (executable.kernels[kernel].tuple_input && instruction.list_size != 1) {
        reject("a tuple-input kernel takes one register");
      }
      if (executable.kernels[kernel].external &&
          int64_t(instruction.list_size) != group_inputs[kernel]) {
        reject("the external function takes " + std::to_string(group_inputs[kernel]) +
               " inputs, given " + std::to_string(instruction.list_size));
      }
      if (instruction.list_size < group_inputs[kernel]) {
        reject("the fused kernel reads " + std::to_string(group_inputs[kernel]) +
               " inputs, given " + std::to_string(instruction.list_size));
      }
    }
  }
}

}  // namespace

std::string SerializeExecutable(const Executable& executable) {
  std::vector<std::pair<SectionId, std::string>> sections = {
      {SectionId::kStrings, StringsSection(executable)},
      {SectionId::kConstants, ConstantsSection(executable)},
      {SectionId::kKernels, KernelsSection(executable)},
      {SectionId::kConstructors, ConstructorsSection(executable)},
      {SectionId::kFunctions, FunctionsSection(executable)},
  };
  if (HasDebugInformation(executable))
    sections.emplace_back(SectionId::kDebug, DebugSection(executable));
  if (executable.default_device)
    sections.emplace_back(SectionId::kDevice, DeviceSection(executable));
  Writer out;
  out.Bytes(kMagic.data(), kMagic.size());
  out.U32(kExecutableFormatVersion);
  out.U32(uint32_t(sections.size()));
  uint64_t offset = kMagic.size() + 4 + 4 + sections.size() * kSectionEntryBytes + 4;
  for (const auto& [id, bytes] : sections) {
    out.U32(static_cast<uint32_t>(id));
    out.U32(detail::Crc32(BytesOf(bytes)));
    out.U64(offset);
    out.U64(bytes.size());
    offset += bytes.size();
  }
  out.U32(detail::Crc32(BytesOf(out.bytes())));
  for (const auto& [id, bytes] : sections) out.Bytes(bytes.data(), bytes.size());
  return std::move(out.bytes());
}

Executable LoadExecutable(std::span<const uint8_t> bytes, const std::string& name) {
  Reader header(bytes, name, "");
  if (bytes.size() < kMagic.size()) {
    if (std::equal(bytes.begin(), bytes.end(), kMagic.begin())) header.Fail("truncated file");
    header.Fail("not a relay-vm executable (bad magic bytes)");
  }
  if (!std::equal(kMagic.begin(), kMagic.end(), bytes.begin())) {
    header.Fail("not a relay-vm executable (bad magic bytes)");
  }
  header.Take(kMagic.size());
  if (header.remaining() < 8) header.Fail("truncated file");
  const uint32_t version = header.U32();
  if (version != kExecutableFormatVersion) {
    header.Fail("unsupported executable format version " + std::to_string(version) +
                " (this build reads version " + std::to_string(kExecutableFormatVersion) + ")");
  }
  const uint32_t section_count = header.U32();
  if (section_count < kRequiredSectionCount || section_count > kMaxSectionCount) {
    header.Fail("expected " + std::to_string(kRequiredSectionCount) + " to " +
                std::to_string(kMaxSectionCount) + " sections, the table lists " +
                std::to_string(section_count));
  }
  const size_t table_end = kMagic.size() + 8 + section_count * kSectionEntryBytes;
  if (bytes.size() < table_end + 4) header.Fail("truncated file (the section table is cut off)");

  struct Section {
    uint32_t id, checksum;
    uint64_t offset, size;
  };
  std::array<std::optional<Section>, kMaxSectionCount + 1> by_id;
  std::vector<Section> sections;
  for (uint32_t index = 0; index < section_count; ++index) {
    Section section{header.U32(), header.U32(), header.U64(), header.U64()};
    sections.push_back(section);
  }
  const uint32_t table_checksum = header.U32();
  if (table_checksum != detail::Crc32(bytes.first(table_end))) {
    header.Fail("section table checksum mismatch (the file is corrupted)");
  }
  for (const Section& section : sections) {
    if (section.id == 0 || section.id > kMaxSectionCount) {
      header.Fail("unknown section id " + std::to_string(section.id));
    }
    const std::string section_name = SectionName(section.id);
    if (by_id[section.id]) header.Fail("section " + section_name + " appears twice");
    if (section.offset < table_end + 4 || section.offset > bytes.size() ||
        section.size > bytes.size() - section.offset) {
      header.Fail("section " + section_name + " lies outside the file (truncated file?)");
    }
    by_id[section.id] = section;
  }
  // Only the debug and device sections are optional: a table of five that
  // lists one lacks another.
  for (uint32_t id = 1; id <= kRequiredSectionCount; ++id) {
    if (!by_id[id]) header.Fail("section " + std::string(SectionName(id)) + " is missing");
  }
  std::sort(sections.begin(), sections.end(),
            [](const Section& a, const Section& b) { return a.offset < b.offset; });
  for (size_t index = 1; index < sections.size(); ++index) {
    if (sections[index - 1].offset + sections[index - 1].size > sections[index].offset) {
      header.Fail("sections " + std::string(SectionName(sections[index - 1].id)) + " and " +
                  SectionName(sections[index].id) + " overlap");
    }
  }

  Executable executable;
  const auto read_section = [&](SectionId id, void (*read)(Reader&, Executable&)) {
    const Section& section = *by_id[static_cast<uint32_t>(id)];
    std::span<const uint8_t> contents = bytes.subspan(section.offset, section.size);
    Reader in(contents, name, SectionName(section.id));
    if (detail::Crc32(contents) != section.checksum) {
      in.Fail("checksum mismatch (the file is corrupted)");
    }
    read(in, executable);
    in.ExpectEnd();
  };
  read_section(SectionId::kStrings, ReadStrings);
  read_section(SectionId::kConstants, ReadConstants);
  read_section(SectionId::kKernels, ReadKernels);
  read_section(SectionId::kConstructors, ReadConstructors);
  read_section(SectionId::kFunctions, ReadFunctions);
  if (by_id[static_cast<uint32_t>(SectionId::kDebug)]) read_section(SectionId::kDebug, ReadDebug);
  if (by_id[static_cast<uint32_t>(SectionId::kDevice)]) {
    read_section(SectionId::kDevice, ReadDefaultDevice);
  }

  CheckKernels(executable, name);
  try {
    Verify(executable);
  } catch (const Error& error) {
    // Names in the message come from the file: keep it one printable line.
    throw Error(ErrorKind::kLoad, name + ": " + detail::PrintableExcerpt(error.message(), 400));
  }
  return executable;
}

void WriteExecutableFile(const std::string& path, const Executable& executable) {
  const std::string bytes = SerializeExecutable(executable);
  const std::span<const uint8_t> piece = BytesOf(bytes);
  detail::WriteFileAtomically(path, std::span<const std::span<const uint8_t>>(&piece, 1));
}

Executable ReadExecutableFile(const std::string& path) {
  const std::vector<uint8_t> bytes = detail::ReadFileBytes(path);
  return LoadExecutable(bytes, path);
}

}  // namespace relay::vm

#include "relay/value.h"

#include <charconv>
#include <cmath>
#include <utility>

#include "relay/error.h"
#include "relay/float16.h"
#include "relay/tensor.h"

namespace relay {

namespace {

// Shortest text that reads back as the same value.
template <typename T>
std::string ShortestFloat(T value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  RELAY_CHECK(error == std::errc(), "formatting a float");
  return std::string(buffer, end);
}

// Element `index` of `tensor` without a type suffix ("2.5", "7", "True").
std::string ElementText(const Tensor& tensor, int64_t index) {
  const uint8_t* data = static_cast<const uint8_t*>(tensor.host_data());
  switch (tensor.dtype()) {
    case DType::kBool:
      return data[index] != 0 ? "True" : "False";
    case DType::kInt8:
      return std::to_string(reinterpret_cast<const int8_t*>(data)[index]);
    case DType::kUInt8:
      return std::to_string(data[index]);
    case DType::kUInt16:
      return std::to_string(reinterpret_cast<const uint16_t*>(data)[index]);
    case DType::kUInt32:
      return std::to_string(reinterpret_cast<const uint32_t*>(data)[index]);
    case DType::kUInt64:
      return std::to_string(reinterpret_cast<const uint64_t*>(data)[index]);
    case DType::kInt16:
      return std::to_string(reinterpret_cast<const int16_t*>(data)[index]);
    case DType::kInt32:
      return std::to_string(reinterpret_cast<const int32_t*>(data)[index]);
    case DType::kInt64:
      return std::to_string(reinterpret_cast<const int64_t*>(data)[index]);
    case DType::kFloat16:
      return ShortestFloat(static_cast<float>(reinterpret_cast<const Float16*>(data)[index]));
    case DType::kFloat32:
      return ShortestFloat(reinterpret_cast<const float*>(data)[index]);
    case DType::kFloat64:
      return ShortestFloat(reinterpret_cast<const double*>(data)[index]);
  }
  RELAY_UNREACHABLE("dtype without a printed form");
}

// Relay's literal suffix for a scalar of `dtype`: 6 is int32, 2.5f float32.
std::string_view ScalarSuffix(DType dtype) {
  switch (dtype) {
    case DType::kBool:
    case DType::kInt32:
      return "";
    case DType::kInt8:
      return "i8";
    case DType::kUInt8:
      return "u8";
    case DType::kUInt16:
      return "u16";
    case DType::kUInt32:
      return "u32";
    case DType::kUInt64:
      return "u64";
    case DType::kInt16:
      return "i16";
    case DType::kInt64:
      return "i64";
    case DType::kFloat16:
      return "f16";
    case DType::kFloat32:
      return "f";
    case DType::kFloat64:
      return "f64";
  }
  RELAY_UNREACHABLE("dtype without a literal suffix");
}

// Axis `axis` of a tensor, from flat position `offset`: nested brackets,
// NumPy-style summarised (`edge` items at each end) when `summarise`.
void AppendAxis(const Tensor& tensor, size_t axis, int64_t offset, bool summarise, int64_t edge,
                std::string& out) {
  const Shape& shape = tensor.shape();
  if (axis == shape.size()) {
    out += ElementText(tensor, offset);
    return;
  }
  int64_t stride = 1;
  for (size_t inner = axis + 1; inner < shape.size(); ++inner) stride *= shape[inner];
  out += '[';
  const int64_t extent = shape[axis];
  for (int64_t position = 0; position < extent; ++position) {
    if (position > 0) out += ", ";
    if (summarise && extent > 2 * edge && position == edge) {
      out += "...";
      position = extent - edge - 1;
      continue;
    }
    AppendAxis(tensor, axis + 1, offset + position * stride, summarise, edge, out);
  }
  out += ']';
}

std::string TensorText(const Tensor& tensor, const ValuePrintOptions& options) {
  if (tensor.device_id().kind != DeviceKind::kCPU) {
    return "<tensor on " + tensor.device_id().ToString() + ">";
  }
  if (tensor.ndim() == 0) {
    return ElementText(tensor, 0) + std::string(ScalarSuffix(tensor.dtype()));
  }
  std::string out;
  AppendAxis(tensor, 0, 0, tensor.element_count() > options.tensor_element_limit, 3, out);
  return out;
}

}  // namespace

std::string FormatValue(const Value& root, const ValuePrintOptions& options) {
  // An explicit stack of pending work (a value to print, or punctuation to
  // append) keeps a million-element list from recursing a million frames.
  struct Work {
    const Object* value = nullptr;
    const char* text = nullptr;  // a literal; when set, `value` is unused
  };
  std::vector<Work> pending{Work{root.get(), nullptr}};
  std::string out;
  auto push_fields = [&](const std::vector<Value>& fields, const std::string& open,
                         const char* close) {
    pending.push_back(Work{nullptr, close});
    for (size_t index = fields.size(); index-- > 0;) {
      pending.push_back(Work{fields[index].get(), nullptr});
      if (index > 0) pending.push_back(Work{nullptr, ", "});
    }
    out += open;
  };
  while (!pending.empty()) {
    Work work = pending.back();
    pending.pop_back();
    if (work.text != nullptr) {
      out += work.text;
      continue;
    }
    const Object* value = work.value;
    if (value == nullptr) {
      out += "<null>";
      continue;
    }
    switch (value->kind()) {
      case ObjectKind::kTensor:
        out += TensorText(*static_cast<const Tensor*>(value), options);
        break;
      case ObjectKind::kTuple: {
        const auto& fields = static_cast<const Tuple*>(value)->fields();
        push_fields(fields, "(", fields.size() == 1 ? ",)" : ")");
        break;
      }
      case ObjectKind::kConstructed: {
        const auto* constructed = static_cast<const Constructed*>(value);
        std::string name = options.constructor_name
                               ? options.constructor_name(constructed->tag())
                               : "Constructor#" + std::to_string(constructed->tag());
        if (constructed->fields().empty()) {
          out += name;
        } else {
          push_fields(constructed->fields(), name + "(", ")");
        }
        break;
      }
      case ObjectKind::kClosure: {
        int32_t function = static_cast<const Closure*>(value)->function();
        out += "<closure " +
               (options.function_name ? options.function_name(function)
                                      : "#" + std::to_string(function)) +
               ">";
        break;
      }
      case ObjectKind::kReference:
        pending.push_back(Work{nullptr, ")"});
        pending.push_back(Work{static_cast<const Reference*>(value)->Read().get(), nullptr});
        out += "ref(";
        break;
      default:
        out += "<object>";
        break;
    }
  }
  return out;
}

}  // namespace relay

#include "kernels/operators/device_annotations.h"

#include <string_view>

#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {

namespace {

std::optional<DeviceKind> KindOfName(std::string_view name) {
  if (name == "cpu" || name == "llvm") return DeviceKind::kCPU;
  if (name == "cuda" || name == "gpu") return DeviceKind::kCUDA;
  if (name == "opencl") return DeviceKind::kOpenCL;
  if (name == "xrt") return DeviceKind::kXRT;
  return std::nullopt;
}

std::optional<DeviceKind> KindOfCode(int64_t code) {
  for (DeviceKind kind :
       {DeviceKind::kCPU, DeviceKind::kCUDA, DeviceKind::kOpenCL, DeviceKind::kXRT}) {
    if (static_cast<int64_t>(kind) == code) return kind;
  }
  return std::nullopt;
}

// Both operators are the identity on their input's type.
ValueType SameType(std::span<const RelationInput> inputs, const Attrs& attrs,
                   std::initializer_list<std::pair<const char*, const char*>> devices) {
  if (inputs[0].type->is_tuple) FailRelation("expects a tensor, got a tuple");
  for (const auto& [type_key, id_key] : devices) {
    const DeviceAttr device = DeviceFromAttrs(attrs, type_key, id_key);
    if (!device.device) FailRelation(device.problem);
  }
  return *inputs[0].type;
}

}  // namespace

DeviceAttr DeviceFromAttrs(const Attrs& attrs, const char* type_key, const char* id_key) {
  std::optional<AttrValue> type;
  int64_t index = 0;
  for (const auto& [name, value] : attrs) {
    if (name == type_key) type = value;
    if (name == id_key) index = value.as_int();
  }
  if (!type || type->kind() == AttrValue::Kind::kNone) {
    return {std::nullopt, std::string("missing required attribute '") + type_key + "'"};
  }
  std::optional<DeviceKind> kind;
  if (type->kind() == AttrValue::Kind::kString) {
    kind = KindOfName(type->as_string());
  } else if (type->kind() == AttrValue::Kind::kInt) {
    kind = KindOfCode(type->as_int());
  }
  if (!kind) {
    return {std::nullopt, std::string("attribute '") + type_key +
                              "' names no device: " + type->ToString() +
                              " (use \"cpu\", \"cuda\", \"opencl\" or \"xrt\", or DLPack's 1, 2, "
                              "4 or 12)"};
  }
  if (index < 0 || index > 1024) {
    return {std::nullopt,
            std::string("attribute '") + id_key + "' is out of range: " + std::to_string(index)};
  }
  return {DeviceId{*kind, static_cast<int32_t>(index)}, ""};
}

Attrs DeviceAttrs(DeviceId device, const char* type_key, const char* id_key) {
  return {{type_key, AttrValue::String(std::string(DeviceKindName(device.kind)))},
          {id_key, AttrValue::Int(device.index)}};
}

void RegisterDeviceAnnotations(OperatorTableBuilder& table) {
  table.Add({.name = kOnDevice,
             .input_names = {"data"},
             .attributes = {RequiredAttr("device_type", AttrKind::kAny),
                            DefaultAttr("device_id", AttrKind::kInt, AttrValue::Int(0))},
             .pattern = FusionPattern::kOpaque,
             .relation =
                 [](std::span<const RelationInput> inputs, const Attrs& attrs) {
                   return SameType(inputs, attrs, {{"device_type", "device_id"}});
                 },
             .summary = "Places the computation of its input on a device (a placement hint)."});
  table.Add({.name = kDeviceCopy,
             .input_names = {"data"},
             .attributes = {RequiredAttr("src_device_type", AttrKind::kAny),
                            RequiredAttr("dst_device_type", AttrKind::kAny),
                            DefaultAttr("src_device_id", AttrKind::kInt, AttrValue::Int(0)),
                            DefaultAttr("dst_device_id", AttrKind::kInt, AttrValue::Int(0))},
             .pattern = FusionPattern::kOpaque,
             .relation =
                 [](std::span<const RelationInput> inputs, const Attrs& attrs) {
                   return SameType(inputs, attrs,
                                   {{"src_device_type", "src_device_id"},
                                    {"dst_device_type", "dst_device_id"}});
                 },
             .summary = "Copies its input from one device to another."});
}

}  // namespace relay::kernels

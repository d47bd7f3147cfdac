#include "devices/xrt/xclbin_reader.h"

#include <xclbin.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "relay/error.h"

namespace relay::devices {
namespace {

// "xclbin2" and its NUL: the 8 bytes of axlf's m_magic.
constexpr char kMagic[] = "xclbin2";
static_assert(sizeof(kMagic) == sizeof(axlf::m_magic));

// struct axlf ends in the first of its section headers; the headers proper
// start there.
constexpr size_t kSectionHeadersOffset = offsetof(axlf, m_sections);
constexpr size_t kComputeUnitsOffset = offsetof(ip_layout, m_ip_data);

// The register map's first four words are the control, global interrupt
// enable, interrupt enable and interrupt status registers.
constexpr uint64_t kFirstArgumentOffset = 0x10;

[[noreturn]] void ThrowUnusable(std::string_view path, const std::string& problem) {
  throw Error(ErrorKind::kUsage, std::string(path) + ": " + problem);
}

// A copy of the T at `offset`; the caller has checked that it lies inside
// `bytes`. Copied because an xclbin in memory need not be aligned for T.
template <typename T>
T ReadStructure(std::span<const std::byte> bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::string SectionName(uint32_t kind) {
  switch (kind) {
    case IP_LAYOUT:
      return "IP_LAYOUT";
    case EMBEDDED_METADATA:
      return "EMBEDDED_METADATA";
    default:
      return "of kind " + std::to_string(kind);
  }
}

// ---- IP_LAYOUT ---------------------------------------------------------------

struct ComputeUnit {
  std::string kernel_name;
  std::string instance_name;
  uint32_t index = 0;
  uint64_t base_address = 0;
};

std::vector<ComputeUnit> ReadComputeUnits(std::span<const std::byte> section,
                                          std::string_view path) {
  if (section.size() < kComputeUnitsOffset) {
    ThrowUnusable(path, "malformed IP_LAYOUT section: " + std::to_string(section.size()) +
                            " bytes, too few to hold its count");
  }
  const auto count = ReadStructure<int32_t>(section, offsetof(ip_layout, m_count));
  const size_t room = (section.size() - kComputeUnitsOffset) / sizeof(ip_data);
  if (count < 0 || static_cast<size_t>(count) > room) {
    ThrowUnusable(path, "malformed IP_LAYOUT section: it lists " + std::to_string(count) +
                            " entries but has room for " + std::to_string(room));
  }
  std::vector<ComputeUnit> units;
  for (int32_t index = 0; index < count; ++index) {
    const auto entry = ReadStructure<ip_data>(
        section, kComputeUnitsOffset + static_cast<size_t>(index) * sizeof(ip_data));
    if (entry.m_type != IP_KERNEL) continue;
    const char* characters = reinterpret_cast<const char*>(entry.m_name);
    const size_t length = strnlen(characters, sizeof(entry.m_name));
    const std::string name(characters, length);
    const size_t colon = name.find(':');
    if (length == sizeof(entry.m_name) || colon == std::string::npos || colon == 0 ||
        colon + 1 == name.size()) {
      ThrowUnusable(path, "malformed IP_LAYOUT section: entry " + std::to_string(index) +
                              " names its compute unit \"" + name + "\", not \"kernel:instance\"");
    }
    units.push_back({.kernel_name = name.substr(0, colon),
                     .instance_name = name.substr(colon + 1),
                     .index = static_cast<uint32_t>(index),
                     .base_address = entry.m_base_address});
  }
  return units;
}

// ---- EMBEDDED_METADATA: a strict scanner for the XML -------------------------

struct Tag {
  enum class Kind { kStart, kEmpty, kEnd };  // <a ...>, <a .../>, </a>
  Kind kind = Kind::kStart;
  std::string_view name;
  std::vector<std::pair<std::string_view, std::string_view>> attributes;
  size_t position = 0;  // of its '<', for messages

  std::optional<std::string_view> Attribute(std::string_view attribute) const {
    for (const auto& [key, value] : attributes) {
      if (key == attribute) return value;
    }
    return std::nullopt;
  }
};

// Splits the metadata into tags, skipping text, comments, processing
// instructions and CDATA; anything else that is not well-formed is an error.
class MetadataScanner {
 public:
  MetadataScanner(std::string_view text, std::string_view path) : text_(text), path_(path) {}

  // The next tag, or none at the end of the text.
  std::optional<Tag> Next() {
    while (true) {
      const size_t start = text_.find('<', position_);
      if (start == std::string_view::npos) {
        position_ = text_.size();
        return std::nullopt;
      }
      position_ = start;
      if (SkipDelimited("<?", "?>") || SkipDelimited("<!--", "-->") ||
          SkipDelimited("<![CDATA[", "]]>")) {
        continue;
      }
      if (text_.substr(start).starts_with("<!")) {
        Fail(start, "\"<!\" begins neither a comment nor CDATA");
      }
      return ReadTag();
    }
  }

  [[noreturn]] void Fail(size_t position, const std::string& problem) const {
    const size_t line = 1 + std::count(text_.begin(), text_.begin() + position, '\n');
    ThrowUnusable(path_,
                  "malformed EMBEDDED_METADATA at line " + std::to_string(line) + ": " + problem);
  }

  size_t position() const { return position_; }

 private:
  // Skips from `opening` at the current position past `closing`; false when
  // the text does not start with `opening` there.
  bool SkipDelimited(std::string_view opening, std::string_view closing) {
    if (!text_.substr(position_).starts_with(opening)) return false;
    const size_t end = text_.find(closing, position_ + opening.size());
    if (end == std::string_view::npos) {
      Fail(position_,
           "\"" + std::string(opening) + "\" is not closed by \"" + std::string(closing) + "\"");
    }
    position_ = end + closing.size();
    return true;
  }

  Tag ReadTag() {
    Tag tag;
    tag.position = position_;
    ++position_;
    if (Peek() == '/') {
      ++position_;
      tag.kind = Tag::Kind::kEnd;
      tag.name = ReadName("an element name after \"</\"");
      SkipSpace();
      Expect('>', "\">\" to end </" + std::string(tag.name));
      return tag;
    }
    tag.name = ReadName("an element name after \"<\"");
    while (true) {
      const bool spaced = SkipSpace();
      if (text_.substr(position_).starts_with("/>")) {
        position_ += 2;
        tag.kind = Tag::Kind::kEmpty;
        return tag;
      }
      if (Peek() == '>') {
        ++position_;
        tag.kind = Tag::Kind::kStart;
        return tag;
      }
      if (!spaced)
        Fail(position_, "expected a space, \">\" or \"/>\" in <" + std::string(tag.name));
      const std::string_view attribute = ReadName("an attribute name in <" + std::string(tag.name));
      SkipSpace();
      Expect('=', "\"=\" after the attribute " + std::string(attribute));
      SkipSpace();
      Expect('"', "a value in double quotes for the attribute " + std::string(attribute));
      const size_t end = text_.find_first_of("\"<", position_);
      if (end == std::string_view::npos || text_[end] != '"') {
        Fail(position_, "the value of the attribute " + std::string(attribute) +
                            " is not closed by a double quote");
      }
      if (tag.Attribute(attribute)) {
        Fail(tag.position,
             "<" + std::string(tag.name) + "> repeats the attribute " + std::string(attribute));
      }
      tag.attributes.emplace_back(attribute, text_.substr(position_, end - position_));
      position_ = end + 1;
    }
  }

  char Peek() const {
    if (position_ >= text_.size()) Fail(text_.size(), "the text ends inside a tag");
    return text_[position_];
  }

  void Expect(char character, const std::string& what) {
    if (Peek() != character) Fail(position_, "expected " + what);
    ++position_;
  }

  bool SkipSpace() {
    const size_t start = position_;
    auto is_space = [](char character) {
      return character == ' ' || character == '\t' || character == '\r' || character == '\n';
    };
    while (position_ < text_.size() && is_space(text_[position_])) ++position_;
    return position_ != start;
  }

  std::string_view ReadName(const std::string& what) {
    const size_t start = position_;
    auto is_name_character = [&](char character) {
      const bool letter = (character >= 'a' && character <= 'z') ||
                          (character >= 'A' && character <= 'Z') || character == '_' ||
                          character == ':';
      const bool later =
          (character >= '0' && character <= '9') || character == '-' || character == '.';
      return letter || (position_ != start && later);
    };
    while (position_ < text_.size() && is_name_character(text_[position_])) ++position_;
    if (position_ == start) Fail(start, "expected " + what);
    return text_.substr(start, position_ - start);
  }

  std::string_view text_;
  std::string_view path_;
  size_t position_ = 0;
};

// An <arg> before the kernel's arguments are put in the order of their ids.
struct NumberedArgument {
  uint64_t id = 0;
  XclbinArgument argument;
  size_t position = 0;
};

class MetadataReader {
 public:
  MetadataReader(std::string_view text, std::string_view path) : scanner_(text, path) {}

  // The arguments of every <kernel> element, by kernel name.
  std::map<std::string, std::vector<XclbinArgument>, std::less<>> Read() {
    while (std::optional<Tag> tag = scanner_.Next()) {
      if (tag->kind == Tag::Kind::kEnd) {
        Close(*tag);
        continue;
      }
      if (tag->name == "kernel") {
        OpenKernel(*tag);
      } else if (tag->name == "arg") {
        AddArgument(*tag);
      }
      if (tag->kind == Tag::Kind::kStart) {
        open_elements_.emplace_back(tag->name, tag->position);
      } else if (tag->name == "kernel") {
        FinishKernel();
      }
    }
    if (!open_elements_.empty()) {
      scanner_.Fail(
          scanner_.position(),
          "the text ends before <" + std::string(open_elements_.back().first) + "> is closed");
    }
    return std::move(kernels_);
  }

 private:
  void Close(const Tag& tag) {
    if (open_elements_.empty() || open_elements_.back().first != tag.name) {
      scanner_.Fail(tag.position, "</" + std::string(tag.name) + "> closes " +
                                      (open_elements_.empty()
                                           ? std::string("no element")
                                           : "<" + std::string(open_elements_.back().first) + ">"));
    }
    open_elements_.pop_back();
    if (tag.name == "kernel") FinishKernel();
  }

  std::string_view RequiredAttribute(const Tag& tag, std::string_view attribute) {
    std::optional<std::string_view> value = tag.Attribute(attribute);
    if (!value) {
      const std::string owner =
          tag.name == "arg" ? "<arg> of kernel " + kernel_name_ : "<" + std::string(tag.name) + ">";
      scanner_.Fail(tag.position, owner + " lacks the attribute " + std::string(attribute));
    }
    return *value;
  }

  // A number written in hex ("0x10") or decimal ("16").
  uint64_t NumericAttribute(const Tag& tag, std::string_view attribute) {
    const std::string_view text = RequiredAttribute(tag, attribute);
    const bool hex = text.starts_with("0x") || text.starts_with("0X");
    const std::string_view digits = hex ? text.substr(2) : text;
    const uint64_t base = hex ? 16 : 10;
    uint64_t value = 0;
    bool valid = !digits.empty();
    for (const char character : digits) {
      uint64_t digit = base;
      if (character >= '0' && character <= '9') digit = character - '0';
      if (hex && character >= 'a' && character <= 'f') digit = character - 'a' + 10;
      if (hex && character >= 'A' && character <= 'F') digit = character - 'A' + 10;
      if (digit >= base || value > (std::numeric_limits<uint64_t>::max() - digit) / base) {
        valid = false;
        break;
      }
      value = value * base + digit;
    }
    if (!valid) {
      scanner_.Fail(tag.position, "the attribute " + std::string(attribute) + "=\"" +
                                      std::string(text) + "\" of <" + std::string(tag.name) +
                                      "> is not a number");
    }
    return value;
  }

  void OpenKernel(const Tag& tag) {
    if (in_kernel_) {
      scanner_.Fail(tag.position, "<kernel> inside <kernel name=\"" + kernel_name_ + "\">");
    }
    kernel_name_ = std::string(RequiredAttribute(tag, "name"));
    if (kernels_.contains(kernel_name_)) {
      scanner_.Fail(tag.position, "a second <kernel name=\"" + kernel_name_ + "\">");
    }
    in_kernel_ = true;
    kernel_position_ = tag.position;
    arguments_.clear();
  }

  void AddArgument(const Tag& tag) {
    if (!in_kernel_) scanner_.Fail(tag.position, "<arg> outside a <kernel> element");
    NumberedArgument numbered;
    numbered.position = tag.position;
    XclbinArgument& argument = numbered.argument;
    argument.name = std::string(RequiredAttribute(tag, "name"));
    const std::string subject = "argument " + argument.name + " of kernel " + kernel_name_;
    const uint64_t address_qualifier = NumericAttribute(tag, "addressQualifier");
    numbered.id = NumericAttribute(tag, "id");
    const uint64_t bytes = NumericAttribute(tag, "size");
    const uint64_t offset = NumericAttribute(tag, "offset");
    if (address_qualifier == 1) {
      argument.kind = ExternalKernelArgument::Kind::kBuffer;
      if (bytes != 8) {
        scanner_.Fail(tag.position, subject + " is a pointer of size " + std::to_string(bytes) +
                                        "; a pointer in the register map takes 8 bytes");
      }
    } else if (address_qualifier == 0) {
      argument.kind = ExternalKernelArgument::Kind::kScalar;
      if (bytes != 4 && bytes != 8) {
        scanner_.Fail(tag.position, subject + " is a scalar of size " + std::to_string(bytes) +
                                        "; only 4 and 8 bytes are supported");
      }
    } else {
      scanner_.Fail(tag.position, subject + " has addressQualifier " +
                                      std::to_string(address_qualifier) +
                                      "; only 0 (a scalar) and 1 (a global-memory pointer) are "
                                      "supported");
    }
    if (offset % 4 != 0 || offset < kFirstArgumentOffset ||
        offset > std::numeric_limits<uint32_t>::max() - bytes) {
      scanner_.Fail(tag.position, subject + " has the register offset " + std::to_string(offset) +
                                      "; it must be a multiple of 4, at least 16");
    }
    argument.register_offset = static_cast<uint32_t>(offset);
    argument.bytes = static_cast<uint32_t>(bytes);
    arguments_.push_back(std::move(numbered));
  }

  // Puts the arguments in the order of their ids, which must be 0 to n - 1,
  // and checks that no two share a name or a register.
  void FinishKernel() {
    std::sort(arguments_.begin(), arguments_.end(),
              [](const NumberedArgument& left, const NumberedArgument& right) {
                return left.id < right.id;
              });
    std::vector<XclbinArgument> ordered;
    for (size_t index = 0; index < arguments_.size(); ++index) {
      if (arguments_[index].id != index) {
        scanner_.Fail(kernel_position_, "the <arg> ids of kernel " + kernel_name_ +
                                            " are not 0 to " +
                                            std::to_string(arguments_.size() - 1) + ", each once");
      }
      for (const XclbinArgument& earlier : ordered) {
        const XclbinArgument& argument = arguments_[index].argument;
        if (earlier.name == argument.name) {
          scanner_.Fail(arguments_[index].position,
                        "kernel " + kernel_name_ + " has two arguments named " + argument.name);
        }
        if (earlier.register_offset < argument.register_offset + argument.bytes &&
            argument.register_offset < earlier.register_offset + earlier.bytes) {
          scanner_.Fail(arguments_[index].position, "arguments " + earlier.name + " and " +
                                                        argument.name + " of kernel " +
                                                        kernel_name_ +
                                                        " overlap in the "
                                                        "register map");
        }
      }
      ordered.push_back(arguments_[index].argument);
    }
    kernels_.emplace(kernel_name_, std::move(ordered));
    in_kernel_ = false;
  }

  MetadataScanner scanner_;
  std::vector<std::pair<std::string_view, size_t>> open_elements_;  // name, position
  std::map<std::string, std::vector<XclbinArgument>, std::less<>> kernels_;
  bool in_kernel_ = false;
  std::string kernel_name_;
  size_t kernel_position_ = 0;
  std::vector<NumberedArgument> arguments_;
};

}  // namespace

XclbinDescription ReadXclbin(std::span<const std::byte> bytes, std::string_view path) {
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    ThrowUnusable(path, "not an xclbin file (it does not start with the magic \"xclbin2\")");
  }
  if (bytes.size() < kSectionHeadersOffset) {
    ThrowUnusable(path, "truncated: " + std::to_string(bytes.size()) +
                            " bytes, fewer than an xclbin header's " +
                            std::to_string(kSectionHeadersOffset));
  }
  axlf top = {};
  std::memcpy(&top, bytes.data(), kSectionHeadersOffset);
  const uint64_t length = top.m_header.m_length;
  if (length > bytes.size()) {
    ThrowUnusable(path, "truncated: its header gives its length as " + std::to_string(length) +
                            " bytes, but it holds " + std::to_string(bytes.size()));
  }
  if (length < kSectionHeadersOffset) {
    ThrowUnusable(path, "malformed: its header gives its length as " + std::to_string(length) +
                            " bytes, fewer than the header's own");
  }
  const std::span<const std::byte> file = bytes.first(length);
  const uint64_t section_count = top.m_header.m_numSections;
  if (section_count > (length - kSectionHeadersOffset) / sizeof(axlf_section_header)) {
    ThrowUnusable(path, "truncated: its " + std::to_string(section_count) +
                            " section headers do not fit in its " + std::to_string(length) +
                            " bytes");
  }

  std::optional<std::span<const std::byte>> layout_section;
  std::optional<std::span<const std::byte>> metadata_section;
  for (uint64_t index = 0; index < section_count; ++index) {
    const auto header = ReadStructure<axlf_section_header>(
        file, kSectionHeadersOffset + index * sizeof(axlf_section_header));
    const uint64_t offset = header.m_sectionOffset;
    const uint64_t size = header.m_sectionSize;
    const std::string name = SectionName(header.m_sectionKind);
    if (offset > length || size > length - offset) {
      ThrowUnusable(path, "section " + std::to_string(index) + " (" + name + ") spans bytes " +
                              std::to_string(offset) + " to " + std::to_string(offset + size) +
                              ", past the file's end at " + std::to_string(length));
    }
    std::optional<std::span<const std::byte>>* wanted = nullptr;
    if (header.m_sectionKind == IP_LAYOUT) wanted = &layout_section;
    if (header.m_sectionKind == EMBEDDED_METADATA) wanted = &metadata_section;
    if (wanted == nullptr) continue;
    if (wanted->has_value()) ThrowUnusable(path, "malformed: two " + name + " sections");
    *wanted = file.subspan(offset, size);
  }

  if (!layout_section) ThrowUnusable(path, "no kernels: it has no IP_LAYOUT section");
  const std::vector<ComputeUnit> units = ReadComputeUnits(*layout_section, path);
  if (units.empty()) {
    ThrowUnusable(path, "no kernels: its IP_LAYOUT section lists no kernel compute unit");
  }
  if (!metadata_section) {
    ThrowUnusable(path, "no EMBEDDED_METADATA section, so the arguments of kernel " +
                            units.front().kernel_name + " are unknown");
  }
  // The metadata is text; v++ ends it with a NUL.
  std::string_view text(reinterpret_cast<const char*>(metadata_section->data()),
                        metadata_section->size());
  text = text.substr(0, text.find('\0'));
  const auto arguments_by_kernel = MetadataReader(text, path).Read();

  XclbinDescription description;
  std::memcpy(description.uuid.data(), top.m_header.uuid, description.uuid.size());
  static_assert(sizeof(top.m_header.uuid) == std::tuple_size_v<decltype(description.uuid)>);
  for (const ComputeUnit& unit : units) {
    const bool seen =
        std::any_of(description.kernels.begin(), description.kernels.end(),
                    [&](const XclbinKernel& kernel) { return kernel.name == unit.kernel_name; });
    if (seen) continue;
    const auto arguments = arguments_by_kernel.find(unit.kernel_name);
    if (arguments == arguments_by_kernel.end()) {
      ThrowUnusable(path, "EMBEDDED_METADATA declares no <kernel name=\"" + unit.kernel_name +
                              "\">, so the arguments of its compute unit " + unit.instance_name +
                              " are unknown");
    }
    description.kernels.push_back({.name = unit.kernel_name,
                                   .compute_unit_name = unit.instance_name,
                                   .compute_unit_index = unit.index,
                                   .base_address = unit.base_address,
                                   .arguments = arguments->second});
  }
  return description;
}

}  // namespace relay::devices

// NumPy .npy files (format described in numpy/lib/format.py): a magic string,
// a version, a header that is a Python dict literal, then the raw elements.
#include "relay/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "relay/error.h"
#include "vm/core/zip_archive.h"

namespace relay {
namespace {

constexpr uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kMagicBytes = sizeof kMagic;
// NumPy itself refuses headers over 10000 bytes by default; real files with
// relay's dtypes have headers under 200 bytes. The limit bounds what a
// hostile file can make us allocate before its data is checked.
constexpr uint64_t kMaximumHeaderBytes = 1 << 20;
// NumPy pads the header so that the data starts on this boundary.
constexpr size_t kHeaderAlignment = 64;
constexpr uint64_t kVersion1MaximumHeaderBytes = 0xFFFF;
// Deeper nesting than this in a header literal is hostile, not a dtype.
constexpr int kMaximumNesting = 32;

[[noreturn]] void ThrowLoadError(const std::string& name, std::string message) {
  throw Error(ErrorKind::kLoad, std::move(message), SourceSpan{.file = name});
}

void RequireHost(const Device& host, std::string_view operation) {
  if (!host.host_accessible()) {
    throw Error(
        ErrorKind::kUsage,
        std::string(operation) + " needs a host-accessible device, not " + host.id().ToString());
  }
}

// ---- dtypes ----------------------------------------------------------------------

struct NumpyType {
  DType dtype;
  char kind;  // NumPy's type character: 'b', 'i', 'u', 'f'
  size_t bytes;
};

constexpr NumpyType kNumpyTypes[] = {
#define RELAY_DTYPE(enumerator, name, cpp_type, bytes, dlpack_code, numpy_kind) \
  {DType::enumerator, numpy_kind, bytes},
#include "relay/dtypes.def"
#undef RELAY_DTYPE
};
static_assert(std::size(kNumpyTypes) == kDTypeCount);

const std::string& SupportedDTypeList() {
  static const std::string list = [] {
    std::string text;
    for (const NumpyType& type : kNumpyTypes) {
      if (!text.empty()) text += ", ";
      text += DTypeName(type.dtype);
    }
    return text;
  }();
  return list;
}

const NumpyType& NumpyTypeOf(DType dtype) {
  for (const NumpyType& type : kNumpyTypes) {
    if (type.dtype == dtype) return type;
  }
  RELAY_UNREACHABLE("dtype missing from the NumPy table");
}

struct ElementType {
  DType dtype;
  bool swap_bytes;  // stored in the opposite byte order to this machine's
};

// Parses a type string such as "<f4": a byte order ('<' little, '>' big,
// '=' native, '|' not applicable, for 1-byte types only), a kind character
// and a size in bytes.
std::optional<ElementType> ParseTypeString(std::string_view text) {
  if (text.size() < 3 || text.size() > 4) return std::nullopt;
  const char order = text[0];
  if (order != '<' && order != '>' && order != '=' && order != '|') return std::nullopt;
  const std::string_view digits = text.substr(2);
  if (digits[0] == '0' || !std::all_of(digits.begin(), digits.end(),
                                       [](char digit) { return digit >= '0' && digit <= '9'; })) {
    return std::nullopt;
  }
  size_t bytes = 0;
  for (const char digit : digits) bytes = bytes * 10 + static_cast<size_t>(digit - '0');
  for (const NumpyType& type : kNumpyTypes) {
    if (type.kind != text[1] || type.bytes != bytes) continue;
    if (bytes == 1) return ElementType{type.dtype, false};
    if (order == '|') return std::nullopt;
    const bool little =
        order == '<' || (order == '=' && std::endian::native == std::endian::little);
    return ElementType{type.dtype, little != (std::endian::native == std::endian::little)};
  }
  return std::nullopt;
}

std::string TypeStringOf(DType dtype) {
  const NumpyType& type = NumpyTypeOf(dtype);
  std::string text(1, type.bytes == 1 ? '|' : '<');
  text += type.kind;
  text += std::to_string(type.bytes);
  return text;
}

// ---- the header's Python literal -------------------------------------------------

struct Literal {
  enum class Kind { kString, kInteger, kBoolean, kNone, kTuple, kList };
  Kind kind = Kind::kNone;
  std::string string;
  int64_t integer = 0;
  bool boolean = false;
  std::vector<Literal> items;
  std::string_view source;  // as written, for messages
};

// A strict parser for the subset of Python literal syntax that NumPy writes:
// one dict with string keys whose values are strings, integers, True, False,
// None, tuples and lists (lists appear in structured dtypes, which are then
// refused by name).
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  std::vector<std::pair<std::string, Literal>> ParseDictionary() {
    std::vector<std::pair<std::string, Literal>> entries;
    SkipSpace();
    Expect('{');
    SkipSpace();
    while (Peek() != '}') {
      if (Peek() != '\'' && Peek() != '"') Fail("expected a string key");
      std::string key = ParseString();
      SkipSpace();
      Expect(':');
      SkipSpace();
      entries.emplace_back(std::move(key), ParseValue(1));
      SkipSpace();
      if (Peek() == ',') {
        ++position_;
        SkipSpace();
      } else if (Peek() != '}') {
        Fail("expected ',' or '}'");
      }
    }
    ++position_;
    SkipSpace();
    if (position_ != text_.size()) Fail("unexpected text after the dictionary");
    return entries;
  }

 private:
  [[noreturn]] void Fail(std::string_view what) const {
    ThrowLoadError(name_, "malformed header: " + std::string(what) + " at byte " +
                              std::to_string(position_) + " of the header");
  }
  char Peek() const { return position_ < text_.size() ? text_[position_] : '\0'; }
  void Expect(char expected) {
    if (Peek() != expected) Fail(std::string("expected '") + expected + "'");
    ++position_;
  }
  void SkipSpace() {
    while (position_ < text_.size() && (text_[position_] == ' ' || text_[position_] == '\t' ||
                                        text_[position_] == '\n' || text_[position_] == '\r')) {
      ++position_;
    }
  }

  std::string ParseString() {
    const char quote = text_[position_++];
    std::string value;
    while (true) {
      if (position_ >= text_.size() || text_[position_] == '\n') Fail("unterminated string");
      const char character = text_[position_++];
      if (character == quote) return value;
      if (character != '\\') {
        value += character;
        continue;
      }
      if (position_ >= text_.size()) Fail("unterminated string");
      const char escaped = text_[position_++];
      if (escaped == '\\' || escaped == '\'' || escaped == '"') {
        value += escaped;
      } else {
        Fail("unsupported escape sequence in string");
      }
    }
  }

  int64_t ParseDigits(bool negative) {
    const size_t start = position_;
    uint64_t magnitude = 0;
    const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + negative;
    while (position_ < text_.size() && text_[position_] >= '0' && text_[position_] <= '9') {
      const auto digit = static_cast<uint64_t>(text_[position_] - '0');
      if (magnitude > (limit - digit) / 10) Fail("integer out of range");
      magnitude = magnitude * 10 + digit;
      ++position_;
    }
    if (position_ == start) Fail("expected digits");
    if (text_[start] == '0' && position_ - start > 1) Fail("integer with a leading zero");
    // NumPy under Python 2 could write long integers as "3L".
    if (Peek() == 'L') ++position_;
    if (negative) return magnitude == 0 ? 0 : -static_cast<int64_t>(magnitude - 1) - 1;
    return static_cast<int64_t>(magnitude);
  }

  Literal ParseValue(int depth) {
    if (depth > kMaximumNesting) Fail("values nested too deeply");
    const size_t start = position_;
    Literal value;
    const char next = Peek();
    if (next == '\'' || next == '"') {
      value.kind = Literal::Kind::kString;
      value.string = ParseString();
    } else if (next == '-' || (next >= '0' && next <= '9')) {
      const bool negative = next == '-';
      if (negative) ++position_;
      value.kind = Literal::Kind::kInteger;
      value.integer = ParseDigits(negative);
    } else if (next == '(' || next == '[') {
      const char close = next == '(' ? ')' : ']';
      ++position_;
      SkipSpace();
      bool saw_comma = false;
      while (Peek() != close) {
        value.items.push_back(ParseValue(depth + 1));
        SkipSpace();
        if (Peek() == ',') {
          saw_comma = true;
          ++position_;
          SkipSpace();
        } else if (Peek() != close) {
          Fail(std::string("expected ',' or '") + close + "'");
        }
      }
      ++position_;
      // As in Python, "(3)" is the integer 3; only a comma makes a tuple.
      if (next == '(' && value.items.size() == 1 && !saw_comma) {
        Literal inner = std::move(value.items[0]);
        inner.source = text_.substr(start, position_ - start);
        return inner;
      }
      value.kind = next == '(' ? Literal::Kind::kTuple : Literal::Kind::kList;
    } else if (std::isalpha(static_cast<unsigned char>(next)) || next == '_') {
      while (
          position_ < text_.size() &&
          (std::isalnum(static_cast<unsigned char>(text_[position_])) || text_[position_] == '_')) {
        ++position_;
      }
      const std::string_view word = text_.substr(start, position_ - start);
      if (word == "True" || word == "False") {
        value.kind = Literal::Kind::kBoolean;
        value.boolean = word == "True";
      } else if (word == "None") {
        value.kind = Literal::Kind::kNone;
      } else {
        position_ = start;
        Fail("unexpected name '" + detail::PrintableExcerpt(word, 40) + "'");
      }
    } else {
      Fail("expected a value");
    }
    value.source = text_.substr(start, position_ - start);
    return value;
  }

  std::string_view text_;
  const std::string& name_;
  size_t position_ = 0;
};

// ---- layout ------------------------------------------------------------------------

// What a file's preamble and header say, checked against the file's size.
struct NpyLayout {
  ElementType element;
  Shape shape;
  bool fortran_order = false;
  uint64_t data_offset = 0;
  uint64_t data_bytes = 0;
  int64_t element_count = 0;
};

// Validates magic, version and header length, and returns where the header
// ends (and the data begins). `prefix` holds the first
// whole preamble (magic, version, header length: at most 12 bytes) or the
// whole file, whichever is shorter.
uint64_t HeaderEnd(std::span<const uint8_t> prefix, uint64_t file_size, const std::string& name,
                   size_t* header_start) {
  if (file_size == 0) ThrowLoadError(name, "not a .npy file: the file is empty");
  if (file_size < kMagicBytes || !std::equal(kMagic, kMagic + kMagicBytes, prefix.begin())) {
    ThrowLoadError(name, "not a .npy file: missing the \\x93NUMPY magic string");
  }
  if (file_size < kMagicBytes + 2) ThrowLoadError(name, "truncated header: no format version");
  const int major = prefix[kMagicBytes];
  const int minor = prefix[kMagicBytes + 1];
  if (minor != 0 || major < 1 || major > 3) {
    ThrowLoadError(name, "unsupported .npy format version " + std::to_string(major) + "." +
                             std::to_string(minor) + " (1.0, 2.0 and 3.0 are supported)");
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  *header_start = kMagicBytes + 2 + length_bytes;
  if (file_size < *header_start) ThrowLoadError(name, "truncated header: no header length");
  const uint8_t* length = prefix.data() + kMagicBytes + 2;
  uint64_t header_bytes = length[0] | (length[1] << 8);
  if (length_bytes == 4) {
    header_bytes |=
        (static_cast<uint64_t>(length[2]) << 16) | (static_cast<uint64_t>(length[3]) << 24);
  }
  if (header_bytes > kMaximumHeaderBytes) {
    ThrowLoadError(name, "header of " + std::to_string(header_bytes) +
                             " bytes exceeds the limit of " + std::to_string(kMaximumHeaderBytes));
  }
  if (header_bytes > file_size - *header_start) {
    ThrowLoadError(name, "truncated header: declares " + std::to_string(header_bytes) +
                             " bytes, file has " + std::to_string(file_size - *header_start));
  }
  return *header_start + header_bytes;
}

// Parses and checks the header. `prefix` holds at least the bytes up to
// HeaderEnd; nothing is allocated in proportion to the declared shape.
NpyLayout ParseLayout(std::span<const uint8_t> prefix, uint64_t file_size,
                      const std::string& name) {
  size_t header_start = 0;
  NpyLayout layout;
  layout.data_offset = HeaderEnd(prefix, file_size, name, &header_start);
  const std::string_view header(reinterpret_cast<const char*>(prefix.data()) + header_start,
                                layout.data_offset - header_start);

  std::optional<Literal> descr, fortran_order, shape;
  for (auto& [key, value] : HeaderParser(header, name).ParseDictionary()) {
    std::optional<Literal>* slot = key == "descr"           ? &descr
                                   : key == "fortran_order" ? &fortran_order
                                   : key == "shape"         ? &shape
                                                            : nullptr;
    if (slot == nullptr) {
      ThrowLoadError(name,
                     "malformed header: unexpected key '" + detail::PrintableExcerpt(key) + "'");
    }
    if (slot->has_value()) {
      ThrowLoadError(name,
                     "malformed header: duplicate key '" + detail::PrintableExcerpt(key) + "'");
    }
    *slot = std::move(value);
  }
  for (const auto& [key, slot] :
       {std::pair{"descr", &descr}, std::pair{"fortran_order", &fortran_order},
        std::pair{"shape", &shape}}) {
    if (!slot->has_value()) {
      ThrowLoadError(name, std::string("malformed header: no '") + key + "' key");
    }
  }

  std::optional<ElementType> element;
  if (descr->kind == Literal::Kind::kString) element = ParseTypeString(descr->string);
  if (!element) {
    const std::string written = descr->kind == Literal::Kind::kString
                                    ? "'" + detail::PrintableExcerpt(descr->string) + "'"
                                    : detail::PrintableExcerpt(descr->source);
    ThrowLoadError(
        name, "unsupported dtype " + written + " (relay-vm supports " + SupportedDTypeList() + ")");
  }
  layout.element = *element;

  if (fortran_order->kind != Literal::Kind::kBoolean) {
    ThrowLoadError(name, "malformed header: 'fortran_order' must be True or False, not " +
                             detail::PrintableExcerpt(fortran_order->source));
  }
  layout.fortran_order = fortran_order->boolean;

  const auto bad_shape = [&] {
    ThrowLoadError(name,
                   "malformed header: 'shape' must be a tuple of non-negative integers, not " +
                       detail::PrintableExcerpt(shape->source));
  };
  if (shape->kind != Literal::Kind::kTuple) bad_shape();
  bool has_zero = false;
  for (const Literal& dimension : shape->items) {
    if (dimension.kind != Literal::Kind::kInteger || dimension.integer < 0) bad_shape();
    layout.shape.push_back(dimension.integer);
    has_zero = has_zero || dimension.integer == 0;
  }

  const size_t element_bytes = DTypeSize(layout.element.dtype);
  const auto describe = [&] {
    // A hostile header may list thousands of dimensions; keep the line short.
    return "shape " + detail::PrintableExcerpt(ShapeToString(layout.shape), 200) + " of " +
           std::string(DTypeName(layout.element.dtype));
  };
  uint64_t count = 1;
  if (has_zero) {
    count = 0;
  } else {
    for (const int64_t dimension : layout.shape) {
      if (__builtin_mul_overflow(count, static_cast<uint64_t>(dimension), &count) ||
          count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        ThrowLoadError(name, describe() + " has too many elements");
      }
    }
  }
  uint64_t data_bytes = 0;
  if (__builtin_mul_overflow(count, element_bytes, &data_bytes) ||
      data_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    ThrowLoadError(name, describe() + " is too large");
  }
  layout.element_count = static_cast<int64_t>(count);
  layout.data_bytes = data_bytes;

  const uint64_t available = file_size - layout.data_offset;
  if (available != data_bytes) {
    ThrowLoadError(name, std::string(available < data_bytes ? "truncated data" : "trailing bytes") +
                             ": " + describe() + " needs " + std::to_string(data_bytes) +
                             " bytes, file has " + std::to_string(available));
  }
  return layout;
}

// ---- element conversion ------------------------------------------------------------

// Copies one element, reversing its bytes when asked. Works in place.
inline void CopyElement(const uint8_t* source, uint8_t* destination, size_t bytes, bool swap) {
  uint8_t buffer[8];
  std::memcpy(buffer, source, bytes);
  if (swap) std::reverse(buffer, buffer + bytes);
  std::memcpy(destination, buffer, bytes);
}

// Turns file data into a row-major tensor in host byte order. `source` may
// equal `destination` unless the layout is Fortran order with ndim > 1.
void DecodeData(const NpyLayout& layout, const uint8_t* source, uint8_t* destination) {
  const size_t element_bytes = DTypeSize(layout.element.dtype);
  const auto count = static_cast<size_t>(layout.element_count);
  const bool swap = layout.element.swap_bytes;
  const size_t ndim = layout.shape.size();
  if (!layout.fortran_order || ndim <= 1 || count == 0) {
    if (!swap) {
      if (source != destination) std::memcpy(destination, source, layout.data_bytes);
    } else {
      for (size_t index = 0; index < count; ++index) {
        CopyElement(source + index * element_bytes, destination + index * element_bytes,
                    element_bytes, swap);
      }
    }
  } else {
    // Walk the source in its (column-major) order, keeping the row-major
    // destination offset up to date as the first index runs fastest.
    std::vector<size_t> strides(ndim);
    size_t stride = 1;
    for (size_t axis = ndim; axis-- > 0;) {
      strides[axis] = stride;
      stride *= static_cast<size_t>(layout.shape[axis]);
    }
    std::vector<size_t> index(ndim, 0);
    size_t destination_element = 0;
    for (size_t source_element = 0; source_element < count; ++source_element) {
      CopyElement(source + source_element * element_bytes,
                  destination + destination_element * element_bytes, element_bytes, swap);
      for (size_t axis = 0; axis < ndim; ++axis) {
        destination_element += strides[axis];
        if (++index[axis] < static_cast<size_t>(layout.shape[axis])) break;
        destination_element -= strides[axis] * index[axis];
        index[axis] = 0;
      }
    }
  }
  if (layout.element.dtype == DType::kBool) {
    // NumPy reads any non-zero byte as True; C++ bool admits only 0 and 1.
    for (size_t index = 0; index < count; ++index) destination[index] = destination[index] != 0;
  }
}

// ---- files -------------------------------------------------------------------------

class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::string& path) : path_(path) {
    descriptor_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (descriptor_ < 0) Fail("cannot open", errno);
  }
  ~ReadOnlyFile() { ::close(descriptor_); }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  // Size of a regular file; nullopt for pipes and other streams.
  std::optional<uint64_t> RegularFileSize() const {
    struct stat status {};
    if (::fstat(descriptor_, &status) != 0) Fail("cannot read", errno);
    if (!S_ISREG(status.st_mode)) return std::nullopt;
    return static_cast<uint64_t>(status.st_size);
  }

  void ReadExactly(uint64_t offset, uint8_t* destination, uint64_t bytes) const {
    while (bytes > 0) {
      const size_t request = static_cast<size_t>(std::min<uint64_t>(bytes, 1u << 30));
      const ssize_t count = ::pread(descriptor_, destination, request, static_cast<off_t>(offset));
      if (count < 0) {
        if (errno == EINTR) continue;
        Fail("cannot read", errno);
      }
      if (count == 0) ThrowLoadError(path_, "cannot read: the file shrank while being read");
      destination += count;
      offset += static_cast<uint64_t>(count);
      bytes -= static_cast<uint64_t>(count);
    }
  }

 private:
  [[noreturn]] void Fail(std::string_view operation, int error_number) const {
    ThrowLoadError(path_, std::string(operation) + ": " + std::strerror(error_number));
  }

  const std::string& path_;
  int descriptor_ = -1;
};

// Magic, version, header length, header and padding for `tensor`.
std::vector<uint8_t> BuildPreamble(const Tensor& tensor) {
  const std::string dictionary =
      "{'descr': '" + TypeStringOf(tensor.dtype()) +
      "', 'fortran_order': False, 'shape': " + ShapeToString(tensor.shape()) + ", }";
  // The header ends in '\n' and is padded with spaces so that the data
  // starts on a kHeaderAlignment boundary, as NumPy writes it.
  const auto padded_length = [&](size_t length_bytes) {
    const size_t unpadded = kMagicBytes + 2 + length_bytes + dictionary.size() + 1;
    return dictionary.size() + 1 +
           (kHeaderAlignment - unpadded % kHeaderAlignment) % kHeaderAlignment;
  };
  int major = 1;
  size_t length_bytes = 2;
  size_t header_bytes = padded_length(length_bytes);
  if (header_bytes > kVersion1MaximumHeaderBytes) {
    major = 2;
    length_bytes = 4;
    header_bytes = padded_length(length_bytes);
  }
  std::vector<uint8_t> preamble(kMagic, kMagic + kMagicBytes);
  preamble.push_back(static_cast<uint8_t>(major));
  preamble.push_back(0);
  for (size_t byte = 0; byte < length_bytes; ++byte) {
    preamble.push_back(static_cast<uint8_t>(header_bytes >> (8 * byte)));
  }
  preamble.insert(preamble.end(), dictionary.begin(), dictionary.end());
  preamble.resize(preamble.size() + header_bytes - dictionary.size() - 1, ' ');
  preamble.push_back('\n');
  return preamble;
}

// The tensor's elements in little-endian order: a view of the tensor itself
// on little-endian machines, else a swapped copy held in `scratch`.
std::span<const uint8_t> LittleEndianData(const Tensor& tensor, std::vector<uint8_t>& scratch) {
  const auto* data = static_cast<const uint8_t*>(tensor.host_data());
  const std::span<const uint8_t> bytes(data, tensor.byte_size());
  if constexpr (std::endian::native == std::endian::little) {
    return bytes;
  } else {
    scratch.assign(bytes.begin(), bytes.end());
    const size_t element_bytes = DTypeSize(tensor.dtype());
    for (size_t offset = 0; offset < scratch.size(); offset += element_bytes) {
      std::reverse(scratch.begin() + offset, scratch.begin() + offset + element_bytes);
    }
    return scratch;
  }
}

}  // namespace

Ref<Tensor> ParseNpy(std::span<const uint8_t> bytes, const std::string& name, Device& host) {
  RequireHost(host, "ParseNpy");
  const NpyLayout layout = ParseLayout(bytes, bytes.size(), name);
  Ref<Tensor> tensor = Tensor::Empty(host, layout.shape, layout.element.dtype);
  DecodeData(layout, bytes.data() + layout.data_offset, static_cast<uint8_t*>(tensor->host_data()));
  return tensor;
}

Ref<Tensor> ReadNpy(const std::string& path, Device& host) {
  RequireHost(host, "ReadNpy");
  const ReadOnlyFile file(path);
  const std::optional<uint64_t> file_size = file.RegularFileSize();
  if (!file_size) {
    const std::vector<uint8_t> bytes = detail::ReadFileBytes(path);
    return ParseNpy(bytes, path, host);
  }
  // Read the header first and check it against the file's size, so that a
  // header declaring a huge shape fails before anything is allocated for it.
  std::vector<uint8_t> prefix(std::min<uint64_t>(*file_size, 4096));
  file.ReadExactly(0, prefix.data(), prefix.size());
  size_t header_start = 0;
  const uint64_t data_offset = HeaderEnd(prefix, *file_size, path, &header_start);
  if (data_offset > prefix.size()) {
    const size_t already_read = prefix.size();
    prefix.resize(data_offset);
    file.ReadExactly(already_read, prefix.data() + already_read, data_offset - already_read);
  }
  const NpyLayout layout = ParseLayout(prefix, *file_size, path);

  Ref<Tensor> tensor = Tensor::Empty(host, layout.shape, layout.element.dtype);
  auto* destination = static_cast<uint8_t*>(tensor->host_data());
  if (layout.fortran_order && layout.shape.size() > 1) {
    std::vector<uint8_t> column_major(layout.data_bytes);
    file.ReadExactly(layout.data_offset, column_major.data(), layout.data_bytes);
    DecodeData(layout, column_major.data(), destination);
  } else {
    file.ReadExactly(layout.data_offset, destination, layout.data_bytes);
    DecodeData(layout, destination, destination);
  }
  return tensor;
}

std::vector<uint8_t> SerializeNpy(const Tensor& tensor) {
  std::vector<uint8_t> scratch;
  const std::span<const uint8_t> data = LittleEndianData(tensor, scratch);
  std::vector<uint8_t> bytes = BuildPreamble(tensor);
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

void WriteNpy(const std::string& path, const Tensor& tensor) {
  // Reaching the data first means a tensor off the host fails before any
  // file is touched.
  std::vector<uint8_t> scratch;
  const std::span<const uint8_t> data = LittleEndianData(tensor, scratch);
  const std::vector<uint8_t> preamble = BuildPreamble(tensor);
  const std::span<const uint8_t> pieces[] = {preamble, data};
  detail::WriteFileAtomically(path, pieces);
}

}  // namespace relay

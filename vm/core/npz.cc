// NumPy .npz archives: a ZIP file whose members are .npy files named after
// the arrays they hold.
#include "relay/npy.h"

#include <set>
#include <string_view>

#include "relay/error.h"
#include "vm/core/zip_archive.h"

namespace relay {
namespace {

constexpr std::string_view kMemberSuffix = ".npy";

}  // namespace

std::vector<NamedTensor> ParseNpz(std::span<const uint8_t> bytes, const std::string& name,
                                  Device& host) {
  if (!host.host_accessible()) {
    throw Error(ErrorKind::kUsage,
                "ParseNpz needs a host-accessible device, not " + host.id().ToString());
  }
  const detail::ZipReader reader(bytes, name);
  std::vector<NamedTensor> arrays;
  std::set<std::string_view> seen;
  std::vector<uint8_t> scratch;
  for (const detail::ZipMember& member : reader.members()) {
    if (!member.name.ends_with(kMemberSuffix)) {
      reader.ThrowMemberError(member, "is not a .npy array (its name does not end in .npy)");
    }
    if (!seen.insert(member.name).second) reader.ThrowMemberError(member, "appears twice");
    const std::span<const uint8_t> contents = reader.Extract(member, scratch);
    Ref<Tensor> tensor;
    try {
      tensor = ParseNpy(contents, member.name, host);
    } catch (const Error& error) {
      // Re-attribute the member's error to the archive, keeping one line.
      if (error.kind() != ErrorKind::kLoad) throw;
      reader.ThrowMemberError(member, error.message());
    }
    arrays.push_back(
        {member.name.substr(0, member.name.size() - kMemberSuffix.size()), std::move(tensor)});
  }
  return arrays;
}

std::vector<NamedTensor> ReadNpz(const std::string& path, Device& host) {
  const std::vector<uint8_t> bytes = detail::ReadFileBytes(path);
  return ParseNpz(bytes, path, host);
}

void WriteNpz(const std::string& path, const std::vector<NamedTensor>& arrays,
              NpzCompression compression) {
  std::set<std::string_view> names;
  for (const NamedTensor& array : arrays) {
    if (array.name.empty()) throw Error(ErrorKind::kUsage, "npz array names must not be empty");
    if (!names.insert(array.name).second) {
      throw Error(ErrorKind::kUsage,
                  "duplicate npz array name '" + detail::PrintableExcerpt(array.name) + "'");
    }
    if (!array.tensor) {
      throw Error(ErrorKind::kUsage,
                  "npz array '" + detail::PrintableExcerpt(array.name) + "' has no tensor");
    }
  }
  const detail::ZipMethod method = compression == NpzCompression::kDeflate
                                       ? detail::ZipMethod::kDeflate
                                       : detail::ZipMethod::kStored;
  detail::ZipWriter writer;
  for (const NamedTensor& array : arrays) {
    const std::vector<uint8_t> contents = SerializeNpy(*array.tensor);
    writer.Add(array.name + std::string(kMemberSuffix), contents, method);
  }
  const std::vector<uint8_t> archive = std::move(writer).Finish();
  const std::span<const uint8_t> pieces[] = {archive};
  detail::WriteFileAtomically(path, pieces);
}

}  // namespace relay

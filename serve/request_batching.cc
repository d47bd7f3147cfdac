#include "serve/request_batching.h"

#include <cstring>
#include <numeric>

#include "relay/devices.h"
#include "relay/error.h"

namespace relay::serve {

namespace {

size_t RowBytes(const Tensor& tensor) {
  return tensor.shape().front() == 0
             ? 0
             : tensor.byte_size() / static_cast<size_t>(tensor.shape().front());
}

}  // namespace

std::optional<int64_t> LeadingRows(const Tensors& inputs) {
  std::optional<int64_t> rows;
  for (const Ref<Tensor>& input : inputs) {
    if (input->ndim() == 0) return std::nullopt;
    if (rows && *rows != input->shape().front()) return std::nullopt;
    rows = input->shape().front();
  }
  return rows;
}

bool SameTrailingShapes(const Tensors& first, const Tensors& second) {
  if (first.size() != second.size()) return false;
  for (size_t index = 0; index < first.size(); ++index) {
    const Shape& a = first[index]->shape();
    const Shape& b = second[index]->shape();
    if (first[index]->dtype() != second[index]->dtype() || a.size() != b.size() || a.empty() ||
        !std::equal(a.begin() + 1, a.end(), b.begin() + 1))
      return false;
  }
  return true;
}

Tensors ConcatenateRows(const std::vector<const Tensors*>& requests) {
  Tensors batched;
  const Tensors& first = *requests.front();
  for (size_t input = 0; input < first.size(); ++input) {
    Shape shape = first[input]->shape();
    shape.front() = 0;
    for (const Tensors* request : requests) shape.front() += (*request)[input]->shape().front();
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, first[input]->dtype());
    auto* destination = static_cast<char*>(tensor->host_data());
    for (const Tensors* request : requests) {
      const Tensor& part = *(*request)[input];
      std::memcpy(destination, part.host_data(), part.byte_size());
      destination += part.byte_size();
    }
    batched.push_back(std::move(tensor));
  }
  return batched;
}

std::optional<std::vector<Tensors>> SplitRows(const Tensors& outputs,
                                              const std::vector<int64_t>& rows) {
  int64_t total = std::accumulate(rows.begin(), rows.end(), int64_t{0});
  std::vector<Tensors> split(rows.size());
  for (const Ref<Tensor>& output : outputs) {
    if (output->ndim() == 0 || output->shape().front() != total || !output->on_host())
      return std::nullopt;
    size_t row_bytes = RowBytes(*output);
    size_t offset = output->byte_offset();
    for (size_t request = 0; request < rows.size(); ++request) {
      Shape shape = output->shape();
      shape.front() = rows[request];
      split[request].push_back(Tensor::View(output->storage(), offset, shape, output->dtype()));
      offset += row_bytes * static_cast<size_t>(rows[request]);
    }
  }
  return split;
}

}  // namespace relay::serve

#include "vm/interpreter/rematerializer.h"

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <unordered_set>

#include "relay/devices.h"
#include "relay/error.h"

namespace relay::vm {

Rematerializer::Rematerializer(std::optional<size_t> budget, Rerun rerun)
    : budget_(budget), rerun_(std::move(rerun)) {}

Rematerializer::~Rematerializer() {
  destroying_ = true;
  for (auto& [storage, entry] : entries_) const_cast<Storage*>(storage)->DetachObserver();
}

Rematerializer::Computation::~Computation() {
  if (owner == nullptr || owner->destroying_) return;
  for (const Ref<Tensor>& input : inputs) {
    if (Entry* entry = owner->Find(input->storage().get())) --entry->record_references;
  }
}

void Rematerializer::AddFixedBytes(size_t bytes) {
  AddResident(bytes);
}

void Rematerializer::AddResident(size_t bytes) {
  resident_bytes_ += bytes;
  if (resident_bytes_ > stats_.peak_bytes) stats_.peak_bytes = resident_bytes_;
}

Rematerializer::Entry* Rematerializer::Find(const Storage* storage) {
  // Kept with the storage: no lookup on every kernel input.
  if (storage->observer() != this) return nullptr;
  return static_cast<Entry*>(storage->observer_data());
}

// ---- StorageObserver ----------------------------------------------------------------------

void Rematerializer::BeforeAllocate(size_t bytes) {
  if (budget_) MakeRoom(bytes);
}

void Rematerializer::Allocated(Storage& storage) {
  Entry& entry = entries_[&storage];
  storage.set_observer_data(&entry);
  entry.bytes = storage.size();
  entry.last_use = ++clock_;
  AddResident(entry.bytes);
}

void Rematerializer::Destroyed(Storage& storage) {
  auto found = entries_.find(&storage);
  if (found == entries_.end()) return;
  RemoveCandidate(found->second);
  // Out of the map before it goes: dropping its computation may destroy
  // other storages, which come back here.
  Entry entry = std::move(found->second);
  entries_.erase(found);
  if (storage.resident()) {
    resident_bytes_ -= entry.bytes;
  } else if (entry.component >= 0 && entry.computation) {
    component_cost_[FindComponent(entry.component)] -= double(entry.computation->cost.count());
  }
  if (entry.computation) {
    for (Computation::Output& output : entry.computation->outputs) {
      if (output.storage == &storage) output.storage = nullptr;
    }
  }
}

// ---- recording ----------------------------------------------------------------------------

void Rematerializer::Record(int32_t kernel, std::span<const Ref<Tensor>> inputs,
                            std::span<const Ref<Tensor>> outputs,
                            std::chrono::nanoseconds elapsed) {
  if (!budget_) return;
  auto computation = std::make_shared<Computation>();
  computation->owner = this;
  computation->kernel = kernel;
  computation->cost = elapsed;
  for (const Ref<Tensor>& input : inputs) {
    // A small input that nothing recomputes (a loop counter, an index) is
    // copied: held here, the run's own would live as long as this record,
    // and such scalars would pile up, unevictable, over a long loop. The
    // copies are this record's, outside the budget, as its other fields.
    Entry* entry = Find(input->storage().get());
    if (entry != nullptr && !entry->computation && input->byte_size() <= kCopiedInputBytes) {
      ScopedStorageObserver unobserved(nullptr);
      computation->inputs.push_back(CopyTensor(*input, HostDevice()));
    } else {
      computation->inputs.push_back(input);
    }
  }
  bool any = false;
  for (const Ref<Tensor>& output : outputs) {
    Storage* storage = output->storage().get();
    Entry* entry = Find(storage);
    computation->outputs.push_back(
        {storage, output->byte_offset(), output->shape(), output->dtype()});
    // Only a storage the output fills alone can be recomputed as a whole.
    if (entry == nullptr || output->byte_offset() != 0 || output->byte_size() != storage->size()) {
      computation->outputs.back().storage = nullptr;
      continue;
    }
    entry->computation = computation;
    entry->last_use = ++clock_;
    AddCandidate(*storage, *entry);
    any = true;
  }
  if (!any) {
    computation->owner = nullptr;  // counted nothing
    return;
  }
  ++recorded_calls_;
  for (const Ref<Tensor>& input : computation->inputs) {
    Entry* entry = Find(input->storage().get());
    if (entry == nullptr) continue;
    entry->consumers.push_back(computation);
    ++entry->record_references;
    if (entry->held_tensor != nullptr && entry->held_tensor != input.get()) {
      entry->tensors_vary = true;
    }
    entry->held_tensor = input.get();
  }
}

void Rematerializer::BeforeOverwrite(const Tensor& tensor) {
  Entry* entry = Find(tensor.storage().get());
  if (entry == nullptr || !entry->computation) return;
  // What was computed from the old contents stays, resident for good.
  std::vector<std::weak_ptr<Computation>> consumers = entry->consumers;
  for (const std::weak_ptr<Computation>& weak : consumers) {
    std::shared_ptr<Computation> consumer = weak.lock();
    if (!consumer) continue;
    for (Computation::Output& output : consumer->outputs) {
      if (output.storage == nullptr) continue;
      Storage* storage = output.storage;
      Entry* produced = Find(storage);
      if (produced == nullptr) continue;
      if (!storage->resident()) Rematerialize(*storage, *produced);
      produced = Find(storage);
      if (produced != nullptr) {
        produced->computation.reset();
        RemoveCandidate(*produced);
      }
      output.storage = nullptr;
    }
  }
  entry = Find(tensor.storage().get());
  if (entry == nullptr || !entry->computation) return;
  for (Computation::Output& output : entry->computation->outputs) {
    if (output.storage == tensor.storage().get()) output.storage = nullptr;
  }
  entry->computation.reset();
  entry->consumers.clear();
  RemoveCandidate(*entry);
}

// ---- use ----------------------------------------------------------------------------------

void Rematerializer::Touch(const Tensor& tensor) {
  Storage* storage = tensor.storage().get();
  Entry* entry = Find(storage);
  if (entry == nullptr) return;
  if (!storage->resident()) {
    OpenScope();
    try {
      Rematerialize(*storage, *entry);
    } catch (...) {
      CloseScope();
      throw;
    }
    CloseScope();
    entry = Find(storage);
    if (entry == nullptr) return;
  }
  entry->last_use = ++clock_;
}

void Rematerializer::OpenScope() {
  if (scope_depth_++ == 0) ++scope_;
}

void Rematerializer::CloseScope() {
  if (--scope_depth_ > 0) return;
  std::vector<Storage*> kept = std::move(scope_pins_);
  scope_pins_.clear();
  for (Storage* storage : kept) Unpin(storage);
}

void Rematerializer::TouchDeep(const Value& root) {
  std::vector<const Object*> pending;
  std::unordered_set<const Object*> seen;
  if (root) pending.push_back(root.get());
  auto push = [&](const Value& value) {
    if (value && seen.insert(value.get()).second) pending.push_back(value.get());
  };
  // Each one pinned once resident, so that recomputing the next cannot
  // evict it.
  std::vector<Ref<Tensor>> tensors;
  while (!pending.empty()) {
    const Object* object = pending.back();
    pending.pop_back();
    switch (object->kind()) {
      case ObjectKind::kTensor:
        tensors.push_back(Ref<Tensor>(const_cast<Tensor*>(static_cast<const Tensor*>(object))));
        break;
      case ObjectKind::kTuple:
        for (const Value& field : static_cast<const Tuple*>(object)->fields()) push(field);
        break;
      case ObjectKind::kConstructed:
        for (const Value& field : static_cast<const Constructed*>(object)->fields()) push(field);
        break;
      case ObjectKind::kClosure:
        for (const Value& value : static_cast<const Closure*>(object)->captured()) push(value);
        break;
      case ObjectKind::kReference:
        push(static_cast<const Reference*>(object)->Read());
        break;
      default:
        break;
    }
  }
  Pin resident(*this, tensors);
}

Rematerializer::Pin::Pin(Rematerializer& owner, std::span<const Ref<Tensor>> tensors)
    : owner_(owner) {
  // One scope for all of them: what recomputing one restores stays for
  // the next, which may need it too.
  owner_.OpenScope();
  for (const Ref<Tensor>& tensor : tensors) {
    Storage* storage = tensor->storage().get();
    try {
      owner_.Touch(*tensor);
    } catch (...) {
      for (Storage* pinned : storages_) owner_.Unpin(pinned);
      owner_.CloseScope();
      throw;
    }
    if (Entry* entry = owner_.Find(storage)) {
      ++entry->pins;
      storages_.push_back(storage);
    }
  }
  owner_.CloseScope();
}

Rematerializer::Pin::~Pin() {
  for (Storage* storage : storages_) owner_.Unpin(storage);
}

void Rematerializer::Unpin(Storage* storage) {
  if (Entry* entry = Find(storage)) --entry->pins;
}

// Recomputes `storage` by rerunning what computed it: its inputs made
// resident first (recursively) and pinned, its evicted sibling results
// restored alongside, a destroyed one written to scratch.
void Rematerializer::Rematerialize(Storage& storage, Entry& entry) {
  std::shared_ptr<Computation> computation = entry.computation;
  RELAY_CHECK(computation, "an evicted storage without a computation");
  std::vector<Storage*> pinned;
  auto pin = [&](Storage* pinned_storage) {
    if (Entry* found = Find(pinned_storage)) {
      ++found->pins;
      pinned.push_back(pinned_storage);
    }
  };
  try {
    for (const Ref<Tensor>& input : computation->inputs) {
      Touch(*input);
      pin(input->storage().get());
    }
    std::vector<Ref<Tensor>> outputs;
    for (const Computation::Output& output : computation->outputs) {
      if (output.storage == nullptr) {
        outputs.push_back(Tensor::Empty(HostDevice(), output.shape, output.dtype));
        continue;
      }
      Entry* sibling = Find(output.storage);
      if (!output.storage->resident()) {
        MakeRoom(output.storage->size());
        output.storage->Restore();
        if (sibling != nullptr) Restored(*output.storage, *sibling);
      }
      pin(output.storage);
      outputs.push_back(Tensor::View(Ref<Storage>(output.storage), output.byte_offset, output.shape,
                                     output.dtype));
    }
    rerun_(computation->kernel, computation->inputs, outputs);
    ++stats_.recomputations;
    if (stats_.recomputations > kMaxRecomputationsPerCall * recorded_calls_ + 100000) {
      throw Error(ErrorKind::kRuntime,
                  "the memory budget of " + std::to_string(*budget_) +
                      " bytes is too small to run in reasonable time: " +
                      std::to_string(stats_.recomputations) + " recomputations for " +
                      std::to_string(recorded_calls_) +
                      " operator calls so far; give it more (the run's peak without a budget "
                      "is what --stats reports without --memory-budget)");
    }
    // Recomputed twice for one use: a chain of recomputations (an LSTM's
    // steps) whose links share an evicted ancestor would evict it and
    // recompute it again at every link, exponentially often. The second
    // time, it stays until the outermost recomputation is done.
    if (Entry* recomputed = Find(&storage)) {
      if (recomputed->recomputed_in_scope == scope_) {
        ++recomputed->pins;
        scope_pins_.push_back(&storage);
      }
      recomputed->recomputed_in_scope = scope_;
    }

  } catch (...) {
    for (Storage* pinned_storage : pinned) Unpin(pinned_storage);
    throw;
  }
  for (Storage* pinned_storage : pinned) Unpin(pinned_storage);
}

void Rematerializer::Restored(Storage& storage, Entry& entry) {
  AddResident(entry.bytes);
  AddCandidate(storage, entry);
  if (entry.component >= 0) {
    component_cost_[FindComponent(entry.component)] -= double(entry.computation->cost.count());
    entry.component = -1;
  }
  entry.last_use = ++clock_;
}

// ---- eviction -----------------------------------------------------------------------------

void Rematerializer::MakeRoom(size_t bytes) {
  // Nothing to make room for (the VM's stand-in for a planned block).
  if (bytes == 0) return;
  while (resident_bytes_ + bytes > *budget_) {
    Storage* victim = ChooseVictim();
    if (victim == nullptr && !scope_pins_.empty()) {
      // Memory before time: what the scope kept against recomputing it
      // again may go after all.
      std::vector<Storage*> kept = std::move(scope_pins_);
      scope_pins_.clear();
      for (Storage* storage : kept) Unpin(storage);
      continue;
    }
    if (victim == nullptr) {
      throw Error(ErrorKind::kRuntime,
                  "the memory budget of " + std::to_string(*budget_) +
                      " bytes is too small: at this point the run needs at least " +
                      std::to_string(resident_bytes_ + bytes) + " bytes (" +
                      std::to_string(resident_bytes_) +
                      " that cannot be evicted: its inputs, the tensors in use and what "
                      "nothing can recompute; " +
                      std::to_string(bytes) + " more to allocate)");
    }
    Evict(*victim, *Find(victim));
  }
}

// Whether the program holds `storage` no more: its tensors are only in
// records, as inputs to recompute something else with. The DTR paper
// evicts such tensors as soon as the program drops them; here they go
// first when room is needed, whatever their score.
bool Rematerializer::OnlyRecordsHold(const Storage& storage, const Entry& entry) {
  // One tensor views the storage (the storage's one reference), the one
  // the records hold, and all its references are theirs.
  if (entry.record_references == 0 || entry.tensors_vary || storage.use_count() != 1) {
    return false;
  }
  return entry.held_tensor->use_count() == entry.record_references;
}

// Scores a sample of the candidates (all of them when there are few), as
// the DTR paper's implementation does: scanning thousands of small tensors
// (an LSTM's steps) at every eviction would cost more than recomputing.
Storage* Rematerializer::ChooseVictim() {
  Storage* best = nullptr;
  double best_score = std::numeric_limits<double>::infinity();
  const size_t count = candidates_.size();
  const size_t sampled = count <= kScannedCandidates ? count : kSampledCandidates;
  std::uniform_int_distribution<size_t> pick(0, count == 0 ? 0 : count - 1);
  for (size_t draw = 0; draw < sampled; ++draw) {
    Storage* storage = candidates_[sampled == count ? draw : pick(random_)];
    Entry& entry = *Find(storage);
    if (entry.pins > 0 || entry.bytes == 0) continue;
    // What the program dropped goes first.
    if (OnlyRecordsHold(*storage, entry)) return storage;
    double score = Score(entry);
    if (score < best_score) {
      best_score = score;
      best = storage;
    }
  }
  if (best == nullptr && sampled < count) {
    // Every one drawn was pinned: look at them all before giving up.
    for (Storage* storage : candidates_) {
      Entry& entry = *Find(storage);
      if (entry.pins > 0 || entry.bytes == 0) continue;
      double score = Score(entry);
      if (score < best_score) {
        best_score = score;
        best = storage;
      }
    }
  }
  return best;
}

void Rematerializer::AddCandidate(Storage& storage, Entry& entry) {
  if (entry.candidate_index != kNotCandidate || !entry.computation || !storage.resident()) return;
  entry.candidate_index = candidates_.size();
  candidates_.push_back(&storage);
}

void Rematerializer::RemoveCandidate(Entry& entry) {
  if (entry.candidate_index == kNotCandidate) return;
  Storage* last = candidates_.back();
  candidates_[entry.candidate_index] = last;
  Find(last)->candidate_index = entry.candidate_index;
  candidates_.pop_back();
  entry.candidate_index = kNotCandidate;
}

template <typename Visit>
void Rematerializer::ForEachEvictedNeighbour(Entry& entry, Visit&& visit) {
  for (const Ref<Tensor>& input : entry.computation->inputs) {
    const Storage* storage = input->storage().get();
    Entry* parent = Find(storage);
    if (parent != nullptr && !storage->resident() && parent->component >= 0) visit(*parent);
  }
  // Consumers whose results are all gone are dropped here, as they are met:
  // a value read at every step of a loop would gather thousands.
  std::erase_if(entry.consumers,
                [](const std::weak_ptr<Computation>& weak) { return weak.expired(); });
  for (const std::weak_ptr<Computation>& weak : entry.consumers) {
    std::shared_ptr<Computation> consumer = weak.lock();
    if (!consumer) continue;
    for (const Computation::Output& output : consumer->outputs) {
      if (output.storage == nullptr || output.storage->resident()) continue;
      Entry* child = Find(output.storage);
      if (child != nullptr && child->component >= 0) visit(*child);
    }
  }
}

// cost / (bytes * staleness), the cost including the evicted classes that
// recomputing this storage would also need (h_DTR-eq).
// The time recomputing `entry` would take if it were needed now (the
// paper's e*): its own kernel's and those of its evicted ancestors, walked
// through evicted inputs. The walk stops after kAncestryLimit of them; the
// ancestors beyond are counted by their equivalence classes (the paper's
// approximation of e*), which overrates them, but they are costly anyway.
double Rematerializer::AncestryCost(const Entry& entry) {
  double cost = double(entry.computation->cost.count()) + 1;
  const Entry* visited[kAncestryLimit];
  size_t count = 0;
  std::vector<const Entry*>& pending = ancestry_pending_;
  pending.clear();
  pending.push_back(&entry);
  while (!pending.empty()) {
    const Entry* current = pending.back();
    pending.pop_back();
    for (const Ref<Tensor>& input : current->computation->inputs) {
      const Storage* storage = input->storage().get();
      if (storage->resident()) continue;
      const Entry* parent = Find(storage);
      if (parent == nullptr || !parent->computation) continue;
      if (std::find(visited, visited + count, parent) != visited + count) continue;
      if (count == kAncestryLimit) {
        // Beyond the walk: the classes of the ancestors not expanded.
        int counted[8];
        size_t classes = 0;
        for (const Entry* beyond : pending) {
          if (beyond->component < 0) continue;
          const int component = FindComponent(beyond->component);
          if (std::find(counted, counted + classes, component) != counted + classes) continue;
          if (classes < std::size(counted)) counted[classes++] = component;
          cost += component_cost_[component];
        }
        return cost;
      }
      visited[count++] = parent;
      cost += double(parent->computation->cost.count()) + 1;
      pending.push_back(parent);
    }
  }
  return cost;
}

// cost / (bytes * staleness), the cost being that of recomputing the
// storage with its evicted ancestors (h_DTR with e*, AncestryCost).
double Rematerializer::Score(const Entry& entry) {
  const double staleness = double(clock_ - entry.last_use) + 1;
  return AncestryCost(entry) / (double(entry.bytes) * staleness);
}

void Rematerializer::Evict(Storage& storage, Entry& entry) {
  RemoveCandidate(entry);
  storage.Evict();
  resident_bytes_ -= entry.bytes;
  ++stats_.evictions;
  entry.component = int(component_parent_.size());
  component_parent_.push_back(entry.component);
  component_cost_.push_back(double(entry.computation->cost.count()));
  ForEachEvictedNeighbour(entry, [&](const Entry& neighbour) {
    MergeComponents(entry.component, neighbour.component);
  });
}

int Rematerializer::FindComponent(int component) {
  while (component_parent_[component] != component) {
    component_parent_[component] = component_parent_[component_parent_[component]];
    component = component_parent_[component];
  }
  return component;
}

void Rematerializer::MergeComponents(int into, int other) {
  int root = FindComponent(into);
  int other_root = FindComponent(other);
  if (root == other_root) return;
  component_parent_[other_root] = root;
  component_cost_[root] += component_cost_[other_root];
}

}  // namespace relay::vm

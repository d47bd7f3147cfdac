// Dynamic Tensor Rematerialization (Kirisame et al., "Dynamic Tensor
// Rematerialization", ICLR 2021): a VM run under a memory budget evicts
// tensors and recomputes them when they are used again, with no plan made
// ahead of time.
//
// The unit is a storage: an operator's result has one to itself under a
// budget (the VM gives each alloc_tensor its own storage instead of a view
// into a planned block), and the tensors sharing a storage (reshapes) are
// the aliases the DTR paper groups together. For each storage a kernel
// writes, the rematerializer records the kernel, its input tensors and the
// time it took; those storages may be evicted. Storages nothing recorded
// (the run's inputs, results of external kernels and device copies, the
// VM's own scalars) are never evicted.
//
// Eviction happens before an allocation that would take the resident bytes
// over the budget: the resident, unpinned, recorded storage with the lowest
//
//   h(t) = cost(t) / (bytes(t) * staleness(t))
//
// goes first, where staleness counts the accesses since t was last used and
// cost(t) is what recomputing t would take now: the measured times of its
// kernel and of its evicted ancestors' (the paper's e*), walked through
// evicted inputs up to 64 of them, and past that counted by the union-find
// classes of evicted storages the paper approximates e* with (merged on
// eviction, never split; a restored storage's cost leaves its class).
// Storages the program no longer holds go before any other. Every
// candidate is scored while there are at most 256, else a sample of 32.
// A storage used again while evicted is recomputed first, its evicted
// inputs recursively, each pinned while its consumer runs.
//
// Thread-safety: one VM run's, on the thread that runs it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "relay/storage.h"
#include "relay/tensor.h"
#include "relay/value.h"

namespace relay::vm {

struct MemoryStats {
  // The most bytes resident at once: the run's arguments and every storage
  // allocated on the run's thread while it ran (results, intermediates,
  // kernel workspaces); the executable's constants are not counted.
  size_t peak_bytes = 0;
  uint64_t evictions = 0;
  uint64_t recomputations = 0;
};

class Rematerializer final : public StorageObserver {
 public:
  // Reruns kernel `kernel` on `inputs` (all resident) into `outputs`.
  using Rerun = std::function<void(int32_t kernel, std::span<const Ref<Tensor>> inputs,
                                   std::span<const Ref<Tensor>> outputs)>;

  // `budget`: the most bytes resident at once; none: only measure.
  Rematerializer(std::optional<size_t> budget, Rerun rerun);
  // Detaches from every storage still alive.
  ~Rematerializer() override;
  Rematerializer(const Rematerializer&) = delete;
  Rematerializer& operator=(const Rematerializer&) = delete;

  bool has_budget() const { return budget_.has_value(); }

  // Bytes the run holds that are not its allocations (its arguments):
  // counted, never evicted.
  void AddFixedBytes(size_t bytes);

  // `outputs` were just written by kernel `kernel` from `inputs`, taking
  // `elapsed`: they may be evicted from now on, and recomputed so.
  void Record(int32_t kernel, std::span<const Ref<Tensor>> inputs,
              std::span<const Ref<Tensor>> outputs, std::chrono::nanoseconds elapsed);
  // `tensor`'s storage is about to be written by an operator that will not
  // be recorded (or recorded anew): whatever was recorded for it, and for
  // the storages computed from it, no longer holds.
  void BeforeOverwrite(const Tensor& tensor);

  // Makes `tensor`'s data resident (recomputing it if evicted) and marks it
  // used now.
  void Touch(const Tensor& tensor);
  // The same for every tensor inside `value`, all resident at once when
  // it returns: tuples, ADT values, closures' captured values, references'
  // contents.
  void TouchDeep(const Value& value);

  // Makes the storages of `tensors` resident, one after the other (each
  // pinned before the next is recomputed, which may evict), and keeps them
  // so while it lives.
  class Pin {
   public:
    Pin(Rematerializer& owner, std::span<const Ref<Tensor>> tensors);
    ~Pin();
    Pin(const Pin&) = delete;
    Pin& operator=(const Pin&) = delete;

   private:
    Rematerializer& owner_;
    std::vector<Storage*> storages_;
  };

  const MemoryStats& stats() const { return stats_; }

  // StorageObserver:
  void BeforeAllocate(size_t bytes) override;
  void Allocated(Storage& storage) override;
  void Destroyed(Storage& storage) override;

 private:
  static constexpr size_t kNotCandidate = ~size_t(0);
  // An eviction scores every candidate while there are at most
  // kScannedCandidates, else a random sample of kSampledCandidates.
  static constexpr size_t kScannedCandidates = 256;
  static constexpr size_t kSampledCandidates = 32;
  // Beyond this many recomputations per recorded operator call (plus a
  // start), a run is deemed to thrash: it fails instead of running on.
  static constexpr uint64_t kMaxRecomputationsPerCall = 50;

  // Inputs of at most this many bytes that nothing recomputes are copied
  // into the record that reads them (Record).
  static constexpr size_t kCopiedInputBytes = 64;

  // How some storages were computed: one kernel call.
  struct Computation {
    // Takes its inputs' references off their entries' counts.
    ~Computation();
    Rematerializer* owner = nullptr;  // null: it counted none
    int32_t kernel = 0;
    std::vector<Ref<Tensor>> inputs;
    // Where its results went, without owning them (a result nothing else
    // holds is destroyed; recomputing its siblings writes it to scratch).
    struct Output {
      Storage* storage = nullptr;  // null once destroyed
      size_t byte_offset = 0;
      Shape shape;
      DType dtype = DType::kFloat32;
    };
    std::vector<Output> outputs;
    std::chrono::nanoseconds cost{0};
  };

  struct Entry {
    size_t bytes = 0;
    uint64_t last_use = 0;
    int pins = 0;
    std::shared_ptr<Computation> computation;  // null: never evicted
    // Computations reading this storage: whose results need it to be
    // recomputed.
    std::vector<std::weak_ptr<Computation>> consumers;
    int component = -1;                      // evicted: its union-find class
    uint64_t recomputed_in_scope = 0;        // the last scope that recomputed it
    size_t candidate_index = kNotCandidate;  // in candidates_, while one
    // The references records hold to tensors of this storage, and the
    // tensor they hold (OnlyRecordsHold); tensors_vary when they hold more
    // than one tensor viewing it.
    uint32_t record_references = 0;
    const Tensor* held_tensor = nullptr;
    bool tensors_vary = false;
  };

  Entry* Find(const Storage* storage);
  void Rematerialize(Storage& storage, Entry& entry);
  void MakeRoom(size_t bytes);
  // The storage to evict next, or null when none may be.
  Storage* ChooseVictim();
  bool OnlyRecordsHold(const Storage& storage, const Entry& entry);
  double Score(const Entry& entry);
  // At most this many evicted ancestors are walked to cost a storage.
  static constexpr size_t kAncestryLimit = 64;
  double AncestryCost(const Entry& entry);
  std::vector<const Entry*> ancestry_pending_;  // AncestryCost's, reused
  void Evict(Storage& storage, Entry& entry);
  void Restored(Storage& storage, Entry& entry);
  // The candidates for eviction: resident, recorded storages (pinned or
  // not), for sampling.
  void AddCandidate(Storage& storage, Entry& entry);
  void RemoveCandidate(Entry& entry);
  // The evicted storages next to `entry` in the computation graph.
  template <typename Visit>
  void ForEachEvictedNeighbour(Entry& entry, Visit&& visit);
  int FindComponent(int component);
  void MergeComponents(int into, int other);
  void AddResident(size_t bytes);
  void Unpin(Storage* storage);
  // Recomputations nest inside a scope (a Touch, a Pin's touches); a
  // storage recomputed twice in one stays pinned until it closes.
  void OpenScope();
  void CloseScope();

  std::optional<size_t> budget_;
  Rerun rerun_;
  std::unordered_map<const Storage*, Entry> entries_;
  size_t resident_bytes_ = 0;
  uint64_t clock_ = 0;
  // Union-find over evicted storages: parent index and total cost.
  std::vector<int> component_parent_;
  std::vector<double> component_cost_;
  MemoryStats stats_;
  std::vector<Storage*> candidates_;
  bool destroying_ = false;
  std::mt19937_64 random_{20211};  // fixed: the same run evicts alike
  uint64_t recorded_calls_ = 0;
  int scope_depth_ = 0;
  uint64_t scope_ = 0;  // counts outermost scopes
  std::vector<Storage*> scope_pins_;
};

}  // namespace relay::vm

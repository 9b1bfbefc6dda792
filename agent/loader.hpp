// Data loader with the semantics of PyTorch's DataLoader as the papers use it: w = 0 fetches and
// preprocesses in the training thread; w >= 1 runs w workers, each building whole minibatches
// (round robin), with at most w x prefetch minibatches in flight, delivered in order.
// Minibatches are built in `memory` (page-locked on the GPU path, so the workers, not the training thread,
// write the memory the copy engine reads). A Loader is driven by one training thread; its workers are internal.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/datasets/dataset.hpp"

namespace jetsweep::agent {

// Builds one minibatch from sample ids; called concurrently from loader workers (must be thread-safe).
// A failed fetch is reported in Batch::status (the loader still delivers the batch, in order).
class BatchBuilder {
 public:
  virtual ~BatchBuilder() = default;
  virtual int64_t sample_count() const = 0;
  // Allocates `out` from `memory` (Batch::allocate) and fills it.
  virtual void build(int64_t epoch, const int64_t* ids, int64_t n, HostMemory& memory, Batch& out) const = 0;
};

// Fetch + preprocess from any Dataset: sizes the batch buffers for the dataset's sample shape and fetches
// each sample with its augmentation seed derived from (seed, epoch, sample id).
class DatasetBatchBuilder final : public BatchBuilder {
 public:
  DatasetBatchBuilder(const Dataset& data, int64_t seed) : data_(data), seed_(static_cast<uint64_t>(seed)) {}
  int64_t sample_count() const override { return data_.size(); }
  void build(int64_t epoch, const int64_t* ids, int64_t n, HostMemory& memory, Batch& out) const override;

 private:
  const Dataset& data_;
  uint64_t seed_;
};

class Loader {
 public:
  Loader(const BatchBuilder& builder, int64_t batch_size, int64_t workers, int64_t prefetch, int64_t seed,
         int64_t max_batches_per_epoch = 0, HostMemory& memory = pageable_host_memory());
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Shuffles deterministically from (seed, epoch) and starts the epoch's workers.
  void start_epoch(int64_t epoch);
  int64_t batches_per_epoch() const { return batches_; }
  // Waits for the next minibatch; returns false when the epoch is exhausted. `stall_s` is the time the
  // caller waited (for w = 0, the whole fetch + preprocess time). Check out.status: a batch whose
  // samples could not be fetched is delivered with the error.
  bool next(Batch& out, double& stall_s);
  // The shuffled order of the current epoch (for tests).
  const std::vector<int64_t>& order() const { return order_; }

 private:
  void stop_workers();
  void worker_main(int64_t worker);
  void build_batch(int64_t index, Batch& out) const;

  const BatchBuilder& builder_;
  HostMemory& memory_;
  const int64_t batch_size_;
  const int64_t workers_;
  const int64_t prefetch_;
  const int64_t seed_;
  int64_t epoch_ = 0;
  int64_t batches_ = 0;
  std::vector<int64_t> order_;

  std::mutex mu_;
  std::condition_variable ready_cv_;    // consumer waits for batch `next_`
  std::condition_variable window_cv_;   // workers wait for room in the prefetch window
  std::map<int64_t, Batch> ready_;
  int64_t next_ = 0;                    // next index the consumer takes
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace jetsweep::agent

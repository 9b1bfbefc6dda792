// Data loader with the semantics of PyTorch's DataLoader as the papers use it: w = 0 fetches and
// preprocesses in the training thread; w >= 1 runs w workers, each building whole minibatches
// (round robin), with at most w x prefetch minibatches in flight, delivered in order.
// A Loader is driven by one training thread; its workers are internal.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/datasets/image_dataset.hpp"

namespace jetsweep::agent {

struct Batch {
  int64_t index = -1;            // position in the epoch
  int64_t size = 0;              // samples
  std::vector<float> images;     // size * sample_elems, normalised
  std::vector<int64_t> labels;   // size
};

// Builds one minibatch from sample ids; called concurrently from loader workers (must be thread-safe).
class BatchBuilder {
 public:
  virtual ~BatchBuilder() = default;
  virtual int64_t sample_count() const = 0;
  virtual void build(const int64_t* ids, int64_t n, Batch& out) const = 0;
};

// Fetch + preprocess from an in-memory image dataset: uint8 -> float, (x/255 - mean) / std.
class ImageBatchBuilder final : public BatchBuilder {
 public:
  explicit ImageBatchBuilder(const ImageDataset& data) : data_(data) {}
  int64_t sample_count() const override { return data_.count; }
  void build(const int64_t* ids, int64_t n, Batch& out) const override;

 private:
  const ImageDataset& data_;
};

class Loader {
 public:
  Loader(const BatchBuilder& builder, int64_t batch_size, int64_t workers, int64_t prefetch, int64_t seed,
         int64_t max_batches_per_epoch = 0);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Shuffles deterministically from (seed, epoch) and starts the epoch's workers.
  void start_epoch(int64_t epoch);
  int64_t batches_per_epoch() const { return batches_; }
  // Waits for the next minibatch; returns false when the epoch is exhausted. `stall_s` is the time the
  // caller waited (for w = 0, the whole fetch + preprocess time).
  bool next(Batch& out, double& stall_s);
  // The shuffled order of the current epoch (for tests).
  const std::vector<int64_t>& order() const { return order_; }

 private:
  void stop_workers();
  void worker_main(int64_t worker);
  void build_batch(int64_t index, Batch& out) const;

  const BatchBuilder& builder_;
  const int64_t batch_size_;
  const int64_t workers_;
  const int64_t prefetch_;
  const int64_t seed_;
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

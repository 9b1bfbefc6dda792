#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "agent/datasets/image_dataset.hpp"
#include "agent/loader.hpp"

using namespace jetsweep::agent;

namespace {

// Builds batches whose single feature is the sample id, after a known injected delay; records how many
// builds were started (thread-safe).
class DelayedBuilder final : public BatchBuilder {
 public:
  DelayedBuilder(int64_t samples, std::chrono::microseconds delay) : samples_(samples), delay_(delay) {}
  int64_t sample_count() const override { return samples_; }
  void build(int64_t epoch, const int64_t* ids, int64_t n, HostMemory& memory, Batch& out) const override {
    started_.fetch_add(1);
    std::this_thread::sleep_for(delay_);
    SampleShape shape;
    shape.height = shape.width = 1;
    out.allocate(shape, n, memory);
    for (int64_t i = 0; i < n; ++i) {
      out.images[static_cast<size_t>(i)] = static_cast<float>(ids[i]);
      out.labels[static_cast<size_t>(i)] = ids[i];
    }
    for (int64_t i = 0; i < n; ++i)
      if (ids[i] == fail_id_) out.status = jetsweep::io_error("sample " + std::to_string(ids[i]) + " unreadable");
  }
  int64_t fail_id_ = -1;
  mutable std::atomic<int64_t> started_{0};

 private:
  int64_t samples_;
  std::chrono::microseconds delay_;
};

struct EpochStats {
  std::vector<int64_t> indices;
  std::vector<int64_t> samples;
  std::vector<double> stalls;
  int64_t max_outstanding = 0;
};

EpochStats drain(Loader& loader, const DelayedBuilder& b) {
  EpochStats s;
  Batch batch;
  double stall = 0;
  int64_t returned = 0;
  while (loader.next(batch, stall)) {
    ++returned;
    s.max_outstanding = std::max(s.max_outstanding, b.started_.load() - returned);
    s.indices.push_back(batch.index);
    for (int64_t i = 0; i < batch.size; ++i) s.samples.push_back(batch.labels[static_cast<size_t>(i)]);
    s.stalls.push_back(stall);
  }
  return s;
}

}  // namespace

TEST_CASE("every sample once per epoch, in order of batches, last batch partial") {
  for (int64_t workers : {0, 1, 3}) {
    DelayedBuilder b(103, std::chrono::microseconds(0));
    Loader loader(b, 10, workers, 2, 7);
    CHECK(loader.batches_per_epoch() == 11);
    loader.start_epoch(0);
    auto s = drain(loader, b);
    REQUIRE(s.indices.size() == 11);
    for (int64_t i = 0; i < 11; ++i) CHECK(s.indices[static_cast<size_t>(i)] == i);
    std::set<int64_t> distinct(s.samples.begin(), s.samples.end());
    CHECK(distinct.size() == 103);
    CHECK(s.samples == std::vector<int64_t>(loader.order().begin(), loader.order().end()));
  }
}

TEST_CASE("shuffle is deterministic per (seed, epoch) and differs across epochs") {
  DelayedBuilder b(50, std::chrono::microseconds(0));
  Loader a(b, 8, 0, 2, 11), c(b, 8, 2, 2, 11), d(b, 8, 0, 2, 12);
  a.start_epoch(0);
  c.start_epoch(0);
  d.start_epoch(0);
  CHECK(a.order() == c.order());   // same seed: same order whatever the worker count
  CHECK(a.order() != d.order());   // other seed
  auto epoch0 = a.order();
  a.start_epoch(1);
  CHECK(a.order() != epoch0);
}

TEST_CASE("max_minibatches caps the epoch") {
  DelayedBuilder b(100, std::chrono::microseconds(0));
  Loader loader(b, 10, 2, 2, 1, 3);
  loader.start_epoch(0);
  CHECK(drain(loader, b).indices.size() == 3);
}

TEST_CASE("w = 0: each minibatch's stall includes its whole injected fetch delay") {
  const auto delay = std::chrono::milliseconds(3);
  DelayedBuilder b(40, delay);
  Loader loader(b, 4, 0, 2, 1);
  loader.start_epoch(0);
  auto s = drain(loader, b);
  REQUIRE(s.stalls.size() == 10);
  for (double st : s.stalls) CHECK(st >= 0.003);  // sleep_for never returns early
}

TEST_CASE("w >= 1: at most w x prefetch minibatches in flight, stalls account for fetch time") {
  const auto delay = std::chrono::milliseconds(2);
  for (int64_t w : {1, 2, 4}) {
    for (int64_t prefetch : {1, 2}) {
      DelayedBuilder b(64, delay);
      Loader loader(b, 2, w, prefetch, 3);
      loader.start_epoch(0);
      auto s = drain(loader, b);
      REQUIRE(s.indices.size() == 32);
      // `returned` is counted just after next() returns, so the observed value may lag by one.
      CHECK(s.max_outstanding <= w * prefetch + 1);
      // The consumer does no work: it waits for every build; each worker builds ceil(32 / w) in sequence.
      double total = 0;
      for (double st : s.stalls) total += st;
      const double builds_per_worker = static_cast<double>((32 + w - 1) / w);
      CHECK(total >= 0.5 * builds_per_worker * 0.002);
    }
  }
}

TEST_CASE("stopping mid-epoch joins the workers") {
  DelayedBuilder b(1000, std::chrono::microseconds(100));
  {
    Loader loader(b, 10, 4, 2, 1);
    loader.start_epoch(0);
    Batch batch;
    double stall;
    REQUIRE(loader.next(batch, stall));
    loader.start_epoch(1);  // restarts workers for the next epoch
    REQUIRE(loader.next(batch, stall));
    CHECK(batch.index == 0);
  }  // destructor stops workers blocked on a full window
  CHECK(b.started_.load() < 200);
}

TEST_CASE("DatasetBatchBuilder normalises pixels with the dataset's mean and std") {
  ImageDataset d;
  d.count = 2;
  d.rows = d.cols = 1;
  d.pixels = {0, 255};
  d.labels = {3, 7};
  d.mean = 0.5f;
  d.std = 0.25f;
  InMemoryImageDataset data(d, InMemoryAugment{});
  DatasetBatchBuilder b(data, 1);
  Batch out;
  int64_t ids[] = {1, 0};
  b.build(0, ids, 2, pageable_host_memory(), out);
  REQUIRE(out.status.is_ok());
  CHECK(out.images[0] == doctest::Approx(2.0));   // (1 - 0.5) / 0.25
  CHECK(out.images[1] == doctest::Approx(-2.0));  // (0 - 0.5) / 0.25
  CHECK(out.labels.to_vector() == std::vector<int64_t>{7, 3});
  // x and y share one block: labels start at an aligned offset after the images.
  CHECK(out.labels_offset() % HostMemory::kHostAlign == 0);
  CHECK(reinterpret_cast<const unsigned char*>(out.labels.data()) ==
        static_cast<const unsigned char*>(out.block()) + out.labels_offset());
  CHECK(out.used_bytes() == out.labels_offset() + 2 * sizeof(int64_t));
}

TEST_CASE("a batch whose fetch failed is delivered in order with the error, for w = 0 and w >= 1") {
  for (int64_t workers : {0, 2}) {
    DelayedBuilder b(20, std::chrono::microseconds(0));
    b.fail_id_ = 13;
    Loader loader(b, 4, workers, 2, 5);
    loader.start_epoch(0);
    Batch batch;
    double stall = 0;
    int64_t failed = 0, delivered = 0;
    while (loader.next(batch, stall)) {
      ++delivered;
      if (!batch.status.is_ok()) {
        ++failed;
        CHECK(batch.status.message() == "sample 13 unreadable");
        const auto& order = loader.order();
        const auto pos = std::find(order.begin(), order.end(), 13) - order.begin();
        CHECK(batch.index == pos / 4);
      }
    }
    CHECK(delivered == 5);
    CHECK(failed == 1);
  }
}

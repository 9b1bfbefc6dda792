#include "agent/loader.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

namespace jetsweep::agent {

void DatasetBatchBuilder::build(int64_t epoch, const int64_t* ids, int64_t n, HostMemory& memory, Batch& out) const {
  out.allocate(data_.shape(), n, memory);
  for (int64_t i = 0; i < n; ++i) {
    Status s = data_.fetch(ids[i], augment_seed(seed_, epoch, ids[i]), out, i);
    if (!s.is_ok()) {
      out.status = s;
      return;
    }
  }
}

Loader::Loader(const BatchBuilder& builder, int64_t batch_size, int64_t workers, int64_t prefetch, int64_t seed,
               int64_t max_batches_per_epoch, HostMemory& memory)
    : builder_(builder), memory_(memory), batch_size_(batch_size), workers_(workers), prefetch_(prefetch), seed_(seed) {
  const int64_t n = builder_.sample_count();
  batches_ = (n + batch_size_ - 1) / batch_size_;
  if (max_batches_per_epoch > 0) batches_ = std::min(batches_, max_batches_per_epoch);
  order_.resize(static_cast<size_t>(n));
}

Loader::~Loader() { stop_workers(); }

void Loader::stop_workers() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  window_cv_.notify_all();
  ready_cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Loader::start_epoch(int64_t epoch) {
  stop_workers();
  epoch_ = epoch;
  std::iota(order_.begin(), order_.end(), int64_t{0});
  std::mt19937_64 rng(static_cast<uint64_t>(seed_) * 1000003ULL + static_cast<uint64_t>(epoch));
  std::shuffle(order_.begin(), order_.end(), rng);
  {
    std::lock_guard lock(mu_);
    ready_.clear();
    next_ = 0;
    stopping_ = false;
  }
  for (int64_t w = 0; w < workers_; ++w) threads_.emplace_back([this, w] { worker_main(w); });
}

void Loader::build_batch(int64_t index, Batch& out) const {
  const int64_t first = index * batch_size_;
  const int64_t n = std::min(batch_size_, builder_.sample_count() - first);
  out.index = index;
  builder_.build(epoch_, order_.data() + first, n, memory_, out);
}

void Loader::worker_main(int64_t worker) {
  const int64_t window = workers_ * prefetch_;
  for (int64_t j = worker; j < batches_; j += workers_) {
    {
      std::unique_lock lock(mu_);
      window_cv_.wait(lock, [&] { return stopping_ || j < next_ + window; });
      if (stopping_) return;
    }
    Batch b;
    build_batch(j, b);
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      ready_.emplace(j, std::move(b));
    }
    ready_cv_.notify_one();
  }
}

bool Loader::next(Batch& out, double& stall_s) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (workers_ == 0) {
    if (next_ >= batches_) return false;
    build_batch(next_++, out);
    stall_s = std::chrono::duration<double>(clock::now() - t0).count();
    return true;
  }
  std::unique_lock lock(mu_);
  if (next_ >= batches_) return false;
  ready_cv_.wait(lock, [&] { return stopping_ || ready_.count(next_) > 0; });
  if (stopping_) return false;
  auto it = ready_.find(next_);
  out = std::move(it->second);
  ready_.erase(it);
  ++next_;
  lock.unlock();
  window_cv_.notify_all();
  stall_s = std::chrono::duration<double>(clock::now() - t0).count();
  return true;
}

}  // namespace jetsweep::agent

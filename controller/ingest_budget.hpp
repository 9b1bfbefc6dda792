// IngestBudget: the bytes of agents' results read off their sockets and not yet stored, summed over every
// connection, against one limit (ControllerOptions::max_ingest_bytes), and the connections waiting for room, first
// come first served. The controller's memory for ingest is bounded by the limit plus one frame per connection (a
// sample chunk is ~0.7 MB), not by the number of connections times their per-connection allowance (8 results), nor
// by any backlog. Io thread only (the threading rule: README.md, "Threading"): no locking.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>

namespace jetsweep::controller {

class IngestBudget {
 public:
  explicit IngestBudget(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Whether a connection holding `held` bytes may read another result now: always when it holds none (every
  // connection gets a result, and the heartbeats behind it, through; its own completions wake it otherwise), else
  // while the total is under the limit.
  bool may_read(size_t held) const { return held == 0 || bytes_ < max_bytes_; }
  // A result of `n` bytes was read.
  void take(size_t n) {
    bytes_ += n;
    if (bytes_ > peak_) peak_ = bytes_;
  }
  // A result of `n` bytes is done with (stored or refused); while the total is under the limit, wakes the waiting
  // connections in the order they came (each starts one read, and checks again when its frame is in, so the total
  // passes the limit by at most a frame per connection).
  void give_back(size_t n) {
    bytes_ = n > bytes_ ? 0 : bytes_ - n;
    while (bytes_ < max_bytes_ && !waiting_.empty()) {
      auto wake = std::move(waiting_.front());
      waiting_.pop_front();
      wake();   // a connection reading already, or closed, does nothing
    }
  }
  // Queues `wake` to run when there is room. A connection waits only while it holds bytes, so a result of its own
  // completes (and it reads again) even if nobody else gives any back. waiting() counts queued wakes, some perhaps of
  // connections that resumed on their own meanwhile.
  void wait(std::function<void()> wake) { waiting_.push_back(std::move(wake)); }

  size_t bytes() const { return bytes_; }
  size_t peak_bytes() const { return peak_; }
  size_t max_bytes() const { return max_bytes_; }
  size_t waiting() const { return waiting_.size(); }

 private:
  size_t max_bytes_;
  size_t bytes_ = 0;
  size_t peak_ = 0;
  std::deque<std::function<void()>> waiting_;
};

}  // namespace jetsweep::controller

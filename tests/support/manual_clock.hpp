// ManualClock: a wall clock that moves only when the test says so, for lease and timeout logic without
// waiting (an honest fake clock). Any thread.
#pragma once

#include <atomic>

namespace jetsweep::testing {

class ManualClock {
 public:
  explicit ManualClock(double start_unix_s = 1'700'000'000.0) : now_s_(start_unix_s) {}
  double now() const { return now_s_.load(); }
  void advance(double seconds) { now_s_.store(now_s_.load() + seconds); }

 private:
  std::atomic<double> now_s_;
};

}  // namespace jetsweep::testing

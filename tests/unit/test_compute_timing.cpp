// MinibatchClock's accounting in both timing modes, on a device timeline the test scripts: a fake device
// clock per lane (the honest stand-in for CUDA events, which cannot run here: the arithmetic and the order
// of reads are what is tested; the CUDA timeline itself is compiled against the CUDA headers in CI).
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "agent/compute_timing.hpp"

using namespace jetsweep::agent;

namespace {

// Markers read the time the test set on their lane when they were recorded; counts what is live and
// which markers were waited for, so leaks and per-minibatch synchronisation are visible.
class ScriptedTimeline final : public DeviceTimeline {
 public:
  double now[2] = {0, 0};   // per lane: compute, copy
  Marker mark(Lane lane) override {
    const Marker m = reuse_or_add_marker();
    at_[m] = now[lane == Lane::kCompute ? 0 : 1];
    live.insert(m);
    return m;
  }
  double elapsed_s(Marker from, Marker to) override {
    REQUIRE(live.count(from) == 1);   // never read after release
    REQUIRE(live.count(to) == 1);
    ++reads;
    return at_[to] - at_[from];
  }
  void wait(Marker m) override { REQUIRE(live.count(m) == 1); }
  void release(Marker m) override {
    REQUIRE(live.erase(m) == 1);   // released once
    free_.push_back(m);
  }
  size_t pool_size() const { return at_.size(); }
  std::set<Marker> live;
  int reads = 0;

 private:
  // A released marker when there is one (as CUDA events are recycled), else a new one.
  Marker reuse_or_add_marker() {
    if (free_.empty()) {
      at_.push_back(0);
      return at_.size() - 1;
    }
    const Marker m = free_.back();
    free_.pop_back();
    return m;
  }

  std::vector<double> at_;
  std::vector<Marker> free_;
};

CopySpan copy_on(ScriptedTimeline& tl, double begin, double end) {
  CopySpan c;
  tl.now[1] = begin;
  c.begin = tl.mark(DeviceTimeline::Lane::kCopy);
  tl.now[1] = end;
  c.end = tl.mark(DeviceTimeline::Lane::kCopy);
  return c;
}

}  // namespace

TEST_CASE("timing modes parse; anything else names the key") {
  CHECK(parse_timing_mode("").value() == TimingMode::kPaper);
  CHECK(parse_timing_mode("paper").value() == TimingMode::kPaper);
  CHECK(parse_timing_mode("pipelined").value() == TimingMode::kPipelined);
  CHECK(parse_timing_mode("Paper").status().message() == "timing 'Paper': expected paper or pipelined");
  CHECK(std::string(timing_mode_name(TimingMode::kPipelined)) == "pipelined");
}

TEST_CASE("paper timing: each minibatch is resolved at its own end; stall is the host's, copy apart") {
  ScriptedTimeline tl;
  MinibatchClock clock(TimingMode::kPaper, tl);
  std::vector<MinibatchTimes> done;
  clock.start_epoch();
  CHECK(tl.live.empty());   // no epoch marker in paper mode
  for (int i = 0; i < 3; ++i) {
    auto copy = copy_on(tl, 10.0 * i, 10.0 * i + 0.5);
    tl.now[0] = 10.0 * i + 1;
    clock.begin(i, 0.75, copy);
    tl.now[0] = 10.0 * i + 1 + 2.0 * (i + 1);
    clock.end(done);
    REQUIRE(done.size() == static_cast<size_t>(i + 1));   // synchronised: known before the next fetch
    CHECK(done[i].index == i);
    CHECK(done[i].stall_s == 0.75);
    CHECK(done[i].compute_s == doctest::Approx(2.0 * (i + 1)));
    CHECK(done[i].copy_s == doctest::Approx(0.5));
    CHECK(tl.live.empty());   // every marker back in the pool
  }
  clock.drain(done);
  CHECK(done.size() == 3);
  CHECK(tl.pool_size() == 4);   // events are reused, not created per minibatch
}

TEST_CASE("pipelined timing: read kLag minibatches late; stalls and computes tile the compute lane") {
  ScriptedTimeline tl;
  MinibatchClock clock(TimingMode::kPipelined, tl);
  std::vector<MinibatchTimes> done;
  const int n = 9;
  // Compute lane: epoch marker at 100; minibatch i starts at 100 + 3i + 1 (idle 1 s before each, waiting for
  // its copy) and runs 2 s. Copies overlap the previous compute on the copy lane.
  tl.now[0] = 100;
  clock.start_epoch();
  for (int i = 0; i < n; ++i) {
    auto copy = copy_on(tl, 100 + 3.0 * i, 100 + 3.0 * i + 0.9);
    tl.now[0] = 100 + 3.0 * i + 1;
    clock.begin(i, 99.0 /* the host's wait: not what pipelined stall means */, copy);
    tl.now[0] = 100 + 3.0 * i + 3;
    clock.end(done);
    const int expect = i + 1 > static_cast<int>(MinibatchClock::kLag) ? i + 1 - static_cast<int>(MinibatchClock::kLag) : 0;
    CHECK(done.size() == static_cast<size_t>(expect));   // no per-minibatch synchronisation
  }
  clock.drain(done);
  REQUIRE(done.size() == static_cast<size_t>(n));
  double stall = 0, compute = 0;
  for (int i = 0; i < n; ++i) {
    CHECK(done[i].index == i);
    CHECK(done[i].stall_s == doctest::Approx(1.0));
    CHECK(done[i].compute_s == doctest::Approx(2.0));
    CHECK(done[i].copy_s == doctest::Approx(0.9));
    stall += done[i].stall_s;
    compute += done[i].compute_s;
  }
  // The epoch's compute lane from its marker (100) to the last minibatch's end (100 + 3n): exactly tiled.
  CHECK(stall + compute == doctest::Approx(3.0 * n));
  CHECK(tl.live.empty());
  // Bounded pool: markers in flight at most kLag + 1 minibatches' worth, plus the epoch marker.
  CHECK(tl.pool_size() <= 4 * (MinibatchClock::kLag + 1) + 1);
}

TEST_CASE("pipelined timing: a second epoch starts its stalls at its own epoch marker") {
  ScriptedTimeline tl;
  MinibatchClock clock(TimingMode::kPipelined, tl);
  std::vector<MinibatchTimes> done;
  for (int epoch = 0; epoch < 2; ++epoch) {
    const double t0 = 1000.0 * epoch;
    tl.now[0] = t0;
    clock.start_epoch();
    tl.now[0] = t0 + 5;   // loader start-up: the lane idles 5 s before the first minibatch
    clock.begin(0, 0, std::nullopt);
    tl.now[0] = t0 + 6;
    clock.end(done);
    clock.drain(done);
  }
  REQUIRE(done.size() == 2);
  for (const auto& t : done) {
    CHECK(t.stall_s == doctest::Approx(5.0));
    CHECK(t.compute_s == doctest::Approx(1.0));
    CHECK_FALSE(t.copy_s.has_value());
  }
  CHECK(tl.live.empty());
}

TEST_CASE("a clock destroyed mid-epoch (cancelled run) releases its markers") {
  ScriptedTimeline tl;
  {
    MinibatchClock clock(TimingMode::kPipelined, tl);
    std::vector<MinibatchTimes> done;
    clock.start_epoch();
    for (int i = 0; i < 3; ++i) {
      clock.begin(i, 0, copy_on(tl, i, i + 0.5));
      clock.end(done);
    }
    CHECK_FALSE(tl.live.empty());
  }
  CHECK(tl.live.empty());
}

TEST_CASE("the host timeline measures real elapsed time between markers and reuses them") {
  HostTimeline tl;
  const auto a = tl.mark(DeviceTimeline::Lane::kCompute);
  const auto b = tl.mark(DeviceTimeline::Lane::kCompute);
  CHECK(tl.elapsed_s(a, b) >= 0);
  tl.release(a);
  CHECK(tl.mark(DeviceTimeline::Lane::kCopy) == a);
}

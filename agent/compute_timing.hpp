// What a minibatch's stall, compute and copy times mean, in the two timing modes, measured on a
// DeviceTimeline (the host's steady clock, or CUDA events on the GPU). Torch-free, so the accounting is
// unit-tested without a GPU. Training thread only.
//
// paper (the default): as the papers' harness (sec. 4.5 of the SIGMETRICS paper): every minibatch is
//   synchronised. stall = host wall time from asking the loader for the minibatch until its tensors are on
//   the device (fetch wait + host-to-device copy, the copy waited for); compute = forward + backward +
//   optimizer step between two device markers, waited for before the next minibatch is fetched.
//   copy = the host-to-device copy alone (a part of stall), null on the CPU.
// pipelined: nothing is synchronised per minibatch; markers are read kLag minibatches later. Times are
//   read on the compute lane of the device: compute = from the minibatch's first kernel to the end of its
//   step, stall = the compute lane idle before it (waiting for its copy or for the host) since the previous
//   minibatch's end (the first: since the epoch's start marker). So the stalls and computes of an epoch
//   tile the compute lane from the epoch marker to the last minibatch's end, and stall + compute <= the
//   epoch's wall time. copy = the copy on its own lane, overlapping the previous compute: in neither sum.
// On the CPU both modes measure the same things (the ops run synchronously) and copy is null.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::agent {

enum class TimingMode { kPaper, kPipelined };
// "" or "paper" -> kPaper, "pipelined" -> kPipelined; anything else kInvalidArgument naming the key.
Result<TimingMode> parse_timing_mode(const std::string& timing);
const char* timing_mode_name(TimingMode mode);

// One minibatch's times (seconds).
struct MinibatchTimes {
  int64_t index = 0;
  double stall_s = 0;
  double compute_s = 0;
  std::optional<double> copy_s;   // host-to-device copy; null when nothing was copied (CPU)
};

// Markers recorded in order on a device's lanes (compute, copy) and the time between two of them. A marker
// is a slot in a pool: release it when read. Host: markers are steady-clock readings (the CPU runs ops
// synchronously). CUDA: blocking-sync events from a pool (no per-minibatch event creation, no spinning).
class DeviceTimeline {
 public:
  using Marker = size_t;
  enum class Lane { kCompute, kCopy };
  virtual ~DeviceTimeline() = default;
  // A marker after everything queued so far on `lane`.
  virtual Marker mark(Lane lane) = 0;
  // Seconds from `from` to `to` on the device's clock; blocks until `to` has happened (sleeping, not spinning).
  virtual double elapsed_s(Marker from, Marker to) = 0;
  // Blocks until `m` has happened.
  virtual void wait(Marker m) = 0;
  virtual void release(Marker m) = 0;
};

// The host's steady clock as a DeviceTimeline (both lanes the same: the CPU).
class HostTimeline final : public DeviceTimeline {
 public:
  Marker mark(Lane lane) override;
  double elapsed_s(Marker from, Marker to) override;
  void wait(Marker) override {}
  void release(Marker m) override;

 private:
  std::vector<std::chrono::steady_clock::time_point> at_;
  std::vector<Marker> free_;
};

// The copy of one minibatch on the copy lane (markers owned by the MinibatchClock once handed over).
struct CopySpan {
  DeviceTimeline::Marker begin = 0;
  DeviceTimeline::Marker end = 0;
};

// Turns markers into MinibatchTimes in minibatch order, in the run's timing mode. Training thread only.
class MinibatchClock {
 public:
  // Pipelined mode reads a minibatch's markers once this many later minibatches have been queued.
  static constexpr size_t kLag = 4;
  MinibatchClock(TimingMode mode, DeviceTimeline& timeline) : mode_(mode), timeline_(timeline) {}
  ~MinibatchClock();
  MinibatchClock(const MinibatchClock&) = delete;
  MinibatchClock& operator=(const MinibatchClock&) = delete;

  TimingMode mode() const { return mode_; }
  // At the epoch's start, before its first fetch (pipelined: the compute lane's epoch marker).
  void start_epoch();
  // After the minibatch's tensors were queued on the compute lane, just before forward: `stall_s` is the
  // host's fetch (+ copy, in paper mode) wait; `copy` the copy's markers when there was one.
  void begin(int64_t index, double stall_s, std::optional<CopySpan> copy);
  // After optimizer.step(); appends the minibatches whose times are now known (paper: this one).
  void end(std::vector<MinibatchTimes>& done);
  // Resolves everything outstanding (end of epoch); releases the epoch's markers.
  void drain(std::vector<MinibatchTimes>& done);

 private:
  struct Pending {
    int64_t index = 0;
    double host_stall_s = 0;
    DeviceTimeline::Marker start = 0;
    DeviceTimeline::Marker stop = 0;
    std::optional<CopySpan> copy;
  };
  void resolve_front(std::vector<MinibatchTimes>& done);
  std::optional<double> copy_seconds(const std::optional<CopySpan>& copy);

  const TimingMode mode_;
  DeviceTimeline& timeline_;
  std::deque<Pending> pending_;
  std::optional<DeviceTimeline::Marker> previous_stop_;   // pipelined: where the next stall starts
};

}  // namespace jetsweep::agent

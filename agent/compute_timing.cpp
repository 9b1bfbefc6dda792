#include "agent/compute_timing.hpp"

namespace jetsweep::agent {

Result<TimingMode> parse_timing_mode(const std::string& timing) {
  if (timing.empty() || timing == "paper") return TimingMode::kPaper;
  if (timing == "pipelined") return TimingMode::kPipelined;
  return invalid_argument("timing '" + timing + "': expected paper or pipelined");
}

const char* timing_mode_name(TimingMode mode) { return mode == TimingMode::kPaper ? "paper" : "pipelined"; }

DeviceTimeline::Marker HostTimeline::mark(Lane) {
  const auto now = std::chrono::steady_clock::now();
  if (!free_.empty()) {
    const Marker m = free_.back();
    free_.pop_back();
    at_[m] = now;
    return m;
  }
  at_.push_back(now);
  return at_.size() - 1;
}

double HostTimeline::elapsed_s(Marker from, Marker to) {
  return std::chrono::duration<double>(at_.at(to) - at_.at(from)).count();
}

void HostTimeline::release(Marker m) { free_.push_back(m); }

MinibatchClock::~MinibatchClock() {
  for (const Pending& p : pending_) {
    timeline_.release(p.start);
    timeline_.release(p.stop);
    if (p.copy) {
      timeline_.release(p.copy->begin);
      timeline_.release(p.copy->end);
    }
  }
  if (previous_stop_) timeline_.release(*previous_stop_);
}

void MinibatchClock::start_epoch() {
  if (mode_ != TimingMode::kPipelined) return;
  if (previous_stop_) timeline_.release(*previous_stop_);
  previous_stop_ = timeline_.mark(DeviceTimeline::Lane::kCompute);
}

void MinibatchClock::begin(int64_t index, double stall_s, std::optional<CopySpan> copy) {
  Pending p;
  p.index = index;
  p.host_stall_s = stall_s;
  p.copy = copy;
  p.start = timeline_.mark(DeviceTimeline::Lane::kCompute);
  pending_.push_back(p);
}

void MinibatchClock::end(std::vector<MinibatchTimes>& done) {
  pending_.back().stop = timeline_.mark(DeviceTimeline::Lane::kCompute);
  const size_t keep = mode_ == TimingMode::kPaper ? 0 : kLag;
  while (pending_.size() > keep) resolve_front(done);
}

void MinibatchClock::drain(std::vector<MinibatchTimes>& done) {
  while (!pending_.empty()) resolve_front(done);
  if (previous_stop_) timeline_.release(*previous_stop_);
  previous_stop_.reset();
}

std::optional<double> MinibatchClock::copy_seconds(const std::optional<CopySpan>& copy) {
  if (!copy) return std::nullopt;
  const double s = timeline_.elapsed_s(copy->begin, copy->end);
  timeline_.release(copy->begin);
  timeline_.release(copy->end);
  return s;
}

void MinibatchClock::resolve_front(std::vector<MinibatchTimes>& done) {
  Pending p = pending_.front();
  pending_.pop_front();
  MinibatchTimes t;
  t.index = p.index;
  t.compute_s = timeline_.elapsed_s(p.start, p.stop);   // waits for the step's end: the per-minibatch sync in paper mode
  if (mode_ == TimingMode::kPaper) {
    t.stall_s = p.host_stall_s;
    timeline_.release(p.start);
    timeline_.release(p.stop);
  } else {
    // The compute lane idle since the previous minibatch's end (or the epoch marker).
    t.stall_s = previous_stop_ ? timeline_.elapsed_s(*previous_stop_, p.start) : p.host_stall_s;
    if (t.stall_s < 0) t.stall_s = 0;   // clock granularity only: markers on one lane are in order
    if (previous_stop_) timeline_.release(*previous_stop_);
    previous_stop_ = p.stop;
    timeline_.release(p.start);
  }
  t.copy_s = copy_seconds(p.copy);
  done.push_back(t);
}

}  // namespace jetsweep::agent

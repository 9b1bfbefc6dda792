#include "bench/load_agent_stream.hpp"

#include <algorithm>
#include <cmath>

namespace jetsweep::bench {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Salts of the modelled quantities, so they vary independently.
enum Salt : uint64_t { kStall = 1, kCompute, kPower, kTemp, kUtil, kCore, kDisk, kMem };

}  // namespace

double symmetric_hash(int64_t run, int64_t epoch, int64_t index, uint64_t salt) {
  uint64_t h = splitmix64(static_cast<uint64_t>(run) ^ (salt << 56));
  h = splitmix64(h ^ static_cast<uint64_t>(epoch));
  h = splitmix64(h ^ static_cast<uint64_t>(index));
  return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;   // 53 bits -> [-1, 1)
}

RunStream::RunStream(int64_t run_id, const StreamShape& shape, double t0_unix_s)
    : run_id_(run_id), shape_(shape), t0_unix_s_(t0_unix_s) {
  shape_.minibatch_chunk = std::clamp<int64_t>(shape_.minibatch_chunk, 1, proto::kMaxMinibatchesPerChunk);
  shape_.sample_chunk = std::clamp<int64_t>(shape_.sample_chunk, 1, proto::kMaxSamplesPerChunk);
}

void RunStream::cancel() {
  if (phase_ != Phase::kDone) {
    cancelled_ = true;
    phase_ = Phase::kFinish;
  }
}

std::optional<proto::Body> RunStream::next() {
  switch (phase_) {
    case Phase::kStart: {
      proto::RunStarted s;
      s.run_id = run_id_;
      s.reference_state = true;
      s.compute_device = "simulated";
      s.t0_unix_s = t0_unix_s_;
      phase_ = shape_.epochs > 0 ? (shape_.minibatches > 0 ? Phase::kChunks : Phase::kSamples) : Phase::kFinish;
      return proto::Body{std::move(s)};
    }
    case Phase::kChunks:
      return proto::Body{next_chunk()};
    case Phase::kSamples:
      return proto::Body{next_samples()};
    case Phase::kEpoch:
      return proto::Body{epoch_result()};
    case Phase::kFinish: {
      phase_ = Phase::kDone;
      // wall_s: the modelled run's length (its timeline), not the time the bench took to send it.
      return proto::Body{proto::RunFinished{run_id_, cancelled_ ? "cancelled" : "done", "", t_start_}};
    }
    case Phase::kDone:
      break;
  }
  return std::nullopt;
}

proto::MinibatchChunk RunStream::next_chunk() {
  proto::MinibatchChunk c{run_id_, epoch_, next_mb_, {}, {}, {}};
  const int64_t end = std::min(shape_.minibatches, next_mb_ + shape_.minibatch_chunk);
  c.stall_s.reserve(static_cast<size_t>(end - next_mb_));
  c.compute_s.reserve(static_cast<size_t>(end - next_mb_));
  for (int64_t i = next_mb_; i < end; ++i) {
    const double stall = kStallMbS * (1.0 + kJitter * symmetric_hash(run_id_, epoch_, i, kStall));
    const double compute = kComputeMbS * (1.0 + kJitter * symmetric_hash(run_id_, epoch_, i, kCompute));
    c.stall_s.push_back(stall);
    c.compute_s.push_back(compute);
    stall_sum_ += stall;
    compute_sum_ += compute;
  }
  next_mb_ = end;
  if (next_mb_ >= shape_.minibatches) phase_ = shape_.samples > 0 ? Phase::kSamples : Phase::kEpoch;
  return c;
}

// Samples spread evenly over the epoch's window, the last at its end edge: t_start + (k + 1) * e2e / S.
proto::Sample RunStream::sample(int64_t k) const {
  const double e2e = e2e_s();
  proto::Sample x;
  x.t_s = t_start_ + e2e * static_cast<double>(k + 1) / static_cast<double>(shape_.samples);
  x.cpu_util_pct = 62.0 + 12.0 * symmetric_hash(run_id_, epoch_, k, kUtil);
  x.core_util_pct.reserve(static_cast<size_t>(shape_.sample_cores));
  for (int core = 0; core < shape_.sample_cores; ++core)
    x.core_util_pct.push_back(60.0 + 35.0 * symmetric_hash(run_id_, epoch_, k * 64 + core, kCore));
  x.cpu_freq_mhz = 2265.6;
  x.mem_used_kb = 3'400'000 + static_cast<int64_t>(20'000 * symmetric_hash(run_id_, epoch_, k, kMem));
  x.disk_read_bytes = 4096 * static_cast<int64_t>(8.0 + 8.0 * symmetric_hash(run_id_, epoch_, k, kDisk));
  x.power_w = 7.5 + 2.5 * symmetric_hash(run_id_, epoch_, k, kPower);
  x.temp_max_c = 45.0 + 2.0 * symmetric_hash(run_id_, epoch_, k, kTemp);
  return x;
}

proto::SampleChunk RunStream::next_samples() {
  proto::SampleChunk c;
  c.run_id = run_id_;
  c.t0_unix_s = t0_unix_s_;
  const int64_t end = std::min(shape_.samples, next_sample_ + shape_.sample_chunk);
  c.samples.reserve(static_cast<size_t>(end - next_sample_));
  for (int64_t k = next_sample_; k < end; ++k) {
    c.samples.push_back(sample(k));
    power_sum_ += *c.samples.back().power_w;
  }
  next_sample_ = end;
  if (next_sample_ >= shape_.samples) phase_ = Phase::kEpoch;
  return c;
}

proto::EpochResult RunStream::epoch_result() {
  proto::EpochResult r;
  r.run_id = run_id_;
  r.epoch = epoch_;
  r.e2e_s = e2e_s();
  r.stall_s = stall_sum_;
  r.compute_s = compute_sum_;
  r.minibatches = shape_.minibatches;
  r.loss = 0.05 + 2.25 * std::exp(-static_cast<double>(epoch_) / 400.0);
  r.t_start_s = t_start_;
  r.t_end_s = t_start_ + r.e2e_s;
  if (shape_.samples > 0) {   // no samples: no power reading (as a board without a sensor)
    r.mean_power_w = power_sum_ / static_cast<double>(shape_.samples);
    r.energy_j = *r.mean_power_w * r.e2e_s;
    r.power_coverage = 1.0;
  }
  // The next epoch starts where this one ended.
  t_start_ = *r.t_end_s;
  ++epoch_;
  next_mb_ = next_sample_ = 0;
  stall_sum_ = compute_sum_ = power_sum_ = 0;
  phase_ = epoch_ >= shape_.epochs ? Phase::kFinish : shape_.minibatches > 0 ? Phase::kChunks : Phase::kSamples;
  return r;
}

}  // namespace jetsweep::bench

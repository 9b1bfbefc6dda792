// The result messages of one simulated run in bench_load_agents' epoch streaming mode (--epochs), made one at a
// time so a 5,000-epoch run needs no more memory than one message: run_started, then per epoch its minibatch
// chunks, its sample chunk(s) and its epoch_result (the real agent's order, agent/run_executor.cpp), then
// run_finished "done" (or "cancelled"). Values are deterministic per (run id, epoch, index). One thread.
#pragma once

#include <cstdint>
#include <optional>

#include "common/protocol.hpp"

namespace jetsweep::bench {

// What each run streams (the flags of the same names).
struct StreamShape {
  int64_t epochs = 0;                 // per run; 0 = epoch streaming off
  int64_t minibatches = 469;          // per epoch (MNIST at batch size 128)
  int64_t samples = 66;               // telemetry samples per epoch (10 Hz over a ~6.6 s epoch)
  int64_t minibatch_chunk = 4096;     // minibatches per MinibatchChunk, <= proto::kMaxMinibatchesPerChunk
  int64_t sample_chunk = 2048;        // samples per SampleChunk, <= proto::kMaxSamplesPerChunk
  int sample_cores = 8;               // per-core values in each sample
};

// Modelled times: stall and compute per minibatch (+-kJitter, uniform), and per-epoch overhead (loader
// start-up, framework work) on top of their sums.
inline constexpr double kStallMbS = 0.002;
inline constexpr double kComputeMbS = 0.012;
inline constexpr double kJitter = 0.10;
inline constexpr double kEpochOverheadS = 0.05;

// A uniform value in [-1, 1] from (run, epoch, index, salt) (splitmix64 mixing; no state).
double symmetric_hash(int64_t run, int64_t epoch, int64_t index, uint64_t salt);

// One run's message sequence; see the file comment.
class RunStream {
 public:
  // t0_unix_s: the agent's wall clock at t_s = 0 of the run (run_started and every sample chunk carry it).
  RunStream(int64_t run_id, const StreamShape& shape, double t0_unix_s);

  // The next message, or nothing once run_finished was returned.
  std::optional<proto::Body> next();
  bool finished() const { return phase_ == Phase::kDone; }
  int64_t run_id() const { return run_id_; }
  // Stop after the current message: the next one is run_finished "cancelled" (unless it was already sent).
  void cancel();

 private:
  enum class Phase { kStart, kChunks, kSamples, kEpoch, kFinish, kDone };

  proto::MinibatchChunk next_chunk();
  proto::SampleChunk next_samples();
  proto::EpochResult epoch_result();
  proto::Sample sample(int64_t k) const;   // the epoch's k-th sample (0-based)
  double e2e_s() const { return stall_sum_ + compute_sum_ + kEpochOverheadS; }

  int64_t run_id_;
  StreamShape shape_;
  double t0_unix_s_;
  Phase phase_ = Phase::kStart;
  bool cancelled_ = false;
  int64_t epoch_ = 0;
  int64_t next_mb_ = 0;        // the epoch's next minibatch index
  int64_t next_sample_ = 0;    // the epoch's next sample index
  double t_start_ = 0;         // the epoch's window start on the run's timeline (seconds since t_s = 0)
  double stall_sum_ = 0, compute_sum_ = 0, power_sum_ = 0;
};

}  // namespace jetsweep::bench

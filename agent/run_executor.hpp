// Executes one run: loads the dataset, drops caches when asked, samples telemetry, trains, and emits
// the results as protocol messages (minibatch chunks, epoch summaries with energy, samples, run_finished)
// to a ResultSink. execute() runs on the caller's (training) thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "agent/datasets/image_dataset.hpp"
#include "common/protocol.hpp"

namespace jetsweep::agent {

// Receives result messages in order. Called from the training thread.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  virtual void emit(proto::Body body) = 0;
};

class RunExecutor {
 public:
  // `root` is the procfs/sysfs root telemetry and cache dropping use ("/" on a real machine).
  explicit RunExecutor(std::string root = "/");
  // Returns the run_finished message it also emitted.
  proto::RunFinished execute(int64_t run_id, const RunConfig& config, ResultSink& sink, const std::atomic<bool>& cancel);
  // Whether power can be measured on this machine (else energy is null: "no power sensor").
  bool has_power_sensor() const;

 private:
  Result<const ImageDataset*> dataset_for(const RunConfig& config);

  std::string root_;
  std::unique_ptr<ImageDataset> cached_;   // last dataset loaded, reused by the next run with the same data
  std::string cached_key_;
};

// Writes the messages of a standalone run as JSON lines (`jetsweep-agent run --out`).
class JsonLinesSink final : public ResultSink {
 public:
  explicit JsonLinesSink(std::ostream& out) : out_(out) {}
  void emit(proto::Body body) override;

 private:
  std::ostream& out_;
};

}  // namespace jetsweep::agent

// Training loop with per-minibatch timing (fetch stall vs compute), LibTorch behind a torch-free header.
// train() runs on the calling (training) thread; the observer is called on that thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "agent/compute_timing.hpp"
#include "agent/datasets/dataset.hpp"
#include "agent/models/registry.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep::agent {

struct EpochTiming {
  int64_t epoch = 0;
  // The epoch's window (monotonic clock): e2e_s = end - start; energy is integrated over exactly this window.
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point end;
  double e2e_s = 0;       // wall time of the whole epoch, including loader start-up
  double stall_s = 0;     // sum of per-minibatch fetch stalls
  double compute_s = 0;   // sum of per-minibatch forward + backward + optimizer step
  std::optional<double> copy_s;   // sum of the host-to-device copies (GPU only); see compute_timing.hpp
  int64_t minibatches = 0;
  double mean_loss = 0;
};

class TrainingObserver {
 public:
  virtual ~TrainingObserver() = default;
  virtual void on_epoch_start(int64_t epoch) = 0;
  // In minibatch order; in pipelined timing a few minibatches after the minibatch ran (its times come from
  // markers read later), always before on_epoch_end of its epoch. Meaning of the times: compute_timing.hpp.
  virtual void on_minibatch(int64_t epoch, const MinibatchTimes& times) = 0;
  virtual void on_epoch_end(const EpochTiming& timing) = 0;
};

std::string torch_version();
// Whether this agent was built with CUDA and LibTorch sees a GPU.
bool cuda_available();
// Name of the GPU LibTorch would train on ("" when there is none).
std::string cuda_device_name();
// "CUDA runtime 11040, cuDNN 8600" when built with CUDA, else "".
std::string cuda_versions();
// Why CUDA is not available to this agent ("" when it is): built against a CPU-only LibTorch, or no GPU visible.
std::string cuda_unavailable_reason();
// The device a run with `accelerator` (auto | cuda | cpu; "" = auto) trains on: "cpu" or "cuda:0 (NAME)".
// kInvalidArgument naming CUDA and why it is missing when the run asks for cuda: never a silent CPU fallback.
Result<std::string> compute_device_for(const std::string& accelerator);

// What a model is built for when it trains on samples of `shape` (images: channels, side, classes; tokens:
// sequence length, vocabulary).
models::InputSpec input_spec_for(const SampleShape& shape);

// Trains `config.model` (or an alias) on `data` on the device compute_device_for(config.accelerator) gives,
// timed as config.timing says (compute_timing.hpp), for config.epochs epochs (SGD lr 0.01 momentum 0.9,
// cross-entropy; for token datasets over every next-token position). The model is built for the
// dataset's sample shape and class count. Stops early with kCancelled when `cancel` becomes true.
// Torch exceptions and sample fetch errors become Status. A "torchscript:<sha256>" model is read from `model_file`
// (its bytes verified by the caller: agent/model_cache.hpp) and checked against the contract first
// (agent/models/torchscript.hpp); its non-finite loss fails the run naming the epoch and the first such minibatch.
Status train(const RunConfig& config, const Dataset& data, TrainingObserver& observer, const std::atomic<bool>& cancel,
             const std::string& model_file = {});

}  // namespace jetsweep::agent

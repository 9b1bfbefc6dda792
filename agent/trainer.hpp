// Training loop with per-minibatch timing (fetch stall vs compute), LibTorch behind a torch-free header.
// train() runs on the calling (training) thread; the observer is called on that thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "agent/datasets/image_dataset.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep::agent {

struct EpochTiming {
  int64_t epoch = 0;
  double e2e_s = 0;       // wall time of the whole epoch, including loader start-up
  double stall_s = 0;     // sum of per-minibatch fetch stalls
  double compute_s = 0;   // sum of per-minibatch forward + backward + optimizer step
  int64_t minibatches = 0;
  double mean_loss = 0;
};

class TrainingObserver {
 public:
  virtual ~TrainingObserver() = default;
  virtual void on_epoch_start(int64_t epoch) = 0;
  virtual void on_minibatch(int64_t epoch, int64_t index, double stall_s, double compute_s) = 0;
  virtual void on_epoch_end(const EpochTiming& timing) = 0;
};

std::string torch_version();
int64_t model_parameter_count(const std::string& model, int64_t channels, int64_t image_size, int64_t classes);

// Trains `config.model` on `data` for config.epochs epochs (SGD lr 0.01 momentum 0.9, cross-entropy).
// Stops early with kCancelled when `cancel` becomes true. Torch exceptions become Status.
Status train(const RunConfig& config, const ImageDataset& data, TrainingObserver& observer,
             const std::atomic<bool>& cancel);

}  // namespace jetsweep::agent

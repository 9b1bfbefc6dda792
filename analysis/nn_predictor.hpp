// The PowerTrain neural-network predictor (FGCS'24 sec. 3): dense 256-128-64-1 with ReLU, dropout
// after layers 1 and 2, Adam (lr 1e-3), MSE loss, standardised inputs, best-validation checkpoint;
// and PowerTrain transfer: keep the trained hidden layers, replace the output layer, fine-tune.
// This header is torch-free: the network lives in the LibTorch plugin (nn_backend.hpp, nn_torch.cpp), which
// nn_predictor.cpp loads the first time a network is trained or loaded (kUnavailable naming the paths tried
// when it cannot). An NnRegressor owns its network; use one from one thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

class NnModel;

struct NnOptions {
  int epochs = 100;                  // PowerTrain Table 4
  int batch_size = 32;               // Keras' default (the paper does not give one)
  double learning_rate = 1e-3;
  double dropout = 0.1;              // rate not given by the paper
  double validation_fraction = 0.1; // 90:10 train/validation split for checkpointing
  uint64_t seed = 1;
  int threads = 1;                   // LibTorch intra-op threads (a 4-256-128-64-1 net is fastest on one)
  bool log_target = false;           // fit log(y) instead of y (our improvement for MAPE); else y standardised
  bool inverse_features = false;     // inputs (cores, cpu, gpu, emc) and their inverses: time scales with 1/clock
  // > 0: train on every sample for this many full-batch Adam steps and keep the last weights (no validation
  // split: with tens of modes a 10% split is 1-5 modes and checkpoints noise); 0: `epochs` with the 90:10 split
  // and the best-validation checkpoint (PowerTrain's way).
  int full_batch_steps = 0;
  // Set (from any thread) to stop a training between epochs or steps: it then fails with kCancelled and nothing
  // is kept. Not owned; null = never cancelled. The controller sets it when it stops mid-fit.
  const std::atomic<bool>* cancel = nullptr;
};

struct NnTrainingReport {
  int samples_train = 0;
  int samples_validation = 0;
  int best_epoch = 0;                // full-batch training: the steps taken
  double best_validation_mse = 0;    // in the standardised target space (full-batch: the final training MSE)
  double seconds = 0;
};

// Regression from a power mode (cores, CPU, GPU, EMC MHz) to one quantity (time or power).
class NnRegressor {
 public:
  NnRegressor();
  ~NnRegressor();
  NnRegressor(NnRegressor&&) noexcept;
  NnRegressor& operator=(NnRegressor&&) noexcept;

  // Trains from scratch. kInvalidArgument with fewer than 2 samples or non-positive targets (log).
  static Result<NnRegressor> train(const std::vector<ModeKey>& x, const std::vector<double>& y, const NnOptions& o);
  // PowerTrain transfer: a copy with the reference's hidden layers and input scaler, a fresh output
  // layer and target scaler, fine-tuned (all layers) on (x, y).
  Result<NnRegressor> transfer(const std::vector<ModeKey>& x, const std::vector<double>& y, const NnOptions& o) const;
  std::vector<double> predict(const std::vector<ModeKey>& x) const;

  Status save(const std::string& path) const;
  static Result<NnRegressor> load(const std::string& path);

  const NnTrainingReport& report() const;
  bool valid() const { return impl_ != nullptr; }

 private:
  explicit NnRegressor(std::unique_ptr<NnModel> model);
  std::unique_ptr<NnModel> impl_;
};

}  // namespace jetsweep::analysis

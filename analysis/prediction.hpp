// Runs one prediction method end to end on a corpus: picks the training modes, fits (or loads) the
// models, predicts the held-out modes and scores them (MAPE), and keeps a predictor for any mode.
// Functions are stateless; a PredictOutcome's predictor must be called from one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"
#include "analysis/linear_predictor.hpp"
#include "analysis/nn_predictor.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

// kPowerTrain: PowerTrain transfer made robust (log targets, inverse-frequency inputs, full-batch fine-tuning
// on every target mode); kPowerTrainPaper: as the paper gives it (raw targets, a 90:10 split and
// best-validation checkpointing also when fine-tuning on tens of modes). docs/ANALYSIS.md has both measured.
enum class Method { kLinear, kNn, kPowerTrain, kPowerTrainPaper };
// "linear" | "nn" | "powertrain" | "powertrain-paper"
Result<Method> parse_method(const std::string& text);
const char* to_string(Method m);
bool is_transfer(Method m);  // powertrain or powertrain-paper
// Full-batch Adam steps of kPowerTrain's fine-tuning (PredictRequest::nn.full_batch_steps 0 = this).
inline constexpr int kPowerTrainFineTuneSteps = 300;

struct PredictRequest {
  Method method = Method::kPowerTrain;
  WorkloadRef target;
  std::vector<WorkloadRef> references;  // linear: search + energy model; powertrain: the first one
  int train_modes = 0;                   // 0 = the method's default (linear 4, nn/powertrain 50)
  uint64_t seed = 1;
  // linear
  LinearFeatures features = LinearFeatures::kRaw;
  SearchCriterion criterion = SearchCriterion::kRmse;
  size_t pool = 10;                      // candidate modes for the nCk search (seeded subset if more)
  // nn / powertrain
  NnOptions nn;                          // powertrain sets log_target and inverse_features itself
  size_t reference_modes = 0;            // 0 = every reference mode
  uint64_t reference_seed = 1;           // reference model's seed (kept apart so it is reused across seeds)
  std::string model_dir;                 // where reference models are saved and reused; empty = no cache
};

struct ModePrediction {
  ModeKey mode;
  double time_ms = 0;
  std::optional<double> power_mw;
  std::optional<double> observed_time_ms;
  std::optional<double> observed_power_mw;
};

struct ReferenceModelInfo {
  std::string workload;
  std::string device;
  size_t modes = 0;
  std::string time_path, power_path;
  bool loaded = false;     // reused from model_dir rather than trained now
  double seconds = 0;      // training (or loading) wall time
};

struct PredictOutcome {
  Method method = Method::kLinear;
  std::string target;
  std::string device;
  AxisMap config;          // the target's configuration besides the mode (select_workload)
  bool simulated = false;  // the target was measured on simulated boards
  uint64_t seed = 0;
  std::vector<ModeKey> train_modes;
  std::vector<ModePrediction> held_out;  // every profiled target mode not trained on, with observations
  std::optional<double> time_mape_pct;
  std::optional<double> power_mape_pct;
  std::optional<double> energy_mape_pct;
  double fit_seconds = 0;                // target-side fitting/transfer time
  std::vector<std::string> notes;
  // linear
  std::optional<RepresentativeSearch> search;
  std::optional<LinearModel> time_model;
  std::optional<LinearModel> energy_model;
  // nn / powertrain
  std::optional<ReferenceModelInfo> reference;
  NnTrainingReport time_training, power_training;
  // Predicts any modes of the target's board (time ms, power mW when modelled).
  std::function<std::vector<ModePrediction>(const std::vector<ModeKey>&)> predict;
};

Result<PredictOutcome> run_prediction(const Corpus& corpus, const PredictRequest& request);

// PowerTrain's reference networks (time and power) of request.references.front(), trained on every reference mode
// (or request.reference_modes of them) the paper's way, reused from request.model_dir when saved there with the
// same data and options. kInvalidArgument naming --reference when the reference is absent, is the target itself
// or lacks power data. The networks are shared read-only: predict() from one thread at a time.
struct ReferenceModels {
  std::shared_ptr<const NnRegressor> time, power;
  ReferenceModelInfo info;
  std::vector<std::string> notes;  // e.g. a saved model that could not be reused
};
Result<ReferenceModels> powertrain_reference(const Corpus& corpus, const PredictRequest& request,
                                             const WorkloadData& target);
// The network options of request.method (powertrain: log targets, inverse inputs, full-batch fine-tuning).
NnOptions transfer_options(const PredictRequest& request);

// Seeded choice of k modes out of `modes` (all of them when k >= size).
std::vector<ModeKey> sample_modes(const std::vector<ModeKey>& modes, size_t k, uint64_t seed);

}  // namespace jetsweep::analysis

// The SIGMETRICS'23 sec. 5.7 predictor: a linear model of training time per power mode fitted on a few
// representative modes chosen by an exhaustive nCk search over reference workloads, and a universal
// linear energy model that takes the (predicted) time as an input. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

// kRaw is the paper's feature vector (CPU MHz, cores, GPU MHz, EMC MHz); kInverse uses their
// reciprocals (time scales with 1/frequency), our improvement for the time model.
enum class LinearFeatures { kRaw, kInverse };
// How the representative set is scored: the paper's sum of RMSE over reference workloads, or the sum
// of MAPE (scale-free, so a large workload does not drown a small one).
enum class SearchCriterion { kRmse, kMape };

const char* to_string(LinearFeatures f);
const char* to_string(SearchCriterion c);

// y = coef . x + intercept by least squares with scikit-learn LinearRegression semantics: the data
// are centred, and a rank-deficient system (e.g. 4 modes for 4 features + intercept, as in the paper)
// gets the minimum-norm coefficients (SVD pseudo-inverse, as numpy/scipy lstsq; Eigen BDCSVD).
struct LinearModel {
  std::vector<double> coef;
  double intercept = 0;
  int rank = 0;
  double predict(const std::vector<double>& x) const;
};
LinearModel fit_least_squares(const std::vector<std::vector<double>>& x, const std::vector<double>& y);

std::vector<double> time_features(const ModeKey& m, LinearFeatures f);
// Time model for one workload, fitted on its latter epochs (one sample per epoch 1+, or the mode
// mean when only that is known) in `modes`. kNotFound names a mode the workload lacks.
Result<LinearModel> fit_time_model(const WorkloadData& w, const std::vector<ModeKey>& modes, LinearFeatures f);

// Universal energy model: energy per minibatch (mJ) = a.cpu + b.cores + c.gpu + d.emc + t.time + e,
// fitted over every mode with power of every reference workload.
Result<LinearModel> fit_energy_model(const std::vector<WorkloadData>& refs);
std::vector<double> energy_features(const ModeKey& m, double minibatch_ms);

struct ReferenceScore {
  std::string workload;
  double rmse_ms = 0;
  double mape_pct = 0;
};
struct RepresentativeSearch {
  std::vector<ModeKey> pool;       // candidate modes (profiled for every reference workload)
  std::vector<ModeKey> best;       // the chosen k modes
  uint64_t combinations = 0;       // C(|pool|, k) fits per reference
  double score = 0;                // sum over references of the criterion
  std::vector<ReferenceScore> references;  // of the best set, predicting every pool mode
};
// Exhaustive search over every k-subset of `pool`. kInvalidArgument when the pool is smaller than k
// or the search would exceed `max_combinations`.
Result<RepresentativeSearch> search_representative_modes(const std::vector<WorkloadData>& refs,
                                                         const std::vector<ModeKey>& pool, int k,
                                                         LinearFeatures f, SearchCriterion c,
                                                         uint64_t max_combinations = 2'000'000);
// Modes profiled for every workload in refs (sorted).
std::vector<ModeKey> common_modes(const std::vector<WorkloadData>& refs);

}  // namespace jetsweep::analysis

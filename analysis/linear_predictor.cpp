#include "analysis/linear_predictor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <Eigen/SVD>

#include "analysis/stats.hpp"

namespace jetsweep::analysis {

const char* to_string(LinearFeatures f) { return f == LinearFeatures::kRaw ? "raw" : "inverse"; }
const char* to_string(SearchCriterion c) { return c == SearchCriterion::kRmse ? "rmse" : "mape"; }

double LinearModel::predict(const std::vector<double>& x) const {
  double y = intercept;
  for (size_t i = 0; i < coef.size() && i < x.size(); ++i) y += coef[i] * x[i];
  return y;
}

LinearModel fit_least_squares(const std::vector<std::vector<double>>& x, const std::vector<double>& y) {
  LinearModel m;
  const Eigen::Index n = static_cast<Eigen::Index>(x.size());
  const Eigen::Index p = n ? static_cast<Eigen::Index>(x.front().size()) : 0;
  m.coef.assign(static_cast<size_t>(p), 0.0);
  if (n == 0) return m;
  Eigen::MatrixXd a(n, p);
  Eigen::VectorXd b(n);
  for (Eigen::Index r = 0; r < n; ++r) {
    for (Eigen::Index c = 0; c < p; ++c) a(r, c) = x[static_cast<size_t>(r)][static_cast<size_t>(c)];
    b(r) = y[static_cast<size_t>(r)];
  }
  // Centre (scikit-learn fit_intercept=True), then the minimum-norm solution of the centred system: singular
  // values at or below 1e-10 of the largest count as zero (the rank).
  const Eigen::RowVectorXd xm = a.colwise().mean();
  const double ym = b.mean();
  a.rowwise() -= xm;
  b.array() -= ym;
  Eigen::BDCSVD<Eigen::MatrixXd> svd(a, Eigen::ComputeThinU | Eigen::ComputeThinV);
  svd.setThreshold(1e-10);
  m.rank = static_cast<int>(svd.rank());
  const Eigen::VectorXd coef = svd.solve(b);
  for (Eigen::Index c = 0; c < p; ++c) m.coef[static_cast<size_t>(c)] = coef(c);
  m.intercept = ym - xm.dot(coef);
  return m;
}

std::vector<double> time_features(const ModeKey& m, LinearFeatures f) {
  if (f == LinearFeatures::kRaw) return {m.cpu_mhz, static_cast<double>(m.cores), m.gpu_mhz, m.emc_mhz};
  return {1000.0 / m.cpu_mhz, 1.0 / m.cores, 1000.0 / m.gpu_mhz, 1000.0 / m.emc_mhz};
}

std::vector<double> energy_features(const ModeKey& m, double minibatch_ms) {
  return {m.cpu_mhz, static_cast<double>(m.cores), m.gpu_mhz, m.emc_mhz, minibatch_ms};
}

Result<LinearModel> fit_time_model(const WorkloadData& w, const std::vector<ModeKey>& modes, LinearFeatures f) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto& m : modes) {
    const ModeRecord* r = w.find(m);
    if (!r) return not_found("workload '" + w.workload + "' has no profile for mode " + m.label());
    const auto feats = time_features(m, f);
    if (r->epoch_minibatch_ms.empty()) {
      x.push_back(feats);
      y.push_back(r->minibatch_ms);
    } else {
      for (double t : r->epoch_minibatch_ms) {
        x.push_back(feats);
        y.push_back(t);
      }
    }
  }
  return fit_least_squares(x, y);
}

Result<LinearModel> fit_energy_model(const std::vector<WorkloadData>& refs) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto& w : refs) {
    for (const auto& r : w.modes) {
      if (!r.power_mw) continue;
      if (r.epoch_minibatch_ms.empty()) {
        x.push_back(energy_features(r.mode, r.minibatch_ms));
        y.push_back(*r.power_mw * r.minibatch_ms / 1000.0);
      } else {
        for (double t : r.epoch_minibatch_ms) {
          x.push_back(energy_features(r.mode, t));
          y.push_back(*r.power_mw * t / 1000.0);
        }
      }
    }
  }
  if (x.size() < 2) return invalid_argument("--reference: the energy model needs power data for at least two modes of the reference workloads");
  return fit_least_squares(x, y);
}

std::vector<ModeKey> common_modes(const std::vector<WorkloadData>& refs) {
  if (refs.empty()) return {};
  std::vector<ModeKey> out;
  for (const auto& r : refs.front().modes) {
    bool all = true;
    for (size_t i = 1; i < refs.size() && all; ++i) all = refs[i].find(r.mode) != nullptr;
    if (all) out.push_back(r.mode);
  }
  return out;
}

Result<RepresentativeSearch> search_representative_modes(const std::vector<WorkloadData>& refs,
                                                         const std::vector<ModeKey>& pool, int k,
                                                         LinearFeatures f, SearchCriterion c,
                                                         uint64_t max_combinations) {
  if (refs.empty()) return invalid_argument("--reference: at least one reference workload is needed for the search");
  if (k < 1) return invalid_argument("--train-modes: must be at least 1");
  if (pool.size() < static_cast<size_t>(k))
    return invalid_argument("--train-modes: " + std::to_string(k) + " modes requested but only " +
                            std::to_string(pool.size()) + " modes were profiled for every reference workload");
  // C(n, k) with overflow guard.
  uint64_t combos = 1;
  for (int i = 0; i < k; ++i) {
    combos = combos * (pool.size() - i) / (i + 1);
    if (combos > max_combinations)
      return invalid_argument("--pool: C(" + std::to_string(pool.size()) + "," + std::to_string(k) +
                              ") combinations exceed the limit of " + std::to_string(max_combinations) +
                              "; use a smaller --pool");
  }
  // Observed times of every reference in every pool mode, and the per-sample design rows.
  struct Ref {
    std::vector<double> observed;            // per pool mode: mode mean
    std::vector<std::vector<double>> x;      // per pool mode: its feature row
    std::vector<std::vector<double>> ys;     // per pool mode: its samples (epochs or the mean)
  };
  std::vector<Ref> data(refs.size());
  for (size_t w = 0; w < refs.size(); ++w) {
    for (const auto& m : pool) {
      const ModeRecord* r = refs[w].find(m);
      if (!r) return not_found("reference workload '" + refs[w].workload + "' lacks pool mode " + m.label());
      data[w].observed.push_back(r->minibatch_ms);
      data[w].x.push_back(time_features(m, f));
      data[w].ys.push_back(r->epoch_minibatch_ms.empty() ? std::vector<double>{r->minibatch_ms} : r->epoch_minibatch_ms);
    }
  }
  RepresentativeSearch out;
  out.pool = pool;
  out.combinations = combos;
  double best = std::numeric_limits<double>::infinity();
  std::vector<size_t> idx(k);
  for (int i = 0; i < k; ++i) idx[i] = i;
  const size_t n = pool.size();
  std::vector<std::vector<double>> x;
  std::vector<double> y, pred;
  for (;;) {
    double score = 0;
    std::vector<ReferenceScore> scores;
    for (size_t w = 0; w < refs.size(); ++w) {
      x.clear();
      y.clear();
      for (size_t i : idx)
        for (double t : data[w].ys[i]) {
          x.push_back(data[w].x[i]);
          y.push_back(t);
        }
      const LinearModel model = fit_least_squares(x, y);
      pred.clear();
      for (const auto& row : data[w].x) pred.push_back(model.predict(row));
      ReferenceScore s{refs[w].workload, rmse(data[w].observed, pred), mape_pct(data[w].observed, pred)};
      score += c == SearchCriterion::kRmse ? s.rmse_ms : s.mape_pct;
      scores.push_back(s);
    }
    if (score < best) {
      best = score;
      out.best.clear();
      for (size_t i : idx) out.best.push_back(pool[i]);
      out.references = scores;
    }
    // Next k-subset in lexicographic order.
    int i = k - 1;
    while (i >= 0 && idx[i] == n - k + i) --i;
    if (i < 0) break;
    ++idx[i];
    for (int j = i + 1; j < k; ++j) idx[j] = idx[j - 1] + 1;
  }
  out.score = best;
  return out;
}

}  // namespace jetsweep::analysis

#include "analysis/stats.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace jetsweep::analysis {

double mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

std::pair<double, double> bootstrap_median_interval(const std::vector<double>& v, double level, int resamples,
                                                    uint64_t seed) {
  if (v.size() < 2 || resamples < 1) return {median(v), median(v)};
  level = std::clamp(level, 0.0, 1.0);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
  std::vector<double> medians, sample(v.size());
  for (int r = 0; r < resamples; ++r) {
    for (double& x : sample) x = v[pick(rng)];
    medians.push_back(median(sample));
  }
  return {quantile(medians, (1 - level) / 2), quantile(medians, (1 + level) / 2)};
}

double sample_stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

double coefficient_of_variation_pct(const std::vector<double>& v) {
  const double m = mean(v);
  return m == 0 ? 0 : 100.0 * sample_stddev(v) / m;
}

double max_deviation_from_median_pct(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const double med = median(v);
  if (med == 0) return 0;
  double worst = 0;
  for (double x : v) worst = std::max(worst, std::fabs(x - med) / std::fabs(med));
  return 100.0 * worst;
}

double mape_pct(const std::vector<double>& observed, const std::vector<double>& predicted) {
  if (observed.empty()) return 0;
  double s = 0;
  for (size_t i = 0; i < observed.size(); ++i) s += std::fabs(predicted[i] - observed[i]) / std::fabs(observed[i]);
  return 100.0 * s / static_cast<double>(observed.size());
}

double rmse(const std::vector<double>& observed, const std::vector<double>& predicted) {
  if (observed.empty()) return 0;
  double s = 0;
  for (size_t i = 0; i < observed.size(); ++i) s += (predicted[i] - observed[i]) * (predicted[i] - observed[i]);
  return std::sqrt(s / static_cast<double>(observed.size()));
}

}  // namespace jetsweep::analysis

// Small descriptive statistics and error metrics shared by the analyses. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace jetsweep::analysis {

double mean(const std::vector<double>& v);            // 0 for an empty vector
double median(std::vector<double> v);                 // 0 for an empty vector
double quantile(std::vector<double> v, double q);     // linear interpolation (numpy's default)
double sample_stddev(const std::vector<double>& v);   // n-1 denominator; 0 below two values
// Where the median of v could lie with other samples: the (1-level)/2 and (1+level)/2 quantiles of the medians of
// `resamples` bootstrap resamples (seeded, so the same v gives the same interval); level is clamped to [0, 1]; the
// median twice below 2 values.
std::pair<double, double> bootstrap_median_interval(const std::vector<double>& v, double level = 0.9,
                                                    int resamples = 2000, uint64_t seed = 20261205);
double coefficient_of_variation_pct(const std::vector<double>& v);  // 100 * stddev / mean
// Largest |x - median| / median over v, in percent.
double max_deviation_from_median_pct(const std::vector<double>& v);
// Mean absolute percentage error, 100 * mean(|pred - obs| / |obs|); observed values must be non-zero.
double mape_pct(const std::vector<double>& observed, const std::vector<double>& predicted);
double rmse(const std::vector<double>& observed, const std::vector<double>& predicted);

}  // namespace jetsweep::analysis

// Small descriptive statistics and error metrics shared by the analyses. Pure functions; any thread.
#pragma once

#include <vector>

namespace jetsweep::analysis {

double mean(const std::vector<double>& v);            // 0 for an empty vector
double median(std::vector<double> v);                 // 0 for an empty vector
double quantile(std::vector<double> v, double q);     // linear interpolation (numpy's default)
double sample_stddev(const std::vector<double>& v);   // n-1 denominator; 0 below two values
double coefficient_of_variation_pct(const std::vector<double>& v);  // 100 * stddev / mean
// Largest |x - median| / median over v, in percent.
double max_deviation_from_median_pct(const std::vector<double>& v);
// Mean absolute percentage error, 100 * mean(|pred - obs| / |obs|); observed values must be non-zero.
double mape_pct(const std::vector<double>& observed, const std::vector<double>& predicted);
double rmse(const std::vector<double>& observed, const std::vector<double>& predicted);

}  // namespace jetsweep::analysis

#include "analysis/pareto.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace jetsweep::analysis {

std::vector<size_t> pareto_front(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (x[a] != x[b]) return x[a] < x[b];
    if (y[a] != y[b]) return y[a] < y[b];
    return a < b;
  });
  std::vector<size_t> front;
  double best_y = std::numeric_limits<double>::infinity();
  for (size_t i : order) {
    if (y[i] < best_y) {
      front.push_back(i);
      best_y = y[i];
    }
  }
  return front;
}

std::vector<size_t> pareto_front_brute_force(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<size_t> front;
  for (size_t i = 0; i < x.size(); ++i) {
    bool keep = true;
    for (size_t j = 0; j < x.size() && keep; ++j) {
      if (j == i) continue;
      const bool dominates = x[j] <= x[i] && y[j] <= y[i] && (x[j] < x[i] || y[j] < y[i]);
      const bool earlier_twin = x[j] == x[i] && y[j] == y[i] && j < i;
      if (dominates || earlier_twin) keep = false;
    }
    if (keep) front.push_back(i);
  }
  std::sort(front.begin(), front.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  return front;
}

}  // namespace jetsweep::analysis

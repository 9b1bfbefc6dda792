// Pareto fronts of two minimised quantities (SIGMETRICS'23 sec. 5.6, PowerTrain footnote 3).
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <vector>

namespace jetsweep::analysis {

// Indices of the Pareto-optimal points, ordered by increasing x (and so decreasing y).
// The papers' construction: sort by x (ties by y), take the leftmost point, then every point whose y
// is strictly lower than the last one taken. A point is on the front iff no other point is <= in both
// coordinates and < in one; of identical points only the first (lowest index) is kept. O(n log n).
std::vector<size_t> pareto_front(const std::vector<double>& x, const std::vector<double>& y);

// The same set by the definition, comparing every pair: O(n^2). The reference for tests.
std::vector<size_t> pareto_front_brute_force(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace jetsweep::analysis

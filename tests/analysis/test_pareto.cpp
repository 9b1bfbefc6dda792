// Pareto fronts: the papers' sweep construction equals the brute-force definition.
#include <doctest/doctest.h>

#include <random>

#include "analysis/pareto.hpp"

using namespace jetsweep::analysis;

TEST_CASE("pareto: a hand-checked front") {
  //            0  1  2  3  4  5
  std::vector<double> x = {1, 2, 3, 4, 2, 5};
  std::vector<double> y = {9, 5, 6, 1, 5, 1};
  // 0 (lowest x), 1 (y 5 < 9), 2 dominated by 1, 3 (y 1), 4 is a twin of 1, 5 dominated by 3.
  CHECK(pareto_front(x, y) == std::vector<size_t>{0, 1, 3});
  CHECK(pareto_front_brute_force(x, y) == std::vector<size_t>{0, 1, 3});
}

TEST_CASE("pareto: sweep equals brute force on random data with ties") {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const size_t n = 1 + seed % 60;
    std::uniform_int_distribution<int> coarse(0, 12);  // many ties
    std::uniform_real_distribution<double> fine(0, 100);
    std::vector<double> x(n), y(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = seed % 2 ? coarse(rng) : fine(rng);
      y[i] = seed % 3 ? coarse(rng) : fine(rng);
    }
    auto fast = pareto_front(x, y);
    auto slow = pareto_front_brute_force(x, y);
    REQUIRE_MESSAGE(fast == slow, "seed " << seed);
    for (size_t i = 1; i < fast.size(); ++i) {
      CHECK(x[fast[i]] > x[fast[i - 1]]);
      CHECK(y[fast[i]] < y[fast[i - 1]]);
    }
  }
}

TEST_CASE("pareto: empty and single inputs") {
  CHECK(pareto_front({}, {}).empty());
  CHECK(pareto_front({3}, {4}) == std::vector<size_t>{0});
}

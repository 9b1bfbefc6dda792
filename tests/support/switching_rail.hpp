// A power rail with a known, step-like waveform for energy-accuracy tests and the sampler benchmark: it
// switches between 6 W and 14 W every 0.7 s +- 30% (seeded, so the switch instants never lock in phase with a
// sampler), from t = 0 to `until_s`; exact power at any instant and exact energy over any window (prefix sums
// of the levels). Immutable after construction; any thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace jetsweep::testing {

class SwitchingRail {
 public:
  static constexpr double kLowW = 6, kHighW = 14;

  SwitchingRail(double until_s, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> jitter(-0.3, 0.3);
    switch_s_.push_back(0);
    while (switch_s_.back() <= until_s) switch_s_.push_back(switch_s_.back() + 0.7 * (1 + jitter(rng)));
    cum_j_.push_back(0);
    for (size_t k = 1; k < switch_s_.size(); ++k)
      cum_j_.push_back(cum_j_.back() + level(k - 1) * (switch_s_[k] - switch_s_[k - 1]));
  }
  double power_w(double t) const { return level(segment(t)); }
  double energy_j(double t0, double t1) const { return energy_to(t1) - energy_to(t0); }
  // Switch instants inside (t0, t1].
  std::vector<double> switches(double t0, double t1) const {
    std::vector<double> out;
    for (double s : switch_s_)
      if (s > t0 && s <= t1) out.push_back(s);
    return out;
  }

 private:
  static double level(size_t k) { return k % 2 == 0 ? kLowW : kHighW; }
  size_t segment(double t) const {
    t = std::max(t, 0.0);
    return static_cast<size_t>(std::upper_bound(switch_s_.begin(), switch_s_.end(), t) - switch_s_.begin()) - 1;
  }
  double energy_to(double t) const {
    const size_t k = segment(t);
    return cum_j_[k] + level(k) * (std::max(t, 0.0) - switch_s_[k]);
  }
  std::vector<double> switch_s_;
  std::vector<double> cum_j_;
};

}  // namespace jetsweep::testing

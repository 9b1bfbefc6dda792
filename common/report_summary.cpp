// A run's epochs summarised as the text report shows them (api::RunEpochSummary; its codec derives from its
// description, api.cpp).
#include "common/api.hpp"

namespace jetsweep::api {

RunEpochSummary summarize_epochs(const std::vector<ReportEpoch>& epochs) {
  RunEpochSummary s;
  double e2e = 0, stall = 0, compute = 0, energy = 0;
  bool energy_everywhere = true;
  int64_t last_epoch = -1, first_throttled = -1;
  for (const auto& e : epochs) {
    ++s.epochs;
    if (e.epoch > last_epoch) {
      last_epoch = e.epoch;
      s.minibatches = e.minibatches;
    }
    if (e.throttled) {
      ++s.throttled_epochs;
      if (first_throttled < 0 || e.epoch < first_throttled) {
        first_throttled = e.epoch;
        s.first_throttle = "epoch " + std::to_string(e.epoch) + ": " + e.throttle_reason.value_or("-");
      }
    }
    if (e.epoch == 0) {
      s.e0_e2e_s = e.e2e_s;
      s.e0_stall_s = e.stall_s;
      s.e0_compute_s = e.compute_s;
      s.e0_energy_j = e.energy_j;
      continue;
    }
    ++s.later_epochs;
    e2e += e.e2e_s;
    stall += e.stall_s;
    compute += e.compute_s;
    energy_everywhere &= e.energy_j.has_value();
    energy += e.energy_j.value_or(0);
  }
  if (s.later_epochs > 0) {
    const auto n = static_cast<double>(s.later_epochs);
    s.later_e2e_s = e2e / n;
    s.later_stall_s = stall / n;
    s.later_compute_s = compute / n;
    if (energy_everywhere) s.later_energy_j = energy / n;
  }
  return s;
}

}  // namespace jetsweep::api

// A run's epochs summarised as the text report shows them (api::RunEpochSummary) and its codec.
#include "common/api.hpp"
#include "common/json_fields.hpp"

namespace jetsweep::api {
namespace bj = boost::json;

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

bj::object to_json(const RunEpochSummary& v) {
  const auto n = [](const std::optional<double>& x) { return json::optional_number(x); };
  bj::object o{{"epochs", v.epochs},
               {"minibatches", v.minibatches},
               {"e0_e2e_s", n(v.e0_e2e_s)},
               {"e0_stall_s", n(v.e0_stall_s)},
               {"e0_compute_s", n(v.e0_compute_s)},
               {"e0_energy_j", n(v.e0_energy_j)},
               {"later_epochs", v.later_epochs},
               {"later_e2e_s", n(v.later_e2e_s)},
               {"later_stall_s", n(v.later_stall_s)},
               {"later_compute_s", n(v.later_compute_s)},
               {"later_energy_j", n(v.later_energy_j)},
               {"throttled_epochs", v.throttled_epochs}};
  o["first_throttle"] = v.first_throttle ? bj::value(*v.first_throttle) : bj::value(nullptr);
  return o;
}

Status from_json(const bj::value& v, const std::string& where, RunEpochSummary& out) {
  if (!v.is_object()) return protocol_error(where + ": expected an object");
  json::FieldReader r(v.get_object(), where);
  out.epochs = r.integer("epochs");
  out.minibatches = r.integer("minibatches");
  out.e0_e2e_s = r.opt_number("e0_e2e_s");
  out.e0_stall_s = r.opt_number("e0_stall_s");
  out.e0_compute_s = r.opt_number("e0_compute_s");
  out.e0_energy_j = r.opt_number("e0_energy_j");
  out.later_epochs = r.integer("later_epochs");
  out.later_e2e_s = r.opt_number("later_e2e_s");
  out.later_stall_s = r.opt_number("later_stall_s");
  out.later_compute_s = r.opt_number("later_compute_s");
  out.later_energy_j = r.opt_number("later_energy_j");
  out.throttled_epochs = r.integer("throttled_epochs");
  out.first_throttle = r.opt_string("first_throttle");
  return r.status();
}

}  // namespace jetsweep::api

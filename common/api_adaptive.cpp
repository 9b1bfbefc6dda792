// The codec of adaptive-profiling plans' status (common/api.hpp AdaptivePlanStatus): in a campaign's status and
// report.
#include "common/api.hpp"
#include "common/json_fields.hpp"

namespace jetsweep::api {
namespace bj = boost::json;

bj::object to_json(const AdaptivePlanStatus& v) {
  return {{"plan_id", v.plan_id},
          {"device", v.device},
          {"workload", v.workload},
          {"state", v.state},
          {"rounds", v.rounds},
          {"budget", v.budget},
          {"profiled", v.profiled},
          {"candidates", v.candidates},
          {"error", v.error},
          {"time_loo_pct", json::optional_number(v.time_loo_pct)},
          {"power_loo_pct", json::optional_number(v.power_loo_pct)},
          {"front_size", v.front_size ? bj::value(*v.front_size) : bj::value(nullptr)},
          {"front_changed", v.front_changed ? bj::value(*v.front_changed) : bj::value(nullptr)},
          {"fit", v.fit}};
}

Status from_json(const bj::value& v, const std::string& where, AdaptivePlanStatus& out) {
  if (!v.is_object()) return protocol_error(where + ": expected an object");
  json::FieldReader r(v.get_object(), where);
  out.plan_id = r.integer("plan_id");
  out.device = r.string("device");
  out.workload = r.string("workload");
  out.state = r.string("state");
  out.rounds = r.integer("rounds");
  out.budget = r.integer("budget");
  out.profiled = r.integer("profiled");
  out.candidates = r.integer("candidates");
  out.error = r.string("error");
  out.time_loo_pct = r.opt_number("time_loo_pct");
  out.power_loo_pct = r.opt_number("power_loo_pct");
  out.front_size = r.opt_integer("front_size");
  out.front_changed = r.opt_integer("front_changed");
  if (const bj::object* fit = r.object("fit")) out.fit = *fit;
  return r.status();
}

}  // namespace jetsweep::api

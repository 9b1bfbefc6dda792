// The codec of adaptive-profiling plans' status (common/api.hpp AdaptivePlanStatus): in a campaign's status and
// report.
#include "common/api.hpp"
#include "common/described_json.hpp"
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
          {"fit", v.fit},
          {"history", [&] {
             bj::array a;
             for (const auto& r : v.history) a.push_back(json::described_to_json(r));
             return a;
           }()}};
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
  out.history.clear();
  const bj::value* present = v.get_object().if_contains("history");   // absent from older controllers
  if (const bj::array* history = present && !present->is_null() ? r.array("history") : nullptr)
    for (size_t i = 0; i < history->size() && r.ok(); ++i) {
      if (!(*history)[i].is_object()) {
        r.fail("history", std::string("expected an array of objects, found ") + json::kind_name((*history)[i]));
        break;
      }
      json::FieldReader e((*history)[i].get_object(), r, "history", i);
      json::read_described(e, out.history.emplace_back());
      if (!e.ok()) return e.status();
    }
  return r.status();
}

}  // namespace jetsweep::api

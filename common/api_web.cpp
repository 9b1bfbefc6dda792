// The codec of the dashboard's API structs (common/api.hpp, "the dashboard's routes").
#include "common/api.hpp"
#include "common/json_fields.hpp"

namespace jetsweep::api {
namespace bj = boost::json;

std::string run_path(const std::string& run_ref) { return "/api/runs/" + run_ref; }
std::string run_samples_path(const std::string& run_ref) { return run_path(run_ref) + "/samples"; }

bj::object to_json(const RunDetail& v) {
  bj::object o = to_json(v.run);
  o["campaign_id"] = v.campaign_id;
  o["campaign_name"] = v.campaign_name;
  return o;
}

Status from_json(const bj::value& v, const std::string& where, RunDetail& out) {
  JS_RETURN_IF_ERROR(from_json(v, where, out.run));
  json::FieldReader r(v.get_object(), where);
  out.campaign_id = r.integer("campaign_id");
  out.campaign_name = r.string("campaign_name");
  return r.status();
}

bj::object to_json(const RunSample& v) {
  return {{"t_s", v.t_s},
          {"t_unix_s", json::optional_number(v.t_unix_s)},
          {"power_w", json::optional_number(v.power_w)},
          {"cpu_util_pct", v.cpu_util_pct},
          {"cpu_freq_mhz", json::optional_number(v.cpu_freq_mhz)},
          {"mem_used_kb", v.mem_used_kb},
          {"disk_read_bytes", v.disk_read_bytes},
          {"temp_max_c", json::optional_number(v.temp_max_c)}};
}

Status from_json(const bj::value& v, const std::string& where, RunSample& out) {
  if (!v.is_object()) return protocol_error(where + ": expected an object");
  json::FieldReader r(v.get_object(), where);
  out.t_s = r.number("t_s");
  out.t_unix_s = r.opt_number("t_unix_s");
  out.power_w = r.opt_number("power_w");
  out.cpu_util_pct = r.number("cpu_util_pct");
  out.cpu_freq_mhz = r.opt_number("cpu_freq_mhz");
  out.mem_used_kb = r.integer("mem_used_kb");
  out.disk_read_bytes = r.integer("disk_read_bytes");
  out.temp_max_c = r.opt_number("temp_max_c");
  return r.status();
}

bj::object to_json(const SessionInfo& v) { return {{"role", v.role}, {"auth_required", v.auth_required}}; }

Status from_json(const bj::value& v, const std::string& where, SessionInfo& out) {
  if (!v.is_object()) return protocol_error(where + ": expected an object");
  json::FieldReader r(v.get_object(), where);
  out.role = r.string("role");
  out.auth_required = r.boolean("auth_required");
  return r.status();
}

}  // namespace jetsweep::api

// The codec of the fleet view's structs (common/api.hpp, "fleet"): GET /api/fleet.
#include "common/api.hpp"
#include "common/json_fields.hpp"

namespace jetsweep::api {
namespace bj = boost::json;

std::string fleet_state(bool connected, const std::optional<int64_t>& current_run) {
  if (!connected) return "offline";
  return current_run ? "busy" : "idle";
}

namespace {

// An array field of objects, each decoded as a T (an absent field is an error; null = empty).
template <class T>
void objects(json::FieldReader& r, const bj::object& parent, const char* name, std::vector<T>& out) {
  out.clear();
  const auto* field = parent.if_contains(name);
  if (!r.ok()) return;
  if (!field) return r.fail(name, "missing");
  if (field->is_null()) return;
  if (!field->is_array()) return r.fail(name, std::string("expected an array, got ") + json::kind_name(*field));
  for (size_t i = 0; i < field->get_array().size(); ++i) {
    T item;
    const Status s = from_json(field->get_array()[i], r.where() + " field '" + name + "[" + std::to_string(i) + "]'", item);
    if (!s.is_ok()) return r.fail(name, s.message());
    out.push_back(std::move(item));
  }
}

std::vector<std::string> strings(json::FieldReader& r, const char* name) {
  std::vector<std::string> out;
  const auto* a = r.array(name);
  if (!a) return out;
  for (const auto& e : *a) {
    if (!e.is_string()) {
      r.fail(name, std::string("expected an array of strings, got an element ") + json::kind_name(e));
      return {};
    }
    out.emplace_back(e.get_string());
  }
  return out;
}

}  // namespace

bj::object to_json(const FleetPoint& v) {
  return {{"t_unix_s", v.t_unix_s},
          {"power_w", json::optional_number(v.power_w)},
          {"cpu_util_pct", v.cpu_util_pct},
          {"cpu_freq_mhz", json::optional_number(v.cpu_freq_mhz)},
          {"temp_max_c", json::optional_number(v.temp_max_c)}};
}

Status from_json(const bj::value& v, const std::string& where, FleetPoint& out) {
  if (!v.is_object()) return protocol_error(where + ": expected an object");
  json::FieldReader r(v.get_object(), where);
  out.t_unix_s = r.number("t_unix_s");
  out.power_w = r.opt_number("power_w");
  out.cpu_util_pct = r.number("cpu_util_pct");
  out.cpu_freq_mhz = r.opt_number("cpu_freq_mhz");
  out.temp_max_c = r.opt_number("temp_max_c");
  return r.status();
}

bj::object to_json(const FleetLatest& v) {
  return {{"t_unix_s", v.t_unix_s},
          {"power_w", json::optional_number(v.power_w)},
          {"cpu_util_pct", v.cpu_util_pct},
          {"cpu_freq_mhz", json::optional_number(v.cpu_freq_mhz)},
          {"mem_used_kb", v.mem_used_kb},
          {"temp_max_c", json::optional_number(v.temp_max_c)}};
}

Status from_json(const bj::value& v, const std::string& where, FleetLatest& out) {
  if (!v.is_object()) return protocol_error(where + ": expected an object");
  json::FieldReader r(v.get_object(), where);
  out.t_unix_s = r.number("t_unix_s");
  out.power_w = r.opt_number("power_w");
  out.cpu_util_pct = r.number("cpu_util_pct");
  out.cpu_freq_mhz = r.opt_number("cpu_freq_mhz");
  out.mem_used_kb = r.integer("mem_used_kb");
  out.temp_max_c = r.opt_number("temp_max_c");
  return r.status();
}

bj::object to_json(const FleetBoard& v) {
  bj::array not_ready;
  for (const auto& n : v.not_ready) not_ready.emplace_back(n);
  bj::object o{{"agent_id", v.agent_id},
               {"name", v.name},
               {"device_class", v.device_class},
               {"connected", v.connected},
               {"state", v.state},
               {"simulated", v.simulated},
               {"ready", v.ready()},
               {"not_ready", std::move(not_ready)},
               {"last_seen", v.last_seen}};
  o["current_run"] = v.current_run ? bj::value(*v.current_run) : bj::value(nullptr);
  o["last_heartbeat_unix_s"] = json::optional_number(v.last_heartbeat_unix_s);
  o["backlog_messages"] = v.backlog_messages ? bj::value(*v.backlog_messages) : bj::value(nullptr);
  o["backlog_bytes"] = v.backlog_bytes ? bj::value(*v.backlog_bytes) : bj::value(nullptr);
  o["applied"] = v.applied ? bj::value(*v.applied) : bj::value(nullptr);
  o["power_mode"] = v.power_mode ? bj::value(bj::string(*v.power_mode)) : bj::value(nullptr);
  o["latest"] = v.latest ? bj::value(to_json(*v.latest)) : bj::value(nullptr);
  o["series"] = to_json(v.series);
  return o;
}

Status from_json(const bj::value& v, const std::string& where, FleetBoard& out) {
  if (!v.is_object()) return protocol_error(where + ": expected an object");
  const bj::object& obj = v.get_object();
  json::FieldReader r(obj, where);
  out.agent_id = r.integer("agent_id");
  out.name = r.string("name");
  out.device_class = r.string("device_class");
  out.connected = r.boolean("connected");
  out.state = r.string("state");
  out.current_run = r.opt_integer("current_run");
  out.simulated = r.boolean("simulated");
  (void)r.boolean("ready");   // derived from not_ready; read to check it is there
  out.not_ready = strings(r, "not_ready");
  out.last_seen = r.string("last_seen");
  out.last_heartbeat_unix_s = r.opt_number("last_heartbeat_unix_s");
  out.backlog_messages = r.opt_integer("backlog_messages");
  out.backlog_bytes = r.opt_integer("backlog_bytes");
  out.applied.reset();
  if (const auto* a = obj.if_contains("applied"); a && !a->is_null()) {
    if (a->is_object()) out.applied = a->get_object();
    else r.fail("applied", std::string("expected an object, got ") + json::kind_name(*a));
  }
  out.power_mode = r.opt_string("power_mode");
  out.latest.reset();
  if (const auto* l = obj.if_contains("latest"); l && !l->is_null() && r.ok()) {
    FleetLatest latest;
    const Status s = from_json(*l, where + " field 'latest'", latest);
    if (!s.is_ok()) return s;
    out.latest = latest;
  }
  objects(r, obj, "series", out.series);
  return r.status();
}

}  // namespace jetsweep::api

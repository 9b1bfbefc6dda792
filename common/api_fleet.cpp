// The codec of the fleet view's structs (common/api.hpp, "fleet"): GET /api/fleet.
#include "common/api.hpp"
#include "common/described_json.hpp"
#include "common/json_fields.hpp"

namespace jetsweep::api {
namespace bj = boost::json;

std::string fleet_state(bool connected, const std::optional<int64_t>& current_run) {
  if (!connected) return "offline";
  return current_run ? "busy" : "idle";
}

JS_DESCRIBED_CODEC(FleetPoint)
JS_DESCRIBED_CODEC(FleetLatest)

// FleetBoard: its members by its description, "ready" (computed, not read back) after "simulated".
bj::object to_json(const FleetBoard& v) {
  bj::object o;
  for (auto& [key, value] : json::described_to_json(v)) {   // the description's order
    o[key] = std::move(value);
    if (key == "simulated") o["ready"] = v.ready();
  }
  return o;
}

Status from_json(const bj::value& v, const std::string& where, FleetBoard& out) {
  return json::described_from_json(v, where, out);
}

}  // namespace jetsweep::api

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

JS_DESCRIBED_CODEC(FleetBoard)   // "ready" computed after "simulated" (JS_WIRE_COMPUTED), not read back

}  // namespace jetsweep::api

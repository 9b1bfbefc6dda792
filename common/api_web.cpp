// The codec of the dashboard's API structs (common/api.hpp, "the dashboard's routes").
#include "common/api.hpp"
#include "common/described_json.hpp"
#include "common/json_fields.hpp"

namespace jetsweep::api {
namespace bj = boost::json;

std::string run_path(const std::string& run_ref) { return "/api/runs/" + run_ref; }
std::string run_samples_path(const std::string& run_ref) { return run_path(run_ref) + "/samples"; }

JS_DESCRIBED_CODEC(RunDetail)
JS_DESCRIBED_CODEC(RunSample)
JS_DESCRIBED_CODEC(SessionInfo)

}  // namespace jetsweep::api

// The codec of the dashboard's API structs (common/api.hpp, "the dashboard's routes").
#include "common/api.hpp"
#include "common/described_json.hpp"
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

JS_DESCRIBED_CODEC(RunSample)
JS_DESCRIBED_CODEC(SessionInfo)

}  // namespace jetsweep::api

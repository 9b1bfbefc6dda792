#include "common/api.hpp"

#include "common/described_json.hpp"
#include "common/json_fields.hpp"

namespace jetsweep::api {
namespace bj = boost::json;

std::string CampaignStateChange::state() const {
  if (action == "pause") return "paused";
  if (action == "resume") return "active";
  if (action == "cancel") return "cancelled";
  return "";
}

std::string campaign_path(const std::string& ref) { return "/api/campaigns/" + ref; }
std::string campaign_report_path(const std::string& ref) { return campaign_path(ref) + "/report"; }
std::string campaign_action_path(const CampaignStateChange& c) { return campaign_path(c.ref) + "/" + c.action; }
std::string run_cancel_path(const std::string& run_ref) { return "/api/runs/" + run_ref + "/cancel"; }
std::string agent_revoke_path(const std::string& name) { return "/api/agents/" + name + "/revoke"; }

// ---- records whose codecs derive from their descriptions (api.hpp) ----

JS_DESCRIBED_CODEC(ErrorReply)
JS_DESCRIBED_CODEC(Health)
JS_DESCRIBED_CODEC(Unrunnable)
JS_DESCRIBED_CODEC(CampaignStatus)
JS_DESCRIBED_CODEC(CreatedCampaignReply)
JS_DESCRIBED_CODEC(AgentRevoked)
JS_DESCRIBED_CODEC(RunCancelled)
JS_DESCRIBED_CODEC(EstimateTarget)
JS_DESCRIBED_CODEC(EstimateSources)
JS_DESCRIBED_CODEC(CampaignEstimate)
JS_DESCRIBED_CODEC(ReportCampaign)
JS_DESCRIBED_CODEC(EpochClocks)
JS_DESCRIBED_CODEC(MinibatchStats)
JS_DESCRIBED_CODEC(RunEpochSummary)
JS_DESCRIBED_CODEC(ReportEpoch)
JS_DESCRIBED_CODEC(ReportRun)
JS_DESCRIBED_CODEC(CampaignReport)
JS_DESCRIBED_CODEC(AdaptivePlanStatus)

JS_DESCRIBED_CODEC(AgentInfo)   // "ready" computed last (JS_WIRE_COMPUTED beside its description), not read back

boost::json::object report_config(const boost::json::object& stored) {
  boost::json::object config;
  for (const char* k : {"model", "dataset", "data", "batch_size", "workers", "prefetch", "epochs", "threads", "seed",
                        "repetition", "device", "power_mode", "pin_clocks", "fan_max", "drop_caches", "sample_hz",
                        "max_minibatches", "accelerator", "timing"})
    if (auto it = stored.find(k); it != stored.end()) config[k] = it->value();
  return config;
}

bool simulated_backend(const std::optional<boost::json::object>& facts) {
  if (!facts) return false;
  auto it = facts->find("backend");
  return it != facts->end() && it->value() == "sim";
}

}  // namespace jetsweep::api

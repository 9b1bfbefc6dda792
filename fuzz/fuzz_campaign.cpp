// libFuzzer target: the campaign YAML loader and its expansion (common/campaign.hpp), as the controller's
// CampaignWorker and `jetsweep validate` run them, under CampaignLimits small enough that every input is
// bounded (the defaults scaled down ~25x; a slow input is then a finding, reported as a libFuzzer timeout,
// and the deadline, set far beyond it, never decides). Properties of an accepted campaign: runs within
// max_runs, dispatch_order a permutation of them, every run's config surviving the JSON the controller
// stores and sends (to_json -> run_config_from_json), and a dry-run copy within its caps. The same text is
// also parsed as a run spec (`jetsweep-agent run --spec`). A refusal names why, in UTF-8 (it travels in JSON).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/campaign.hpp"
#include "common/text.hpp"
#include "fuzz/fuzz_util.hpp"

namespace {

using namespace jetsweep;

CampaignLimits fuzz_limits() {
  CampaignLimits l;
  l.max_yaml_bytes = 64 << 10;
  l.max_runs = 10'000;
  l.max_generated_modes = 4'000;
  l.max_list_length = 400;
  l.max_rules = 400;
  l.max_rule_evaluations = 200'000;
  l.deadline = std::chrono::minutes(10);
  return l;
}

void check_accepted(Campaign& c, const CampaignLimits& limits) {
  fuzz::require(!c.runs.empty(), "an accepted campaign has runs");
  fuzz::require(static_cast<int64_t>(c.runs.size()) <= limits.max_runs, "runs within max_runs",
                std::to_string(c.runs.size()));
  std::vector<size_t> order = dispatch_order(c);
  fuzz::require(order.size() == c.runs.size(), "dispatch_order has one entry per run");
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i) fuzz::require(order[i] == i, "dispatch_order is a permutation");
  // The JSON round trip of a few runs (first, middle, last: all of them would make big campaigns slow).
  for (size_t i : {size_t{0}, c.runs.size() / 2, c.runs.size() - 1}) {
    const RunConfig& run = c.runs[i];
    auto back = run_config_from_json(to_json(run), "fuzz");
    fuzz::require(back.is_ok(), "a run's config decodes from its JSON", back.is_ok() ? "" : back.status().to_string());
    fuzz::require(back.value() == run, "a run's config survives its JSON", boost::json::serialize(to_json(run)));
  }
  DryRunCaps caps;
  caps.max_runs = 3;
  caps.max_epochs = 1;
  caps.max_minibatches = 5;
  apply_dry_run_caps(c, caps);
  fuzz::require(!c.runs.empty() && c.runs.size() <= 3, "a dry run keeps 1..3 runs");
  for (const auto& r : c.runs)
    fuzz::require(r.epochs <= 1 && r.max_minibatches > 0 && r.max_minibatches <= 5, "a dry run's caps apply");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::quiet_logs();
  static const CampaignLimits limits = fuzz_limits();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto campaign = parse_campaign(text, "fuzz.yaml", limits);
  if (campaign.is_ok()) {
    check_accepted(campaign.value(), limits);
  } else {
    fuzz::require(campaign.status().code() != Code::kOk && !campaign.status().message().empty(),
                  "a refused campaign says why");
    // The message travels in JSON error replies (the API) and must be UTF-8 whatever the input.
    fuzz::require(!invalid_utf8_at(campaign.status().message()), "a refusal is UTF-8", campaign.status().message());
  }
  auto spec = parse_run_spec(text, "spec.yaml");
  if (spec.is_ok()) {
    auto back = run_config_from_json(to_json(spec.value()), "fuzz");
    fuzz::require(back.is_ok() && back.value() == spec.value(), "a run spec survives its JSON");
  }
  return 0;
}

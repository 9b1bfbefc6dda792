// Dry runs of a campaign (common/campaign.hpp DryRunCaps): the caps, applied to its runs and adaptive plans, and
// parsed from a submission's query string.
#include <algorithm>
#include <charconv>
#include <string>

#include "common/campaign.hpp"

namespace jetsweep {

std::string DryRunCaps::to_string() const {
  std::string s;
  auto add = [&](int64_t v, const char* what) {
    if (v > 0) s += (s.empty() ? "" : ", ") + std::string("<= ") + std::to_string(v) + " " + what;
  };
  add(max_runs, "runs");
  add(max_epochs, "epochs");
  add(max_minibatches, "minibatches per epoch");
  return "dry run: " + s;
}

void apply_dry_run_caps(Campaign& campaign, const DryRunCaps& caps) {
  if (!caps.any()) return;
  auto& runs = campaign.runs;
  if (caps.max_runs > 0 && static_cast<int64_t>(runs.size()) > caps.max_runs) {
    std::vector<RunConfig> kept;
    const size_t n = runs.size(), k = static_cast<size_t>(caps.max_runs);
    for (size_t i = 0; i < k; ++i) kept.push_back(runs[k == 1 ? 0 : i * (n - 1) / (k - 1)]);
    runs = std::move(kept);
  }
  // An adaptive plan's runs are capped as runs are (epochs at least 2: its figures are epochs 1+), and its budget
  // by max_runs (at least the strategy's minimum).
  for (auto& p : campaign.adaptive_plans) {
    if (caps.max_runs > 0) p.budget = std::min(p.budget, std::max(caps.max_runs, kAdaptivePlanMinBudget));
    if (caps.max_epochs > 0) p.base.epochs = std::min(p.base.epochs, std::max<int64_t>(caps.max_epochs, 2));
    if (caps.max_minibatches > 0)
      p.base.max_minibatches =
          p.base.max_minibatches > 0 ? std::min(p.base.max_minibatches, caps.max_minibatches) : caps.max_minibatches;
  }
  for (auto& r : runs) {
    if (caps.max_epochs > 0) r.epochs = std::min(r.epochs, caps.max_epochs);
    if (caps.max_minibatches > 0)
      r.max_minibatches = r.max_minibatches > 0 ? std::min(r.max_minibatches, caps.max_minibatches) : caps.max_minibatches;
  }
  campaign.description += (campaign.description.empty() ? "" : " ") + std::string("[") + caps.to_string() + "]";
}

Result<DryRunCaps> parse_dry_run_caps(std::string_view query) {
  DryRunCaps caps;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key(item.substr(0, eq));
    const std::string value(eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1));
    int64_t* slot = key == "max_runs" ? &caps.max_runs : key == "max_epochs" ? &caps.max_epochs
                  : key == "max_minibatches" ? &caps.max_minibatches : nullptr;
    if (!slot) return invalid_argument("unknown parameter '" + key + "' (known: max_runs, max_epochs, max_minibatches)");
    int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 1 || v > kMaxRunsPerCampaign)
      return invalid_argument("parameter '" + key + "': expected a positive integer, got '" + value + "'");
    *slot = v;
  }
  return caps;
}

}  // namespace jetsweep

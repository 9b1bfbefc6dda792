// Comparison of two campaigns (GET /api/campaigns/A/compare/B, `jetsweep compare A B`, the dashboard's
// comparison page): the configurations of campaign A's report matched with those of campaign B's, per side the
// runs, mean epoch time, mean power and energy per epoch, and the deltas. Pure functions and value types; any
// thread.
//
// Matching. A run's configuration key is its report config (api::report_config: model, dataset, data,
// batch_size, workers, prefetch, epochs, threads, seed, power_mode, pin_clocks, fan_max, drop_caches, sample_hz,
// max_minibatches, accelerator, timing) WITHOUT these keys:
//   - "repetition": which copy of a combination a run is (repetitions of one configuration are pooled);
//   - "device": what the campaign asked for ("any", a class, "CLASS/*", an agent name) is replaced by
//     "board_class", the class of the board that ran it (its facts' device_class; the requested device while
//     the run has not been assigned), so that "any" runs are never pooled across board classes.
// Every other key must be equal (JSON-equal values) for two runs to match; nothing else is pooled.
//
// Figures per side (one configuration in one campaign; all its runs, whatever their status, pooled):
//   mean_epoch_s        mean end-to-end time of epochs 1 and later (epoch 0 is the warm-up: start-up costs,
//                       sec. 5.1 of the paper; it is excluded everywhere here); null when no such epoch exists.
//   mean_power_w        mean of those epochs' mean power; null unless every one of them has a power figure.
//   energy_per_epoch_j  mean energy of those epochs; null unless every one of them has an energy figure (no
//                       power sensor, or too little power coverage: never estimated).
//   simulated           some run of it ran on a simulated board (modelled times and power, not measurements).
// Deltas are B - A: "abs" in the figure's unit, "pct" = 100 (B - A) / A; each null when either side is null
// (or A is 0 for pct).
//
// JSON (CampaignComparison; field names fixed, nulls travel as null):
//   {"a": Side, "b": Side,                     Side = {"campaign": ReportCampaign (as in the report),
//                                                      "runs": n, "simulated_runs": n, "power_sensor": bool}
//    "warmup_epochs_excluded": 1,
//    "match_keys_excluded": ["repetition", "device"],  "match_keys_added": ["board_class"],
//    "configurations": [{"key": "<canonical JSON of config>", "label": "agx-orin lenet5/mnist bs16",
//                        "config": {...}, "a": Figures, "b": Figures,
//                        "delta": {"mean_epoch_s": Delta, "mean_power_w": Delta, "energy_per_epoch_j": Delta}}],
//    "only_a": [{"key", "label", "config", "figures": Figures}], "only_b": [...same...]}
//   Figures = {"runs": n, "run_ids": [..], "epochs": n (epochs 1+ pooled), "mean_epoch_s": x|null,
//              "mean_power_w": x|null, "energy_per_epoch_j": x|null, "simulated": bool}
//   Delta   = {"abs": x|null, "pct": x|null}
// Configurations are listed in the order they first appear in A's report (then B's for only_b).
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/data_fingerprint.hpp"
#include "common/api.hpp"
#include "common/status.hpp"

namespace jetsweep::api {

// One campaign of the two.
struct ComparedCampaign {
  ReportCampaign campaign;
  int64_t runs = 0;
  int64_t simulated_runs = 0;
  bool power_sensor = false;
};

// One configuration's figures in one campaign (see the header comment).
struct ConfigFigures {
  int64_t runs = 0;
  std::vector<int64_t> run_ids;
  int64_t epochs = 0;   // epochs 1+ pooled
  std::optional<double> mean_epoch_s;
  std::optional<double> mean_power_w;
  std::optional<double> energy_per_epoch_j;
  bool simulated = false;
};

// B - A.
struct FigureDelta {
  std::optional<double> abs;
  std::optional<double> pct;
};

struct ComparedConfig {
  std::string key;                 // canonical JSON of `config`
  std::string label;               // short, for tables: class, model/dataset and the keys that differ
  boost::json::object config;      // the matching configuration (report config - excluded + board_class)
  ConfigFigures a, b;
  FigureDelta mean_epoch_s, mean_power_w, energy_per_epoch_j;
};

// A configuration found in only one of the campaigns.
struct UnmatchedConfig {
  std::string key;
  std::string label;
  boost::json::object config;
  ConfigFigures figures;
};

struct CampaignComparison {
  ComparedCampaign a, b;
  int64_t warmup_epochs_excluded = 1;
  std::vector<ComparedConfig> configurations;
  std::vector<UnmatchedConfig> only_a, only_b;
  // A dataset whose runs (in either campaign) trained on different data, or not all with a recorded fingerprint
  // (common/data_fingerprint.hpp); empty when they agree. Absent from older controllers.
  std::vector<std::string> data_warnings;
};

// The run-config keys left out of the matching key, and the one added (see the header comment).
inline const char* const kCompareExcludedKeys[] = {"repetition", "device"};
inline constexpr const char* kCompareBoardClassKey = "board_class";

// The data each started run of `runs` recorded (its workload's dataset_fingerprint; "" for a run with epochs but no
// workload: an agent older than the field), its board named `board_prefix` + the agent's name.
std::vector<DataSeen> data_seen(const std::vector<ReportRun>& runs, const std::string& board_prefix = {});

// Matches the configurations of `a` and `b` and computes their figures and deltas.
CampaignComparison compare_campaigns(const CampaignReport& a, const CampaignReport& b);
// A run's matching configuration (see the header comment).
boost::json::object comparison_config(const ReportRun& run);
// B - A of two optional figures.
FigureDelta figure_delta(const std::optional<double>& a, const std::optional<double>& b);

boost::json::object to_json(const ComparedCampaign& v);
boost::json::object to_json(const ConfigFigures& v);
boost::json::object to_json(const FigureDelta& v);
boost::json::object to_json(const ComparedConfig& v);
boost::json::object to_json(const UnmatchedConfig& v);
boost::json::object to_json(const CampaignComparison& v);
Status from_json(const boost::json::value& v, const std::string& where, ComparedCampaign& out);
Status from_json(const boost::json::value& v, const std::string& where, ConfigFigures& out);
Status from_json(const boost::json::value& v, const std::string& where, FigureDelta& out);
Status from_json(const boost::json::value& v, const std::string& where, ComparedConfig& out);
Status from_json(const boost::json::value& v, const std::string& where, UnmatchedConfig& out);
Status from_json(const boost::json::value& v, const std::string& where, CampaignComparison& out);

// Request target: /api/campaigns/A/compare/B.
std::string campaign_compare_path(const std::string& a, const std::string& b);

}  // namespace jetsweep::api

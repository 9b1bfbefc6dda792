// Pieces shared by the report printers (print_*.cpp): selection lines, headings, simulated marks. Internal to
// analysis/; pure functions, any thread.
#pragma once

#include <boost/json.hpp>
#include <ostream>
#include <string>

#include "analysis/json_output.hpp"
#include "analysis/reports.hpp"

namespace jetsweep::analysis {

inline std::string sim_mark(bool simulated) { return simulated ? " (simulated)" : ""; }
// A plot title's marking: "(simulated)" when every drawn value is simulated, else a note when some are.
std::string plot_sim_mark(bool any, bool all);
// What --where selected and --pool-over pooled: text lines, and the JSON fields "where" and "pooled_over".
void print_selection(std::ostream& out, const ReportContext& c);
void selection_json(boost::json::object& o, const ReportContext& c);
// A mode's name in plots: its nvpmodel name when the run named one, else its settings ("8c/2265.6/1377/2133").
std::string mode_label(const ModeRecord& m);
// A workload's heading: "resnet on agx-orin bs16 w4 (simulated)".
std::string workload_heading(const WorkloadData& w, const ConfigLabels& labels);
// "device", "workload", "config", "config_label", "simulated", then the selection.
void workload_json(boost::json::object& o, const WorkloadData& w, const ReportContext& c);
// The prediction object of `predict --json` (also nested in `optimize --json`).
boost::json::object prediction_json(const PredictOutcome& p, const PredictRequest& req, const ConfigLabels& labels);

}  // namespace jetsweep::analysis

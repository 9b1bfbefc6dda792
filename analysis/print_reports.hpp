// Printers of the analyze reports (reports.hpp): text tables, one JSON object per command (boost::json), and
// gnuplot plots. Output formats are what scripts and the tests read: keep them stable. Pure functions; any thread.
#pragma once

#include <boost/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/reports.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

void print_text(std::ostream& out, const VariabilityCommandReport& r);
void print_text(std::ostream& out, const ParetoReport& r);
void print_text(std::ostream& out, const PredictReport& r);
void print_text(std::ostream& out, const OptimizeReport& r);
void print_text(std::ostream& out, const EpochsReport& r);
void print_text(std::ostream& out, const AdaptiveReport& r);

boost::json::object report_json(const VariabilityCommandReport& r);
boost::json::object report_json(const ParetoReport& r);
boost::json::object report_json(const PredictReport& r);
boost::json::object report_json(const OptimizeReport& r);
boost::json::object report_json(const EpochsReport& r);
boost::json::object report_json(const AdaptiveReport& r);

// One JSON value on one line.
void print_json(std::ostream& out, const boost::json::value& v);
// The report as JSON (--json) or as text.
template <class Report>
void print_report(std::ostream& out, const Report& r, bool json) {
  if (json) print_json(out, report_json(r));
  else print_text(out, r);
}

// Plots (PNG or SVG by the file's extension; gnuplot, see plots.hpp).
Status plot_variability(const std::string& file, const VariabilityCommandReport& r, bool energy);  // violins
Status plot_report(const std::string& file, const ParetoReport& r);
Status plot_report(const std::string& file, const OptimizeReport& r);  // candidates, front, the pick
Status plot_report(const std::string& file, const EpochsReport& r);    // stacked bars per epoch

// --predictions-out: the held-out modes with predicted and observed values as a corpus-like CSV.
Status write_predictions_csv(const std::string& path, const PredictOutcome& p);

}  // namespace jetsweep::analysis

// Plots drawn by gnuplot (Debian package gnuplot-nox): this writes the data files and a gnuplot
// script into a temporary directory and runs the gnuplot binary on it. Output type from the file
// extension: .png (pngcairo) or .svg. Functions are independent; any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::analysis {

// The gnuplot binary: $JETSWEEP_GNUPLOT, else "gnuplot" on PATH. kUnavailable when it is missing,
// naming the package to install.
Result<std::string> find_gnuplot();

struct ScatterPoint {
  double x = 0, y = 0;
};
// Every mode as a point and the Pareto front as a line through its points (ordered by x).
Status plot_pareto(const std::string& out, const std::string& title, const std::string& x_label,
                   const std::string& y_label, const std::vector<ScatterPoint>& all,
                   const std::vector<ScatterPoint>& front, const std::vector<ScatterPoint>& highlight = {});

struct EpochBar {
  std::string label;  // e.g. "r12 e1"
  double stall_s = 0, compute_s = 0, other_s = 0;
};
// Stacked stall / compute / other bars, one per epoch.
Status plot_epoch_breakdown(const std::string& out, const std::string& title, const std::vector<EpochBar>& bars);

// One violin (kernel density, drawn by gnuplot's `smooth kdensity`) per named group.
Status plot_violins(const std::string& out, const std::string& title, const std::string& y_label,
                    const std::vector<std::pair<std::string, std::vector<double>>>& groups);

}  // namespace jetsweep::analysis

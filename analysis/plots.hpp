// Plots drawn by gnuplot (Debian package gnuplot-nox): this writes the data files and a gnuplot
// script into a temporary directory and runs the gnuplot binary on it. Output type from the file
// extension: .png (pngcairo) or .svg. With $JETSWEEP_PLOT_KEEP=DIR the script (DIR/plot.gp) and its data files
// are written to DIR and kept (to edit and re-run: gnuplot DIR/plot.gp). Functions are independent; any thread.
#pragma once

#include <optional>
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
  std::string label;   // drawn next to the point when not empty (a mode's name)
};
// A budget drawn as a dashed line across the plot: horizontal at y = value (a power budget on the power axis) or
// vertical at x = value (a time budget on the time axis); `label` is its key entry.
struct BudgetLine {
  bool vertical = false;
  double value = 0;
  std::string label;
};
struct ParetoPlot {
  std::string title, x_label, y_label;
  std::vector<ScatterPoint> all;        // every mode, as points (their labels are not drawn: too many)
  std::vector<ScatterPoint> front;      // the Pareto front as a line through its points (ordered by x), labelled
  std::vector<ScatterPoint> highlight;  // e.g. the chosen mode, labelled
  std::optional<BudgetLine> budget;
};
Status plot_pareto(const std::string& out, const ParetoPlot& plot);

struct EpochBar {
  std::string label;    // e.g. "r12 e1"
  double stall_s = 0, compute_s = 0, other_s = 0;
  bool warmup = false;  // epoch 0: drawn hatched, with its own key entries
};
// Stacked stall / compute / other bars, one per epoch; warm-up epochs hatched.
Status plot_epoch_breakdown(const std::string& out, const std::string& title, const std::vector<EpochBar>& bars);

// One panel of violins (kernel density, drawn by gnuplot's `smooth kdensity`), one violin per named group; each
// panel has its own y axis (one panel per board class, so a Nano's violins are not flattened by an Orin's).
struct ViolinPanel {
  std::string title;
  std::vector<std::pair<std::string, std::vector<double>>> groups;
};
Status plot_violins(const std::string& out, const std::string& title, const std::string& y_label,
                    const std::vector<ViolinPanel>& panels);

}  // namespace jetsweep::analysis

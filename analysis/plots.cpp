#include "analysis/plots.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace jetsweep::analysis {

namespace {

namespace fs = std::filesystem;

std::string gp_quote(const std::string& s) {  // gnuplot double-quoted string
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string gp_path(const std::string& s) {  // single-quoted: '' is a literal quote
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("''") : std::string(1, c);
  return q + "'";
}

Result<std::string> terminal_for(const std::string& out) {
  const std::string ext = fs::path(out).extension().string();
  if (ext == ".png") return std::string("set terminal pngcairo size 1000,650 enhanced font 'Sans,10'");
  if (ext == ".svg") return std::string("set terminal svg size 1000,650 enhanced font 'Sans,10' background rgb 'white'");
  return invalid_argument("--plot: '" + out + "' must end in .png or .svg");
}

// Temporary directory removed on destruction; $JETSWEEP_PLOT_KEEP names a directory used and kept instead.
class TempDir {
 public:
  TempDir() {
    if (const char* keep = std::getenv("JETSWEEP_PLOT_KEEP"); keep && *keep) {
      std::error_code ec;
      fs::create_directories(keep, ec);
      if (!ec || fs::is_directory(keep, ec)) path_ = fs::absolute(keep, ec).string();
      keep_ = true;
      return;
    }
    std::string tmpl = (fs::temp_directory_path() / "jetsweep-plot-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data())) path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty() && !keep_) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool keep_ = false;
};

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

// Writes `script` to dir/plot.gp and runs gnuplot on it; gnuplot's stderr becomes the error message.
Status run_gnuplot(const TempDir& dir, const std::string& script, const std::string& out) {
  JS_ASSIGN_OR_RETURN(std::string gnuplot, find_gnuplot());
  const std::string gp = dir.path() + "/plot.gp";
  {
    std::ofstream f(gp);
    f << script;
    if (!f) return io_error(gp + ": cannot write the gnuplot script");
  }
  const std::string err = dir.path() + "/stderr.txt";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv = {const_cast<char*>(gnuplot.c_str()), const_cast<char*>(gp.c_str()), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, gnuplot.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return unavailable("cannot run " + gnuplot + ": " + std::strerror(rc) + " (install the gnuplot-nox package)");
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream ef(err);
  std::stringstream es;
  es << ef.rdbuf();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return internal_error("gnuplot failed on " + out + ": " + es.str());
  std::error_code ec;
  if (!fs::exists(out, ec) || fs::file_size(out, ec) == 0) return io_error(out + ": gnuplot wrote no output: " + es.str());
  return Status::ok();
}

}  // namespace

Result<std::string> find_gnuplot() {
  if (const char* env = std::getenv("JETSWEEP_GNUPLOT"); env && *env) {
    if (access(env, X_OK) == 0) return std::string(env);
    return unavailable(std::string("JETSWEEP_GNUPLOT=") + env + " is not an executable");
  }
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    const std::string p = (dir.empty() ? "." : dir) + "/gnuplot";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return unavailable("gnuplot not found on PATH: install the Debian package gnuplot-nox (apt-get install gnuplot-nox)");
}

namespace {

// The labels worth drawing: the highlighted points', then the front's, each only where it does not crowd one
// already taken (closer than 4% of the plot in both directions).
std::vector<ScatterPoint> readable_labels(const ParetoPlot& p) {
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  bool first = true;
  for (const auto* set : {&p.all, &p.front, &p.highlight})
    for (const auto& pt : *set) {
      x0 = first ? pt.x : std::min(x0, pt.x);
      x1 = first ? pt.x : std::max(x1, pt.x);
      y0 = first ? pt.y : std::min(y0, pt.y);
      y1 = first ? pt.y : std::max(y1, pt.y);
      first = false;
    }
  const double dx = x1 > x0 ? x1 - x0 : 1, dy = y1 > y0 ? y1 - y0 : 1;
  std::vector<ScatterPoint> kept;
  for (const auto* set : {&p.highlight, &p.front})
    for (const auto& pt : *set) {
      if (pt.label.empty()) continue;
      const bool crowded = std::any_of(kept.begin(), kept.end(), [&](const ScatterPoint& k) {
        return std::fabs(k.x - pt.x) / dx < 0.04 && std::fabs(k.y - pt.y) / dy < 0.04;
      });
      if (!crowded) kept.push_back(pt);
    }
  return kept;
}

}  // namespace

Status plot_pareto(const std::string& out, const ParetoPlot& p) {
  JS_ASSIGN_OR_RETURN(std::string term, terminal_for(out));
  TempDir dir;
  if (dir.path().empty()) return io_error("cannot create a temporary directory for gnuplot");
  auto file = [&](const std::string& name) { return dir.path() + "/" + name; };
  auto write = [&](const std::string& name, const std::vector<ScatterPoint>& pts, bool labels) {
    std::ofstream f(file(name));
    for (const auto& pt : pts)
      if (!labels || !pt.label.empty()) f << num(pt.x) << ' ' << num(pt.y) << (labels ? " " + gp_quote(pt.label) : "") << '\n';
  };
  write("all.dat", p.all, false);
  write("front.dat", p.front, false);
  write("pick.dat", p.highlight, false);
  const std::vector<ScatterPoint> labelled = readable_labels(p);
  write("labels.dat", labelled, true);
  const bool any_label = std::any_of(labelled.begin(), labelled.end(), [](const auto& pt) { return !pt.label.empty(); });
  if (p.budget) {   // two points spanning the data on the other axis, so that autoscaling takes the line in
    double lo = 0, hi = 1;
    bool first = true;
    for (const auto& pt : p.all) {
      const double v = p.budget->vertical ? pt.y : pt.x;
      lo = first ? v : std::min(lo, v);
      hi = first ? v : std::max(hi, v);
      first = false;
    }
    std::ofstream f(file("budget.dat"));
    for (double v : {lo, hi})
      f << (p.budget->vertical ? num(p.budget->value) + " " + num(v) : num(v) + " " + num(p.budget->value)) << '\n';
  }
  std::ostringstream s;
  s << term << "\nset output " << gp_path(out) << "\nset title " << gp_quote(p.title) << " noenhanced\nset xlabel "
    << gp_quote(p.x_label) << " noenhanced\nset ylabel " << gp_quote(p.y_label) << " noenhanced\nset grid\nset key top right\n"
    << "set offsets graph 0.02, graph 0.12, graph 0.04, graph 0.04\n"   // room for the labels at the edges
    << "plot " << gp_path(file("all.dat")) << " using 1:2 with points pt 7 ps 0.4 lc rgb '#8da0cb' title "
    << gp_quote("modes (" + std::to_string(p.all.size()) + ")") << ", \\\n     " << gp_path(file("front.dat"))
    << " using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#e6a100' title "
    << gp_quote("Pareto front (" + std::to_string(p.front.size()) + ")");
  if (!p.highlight.empty())
    s << ", \\\n     " << gp_path(file("pick.dat")) << " using 1:2 with points pt 9 ps 2 lc rgb '#d62728' title 'chosen'";
  if (p.budget)
    s << ", \\\n     " << gp_path(file("budget.dat")) << " using 1:2 with lines dt 2 lw 2 lc rgb '#d62728' title "
      << gp_quote(p.budget->label) << " noenhanced";
  if (any_label)
    s << ", \\\n     " << gp_path(file("labels.dat"))
      << " using 1:2:3 with labels left offset char 0.6,0.4 font ',8' tc rgb '#444444' noenhanced notitle";
  s << "\nunset output\n";
  return run_gnuplot(dir, s.str(), out);
}

Status plot_epoch_breakdown(const std::string& out, const std::string& title, const std::vector<EpochBar>& bars) {
  JS_ASSIGN_OR_RETURN(std::string term, terminal_for(out));
  if (bars.empty()) return invalid_argument("--plot: no epochs to draw");
  TempDir dir;
  if (dir.path().empty()) return io_error("cannot create a temporary directory for gnuplot");
  // Columns 2-4: stall, compute, other of ordinary epochs; 5-7: of warm-up epochs (each 0 in the other kind's row),
  // so that warm-up bars get their own (hatched) style and key entries.
  bool any_warmup = false;
  {
    std::ofstream f(dir.path() + "/bars.dat");
    f << "# label stall compute other warmup_stall warmup_compute warmup_other\n";
    for (const auto& b : bars) {
      any_warmup = any_warmup || b.warmup;
      const std::string values = num(b.stall_s) + ' ' + num(b.compute_s) + ' ' + num(b.other_s);
      f << gp_quote(b.label) << ' ' << (b.warmup ? "0 0 0 " + values : values + " 0 0 0") << '\n';
    }
  }
  const std::string data = gp_path(dir.path() + "/bars.dat");
  std::ostringstream s;
  s << term << "\nset output " << gp_path(out) << "\nset title " << gp_quote(title) << " noenhanced\n"
    << "set ylabel 'time per epoch (s)'\nset style data histograms\nset style histogram rowstacked\n"
    << "set style fill solid 0.85 border -1\nset boxwidth 0.75\nset grid ytics\nset key outside right top\n"
    << "set xtics rotate by -45 noenhanced\nset yrange [0:*]\n"
    << "plot " << data << " using 2:xtic(1) title 'stall' lc rgb '#fc8d62', '' using 3 title 'compute' lc rgb '#66c2a5', "
    << "'' using 4 title 'other' lc rgb '#8da0cb'";
  if (any_warmup)
    s << ", \\\n     '' using 5 title 'stall, epoch 0 (warm-up)' lc rgb '#fc8d62' fill pattern 4 border -1, "
      << "'' using 6 title 'compute, epoch 0 (warm-up)' lc rgb '#66c2a5' fill pattern 4 border -1, "
      << "'' using 7 title 'other, epoch 0 (warm-up)' lc rgb '#8da0cb' fill pattern 4 border -1";
  s << "\nunset output\n";
  return run_gnuplot(dir, s.str(), out);
}

namespace {

// Silverman's rule, with a floor so identical (or nearly identical) values still draw.
double bandwidth(const std::vector<double>& values) {
  double m = 0;
  for (double v : values) m += v;
  m /= static_cast<double>(std::max<size_t>(1, values.size()));
  double sd = 0;
  for (double v : values) sd += (v - m) * (v - m);
  sd = values.size() > 1 ? std::sqrt(sd / static_cast<double>(values.size() - 1)) : 0;
  double bw = 1.06 * sd * std::pow(static_cast<double>(std::max<size_t>(1, values.size())), -0.2);
  // Identical values, or values equal to within rounding (sd ~1e-15: the range +- 3 bandwidths would print as one
  // number, and gnuplot refuses an empty x range), get a bandwidth of 0.2 % of their mean.
  if (!(bw > std::fabs(m) * 1e-6)) bw = std::max(1e-9, std::fabs(m) * 0.002);
  return bw;
}

// One panel's plot command: mirrored filled density curves around x = 1, 2, ... and the values as points.
// Group g of the panel is file number `first + g` (gN.dat the values, kN.dat its density table, KN_max its peak).
std::string violin_panel(const TempDir& dir, const ViolinPanel& panel, size_t first) {
  std::ostringstream s, xt;
  // The panel's own y range: its values and their densities' tails (gnuplot's autoscaling takes in the fill's
  // baseline).
  double lo = 0, hi = 0;
  for (size_t g = 0; g < panel.groups.size(); ++g) {
    const auto& values = panel.groups[g].second;
    const double bw = bandwidth(values);
    const auto [min, max] = std::minmax_element(values.begin(), values.end());
    lo = g ? std::min(lo, *min - 3 * bw) : *min - 3 * bw;
    hi = g ? std::max(hi, *max + 3 * bw) : *max + 3 * bw;
    xt << (g ? ", " : "") << gp_quote(panel.groups[g].first) << ' ' << (g + 1);
  }
  s << "set title " << gp_quote(panel.title) << " noenhanced\nset xtics (" << xt.str()
    << ") rotate by -30 noenhanced\nset xrange [0.4:" << panel.groups.size() + 0.6 << "]\nset yrange [" << num(lo)
    << ":" << num(hi) << "]\nplot ";
  for (size_t g = 0; g < panel.groups.size(); ++g) {
    const std::string n = std::to_string(first + g);
    const std::string k = gp_path(dir.path() + "/k" + n + ".dat");
    const std::string x = std::to_string(g + 1);
    const std::string scale = "(0.4/K" + n + "_max)";
    s << (g ? ", \\\n     " : "") << k << " using (" << x << "+$2*" << scale << "):1 with filledcurves x=" << x
      << " lc " << (g + 1) << ", " << k << " using (" << x << "-$2*" << scale << "):1 with filledcurves x=" << x
      << " lc " << (g + 1) << ", " << gp_path(dir.path() + "/g" + n + ".dat") << " using (" << x
      << "):1 with points pt 1 ps 0.5 lc rgb '#333333'";
  }
  return s.str() + "\n";
}

}  // namespace

Status plot_violins(const std::string& out, const std::string& title, const std::string& y_label,
                    const std::vector<ViolinPanel>& panels) {
  JS_ASSIGN_OR_RETURN(std::string term, terminal_for(out));
  size_t groups = 0;
  for (const auto& p : panels)
    for (const auto& [name, values] : p.groups) {
      if (values.empty()) return invalid_argument("--plot: violin '" + name + "' has no values");
      ++groups;
    }
  if (groups == 0) return invalid_argument("--plot: no data to draw");
  TempDir dir;
  if (dir.path().empty()) return io_error("cannot create a temporary directory for gnuplot");
  std::ostringstream s;
  s << term << "\nset output " << gp_path(out) << "\n";
  // Densities first (gnuplot's kdensity into tables, their peaks by stats), then the panels.
  size_t n = 0;
  for (const auto& panel : panels)
    for (const auto& [name, values] : panel.groups) {
      const std::string d = dir.path() + "/g" + std::to_string(n) + ".dat";
      const std::string k = gp_path(dir.path() + "/k" + std::to_string(n) + ".dat");
      std::ofstream f(d);
      for (double v : values) f << num(v) << '\n';
      // The density sampled over the values +- 3 bandwidths (autoscaling would stretch it to round tic values).
      const double bw = bandwidth(values);
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      s << "set xrange [" << num(*lo - 3 * bw) << ":" << num(*hi + 3 * bw) << "]\nset table " << k << "\nplot "
        << gp_path(d) << " using 1:(1) smooth kdensity bandwidth " << num(bw) << "\nunset table\nstats " << k
        << " using 2 name 'K" << n << "' nooutput\n";
      ++n;
    }
  size_t drawn = 0;
  for (const auto& p : panels) drawn += p.groups.empty() ? 0 : 1;
  const size_t cols = drawn <= 3 ? drawn : (drawn + 1) / 2, rows = (drawn + cols - 1) / cols;
  s << "set ylabel " << gp_quote(y_label) << " noenhanced\nset grid ytics\nunset key\n"
    << "set style fill transparent solid 0.5 border lc rgb '#333333'\n"
    << "set multiplot layout " << rows << "," << cols << " title " << gp_quote(title) << " noenhanced\n";
  n = 0;
  for (const auto& panel : panels) {
    if (!panel.groups.empty()) s << violin_panel(dir, panel, n);
    n += panel.groups.size();
  }
  s << "unset multiplot\nunset output\n";
  return run_gnuplot(dir, s.str(), out);
}

}  // namespace jetsweep::analysis

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

// Temporary directory removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "jetsweep-plot-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data())) path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
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

Status plot_pareto(const std::string& out, const std::string& title, const std::string& x_label,
                   const std::string& y_label, const std::vector<ScatterPoint>& all,
                   const std::vector<ScatterPoint>& front, const std::vector<ScatterPoint>& highlight) {
  JS_ASSIGN_OR_RETURN(std::string term, terminal_for(out));
  TempDir dir;
  if (dir.path().empty()) return io_error("cannot create a temporary directory for gnuplot");
  auto write = [&](const std::string& name, const std::vector<ScatterPoint>& pts) {
    std::ofstream f(dir.path() + "/" + name);
    for (const auto& p : pts) f << num(p.x) << ' ' << num(p.y) << '\n';
  };
  write("all.dat", all);
  write("front.dat", front);
  write("pick.dat", highlight);
  std::ostringstream s;
  s << term << "\nset output " << gp_path(out) << "\nset title " << gp_quote(title) << " noenhanced\nset xlabel "
    << gp_quote(x_label) << " noenhanced\nset ylabel " << gp_quote(y_label) << " noenhanced\nset grid\nset key top right\n"
    << "plot " << gp_path(dir.path() + "/all.dat") << " using 1:2 with points pt 7 ps 0.4 lc rgb '#8da0cb' title "
    << gp_quote("modes (" + std::to_string(all.size()) + ")") << ", \\\n     " << gp_path(dir.path() + "/front.dat")
    << " using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#e6a100' title "
    << gp_quote("Pareto front (" + std::to_string(front.size()) + ")");
  if (!highlight.empty())
    s << ", \\\n     " << gp_path(dir.path() + "/pick.dat") << " using 1:2 with points pt 9 ps 2 lc rgb '#d62728' title 'chosen'";
  s << "\nunset output\n";
  return run_gnuplot(dir, s.str(), out);
}

Status plot_epoch_breakdown(const std::string& out, const std::string& title, const std::vector<EpochBar>& bars) {
  JS_ASSIGN_OR_RETURN(std::string term, terminal_for(out));
  if (bars.empty()) return invalid_argument("--plot: no epochs to draw");
  TempDir dir;
  if (dir.path().empty()) return io_error("cannot create a temporary directory for gnuplot");
  {
    std::ofstream f(dir.path() + "/bars.dat");
    for (const auto& b : bars)
      f << gp_quote(b.label) << ' ' << num(b.stall_s) << ' ' << num(b.compute_s) << ' ' << num(b.other_s) << '\n';
  }
  const std::string data = gp_path(dir.path() + "/bars.dat");
  std::ostringstream s;
  s << term << "\nset output " << gp_path(out) << "\nset title " << gp_quote(title) << " noenhanced\n"
    << "set ylabel 'time per epoch (s)'\nset style data histograms\nset style histogram rowstacked\n"
    << "set style fill solid 0.85 border -1\nset boxwidth 0.75\nset grid ytics\nset key outside right top\n"
    << "set xtics rotate by -45 noenhanced\nset yrange [0:*]\n"
    << "plot " << data << " using 2:xtic(1) title 'stall' lc rgb '#fc8d62', '' using 3 title 'compute' lc rgb '#66c2a5', "
    << "'' using 4 title 'other' lc rgb '#8da0cb'\nunset output\n";
  return run_gnuplot(dir, s.str(), out);
}

Status plot_violins(const std::string& out, const std::string& title, const std::string& y_label,
                    const std::vector<std::pair<std::string, std::vector<double>>>& groups) {
  JS_ASSIGN_OR_RETURN(std::string term, terminal_for(out));
  if (groups.empty()) return invalid_argument("--plot: no data to draw");
  TempDir dir;
  if (dir.path().empty()) return io_error("cannot create a temporary directory for gnuplot");
  std::ostringstream s;
  s << term << "\nset output " << gp_path(out) << "\nset title " << gp_quote(title) << " noenhanced\nset ylabel "
    << gp_quote(y_label) << " noenhanced\nset grid ytics\nunset key\nset style fill transparent solid 0.5 border lc rgb '#333333'\n";
  // Densities via gnuplot's kdensity into tables, then mirrored filled curves around x = i.
  std::ostringstream xt;
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& [name, values] = groups[i];
    const std::string d = dir.path() + "/g" + std::to_string(i) + ".dat";
    std::ofstream f(d);
    for (double v : values) f << num(v) << '\n';
    f.close();
    // Silverman's rule, with a floor so identical values still draw.
    double m = 0;
    for (double v : values) m += v;
    m /= std::max<size_t>(1, values.size());
    double sd = 0;
    for (double v : values) sd += (v - m) * (v - m);
    sd = values.size() > 1 ? std::sqrt(sd / (values.size() - 1)) : 0;
    double bw = 1.06 * sd * std::pow(std::max<size_t>(1, values.size()), -0.2);
    if (!(bw > 0)) bw = std::max(1e-9, std::fabs(m) * 0.002);
    s << "set table " << gp_path(dir.path() + "/k" + std::to_string(i) + ".dat") << "\nplot " << gp_path(d)
      << " using 1:(1) smooth kdensity bandwidth " << num(bw) << "\nunset table\n";
    s << "stats " << gp_path(dir.path() + "/k" + std::to_string(i) + ".dat") << " using 2 name 'K" << i << "' nooutput\n";
    xt << (i ? ", " : "") << gp_quote(name) << ' ' << (i + 1);
  }
  s << "set xtics (" << xt.str() << ") rotate by -30 noenhanced\nset xrange [0.4:" << groups.size() + 0.6 << "]\nplot ";
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string k = gp_path(dir.path() + "/k" + std::to_string(i) + ".dat");
    const std::string x = std::to_string(i + 1);
    const std::string scale = "(0.4/K" + std::to_string(i) + "_max)";
    s << (i ? ", \\\n     " : "") << k << " using (" << x << "+$2*" << scale << "):1 with filledcurves x=" << x
      << " lc " << (i + 1) << ", " << k << " using (" << x << "-$2*" << scale << "):1 with filledcurves x=" << x
      << " lc " << (i + 1) << ", " << gp_path(dir.path() + "/g" + std::to_string(i) + ".dat") << " using (" << x
      << "):1 with points pt 1 ps 0.5 lc rgb '#333333'";
  }
  s << "\nunset output\n";
  return run_gnuplot(dir, s.str(), out);
}

}  // namespace jetsweep::analysis

// The plots as gnuplot draws them (real gnuplot; $JETSWEEP_PLOT_KEEP keeps the script and data to read back):
// one violin panel per board class, epoch 0 hatched as warm-up with its own key entries, Pareto points named by
// their mode, the optimiser's budget line on the Pareto plot's axes, and "(simulated)" in titles.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/csv_corpus.hpp"
#include "analysis/plots.hpp"
#include "analysis_fixture.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep::analysis;
using namespace jetsweep::testing;
namespace fs = std::filesystem;

namespace {

// A scratch directory with JETSWEEP_PLOT_KEEP pointing into it while it lives.
class PlotDir {
 public:
  PlotDir() : dir_(fs::temp_directory_path() / ("jetsweep-plots-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("JETSWEEP_PLOT_KEEP", (dir_ / "keep").string().c_str(), 1);
  }
  ~PlotDir() {
    ::unsetenv("JETSWEEP_PLOT_KEEP");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  std::string script() const { return read_file(dir_ / "keep" / "plot.gp"); }
  std::string data(const std::string& name) const { return read_file(dir_ / "keep" / name); }
  // The output file, which must exist and not be empty.
  std::string output(const std::string& name) const {
    const fs::path p = dir_ / name;
    REQUIRE(fs::exists(p));
    CHECK(fs::file_size(p) > 0);
    return read_file(p);
  }

 private:
  fs::path dir_;
};

// A CSV corpus with epoch rows of two board classes (epoch 0 slower: a warm-up), simulated.
void write_two_class_corpus(const std::string& path) {
  std::ofstream f(path);
  f << "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,instance,epoch,epoch_s,simulated\n";
  for (const char* cls : {"nano", "agx-orin"})
    for (int inst = 1; inst <= 2; ++inst)
      for (int e = 0; e < 5; ++e) {
        const double base = std::string(cls) == "nano" ? 400.0 : 20.0;   // a Nano takes 20 times an Orin
        const double ms = base * (1.0 + 0.01 * inst + 0.003 * e) * (e == 0 ? 1.5 : 1.0);
        f << cls << ",lenet,4,1400,900,1600," << ms << ",10000," << cls << "-" << inst << "," << e << "," << ms / 10
          << ",true\n";
      }
}

}  // namespace

TEST_CASE("plots: variability has one panel per board class, each on its own axis; (simulated) in the title") {
  PlotDir dir;
  const std::string corpus = dir.file("two.csv");
  write_two_class_corpus(corpus);
  const std::string svg = dir.file("violins.svg");
  auto r = analyze({"variability", "--csv", corpus, "--plot", svg});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const std::string gp = dir.script();
  CHECK(gp.find("set multiplot layout 1,2") != std::string::npos);
  CHECK(gp.find("set title \"nano\"") != std::string::npos);
  CHECK(gp.find("set title \"agx-orin\"") != std::string::npos);
  CHECK(gp.find("(simulated)") != std::string::npos);
  const std::string out = dir.output("violins.svg");
  CHECK(out.find("<svg") != std::string::npos);
  CHECK(out.find("nano-2") != std::string::npos);      // the instances name the violins
  CHECK(out.find("agx-orin-1") != std::string::npos);
  CHECK(out.find("(simulated)") != std::string::npos);
}

TEST_CASE("plots: epoch 0 is hatched as warm-up with its own key entries") {
  PlotDir dir;
  const std::string corpus = dir.file("two.csv");
  write_two_class_corpus(corpus);
  auto r = analyze({"epochs", "--csv", corpus, "--workload", "lenet", "--device", "nano", "--instance", "nano-1",
                    "--plot", dir.file("bars.svg")});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const std::string gp = dir.script();
  CHECK(gp.find("fill pattern 4") != std::string::npos);
  CHECK(gp.find("'stall, epoch 0 (warm-up)'") != std::string::npos);
  const std::string bars = dir.data("bars.dat");
  CHECK(bars.find("e0 warm-up\" 0 0 0 ") != std::string::npos);   // epoch 0's figures in the warm-up columns
  CHECK(bars.find("e1\" ") != std::string::npos);
  const std::string out = dir.output("bars.svg");
  CHECK(out.find("epoch 0 (warm-up)") != std::string::npos);
  CHECK(out.find("(simulated)") != std::string::npos);
  // A PNG as well.
  REQUIRE(analyze({"epochs", "--csv", corpus, "--workload", "lenet", "--plot", dir.file("bars.png")}).rc == 0);
  CHECK(dir.output("bars.png").rfind("\x89PNG", 0) == 0);
}

TEST_CASE("plots: Pareto points carry their mode's name; the optimiser draws its budget on the same axes") {
  PlotDir dir;
  const std::string corpus = dir.file("orin.csv");
  {
    std::ofstream f(corpus);
    write_corpus_csv(f, synthetic_corpus("agx-orin", {"resnet"}, {.noise_pct = 2, .max_modes = 60}));
  }
  REQUIRE(analyze({"pareto", "--csv", corpus, "--workload", "resnet", "--plot", dir.file("front.svg")}).rc == 0);
  const std::string pareto_gp = dir.script();
  CHECK(pareto_gp.find("with labels") != std::string::npos);
  CHECK(pareto_gp.find("set xlabel \"time_ms\"") != std::string::npos);
  CHECK(pareto_gp.find("set ylabel \"power_w\"") != std::string::npos);
  const std::string labels = dir.data("labels.dat");
  REQUIRE(!labels.empty());
  const std::string first_label = labels.substr(labels.find('"') + 1, labels.find('"', labels.find('"') + 1) - labels.find('"') - 1);
  CHECK(first_label.find("c/") != std::string::npos);   // "8c/2265.6/1377/2133"
  CHECK(dir.output("front.svg").find(first_label) != std::string::npos);

  REQUIRE(analyze({"optimize", "--csv", corpus, "--workload", "resnet", "--power-budget-w", "30", "--plot",
                   dir.file("opt.svg")})
              .rc == 0);
  const std::string opt_gp = dir.script();
  CHECK(opt_gp.find("set xlabel \"time_ms\"") != std::string::npos);   // as the Pareto plot: time across, power up
  CHECK(opt_gp.find("set ylabel \"power_w\"") != std::string::npos);
  CHECK(opt_gp.find("\"power budget 30.00 W\"") != std::string::npos);
  const std::string budget = dir.data("budget.dat");
  std::istringstream in(budget);
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  in >> x1 >> y1 >> x2 >> y2;
  CHECK(y1 == 30.0);   // horizontal, at 30 W on the power axis
  CHECK(y2 == 30.0);
  CHECK(x1 < x2);
  const std::string out = dir.output("opt.svg");
  CHECK(out.find("power budget 30.00 W") != std::string::npos);
  CHECK(out.find("chosen: ") != std::string::npos);

  REQUIRE(analyze({"optimize", "--csv", corpus, "--workload", "resnet", "--time-budget", "200", "--plot",
                   dir.file("opt-time.svg")})
              .rc == 0);
  std::istringstream tin(dir.data("budget.dat"));
  tin >> x1 >> y1 >> x2 >> y2;
  CHECK(x1 == 200.0);   // vertical, at 200 ms on the time axis
  CHECK(x2 == 200.0);
  CHECK(dir.output("opt-time.svg").find("time budget 200.00 ms") != std::string::npos);
}

TEST_CASE("plots: the drawing functions refuse empty input and bad extensions") {
  PlotDir dir;
  CHECK(plot_violins(dir.file("v.svg"), "t", "y", {ViolinPanel{"nano", {}}}).code() == jetsweep::Code::kInvalidArgument);
  CHECK(plot_epoch_breakdown(dir.file("b.svg"), "t", {}).code() == jetsweep::Code::kInvalidArgument);
  CHECK(plot_pareto(dir.file("p.gif"), ParetoPlot{}).code() == jetsweep::Code::kInvalidArgument);
  // Four classes: two rows of two panels.
  std::vector<ViolinPanel> panels;
  for (const char* cls : {"nano", "xavier-nx", "agx-xavier", "agx-orin"}) panels.push_back({cls, {{"i1", {1.0, 1.1, 1.2}}}});
  REQUIRE(plot_violins(dir.file("four.png"), "four (simulated)", "time (s)", panels).is_ok());
  CHECK(dir.script().find("set multiplot layout 2,2") != std::string::npos);
  CHECK(dir.output("four.png").size() > 1000);
}

// Found by analysis_db_tests: a group whose values differ only by rounding (standard deviation ~1e-15) gave a
// bandwidth so small that the density's x range printed as one number, and gnuplot refused it.
TEST_CASE("plots: a violin of values equal to within rounding still draws") {
  const PlotDir dir;
  const double v = 63.51036215;
  const std::vector<ViolinPanel> panels = {
      ViolinPanel{"orin", {{"same", {v, v + 1e-14, v - 1e-14, v}}, {"identical", {2.5, 2.5, 2.5}}, {"one", {7.0}}}}};
  const jetsweep::Status s = plot_violins(dir.file("flat.svg"), "flat", "time (s)", panels);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  CHECK(dir.output("flat.svg").find("<svg") != std::string::npos);
}

// The analyze/export entry points: exit codes, flag and CSV error messages, JSON fields, plots made by
// gnuplot, and the CSV export round trip.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/analyze_cli.hpp"
#include "analysis/csv_corpus.hpp"
#include "analysis/synthetic_corpus.hpp"
#include "analysis_fixture.hpp"

using namespace jetsweep::analysis;
using namespace jetsweep::testing;
namespace fs = std::filesystem;

namespace {

// A small synthetic corpus on disk, removed afterwards.
class CorpusFile {
 public:
  explicit CorpusFile(size_t modes = 300) : dir_(fs::temp_directory_path() / ("jetsweep-cli-" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
    path_ = (dir_ / "corpus.csv").string();
    std::ofstream f(path_);
    write_corpus_csv(f, synthetic_corpus("agx-orin", {}, {.noise_pct = 2, .max_modes = modes}));
  }
  ~CorpusFile() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
  std::string path_;
};

bool starts_with_bytes(const std::string& path, const std::string& magic) {
  std::ifstream f(path, std::ios::binary);
  std::string head(magic.size(), '\0');
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  return head == magic;
}

}  // namespace

TEST_CASE("cli: usage and flag errors exit 2 naming the flag") {
  CHECK(analyze({}).rc == 2);
  CHECK(analyze({"--help"}).rc == 0);
  auto unknown = analyze({"frobnicate"});
  CHECK(unknown.rc == 2);
  CHECK(unknown.err.find("unknown command 'frobnicate'") != std::string::npos);
  auto bad_flag = analyze({"pareto", "--csv", "x.csv", "--colour", "red"});
  CHECK(bad_flag.rc == 2);
  CHECK(bad_flag.err.find("unknown flag '--colour'") != std::string::npos);
  auto missing_value = analyze({"pareto", "--workload"});
  CHECK(missing_value.rc == 2);
  CHECK(missing_value.err.find("--workload: missing value") != std::string::npos);
  auto no_source = analyze({"pareto", "--workload", "resnet"});
  CHECK(no_source.rc == 2);
  CHECK(no_source.err.find("--csv FILE or --db DSN") != std::string::npos);
  CorpusFile corpus(50);
  auto bad_axis = analyze({"pareto", "--csv", corpus.path(), "--workload", "resnet", "--x", "speed"});
  CHECK(bad_axis.rc == 2);
  CHECK(bad_axis.err.find("--x: expected time or energy") != std::string::npos);
  auto bad_k = analyze({"predict", "--csv", corpus.path(), "--method", "nn", "--target", "resnet", "--train-modes", "many"});
  CHECK(bad_k.rc == 2);
  CHECK(bad_k.err.find("--train-modes: expected an integer, got 'many'") != std::string::npos);
  auto bad_method = analyze({"predict", "--csv", corpus.path(), "--method", "svm", "--target", "resnet"});
  CHECK(bad_method.rc == 2);
  CHECK(bad_method.err.find("--method: unknown method 'svm'") != std::string::npos);
  auto unknown_workload = analyze({"pareto", "--csv", corpus.path(), "--workload", "vgg"});
  CHECK(unknown_workload.rc == 2);
  CHECK(unknown_workload.err.find("--workload: workload 'vgg' not found") != std::string::npos);
}

TEST_CASE("cli: CSV errors exit 2 with file:line and column") {
  CorpusFile corpus(10);
  const std::string bad = corpus.file("bad.csv");
  {
    std::ofstream f(bad);
    f << "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw\n"
      << "orin,resnet,12,2201.6,1300.5,3199,150,30000\n"
      << "orin,resnet,12,2201.6,1300.5,3199,abc,30000\n";
  }
  auto r = analyze({"pareto", "--csv", bad, "--workload", "resnet"});
  CHECK(r.rc == 2);
  CHECK(r.err.find(bad + ":3: column 'minibatch_ms': expected a number, got 'abc'") != std::string::npos);
}

TEST_CASE("cli: pareto JSON carries the mode fields and matches the text form") {
  CorpusFile corpus(300);
  auto j = analyze({"pareto", "--csv", corpus.path(), "--workload", "resnet", "--json"});
  REQUIRE_MESSAGE(j.rc == 0, j.err);
  auto o = boost::json::parse(j.out).as_object();
  CHECK(o.at("modes").to_number<int>() == 300);
  const auto& front = o.at("front").as_array();
  REQUIRE(front.size() >= 2);
  for (const auto& p : front)
    for (const char* k : {"cores", "cpu_mhz", "gpu_mhz", "emc_mhz", "time_ms", "power_w", "energy_mj"})
      CHECK(p.as_object().contains(k));
  auto t = analyze({"pareto", "--csv", corpus.path(), "--workload", "resnet", "--x", "energy", "--y", "power"});
  REQUIRE(t.rc == 0);
  CHECK(t.out.find("Pareto front of resnet on agx-orin") != std::string::npos);
}

TEST_CASE("cli: predict linear and optimize with a sweep report the named figures") {
  CorpusFile corpus(300);
  auto p = analyze({"predict", "--csv", corpus.path(), "--method", "linear", "--target", "mobilenet", "--reference",
                    "resnet,yolo,lenet", "--json"});
  REQUIRE_MESSAGE(p.rc == 0, p.err);
  auto o = boost::json::parse(p.out).as_object();
  for (const char* k : {"time_mape_pct", "power_mape_pct", "energy_mape_pct", "seed", "training_modes", "time_model",
                        "energy_model", "representative_search"})
    CHECK_MESSAGE(o.contains(k), k);
  CHECK(o.at("training_modes").as_array().size() == 4);
  CHECK(o.at("training_modes").as_array()[0].as_object().contains("cpu_mhz"));
  CHECK(o.at("representative_search").as_object().at("combinations").to_number<int>() == 210);

  auto opt = analyze({"optimize", "--csv", corpus.path(), "--workload", "mobilenet", "--method", "linear", "--reference",
                      "resnet,yolo,lenet", "--power-budget-w", "25", "--sweep", "15:40:1", "--json"});
  REQUIRE_MESSAGE(opt.rc == 0, opt.err);
  auto oo = boost::json::parse(opt.out).as_object();
  CHECK(oo.at("candidates").to_number<int>() > 300);  // every mode of the grid the corpus spans
  const auto& sweep = oo.at("sweep").as_array();
  REQUIRE(sweep.size() == 3);  // the method, MAXN, random 50
  for (const auto& s : sweep)
    for (const char* k : {"time_penalty_median_pct", "excess_power_area_w", "over_limit_pct", "over_limit_plus1_pct"})
      CHECK(s.as_object().contains(k));
  CHECK(sweep[1].as_object().at("strategy").as_string() == "maxn");
  // Observation-based random sampling never exceeds a budget (PowerTrain sec. 5.2); MAXN mostly does.
  CHECK(sweep[2].as_object().at("strategy").as_string() == "random50");
  CHECK(sweep[2].as_object().at("excess_power_area_w").to_number<double>() == 0);
  CHECK(sweep[2].as_object().at("over_limit_pct").to_number<double>() == 0);
  CHECK(sweep[2].as_object().at("time_penalty_median_pct").to_number<double>() >= 0);
  CHECK(sweep[1].as_object().at("over_limit_pct").to_number<double>() > 50);
  CHECK(oo.at("chosen").as_object().contains("predicted_power_w"));
}

TEST_CASE("cli: plots are written by gnuplot as PNG and SVG; a missing gnuplot is a clear error") {
  CorpusFile corpus(200);
  const std::string png = corpus.file("pareto.png"), svg = corpus.file("pareto.svg");
  auto r1 = analyze({"pareto", "--csv", corpus.path(), "--workload", "resnet", "--plot", png});
  REQUIRE_MESSAGE(r1.rc == 0, r1.err);
  CHECK(starts_with_bytes(png, "\x89PNG"));
  auto r2 = analyze({"optimize", "--csv", corpus.path(), "--workload", "resnet", "--power-budget-w", "30", "--plot", svg});
  REQUIRE_MESSAGE(r2.rc == 0, r2.err);
  std::ifstream f(svg);
  std::stringstream ss;
  ss << f.rdbuf();
  CHECK(ss.str().find("<svg") != std::string::npos);
  auto bad_ext = analyze({"pareto", "--csv", corpus.path(), "--workload", "resnet", "--plot", corpus.file("p.gif")});
  CHECK(bad_ext.rc == 2);
  CHECK(bad_ext.err.find("--plot") != std::string::npos);
  ::setenv("JETSWEEP_GNUPLOT", "/nonexistent/gnuplot", 1);
  auto missing = analyze({"pareto", "--csv", corpus.path(), "--workload", "resnet", "--plot", png});
  ::unsetenv("JETSWEEP_GNUPLOT");
  CHECK(missing.rc == 1);
  CHECK(missing.err.find("JETSWEEP_GNUPLOT") != std::string::npos);
}

TEST_CASE("cli: export from a CSV corpus reads back; synth writes a corpus") {
  CorpusFile corpus(30);
  const Run exported = export_corpus({"--csv", corpus.path()});
  REQUIRE(exported.rc == 0);
  std::istringstream in(exported.out);
  auto back = parse_corpus_csv(in, "export");
  REQUIRE(back.is_ok());
  CHECK(back->rows.size() == 150);
  CHECK(export_corpus({"--csv", corpus.path(), "--bogus"}).rc == 2);
  auto s = analyze({"synth", "--device", "orin-nano", "--workloads", "resnet", "--out", corpus.file("nano.csv"), "--json"});
  REQUIRE_MESSAGE(s.rc == 0, s.err);
  CHECK(boost::json::parse(s.out).as_object().at("rows").to_number<int>() == 1800);
  CHECK(analyze({"synth", "--device", "tx2"}).rc == 2);
  auto sim = analyze({"synth", "--simulator", "--device", "agx-orin", "--workloads", "lenet5/fashion-mnist", "--modes",
                      "40", "--out", corpus.file("sim.csv"), "--json"});
  REQUIRE_MESSAGE(sim.rc == 0, sim.err);
  CHECK(boost::json::parse(sim.out).as_object().at("rows").to_number<int>() == 40);
  auto steps_paper = analyze({"predict", "--csv", corpus.path(), "--method", "powertrain-paper", "--reference", "resnet",
                              "--target", "mobilenet", "--fine-tune-steps", "50"});
  CHECK(steps_paper.rc == 2);
  CHECK(steps_paper.err.find("--fine-tune-steps") != std::string::npos);
  auto log_robust = analyze({"predict", "--csv", corpus.path(), "--method", "powertrain", "--reference", "resnet",
                             "--target", "mobilenet", "--log-target"});
  CHECK(log_robust.rc == 2);
  CHECK(log_robust.err.find("--log-target") != std::string::npos);
  auto sim_bad = analyze({"synth", "--simulator", "--linear-truth"});
  CHECK(sim_bad.rc == 2);
  CHECK(sim_bad.err.find("--linear-truth") != std::string::npos);
}

TEST_CASE("cli: unlike configurations are refused or kept apart; --where, --pool-over and simulated marks") {
  CorpusFile corpus(10);
  const std::string path = corpus.file("workers.csv");
  {
    std::ofstream f(path);
    f << "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,instance,epoch,epoch_s,workers,simulated\n";
    for (int w : {2, 4})
      for (int cores : {4, 8})
        for (const char* inst : {"x-1", "x-2"})
          for (int e = 0; e < 3; ++e) {
            const double ms = 400.0 / cores * (w == 4 ? 0.8 : 1.0) * (inst[2] == '2' ? 1.01 : 1.0);
            f << "agx-xavier,lenet," << cores << ",2265.6,1377,2133," << ms << ",20000," << inst << "," << e << ","
              << ms / 10 << "," << w << ",true\n";
          }
  }
  auto refused = analyze({"pareto", "--csv", path, "--workload", "lenet"});
  CHECK(refused.rc == 2);
  CHECK(refused.err.find("--where workers=2") != std::string::npos);
  CHECK(refused.err.find("--pool-over workers") != std::string::npos);
  CHECK(analyze({"predict", "--csv", path, "--method", "nn", "--target", "lenet"}).rc == 2);

  auto sel = analyze({"pareto", "--csv", path, "--workload", "lenet", "--where", "workers=4"});
  REQUIRE_MESSAGE(sel.rc == 0, sel.err);
  CHECK(sel.out.find("Pareto front of lenet on agx-xavier w4 (simulated)") != std::string::npos);
  CHECK(sel.out.find("selected (--where): workers=4") != std::string::npos);
  auto pooled = analyze({"optimize", "--csv", path, "--workload", "lenet", "--pool-over", "workers", "--power-budget-w", "30"});
  REQUIRE_MESSAGE(pooled.rc == 0, pooled.err);
  CHECK(pooled.out.find("POOLED over workers") != std::string::npos);
  CHECK(pooled.out.find("(simulated)") != std::string::npos);

  auto v = analyze({"variability", "--csv", path, "--json"});
  REQUIRE_MESSAGE(v.rc == 0, v.err);
  auto vo = boost::json::parse(v.out).as_object();
  REQUIRE(vo.at("groups").as_array().size() == 4);
  for (const auto& g : vo.at("groups").as_array()) {
    CHECK(g.as_object().at("simulated").as_bool());
    CHECK(g.as_object().at("instances").as_array()[0].as_object().at("simulated").as_bool());
  }
  auto vt = analyze({"variability", "--csv", path});
  REQUIRE(vt.rc == 0);
  CHECK(vt.out.find("agx-xavier  lenet  8c/2265.6/1377/2133 w2 (simulated)") != std::string::npos);

  auto ep = analyze({"epochs", "--csv", path, "--workload", "lenet", "--where", "workers=2", "--pool-over", "mode",
                     "--json"});
  REQUIRE_MESSAGE(ep.rc == 0, ep.err);
  auto eo = boost::json::parse(ep.out).as_object();
  CHECK(eo.at("groups").as_array().size() == 1);  // modes pooled explicitly, workers selected
  CHECK(eo.at("pooled_over").as_array()[0].as_string() == "mode");
  CHECK(eo.at("epochs").as_array()[0].as_object().at("simulated").as_bool());

  // Plot titles say "(simulated)".
  const std::string svg = corpus.file("violins.svg");
  auto plot = analyze({"variability", "--csv", path, "--where", "workers=2,mode=8c/2265.6/1377/2133", "--plot", svg});
  REQUIRE_MESSAGE(plot.rc == 0, plot.err);
  std::ifstream f(svg);
  std::stringstream ss;
  ss << f.rdbuf();
  CHECK(ss.str().find("(simulated)") != std::string::npos);
  const std::string bars = corpus.file("bars.svg");
  REQUIRE(analyze({"epochs", "--csv", path, "--workload", "lenet", "--plot", bars}).rc == 0);
  std::ifstream fb(bars);
  std::stringstream sb;
  sb << fb.rdbuf();
  CHECK(sb.str().find("(simulated)") != std::string::npos);

  auto bad_pool = analyze({"variability", "--csv", path, "--pool-over", "instance"});
  CHECK(bad_pool.rc == 2);
  CHECK(bad_pool.err.find("--pool-over: unknown axis 'instance'") != std::string::npos);
}

TEST_CASE("cli: adaptive refuses bad plans naming the flag (budget, reference class, no power, budgets)") {
  CorpusFile corpus(40);
  const std::string both = corpus.file("two-boards.csv"), no_power = corpus.file("no-power.csv");
  {
    Corpus c = synthetic_corpus("agx-orin", {"resnet", "mobilenet"}, {.noise_pct = 2, .max_modes = 40});
    const Corpus nano = synthetic_corpus("orin-nano", {"resnet"}, {.noise_pct = 2, .max_modes = 40});
    c.rows.insert(c.rows.end(), nano.rows.begin(), nano.rows.end());
    std::ofstream f(both);
    write_corpus_csv(f, c);
    for (auto& r : c.rows)
      if (r.workload == "mobilenet") r.power_mw.reset();
    std::ofstream g(no_power);
    write_corpus_csv(g, c);
  }
  auto low = analyze({"adaptive", "--csv", both, "--target", "mobilenet", "--reference", "resnet@agx-orin", "--budget", "3"});
  CHECK(low.rc == 2);
  CHECK(low.err.find("--budget: 3 is below the strategy's minimum") != std::string::npos);
  auto high = analyze({"adaptive", "--csv", both, "--target", "mobilenet", "--reference", "resnet@agx-orin",
                       "--budget", "41", "--no-model-cache"});
  CHECK(high.rc == 2);
  CHECK(high.err.find("--budget: 41 is more than the target's 40 modes") != std::string::npos);
  auto cross = analyze({"adaptive", "--csv", both, "--target", "mobilenet", "--reference", "resnet@orin-nano"});
  CHECK(cross.rc == 2);
  CHECK(cross.err.find("--reference") != std::string::npos);
  CHECK(cross.err.find("--cross-board") != std::string::npos);
  auto unpowered = analyze({"adaptive", "--csv", no_power, "--target", "mobilenet", "--reference", "resnet@agx-orin"});
  CHECK(unpowered.rc == 2);
  CHECK(unpowered.err.find("--target: 'mobilenet' on agx-orin has no power data") != std::string::npos);
  auto no_ref = analyze({"adaptive", "--csv", both, "--target", "mobilenet"});
  CHECK(no_ref.rc == 2);
  CHECK(no_ref.err.find("--reference: required") != std::string::npos);
  auto budgets = analyze({"adaptive", "--csv", both, "--target", "mobilenet", "--reference", "resnet@agx-orin",
                          "--power-budgets-w", "20,lots"});
  CHECK(budgets.rc == 2);
  CHECK(budgets.err.find("--power-budgets-w: 'lots'") != std::string::npos);
  auto strategy = analyze({"adaptive", "--csv", both, "--target", "mobilenet", "--reference", "resnet@agx-orin",
                           "--strategy", "greedy"});
  CHECK(strategy.rc == 2);
  CHECK(strategy.err.find("--strategy") != std::string::npos);
  auto first = analyze({"adaptive", "--csv", both, "--target", "mobilenet", "--reference", "resnet@agx-orin",
                        "--first-round", "20"});
  CHECK(first.rc == 2);
  CHECK(first.err.find("--first-round") != std::string::npos);
}

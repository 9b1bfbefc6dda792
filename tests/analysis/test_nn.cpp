// The PowerTrain NN and transfer learning on a generated non-linear corpus (AGX Orin grid): stated
// MAPE bounds on held-out modes, transfer beating training from scratch on the same 50 modes, and the
// saved reference model giving identical predictions after reloading.
#include <doctest/doctest.h>

#include <unistd.h>

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "analysis/nn_backend.hpp"
#include "analysis/nn_predictor.hpp"
#include "analysis/csv_corpus.hpp"
#include "analysis/prediction.hpp"
#include "analysis/simulator_corpus.hpp"
#include "analysis/stats.hpp"
#include "analysis/synthetic_corpus.hpp"
#include "analysis_fixture.hpp"

using namespace jetsweep;
using namespace jetsweep::analysis;
using namespace jetsweep::testing;
namespace fs = std::filesystem;

namespace {

Corpus orin_corpus(size_t modes) {
  return synthetic_corpus("agx-orin", {"resnet", "mobilenet", "yolo"}, {.noise_pct = 2, .seed = 7, .max_modes = modes});
}

// MAPE of always predicting the training mean: what an NN that learned nothing would score.
double mean_predictor_mape(const PredictOutcome& p, const WorkloadData& w, bool power) {
  std::vector<double> train, obs, pred;
  for (const auto& m : p.train_modes) train.push_back(power ? *w.find(m)->power_mw : w.find(m)->minibatch_ms);
  const double mu = mean(train);
  for (const auto& h : p.held_out) {
    obs.push_back(power ? *h.observed_power_mw : *h.observed_time_ms);
    pred.push_back(mu);
  }
  return mape_pct(obs, pred);
}

}  // namespace

TEST_CASE("nn: trained from scratch on 300 modes it learns time and power") {
  Corpus c = orin_corpus(1500);
  PredictRequest req;
  req.method = Method::kNn;
  req.target = {"mobilenet", ""};
  req.train_modes = 300;
  req.nn.epochs = 100;
  auto p = run_prediction(c, req);
  REQUIRE_MESSAGE(p.is_ok(), p.status().to_string());
  auto w = select_workload(c, {"mobilenet", ""}, "--target").value();
  const double base_t = mean_predictor_mape(*p, w, false), base_p = mean_predictor_mape(*p, w, true);
  MESSAGE("nn time MAPE " << *p->time_mape_pct << "% (mean predictor " << base_t << "%), power MAPE "
                          << *p->power_mape_pct << "% (mean predictor " << base_p << "%)");
  CHECK(p->held_out.size() == 1200);
  CHECK(*p->power_mape_pct < 6.0);
  CHECK(*p->time_mape_pct < 30.0);
  CHECK(*p->time_mape_pct < base_t / 3);
  CHECK(*p->power_mape_pct < base_p / 3);
  CHECK(p->time_training.samples_train == 270);
  CHECK(p->time_training.samples_validation == 30);
}

TEST_CASE("powertrain: transfer on 50 modes reaches the stated MAPE and beats NN from scratch") {
  Corpus c = orin_corpus(1500);
  const std::string dir = (std::filesystem::temp_directory_path() / ("jetsweep-nn-" + std::to_string(::getpid()))).string();
  PredictRequest req;
  req.method = Method::kPowerTrain;
  req.target = {"mobilenet", ""};
  req.references = {{"resnet", ""}};
  req.train_modes = 50;
  req.nn.epochs = 100;
  req.reference_modes = 1000;  // PowerTrain saw no MAPE change from 500 to 4,368 reference modes
  req.model_dir = dir;
  auto pt = run_prediction(c, req);
  REQUIRE_MESSAGE(pt.is_ok(), pt.status().to_string());
  CHECK_FALSE(pt->reference->loaded);
  CHECK(pt->reference->modes == 1000);
  req.method = Method::kNn;
  auto nn = run_prediction(c, req);
  REQUIRE(nn.is_ok());
  MESSAGE("powertrain time " << *pt->time_mape_pct << "% power " << *pt->power_mape_pct << "%; nn time "
                             << *nn->time_mape_pct << "% power " << *nn->power_mape_pct << "% (50 modes, "
                             << pt->held_out.size() << " held out)");
  CHECK(pt->held_out.size() == 1450);
  CHECK(*pt->time_mape_pct < 15.0);   // PowerTrain reports < 15% for time on new workloads
  CHECK(*pt->power_mape_pct < 6.0);   // ... and < 6% for power
  CHECK(*pt->time_mape_pct < *nn->time_mape_pct);

  // The paper's method holds the paper's bounds here too (its own reference model).
  req.method = Method::kPowerTrainPaper;
  auto paper = run_prediction(c, req);
  REQUIRE(paper.is_ok());
  CHECK_FALSE(paper->reference->loaded);
  MESSAGE("powertrain-paper time " << *paper->time_mape_pct << "% power " << *paper->power_mape_pct << "%");
  CHECK(*paper->time_mape_pct < 15.0);
  CHECK(*paper->power_mape_pct < 6.0);

  // Reused: same reference, another target, no retraining.
  req.method = Method::kPowerTrain;
  req.target = {"yolo", ""};
  auto again = run_prediction(c, req);
  REQUIRE(again.is_ok());
  CHECK(again->reference->loaded);
  CHECK(*again->time_mape_pct < 15.0);
  std::filesystem::remove_all(dir);
}

// The paper's fine-tuning (raw targets, a 90:10 split of 30 modes, best-validation checkpoint) lands anywhere
// between good and useless depending on the seed for a CPU-bound target transferred from a GPU-bound reference;
// the default (log targets, inverse-frequency inputs, full-batch fine-tuning) holds on every seed.
TEST_CASE("powertrain: holds on every seed where powertrain-paper diverges (ResNet -> LeNet, 30 modes)") {
  Corpus c = synthetic_corpus("agx-orin", {"resnet", "lenet"}, {.noise_pct = 2, .seed = 7, .max_modes = 1500});
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("jetsweep-nn-seeds-" + std::to_string(::getpid()))).string();
  PredictRequest req;
  req.target = {"lenet", ""};
  req.references = {{"resnet", ""}};
  req.train_modes = 30;
  req.reference_modes = 1000;
  req.model_dir = dir;
  std::vector<double> paper_t, robust_t, robust_p;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    req.seed = seed;
    req.method = Method::kPowerTrainPaper;
    auto paper = run_prediction(c, req);
    REQUIRE_MESSAGE(paper.is_ok(), paper.status().to_string());
    req.method = Method::kPowerTrain;
    auto robust = run_prediction(c, req);
    REQUIRE_MESSAGE(robust.is_ok(), robust.status().to_string());
    CHECK(robust->time_training.samples_validation == 0);
    CHECK(robust->time_training.best_epoch == kPowerTrainFineTuneSteps);
    CHECK(paper->time_training.samples_validation == 3);
    paper_t.push_back(*paper->time_mape_pct);
    robust_t.push_back(*robust->time_mape_pct);
    robust_p.push_back(*robust->power_mape_pct);
    MESSAGE("seed " << seed << ": powertrain-paper time " << *paper->time_mape_pct << "%, powertrain time "
                    << *robust->time_mape_pct << "% power " << *robust->power_mape_pct << "%");
  }
  const double paper_worst = *std::max_element(paper_t.begin(), paper_t.end());
  const double robust_worst = *std::max_element(robust_t.begin(), robust_t.end());
  WARN(paper_worst > 30.0);                      // the failure this guards against is present here (55% measured)
  CHECK(robust_worst < 25.0);                    // ... and gone on every seed
  CHECK(median(robust_t) < median(paper_t));
  CHECK(*std::max_element(robust_p.begin(), robust_p.end()) < 8.0);
  std::filesystem::remove_all(dir);
}

// The pair the board simulator ships (the model behind `jetsweep-agent --sim`): ResNet-18/CIFAR-10 -> LeNet-5/
// Fashion-MNIST on AGX Orin, 50 random modes. The paper's fine-tuning measured 22-123% time MAPE over five seeds on
// a 4,368-mode corpus of it (docs/ANALYSIS.md).
TEST_CASE("powertrain: the simulator's ResNet-18 -> LeNet-5 pair within PowerTrain's bound at 50 modes") {
  SimulatorCorpusOptions so;
  so.board_class = "agx-orin";
  so.workloads = {"resnet18/cifar10", "lenet5/fashion-mnist"};
  so.max_modes = 1200;
  so.noise_pct = 2;
  auto c = simulator_corpus(so);
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  PredictRequest req;
  req.target = {"lenet5/fashion-mnist", ""};
  req.references = {{"resnet18/cifar10", ""}};
  req.train_modes = 50;
  req.model_dir = (std::filesystem::temp_directory_path() / ("jetsweep-nn-sim-" + std::to_string(::getpid()))).string();
  std::vector<double> paper_t, robust_t;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    req.seed = seed;
    req.method = Method::kPowerTrainPaper;
    auto paper = run_prediction(*c, req);
    REQUIRE_MESSAGE(paper.is_ok(), paper.status().to_string());
    req.method = Method::kPowerTrain;
    auto robust = run_prediction(*c, req);
    REQUIRE_MESSAGE(robust.is_ok(), robust.status().to_string());
    MESSAGE("seed " << seed << ": powertrain-paper time " << *paper->time_mape_pct << "%, powertrain time "
                    << *robust->time_mape_pct << "% power " << *robust->power_mape_pct << "%");
    CHECK(*robust->time_mape_pct < 15.0);
    CHECK(*robust->power_mape_pct < 6.0);
    paper_t.push_back(*paper->time_mape_pct);
    robust_t.push_back(*robust->time_mape_pct);
  }
  CHECK(median(robust_t) < median(paper_t));
  std::filesystem::remove_all(req.model_dir);
}

TEST_CASE("nn: save and load give identical predictions; bad inputs are rejected") {
  auto board = synthetic_board("orin-nano").value();
  std::vector<ModeKey> modes = board.modes();
  modes.resize(200);
  std::vector<double> y;
  auto w = synthetic_workload("lenet").value();
  for (const auto& m : modes) y.push_back(synthetic_time_ms(board, w, m));
  NnOptions o;
  o.epochs = 5;
  auto net = NnRegressor::train(modes, y, o);
  REQUIRE(net.is_ok());
  const std::string path = (std::filesystem::temp_directory_path() / ("jetsweep-nn-save-" + std::to_string(::getpid()) + ".pt")).string();
  REQUIRE(net->save(path).is_ok());
  auto back = NnRegressor::load(path);
  REQUIRE(back.is_ok());
  auto a = net->predict(modes), b = back->predict(modes);
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == b[i]);
  std::filesystem::remove(path);

  // Inverse-frequency inputs survive a reload; a transfer must use the reference's inputs.
  NnOptions inv = o;
  inv.inverse_features = true;
  inv.log_target = true;
  auto inet = NnRegressor::train(modes, y, inv);
  REQUIRE(inet.is_ok());
  REQUIRE(inet->save(path).is_ok());
  auto iback = NnRegressor::load(path);
  REQUIRE(iback.is_ok());
  auto ia = inet->predict(modes), ib = iback->predict(modes);
  for (size_t i = 0; i < ia.size(); ++i) CHECK(ia[i] == ib[i]);
  std::filesystem::remove(path);
  inv.full_batch_steps = 20;
  std::vector<ModeKey> few(modes.begin(), modes.begin() + 10);
  std::vector<double> few_y(y.begin(), y.begin() + 10);
  auto tuned = iback->transfer(few, few_y, inv);
  REQUIRE(tuned.is_ok());
  CHECK(tuned->report().samples_train == 10);
  CHECK(tuned->report().samples_validation == 0);
  CHECK(tuned->report().best_epoch == 20);
  NnOptions raw_inputs = inv;
  raw_inputs.inverse_features = false;
  auto mismatch = iback->transfer(few, few_y, raw_inputs);
  REQUIRE_FALSE(mismatch.is_ok());
  CHECK(mismatch.status().message().find("inverse features") != std::string::npos);

  // A training (from scratch, and a transfer's fine-tuning) told to stop fails with kCancelled.
  std::atomic<bool> stop{true};
  NnOptions cancelled = o;
  cancelled.cancel = &stop;
  auto cut = NnRegressor::train(modes, y, cancelled);
  REQUIRE_FALSE(cut.is_ok());
  CHECK(cut.status().code() == Code::kCancelled);
  inv.cancel = &stop;
  auto cut_transfer = iback->transfer(few, few_y, inv);
  REQUIRE_FALSE(cut_transfer.is_ok());
  CHECK(cut_transfer.status().code() == Code::kCancelled);
  stop = false;   // the same options, not stopped: trains
  CHECK(NnRegressor::train(modes, y, cancelled).is_ok());

  CHECK_FALSE(NnRegressor::load("/nonexistent/model.pt").is_ok());
  CHECK_FALSE(NnRegressor::train({modes[0]}, {1.0}, o).is_ok());
  o.log_target = true;
  CHECK_FALSE(NnRegressor::train({modes[0], modes[1]}, {1.0, -1.0}, o).is_ok());
}

TEST_CASE("nn plugin: found next to the executable; a missing or foreign library is refused with its path") {
  auto found = load_nn_backend(nn_plugin_candidates());
  REQUIRE_MESSAGE(found.is_ok(), found.status().message());
  CHECK(found.value()->abi() == kNnBackendAbi);

  auto missing = load_nn_backend({"/nonexistent/libjetsweep_nn.so"});
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == Code::kUnavailable);
  CHECK(missing.status().message().find("/nonexistent/libjetsweep_nn.so") != std::string::npos);
  CHECK(missing.status().message().find("JETSWEEP_NN_PLUGIN") != std::string::npos);

  auto foreign = load_nn_backend({"libpq.so.5"});   // a real shared library, not a plugin
  REQUIRE_FALSE(foreign.is_ok());
  CHECK(foreign.status().message().find("not a jetsweep NN plugin") != std::string::npos);

  // The first loadable plugin among the candidates wins.
  CHECK(load_nn_backend({"/nonexistent/libjetsweep_nn.so", nn_plugin_candidates().front()}).is_ok());
}

TEST_CASE("adaptive: `analyze adaptive` replays through the reference network beside the PowerTrain baselines") {
  const fs::path dir = fs::temp_directory_path() / ("jetsweep-adaptive-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string csv = (dir / "corpus.csv").string();
  {
    std::ofstream f(csv);
    write_corpus_csv(f, synthetic_corpus("agx-orin", {"resnet", "mobilenet"}, {.noise_pct = 2, .seed = 3, .max_modes = 600}));
  }
  const std::vector<std::string> args = {"adaptive", "--csv", csv, "--target", "mobilenet", "--reference", "resnet",
                                         "--nn-epochs", "30", "--model-dir", (dir / "models").string()};
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const Run j = analyze(json_args);
  REQUIRE_MESSAGE(j.rc == 0, j.err);
  const auto o = boost::json::parse(j.out).as_object();
  CHECK(o.at("candidates").to_number<int>() == 600);
  std::set<std::string> modes;
  size_t profiled = 0;
  for (const auto& round : o.at("rounds").as_array())
    for (const auto& m : round.as_object().at("modes").as_array()) {
      ++profiled;
      modes.insert(boost::json::serialize(m));
    }
  CHECK(profiled == 15);
  CHECK(modes.size() == 15);
  const auto& figures = o.at("figures").as_array();
  REQUIRE(figures.size() == 3);
  CHECK(figures[0].as_object().at("strategy").as_string() == "adaptive (front)");
  CHECK(figures[0].as_object().at("profiled").to_number<int>() == 15);
  CHECK(figures[1].as_object().at("strategy").as_string() == "powertrain 15 random");
  CHECK(figures[2].as_object().at("profiled").to_number<int>() == 50);
  // The transfer learned the target: far better than the ~60% of a constant prediction on this grid.
  CHECK(figures[0].as_object().at("time_mape_pct").to_number<double>() < 25.0);
  CHECK(figures[0].as_object().at("power_mape_pct").to_number<double>() < 10.0);
  // Where the adaptive penalty comes from (its decision with the true power, then with the true time): numbers for
  // the adaptive strategy, null for the baselines.
  for (const char* k : {"time_penalty_true_power_pct", "time_penalty_true_time_pct"}) {
    CAPTURE(k);
    REQUIRE(figures[0].as_object().at(k).is_number());
    CHECK(std::isfinite(figures[0].as_object().at(k).to_number<double>()));
    CHECK(figures[1].as_object().at(k).is_null());
  }
  const auto& picks = o.at("picks").as_array();
  REQUIRE_FALSE(picks.empty());
  bool any_contender = false;   // with a chosen mode: the text report names it on that budget's line
  for (const auto& p : picks) {
    const auto& x = p.as_object();
    CHECK(x.contains("time_penalty_pct"));
    // The contender: null, or a mode predicted faster than the choice (its true values beside its predictions).
    REQUIRE(x.contains("contender"));
    if (x.at("contender").is_null()) continue;
    const auto& c = x.at("contender").as_object();
    CHECK(c.at("time_ms").is_number());
    CHECK(c.at("predicted_time_ms").to_number<double>() > 0);
    if (x.at("chosen").is_null()) {
      CHECK(c.at("predicted_gain_pct").is_null());
      continue;
    }
    any_contender = true;
    CHECK(c.at("predicted_gain_pct").to_number<double>() > 0);
  }
  const Run t = analyze(args);
  REQUIRE_MESSAGE(t.rc == 0, t.err);
  CHECK(t.out.find("adaptive pick per power budget") != std::string::npos);
  CHECK((t.out.find("; may fit and predicted ") != std::string::npos) == any_contender);
  CHECK(any_contender);   // so the line above was checked with a contender (MobileNet from ResNet, 600 modes: some)
  CHECK(t.out.find("powertrain 50 random") != std::string::npos);
  CHECK(t.out.find("adaptive (front): median penalty ") != std::string::npos);
  CHECK(t.out.find("% with the true power of every mode") != std::string::npos);
  CHECK(t.out.find("reference network: 600 modes, loaded") != std::string::npos);  // the first run saved it
  // A budget below every mode's power: no pick, so no median to attribute (null, not 0).
  std::vector<std::string> none_args = json_args;
  for (const char* a : {"--power-budgets-w", "0.5", "--no-baselines"}) none_args.push_back(a);
  const Run n = analyze(none_args);
  REQUIRE_MESSAGE(n.rc == 0, n.err);
  const boost::json::value none_doc = boost::json::parse(n.out);
  const auto& none = none_doc.as_object().at("figures").as_array();
  REQUIRE(none.size() == 1);
  CHECK(none[0].as_object().at("budgets").to_number<int>() == 0);
  for (const char* k : {"time_penalty_true_power_pct", "time_penalty_true_time_pct"}) {
    CAPTURE(k);
    CHECK(none[0].as_object().at(k).is_null());
  }
  fs::remove_all(dir);
}

TEST_CASE("adaptive: `analyze adaptive --anchor measured` corrects the reference's measured values where it has every "
          "target mode, else its network (with a note)") {
  const fs::path dir = fs::temp_directory_path() / ("jetsweep-anchor-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string csv = (dir / "corpus.csv").string(), partial = (dir / "partial.csv").string();
  Corpus c = synthetic_corpus("agx-orin", {"resnet", "mobilenet"}, {.noise_pct = 2, .seed = 3, .max_modes = 300});
  {
    std::ofstream f(csv);
    write_corpus_csv(f, c);
  }
  const auto first_resnet =
      std::find_if(c.rows.begin(), c.rows.end(), [](const ModeRecord& r) { return r.workload == "resnet"; });
  REQUIRE(first_resnet != c.rows.end());
  c.rows.erase(first_resnet);   // the reference lacks one of the target's modes
  {
    std::ofstream f(partial);
    write_corpus_csv(f, c);
  }
  const std::vector<std::string> args = {"adaptive", "--csv", csv, "--target", "mobilenet", "--reference", "resnet",
                                         "--nn-epochs", "30", "--model-dir", (dir / "models").string(),
                                         "--no-baselines", "--json"};
  const Run d = analyze(args);   // the default: the reference network's predictions
  REQUIRE_MESSAGE(d.rc == 0, d.err);
  const boost::json::value network_doc = boost::json::parse(d.out);
  CHECK(network_doc.at("anchor").as_string() == "powertrain");
  std::vector<std::string> measured_args = args;
  for (const char* a : {"--anchor", "measured"}) measured_args.push_back(a);
  const Run m = analyze(measured_args);
  REQUIRE_MESSAGE(m.rc == 0, m.err);
  const boost::json::value measured_doc = boost::json::parse(m.out);
  CHECK(measured_doc.at("anchor").as_string() == "measured");
  // No fallback note: the reference measured every target mode (other notes, e.g. the fit's saturation, may appear).
  CHECK(boost::json::serialize(measured_doc.at("notes")).find("--anchor measured") == std::string::npos);
  CHECK(measured_doc.at("figures").at(0).at("time_mape_pct") != network_doc.at("figures").at(0).at("time_mape_pct"));
  measured_args[2] = partial;
  const Run p = analyze(measured_args);
  REQUIRE_MESSAGE(p.rc == 0, p.err);
  const boost::json::value partial_doc = boost::json::parse(p.out);
  CHECK(partial_doc.at("anchor").as_string() == "powertrain");
  CHECK(boost::json::serialize(partial_doc.at("notes")).find("--anchor measured: the reference did not measure every "
                                                             "target mode") != std::string::npos);
  std::vector<std::string> unknown_args = args;
  for (const char* a : {"--anchor", "nearest"}) unknown_args.push_back(a);
  const Run u = analyze(unknown_args);
  CHECK(u.rc == 2);
  CHECK_MESSAGE(u.err.find("--anchor: unknown anchor 'nearest' (known: powertrain, measured)") != std::string::npos,
                u.err);
  fs::remove_all(dir);
}

// The PowerTrain NN and transfer learning on a generated non-linear corpus (AGX Orin grid): stated
// MAPE bounds on held-out modes, transfer beating training from scratch on the same 50 modes, and the
// saved reference model giving identical predictions after reloading.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>

#include "analysis/nn_backend.hpp"
#include "analysis/nn_predictor.hpp"
#include "analysis/prediction.hpp"
#include "analysis/stats.hpp"
#include "analysis/synthetic_corpus.hpp"
#include "analysis_fixture.hpp"

using namespace jetsweep;
using namespace jetsweep::analysis;
using namespace jetsweep::testing;

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

  // Reused: same reference, another target, no retraining.
  req.method = Method::kPowerTrain;
  req.target = {"yolo", ""};
  auto again = run_prediction(c, req);
  REQUIRE(again.is_ok());
  CHECK(again->reference->loaded);
  CHECK(*again->time_mape_pct < 15.0);
  std::filesystem::remove_all(dir);
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

// The SIGMETRICS'23 sec. 5.7 linear predictor: least squares with scikit-learn semantics, the nCk
// representative-mode search, and recovery of a linear ground truth.
#include <doctest/doctest.h>

#include <cmath>

#include "analysis/linear_predictor.hpp"
#include "analysis/prediction.hpp"
#include "analysis/synthetic_corpus.hpp"
#include "analysis_fixture.hpp"

using namespace jetsweep;
using namespace jetsweep::analysis;
using namespace jetsweep::testing;

namespace {
// A linear prediction of `target` from the reference workloads, trained on `train_modes` modes chosen from
// a pool of `pool` candidates.
PredictRequest linear_request(const std::string& target, const std::vector<std::string>& references, int train_modes,
                              size_t pool) {
  PredictRequest req;
  req.method = Method::kLinear;
  req.target = {target, ""};
  for (const auto& r : references) req.references.push_back({r, ""});
  req.train_modes = train_modes;
  req.pool = pool;
  return req;
}
}  // namespace

TEST_CASE("least squares recovers exact coefficients on full-rank data") {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int i = 0; i < 12; ++i) {
    const std::vector<double> r = {1000.0 + 97 * i, double(1 + i % 5), 300.0 + 13 * (i * i % 7), 200.0 * (1 + i % 3)};
    x.push_back(r);
    y.push_back(-0.2 * r[0] + 7 * r[1] + 0.5 * r[2] - 0.01 * r[3] + 42);
  }
  auto m = fit_least_squares(x, y);
  CHECK(m.rank == 4);
  CHECK(m.coef[0] == doctest::Approx(-0.2).epsilon(1e-9));
  CHECK(m.coef[1] == doctest::Approx(7).epsilon(1e-9));
  CHECK(m.coef[2] == doctest::Approx(0.5).epsilon(1e-9));
  CHECK(m.coef[3] == doctest::Approx(-0.01).epsilon(1e-9));
  CHECK(m.intercept == doctest::Approx(42).epsilon(1e-9));
}

TEST_CASE("rank-deficient fits (4 modes, 4 features + intercept) give the minimum-norm solution") {
  // 4 distinct modes x 2 epochs: the centred design has rank 3, as in the paper's fit.
  std::vector<std::vector<double>> modes = {{1200, 8, 900, 1600}, {2100, 8, 900, 1600}, {2100, 2, 900, 1600}, {2265, 8, 1377, 1600}};
  std::vector<std::vector<double>> x;
  std::vector<double> y = {100, 101, 80, 80.5, 120, 119, 50, 51};
  for (const auto& m : modes) x.insert(x.end(), {m, m});
  auto fit = fit_least_squares(x, y);
  CHECK(fit.rank == 3);
  // Exact on the mode means (the best any model can do with repeated rows).
  for (size_t i = 0; i < modes.size(); ++i)
    CHECK(fit.predict(modes[i]) == doctest::Approx((y[2 * i] + y[2 * i + 1]) / 2).epsilon(1e-7));
  // Minimum norm: no component along the null space of the centred design (here the EMC axis).
  CHECK(std::fabs(fit.coef[3]) < 1e-9);
}

TEST_CASE("linear method recovers a linear ground truth exactly") {
  const Corpus c = synthetic_corpus("agx-orin", {}, {.seed = 3, .max_modes = 400, .linear_truth = true});
  // 6 training modes > 4 features + intercept - 1, so the fit is determined.
  auto p = run_prediction(c, linear_request("bert", {"resnet", "mobilenet", "lenet"}, 6, 10));
  REQUIRE(p.is_ok());
  CHECK(p->search->combinations == 210);
  CHECK(p->search->score < 1e-6);
  CHECK(p->held_out.size() == 394);
  CHECK(*p->time_mape_pct < 1e-7);
  const auto truth = synthetic_linear_coefficients();
  CHECK(p->time_model->coef[0] == doctest::Approx(truth[0]).epsilon(1e-7));
  CHECK(p->time_model->coef[1] == doctest::Approx(truth[1]).epsilon(1e-7));
  CHECK(p->time_model->coef[2] == doctest::Approx(truth[2]).epsilon(1e-7));
  CHECK(p->time_model->coef[3] == doctest::Approx(truth[3]).epsilon(1e-7));
  CHECK(p->time_model->intercept == doctest::Approx(truth[4]).epsilon(1e-7));
}

TEST_CASE("representative search: 10C4 on the paper's setting, and it rejects bad sizes") {
  const Corpus c = synthetic_corpus("agx-xavier", {}, {.noise_pct = 1, .max_modes = 10});
  std::vector<WorkloadData> refs;
  for (const char* w : {"resnet", "mobilenet", "lenet"}) refs.push_back(select_workload(c, {w, ""}, "--reference").value());
  auto pool = common_modes(refs);
  REQUIRE(pool.size() == 10);
  auto s = search_representative_modes(refs, pool, 4, LinearFeatures::kRaw, SearchCriterion::kRmse);
  REQUIRE(s.is_ok());
  CHECK(s->combinations == 210);
  CHECK(s->best.size() == 4);
  // The chosen set scores no worse than any other 4-subset (re-checked by brute force here).
  double best_other = 1e300;
  for (size_t a = 0; a < 10; ++a)
    for (size_t b = a + 1; b < 10; ++b)
      for (size_t cc = b + 1; cc < 10; ++cc)
        for (size_t d = cc + 1; d < 10; ++d) {
          double score = 0;
          for (const auto& w : refs) {
            auto m = fit_time_model(w, {pool[a], pool[b], pool[cc], pool[d]}, LinearFeatures::kRaw).value();
            double se = 0;
            for (const auto& mode : pool) {
              const double e = m.predict(time_features(mode, LinearFeatures::kRaw)) - w.find(mode)->minibatch_ms;
              se += e * e;
            }
            score += std::sqrt(se / pool.size());
          }
          best_other = std::min(best_other, score);
        }
  CHECK(s->score == doctest::Approx(best_other).epsilon(1e-9));
  CHECK_FALSE(search_representative_modes(refs, pool, 11, LinearFeatures::kRaw, SearchCriterion::kRmse).is_ok());
  CHECK_FALSE(search_representative_modes({}, pool, 4, LinearFeatures::kRaw, SearchCriterion::kRmse).is_ok());
}

TEST_CASE("inverse-frequency features beat the paper's raw features on a non-linear truth") {
  const Corpus c = synthetic_corpus("agx-orin", {}, {.noise_pct = 2, .max_modes = 600});
  PredictRequest req = linear_request("mobilenet", {"resnet", "yolo", "lenet"}, 6, 14);
  req.criterion = SearchCriterion::kMape;
  auto raw = run_prediction(c, req);
  req.features = LinearFeatures::kInverse;
  auto inv = run_prediction(c, req);
  REQUIRE(raw.is_ok());
  REQUIRE(inv.is_ok());
  MESSAGE("raw time MAPE " << *raw->time_mape_pct << "%, inverse " << *inv->time_mape_pct << "%");
  CHECK(*inv->time_mape_pct < *raw->time_mape_pct);
  CHECK(raw->energy_mape_pct.has_value());
  CHECK(raw->power_mape_pct.has_value());
}

// Comparison of two campaigns (common/compare.hpp): matching without repetition and requested device, epoch 0
// left out, null energy never invented, deltas, the unmatched configurations, and the JSON codec.
#include <doctest/doctest.h>

#include "common/compare.hpp"

using namespace jetsweep;
namespace bj = boost::json;

namespace {

api::ReportEpoch epoch(int64_t n, double e2e, std::optional<double> power, std::optional<double> energy) {
  api::ReportEpoch e;
  e.epoch = n;
  e.e2e_s = e2e;
  e.mean_power_w = power;
  e.energy_j = energy;
  return e;
}

// A run of lenet5/mnist with `batch` on a board of `cls`, repetition `rep`.
api::ReportRun run(int64_t id, const std::string& cls, int batch, int rep, std::vector<api::ReportEpoch> epochs,
                   bool simulated = false) {
  api::ReportRun r;
  r.run_id = id;
  r.status = "done";
  r.config = bj::object{{"model", "lenet5"}, {"dataset", "mnist"}, {"batch_size", batch}, {"repetition", rep},
                        {"device", "any"}, {"epochs", 3}};
  r.facts = bj::object{{"device_class", cls}, {"backend", simulated ? "sim" : "jetson"}};
  r.simulated = simulated;
  r.epochs = std::move(epochs);
  return r;
}

api::CampaignReport report(int64_t id, std::vector<api::ReportRun> runs) {
  api::CampaignReport r;
  r.campaign = {id, "c" + std::to_string(id), "", "c.yaml", "2024-06-04 12:00:00+00"};
  for (const auto& x : runs) {
    r.simulated_runs += x.simulated ? 1 : 0;
    for (const auto& e : x.epochs) r.power_sensor = r.power_sensor || e.energy_j.has_value();
  }
  r.runs = std::move(runs);
  return r;
}

}  // namespace

TEST_CASE("compare: repetitions pooled, epoch 0 excluded, deltas B - A, unmatched listed") {
  // A: two repetitions of bs16 on agx-orin, one bs64 run; B: bs16 on agx-orin, bs16 on nano.
  const auto a = report(1, {run(1, "agx-orin", 16, 0, {epoch(0, 100, 10, 1000), epoch(1, 10, 10, 100), epoch(2, 12, 10, 120)}),
                            run(2, "agx-orin", 16, 1, {epoch(0, 90, 10, 900), epoch(1, 14, 12, 168)}),
                            run(3, "agx-orin", 64, 0, {epoch(0, 5, 10, 50)})});
  const auto b = report(6, {run(7, "agx-orin", 16, 0, {epoch(0, 50, 5, 250), epoch(1, 9, 15, 135), epoch(2, 9, 15, 135)}),
                            run(8, "nano", 16, 0, {epoch(0, 50, 5, 250), epoch(1, 30, 5, 150)}, true)});
  const api::CampaignComparison c = api::compare_campaigns(a, b);
  REQUIRE(c.configurations.size() == 1);
  const api::ComparedConfig& m = c.configurations[0];
  CHECK(m.a.runs == 2);
  CHECK(m.a.run_ids == std::vector<int64_t>{1, 2});
  CHECK(m.a.epochs == 3);   // epochs 1+ of both repetitions; the warm-ups (100 s, 90 s) left out
  CHECK(*m.a.mean_epoch_s == doctest::Approx(12.0));
  CHECK(*m.a.mean_power_w == doctest::Approx(32.0 / 3));
  CHECK(*m.a.energy_per_epoch_j == doctest::Approx(388.0 / 3));
  CHECK(*m.b.mean_epoch_s == doctest::Approx(9.0));
  CHECK(*m.mean_epoch_s.abs == doctest::Approx(-3.0));
  CHECK(*m.mean_epoch_s.pct == doctest::Approx(-25.0));
  CHECK(m.config.at("board_class") == "agx-orin");
  CHECK_FALSE(m.config.contains("repetition"));
  CHECK_FALSE(m.config.contains("device"));
  CHECK(m.label == "agx-orin lenet5/mnist batch_size=16");
  REQUIRE(c.only_a.size() == 1);
  CHECK(c.only_a[0].figures.runs == 1);
  CHECK_FALSE(c.only_a[0].figures.mean_epoch_s.has_value());   // it has only a warm-up epoch
  REQUIRE(c.only_b.size() == 1);
  CHECK(c.only_b[0].label == "nano lenet5/mnist batch_size=16");
  CHECK(c.only_b[0].figures.simulated);
  CHECK(c.b.simulated_runs == 1);
  CHECK(c.a.runs == 3);
}

TEST_CASE("compare: no power sensor gives null power, energy and deltas, never an estimate") {
  const auto a = report(1, {run(1, "host", 16, 0, {epoch(0, 9, std::nullopt, std::nullopt), epoch(1, 8, std::nullopt, std::nullopt)})});
  const auto b = report(2, {run(2, "host", 16, 0, {epoch(0, 9, 5, 40), epoch(1, 4, 5, 20), epoch(2, 4, std::nullopt, std::nullopt)})});
  const auto c = api::compare_campaigns(a, b);
  REQUIRE(c.configurations.size() == 1);
  const auto& m = c.configurations[0];
  CHECK_FALSE(m.a.mean_power_w.has_value());
  CHECK_FALSE(m.a.energy_per_epoch_j.has_value());
  CHECK_FALSE(m.b.energy_per_epoch_j.has_value());   // one epoch 1+ lacks energy: no mean over the others
  CHECK_FALSE(m.energy_per_epoch_j.abs.has_value());
  CHECK_FALSE(m.energy_per_epoch_j.pct.has_value());
  CHECK(*m.mean_epoch_s.pct == doctest::Approx(-50.0));
  CHECK_FALSE(c.a.power_sensor);
  const auto zero = api::figure_delta(0.0, 3.0);
  CHECK(*zero.abs == 3.0);
  CHECK_FALSE(zero.pct.has_value());
}

TEST_CASE("compare: 'any' runs are matched by the class that ran them, not pooled across classes") {
  const auto a = report(1, {run(1, "nano", 16, 0, {epoch(1, 30, 5, 150)}), run(2, "agx-orin", 16, 0, {epoch(1, 3, 15, 45)})});
  const auto c = api::compare_campaigns(a, a);
  CHECK(c.configurations.size() == 2);
  CHECK(c.configurations[0].label == "nano lenet5/mnist");
  CHECK(c.only_a.empty());
  CHECK(c.only_b.empty());
  CHECK(*c.configurations[0].mean_epoch_s.abs == 0.0);
  // A run not assigned yet is keyed by the device it asked for.
  api::ReportRun queued = run(3, "x", 16, 0, {});
  queued.facts.reset();
  CHECK(api::comparison_config(queued).at("board_class") == "any");
}

TEST_CASE("compare: the JSON round-trips with its field names and nulls; bad JSON names the field") {
  const auto a = report(1, {run(1, "agx-orin", 16, 0, {epoch(1, 10, std::nullopt, std::nullopt)})});
  const auto b = report(2, {run(2, "agx-orin", 16, 0, {epoch(1, 8, 5, 40)}), run(3, "nano", 8, 0, {})});
  const auto c = api::compare_campaigns(a, b);
  const bj::object json = api::to_json(c);
  CHECK(json.at("warmup_epochs_excluded") == 1);
  CHECK(json.at("match_keys_excluded").as_array().size() == 2);
  const auto& m = json.at("configurations").as_array()[0].as_object();
  CHECK(m.at("a").at("energy_per_epoch_j").is_null());
  CHECK(m.at("delta").at("mean_epoch_s").at("pct").as_double() == doctest::Approx(-20.0));
  CHECK(m.at("delta").at("energy_per_epoch_j").at("abs").is_null());
  CHECK(json.at("only_b").as_array()[0].at("figures").at("mean_epoch_s").is_null());
  auto back = api::decode<api::CampaignComparison>(bj::value(json), "comparison");
  REQUIRE(back.is_ok());
  CHECK(api::to_json(back.value()) == json);
  bj::value broken = json;
  broken.at("configurations").as_array()[0].as_object().at("b").as_object().erase("runs");
  auto bad = api::decode<api::CampaignComparison>(broken, "comparison");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "comparison field 'configurations'[0] field 'b' field 'runs': missing");
}

TEST_CASE("data fingerprints: runs of one dataset on different bytes are flagged by name, boards and counts") {
  const std::string f1(64, '1'), f2(64, '2');
  // Agreement, and nothing recorded at all (a simulated fleet), say nothing.
  CHECK(dataset_fingerprint_warnings({{"mnist", f1, "orin-1"}, {"mnist", f1, "orin-2"}}).empty());
  CHECK(dataset_fingerprint_warnings({{"mnist", "", "sim-1"}, {"mnist", "", "sim-2"}}).empty());
  // Two datasets with their own fingerprints are not a mismatch.
  CHECK(dataset_fingerprint_warnings({{"mnist", f1, "orin-1"}, {"cifar10", f2, "orin-1"}}).empty());
  const auto w = dataset_fingerprint_warnings(
      {{"mnist", f1, "orin-1"}, {"mnist", f1, "orin-1"}, {"mnist", f1, "orin-2"}, {"mnist", f2, "orin-3"}});
  REQUIRE(w.size() == 1);
  CHECK(w[0] == "dataset 'mnist': its runs trained on different data (2 fingerprints): 111111111111 on orin-1, "
                "orin-2 (3 runs); 222222222222 on orin-3 (1 run)");
  const auto unproven = dataset_fingerprint_warnings({{"mnist", f1, "orin-1"}, {"mnist", "", "old-agent"}});
  REQUIRE(unproven.size() == 1);
  CHECK(unproven[0] == "dataset 'mnist': 1 of 2 runs recorded no fingerprint (on old-agent: simulated boards or older "
                       "agents), so the same data is not proven");
  // Many boards: five named, the rest counted.
  std::vector<DataSeen> many{{"mnist", f2, "odd"}};
  for (int i = 0; i < 8; ++i) many.push_back({"mnist", f1, "b" + std::to_string(i)});
  CHECK(dataset_fingerprint_warnings(many).at(0).find("on b0, b1, b2, b3, b4 and 3 more (8 runs)") != std::string::npos);
}

TEST_CASE("compare: boards that trained on different data are flagged across both campaigns, and the flag travels") {
  auto with_data = [](api::ReportRun r, const std::string& agent, const std::string& fingerprint) {
    r.agent = agent;
    r.workload = bj::object{{"dataset_fingerprint", fingerprint}, {"parameters", 61706}};
    return r;
  };
  const std::string f1(64, 'a'), f2(64, 'b');
  const auto a = report(1, {with_data(run(1, "agx-orin", 16, 0, {epoch(1, 10, 10, 100)}), "orin-1", f1)});
  const auto same = report(2, {with_data(run(2, "agx-orin", 16, 0, {epoch(1, 11, 10, 110)}), "orin-2", f1)});
  CHECK(api::compare_campaigns(a, same).data_warnings.empty());
  const auto other = report(3, {with_data(run(3, "agx-orin", 16, 0, {epoch(1, 11, 10, 110)}), "orin-2", f2)});
  const api::CampaignComparison c = api::compare_campaigns(a, other);
  REQUIRE(c.data_warnings.size() == 1);
  CHECK(c.data_warnings[0] == "dataset 'mnist': its runs trained on different data (2 fingerprints): aaaaaaaaaaaa on "
                              "A: orin-1 (1 run); bbbbbbbbbbbb on B: orin-2 (1 run)");
  // A run with epochs but no workload (an agent older than the field): its data is not proven the same.
  auto old = report(4, {run(4, "agx-orin", 16, 0, {epoch(1, 11, 10, 110)})});
  old.runs[0].agent = "old-agent";
  const auto mixed = api::compare_campaigns(a, old).data_warnings;
  REQUIRE(mixed.size() == 1);
  CHECK(mixed[0].find("1 of 2 runs recorded no fingerprint (on B: old-agent") != std::string::npos);
  // A run that never started (no epochs, no workload) is not counted.
  CHECK(api::compare_campaigns(a, report(5, {run(5, "agx-orin", 16, 0, {})})).data_warnings.empty());
  api::CampaignComparison back;
  REQUIRE(api::from_json(bj::value(api::to_json(c)), "comparison", back).is_ok());
  CHECK(back.data_warnings == c.data_warnings);
}

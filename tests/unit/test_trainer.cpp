#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "agent/models/registry.hpp"
#include "agent/profile.hpp"
#include "agent/run_executor.hpp"
#include "agent/storage/disk_stats.hpp"
#include "agent/trainer.hpp"
#include "common/campaign.hpp"
#include "support/dataset_gen.hpp"
#include "support/collecting_sink.hpp"
#include "support/run_checks.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::testing::CollectingSink;

namespace {

RunConfig mnist_run(const std::string& data, int64_t epochs) {
  RunConfig c;
  c.dataset = "mnist";
  c.data = data;
  c.epochs = epochs;
  return c;
}

// Executes `c` as run `run_id` on the host backend; `sink` keeps what it emits.
proto::RunFinished run_on_host(int64_t run_id, const RunConfig& c, CollectingSink& sink, bool cancelled = false) {
  RunExecutor executor("/");
  std::atomic<bool> cancel{cancelled};
  return executor.execute(run_id, c, sink, cancel);
}

}  // namespace

TEST_CASE("LeNet-5 has the paper's ~60k parameters (61,706 for 1x28x28, 10 classes)") {
  CHECK(models::parameter_count("lenet5", models::InputSpec::image(1, 28, 28, 10)).value() == 61706);
}

TEST_CASE("a run on generated IDX data emits minibatches, epochs, samples and run_finished") {
  testing::TempDir dir;
  testing::write_idx_dataset(dir.str(), 200, true);
  RunConfig c = testing::make_run("lenet5", "mnist", 16, 2, 2);
  c.data = dir.str();
  c.prefetch = 2;
  c.threads = 1;
  c.seed = 5;
  CollectingSink sink;
  auto fin = run_on_host(42, c, sink);
  CHECK(fin.status == "done");
  CHECK(fin.error.empty());

  int64_t minibatch_rows = 0;
  std::vector<proto::EpochResult> epochs;
  size_t samples = 0;
  for (const auto& m : sink.messages) {
    if (const auto* mb = std::get_if<proto::MinibatchChunk>(&m)) {
      CHECK(mb->run_id == 42);
      minibatch_rows += static_cast<int64_t>(mb->stall_s.size());
      for (size_t i = 0; i < mb->stall_s.size(); ++i) {
        CHECK(mb->stall_s[i] >= 0);
        CHECK(mb->compute_s[i] > 0);
      }
    } else if (const auto* e = std::get_if<proto::EpochResult>(&m)) {
      epochs.push_back(*e);
    } else if (const auto* s = std::get_if<proto::SampleChunk>(&m)) {
      samples += s->samples.size();
    }
  }
  CHECK(std::holds_alternative<proto::RunFinished>(sink.messages.back()));
  REQUIRE(epochs.size() == 2);
  CHECK(minibatch_rows == 2 * 13);  // ceil(200 / 16) per epoch
  for (const auto& e : epochs) {
    CHECK(e.minibatches == 13);
    CHECK(e.e2e_s >= e.compute_s);
    REQUIRE(e.loss.has_value());
    CHECK(std::isfinite(*e.loss));
    // No power sensor on this machine: energy must be null, not a guess.
    if (!RunExecutor("/").has_power_sensor()) CHECK_FALSE(e.energy_j.has_value());
  }
  CHECK(*epochs[1].loss < *epochs[0].loss);  // it learns the label-dependent brightness
  // Page-cache residency of the two IDX files: just written, so resident at the end of each epoch.
  for (const auto& e : epochs) {
    REQUIRE(e.cache_start_frac.has_value());
    REQUIRE(e.cache_end_frac.has_value());
    CHECK(*e.cache_end_frac > 0.5);
    CHECK(*e.cache_end_frac <= 1.0);
    // Read IO of the device backing the data: measured when the temp dir is on a block device.
    CHECK(e.read_mb_s.has_value() == storage::block_device_for(dir.str()).is_ok());
    if (e.read_mb_s) CHECK(*e.read_iops >= 0);
  }
  CHECK(samples >= 3);                     // start plus epoch boundaries at least
}

TEST_CASE("a missing dataset fails the run with the path in the error") {
  CollectingSink sink;
  auto fin = run_on_host(1, mnist_run("/nonexistent/mnist", 1), sink);
  CHECK(fin.status == "failed");
  CHECK(fin.error.find("/nonexistent/mnist/train-images-idx3-ubyte") != std::string::npos);
  REQUIRE(sink.messages.size() == 1);
}

TEST_CASE("cancellation ends the run as cancelled") {
  testing::TempDir dir;
  testing::write_idx_dataset(dir.str(), 64, false);
  RunConfig c = mnist_run(dir.str(), 5);
  c.workers = 0;
  CollectingSink sink;
  auto fin = run_on_host(1, c, sink, /*cancelled=*/true);
  CHECK(fin.status == "cancelled");
}

TEST_CASE("standalone JSON lines: one object per line with the epoch fields") {
  std::ostringstream out;
  JsonLinesSink sink(out);
  proto::EpochResult e;
  e.epoch = 1;
  e.e2e_s = 2.5;
  e.stall_s = 0.5;
  e.compute_s = 1.5;
  e.minibatches = 10;
  e.loss = 0.3;
  e.cache_start_frac = 0.25;
  sink.emit(e);
  auto v = boost::json::parse(out.str()).as_object();
  CHECK(v.at("type") == "epoch");
  CHECK(v.at("epoch") == 1);
  CHECK(v.at("minibatches") == 10);
  CHECK(v.at("energy_j").is_null());
  CHECK(v.at("cache_start_frac").as_double() == 0.25);
  CHECK_FALSE(v.contains("version"));
}

TEST_CASE("profiling mode on the host backend: real training, one row per run, no invented power") {
  testing::TempDir dir;
  testing::write_idx_dataset(dir.str(), 400, false);
  auto campaign = parse_campaign("campaign: p\nmatrix:\n  model: lenet5\n  dataset: mnist\n  data: " + dir.str() +
                                     "\n  batch_size: [8, 16]\n  workers: 0\n",
                                 "p.yaml");
  REQUIRE(campaign.is_ok());
  auto executor = RunExecutor::open(ExecutorOptions{});
  REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
  std::ostringstream csv;
  CHECK(profile_modes(**executor, "host", campaign->runs, ProfileOptions{12, 5, 3.0}, csv) == 0);
  std::istringstream lines(csv.str());
  std::string header, row;
  std::getline(lines, header);
  int rows = 0;
  while (std::getline(lines, row)) {
    ++rows;
    CHECK(row.rfind("host,lenet5/mnist,,,,,", 0) == 0);
    if (!(*executor)->has_power_sensor()) CHECK(row.find(",,11,,") != std::string::npos);  // no power: empty, 11 counted
  }
  CHECK(rows == 2);
}

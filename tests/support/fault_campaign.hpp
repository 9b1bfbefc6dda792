// Shared by the fault tests (ctest label "fault"): a campaign written into a Fleet's directory, submitted once
// enough agents are connected and followed until it is under way, and the exact-count check of a finished
// campaign (every run done exactly once, every epoch and minibatch row present once). Single-threaded.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "support/fleet.hpp"

namespace jetsweep::testing {

// Images in the generated dataset of every fault campaign.
inline constexpr int64_t kFaultSamples = 200;

// Writes the dataset (kFaultSamples images, in "data") and the campaign `name` over it (campaign_yaml's
// batch sizes, workers and epochs) into the fleet's directory; returns the campaign file.
inline std::filesystem::path write_fault_campaign(const Fleet& fleet, const std::string& name,
                                                  const std::string& batch_sizes, const std::string& workers,
                                                  int epochs) {
  const std::string data = (fleet.dir() / "data").string();
  write_idx_dataset(data, kFaultSamples, false);
  const std::filesystem::path file = fleet.dir() / (name + ".yaml");
  write_file(file, campaign_yaml(name, data, batch_sizes, workers, epochs));
  return file;
}

// Waits for `agents` connected agents, submits `file` and waits until `min_epochs` epoch rows have landed;
// returns the campaign id.
inline int64_t submit_under_way(Fleet& fleet, const TestDatabase& db, size_t agents, const std::filesystem::path& file,
                                int64_t min_epochs) {
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(agents); }), fleet.logs());
  const int64_t id = submit(fleet, file);
  REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= min_epochs; }),
                  fleet.logs());
  return id;
}

// Exact counts for a finished campaign of `runs` runs x `epochs` epochs, with
// `minibatches_per_epoch_all_runs` minibatches in one epoch of all runs together.
inline void check_exactly_once(const TestDatabase& db, int64_t runs, int64_t epochs,
                               int64_t minibatches_per_epoch_all_runs) {
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == runs);
  CHECK(db.count("SELECT count(*) FROM runs") == runs);
  CHECK(db.count("SELECT count(*) FROM epochs") == runs * epochs);
  CHECK(db.count("SELECT count(*) FROM (SELECT run_id, epoch FROM epochs GROUP BY run_id, epoch) e") == runs * epochs);
  CHECK(db.count("SELECT count(*) FROM minibatches") == epochs * minibatches_per_epoch_all_runs);
  CHECK(db.count("SELECT count(*) FROM epochs e WHERE e.minibatches <> (SELECT count(*) FROM minibatches m "
                 "WHERE m.run_id = e.run_id AND m.epoch = e.epoch)") == 0);
  // The statistics kept at ingest (sql/016) count every minibatch once, whatever was resent.
  CHECK(db.count("SELECT count(*) FROM epochs WHERE mb_recorded <> minibatches OR minibatch_mean_ms IS NULL") == 0);
}

}  // namespace jetsweep::testing

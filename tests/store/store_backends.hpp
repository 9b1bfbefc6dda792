// The two Stores the conformance suite holds to one contract (issue 32): MemoryStore on a ManualClock and PgStore on
// a fresh database made by the real migrations, both with two attempts per run. Each test is a doctest
// TEST_CASE_TEMPLATE over kStores; it talks to the store through controller::Store only, and reads back through the
// Store's own queries (run_detail, campaign_report, run_samples, list_agents). The one thing no query shows, a run's
// minibatch rows, each backend counts by its own means. One test thread.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/campaign.hpp"
#include "controller/memory_store.hpp"
#include "controller/pg_store.hpp"
#include "support/ingest_outcome_checks.hpp"
#include "support/manual_clock.hpp"
#include "support/test_database.hpp"

namespace jetsweep::testing {

inline constexpr int kConformanceAttempts = 2;

// MemoryStore; its leases run on a ManualClock that pass() moves.
struct MemoryBackend {
  static constexpr bool kPostgres = false;
  ManualClock clock;
  controller::MemoryStore store{kConformanceAttempts, [this] { return clock.now(); }};
  void pass(double seconds) { clock.advance(seconds); }
  int64_t minibatch_rows(int64_t run_id) const { return store.minibatch_rows(run_id); }
};

// PgStore on its own database; leases run on the database's clock, so pass() lets real seconds pass (a clock, not a
// synchronisation: nothing runs concurrently).
struct PgBackend {
  static constexpr bool kPostgres = true;
  PgBackend() { REQUIRE(store.migrate().is_ok()); }
  TestDatabase db;
  controller::PgStore store{db.dsn(), kConformanceAttempts};
  void pass(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }
  int64_t minibatch_rows(int64_t run_id) const {
    return db.count("SELECT count(*) FROM minibatches WHERE run_id = " + std::to_string(run_id));
  }
};

// A host agent's registration (OutcomeFixture's), of board class `device_class`.
inline proto::Register conformance_agent(const std::string& name, const std::string& device_class = "host") {
  proto::Register reg = OutcomeFixture::host_agent(name);
  reg.facts.device_class = device_class;
  return reg;
}

// What the tests do to either store, through the Store interface.
template <class Backend>
struct StoreCase : Backend {
  controller::Store& s() { return this->store; }

  // Registers `name` on first contact (its fresh credential is all `fill`).
  int64_t agent(const std::string& name, const std::string& cls = "host", char fill = 'a') {
    auto r = s().register_agent(conformance_agent(name, cls), controller::AgentProof{std::nullopt, std::string(64, fill)});
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return r->agent_id;
  }
  int64_t campaign(const std::string& yaml) {
    auto c = parse_campaign(yaml, "test.yaml");
    REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
    auto created = s().create_campaign(c.value(), "test.yaml", yaml, "");
    REQUIRE_MESSAGE(created.is_ok(), created.status().to_string());
    return created->campaign_id;
  }
  std::optional<int64_t> claim(int64_t agent_id, const std::string& cls = "host") {
    auto a = s().claim_run(agent_id, cls, "");
    REQUIRE_MESSAGE(a.is_ok(), a.status().to_string());
    if (!a.value()) return std::nullopt;
    return a.value()->run_id;
  }
  // The campaign's run ids, ascending (the order a campaign's runs are queued in).
  std::vector<int64_t> run_ids(int64_t campaign_id) {
    auto report = s().campaign_report(campaign_id, controller::ReportEpochs::kSummaryOnly);
    REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
    std::vector<int64_t> ids;
    for (const auto& r : report->runs) ids.push_back(r.run_id);
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  api::ReportRun run(int64_t run_id) {
    auto d = s().run_detail(run_id);
    REQUIRE_MESSAGE(d.is_ok(), d.status().to_string());
    return static_cast<const api::ReportRun&>(*d);
  }
  std::string status(int64_t run_id) { return run(run_id).status; }
  size_t epoch_rows(int64_t run_id) { return run(run_id).epochs.size(); }
  size_t sample_rows(int64_t run_id) {
    auto samples = s().run_samples(run_id);
    REQUIRE_MESSAGE(samples.is_ok(), samples.status().to_string());
    return samples->size();
  }
  // Campaign `yaml`, agent host-1 that claimed its first run.
  void start(const std::string& yaml) {
    c = campaign(yaml);
    host = agent("host-1");
    runs = run_ids(c);
    REQUIRE(claim(host) == runs.at(0));
  }
  int64_t c = 0, host = 0;
  std::vector<int64_t> runs;
};

inline const char* const kOneRun = "campaign: c\nmatrix: {model: lenet5, dataset: mnist, device: host}\n";
inline const char* const kTwoRuns =
    "campaign: c\nmatrix: {model: lenet5, dataset: mnist, device: host, batch_size: [8, 16]}\n";

inline proto::EpochResult conformance_epoch(int64_t run_id, int64_t epoch, double e2e_s = 1) {
  proto::EpochResult e;
  e.run_id = run_id;
  e.epoch = epoch;
  e.e2e_s = e.compute_s = e2e_s;
  e.minibatches = 1;
  return e;
}

}  // namespace jetsweep::testing

TYPE_TO_STRING(jetsweep::testing::MemoryBackend);
TYPE_TO_STRING(jetsweep::testing::PgBackend);

// The stores every conformance test runs against.
#define JETSWEEP_STORES jetsweep::testing::MemoryBackend, jetsweep::testing::PgBackend

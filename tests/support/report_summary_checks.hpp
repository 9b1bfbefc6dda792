// A report asked for without its epoch rows (Store::campaign_report with ReportEpochs::kSummaryOnly, the API's
// ?epochs=none) carries for each run the summary api::summarize_epochs makes of the rows, to the last bit, and no
// rows. Run against MemoryStore and PgStore (tests/store), which summarises in SQL.
// One test thread.
#pragma once

#include <doctest/doctest.h>

#include "support/ingest_outcome_checks.hpp"

namespace jetsweep::testing {

inline void check_report_summaries(controller::Store& store) {
  OutcomeFixture f(store);
  const int64_t run1 = f.claim(f.a);
  const int64_t run2 = f.claim(f.b);
  // Figures whose sums depend on the order they are added in, energy missing from one epoch of run 2, throttled
  // epochs with and without a reason, epochs arriving out of order.
  for (int64_t n : {3, 0, 1, 4, 2, 5}) {
    proto::EpochResult e = OutcomeFixture::epoch(run1, n, 0.1 + n / 3.0 + (n % 2 ? 1e16 : 0));
    e.energy_j = 1.0 / (n + 7);
    e.power_coverage = 1.0;
    e.minibatches = 10 + n;
    REQUIRE(store.ingest_epoch(f.a, e).is_ok());
    proto::EpochResult g = OutcomeFixture::epoch(run2, n, 2.0 / (n + 3));
    if (n != 3) g.energy_j = 0.7 * n;
    g.throttled = n == 2 || n == 4;
    g.throttle_reason = n == 4 ? "GPU clock 624750000 Hz, applied 918000000 Hz" : "";
    REQUIRE(store.ingest_epoch(f.b, g).is_ok());
  }
  auto rows = store.campaign_report(f.campaign, controller::ReportEpochs::kRows);
  auto summary = store.campaign_report(f.campaign, controller::ReportEpochs::kSummaryOnly);
  REQUIRE_MESSAGE(rows.is_ok(), rows.status().to_string());
  REQUIRE_MESSAGE(summary.is_ok(), summary.status().to_string());
  CHECK(rows->epochs_included);
  CHECK_FALSE(summary->epochs_included);
  CHECK(summary->power_sensor == rows->power_sensor);
  CHECK(summary->power_sensor);
  REQUIRE(rows->runs.size() == 2);
  REQUIRE(summary->runs.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const api::RunEpochSummary& want = rows->runs[i].summary;
    const api::RunEpochSummary& got = summary->runs[i].summary;
    CAPTURE(rows->runs[i].run_id);
    CHECK(summary->runs[i].run_id == rows->runs[i].run_id);
    CHECK(rows->runs[i].epochs.size() == 6);
    CHECK(summary->runs[i].epochs.empty());
    CHECK(boost::json::serialize(api::to_json(got)) == boost::json::serialize(api::to_json(want)));
    CHECK(boost::json::serialize(api::to_json(want)) ==
          boost::json::serialize(api::to_json(api::summarize_epochs(rows->runs[i].epochs))));
    // Bit for bit, not only as printed.
    CHECK(got.later_e2e_s == want.later_e2e_s);
    CHECK(got.later_stall_s == want.later_stall_s);
    CHECK(got.later_compute_s == want.later_compute_s);
    CHECK(got.later_energy_j == want.later_energy_j);
  }
  const api::RunEpochSummary& s1 = summary->runs[0].summary;
  CHECK(s1.epochs == 6);
  CHECK(s1.later_epochs == 5);
  CHECK(s1.minibatches == 15);
  CHECK(s1.e0_e2e_s == doctest::Approx(0.1));
  CHECK(s1.later_energy_j.has_value());
  const api::RunEpochSummary& s2 = summary->runs[1].summary;
  CHECK_FALSE(s2.later_energy_j.has_value());   // epoch 3 has none
  CHECK(s2.throttled_epochs == 2);
  CHECK(s2.first_throttle == std::optional<std::string>("epoch 2: -"));
}

}  // namespace jetsweep::testing

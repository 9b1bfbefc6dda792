// Every nullable column read safely (issue 12): one doctest SUBCASE per nullable column of sql/001..013 (and per
// view column that is NULL through an expression), each storing NULL there and reading it back through every
// read path: the Store queries behind the HTTP API (report, status, campaign list, agents, estimate inputs,
// cancel-run, runs to stop), their JSON as the CLI reads it (api::from_json) and renders it (`jetsweep report`,
// `status`), and the analysis database source (`jetsweep analyze --db`, `export --db`, `export --per-epoch`).
// The check: no error, and the value comes back absent (empty optional / JSON null / empty CSV cell), or as the
// documented fallback of a view (named below), never as 0 or garbage.
//
// Nullable columns (after sql/013) and the code that reads them:
//   agents.clock_offset_s     pg_queries.cpp kReportEpochsSql (coalesce 0: start/end_unix_s), views analysis_epochs
//                             and samples_aligned (coalesce 0) -> analysis/db_source.cpp start_unix_s
//   agents.clock_rtt_s        pg_store.cpp record_clock (WHERE clock_rtt_s IS NULL OR ...)
//   agents.clock_measured_at  pg_store.cpp record_clock (WHERE ... OR clock_measured_at < now() - 10 min)
//   agents.away_until         pg_dispatch.cpp requeue_orphaned_runs (IS NULL OR < now()), pg_store.cpp list_agents
//                             (rebooting_until)
//   agents.tables             pg_campaigns.cpp enrolled_facts (no tables: the papers' BSP, settings unchecked)
//   board_reboots.tpc_pg_mask_from/_to, fbp_pg_mask_from/_to   read by no code (the report counts the rows)
//   runs.agent_id             pg_queries.cpp report (LEFT JOIN agents: agent), pg_dispatch.cpp cancel_run (agent),
//                             runs_to_stop (IS NOT NULL), pg_store.cpp list_agents (current_run), pg_campaigns.cpp
//                             estimate_inputs (JOIN: unowned epochs not counted), views (instance, clock offset)
//   runs.facts                pg_queries.cpp report (facts, simulated), analysis_runs (device_class, backend,
//                             simulated, instance, software) -> db_source.cpp
//   runs.assigned_at          read by no code
//   runs.started_at           pg_queries.cpp kStatusSql (wall seconds per epoch -> eta_s)
//   runs.finished_at          pg_queries.cpp kStatusSql (coalesce(finished_at, now()))
//   runs.wall_s               pg_queries.cpp report
//   runs.agent_t0_unix_s      pg_queries.cpp report (start/end_unix_s), analysis_epochs -> db_source.cpp
//   runs.storage              pg_queries.cpp report (storage_medium) and unrunnable(), pg_dispatch.cpp claim_run,
//                             analysis_runs (coalesce with config data, 'default') -> db_source.cpp
//   runs.applied              pg_queries.cpp report (applied; CLI label), analysis_runs (mode columns, pin_clocks,
//                             fan from the config instead) -> db_source.cpp
//   runs.reference_state      pg_queries.cpp report, analysis_runs (coalesce: no power mode in the config)
//   runs.storage_device       pg_queries.cpp report, analysis_runs (coalesce '') -> db_source.cpp
//   runs.page_cache_dropped   pg_queries.cpp report, analysis_runs -> db_source.cpp
//   runs.compute_device       pg_queries.cpp report (CLI "trained on"), analysis_runs (compute, compute_device)
//   runs.workload             pg_queries.cpp report (CLI "DATA:" flags), analysis_runs (dataset_fingerprint,
//                             parameters, forward_macs) -> db_source.cpp, the per-epoch export
//   runs.claim_key            pg_dispatch.cpp claim_run (a retried claim's run: WHERE claim_key = $2 never matches NULL)
//   campaigns.request_key     pg_campaigns.cpp create_campaign (a retried submission: WHERE request_key = $1 likewise)
//   epochs.energy_j           pg_queries.cpp report (+ power_sensor), analysis_epochs/_run_profile/_mode_profile
//   epochs.mean_power_w       pg_queries.cpp report, analysis_epochs power_w (fallback energy_j / e2e_s)
//   epochs.loss               pg_queries.cpp report (finding 2 of the issue)
//   epochs.read_mb_s, read_iops, cache_start_frac, cache_end_frac     pg_queries.cpp report
//   epochs.t_start_s, t_end_s, power_coverage   pg_queries.cpp report (+ start/end_unix_s), analysis_epochs
//   epochs.cores_, cpu_khz_, gpu_hz_, emc_hz_ start/end   pg_queries.cpp report (clocks_start / clocks_end)
//   epochs.copy_s             analysis_epochs -> db_source.cpp
//   minibatches.copy_s        read by no code (nor is view samples_aligned)
//   samples.cpu_freq_mhz, power_w, temp_max_c   pg_queries.cpp run_samples (GET /api/runs/ID/samples)
// View columns NULL through expressions, read by analysis/db_source.cpp: analysis_runs.dataset, batch_size, workers,
// prefetch (config keys absent), mode_name/cores/cpu_mhz/gpu_mhz/emc_mhz (runs.applied), analysis_epochs.minibatch_ms
// (no minibatch rows, 0 minibatches), power_w, analysis_mode_profile.power_mw, energy_j (no energy, no power). Config
// text read by pg_campaigns.cpp estimate_inputs (model, dataset, batch_size) uses c_str(): NULL reads as "" (absent).
#include "integration/pg_nullable_fixture.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;

namespace {

// One nullable column: the statement that stores NULL there and what every read path must give back.
struct NullableColumn {
  std::string name;
  std::string null_sql;
  std::function<void(const Reads&, Populated&)> check;
};

// An epochs column the report carries as an optional number (`field`), and the per-epoch export (`csv`, or null).
NullableColumn report_epoch_column(const char* name, const char* sql, std::optional<double> api::ReportEpoch::*field,
                                   const char* wire_key, const char* csv) {
  return {name, sql, [=](const Reads& r, Populated&) {
            for (const auto& e : epochs_of(r)) CHECK_FALSE((e.*field).has_value());
            CHECK(absent(wire_epoch(r), wire_key));
            if (csv) CHECK(csv_empty(r.epoch_csv, csv));
          }};
}

// One of the epoch's minibatch statistics (sql/016): without it the report carries none of them (never a
// partial set), and the minibatch time analyses use is its own column.
NullableColumn stats_column(const char* name) {
  const std::string column = std::string(name).substr(std::string("epochs.").size());
  return {name, "UPDATE epochs SET " + column + " = NULL", [](const Reads& r, Populated&) {
            for (const auto& e : epochs_of(r)) CHECK_FALSE(e.minibatch_stats.has_value());
            CHECK(absent(wire_epoch(r), "minibatch_stats"));
            for (const auto& e : r.corpus.epochs) CHECK(e.minibatch_ms == std::optional<double>(4500.0));
          }};
}

// An epochs window column (t_start_s or t_end_s): absent, and so is its time on the controller's clock.
NullableColumn window_column(const char* name, const char* sql, bool start) {
  return {name, sql, [=](const Reads& r, Populated&) {
            for (const auto& e : epochs_of(r)) CHECK_FALSE((start ? e.t_start_s || e.start_unix_s : e.t_end_s || e.end_unix_s));
            CHECK(absent(wire_epoch(r), start ? "t_start_s" : "t_end_s"));
            for (const auto& e : r.corpus.epochs)
              CHECK_FALSE((start ? e.t_start_s || e.start_unix_s : e.t_end_s || e.end_unix_s));
            CHECK(csv_empty(r.epoch_csv, start ? "t_start_s" : "t_end_s"));
            CHECK(csv_empty(r.epoch_csv, start ? "start_unix_s" : "end_unix_s"));
          }};
}

// An epochs clock column: the epoch's clocks are still reported (the others were read), this one absent.
NullableColumn clock_column(const char* name, const char* sql, bool start, std::optional<double> api::EpochClocks::*field) {
  return {name, sql, [=](const Reads& r, Populated&) {
            for (const auto& e : epochs_of(r)) {
              const auto& clocks = start ? e.clocks_start : e.clocks_end;
              REQUIRE(clocks.has_value());
              CHECK_FALSE(((*clocks).*field).has_value());
              CHECK((*clocks).emc_hz.has_value() != (field == &api::EpochClocks::emc_hz));
            }
          }};
}

const api::ReportEpoch& first_epoch(const Reads& r) { return r.report.runs[0].epochs[0]; }
const analysis::EpochSample& first_sample(const Reads& r) { return r.corpus.epochs[0]; }

// A reboot whose masks were not read (a board that shows none): the reboot is counted, the masks read by no code.
NullableColumn board_reboot_masks(const char* name) {
  return {name,
          "INSERT INTO board_reboots (run_id, agent_id, requested_unix_s, mode_name, nvpmodel_id, expected_back_s) "
          "SELECT id, agent_id, 1763770000.5, 'MAXN', 0, 600 FROM runs WHERE agent_id IS NOT NULL ORDER BY id LIMIT 1",
          [](const Reads& r, Populated&) {
            CHECK(r.report.runs[0].reboots == 1);
            CHECK(r.report_cli.runs[0].reboots == 1);
          }};
}

// The clock offset columns of agents and runs: the wall clock's (sql/005, 028) and the boot clock's (sql/030).
std::vector<NullableColumn> clock_columns() {
  return {
      {"agents.clock_offset_s", "UPDATE agents SET clock_offset_s = NULL",
       [](const Reads& r, Populated&) {   // the agent's estimate gone: the run keeps the offset of its start
         CHECK(first_epoch(r).start_unix_s == std::optional<double>(kT0 - kClockOffset));
         CHECK(first_sample(r).start_unix_s == std::optional<double>(kT0 - kClockOffset));
       }},
      {"runs.clock_offset_s", "UPDATE runs SET clock_offset_s = NULL; UPDATE agents SET clock_offset_s = 100",
       [](const Reads& r, Populated&) {   // a run stored before the column: its agent's latest estimate (sql/028)
         CHECK(first_epoch(r).start_unix_s == std::optional<double>(kT0 - 100));
         CHECK(first_sample(r).start_unix_s == std::optional<double>(kT0 - 100));
       }},
      {"runs.clock_offset_s and agents.clock_offset_s",
       "UPDATE runs SET clock_offset_s = NULL; UPDATE agents SET clock_offset_s = NULL",
       [](const Reads& r, Populated&) {   // no offset measured: the agent's clock as it is (sql/005)
         CHECK(first_epoch(r).start_unix_s == std::optional<double>(kT0));
         CHECK(first_sample(r).start_unix_s == std::optional<double>(kT0));
       }},
      {"agents.clock_rtt_s", "UPDATE agents SET clock_rtt_s = NULL",
       [](const Reads&, Populated& f) {   // an estimate without a round trip is replaced by the next one
         REQUIRE(f.store.record_clock(f.agent_id, 0.5, 1.0, std::nullopt).is_ok());
         CHECK(f.db.count("SELECT count(*) FROM agents WHERE clock_offset_s = 0.5 AND clock_rtt_s = 1") == 1);
       }},
      {"agents.clock_measured_at", "UPDATE agents SET clock_measured_at = NULL",
       [](const Reads&, Populated& f) {
         REQUIRE(f.store.record_clock(f.agent_id, 0.5, 0.001, std::nullopt).is_ok());
         CHECK(f.db.count("SELECT count(*) FROM agents WHERE clock_offset_s = 0.5 AND clock_measured_at IS NOT NULL") == 1);
       }},
      // The boot clock (sql/030): without it a run is placed by the wall clock's offset, as an older agent's.
      {"agents.boot_id", "UPDATE agents SET boot_id = NULL",
       [](const Reads& r, Populated& f) {   // the runs keep their offsets; a new boot's offset is kept at once
         CHECK(first_epoch(r).start_unix_s == std::optional<double>(kT0 - kClockOffset));
         REQUIRE(f.store.record_clock(f.agent_id, kClockOffset, 1.0, controller::BootClockOffset{"b2", 7.5}).is_ok());
         CHECK(f.db.count("SELECT count(*) FROM agents WHERE boot_id = 'b2' AND boot_offset_s = 7.5") == 1);
       }},
      {"agents.boot_offset_s", "UPDATE agents SET boot_offset_s = NULL",
       [](const Reads& r, Populated& f) {   // a kept estimate sets it again
         CHECK(first_epoch(r).start_unix_s == std::optional<double>(kT0 - kClockOffset));
         REQUIRE(f.store.record_clock(f.agent_id, kClockOffset, 0.001, controller::BootClockOffset{"b1", 7.5}).is_ok());
         CHECK(f.db.count("SELECT count(*) FROM agents WHERE boot_id = 'b1' AND boot_offset_s = 7.5") == 1);
       }},
      {"runs.agent_boot_id", "UPDATE runs SET agent_boot_id = NULL, clock_offset_s = NULL",
       [](const Reads&, Populated& f) {   // its boot unknown: the first estimate kept gives it the wall clock's offset
         REQUIRE(f.store.record_clock(f.agent_id, 0.5, 0.001, controller::BootClockOffset{"b1", 7.5}).is_ok());
         CHECK(f.db.count("SELECT count(*) FROM runs WHERE clock_offset_s = 0.5") == 1);
       }},
      {"runs.agent_t0_boot_s", "UPDATE runs SET agent_t0_boot_s = NULL, clock_offset_s = NULL",
       [](const Reads&, Populated& f) {
         REQUIRE(f.store.record_clock(f.agent_id, 0.5, 0.001, controller::BootClockOffset{"b1", 7.5}).is_ok());
         CHECK(f.db.count("SELECT count(*) FROM runs WHERE clock_offset_s = 0.5") == 1);
       }},
  };
}

// The agents columns and the runs columns of dispatch and timing.
std::vector<NullableColumn> run_columns() {
  return {
      {"agents.away_until", "UPDATE agents SET away_until = NULL",
       [](const Reads& r, Populated& f) {   // not rebooting: nothing held past the lease
         CHECK_FALSE(r.agents.at(0).rebooting_until.has_value());
         CHECK(absent(api::to_json(r.agents.at(0)), "rebooting_until"));
         REQUIRE(f.store.requeue_orphaned_runs(3600).is_ok());
       }},
      {"agents.tables", "UPDATE agents SET tables = NULL",
       [](const Reads&, Populated& f) {   // an agent that reports none (host, older agents)
         auto boards = f.store.enrolled_board_facts();
         REQUIRE(boards.is_ok());
         REQUIRE(boards->size() == 1);
         CHECK_FALSE(boards->at(0).tables.has_value());
         CHECK(perf::fleet_tables(boards.value()).boards().empty());
       }},
      board_reboot_masks("board_reboots.tpc_pg_mask_from"),
      board_reboot_masks("board_reboots.tpc_pg_mask_to"),
      board_reboot_masks("board_reboots.fbp_pg_mask_from"),
      board_reboot_masks("board_reboots.fbp_pg_mask_to"),
      {"runs.agent_id", "UPDATE runs SET agent_id = NULL",
       [](const Reads& r, Populated&) {
         CHECK_FALSE(r.report.runs[0].agent.has_value());
         CHECK_FALSE(r.report_cli.runs[0].agent.has_value());
         CHECK(absent(wire_run(r), "agent"));
         CHECK_FALSE(r.cancelled.agent.has_value());
         CHECK_FALSE(r.agents.at(0).current_run.has_value());
         CHECK(r.estimate.measured.empty());   // epochs of no agent's class are not an estimate's
         CHECK(r.to_stop.empty());
         CHECK(first_sample(r).instance == "orin-1");   // from the run's facts
         CHECK(first_sample(r).start_unix_s == std::optional<double>(kT0 - kClockOffset));   // the run's own offset
       }},
      {"runs.facts", "UPDATE runs SET facts = NULL",
       [](const Reads& r, Populated&) {
         CHECK_FALSE(r.report.runs[0].facts.has_value());
         CHECK_FALSE(r.report.runs[0].simulated);
         CHECK(absent(wire_run(r), "facts"));
         CHECK(first_sample(r).device == "agx-orin");   // the class the run asked for
         CHECK(first_sample(r).software.empty());
         CHECK_FALSE(first_sample(r).simulated);
       }},
      {"runs.assigned_at", "UPDATE runs SET assigned_at = NULL",
       [](const Reads& r, Populated&) { CHECK(r.report.runs[0].status == "done"); }},   // read by no code
      {"runs.started_at", "UPDATE runs SET started_at = NULL",
       [](const Reads& r, Populated&) {   // no run has started: no wall time per epoch, no ETA
         CHECK_FALSE(r.status.eta_s.has_value());
         CHECK(r.status_text.find("ETA") == std::string::npos);
       }},
      {"runs.finished_at", "UPDATE runs SET finished_at = NULL",
       [](const Reads& r, Populated&) {   // still running as far as the ETA knows: measured until now
         REQUIRE(r.status.eta_s.has_value());
         CHECK(*r.status.eta_s >= 0.0);
       }},
      {"runs.wall_s", "UPDATE runs SET wall_s = NULL",
       [](const Reads& r, Populated&) {
         CHECK_FALSE(r.report.runs[0].wall_s.has_value());
         CHECK_FALSE(r.report_cli.runs[0].wall_s.has_value());
         CHECK(absent(wire_run(r), "wall_s"));
       }},
      {"runs.agent_t0_unix_s", "UPDATE runs SET agent_t0_unix_s = NULL",
       [](const Reads& r, Populated&) {
         for (const auto& e : epochs_of(r)) CHECK_FALSE((e.start_unix_s || e.end_unix_s));
         CHECK(absent(wire_epoch(r), "start_unix_s"));
         CHECK_FALSE((first_sample(r).start_unix_s || first_sample(r).end_unix_s));
         CHECK(csv_empty(r.epoch_csv, "start_unix_s"));
         CHECK(csv_empty(r.epoch_csv, "end_unix_s"));
       }},
  };
}

// The columns of the state a run executed in, and view columns NULL through expressions.
std::vector<NullableColumn> state_columns() {
  return {
      {"runs.storage", "UPDATE runs SET storage = NULL",
       [](const Reads& r, Populated& f) {
         CHECK_FALSE(r.report.runs[0].storage_medium.has_value());
         CHECK(r.status.unrunnable.empty());   // no medium needed: any agent can take both runs
         CHECK(first_sample(r).axes.at("storage") == "@ssd");   // the config's data
         auto claimed = f.store.claim_run(f.agent_id, "agx-orin", "");
         REQUIRE(claimed.is_ok());
         CHECK(claimed->has_value());
       }},
      {"runs.applied", "UPDATE runs SET applied = NULL",
       [](const Reads& r, Populated&) {   // the state is not known: the requested mode, by name
         CHECK_FALSE(r.report.runs[0].applied.has_value());
         CHECK(absent(wire_run(r), "applied"));
         CHECK(r.report_text.find("(MAXN)") != std::string::npos);
         CHECK_FALSE(first_sample(r).mode.any_setting());
         CHECK(first_sample(r).mode_name == "MAXN");
         CHECK(csv_empty(r.epoch_csv, "cores"));
         CHECK(csv_empty(r.epoch_csv, "cpu_mhz"));
       }},
      {"runs.reference_state", "UPDATE runs SET reference_state = NULL",
       [](const Reads& r, Populated&) {
         CHECK_FALSE(r.report.runs[0].reference_state.has_value());
         CHECK(first_sample(r).reference_state == std::optional<bool>(false));   // the config names a mode
       }},
      {"runs.storage_device", "UPDATE runs SET storage_device = NULL",
       [](const Reads& r, Populated&) {
         CHECK_FALSE(r.report.runs[0].storage_device.has_value());
         CHECK(first_sample(r).storage_device.empty());
         CHECK(csv_empty(r.epoch_csv, "storage_device"));
       }},
      {"runs.page_cache_dropped", "UPDATE runs SET page_cache_dropped = NULL",
       [](const Reads& r, Populated&) {
         CHECK_FALSE(r.report.runs[0].page_cache_dropped.has_value());
         CHECK_FALSE(first_sample(r).page_cache_dropped.has_value());
         CHECK(csv_empty(r.epoch_csv, "page_cache_dropped"));
       }},
      {"runs.compute_device", "UPDATE runs SET compute_device = NULL",
       [](const Reads& r, Populated&) {
         CHECK_FALSE(r.report.runs[0].compute_device.has_value());
         CHECK(r.report_text.find("trained on") == std::string::npos);
         CHECK(first_sample(r).compute_device.empty());
         CHECK(csv_empty(r.epoch_csv, "compute_device"));
       }},
      {"runs.workload", "UPDATE runs SET workload = NULL",
       [](const Reads& r, Populated&) {
         CHECK_FALSE(r.report.runs[0].workload.has_value());
         CHECK(r.report_text.find("DATA:") == std::string::npos);   // one run: nothing to differ from
         CHECK(first_sample(r).dataset_fingerprint.empty());
         CHECK(csv_empty(r.epoch_csv, "dataset_fingerprint"));
       }},
      // Keys of retried use cases (sql/025): NULL for campaigns submitted and runs claimed without one (imported ones).
      {"runs.claim_key", "UPDATE runs SET claim_key = NULL",
       [](const Reads& r, Populated&) {
         REQUIRE_FALSE(r.report.runs.empty());
         CHECK(r.report.runs[0].attempts == 1);
       }},
      {"campaigns.request_key", "UPDATE campaigns SET request_key = NULL",
       [](const Reads& r, Populated&) {
         CHECK(r.report.campaign.name == "nullable");
         CHECK_FALSE(r.report.runs.empty());
       }},
      {"analysis_runs.dataset, batch_size, workers, prefetch (config keys absent)",
       "UPDATE runs SET config = config - 'dataset' - 'batch_size' - 'workers' - 'prefetch'",
       [](const Reads& r, Populated&) {
         CHECK(first_sample(r).workload == "lenet5");
         CHECK(first_sample(r).dataset.empty());
         for (const char* axis : {"batch_size", "workers", "prefetch"}) CHECK(first_sample(r).axes.count(axis) == 0);
         CHECK(csv_empty(r.epoch_csv, "batch_size"));
         REQUIRE(r.estimate.measured.size() == 1);
         CHECK(r.estimate.measured[0].dataset.empty());
         CHECK(r.estimate.measured[0].batch_size.empty());
       }},
      {"analysis_epochs.minibatch_ms (no minibatch rows, 0 minibatches)",
       "DELETE FROM minibatch_chunks; SELECT refresh_epoch_summary(campaign_id, id, 0), "
       "refresh_epoch_summary(campaign_id, id, 1) FROM runs; UPDATE epochs SET minibatches = 0",
       [](const Reads& r, Populated&) {
         for (const auto& e : r.corpus.epochs) CHECK_FALSE(e.minibatch_ms.has_value());
         CHECK(r.corpus.rows.empty());   // a mode profile needs minibatch times
         CHECK(csv_empty(r.epoch_csv, "minibatch_ms"));
       }},
      {"analysis_epochs.power_w, analysis_mode_profile.power_mw (no energy, no mean power)",
       "UPDATE epochs SET energy_j = NULL, mean_power_w = NULL",
       [](const Reads& r, Populated&) {
         for (const auto& e : r.corpus.epochs) CHECK_FALSE((e.power_w || e.energy));
         REQUIRE(r.corpus.rows.size() == 1);
         CHECK_FALSE((r.corpus.rows[0].power_mw || r.corpus.rows[0].energy_j));
         CHECK(csv_empty(r.epoch_csv, "power_w"));
         CHECK(csv_empty(r.epoch_csv, "power_mw"));
         CHECK(csv_empty(r.mode_csv, "power_mw"));
       }},
  };
}

// The epochs, minibatches and samples columns.
std::vector<NullableColumn> measurement_columns() {
  using RE = api::ReportEpoch;
  using EC = api::EpochClocks;
  return {
      {"epochs.energy_j", "UPDATE epochs SET energy_j = NULL",
       [](const Reads& r, Populated&) {
         for (const auto& e : epochs_of(r)) CHECK_FALSE(e.energy_j.has_value());
         CHECK(absent(wire_epoch(r), "energy_j"));
         CHECK_FALSE(r.report.power_sensor);
         for (const auto& e : r.corpus.epochs) CHECK_FALSE(e.energy.has_value());
         REQUIRE(r.corpus.rows.size() == 1);
         CHECK_FALSE(r.corpus.rows[0].energy_j.has_value());
         CHECK(first_sample(r).power_w == std::optional<double>(5.0));   // the epoch's mean power
         CHECK(csv_empty(r.epoch_csv, "energy_j"));
         CHECK(csv_empty(r.mode_csv, "energy_j"));
       }},
      {"epochs.mean_power_w", "UPDATE epochs SET mean_power_w = NULL",
       [](const Reads& r, Populated&) {
         for (const auto& e : epochs_of(r)) CHECK_FALSE(e.mean_power_w.has_value());
         CHECK(absent(wire_epoch(r), "mean_power_w"));
         CHECK(first_sample(r).power_w == std::optional<double>(50.0 / 10.0));   // energy / E2E time (sql/012)
       }},
      report_epoch_column("epochs.loss", "UPDATE epochs SET loss = NULL", &RE::loss, "loss", nullptr),
      report_epoch_column("epochs.read_mb_s", "UPDATE epochs SET read_mb_s = NULL", &RE::read_mb_s, "read_mb_s", nullptr),
      report_epoch_column("epochs.read_iops", "UPDATE epochs SET read_iops = NULL", &RE::read_iops, "read_iops", nullptr),
      report_epoch_column("epochs.cache_start_frac", "UPDATE epochs SET cache_start_frac = NULL", &RE::cache_start_frac,
                          "cache_start_frac", nullptr),
      report_epoch_column("epochs.cache_end_frac", "UPDATE epochs SET cache_end_frac = NULL", &RE::cache_end_frac,
                          "cache_end_frac", nullptr),
      report_epoch_column("epochs.power_coverage", "UPDATE epochs SET power_coverage = NULL", &RE::power_coverage,
                          "power_coverage", "power_coverage"),
      report_epoch_column("epochs.paused_before_s", "UPDATE epochs SET paused_before_s = NULL", &RE::paused_before_s,
                          "paused_before_s", "paused_before_s"),
      window_column("epochs.t_start_s", "UPDATE epochs SET t_start_s = NULL", true),
      window_column("epochs.t_end_s", "UPDATE epochs SET t_end_s = NULL", false),
      clock_column("epochs.cores_start", "UPDATE epochs SET cores_start = NULL", true, &EC::cores_online),
      clock_column("epochs.cores_end", "UPDATE epochs SET cores_end = NULL", false, &EC::cores_online),
      clock_column("epochs.cpu_khz_start", "UPDATE epochs SET cpu_khz_start = NULL", true, &EC::cpu_khz),
      clock_column("epochs.cpu_khz_end", "UPDATE epochs SET cpu_khz_end = NULL", false, &EC::cpu_khz),
      clock_column("epochs.gpu_hz_start", "UPDATE epochs SET gpu_hz_start = NULL", true, &EC::gpu_hz),
      clock_column("epochs.gpu_hz_end", "UPDATE epochs SET gpu_hz_end = NULL", false, &EC::gpu_hz),
      clock_column("epochs.emc_hz_start", "UPDATE epochs SET emc_hz_start = NULL", true, &EC::emc_hz),
      clock_column("epochs.emc_hz_end", "UPDATE epochs SET emc_hz_end = NULL", false, &EC::emc_hz),
      stats_column("epochs.stall_mean_s"), stats_column("epochs.stall_p50_s"), stats_column("epochs.stall_p95_s"),
      stats_column("epochs.compute_mean_s"), stats_column("epochs.compute_p50_s"), stats_column("epochs.compute_p95_s"),
      {"epochs.minibatch_mean_ms", "UPDATE epochs SET minibatch_mean_ms = NULL",
       [](const Reads& r, Populated&) {   // the mean minibatch time falls back to E2E / minibatches (sql/016)
         REQUIRE(r.corpus.epochs.size() == 2);
         for (const auto& e : r.corpus.epochs)   // E2E 10 + epoch s, 2 minibatches
           CHECK(e.minibatch_ms == std::optional<double>(1000.0 * (10.0 + static_cast<double>(e.epoch)) / 2));
         CHECK(epochs_of(r)[0].minibatch_stats.has_value());   // the statistics are their own columns
       }},
      {"epochs.copy_s", "UPDATE epochs SET copy_s = NULL",
       [](const Reads& r, Populated&) {
         for (const auto& e : r.corpus.epochs) CHECK_FALSE(e.copy_s.has_value());
         CHECK(csv_empty(r.epoch_csv, "copy_s"));
       }},
      {"minibatch_chunks.copy_s", "UPDATE minibatch_chunks SET copy_s = NULL",
       [](const Reads& r, Populated&) {   // not read: the minibatch time is stall + compute
         CHECK(first_sample(r).minibatch_ms == std::optional<double>(4500.0));
       }},
      {"sample_chunks.cpu_freq_mhz (elements)", "UPDATE sample_chunks SET cpu_freq_mhz = array_fill(NULL::real, ARRAY[cardinality(t_s)])",
       [](const Reads& r, Populated&) {
         CHECK(r.corpus.epochs.size() == 2);
         REQUIRE(r.samples.size() == 1);
         CHECK_FALSE(r.samples[0].cpu_freq_mhz.has_value());
         CHECK(r.samples[0].temp_max_c == std::optional<double>(45.5));
       }},
      {"sample_chunks.temp_max_c (elements)", "UPDATE sample_chunks SET temp_max_c = array_fill(NULL::real, ARRAY[cardinality(t_s)])",   // sql/015: no readable zone, or simulated
       [](const Reads& r, Populated&) {
         REQUIRE(r.samples.size() == 1);
         CHECK_FALSE(r.samples[0].temp_max_c.has_value());
         CHECK(r.samples[0].power_w == std::optional<double>(5.0));
       }},
      {"sample_chunks.power_w (elements)", "UPDATE sample_chunks SET power_w = array_fill(NULL::real, ARRAY[cardinality(t_s)])",
       [](const Reads& r, Populated&) {   // never a stand-in for an epoch's own power (sql/012)
         CHECK(first_sample(r).power_w == std::optional<double>(5.0));
       }},
  };
}

// A model file whose upload is unfinished (sql/023): bytes, chunks and completed_at stay NULL until it is completed,
// and such a file is neither served to agents nor counted as stored.
std::vector<NullableColumn> model_file_columns() {
  const std::string sha(64, 'd');
  std::vector<NullableColumn> out;
  for (const char* column : {"bytes", "chunks", "completed_at"})
    out.push_back({std::string("model_files.") + column,
                   "INSERT INTO model_files (sha256) VALUES ('" + sha + "'); "
                   "INSERT INTO model_file_chunks (sha256, idx, data) VALUES ('" + sha + "', 0, 'x')",
                   [sha](const Reads&, Populated& f) {
                     CHECK(f.store.model_file(sha).value() == std::nullopt);
                     CHECK(f.store.model_file_chunk(sha, 0).status().code() == Code::kNotFound);
                   }});
  return out;
}

// An adaptive plan (sql/026) with no error and no fit yet, and a round recorded without a fit: the status and the
// report carry the plan without a fit summary, the due plans without a fit. Runs outside any plan (NULL plan and
// round, as every run of the populated campaign) are the campaign's ordinary runs.
std::vector<NullableColumn> adaptive_columns() {
  auto spec = parse_campaign("campaign: a\nmatrix: {device: agx-orin, model: lenet5, dataset: mnist, epochs: 2, "
                             "power_mode: {generate: adaptive, budget: 6, reference: r.csv, every: 4}}\n",
                             "a.yaml");
  REQUIRE(spec.is_ok());
  const std::string plan = "INSERT INTO adaptive_plans (campaign_id, plan_index, device_class, workload, spec) "
                           "SELECT id, 0, 'agx-orin', 'lenet5/mnist', '" +
                           bj::serialize(to_json(spec->adaptive_plans.at(0))) + "'::jsonb FROM campaigns; ";
  auto no_fit = [](const Reads& r, Populated& f) {
    REQUIRE(r.status.adaptive.size() == 1);
    const auto& p = r.status.adaptive[0];
    CHECK(p.error.empty());
    CHECK_FALSE(p.time_loo_pct.has_value());
    CHECK_FALSE(p.front_size.has_value());
    CHECK_FALSE(r.status.finished);   // a plan still profiling
    REQUIRE(r.report.adaptive.size() == 1);
    CHECK(r.report.adaptive[0].fit.empty());
    CHECK(r.status_text.find("adaptive plan") != std::string::npos);
  };
  auto ordinary_runs = [](const Reads& r, Populated&) {
    CHECK(r.status.adaptive.empty());
    CHECK(r.report.runs.size() == 2);
  };
  return {{"adaptive_plans.error", plan, no_fit},
          {"adaptive_plans.fit", plan, no_fit},
          {"adaptive_rounds.fit", plan + "INSERT INTO adaptive_rounds (plan_id, round, runs) SELECT id, 0, 0 FROM adaptive_plans",
           no_fit},
          {"runs.adaptive_plan_id", "UPDATE runs SET adaptive_plan_id = NULL", ordinary_runs},
          {"runs.adaptive_round", "UPDATE runs SET adaptive_round = NULL", ordinary_runs}};
}

std::vector<NullableColumn> all_columns() {
  auto out = run_columns();
  for (auto& c : clock_columns()) out.push_back(std::move(c));
  for (auto& c : adaptive_columns()) out.push_back(std::move(c));
  for (auto& c : model_file_columns()) out.push_back(std::move(c));
  for (auto& c : state_columns()) out.push_back(std::move(c));
  for (auto& c : measurement_columns()) out.push_back(std::move(c));
  return out;
}

}  // namespace

TEST_CASE("every nullable column reads back as absent through every read path") {
  for (const auto& column : all_columns()) {
    SUBCASE(column.name.c_str()) {
      Populated f;
      f.exec(column.null_sql);
      Reads r = read_everything(f);
      column.check(r, f);
    }
  }
}

TEST_CASE("every nullable column of the schema has its NULL test above") {
  Populated f;
  pqxx::connection c(f.db.dsn());
  pqxx::work w(c);
  std::set<std::string> tested;
  for (const auto& column : all_columns()) tested.insert(column.name);
  auto nullable = w.exec(
      "SELECT c.table_name || '.' || c.column_name FROM information_schema.columns c JOIN information_schema.tables t "
      "USING (table_schema, table_name) WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' "
      "AND c.is_nullable = 'YES' AND c.table_name <> 'schema_migrations' "
      "AND NOT EXISTS (SELECT 1 FROM pg_class p WHERE p.relname = c.table_name AND p.relispartition) ORDER BY 1");
  CHECK(nullable.size() >= 37);
  for (const auto& row : nullable) CHECK_MESSAGE(tested.count(row[0].c_str()) == 1, (std::string(row[0].c_str()) + " has no NULL test"));
}

TEST_CASE("what an agent leaves out of its messages reads back as absent everywhere") {
  Populated f(/*sparse=*/true);
  CHECK(f.db.count("SELECT count(*) FROM epochs WHERE loss IS NULL AND energy_j IS NULL AND cores_start IS NULL "
                   "AND t_start_s IS NULL AND copy_s IS NULL AND power_coverage IS NULL") == 2);
  CHECK(f.db.count("SELECT count(*) FROM runs WHERE applied IS NULL AND agent_t0_unix_s IS NOT NULL") == 1);
  Reads r = read_everything(f);
  for (const auto& e : epochs_of(r)) {
    CHECK_FALSE((e.energy_j || e.mean_power_w || e.loss || e.read_mb_s || e.read_iops || e.cache_start_frac));
    CHECK_FALSE((e.cache_end_frac || e.t_start_s || e.t_end_s || e.power_coverage || e.start_unix_s));
    CHECK_FALSE((e.clocks_start || e.clocks_end || e.throttle_reason));
  }
  CHECK((absent(wire_epoch(r), "loss") && absent(wire_run(r), "applied") && !r.report.power_sensor));
  for (const auto& e : r.corpus.epochs) {
    CHECK_FALSE((e.energy || e.power_w || e.power_coverage || e.t_start_s || e.start_unix_s || e.copy_s));
    CHECK(e.minibatch_ms == std::optional<double>(4500.0));
  }
  REQUIRE(r.corpus.rows.size() == 1);
  CHECK_FALSE((r.corpus.rows[0].power_mw || r.corpus.rows[0].energy_j || !csv_empty(r.mode_csv, "power_mw")));
  for (const char* column : {"energy_j", "power_w", "power_mw", "power_coverage", "t_start_s", "start_unix_s", "copy_s"})
    CHECK_MESSAGE(csv_empty(r.epoch_csv, column), column);
  CHECK(r.report_text.find("(MAXN)") != std::string::npos);
}

TEST_CASE("with nothing NULL every value the NULL tests look at is present (they are not vacuous)") {
  Populated f;
  Reads r = read_everything(f);
  for (const auto& e : epochs_of(r)) {
    CHECK((e.energy_j && e.mean_power_w && e.loss && e.read_mb_s && e.read_iops && e.cache_start_frac));
    CHECK((e.cache_end_frac && e.t_start_s && e.t_end_s && e.power_coverage && e.end_unix_s && e.paused_before_s));
    REQUIRE((e.clocks_start && e.clocks_end));
    CHECK((e.clocks_start->cores_online && e.clocks_start->cpu_khz && e.clocks_start->gpu_hz && e.clocks_end->emc_hz));
  }
  CHECK(first_epoch(r).start_unix_s == std::optional<double>(kT0 - kClockOffset));
  for (const auto& e : r.corpus.epochs) CHECK(e.paused_before_s == std::optional<double>(e.epoch == 0 ? 0.0 : 1.5));
  CHECK_FALSE(csv_empty(r.epoch_csv, "paused_before_s"));
  const auto& run = r.report_cli.runs[0];
  CHECK((run.agent && run.wall_s && run.facts && run.applied && run.reference_state && run.storage_medium));
  CHECK((run.storage_device && run.page_cache_dropped && run.compute_device && run.workload));
  REQUIRE((r.cancelled.agent && r.status.eta_s && r.status.unrunnable.size() == 1));
  CHECK(r.status.unrunnable[0].reason.find("storage @nvme") != std::string::npos);
  REQUIRE(r.estimate.measured.size() == 1);
  CHECK(r.estimate.measured[0].batch_size == "32");
  const auto& s = first_sample(r);
  CHECK((s.energy && s.power_coverage && s.t_start_s && s.start_unix_s && s.copy_s && s.page_cache_dropped));
  CHECK((s.mode.explicit_settings() && s.reference_state == std::optional<bool>(false) && !s.software.empty()));
  CHECK((s.storage_device == "nvme0n1" && s.compute_device == "cuda:0 (Orin)" && s.dataset == "mnist"));
  CHECK(s.minibatch_ms == std::optional<double>(4500.0));
  REQUIRE((r.corpus.rows.size() == 1 && r.corpus.rows[0].power_mw && r.corpus.rows[0].energy_j));
  for (const char* column : {"minibatch_ms", "energy_j", "power_w", "power_coverage", "start_unix_s", "copy_s",
                             "storage_device", "page_cache_dropped", "compute_device", "cores", "batch_size",
                             "dataset_fingerprint"})
    CHECK_MESSAGE(r.epoch_csv[0].at(column) != "", column);
  CHECK(r.report_text.find("trained on") != std::string::npos);
}

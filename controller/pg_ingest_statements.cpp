// PgStore's prepared ingest statements (pg_util.hpp): their names, and their text made once per connection.
#include <pqxx/pqxx>

#include <string>
#include <vector>

#include "common/described_json.hpp"
#include "common/protocol.hpp"
#include "controller/pg_util.hpp"

namespace jetsweep::controller {

namespace pg {

const char* const kIngestRunAccess = "ingest_run_access";
const char* const kIngestMarkRunning = "ingest_mark_running";
const char* const kIngestMinibatchOverlap = "ingest_minibatch_overlap";
const char* const kIngestSampleOverlap = "ingest_sample_overlap";
const char* const kIngestEpoch = "ingest_epoch";
const char* const kIngestSetAside = "ingest_set_aside";
const char* const kIngestMinibatchRow = "ingest_minibatch_row";
const char* const kIngestSampleRow = "ingest_sample_row";

namespace {
// An epoch's row with its minibatch statistics from the chunks stored so far (normally all: they are sent before
// it). Parameters: $1 run, $2 epoch, $3-$6 e2e_s, stall_s, compute_s, minibatches, $7 the agent, $8 the campaign,
// $9-$16 the clocks, $17 throttled, $18 throttle_reason, $19 copy_s, then the measures of proto::EpochMeasures in
// the order of their description, each in the column of its name. A resend of a stored epoch updates it in place.
std::string ingest_epoch_sql() {
  std::vector<std::string> columns = {"run_id",     "epoch",         "e2e_s",        "stall_s",     "compute_s",
                                      "minibatches", "cores_start",  "cores_end",    "cpu_khz_start", "cpu_khz_end",
                                      "gpu_hz_start", "gpu_hz_end",  "emc_hz_start", "emc_hz_end",  "throttled",
                                      "throttle_reason", "copy_s"};
  std::string values =
      "$1, $2, $3, $4, $5, $6, $9::double precision::integer, $10::double precision::integer, $11::double precision, "
      "$12::double precision, $13::double precision, $14::double precision, $15::double precision, "
      "$16::double precision, $17, $18, $19::double precision";
  int param = 20;
  const proto::EpochMeasures measures;
  json::for_each_described(measures, [&](const char* name, const auto&) {
    columns.emplace_back(name);
    values += ", $" + std::to_string(param++) + "::double precision";
  });
  for (const char* stat : {"mb_recorded", "stall_mean_s", "stall_p50_s", "stall_p95_s", "compute_mean_s",
                           "compute_p50_s", "compute_p95_s", "minibatch_mean_ms"})   // epoch_minibatch_stats()
    columns.emplace_back(stat);
  std::string names, updates;
  for (const auto& c : columns) {
    names += (names.empty() ? "" : ", ") + c;
    if (c != "run_id" && c != "epoch") updates += (updates.empty() ? "" : ", ") + c + " = EXCLUDED." + c;
  }
  return "INSERT INTO epochs (" + names + ") SELECT " + values + ", s.* FROM epoch_minibatch_stats($8, $1, $2::integer) s "
         "WHERE EXISTS (SELECT 1 FROM runs WHERE id = $1 AND agent_id = $7) ON CONFLICT (run_id, epoch) DO UPDATE SET " +
         updates + " RETURNING (xmax = 0)";   // true: inserted; false: a resend of a stored epoch (updated in place)
}
}  // namespace

void prepare_ingest_statements(pqxx::connection_base& conn) {
  // The run's state: status, campaign, t0 unknown, its agent and error (for set_aside_results.reason).
  conn.prepare(kIngestRunAccess,
               "SELECT status, campaign_id, agent_t0_unix_s IS NULL AS t0_missing, agent_id, error FROM runs WHERE id = $1 "
               "FOR SHARE");
  // frame_md5 is of the frame as jsonb writes it (sql/029): one row per message whether a NUL in its text came as
  // \u0000 or as U+FFFD, whatever its whitespace or key order (numbers stay as written).
  conn.prepare(kIngestSetAside,
               "INSERT INTO set_aside_results (campaign_id, run_id, agent_id, message_type, reason, frame, frame_md5) "
               "VALUES ($1, $2, $3, $4, $5, $6::text::jsonb, md5($6::text::jsonb::text)) ON CONFLICT DO NOTHING RETURNING 1");
  // Chunk rows: the arrays are binary parameters (chunks::real_array and the like), their types fixed by the casts;
  // t_first and t_last travel as their shortest round-trip decimals.
  conn.prepare(kIngestMinibatchRow,
               "INSERT INTO minibatch_chunks (campaign_id, run_id, epoch, first_idx, stall_s, compute_s, copy_s) "
               "VALUES ($1, $2, $3, $4, $5::real[], $6::real[], $7::real[])");
  conn.prepare(kIngestSampleRow,
               "INSERT INTO sample_chunks (campaign_id, run_id, t_first, t_last, t_s, cpu_util_pct, cpu_freq_mhz, "
               "mem_used_kb, disk_read_bytes, power_w, temp_max_c, core_n, core_util_pct) VALUES ($1, $2, $3::float8, "
               "$4::float8, $5::float8[], $6::real[], $7::real[], $8::bigint[], $9::bigint[], $10::real[], $11::real[], "
               "$12::smallint[], $13::real[])");
  conn.prepare(kIngestMarkRunning,
               "UPDATE runs SET status = 'running', started_at = coalesce(started_at, now()) "
               "WHERE id = $1 AND agent_id = $2 AND status = 'assigned'");
  // ($1 campaign, $2 run, $3 epoch, $4 first index, $5 last index): one row (NULL, NULL, whether the epoch has
  // landed), then (first, last index) of each stored chunk overlapping [$4, $5].
  conn.prepare(kIngestMinibatchOverlap,
               "SELECT NULL::bigint AS first_idx, NULL::bigint AS last_idx, "
               "  EXISTS (SELECT 1 FROM epochs WHERE run_id = $2 AND epoch = $3) AS epoch_landed "
               "UNION ALL SELECT first_idx, first_idx + cardinality(stall_s) - 1, NULL FROM minibatch_chunks "
               "  WHERE campaign_id = $1 AND run_id = $2 AND epoch = $3 AND first_idx BETWEEN $4 AND $5 "
               "UNION ALL (SELECT first_idx, first_idx + cardinality(stall_s) - 1, NULL FROM minibatch_chunks "
               "  WHERE campaign_id = $1 AND run_id = $2 AND epoch = $3 AND first_idx < $4 "
               "  ORDER BY first_idx DESC LIMIT 1)");
  // ($1 campaign, $2 run, $3 t_min, $4 t_max): the stored sample chunks overlapping [$3, $4].
  conn.prepare(kIngestSampleOverlap,
               "SELECT t_first, t_s, cpu_util_pct, cpu_freq_mhz, mem_used_kb, disk_read_bytes, power_w, temp_max_c, "
               "  core_n, core_util_pct, t_last FROM sample_chunks WHERE campaign_id = $1 AND run_id = $2 "
               "  AND t_first BETWEEN $3::float8 AND $4::float8 "
               "UNION ALL SELECT * FROM (SELECT t_first, t_s, cpu_util_pct, cpu_freq_mhz, mem_used_kb, "
               "  disk_read_bytes, power_w, temp_max_c, core_n, core_util_pct, t_last FROM sample_chunks "
               "  WHERE campaign_id = $1 AND run_id = $2 AND t_first < $3::float8 ORDER BY t_first DESC LIMIT 1) p "
               "WHERE p.t_last >= $3::float8");
  conn.prepare(kIngestEpoch, ingest_epoch_sql());
}

}  // namespace pg

}  // namespace jetsweep::controller

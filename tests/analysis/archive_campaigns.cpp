// The campaigns the archive tests move between databases, as raw rows (archive_campaigns.hpp).
#include "analysis/archive_campaigns.hpp"

#include <string>

namespace jetsweep::testing {

namespace {

int64_t one(pqxx::work& w, const std::string& sql) { return w.exec1(sql)[0].as<int64_t>(); }

}  // namespace

void insert_agents(pqxx::work& w) {
  w.exec("INSERT INTO agents (name, hostname, cpus, mem_bytes, backend, device_class, kernel, torch_version, compiler, "
         "git_sha, connected, first_seen, last_seen, clock_offset_s, clock_rtt_s, clock_measured_at, storage, board_id, "
         "accelerator, not_ready) VALUES "
         "('orin-a', 'orin-a.lab', 12, 68719476736, 'jetson', 'agx-orin', '5.10.120-tegra', '2.1', 'g++ 11', 'abc123', "
         "true, '2026-01-02 03:04:05.123456+00', '2026-01-03 00:00:00+00', 0.000123456789, 0.002, now(), "
         "'{nvme,sd}', 'orin-a-board', 'cuda:0 (Orin)', '{}'), "
         "('nx-b', 'nx-b.lab', 6, 8000000000, 'sim', 'xavier-nx', '5.10', '2.0', 'g++ 9', 'def', false, now(), now(), "
         "NULL, NULL, NULL, '{}', '', 'simulated', '{\"fan: unreadable\"}'), "
         "('other-c', 'c.lab', 4, 1, 'sim', 'nano', 'k', 't', 'c', 'g', false, now(), now(), NULL, NULL, NULL, '{}', "
         "'', '', '{}')");
  w.exec("INSERT INTO agent_credentials (agent_id, credential_sha256) SELECT id, repeat('ab', 32) FROM agents "
         "WHERE name = 'orin-a'");
}

void insert_model_files(pqxx::work& w) {
  w.exec(std::string("INSERT INTO model_files (sha256, bytes, chunks, completed_at) VALUES ('") + kModelSha +
         "', 11, 1, now()), (repeat('c', 64), 1, 1, now())");
  w.exec(std::string("INSERT INTO model_file_chunks VALUES ('") + kModelSha + "', 0, 'hello model'), "
         "(repeat('c', 64), 0, 'x')");
}

int64_t insert_alpha(pqxx::work& w) {
  const int64_t c = one(w,
                        "INSERT INTO campaigns (name, description, source_file, source_yaml, run_count, state, "
                        "priority, created_at) VALUES ('alpha ü', E'tab\\there\\nline two \\\\ back', 'alpha.yaml', "
                        "E'name: alpha\\nruns:\\n  - model: resnet18\\n', 3, 'active', 3, "
                        "'2026-02-01 10:00:00.5+00') RETURNING id");
  const std::string cid = std::to_string(c);
  w.exec("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, status, agent_id, facts, attempts, error, "
         "queued_at, assigned_at, started_at, finished_at, wall_s, agent_t0_unix_s, cancel_requested, min_mem_bytes, "
         "storage, unfit_classes, applied, reference_state, storage_device, page_cache_dropped, compute_device) "
         "VALUES (" + cid + ", 0, '{\"model\": \"resnet18\", \"batch_size\": 32}', 'agx-orin', 3, 'done', "
         "(SELECT id FROM agents WHERE name = 'orin-a'), '{\"name\": \"orin-a\", \"backend\": \"jetson\"}', 1, '', "
         "'2026-02-01 10:00:01+00', '2026-02-01 10:00:02+00', '2026-02-01 10:00:03+00', '2026-02-01 10:30:00+00', "
         "1797.123456789, 1769940003.123456789, false, 4294967296, 'nvme', '{nano,xavier-nx}', "
         "'{\"mode_name\": \"MAXN\", \"cpu_khz\": 2201600}', false, 'nvme0n1', true, 'cuda:0 (Orin)'), "
         "(" + cid + ", 1, '{\"model\": \"lenet5\"}', 'xavier-nx', 2, 'failed', (SELECT id FROM agents WHERE "
         "name = 'nx-b'), NULL, 3, E'out of memory\\n\"quoted\"\\ttab', now(), now(), now(), now(), NULL, NULL, "
         "false, 0, NULL, '{}', NULL, NULL, NULL, NULL, NULL), "
         "(" + cid + ", 2, '{\"model\": \"torchscript:" + std::string(kModelSha) + "\"}', 'any', 2, 'cancelled', "
         "NULL, NULL, 0, '', now(), NULL, NULL, "
         "now(), NULL, NULL, true, 0, NULL, '{}', NULL, NULL, NULL, NULL, NULL)");
  const std::string run0 = "(SELECT id FROM runs WHERE campaign_id = " + cid + " AND ordinal = 0)";
  const std::string run1 = "(SELECT id FROM runs WHERE campaign_id = " + cid + " AND ordinal = 1)";
  w.exec("INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, energy_j, mean_power_w, loss, "
         "read_mb_s, t_start_s, t_end_s, power_coverage, cores_start, cpu_khz_start, throttled, throttle_reason, "
         "copy_s, mb_recorded, stall_mean_s, stall_p50_s, stall_p95_s, compute_mean_s, compute_p50_s, compute_p95_s, "
         "minibatch_mean_ms) SELECT " + run0 + ", e, 10.1 + e / 3.0, 0.1 / 3, 9.9, 4096, NULL, 15.25, "
         "CASE WHEN e = 1 THEN NULL ELSE 0.1 END, 1e-300, e * 10.0, e * 10.0 + 9.5, 0.99, 12, 2201600, e = 2, "
         "CASE WHEN e = 2 THEN 'gpu clock 1300500000 -> 918000000' ELSE '' END, CASE WHEN e = 0 THEN NULL ELSE 0.25 "
         "END, 4096, 0.001234567890123, 0.0012, 0.0031, 0.0098765, 0.0098, 0.0101, 11.111111111111111 "
         "FROM generate_series(0, 2) e");
  w.exec("INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, loss) VALUES (" + run1 +
         ", 0, 1, 0.5, 0.5, 10, 'NaN')");
  w.exec("INSERT INTO minibatch_chunks VALUES (" + cid + ", " + run0 + ", 0, 0, '{0.001,0.002,3.4028235e38}', "
         "'{0.01,1.4e-45,-0}', NULL), "
         "(" + cid + ", " + run0 + ", 1, 0, '{NaN,Infinity,-Infinity}', '{0.1,0.2,0.3}', '{0.0003,NULL,1e-40}'), "
         "(" + cid + ", " + run0 + ", 2, 0, array(SELECT (i * 0.00037)::real FROM generate_series(1, 4096) i), "
         "array(SELECT (1.0 / i)::real FROM generate_series(1, 4096) i), "
         "array(SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 1e-7)::real END FROM generate_series(1, 4096) i))");
  w.exec("INSERT INTO sample_chunks VALUES (" + cid + ", " + run0 + ", 0.5, 1.5, '{0.5,1.0000000000000002,1.5}', "
         "'{10,20,30.5}', '{729.6,1497.6,2201.6}', '{1,2,3}', '{0,4096,9223372036854775807}', '{7.25,NULL,9}', "
         "'{NULL,NULL,45.5}', '{0,2,3}', '{10,20,30,40.5,50}'), "
         "(" + cid + ", " + run0 + ", 2, 2049, array(SELECT i::float8 + 1 / 3.0 FROM generate_series(1, 2048) i), "
         "array_fill(50::real, ARRAY[2048]), array_fill(1497.6::real, ARRAY[2048]), array_fill(123456::bigint, "
         "ARRAY[2048]), array_fill(0::bigint, ARRAY[2048]), array_fill(NULL::real, ARRAY[2048]), "
         "array_fill(51.5::real, ARRAY[2048]), array_fill(12::smallint, ARRAY[2048]), "
         "array(SELECT (i % 1000 / 10.0)::real FROM generate_series(1, 24576) i))");
  // An adaptive-profiling plan (issue 33) with its fit and two rounds, runs 0 and 1 its rounds' runs.
  w.exec("INSERT INTO adaptive_plans (campaign_id, plan_index, device_class, workload, spec, state, rounds, error, fit) "
         "VALUES (" + cid + ", 0, 'agx-orin', 'lenet5/fashion-mnist', '{\"budget\": 6, \"candidates\": [[12, 2201600]]}', "
         "'done', 2, NULL, '{\"summary\": {\"observations\": 2, \"time_mape\": 0.125}}')");
  const std::string plan = "(SELECT id FROM adaptive_plans WHERE campaign_id = " + cid + ")";
  w.exec("INSERT INTO adaptive_rounds (plan_id, round, created_at, runs, fit) VALUES (" + plan +
         ", 0, '2026-02-01 10:00:00.75+00', 1, '{\"round\": 0}'), (" + plan + ", 1, '2026-02-01 10:40:00+00', 1, NULL)");
  w.exec("UPDATE runs SET adaptive_plan_id = " + plan + ", adaptive_round = ordinal WHERE campaign_id = " + cid +
         " AND ordinal < 2");
  // Results set aside (issue 29): a late epoch of run 0 from nx-b, and one from other-c, which ran no run of alpha.
  w.exec("INSERT INTO set_aside_results (campaign_id, run_id, agent_id, message_type, reason, frame, frame_md5, "
         "received_at) SELECT " + cid + ", " + run0 + ", a.id, 'epoch_result', 'the run is done on agent ' || a.id, "
         "jsonb_build_object('type', 'epoch_result', 'run_id', 1, 'epoch', 7, 'e2e_s', 1.25), md5(a.name), "
         "'2026-02-01 11:00:00.25+00' FROM agents a WHERE a.name IN ('nx-b', 'other-c')");
  return c;
}

int64_t insert_beta(pqxx::work& w) {
  const int64_t c = one(w, "INSERT INTO campaigns (name, source_file, source_yaml, run_count) VALUES ('beta', 'b.yaml', "
                           "'', 1) RETURNING id");
  const std::string cid = std::to_string(c);
  const int64_t run = one(w, "INSERT INTO runs (campaign_id, ordinal, config, device, epochs, status, agent_id) VALUES (" +
                                 cid + ", 0, '{}', 'nano', 1, 'done', (SELECT id FROM agents WHERE name = 'other-c')) "
                                 "RETURNING id");
  const std::string rid = std::to_string(run);
  w.exec("INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, loss) VALUES (" + rid +
         ", 0, 1, 0.1, 0.8, 2, 0.5)");
  w.exec("INSERT INTO minibatch_chunks VALUES (" + cid + ", " + rid + ", 0, 0, '{0.1,0.2}', '{0.3,0.4}', NULL)");
  w.exec("INSERT INTO sample_chunks VALUES (" + cid + ", " + rid + ", 1, 1, '{1}', '{5}', '{100}', '{1}', '{0}', "
         "'{NULL}', '{NULL}', '{1}', '{5}')");
  return c;
}

}  // namespace jetsweep::testing

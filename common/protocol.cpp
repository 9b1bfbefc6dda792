#include "common/protocol.hpp"

#include <boost/beast/core/detail/base64.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <limits>

#include "common/described_json.hpp"
#include "common/json_fields.hpp"
#include "common/json_parse.hpp"
#include "common/text.hpp"

namespace jetsweep::proto {
namespace bj = boost::json;
namespace beast = boost::beast;
using json::FieldReader;

bool EpochResult::operator==(const EpochResult& o) const { return json::described_equal(*this, o); }

namespace {

template <class T>
struct Tag;
#define JS_PROTO_TAG(T, name) template <> struct Tag<T> { static constexpr const char* kName = name; };
JS_PROTO_TAG(Register, "register")
JS_PROTO_TAG(Registered, "registered")
JS_PROTO_TAG(Heartbeat, "heartbeat")
JS_PROTO_TAG(AssignRun, "assign_run")
JS_PROTO_TAG(MinibatchChunk, "minibatches")
JS_PROTO_TAG(EpochResult, "epoch_result")
JS_PROTO_TAG(SampleChunk, "samples")
JS_PROTO_TAG(RunFinished, "run_finished")
JS_PROTO_TAG(Ack, "ack")
JS_PROTO_TAG(Error, "error")
JS_PROTO_TAG(TimeSync, "time_sync")
JS_PROTO_TAG(TimeSyncReply, "time_sync_reply")
JS_PROTO_TAG(CancelRun, "cancel_run")
JS_PROTO_TAG(RunStarted, "run_started")
JS_PROTO_TAG(RebootPending, "reboot_pending")
JS_PROTO_TAG(FetchModel, "fetch_model")
JS_PROTO_TAG(ModelChunk, "model_chunk")
#undef JS_PROTO_TAG

bool o_has(const bj::object& o, const char* key) { return o.contains(key) && !o.at(key).is_null(); }
bj::array to_array(const std::vector<double>& v) { return bj::array(v.begin(), v.end()); }
bj::value clocks_json(const std::optional<ClockReading>& c);  // defined below

template <class T>
void put_opt(bj::object& o, const char* k, const std::optional<T>& v) {
  o[k] = v ? bj::value(*v) : bj::value(nullptr);
}

// ---- encoders: fill the envelope object with the body's fields ----
void fill(bj::object& o, const Register& m) {
  o["name"] = m.name;
  bj::object f;
  f["hostname"] = m.facts.hostname;
  f["cpus"] = m.facts.cpus;
  f["mem_bytes"] = m.facts.mem_bytes;
  f["backend"] = m.facts.backend;
  f["device_class"] = m.facts.device_class;
  f["kernel"] = m.facts.kernel;
  f["torch_version"] = m.facts.torch_version;
  f["compiler"] = m.facts.compiler;
  f["git_sha"] = m.facts.git_sha;
  if (!m.facts.board_id.empty()) f["board_id"] = m.facts.board_id;
  if (!m.facts.accelerator.empty()) f["accelerator"] = m.facts.accelerator;
  if (m.facts.may_reboot) f["may_reboot"] = true;
  if (m.facts.tables) f["tables"] = to_json(*m.facts.tables);
  const std::pair<const char*, const std::vector<std::string>*> lists[] = {
      {"not_ready", &m.facts.not_ready}, {"storage", &m.facts.storage}, {"live_modes", &m.facts.live_modes}};
  for (const auto& [key, list] : lists)
    if (!list->empty()) f[key] = bj::array(list->begin(), list->end());
  o["facts"] = std::move(f);
  put_opt(o, "current_run", m.current_run);
  bj::array runs;
  for (int64_t r : m.journal_runs) runs.emplace_back(r);
  o["journal_runs"] = std::move(runs);
  if (m.credential) o["credential"] = *m.credential;
}
void fill(bj::object& o, const Registered& m) {
  o["agent_id"] = m.agent_id;
  o["heartbeat_interval_ms"] = m.heartbeat_interval_ms;
  if (m.credential) o["credential"] = *m.credential;
}
void fill(bj::object& o, const Heartbeat& m) {
  o["state"] = m.state, put_opt(o, "run_id", m.run_id);
  if (m.backlog_messages) o["backlog_messages"] = *m.backlog_messages;
  if (m.backlog_bytes) o["backlog_bytes"] = *m.backlog_bytes;
}
void fill(bj::object& o, const FetchModel& m) { o["sha256"] = m.sha256, o["index"] = m.index; }
void fill(bj::object& o, const ModelChunk& m) {
  o["sha256"] = m.sha256, o["index"] = m.index, o["chunks"] = m.chunks, o["bytes"] = m.bytes;
  std::string b64(beast::detail::base64::encoded_size(m.data.size()), '\0');
  b64.resize(beast::detail::base64::encode(b64.data(), m.data.data(), m.data.size()));
  o["data"] = b64;
  if (!m.error.empty()) o["error"] = m.error;
}
void fill(bj::object& o, const CancelRun& m) { o["run_id"] = m.run_id, o["reason"] = m.reason; }
void fill(bj::object& o, const AssignRun& m) {
  o["run_id"] = m.run_id;
  o["config"] = to_json(m.config);
}
void fill(bj::object& o, const MinibatchChunk& m) {
  o["run_id"] = m.run_id;
  o["epoch"] = m.epoch;
  o["first_index"] = m.first_index;
  o["stall_s"] = to_array(m.stall_s);
  o["compute_s"] = to_array(m.compute_s);
  if (!m.copy_s.empty()) o["copy_s"] = to_array(m.copy_s);
}
void fill(bj::object& o, const EpochResult& m) {
  o["run_id"] = m.run_id;
  o["epoch"] = m.epoch;
  o["e2e_s"] = m.e2e_s;
  o["stall_s"] = m.stall_s;
  o["compute_s"] = m.compute_s;
  o["minibatches"] = m.minibatches;
  if (m.copy_s) o["copy_s"] = *m.copy_s;
  json::put_described(o, static_cast<const EpochMeasures&>(m));   // null where not measured
  o["clocks_start"] = clocks_json(m.clocks_start);
  o["clocks_end"] = clocks_json(m.clocks_end);
  o["throttled"] = m.throttled;
  if (!m.throttle_reason.empty()) o["throttle_reason"] = m.throttle_reason;
}

bj::value clocks_json(const std::optional<ClockReading>& c) {
  if (!c) return nullptr;
  bj::object o;
  o["cores_online"] = c->cores_online;
  o["cpu_khz"] = json::optional_number(c->cpu_khz);
  o["gpu_hz"] = json::optional_number(c->gpu_hz);
  o["emc_hz"] = json::optional_number(c->emc_hz);
  return o;
}
void fill(bj::object& o, const RunStarted& m) {
  o["run_id"] = m.run_id;
  o["reference_state"] = m.reference_state;
  if (m.applied) o["applied"] = to_json(*m.applied);
  else o["applied"] = nullptr;
  o["storage_medium"] = m.storage_medium;
  o["storage_device"] = m.storage_device;
  o["page_cache_dropped"] = m.page_cache_dropped;
  o["compute_device"] = m.compute_device;
  o["t0_unix_s"] = m.t0_unix_s;
  if (m.workload) o["workload"] = to_json(*m.workload);
}
void fill(bj::object& o, const SampleChunk& m) {
  o["run_id"] = m.run_id;
  o["t0_unix_s"] = json::optional_number(m.t0_unix_s);
  bj::array rows;
  rows.reserve(m.samples.size());
  for (const auto& s : m.samples) {
    bj::object r;
    r["t_s"] = s.t_s;
    r["cpu_util_pct"] = s.cpu_util_pct;
    r["core_util_pct"] = to_array(s.core_util_pct);
    r["cpu_freq_mhz"] = json::optional_number(s.cpu_freq_mhz);
    r["mem_used_kb"] = s.mem_used_kb;
    r["disk_read_bytes"] = s.disk_read_bytes;
    r["power_w"] = json::optional_number(s.power_w);
    if (s.temp_max_c) r["temp_max_c"] = *s.temp_max_c;
    rows.emplace_back(std::move(r));
  }
  o["samples"] = std::move(rows);
}
void fill(bj::object& o, const RunFinished& m) {
  o["run_id"] = m.run_id;
  o["status"] = m.status;
  o["error"] = m.error;
  o["wall_s"] = m.wall_s;
}
void fill(bj::object& o, const RebootPending& m) {
  o["run_id"] = m.run_id;
  o["mode_name"] = m.mode_name;
  o["nvpmodel_id"] = m.nvpmodel_id;
  put_opt(o, "tpc_pg_mask_from", m.tpc_pg_mask_from);
  put_opt(o, "tpc_pg_mask_to", m.tpc_pg_mask_to);
  put_opt(o, "fbp_pg_mask_from", m.fbp_pg_mask_from);
  put_opt(o, "fbp_pg_mask_to", m.fbp_pg_mask_to);
  o["expected_back_s"] = m.expected_back_s;
  o["requested_unix_s"] = m.requested_unix_s;
}
void fill(bj::object& o, const Ack& m) { o["up_to"] = m.up_to; }
void fill(bj::object& o, const TimeSync& m) { o["t0"] = m.t0; }
void fill(bj::object& o, const TimeSyncReply& m) {
  o["t0"] = m.t0;
  o["t1"] = m.t1;
  o["t2"] = m.t2;
}
void fill(bj::object& o, const Error& m) {
  o["code"] = m.code;
  o["message"] = m.message;
  put_opt(o, "ref_id", m.ref_id);
}

// ---- decoders ----
constexpr double kUnbounded = std::numeric_limits<double>::infinity();

std::string range_text(double lo, double hi) {
  char buf[96];
  if (hi == kUnbounded) std::snprintf(buf, sizeof buf, "must be >= %.10g", lo);
  else std::snprintf(buf, sizeof buf, "must be between %.10g and %.10g", lo, hi);
  return buf;
}

// Physical bounds: a value outside [lo, hi] (NaN too) is refused, naming the field (and the element).
void within(FieldReader& r, const char* field, double v, double lo, double hi) {
  if (r.ok() && !(v >= lo && v <= hi)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    r.fail(field, std::string(buf) + " is out of bounds: " + range_text(lo, hi));
  }
}
void within(FieldReader& r, const char* field, const std::optional<double>& v, double lo, double hi) {
  if (v) within(r, field, *v, lo, hi);
}
void within(FieldReader& r, const char* field, const std::vector<double>& v, double lo, double hi) {
  for (size_t i = 0; r.ok() && i < v.size(); ++i) {
    if (v[i] >= lo && v[i] <= hi) continue;
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", v[i]);
    r.fail(field, "element " + std::to_string(i) + " (" + buf + ") is out of bounds: " + range_text(lo, hi));
  }
}

Status parse(const bj::object& o, FieldReader& r, Register& m) {
  m.name = r.string("name");
  if (r.ok()) {
    if (auto bad = agent_name_problem(m.name)) r.fail("name", *bad);
  }
  m.current_run = r.opt_integer("current_run");
  m.credential = r.opt_string("credential");
  if (r.ok() && m.credential && !is_credential_text(*m.credential))
    r.fail("credential", "is not a credential the controller issues (" + std::to_string(kCredentialChars) +
                             " hexadecimal digits)");
  if (o_has(o, "journal_runs")) m.journal_runs = r.integer_array("journal_runs");   // int64 (a double cast was UB)
  if (const auto* f = r.object("facts")) {
    FieldReader fr(*f, r.where() + " field 'facts',");
    m.facts.hostname = fr.string("hostname");
    m.facts.cpus = fr.integer("cpus");
    m.facts.mem_bytes = fr.integer("mem_bytes");
    m.facts.backend = fr.string("backend");
    m.facts.device_class = fr.string("device_class");
    m.facts.kernel = fr.opt_string("kernel").value_or("");
    m.facts.torch_version = fr.opt_string("torch_version").value_or("");
    m.facts.compiler = fr.opt_string("compiler").value_or("");
    m.facts.git_sha = fr.opt_string("git_sha").value_or("");
    m.facts.board_id = fr.opt_string("board_id").value_or("");
    m.facts.accelerator = fr.opt_string("accelerator").value_or("");
    m.facts.not_ready = fr.opt_string_array("not_ready");
    m.facts.storage = fr.opt_string_array("storage");
    m.facts.live_modes = fr.opt_string_array("live_modes");
    m.facts.may_reboot = fr.opt_boolean("may_reboot").value_or(false);
    if (const auto* t = o_has(*f, "tables") ? fr.object("tables") : nullptr) {
      JS_ASSIGN_OR_RETURN(m.facts.tables, board_tables_from_json(*t, fr.where() + " field 'tables'"));
    }
    if (!fr.ok()) return fr.status();
  }
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, Registered& m) {
  m.agent_id = r.integer("agent_id");
  m.heartbeat_interval_ms = r.integer("heartbeat_interval_ms");
  if (r.ok() && m.heartbeat_interval_ms <= 0) r.fail("heartbeat_interval_ms", "must be positive");
  m.credential = r.opt_string("credential");
  if (r.ok() && m.credential && !is_credential_text(*m.credential))
    r.fail("credential", "is not a credential the controller issues (" + std::to_string(kCredentialChars) +
                             " hexadecimal digits)");
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, Heartbeat& m) {
  m.state = r.string("state");
  m.run_id = r.opt_integer("run_id");
  for (auto [field, v] : {std::pair{"backlog_messages", &m.backlog_messages}, std::pair{"backlog_bytes", &m.backlog_bytes}})
    if ((*v = r.opt_integer(field)) && **v < 0) r.fail(field, "must not be negative");
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, FetchModel& m) {
  m.sha256 = r.string("sha256");
  m.index = r.integer("index");
  if (r.ok() && m.index < 0) r.fail("index", "must be >= 0");
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, ModelChunk& m) {
  m.sha256 = r.string("sha256");
  m.index = r.integer("index");
  m.chunks = r.integer("chunks");
  m.bytes = r.integer("bytes");
  m.error = r.opt_string("error").value_or("");
  const std::string b64 = r.string("data");
  if (r.ok() && (m.index < 0 || m.chunks < 0 || m.bytes < 0)) r.fail("index", "index, chunks and bytes must be >= 0");
  // Beast's decoder writes a whole group for a partial one: only text of whole 4-character groups is decoded. It stops
  // at the '=' padding, at most two of which may end the text.
  if (r.ok() && b64.size() % 4 != 0) r.fail("data", "is not base64");
  if (r.ok()) {
    m.data.resize(beast::detail::base64::decoded_size(b64.size()));
    const auto [written, read] = beast::detail::base64::decode(m.data.data(), b64.data(), b64.size());
    if (b64.size() - read > 2 || b64.find_first_not_of('=', read) != std::string::npos) r.fail("data", "is not base64");
    m.data.resize(written);
  }
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, CancelRun& m) {
  m.run_id = r.integer("run_id");
  m.reason = r.opt_string("reason").value_or("");
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, AssignRun& m) {
  m.run_id = r.integer("run_id");
  if (const auto* c = r.object("config")) {
    auto cfg = run_config_from_json(*c, r.where() + " field 'config',");
    if (!cfg) return cfg.status();
    m.config = std::move(cfg).value();
  }
  return r.status();
}
Status parse(const bj::object& o, FieldReader& r, MinibatchChunk& m) {
  m.run_id = r.integer("run_id");
  m.epoch = r.integer("epoch");
  m.first_index = r.integer("first_index");
  m.stall_s = r.number_array("stall_s");
  m.compute_s = r.number_array("compute_s");
  if (o.contains("copy_s")) m.copy_s = r.number_array("copy_s");
  if (r.ok() && m.stall_s.size() != m.compute_s.size())
    r.fail("compute_s", "has " + std::to_string(m.compute_s.size()) + " values but stall_s has " +
                            std::to_string(m.stall_s.size()));
  if (r.ok() && !m.copy_s.empty() && m.copy_s.size() != m.stall_s.size())
    r.fail("copy_s", "has " + std::to_string(m.copy_s.size()) + " values but stall_s has " +
                         std::to_string(m.stall_s.size()));
  if (r.ok() && m.stall_s.size() > kMaxMinibatchesPerChunk)
    r.fail("stall_s", "more than " + std::to_string(kMaxMinibatchesPerChunk) + " minibatches in one chunk");
  if (r.ok() && (m.epoch < 0 || m.first_index < 0)) r.fail(m.epoch < 0 ? "epoch" : "first_index", "must be >= 0");
  within(r, "stall_s", m.stall_s, 0, kMaxMinibatchSeconds);
  within(r, "compute_s", m.compute_s, 0, kMaxMinibatchSeconds);
  within(r, "copy_s", m.copy_s, 0, kMaxMinibatchSeconds);
  return r.status();
}
Status parse(const bj::object& o, FieldReader& r, EpochResult& m) {
  m.run_id = r.integer("run_id");
  m.epoch = r.integer("epoch");
  m.e2e_s = r.number("e2e_s");
  m.stall_s = r.number("stall_s");
  m.compute_s = r.number("compute_s");
  m.minibatches = r.integer("minibatches");
  m.copy_s = r.opt_number("copy_s");
  json::read_described(r, static_cast<EpochMeasures&>(m));
  m.throttled = r.opt_boolean("throttled").value_or(false);
  m.throttle_reason = r.opt_string("throttle_reason").value_or("");
  const std::pair<const char*, std::optional<ClockReading>*> clock_fields[] = {{"clocks_start", &m.clocks_start},
                                                                              {"clocks_end", &m.clocks_end}};
  for (const auto& [key, slot] : clock_fields) {
    if (!o_has(o, key)) continue;
    if (const auto* c = r.object(key)) {
      FieldReader cr(*c, r.where() + " field '" + key + "',");
      ClockReading reading;
      reading.cores_online = cr.integer("cores_online");
      reading.cpu_khz = cr.opt_number("cpu_khz");
      reading.gpu_hz = cr.opt_number("gpu_hz");
      reading.emc_hz = cr.opt_number("emc_hz");
      if (!cr.ok()) return cr.status();
      *slot = reading;
    }
  }
  if (r.ok() && m.epoch < 0) r.fail("epoch", "must be >= 0");
  if (r.ok() && m.minibatches < 0) r.fail("minibatches", "must be >= 0");
  const std::pair<const char*, std::optional<double>> durations[] = {
      {"e2e_s", m.e2e_s}, {"stall_s", m.stall_s}, {"compute_s", m.compute_s}, {"copy_s", m.copy_s}};
  for (const auto& [key, value] : durations) within(r, key, value, 0, kMaxEpochSeconds);
  for (const auto& bound : kEpochMeasureBounds)
    within(r, json::described_name(bound.measure), m.*bound.measure, bound.lo, bound.hi);
  if (r.ok() && m.t_start_s && m.t_end_s && *m.t_end_s < *m.t_start_s) r.fail("t_end_s", "must not precede t_start_s");
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, SampleChunk& m) {
  m.run_id = r.integer("run_id");
  m.t0_unix_s = r.opt_number("t0_unix_s");
  within(r, "t0_unix_s", m.t0_unix_s, 0, kMaxUnixSeconds);
  const auto* rows = r.array("samples");
  if (!rows) return r.status();
  if (rows->size() > kMaxSamplesPerChunk)
    r.fail("samples", "more than " + std::to_string(kMaxSamplesPerChunk) + " samples in one chunk");
  for (size_t i = 0; r.ok() && i < rows->size(); ++i) {
    const auto& v = (*rows)[i];
    if (!v.is_object()) {
      r.fail("samples", "element " + std::to_string(i) + " is not an object");
      break;
    }
    FieldReader sr(v.get_object(), r, "samples", i);
    Sample s;
    s.t_s = sr.number("t_s");
    s.cpu_util_pct = sr.number("cpu_util_pct");
    if (o_has(v.get_object(), "core_util_pct")) s.core_util_pct = sr.number_array("core_util_pct");
    s.cpu_freq_mhz = sr.opt_number("cpu_freq_mhz");
    s.mem_used_kb = sr.integer("mem_used_kb");
    s.disk_read_bytes = sr.integer("disk_read_bytes");
    s.power_w = sr.opt_number("power_w");
    within(sr, "t_s", s.t_s, 0, kMaxRunSeconds);
    within(sr, "temp_max_c", s.temp_max_c = sr.opt_number("temp_max_c"), -60, 200);   // absent (older agents): unknown
    within(sr, "power_w", s.power_w, 0, kMaxPowerWatts);
    if (!sr.ok()) return sr.status();
    m.samples.push_back(s);
  }
  return r.status();
}
Status parse(const bj::object& o, FieldReader& r, RunStarted& m) {
  m.run_id = r.integer("run_id");
  m.reference_state = r.opt_boolean("reference_state").value_or(false);
  m.storage_medium = r.opt_string("storage_medium").value_or("");
  m.storage_device = r.opt_string("storage_device").value_or("");
  m.page_cache_dropped = r.opt_boolean("page_cache_dropped").value_or(false);
  m.compute_device = r.opt_string("compute_device").value_or("");
  m.t0_unix_s = r.number("t0_unix_s");
  within(r, "t0_unix_s", m.t0_unix_s, 0, kMaxUnixSeconds);
  if (const auto* a = o_has(o, "applied") ? r.object("applied") : nullptr) {
    FieldReader ar(*a, r.where() + " field 'applied',");
    BoardState b;
    b.mode_name = ar.opt_string("mode_name").value_or("");
    b.nvpmodel_id = ar.opt_integer("nvpmodel_id");
    b.cores_online = ar.opt_integer("cores_online").value_or(0);
    b.cpu_khz = ar.opt_integer("cpu_khz").value_or(0);
    b.gpu_hz = ar.opt_integer("gpu_hz").value_or(0);
    b.emc_hz = ar.opt_integer("emc_hz").value_or(0);
    b.clocks_pinned = ar.opt_boolean("clocks_pinned").value_or(false);
    b.fan = ar.opt_string("fan").value_or("");
    b.tpc_pg_mask = ar.opt_integer("tpc_pg_mask");
    b.fbp_pg_mask = ar.opt_integer("fbp_pg_mask");
    if (ar.ok() && (b.cores_online < 0 || b.cpu_khz < 0 || b.gpu_hz < 0 || b.emc_hz < 0))
      ar.fail("cores_online", "cores and frequencies must be >= 0");
    if (ar.ok() && ((b.tpc_pg_mask && *b.tpc_pg_mask < 0) || (b.fbp_pg_mask && *b.fbp_pg_mask < 0)))
      ar.fail(b.tpc_pg_mask && *b.tpc_pg_mask < 0 ? "tpc_pg_mask" : "fbp_pg_mask", "GPU masks must be >= 0");
    if (!ar.ok()) return ar.status();
    m.applied = b;
  }
  if (const auto* w = o_has(o, "workload") ? r.object("workload") : nullptr) {
    FieldReader wr(*w, r.where() + " field 'workload',");
    WorkloadFacts facts;
    json::read_described(wr, facts);
    check_workload_facts(facts, wr);
    if (!wr.ok()) return wr.status();
    m.workload = facts;
  }
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, RunFinished& m) {
  m.run_id = r.integer("run_id");
  m.status = r.string("status");
  m.error = r.opt_string("error").value_or("");
  m.wall_s = r.opt_number("wall_s").value_or(0.0);
  within(r, "wall_s", m.wall_s, 0, kMaxRunSeconds);
  if (r.ok() && m.status != "done" && m.status != "failed" && m.status != "cancelled")
    r.fail("status", "must be 'done', 'failed' or 'cancelled'");
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, RebootPending& m) {
  m.run_id = r.integer("run_id");
  m.mode_name = r.string("mode_name");
  m.nvpmodel_id = r.integer("nvpmodel_id");
  const std::pair<const char*, std::optional<int64_t>*> masks[] = {{"tpc_pg_mask_from", &m.tpc_pg_mask_from},
      {"tpc_pg_mask_to", &m.tpc_pg_mask_to}, {"fbp_pg_mask_from", &m.fbp_pg_mask_from}, {"fbp_pg_mask_to", &m.fbp_pg_mask_to}};
  for (const auto& [key, slot] : masks)
    if ((*slot = r.opt_integer(key)) && r.ok() && **slot < 0) r.fail(key, "GPU masks must be >= 0");
  m.expected_back_s = r.number("expected_back_s");
  m.requested_unix_s = r.number("requested_unix_s");
  within(r, "expected_back_s", m.expected_back_s, 1, 86400);
  within(r, "requested_unix_s", m.requested_unix_s, 0, kMaxUnixSeconds);
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, Ack& m) {
  auto v = r.integer("up_to");
  if (r.ok() && v < 0) r.fail("up_to", "must be >= 0");
  m.up_to = static_cast<uint64_t>(v);
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, TimeSync& m) {
  m.t0 = r.number("t0");
  within(r, "t0", m.t0, 0, kMaxUnixSeconds);
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, TimeSyncReply& m) {
  m.t0 = r.number("t0");
  m.t1 = r.number("t1");
  m.t2 = r.number("t2");
  within(r, "t0", m.t0, 0, kMaxUnixSeconds);
  within(r, "t1", m.t1, 0, kMaxUnixSeconds);
  within(r, "t2", m.t2, 0, kMaxUnixSeconds);
  return r.status();
}
Status parse(const bj::object&, FieldReader& r, Error& m) {
  m.code = r.string("code");
  m.message = r.string("message");
  // A message id, never negative (a negative one would come back as a huge unsigned id).
  if (auto ref = r.opt_integer("ref_id"); ref && *ref < 0) r.fail("ref_id", "must be >= 0");
  else if (ref) m.ref_id = static_cast<uint64_t>(*ref);
  return r.status();
}

template <class T>
Result<Body> decode_as(const bj::object& o, const std::string& type) {
  T m;
  FieldReader r(o, "message '" + type + "'");
  Status s = parse(o, r, m);
  if (!s.is_ok()) return s;
  return Body(std::move(m));
}

using Decoder = Result<Body> (*)(const bj::object&, const std::string&);

template <size_t I = 0>
Decoder decoder_for(std::string_view type) {
  if constexpr (I == std::variant_size_v<Body>) {
    return nullptr;
  } else {
    using T = std::variant_alternative_t<I, Body>;
    if (type == Tag<T>::kName) return &decode_as<T>;
    return decoder_for<I + 1>(type);
  }
}

}  // namespace

std::string_view type_name(const Body& body) {
  return std::visit([](const auto& m) -> std::string_view { return Tag<std::decay_t<decltype(m)>>::kName; }, body);
}

std::string encode(const Envelope& envelope) {
  bj::object o;
  o["type"] = type_name(envelope.body);
  o["version"] = kVersion;
  o["id"] = envelope.id;
  std::visit([&](const auto& m) { fill(o, m); }, envelope.body);
  bj::value v(std::move(o));
  json::null_non_finite(v);  // a required field left null is then refused by the decoder, naming it
  std::string frame = bj::serialize(v);
  // Boost.JSON writes a string's bytes as they are: text that is not UTF-8 (an error naming a Latin-1 file name)
  // would make a frame no parser accepts, resent forever by the agent. Such bytes travel as U+FFFD.
  if (invalid_utf8_at(frame)) frame = utf8_repaired(frame);
  return frame;
}

Result<Envelope> decode(std::string_view frame) {
  if (frame.size() > kMaxFrameBytes)
    return protocol_error("frame of " + std::to_string(frame.size()) + " bytes exceeds the limit of " +
                          std::to_string(kMaxFrameBytes));
  bj::error_code ec;
  // The parsed tree lives only while the frame is decoded: bump-allocate it, free it in one go.
  bj::monotonic_resource arena;
  // A frame whose strings hold bytes that are not UTF-8 (older agents journaled some) is read with them as U+FFFD;
  // outside a string they stay a syntax error. The repaired text is held to the limit too; the tree stays in `arena`.
  bj::value v = [&] {
    bj::value first = json::parse_exact(frame, ec, &arena);
    if (!ec || !invalid_utf8_at(frame)) return first;
    const std::string repaired = utf8_repaired(frame);
    if (repaired.size() > kMaxFrameBytes) return first;
    ec.clear();
    return json::parse_exact(repaired, ec, &arena);
  }();
  if (ec) return protocol_error("malformed JSON frame: " + ec.message());
  if (!v.is_object()) return protocol_error(std::string("frame is not a JSON object but ") + json::kind_name(v));
  const auto& o = v.get_object();
  FieldReader env(o, "envelope");
  std::string type = env.string("type");
  auto version = env.integer("version");
  auto id = env.integer("id");
  if (!env.ok()) return env.status();
  if (version != kVersion)
    return protocol_error("message '" + type + "': unsupported protocol version " + std::to_string(version) +
                          " (this build speaks " + std::to_string(kVersion) + ")");
  if (id < 0) return protocol_error("message '" + type + "' field 'id': must be >= 0");
  Decoder d = decoder_for(type);
  if (!d) return protocol_error("unknown message type '" + type + "'");
  auto body = d(o, type);
  if (!body) return body.status();
  return Envelope{static_cast<uint64_t>(id), std::move(body).value()};
}

double unix_now_s() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

bool needs_ack(const Body& body) {
  return std::holds_alternative<MinibatchChunk>(body) || std::holds_alternative<EpochResult>(body) ||
         std::holds_alternative<RunStarted>(body) || std::holds_alternative<SampleChunk>(body) ||
         std::holds_alternative<RunFinished>(body) || std::holds_alternative<RebootPending>(body);
}

std::optional<int64_t> result_run_id(const Body& body) {
  return std::visit(
      [](const auto& m) -> std::optional<int64_t> {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, MinibatchChunk> || std::is_same_v<T, EpochResult> ||
                      std::is_same_v<T, SampleChunk> || std::is_same_v<T, RunFinished> ||
                      std::is_same_v<T, RunStarted> || std::is_same_v<T, RebootPending>)
          return m.run_id;
        else
          return std::nullopt;
      },
      body);
}

}  // namespace jetsweep::proto

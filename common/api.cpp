#include "common/api.hpp"

#include <cmath>

#include "common/described_json.hpp"
#include "common/json_fields.hpp"

namespace jetsweep::api {
namespace bj = boost::json;

std::string CampaignStateChange::state() const {
  if (action == "pause") return "paused";
  if (action == "resume") return "active";
  if (action == "cancel") return "cancelled";
  return "";
}

std::string campaign_path(const std::string& ref) { return "/api/campaigns/" + ref; }
std::string campaign_report_path(const std::string& ref) { return campaign_path(ref) + "/report"; }
std::string campaign_action_path(const CampaignStateChange& c) { return campaign_path(c.ref) + "/" + c.action; }
std::string run_cancel_path(const std::string& run_ref) { return "/api/runs/" + run_ref + "/cancel"; }
std::string agent_revoke_path(const std::string& name) { return "/api/agents/" + name + "/revoke"; }

namespace {

bj::value number_or_null(const std::optional<double>& v) { return json::optional_number(v); }

template <class T>
bj::value value_or_null(const std::optional<T>& v) {
  if (!v) return nullptr;
  return bj::value(*v);
}

// Reader of an object `v` named `where`; a non-object is reported as such.
struct ObjectReader {
  ObjectReader(const bj::value& v, const std::string& where)
      : empty_(), reader_(v.is_object() ? v.get_object() : empty_, where), is_object_(v.is_object()), where_(where) {}
  json::FieldReader* operator->() { return &reader_; }
  json::FieldReader& fields() { return reader_; }
  Status status() const {
    if (!is_object_) return protocol_error(where_ + ": expected an object");
    return reader_.status();
  }

 private:
  bj::object empty_;
  json::FieldReader reader_;
  bool is_object_;
  std::string where_;
};

// A nested struct (or null when it is optional) in field `name`.
template <class T>
void nested(const bj::value& parent, const char* name, const std::string& where, T& out,
            Status& first_error) {
  if (!first_error.is_ok() || !parent.is_object()) return;
  const auto* v = parent.get_object().if_contains(name);
  if (!v) {
    first_error = protocol_error(where + " field '" + name + "': missing");
    return;
  }
  first_error = from_json(*v, where + " field '" + name + "'", out);
}

template <class T>
void nested(const bj::value& parent, const char* name, const std::string& where,
            std::optional<T>& out, Status& first_error) {
  if (!first_error.is_ok() || !parent.is_object()) return;
  const auto* v = parent.get_object().if_contains(name);
  if (!v || v->is_null()) {
    out.reset();
    return;
  }
  T item;
  nested(parent, name, where, item, first_error);
  out = std::move(item);
}

// A JSON object passed through (null when absent).
std::optional<bj::object> opt_document(json::FieldReader& r, const bj::value& parent, const char* name) {
  if (!parent.is_object()) return std::nullopt;
  const auto* v = parent.get_object().if_contains(name);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_object()) {
    r.fail(name, std::string("expected an object, got ") + json::kind_name(*v));
    return std::nullopt;
  }
  return v->get_object();
}

std::vector<std::string> string_array(json::FieldReader& r, const char* name) {
  std::vector<std::string> out;
  const auto* a = r.array(name);
  if (!a) return out;
  for (const auto& e : *a) {
    if (!e.is_string()) {
      r.fail(name, std::string("expected an array of strings, found ") + json::kind_name(e));
      return {};
    }
    out.emplace_back(e.get_string());
  }
  return out;
}

// Status of the fields read and of the nested structs, the first failure first.
Status finish(const ObjectReader& r, const Status& nested_status) {
  Status s = r.status();
  return s.is_ok() ? nested_status : s;
}

}  // namespace

// ---- ErrorReply, Health ----

bj::object to_json(const ErrorReply& v) {
  bj::object o{{"error", v.error}};
  if (v.error_id) o["error_id"] = *v.error_id;
  return o;
}

Status from_json(const bj::value& v, const std::string& where, ErrorReply& out) {
  ObjectReader r(v, where);
  out.error = r->string("error");
  out.error_id = r->opt_string("error_id");
  return r.status();
}

bj::object to_json(const Health& v) {
  return {{"ok", v.ok}, {"agents_connected", v.agents_connected}, {"db_queue", v.db_queue},
          {"ingest_queue", v.ingest_queue}};
}

Status from_json(const bj::value& v, const std::string& where, Health& out) {
  ObjectReader r(v, where);
  out.ok = r->boolean("ok");
  out.agents_connected = r->integer("agents_connected");
  out.db_queue = r->integer("db_queue");
  out.ingest_queue = r->integer("ingest_queue");
  return r.status();
}

// ---- AgentInfo ----

bj::object to_json(const AgentInfo& v) {
  bj::object o;
  o["agent_id"] = v.agent_id;
  o["name"] = v.name;
  o["hostname"] = v.hostname;
  o["cpus"] = v.cpus;
  o["mem_bytes"] = v.mem_bytes;
  o["backend"] = v.backend;
  o["device_class"] = v.device_class;
  o["kernel"] = v.kernel;
  o["torch_version"] = v.torch_version;
  o["compiler"] = v.compiler;
  o["git_sha"] = v.git_sha;
  o["connected"] = v.connected;
  o["last_seen"] = v.last_seen;
  o["current_run"] = value_or_null(v.current_run);
  o["rebooting_until"] = value_or_null(v.rebooting_until);
  o["accelerator"] = v.accelerator;
  bj::array not_ready;
  for (const auto& why : v.not_ready) not_ready.emplace_back(bj::string(why));
  o["not_ready"] = std::move(not_ready);
  o["ready"] = v.ready();
  return o;
}

Status from_json(const bj::value& v, const std::string& where, AgentInfo& out) {
  ObjectReader r(v, where);
  out.agent_id = r->integer("agent_id");
  out.name = r->string("name");
  out.hostname = r->string("hostname");
  out.cpus = r->integer("cpus");
  out.mem_bytes = r->integer("mem_bytes");
  out.backend = r->string("backend");
  out.device_class = r->string("device_class");
  out.kernel = r->string("kernel");
  out.torch_version = r->string("torch_version");
  out.compiler = r->string("compiler");
  out.git_sha = r->string("git_sha");
  out.connected = r->boolean("connected");
  out.last_seen = r->string("last_seen");
  out.current_run = r->opt_integer("current_run");
  out.rebooting_until = r->opt_string("rebooting_until");
  out.accelerator = r->string("accelerator");
  out.not_ready = string_array(r.fields(), "not_ready");
  return r.status();
}

// ---- CampaignStatus ----

bj::object to_json(const Unrunnable& v) { return {{"runs", v.runs}, {"reason", v.reason}}; }

Status from_json(const bj::value& v, const std::string& where, Unrunnable& out) {
  ObjectReader r(v, where);
  out.runs = r->integer("runs");
  out.reason = r->string("reason");
  return r.status();
}

bj::object to_json(const CampaignStatus& v) {
  bj::object o;
  o["campaign_id"] = v.campaign_id;
  o["name"] = v.name;
  o["description"] = v.description;
  o["created_at"] = v.created_at;
  o["runs"] = v.runs;
  o["queued"] = v.queued;
  o["assigned"] = v.assigned;
  o["running"] = v.running;
  o["done"] = v.done;
  o["failed"] = v.failed;
  o["lost"] = v.lost;
  o["epochs_total"] = v.epochs_total;
  o["epochs_done"] = v.epochs_done;
  o["cancelled"] = v.cancelled;
  o["state"] = v.state;
  o["priority"] = v.priority;
  o["finished"] = v.finished;
  o["paused"] = v.paused;
  o["eta_s"] = number_or_null(v.eta_s);
  o["unrunnable_runs"] = v.unrunnable_runs;
  o["unrunnable"] = to_json(v.unrunnable);
  o["set_aside_results"] = v.set_aside_results;
  o["adaptive"] = to_json(v.adaptive);
  return o;
}

Status from_json(const bj::value& v, const std::string& where, CampaignStatus& out) {
  ObjectReader r(v, where);
  out.campaign_id = r->integer("campaign_id");
  out.name = r->string("name");
  out.description = r->string("description");
  out.created_at = r->string("created_at");
  out.runs = r->integer("runs");
  out.queued = r->integer("queued");
  out.assigned = r->integer("assigned");
  out.running = r->integer("running");
  out.done = r->integer("done");
  out.failed = r->integer("failed");
  out.lost = r->integer("lost");
  out.epochs_total = r->integer("epochs_total");
  out.epochs_done = r->integer("epochs_done");
  out.cancelled = r->integer("cancelled");
  out.state = r->string("state");
  out.priority = r->integer("priority");
  out.finished = r->boolean("finished");
  out.paused = r->boolean("paused");
  out.eta_s = r->opt_number("eta_s");
  out.unrunnable_runs = r->integer("unrunnable_runs");
  out.set_aside_results = r->opt_integer("set_aside_results").value_or(0);   // absent from controllers before it
  Status nested_status;
  nested(v, "unrunnable", where, out.unrunnable, nested_status);
  if (v.is_object() && v.get_object().contains("adaptive"))   // absent from controllers before issue 33
    nested(v, "adaptive", where, out.adaptive, nested_status);
  return finish(r, nested_status);
}

// ---- CreatedCampaignReply, RunCancelled ----

bj::object to_json(const CreatedCampaignReply& v) {
  return {{"campaign_id", v.campaign_id}, {"name", v.name}, {"runs", v.runs}, {"adaptive_plans", v.adaptive_plans}};
}

Status from_json(const bj::value& v, const std::string& where, CreatedCampaignReply& out) {
  ObjectReader r(v, where);
  out.campaign_id = r->integer("campaign_id");
  out.name = r->string("name");
  out.runs = r->integer("runs");
  out.adaptive_plans = r->opt_integer("adaptive_plans").value_or(0);   // absent from controllers before issue 33
  return r.status();
}

bj::object to_json(const AgentRevoked& v) {
  return {{"name", v.name}, {"had_credential", v.had_credential}, {"disconnected", v.disconnected}};
}

Status from_json(const bj::value& v, const std::string& where, AgentRevoked& out) {
  ObjectReader r(v, where);
  out.name = r->string("name");
  out.had_credential = r->boolean("had_credential");
  out.disconnected = r->boolean("disconnected");
  return r.status();
}

bj::object to_json(const RunCancelled& v) {
  bj::object o;
  o["run_id"] = v.run_id;
  o["campaign_id"] = v.campaign_id;
  o["status"] = v.status;
  o["stopping"] = v.stopping;
  o["agent"] = value_or_null(v.agent);
  o["error"] = v.error;
  return o;
}

Status from_json(const bj::value& v, const std::string& where, RunCancelled& out) {
  ObjectReader r(v, where);
  out.run_id = r->integer("run_id");
  out.campaign_id = r->integer("campaign_id");
  out.status = r->string("status");
  out.stopping = r->boolean("stopping");
  out.agent = r->opt_string("agent");
  out.error = r->string("error");
  return r.status();
}

// ---- CampaignEstimate ----

bj::object to_json(const EstimateTarget& v) {
  bj::object o;
  o["device"] = v.device;
  o["runs"] = v.runs;
  o["runs_without_measurement"] = v.runs_without_measurement;
  o["run_seconds"] = v.run_seconds;
  o["boards"] = v.boards;
  o["wall_s"] = number_or_null(v.wall_s);
  return o;
}

Status from_json(const bj::value& v, const std::string& where, EstimateTarget& out) {
  ObjectReader r(v, where);
  out.device = r->string("device");
  out.runs = r->integer("runs");
  out.runs_without_measurement = r->integer("runs_without_measurement");
  out.run_seconds = r->number("run_seconds");
  out.boards = r->integer("boards");
  out.wall_s = r->opt_number("wall_s");
  return r.status();
}

bj::object to_json(const EstimateSources& v) {
  bj::object o;
  o["same_class_model_dataset_batch_mode"] = v.same_class_model_dataset_batch_mode;
  o["same_class_model_dataset_batch"] = v.same_class_model_dataset_batch;
  o["same_class_model_dataset"] = v.same_class_model_dataset;
  o["same_model_dataset_any_class"] = v.same_model_dataset_any_class;
  o["papers_model"] = v.papers_model;
  o["without_measurement"] = v.without_measurement;
  return o;
}

Status from_json(const bj::value& v, const std::string& where, EstimateSources& out) {
  ObjectReader r(v, where);
  out.same_class_model_dataset_batch_mode = r->integer("same_class_model_dataset_batch_mode");
  out.same_class_model_dataset_batch = r->integer("same_class_model_dataset_batch");
  out.same_class_model_dataset = r->integer("same_class_model_dataset");
  out.same_model_dataset_any_class = r->integer("same_model_dataset_any_class");
  out.papers_model = r->integer("papers_model");
  out.without_measurement = r->integer("without_measurement");
  return r.status();
}

bj::object to_json(const CampaignEstimate& v) {
  bj::object o;
  o["campaign"] = v.campaign;
  o["runs"] = v.runs;
  o["per_device"] = to_json(v.per_device);
  o["estimated_wall_s"] = v.estimated_wall_s;
  o["runs_estimated_from"] = to_json(v.runs_estimated_from);
  o["gating_refused"] = bj::array(v.gating_refused.begin(), v.gating_refused.end());
  o["mode_tables"] = bj::array(v.mode_tables.begin(), v.mode_tables.end());
  return o;
}

Status from_json(const bj::value& v, const std::string& where, CampaignEstimate& out) {
  ObjectReader r(v, where);
  out.campaign = r->string("campaign");
  out.runs = r->integer("runs");
  out.estimated_wall_s = r->number("estimated_wall_s");
  out.gating_refused = r->opt_string_array("gating_refused");
  out.mode_tables = r->opt_string_array("mode_tables");
  Status nested_status;
  nested(v, "per_device", where, out.per_device, nested_status);
  nested(v, "runs_estimated_from", where, out.runs_estimated_from, nested_status);
  return finish(r, nested_status);
}

// ---- CampaignReport ----

bj::object to_json(const ReportCampaign& v) {
  return {{"id", v.id}, {"name", v.name}, {"description", v.description}, {"source_file", v.source_file},
          {"created_at", v.created_at}};
}

Status from_json(const bj::value& v, const std::string& where, ReportCampaign& out) {
  ObjectReader r(v, where);
  out.id = r->integer("id");
  out.name = r->string("name");
  out.description = r->string("description");
  out.source_file = r->string("source_file");
  out.created_at = r->string("created_at");
  return r.status();
}

bj::object to_json(const EpochClocks& v) {
  return {{"cores_online", number_or_null(v.cores_online)}, {"cpu_khz", number_or_null(v.cpu_khz)},
          {"gpu_hz", number_or_null(v.gpu_hz)}, {"emc_hz", number_or_null(v.emc_hz)}};
}

Status from_json(const bj::value& v, const std::string& where, EpochClocks& out) {
  ObjectReader r(v, where);
  out.cores_online = r->opt_number("cores_online");
  out.cpu_khz = r->opt_number("cpu_khz");
  out.gpu_hz = r->opt_number("gpu_hz");
  out.emc_hz = r->opt_number("emc_hz");
  return r.status();
}

bj::object to_json(const MinibatchStats& v) {
  return {{"recorded", v.recorded},         {"stall_mean_s", v.stall_mean_s},     {"stall_p50_s", v.stall_p50_s},
          {"stall_p95_s", v.stall_p95_s},   {"compute_mean_s", v.compute_mean_s}, {"compute_p50_s", v.compute_p50_s},
          {"compute_p95_s", v.compute_p95_s}};
}

Status from_json(const bj::value& v, const std::string& where, MinibatchStats& out) {
  ObjectReader r(v, where);
  out.recorded = r->integer("recorded");
  out.stall_mean_s = r->number("stall_mean_s");
  out.stall_p50_s = r->number("stall_p50_s");
  out.stall_p95_s = r->number("stall_p95_s");
  out.compute_mean_s = r->number("compute_mean_s");
  out.compute_p50_s = r->number("compute_p50_s");
  out.compute_p95_s = r->number("compute_p95_s");
  return r.status();
}

bj::object to_json(const ReportEpoch& v) {
  bj::object o;
  o["epoch"] = v.epoch;
  o["e2e_s"] = v.e2e_s;
  o["stall_s"] = v.stall_s;
  o["compute_s"] = v.compute_s;
  o["minibatches"] = v.minibatches;
  json::put_described(o, static_cast<const proto::EpochMeasures&>(v));
  o["clocks_start"] = v.clocks_start ? bj::value(to_json(*v.clocks_start)) : bj::value(nullptr);
  o["clocks_end"] = v.clocks_end ? bj::value(to_json(*v.clocks_end)) : bj::value(nullptr);
  o["throttled"] = v.throttled;
  if (v.throttle_reason) o["throttle_reason"] = *v.throttle_reason;
  o["start_unix_s"] = number_or_null(v.start_unix_s);
  o["end_unix_s"] = number_or_null(v.end_unix_s);
  o["minibatch_stats"] = v.minibatch_stats ? bj::value(to_json(*v.minibatch_stats)) : bj::value(nullptr);
  return o;
}

Status from_json(const bj::value& v, const std::string& where, ReportEpoch& out) {
  ObjectReader r(v, where);
  out.epoch = r->integer("epoch");
  out.e2e_s = r->number("e2e_s");
  out.stall_s = r->number("stall_s");
  out.compute_s = r->number("compute_s");
  out.minibatches = r->integer("minibatches");
  json::read_described(r.fields(), static_cast<proto::EpochMeasures&>(out));
  out.throttled = r->boolean("throttled");
  out.throttle_reason = r->opt_string("throttle_reason");
  out.start_unix_s = r->opt_number("start_unix_s");
  out.end_unix_s = r->opt_number("end_unix_s");
  Status nested_status;
  nested(v, "clocks_start", where, out.clocks_start, nested_status);
  nested(v, "clocks_end", where, out.clocks_end, nested_status);
  nested(v, "minibatch_stats", where, out.minibatch_stats, nested_status);
  return finish(r, nested_status);
}

bj::object to_json(const ReportRun& v) {
  bj::object o;
  o["run_id"] = v.run_id;
  o["status"] = v.status;
  o["agent"] = value_or_null(v.agent);
  o["config"] = v.config;
  o["error"] = v.error;
  o["attempts"] = v.attempts;
  o["reboots"] = v.reboots;
  o["wall_s"] = number_or_null(v.wall_s);
  o["facts"] = value_or_null(v.facts);
  o["applied"] = value_or_null(v.applied);
  o["reference_state"] = value_or_null(v.reference_state);
  o["storage_medium"] = value_or_null(v.storage_medium);
  o["storage_device"] = value_or_null(v.storage_device);
  o["page_cache_dropped"] = value_or_null(v.page_cache_dropped);
  o["compute_device"] = value_or_null(v.compute_device);
  o["workload"] = value_or_null(v.workload);
  o["simulated"] = v.simulated;
  o["epochs"] = to_json(v.epochs);
  o["summary"] = to_json(v.summary);
  return o;
}

Status from_json(const bj::value& v, const std::string& where, ReportRun& out) {
  ObjectReader r(v, where);
  out.run_id = r->integer("run_id");
  out.status = r->string("status");
  out.agent = r->opt_string("agent");
  if (const auto* cfg = r->object("config")) out.config = *cfg;
  out.error = r->string("error");
  out.attempts = r->integer("attempts");
  out.reboots = r->opt_integer("reboots").value_or(0);   // absent from older controllers: none recorded
  out.wall_s = r->opt_number("wall_s");
  out.facts = opt_document(r.fields(), v, "facts");
  out.applied = opt_document(r.fields(), v, "applied");
  out.reference_state = r->opt_boolean("reference_state");
  out.storage_medium = r->opt_string("storage_medium");
  out.storage_device = r->opt_string("storage_device");
  out.page_cache_dropped = r->opt_boolean("page_cache_dropped");
  out.compute_device = r->opt_string("compute_device");
  out.workload = opt_document(r.fields(), v, "workload");   // absent from older controllers
  out.simulated = r->boolean("simulated");
  Status nested_status;
  nested(v, "epochs", where, out.epochs, nested_status);
  nested(v, "summary", where, out.summary, nested_status);
  return finish(r, nested_status);
}

bj::object to_json(const CampaignReport& v) {
  bj::object o;
  o["campaign"] = to_json(v.campaign);
  o["power_sensor"] = v.power_sensor;
  o["simulated_runs"] = v.simulated_runs;
  o["epochs_included"] = v.epochs_included;
  o["runs"] = to_json(v.runs);
  o["adaptive"] = to_json(v.adaptive);
  return o;
}

Status from_json(const bj::value& v, const std::string& where, CampaignReport& out) {
  ObjectReader r(v, where);
  out.power_sensor = r->boolean("power_sensor");
  out.simulated_runs = r->integer("simulated_runs");
  out.epochs_included = r->boolean("epochs_included");
  Status nested_status;
  nested(v, "campaign", where, out.campaign, nested_status);
  nested(v, "runs", where, out.runs, nested_status);
  if (v.is_object() && v.get_object().contains("adaptive"))   // absent from controllers before issue 33
    nested(v, "adaptive", where, out.adaptive, nested_status);
  return finish(r, nested_status);
}

boost::json::object report_config(const boost::json::object& stored) {
  boost::json::object config;
  for (const char* k : {"model", "dataset", "data", "batch_size", "workers", "prefetch", "epochs", "threads", "seed",
                        "repetition", "device", "power_mode", "pin_clocks", "fan_max", "drop_caches", "sample_hz",
                        "max_minibatches", "accelerator", "timing"})
    if (auto it = stored.find(k); it != stored.end()) config[k] = it->value();
  return config;
}

bool simulated_backend(const std::optional<boost::json::object>& facts) {
  if (!facts) return false;
  auto it = facts->find("backend");
  return it != facts->end() && it->value() == "sim";
}

}  // namespace jetsweep::api

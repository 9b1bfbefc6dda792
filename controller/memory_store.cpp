#include "controller/memory_store.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <ctime>
#include <cmath>

#include "common/board_classes.hpp"
#include "common/json_parse.hpp"
#include "common/log.hpp"
#include "controller/credentials.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

namespace {

constexpr double kEnrolledWithin_s = 24 * 3600;   // an agent seen this recently counts as enrolled
constexpr double kClockRefresh_s = 600;           // a clock estimate older than this is replaced

bool executing(const std::string& status) { return status == "assigned" || status == "running"; }

// How PostgreSQL prints a double precision (shortest round trip): "30", "0.5".
std::string pg_number(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The agent row as claim_run records it in runs.facts (to_jsonb(a) less id, connected, first_seen, last_seen,
// away_until, tables, boot_id, boot_offset_s):
// the facts as the wire carries them (the columns share their names), with every column present.
bj::object facts_json(const MemoryStore::Agent& a) {
  proto::Register reg;
  reg.facts = a.facts;
  bj::object o = json::parse_exact(proto::encode(proto::Envelope{0, reg})).at("facts").as_object();
  o["name"] = a.name;
  o.emplace("board_id", "");
  o.emplace("accelerator", "");
  o.emplace("storage", bj::array());
  o.emplace("not_ready", bj::array());
  o.emplace("live_modes", bj::array());
  o.emplace("may_reboot", false);
  o.erase("tables");   // in the agent's row, not copied into each run's
  o["clock_offset_s"] = a.clock_offset_s ? bj::value(*a.clock_offset_s) : bj::value(nullptr);
  o["clock_rtt_s"] = a.clock_rtt_s ? bj::value(*a.clock_rtt_s) : bj::value(nullptr);
  return o;
}

}  // namespace

MemoryStore::MemoryStore(int max_attempts, Clock clock) : max_attempts_(max_attempts), clock_(std::move(clock)) {}

void MemoryStore::copy_contents_from(const MemoryStore& other) {
  std::scoped_lock lock(mu_, other.mu_);
  agents_ = other.agents_;
  campaigns_ = other.campaigns_;
  runs_ = other.runs_;
  epochs_ = other.epochs_;
  minibatches_ = other.minibatches_;
  samples_ = other.samples_;
  reboots_ = other.reboots_;
  set_aside_ = other.set_aside_;
  next_agent_id_ = other.next_agent_id_;
  next_campaign_id_ = other.next_campaign_id_;
  next_run_id_ = other.next_run_id_;
}

double MemoryStore::now() const {
  if (clock_) return clock_();
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

MemoryStore::Run* MemoryStore::find_run(int64_t run_id) {
  auto it = runs_.find(run_id);
  return it == runs_.end() ? nullptr : &it->second;
}

MemoryStore::Agent* MemoryStore::find_agent(int64_t agent_id) {
  auto it = agents_.find(agent_id);
  return it == agents_.end() ? nullptr : &it->second;
}

std::optional<double> MemoryStore::agent_clock_offset(int64_t agent_id) const {
  auto it = agents_.find(agent_id);
  return it == agents_.end() ? std::nullopt : it->second.clock_offset_s;
}

std::optional<double> MemoryStore::run_start_offset(const Agent& agent, const Run& run) {
  if (!run.agent_t0_unix_s) return agent.clock_offset_s;
  std::optional<BootClockOffset> boot;
  if (auto it = agent.boot_offsets.find(run.agent_boot_id); it != agent.boot_offsets.end())
    boot = BootClockOffset{it->first, it->second};
  return controller::run_start_offset(agent.clock_offset_s, boot, *run.agent_t0_unix_s, run.agent_boot_id,
                                      run.agent_t0_boot_s);
}

void MemoryStore::keep_boot_offset(Agent& agent, const BootClockOffset& boot, bool replace) {
  const auto [it, first] = agent.boot_offsets.emplace(boot.boot_id, boot.offset_s);
  if (first) {
    for (auto& [id, run] : runs_)
      if (run.agent_id == agent.id && run.agent_boot_id == boot.boot_id && run.agent_t0_boot_s && run.agent_t0_unix_s)
        run.clock_offset_s = *run.agent_t0_unix_s - (*run.agent_t0_boot_s - boot.offset_s);
  } else if (replace) {
    it->second = boot.offset_s;
  }
}

Status MemoryStore::record_boot_offset(int64_t agent_id, const BootClockOffset& boot) {
  std::lock_guard lock(mu_);
  if (Agent* a = find_agent(agent_id)) keep_boot_offset(*a, boot, false);
  return Status::ok();
}

double MemoryStore::run_clock_offset(const Run& run) const {
  if (run.clock_offset_s) return *run.clock_offset_s;
  return run.agent_id ? agent_clock_offset(*run.agent_id).value_or(0.0) : 0.0;
}

Status MemoryStore::migrate() { return Status::ok(); }

Status MemoryStore::reset_connections() {
  std::lock_guard lock(mu_);
  std::set<int64_t> holding;
  for (const auto& [id, run] : runs_)
    if (executing(run.status) && run.agent_id) holding.insert(*run.agent_id);
  for (auto& [id, a] : agents_)
    if (a.connected || holding.count(id)) {
      a.connected = false;
      a.last_seen = std::max(a.last_seen, now());
    }
  return Status::ok();
}

Result<AgentRegistration> MemoryStore::register_agent(const proto::Register& reg, const AgentProof& proof) {
  std::lock_guard lock(mu_);
  return register_locked(reg, proof);
}

Result<AgentRegistration> MemoryStore::admit_agent(const proto::Register& reg, const AgentProof& proof,
                                                   const std::string& why) {
  std::lock_guard lock(mu_);   // one transaction: nothing of a refused registration changes
  JS_ASSIGN_OR_RETURN(AgentRegistration out, register_locked(reg, proof));
  std::vector<int64_t> keep = reg.journal_runs;
  if (reg.current_run) keep.push_back(*reg.current_run);
  out.requeued = requeue_agent_runs_locked(out.agent_id, keep, why);
  return out;
}

Result<AgentRegistration> MemoryStore::register_locked(const proto::Register& reg, const AgentProof& proof) {
  auto it = std::find_if(agents_.begin(), agents_.end(), [&](const auto& kv) { return kv.second.name == reg.name; });
  // This registration's own credential, enrolled by an attempt whose answer was lost: accepted, sent again.
  const bool own_enrollment = it != agents_.end() && it->second.credential_sha256 == proof.issue_sha256;
  if (it != agents_.end() && it->second.credential_sha256 && !own_enrollment &&
      *it->second.credential_sha256 != proof.presented_sha256.value_or(""))
    return permission_denied(credential_refusal(reg.name, proof.presented_sha256.has_value()));
  if ((it == agents_.end() || !it->second.credential_sha256) && !proof.may_enroll)
    return permission_denied(enrollment_refusal(reg.name));
  if (it == agents_.end()) {
    Agent a;
    a.id = next_agent_id_++;
    a.name = reg.name;
    a.first_seen = now();
    it = agents_.emplace(a.id, std::move(a)).first;
  }
  Agent& a = it->second;
  a.facts = reg.facts;
  a.connected = true;
  a.away_until.reset();
  a.last_seen = now();
  AgentRegistration out{a.id, !a.credential_sha256 || own_enrollment, 0};
  if (out.enrolled) a.credential_sha256 = proof.issue_sha256;
  return out;
}

Result<bool> MemoryStore::revoke_agent_credential(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(agents_.begin(), agents_.end(), [&](const auto& kv) { return kv.second.name == name; });
  if (it == agents_.end()) return not_found("no agent named '" + name + "'");
  const bool had = it->second.credential_sha256.has_value();
  it->second.credential_sha256.reset();
  return had;
}

Status MemoryStore::set_agent_connected(int64_t agent_id, bool connected) {
  std::lock_guard lock(mu_);
  if (Agent* a = find_agent(agent_id)) {
    a->connected = connected;
    a->last_seen = now();
  }
  return Status::ok();
}

void MemoryStore::requeue_or_lose(Run& run, const std::string& why) {
  const bool lost = run.attempts >= max_attempts_;
  const bool ends = run.cancel_requested || lost;
  run.queued_at = now();
  if (run.cancel_requested) {
    run.status = "cancelled";
    run.error = "cancelled by request; its agent stopped with: " + why;
  } else if (lost) {
    run.status = "lost";
    run.error = "lost after " + std::to_string(run.attempts) + " attempts; last: " + why;
  } else {
    run.status = "queued";
    run.error = why;
  }
  if (!ends) run.agent_id.reset();
  run.finished_at = ends ? std::optional<double>(now()) : std::nullopt;
}

Result<int64_t> MemoryStore::requeue_agent_runs(int64_t agent_id, const std::vector<int64_t>& keep_runs,
                                                const std::string& why) {
  std::lock_guard lock(mu_);
  return requeue_agent_runs_locked(agent_id, keep_runs, why);
}

int64_t MemoryStore::requeue_agent_runs_locked(int64_t agent_id, const std::vector<int64_t>& keep_runs,
                                               const std::string& why) {
  int64_t n = 0;
  for (auto& [id, run] : runs_) {
    if (run.agent_id != agent_id || !executing(run.status)) continue;
    if (std::find(keep_runs.begin(), keep_runs.end(), id) != keep_runs.end()) continue;
    requeue_or_lose(run, why);
    ++n;
  }
  return n;
}

Result<int64_t> MemoryStore::requeue_orphaned_runs(double lease_s) {
  std::lock_guard lock(mu_);
  int64_t n = 0;
  const double cutoff = now() - lease_s;
  for (auto& [id, run] : runs_) {
    if (!run.agent_id || !executing(run.status)) continue;
    const Agent* a = find_agent(*run.agent_id);
    if (!a || a->connected || !(a->last_seen < cutoff) || (a->away_until && !(*a->away_until < now()))) continue;
    if (a->away_until) {
      const auto t = static_cast<std::time_t>(*a->away_until);
      std::tm utc{};
      gmtime_r(&t, &utc);
      char when[32];
      std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &utc);
      requeue_or_lose(run, "agent " + a->name + " rebooted its board and did not come back by " + when + " UTC");
    } else {
      requeue_or_lose(run, "agent " + a->name + " disconnected for more than " + pg_number(lease_s) + " s");
    }
    ++n;
  }
  return n;
}

Status MemoryStore::record_clock(int64_t agent_id, double offset_s, double rtt_s,
                                 const std::optional<BootClockOffset>& boot) {
  std::lock_guard lock(mu_);
  Agent* a = find_agent(agent_id);
  if (!a) return Status::ok();
  if (!a->clock_rtt_s || !a->clock_offset_s || rtt_s <= *a->clock_rtt_s || *a->clock_measured_at < now() - kClockRefresh_s ||
      clock_stepped(*a->clock_offset_s, *a->clock_rtt_s, offset_s, rtt_s)) {
    a->clock_offset_s = offset_s;
    a->clock_rtt_s = rtt_s;
    a->clock_measured_at = now();
    a->boot = boot;
    if (boot) keep_boot_offset(*a, *boot, true);
    for (auto& [id, run] : runs_)   // started before any estimate: this one is theirs (as PgStore)
      if (run.agent_id == agent_id && run.agent_t0_unix_s && !run.clock_offset_s)
        run.clock_offset_s = run_start_offset(*a, run);
  } else if (boot && (!a->boot || a->boot->boot_id != boot->boot_id)) {
    a->boot = boot;   // the board rebooted
    keep_boot_offset(*a, *boot, true);
  }
  return Status::ok();
}

Status MemoryStore::set_campaign_state(int64_t campaign_id, const std::string& state) {
  if (state != "active" && state != "paused" && state != "cancelled")
    return invalid_argument("campaign state must be active, paused or cancelled, not '" + state + "'");
  std::lock_guard lock(mu_);
  auto it = campaigns_.find(campaign_id);
  if (it == campaigns_.end()) return not_found("no campaign " + std::to_string(campaign_id));
  if (it->second.state == "cancelled") {
    if (state != "cancelled") return invalid_argument("campaign " + std::to_string(campaign_id) + " is cancelled");
  } else {
    it->second.state = state;
  }
  if (state != "cancelled") return Status::ok();
  for (auto& [id, run] : runs_) {
    if (run.campaign_id != campaign_id) continue;
    if (run.status == "queued") {
      run.status = "cancelled";
      run.finished_at = now();
      run.error = "campaign cancelled";
    } else if (executing(run.status)) {
      run.cancel_requested = true;
    }
  }
  return Status::ok();
}

bool MemoryStore::board_busy(const Agent& me) const {
  if (me.facts.board_id.empty()) return false;
  return std::any_of(runs_.begin(), runs_.end(), [&](const auto& kv) {
    const Run& r = kv.second;
    if (!r.agent_id || *r.agent_id == me.id || !executing(r.status)) return false;
    auto other = agents_.find(*r.agent_id);
    return other != agents_.end() && other->second.facts.board_id == me.facts.board_id;
  });
}

bool MemoryStore::can_take(const Run& run, const Agent& me, const std::string& device_class) const {
  return run.status == "queued" &&
         (run.device == "any" || run.device == device_class || run.device == me.name) &&
         run.min_mem_bytes <= me.facts.mem_bytes && (!run.storage || contains(me.facts.storage, *run.storage)) &&
         !contains(run.unfit_classes, device_class);
}

std::optional<int64_t> MemoryStore::pick_run(const Agent& me, const std::string& device_class) const {
  // The lowest-id run the agent can take in the active campaign first by priority, then by age.
  std::vector<const CampaignRow*> order;
  for (const auto& [id, c] : campaigns_)
    if (c.state == "active") order.push_back(&c);
  std::stable_sort(order.begin(), order.end(),
                   [](const CampaignRow* a, const CampaignRow* b) { return a->priority > b->priority; });
  // Within the campaign, a run whose mode applies on the board as booted first (fewest reboots; as PgStore);
  // the others only for an agent that may reboot.
  auto live = [&](const Run& run) {
    if (me.facts.live_modes.empty()) return true;
    auto cfg = run_config_from_json(run.config, "run " + std::to_string(run.id));   // its named mode, else its base
    return !cfg || cfg->gating_mode().empty() || contains(me.facts.live_modes, cfg->gating_mode());
  };
  for (const CampaignRow* c : order) {
    std::optional<int64_t> first;
    for (const auto& [id, run] : runs_) {
      if (run.campaign_id != c->id || !can_take(run, me, device_class)) continue;
      if (live(run)) return id;
      if (!first && me.facts.may_reboot) first = id;   // needs a reboot: only for an agent that may
    }
    if (first) return first;
  }
  return std::nullopt;
}

void MemoryStore::drop_results(int64_t run_id) {
  auto drop = [run_id](auto& table) {
    for (auto it = table.begin(); it != table.end();)
      it = std::get<0>(it->first) == run_id ? table.erase(it) : std::next(it);
  };
  drop(epochs_);
  drop(minibatches_);
  drop(samples_);
}

Result<std::optional<Assignment>> MemoryStore::claim_run(int64_t agent_id, const std::string& device_class,
                                                         const std::string& claim_key) {
  std::lock_guard lock(mu_);
  const auto assignment = [](const Run& run) -> Result<std::optional<Assignment>> {
    auto cfg = run_config_from_json(run.config, "run " + std::to_string(run.id) + " config");
    if (!cfg) return cfg.status();
    return std::optional<Assignment>(Assignment{run.id, std::move(cfg).value()});
  };
  if (!claim_key.empty())   // a retry of a claim that took effect: its run, as it was claimed
    for (const auto& [id, run] : runs_)
      if (run.agent_id == agent_id && run.claim_key == claim_key && run.status == "assigned") return assignment(run);
  const Agent* me = find_agent(agent_id);
  if (!me || board_busy(*me)) return std::optional<Assignment>();
  auto picked = pick_run(*me, device_class);
  if (!picked) return std::optional<Assignment>();
  Run& run = runs_.at(*picked);
  run.status = "assigned";
  run.agent_id = agent_id;
  run.assigned_at = now();
  ++run.attempts;
  run.started_at = run.finished_at = run.wall_s = run.agent_t0_unix_s = run.clock_offset_s = std::nullopt;
  run.agent_boot_id.clear();
  run.agent_t0_boot_s.reset();
  run.applied.reset();
  run.reference_state = run.page_cache_dropped = std::nullopt;
  run.storage_device = run.compute_device = std::nullopt;
  run.workload.reset();
  run.facts = facts_json(*me);
  run.claim_key = claim_key;
  drop_results(run.id);   // a re-executed run starts clean
  return assignment(run);
}

Result<std::vector<RunOnAgent>> MemoryStore::runs_to_stop() {
  std::lock_guard lock(mu_);
  std::vector<RunOnAgent> out;
  for (const auto& [id, run] : runs_)
    if (run.cancel_requested && executing(run.status) && run.agent_id) out.push_back({id, *run.agent_id});
  return out;
}

Status MemoryStore::unclaim_run(int64_t run_id, int64_t agent_id) {
  std::lock_guard lock(mu_);
  Run* run = find_run(run_id);
  if (!run || run->agent_id != agent_id || run->status != "assigned") return Status::ok();
  if (run->cancel_requested) {
    run->status = "cancelled";
    run->finished_at = now();
    run->error = "cancelled before it started";
  } else {
    run->status = "queued";
    run->agent_id.reset();
    run->finished_at.reset();
  }
  run->attempts = std::max<int64_t>(run->attempts - 1, 0);
  return Status::ok();
}

std::vector<const MemoryStore::Agent*> MemoryStore::enrolled_boards() const {
  // Connected or seen in the last 24 hours, one per physical board (the connected one, else the one seen
  // last, else the first by name), by board key.
  std::map<std::string, const Agent*> by_board;
  for (const auto& [id, a] : agents_) {
    if (!a.connected && !(a.last_seen > now() - kEnrolledWithin_s)) continue;
    const std::string key = a.facts.board_id.empty() ? a.name : a.facts.board_id;
    auto [it, fresh] = by_board.emplace(key, &a);
    const Agent* b = it->second;
    if (!fresh && std::make_tuple(!a.connected, -a.last_seen, a.name) < std::make_tuple(!b->connected, -b->last_seen, b->name))
      it->second = &a;
  }
  std::vector<const Agent*> out;
  for (const auto& [key, a] : by_board) out.push_back(a);
  return out;
}

Result<Campaign> MemoryStore::expand_every_instance(const Campaign& c, std::vector<std::string>& classes) const {
  // "CLASS/*": one run per enrolled board of the class (by name), in place of the pattern.
  std::map<std::string, std::string> class_of_agent;
  for (const auto& [id, a] : agents_) class_of_agent[a.name] = a.facts.device_class;
  auto class_of = [&](const std::string& device) {
    std::string cls = device_target_class(device);
    if (cls.empty() && class_of_agent.count(device)) cls = class_of_agent[device];
    return cls;
  };
  Campaign expanded = c;
  expanded.runs.clear();
  classes.clear();
  const auto enrolled = enrolled_boards();
  for (const auto& run : c.runs) {
    if (!is_every_instance(run.device)) {
      expanded.runs.push_back(run);
      classes.push_back(class_of(run.device));
      continue;
    }
    const std::string cls = device_target_class(run.device);
    std::vector<std::string> names;
    for (const Agent* a : enrolled)
      if (a->facts.device_class == cls) names.push_back(a->name);
    std::sort(names.begin(), names.end());
    if (names.empty())
      return invalid_argument("campaign '" + c.name + "': '" + run.device + "' matches no board: no agent of class '" +
                              cls + "' is connected or was seen in the last 24 hours (start them, then submit)");
    for (const auto& name : names) {
      expanded.runs.push_back(run);
      expanded.runs.back().device = name;
      classes.push_back(cls);   // the pattern's class, whatever the board's name says
    }
  }
  if (static_cast<int64_t>(expanded.runs.size()) > kMaxRunsPerCampaign)
    return invalid_argument("campaign '" + c.name + "': more than " + std::to_string(kMaxRunsPerCampaign) +
                            " runs once 'CLASS/*' is expanded");
  return expanded;
}

Result<CreatedCampaign> MemoryStore::create_campaign(const Campaign& c, const std::string& source_file,
                                                     const std::string& source_yaml, const std::string& request_key) {
  std::lock_guard lock(mu_);
  if (!request_key.empty())   // a retry of a submission that took effect: the campaign it created
    for (const auto& entry : campaigns_)
      if (entry.second.request_key == request_key) {
        const int64_t id = entry.first;
        const auto runs = std::count_if(runs_.begin(), runs_.end(), [&](const auto& kv) { return kv.second.campaign_id == id; });
        return CreatedCampaign{id, static_cast<int64_t>(runs)};
      }
  std::vector<std::string> classes;
  auto expanded = expand_every_instance(c, classes);
  if (!expanded) return expanded.status();
  CampaignRow row;
  row.id = next_campaign_id_++;
  row.name = c.name;
  row.description = c.description;
  row.source_file = source_file;
  row.source_yaml = source_yaml;
  row.run_count = static_cast<int64_t>(expanded->runs.size());
  row.priority = c.priority;
  row.created_at = now();
  row.request_key = request_key;
  campaigns_.emplace(row.id, row);
  // Queued in dispatch order (ids follow it), each keeping its ordinal in the expansion.
  for (size_t ordinal : dispatch_order(*expanded, classes))
    queue_run(row.id, static_cast<int64_t>(ordinal), expanded->runs[ordinal]);
  for (const auto& spec : c.adaptive_plans) {
    Plan plan;
    plan.id = next_plan_id_++;
    plan.campaign_id = row.id;
    plan.spec = spec;
    plans_.emplace(plan.id, std::move(plan));
  }
  return CreatedCampaign{row.id, row.run_count};
}

MemoryStore::Run& MemoryStore::queue_run(int64_t campaign_id, int64_t ordinal, const RunConfig& cfg) {
  Run run;
  run.id = next_run_id_++;
  run.campaign_id = campaign_id;
  run.ordinal = ordinal;
  run.config = to_json(cfg);
  run.device = cfg.device;
  run.epochs = cfg.epochs;
  run.queued_at = now();
  run.min_mem_bytes = required_memory_bytes(cfg);
  if (const std::string medium = storage_medium_of(cfg.data); !medium.empty()) run.storage = medium;
  run.unfit_classes = classes_without_room(cfg);
  return runs_.emplace(run.id, std::move(run)).first->second;
}

Result<int64_t> MemoryStore::resolve_campaign(const std::string& ref) {
  std::lock_guard lock(mu_);
  const bool numeric = !ref.empty() && ref.find_first_not_of("0123456789") == std::string::npos && ref.size() < 18;
  if (numeric) {
    if (campaigns_.count(std::stoll(ref))) return std::stoll(ref);
  } else {
    for (auto it = campaigns_.rbegin(); it != campaigns_.rend(); ++it)
      if (it->second.name == ref) return it->first;
  }
  return not_found("no campaign '" + ref + "'");
}

std::optional<MemoryStore::Run> MemoryStore::run(int64_t run_id) const {
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return std::nullopt;
  return it->second;
}

std::optional<MemoryStore::Agent> MemoryStore::agent(int64_t agent_id) const {
  std::lock_guard lock(mu_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return std::nullopt;
  return it->second;
}

std::vector<MemoryStore::Run> MemoryStore::runs_of(int64_t campaign_id) const {
  std::lock_guard lock(mu_);
  std::vector<Run> out;
  for (const auto& [id, run] : runs_)
    if (run.campaign_id == campaign_id) out.push_back(run);
  return out;
}

namespace {
template <class Table>
size_t rows_of(const Table& table, int64_t run_id) {
  return static_cast<size_t>(std::count_if(table.begin(), table.end(),
                                           [&](const auto& kv) { return std::get<0>(kv.first) == run_id; }));
}
}  // namespace

size_t MemoryStore::epoch_rows(int64_t run_id) const {
  std::lock_guard lock(mu_);
  return rows_of(epochs_, run_id);
}

size_t MemoryStore::minibatch_rows(int64_t run_id) const {
  std::lock_guard lock(mu_);
  return rows_of(minibatches_, run_id);
}

size_t MemoryStore::sample_rows(int64_t run_id) const {
  std::lock_guard lock(mu_);
  return rows_of(samples_, run_id);
}

}  // namespace jetsweep::controller

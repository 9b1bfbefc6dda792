// Store's default group commit: the messages one by one, through the typed ingest calls.
#include "controller/store.hpp"

#include "common/json_fields.hpp"

#include <algorithm>
#include <type_traits>
#include <variant>

namespace jetsweep::controller {

std::optional<api::Unrunnable> unrunnable_of(const UnrunnableGroup& g) {
  if (g.runnable) return std::nullopt;
  const std::string runs = std::to_string(g.n) + (g.n == 1 ? " run needs " : " runs need ");
  const std::string of_device = g.device == "any" ? std::string() : " of '" + g.device + "'";
  const std::string storage = g.storage.value_or("");
  std::string reason;
  if (!g.device_fits) {
    reason = runs + "device '" + g.device + "'; no enrolled agent is one";
  } else if (!g.storage_fits) {
    reason = runs + "storage @" + storage + "; no agent" + of_device + " offers it (agent --storage " + storage + "=DIR)";
  } else if (!g.mem_fits) {
    reason = runs + std::to_string(g.min_mem_bytes >> 20) + " MiB of RAM; no agent" + of_device + " has that much";
  } else if (!g.model_fits) {
    reason = runs + "a board their model fits on; the enrolled boards" + of_device + " run out of memory";
  } else {
    // Every agent that could otherwise take them booted its board with other GPU masks, and none may reboot.
    reason = runs + "nvpmodel mode " + g.mode + "; the enrolled boards" + of_device +
             " booted with other GPU masks and no agent may reboot into it (start one with --allow-reboot; "
             "docs/DEPLOY.md \"Reboots\")";
  }
  return api::Unrunnable{g.n, reason};
}

const char* outcome_name(IngestOutcome o) {
  switch (o) {
    case IngestOutcome::kStored: return "stored";
    case IngestOutcome::kDuplicate: return "duplicate";
    case IngestOutcome::kSetAside: return "set_aside";
  }
  return "stored";
}

std::string set_aside_reason(const std::string& status, std::optional<int64_t> run_agent, int64_t agent_id,
                             const std::string& error) {
  std::string r = "the run is " + status;
  if (run_agent) r += *run_agent == agent_id ? " on this agent" : " on agent " + std::to_string(*run_agent);
  if (!error.empty()) r += " (" + error + ")";
  return r;
}

std::string refused_end_error(const proto::RunFinished& m, const std::string& why) {
  return "its agent reported it " + m.status + "; " + refused_reason(why);
}

const proto::RunFinished* run_end_to_fail_when_refused(const proto::Body& body) {
  const auto* end = std::get_if<proto::RunFinished>(&body);
  return end && (end->status == "done" || end->status == "failed") ? end : nullptr;
}

std::string refused_reason(const std::string& why) {
  std::string r = "refused by the store: " + why;
  r.erase(std::remove(r.begin(), r.end(), '\0'), r.end());   // stored as text, which cannot hold NUL
  if (r.size() <= 1000) return r;
  size_t cut = 997;   // at a character's first byte: the reason is stored as text, which must be valid UTF-8
  while (cut > 0 && (static_cast<unsigned char>(r[cut]) & 0xC0) == 0x80) --cut;
  return r.substr(0, cut) + "...";
}

std::string graceful_stop_error(const proto::RunFinished& m) { return "cancelled on its agent: " + m.error; }

bool stored_graceful_stop(const std::string& run_error, const proto::RunFinished& m) {
  if (m.status != "cancelled") return false;
  const std::string reason = graceful_stop_error(m), lost = "; last: " + reason;
  return run_error == reason ||
         (run_error.size() > lost.size() && run_error.compare(run_error.size() - lost.size(), lost.size(), lost) == 0);
}

Status check_model_upload(const std::string& sha256, int64_t bytes, const std::vector<int64_t>& sizes,
                          const std::string& actual_sha256) {
  const std::string what = "model file " + sha256;
  if (sizes.empty()) return invalid_argument(what + ": no chunk was uploaded");
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const bool last = i + 1 == sizes.size();
    if (sizes[i] < 0) return invalid_argument(what + ": chunk " + std::to_string(i) + " is missing");
    if ((!last && sizes[i] != proto::kModelChunkBytes) || (last && (sizes[i] > proto::kModelChunkBytes || sizes[i] == 0)))
      return invalid_argument(what + ": chunk " + std::to_string(i) + " has " + std::to_string(sizes[i]) +
                              " bytes; every chunk but the last has " + std::to_string(proto::kModelChunkBytes));
    total += sizes[i];
  }
  if (total != bytes)
    return invalid_argument(what + ": the chunks hold " + std::to_string(total) + " bytes, not " + std::to_string(bytes));
  if (actual_sha256 != sha256)
    return invalid_argument(what + ": the uploaded bytes hash to " + actual_sha256 + " (damaged in transit?); upload it again");
  return Status::ok();
}

Status Store::ingest_batch(std::vector<IngestItem>& items) {
  for (auto& item : items) {
    Result<IngestOutcome> r = std::visit(
        [&](const auto& m) -> Result<IngestOutcome> {
          using T = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<T, proto::MinibatchChunk>) return ingest_minibatches(item.agent_id, m);
          else if constexpr (std::is_same_v<T, proto::EpochResult>) return ingest_epoch(item.agent_id, m);
          else if constexpr (std::is_same_v<T, proto::SampleChunk>) return ingest_samples(item.agent_id, m);
          else if constexpr (std::is_same_v<T, proto::RunFinished>) return finish_run(item.agent_id, m);
          else if constexpr (std::is_same_v<T, proto::RunStarted>) return start_run(item.agent_id, m);
          else if constexpr (std::is_same_v<T, proto::RebootPending>) return record_reboot(item.agent_id, m);
          else return internal_error("'" + std::string(proto::type_name(item.body)) + "' is not a result message");
        },
        item.body);
    item.result = r.status();
    if (r.is_ok()) item.outcome = *r;
    // An outage: what was written is written (idempotent); the batch is retried whole.
    if (item.result.code() == Code::kUnavailable) return item.result;
  }
  return Status::ok();
}

void adaptive_unfinished(api::CampaignStatus& s) {
  if (s.state == "cancelled") return;
  for (const auto& p : s.adaptive)
    if (p.state == "profiling") {
      s.finished = false;
      s.eta_s.reset();   // the rounds to come are not estimated
    }
}

std::string storage_medium_of(const std::string& data) {
  if (data.empty() || data[0] != '@') return "";
  const size_t slash = data.find('/');
  return data.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
}

api::AdaptiveRoundStatus adaptive_round_status(int64_t round, int64_t modes, const boost::json::object* fit) {
  api::AdaptiveRoundStatus r;
  r.round = round;
  r.modes = modes;
  const auto* summary = fit ? fit->if_contains("summary") : nullptr;
  if (!summary || !summary->is_object()) return r;
  const auto& o = summary->get_object();
  auto number = [&](const char* k) -> std::optional<double> {
    const auto* v = o.if_contains(k);
    return v ? json::as_number(*v) : std::nullopt;
  };
  auto integer = [&](const char* k) -> std::optional<int64_t> {
    const auto* v = o.if_contains(k);
    return v ? json::as_integer(*v) : std::nullopt;
  };
  r.observations = integer("observations").value_or(0);
  r.time_loo_pct = number("time_loo_pct");
  r.power_loo_pct = number("power_loo_pct");
  r.front_size = integer("front_size");
  r.front_changed = integer("front_changed");
  return r;
}

api::AdaptivePlanStatus adaptive_plan_status(int64_t plan_id, const std::string& state, int64_t rounds,
                                             const AdaptivePlanSpec& spec, int64_t profiled, const std::string& error,
                                             const std::optional<boost::json::object>& fit, bool with_fit) {
  api::AdaptivePlanStatus s;
  s.plan_id = plan_id;
  s.device = spec.base.device;
  s.workload = spec.workload();
  s.state = state;
  s.rounds = rounds;
  s.budget = spec.budget;
  s.profiled = profiled;
  s.candidates = static_cast<int64_t>(spec.candidates.size());
  s.error = error;
  if (!fit) return s;
  const api::AdaptiveRoundStatus latest = adaptive_round_status(rounds, 0, &*fit);
  s.time_loo_pct = latest.time_loo_pct;
  s.power_loo_pct = latest.power_loo_pct;
  s.front_size = latest.front_size;
  s.front_changed = latest.front_changed;
  if (with_fit) s.fit = *fit;
  return s;
}

}  // namespace jetsweep::controller

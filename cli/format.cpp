// Text renderings of the API's answers: a campaign's status line and its report table.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "cli/cli.hpp"
#include "common/compare.hpp"
#include "common/json_fields.hpp"

namespace jetsweep::cli {
namespace bj = boost::json;

namespace {

std::string num(const std::optional<double>& v, int precision = 3) {
  if (!v) return "-";
  std::ostringstream ss;
  ss << std::fixed << std::setprecision(precision) << *v;
  return ss.str();
}

// A field of a passed-through JSON document as text: "-" when absent or null, strings as they are, other
// values as JSON.
std::string text_of(const bj::object& doc, const char* key) {
  const auto* v = doc.if_contains(key);
  if (!v || v->is_null()) return "-";
  if (v->is_string()) return std::string(v->get_string());
  return bj::serialize(*v);
}

// "4c/1420.8/921.6/1600" (MHz) with the nvpmodel name, "pin" and "fan=max" from an applied BoardState object.
std::string applied_label(const bj::object& applied) {
  json::FieldReader a(applied, "applied");
  auto mhz = [&](const char* key, double per_mhz) {
    auto v = a.opt_number(key);
    if (!v || *v <= 0) return std::string("?");
    std::ostringstream s;
    s << *v / per_mhz;
    return s.str();
  };
  auto cores = a.opt_integer("cores_online");
  std::string label = (cores && *cores > 0 ? std::to_string(*cores) : std::string("?")) + "c";
  // A host shows no GPU or EMC clock (and a VM often no cpufreq): only the cores, rather than "?/?/?".
  const std::string clocks = mhz("cpu_khz", 1e3) + "/" + mhz("gpu_hz", 1e6) + "/" + mhz("emc_hz", 1e6);
  if (clocks != "?/?/?") label += "/" + clocks;
  if (auto mode = a.opt_string("mode_name"); mode && !mode->empty()) label += " " + *mode;
  if (a.opt_boolean("clocks_pinned").value_or(false)) label += " pin";
  if (a.opt_string("fan").value_or("") == "max") label += " fan=max";
  // GPU power gating read back (TPC/FBP units off): runs on a gated GPU never look like runs on a full one.
  if (auto tpc = a.opt_integer("tpc_pg_mask")) label += " tpc_pg=" + std::to_string(*tpc);
  if (auto fbp = a.opt_integer("fbp_pg_mask")) label += " fbp_pg=" + std::to_string(*fbp);
  return label;
}

// The requested power mode of a run config that has not reported its applied state yet.
std::string requested_label(const bj::object& cfg) {
  const auto* pm = cfg.if_contains("power_mode");
  if (!pm || !pm->is_object()) return "(reference)";
  if (pm->get_object().contains("name")) return "(" + text_of(pm->get_object(), "name") + ")";
  json::FieldReader r(pm->get_object(), "power_mode");
  std::string s;
  for (const char* k : {"cores", "cpu_khz", "gpu_hz", "emc_hz"})
    if (pm->get_object().contains(k))
      s += (s.empty() ? "" : " ") + std::string(k) + "=" + std::to_string(r.opt_integer(k).value_or(0));
  return "(" + s + ")";
}

// Short labels of the run-config axes that vary across the campaign's runs ("w2 bs16 rep1").
std::string axes_label(const bj::object& cfg, const std::vector<std::string>& varying) {
  static const std::map<std::string, std::string> kPrefix = {{"workers", "w"}, {"batch_size", "bs"}, {"prefetch", "pf"},
                                                             {"threads", "t"}, {"repetition", "rep"}, {"seed", "seed"},
                                                             {"device", ""}};
  std::string s;
  auto add = [&](const std::string& piece) { s += (s.empty() ? "" : " ") + piece; };
  for (const auto& k : varying) {
    const auto* v = cfg.if_contains(k);
    if (!v) continue;
    const std::string text = v->is_string() ? std::string(v->get_string()) : bj::serialize(*v);
    if (auto it = kPrefix.find(k); it != kPrefix.end()) add(it->second + text);
    else if (k == "data") add(text.rfind('@', 0) == 0 ? text : "data=" + text);
    else if (k == "drop_caches") add(*v == true ? "cold" : "warm");
    else if (k == "max_minibatches") add("mb<=" + text);
    else if (k == "sample_hz") add(text + "Hz");
  }
  return s;
}

// The run-config keys whose values differ between the report's runs.
std::vector<std::string> varying_axes(const api::CampaignReport& report) {
  std::vector<std::string> varying;
  for (const char* k : {"device", "data", "batch_size", "workers", "prefetch", "threads", "seed", "drop_caches",
                        "max_minibatches", "sample_hz", "repetition"}) {
    std::set<std::string> values;
    for (const auto& run : report.runs) {
      const auto* v = run.config.if_contains(k);
      values.insert(v ? bj::serialize(*v) : "-");
    }
    if (values.size() > 1) varying.push_back(k);
  }
  return varying;
}

// One run's row: epoch 0 apart from the mean of epochs 1 and later (the run's summary: the report may come
// without its per-epoch rows).
struct RunRow {
  int64_t minibatches = 0;
  std::optional<double> e0_e2e, e0_stall, e0_compute, e0_energy;
  std::optional<double> later_e2e, later_stall, later_compute, later_energy;
  bool energy_ok = true;
  int64_t throttled_epochs = 0;
  std::string throttle_note;   // the first throttled epoch

  explicit RunRow(const api::ReportRun& run) {
    const auto& s = run.summary;
    minibatches = s.minibatches;
    e0_e2e = s.e0_e2e_s;
    e0_stall = s.e0_stall_s;
    e0_compute = s.e0_compute_s;
    e0_energy = s.e0_energy_j;
    later_e2e = s.later_e2e_s;
    later_stall = s.later_stall_s;
    later_compute = s.later_compute_s;
    later_energy = s.later_energy_j;
    energy_ok = s.later_epochs == 0 || s.later_energy_j.has_value();
    throttled_epochs = s.throttled_epochs;
    throttle_note = s.first_throttle.value_or("");
  }
};

void report_header(std::ostream& out, const api::CampaignReport& report, size_t width) {
  const auto& c = report.campaign;
  out << "campaign " << c.id << " (" << c.name << ", from " << c.source_file << ", " << c.created_at << ")\n";
  if (!report.power_sensor) out << "energy: no power sensor on these agents (energy is null, never estimated)\n";
  if (report.simulated_runs > 0)
    out << "SIMULATED: " << report.simulated_runs
        << " runs come from simulated boards (modelled times and power, not measurements); marked 'sim'\n";
  out << "\n";
  out << std::left << std::setw(6) << "run" << std::setw(8) << "status" << std::setw(15) << "agent" << std::setw(20)
      << "model/dataset" << std::setw(static_cast<int>(width)) << "configuration" << std::right << std::setw(6) << "mb"
      << " | " << std::setw(9) << "e0 e2e" << std::setw(9) << "e0 stall" << std::setw(9)
      << "e0 comp" << std::setw(9) << "e0 J" << " | " << std::setw(9) << "1+ e2e" << std::setw(9) << "1+ stall"
      << std::setw(9) << "1+ comp" << std::setw(9) << "1+ J" << "\n";
}

void report_row(std::ostream& out, const api::ReportRun& r, const RunRow& row, const std::string& label, size_t width) {
  const std::string status = r.simulated ? r.status + "*" : r.status;
  const std::string model = text_of(r.config, "model") + "/" + text_of(r.config, "dataset");
  out << std::left << std::setw(6) << r.run_id << std::setw(8) << status << std::setw(15)
      << r.agent.value_or("-").substr(0, 14) << std::setw(20) << model.substr(0, 19)
      << std::setw(static_cast<int>(width)) << label << std::right << std::setw(6) << row.minibatches << " | "
      << std::setw(9) << num(row.e0_e2e) << std::setw(9) << num(row.e0_stall) << std::setw(9) << num(row.e0_compute)
      << std::setw(9) << num(row.e0_energy, 1) << " | " << std::setw(9) << num(row.later_e2e) << std::setw(9)
      << num(row.later_stall) << std::setw(9) << num(row.later_compute) << std::setw(9)
      << (row.energy_ok ? num(row.later_energy, 1) : std::string("-")) << "\n";
  if (!r.error.empty() && r.status != "done") out << "      error: " << r.error << "\n";
  if (!row.throttle_note.empty()) out << "      THROTTLED: " << row.throttle_note << "\n";
}

void report_footer(std::ostream& out, const api::CampaignReport& report, const std::map<std::string, int64_t>& devices,
                   int64_t throttled_epochs) {
  out << "\nconfiguration: the state each run executed in, read back from the board (cores/CPU/GPU/EMC MHz,\n"
         "nvpmodel mode, pin = clocks pinned), then the axes that vary across the campaign; (..) = requested,\n"
         "not started yet\n";
  if (!devices.empty()) {
    out << "trained on:";
    for (const auto& [d, n] : devices) out << " " << d << " (" << n << (n == 1 ? " run)" : " runs)");
    out << "\n";
  }
  if (throttled_epochs > 0)
    out << throttled_epochs << " epochs were throttled (a clock or the cores left the applied state): see THROTTLED\n";
  int64_t reboots = 0;
  for (const auto& r : report.runs) reboots += r.reboots;
  if (reboots > 0)
    out << reboots << (reboots == 1 ? " board reboot" : " board reboots")
        << " into nvpmodel modes with other GPU masks (tpc_pg/fbp_pg: the masks each run read back)\n";
  out << "times in seconds per epoch; e0 = epoch 0, 1+ = mean of epochs 1 and later; J = energy per epoch";
  if (report.simulated_runs > 0) out << "; * = simulated";
  out << "\n";
}

}  // namespace

std::string format_duration(double s) {
  std::ostringstream o;
  const auto t = static_cast<int64_t>(s + 0.5);
  if (t >= 86400) o << t / 86400 << " d " << (t % 86400) / 3600 << " h";
  else if (t >= 3600) o << t / 3600 << " h " << (t % 3600) / 60 << " min";
  else if (t >= 60) o << t / 60 << " min";
  else o << t << " s";
  return o.str();
}

std::string progress_bar(int64_t done, int64_t total, int width) {
  const double share = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
  const int filled = std::clamp(static_cast<int>(std::lround(width * share)), 0, width);
  return "[" + std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(width - filled), '.') +
         "] " + std::to_string(total > 0 ? 100 * done / total : 0) + "%";
}

std::string format_status(const api::CampaignStatus& s, bool progress_bar) {
  return format_status(s, progress_bar, std::time(nullptr));
}

std::string format_status(const api::CampaignStatus& s, bool bar, std::time_t now) {
  std::ostringstream out;
  out << "campaign " << s.campaign_id << " (" << s.name << "): " << s.runs << " runs: " << s.done << " done, "
      << s.running << " running, " << s.assigned << " assigned, " << s.queued << " queued, " << s.failed << " failed";
  if (s.lost > 0) out << ", " << s.lost << " lost";
  if (s.cancelled > 0) out << ", " << s.cancelled << " cancelled";
  out << "; epochs " << s.epochs_done << "/" << s.epochs_total;
  if (!s.state.empty() && s.state != "active") out << " [" << s.state << "]";
  if (s.paused && s.queued + s.running > 0) out << "; ETA paused";
  else if (s.eta_s && *s.eta_s > 0) out << "; ETA " << format_eta(*s.eta_s, now);
  else if (!s.finished && !s.paused) out << "; time left known after the first measured epoch";
  if (bar && s.epochs_total > 0) out << "  " << progress_bar(s.epochs_done, s.epochs_total);
  for (const auto& u : s.unrunnable) out << "\n  cannot run: " << u.reason;
  if (s.set_aside_results > 0)
    out << "\n  set aside: " << s.set_aside_results << " result message" << (s.set_aside_results == 1 ? "" : "s")
        << " measured after their run was taken from the agent (table set_aside_results; docs/OPERATIONS.md)";
  for (const auto& p : s.adaptive) {
    out << "\n  adaptive plan " << p.plan_id << " (" << p.device << ", " << p.workload << "): " << p.state << ", round "
        << p.rounds << ", " << p.profiled << "/" << p.budget << " modes profiled of " << p.candidates;
    if (p.time_loo_pct) out << "; leave-one-out error time " << num(p.time_loo_pct, 1) << "%";
    if (p.power_loo_pct) out << ", power " << num(p.power_loo_pct, 1) << "%";
    if (p.front_size) out << "; predicted front " << *p.front_size << " modes";
    if (p.front_changed) out << " (" << *p.front_changed << " entered or left since the round before)";
    for (const auto& r : p.history) {   // how the predictor and its front moved, round by round
      out << "\n    round " << r.round << ": " << r.modes << " mode" << (r.modes == 1 ? "" : "s") << ", decided from "
          << r.observations << " profiled";
      if (r.time_loo_pct) out << "; leave-one-out time " << num(r.time_loo_pct, 1) << "%";
      if (r.power_loo_pct) out << ", power " << num(r.power_loo_pct, 1) << "%";
      if (r.front_size) out << "; front " << *r.front_size;
      if (r.front_changed) out << " (" << *r.front_changed << " moved)";
    }
    if (!p.error.empty()) out << "\n    " << p.error;
  }
  return out.str();
}

namespace {

// An adaptive plan's fit in the report (controller/adaptive_planner.hpp): its state, and per power budget the mode
// its predictor chooses, measured or predicted.
void adaptive_plan_section(std::ostream& out, const api::AdaptivePlanStatus& p) {
  out << "Adaptive plan " << p.plan_id << " (" << p.device << ", " << p.workload << "): " << p.state << ", "
      << p.profiled << "/" << p.budget << " modes profiled of " << p.candidates << " in " << p.rounds << " rounds";
  if (p.time_loo_pct) out << "; leave-one-out error time " << num(p.time_loo_pct, 1) << "%, power " << num(p.power_loo_pct, 1) << "%";
  out << "\n";
  if (!p.error.empty()) out << "  " << p.error << "\n";
  const auto* budgets = p.fit.if_contains("budgets");
  const auto* cands = p.fit.if_contains("candidates");
  if (!budgets || !budgets->is_array() || !cands || !cands->is_array()) return;
  if (const auto* front = p.fit.if_contains("front"); front && front->is_array())
    out << "  predicted time-power front: " << front->as_array().size() << " modes\n";
  out << "  budget W   mode (cores/CPU kHz/GPU Hz/EMC Hz)           ms/minibatch   power W  from\n";
  for (const auto& b : budgets->as_array()) {
    if (!b.is_object()) continue;
    const auto& o = b.as_object();
    auto number = [&](const char* name) { return json::as_number(o.contains(name) ? o.at(name) : bj::value()); };
    auto candidate = [&](const char* name) -> const bj::value* {   // the candidate a field indexes, if any
      const int64_t i = o.contains(name) ? json::as_integer(o.at(name)).value_or(-1) : -1;
      return i >= 0 && static_cast<size_t>(i) < cands->as_array().size() ? &cands->as_array()[static_cast<size_t>(i)]
                                                                        : nullptr;
    };
    std::ostringstream line;
    line << "  " << std::left << std::setw(10) << num(number("budget_w"), 1);
    // A mode that may also fit and is predicted faster: the choice is uncertain there (docs/ANALYSIS.md).
    const bj::value* contender = candidate("contender");
    const bj::value* chosen = candidate("candidate");
    if (!chosen) {
      line << "nothing expected to fit";
      if (contender) line << "; " << bj::serialize(*contender) << " may fit";
      out << line.str() << "\n";
      continue;
    }
    const auto time_ms = number("time_ms");
    line << std::setw(44) << bj::serialize(*chosen) << std::setw(15) << num(time_ms, 2) << std::setw(9)
         << num(number("power_w"), 2)
         << (o.contains("measured") && o.at("measured").is_bool() && o.at("measured").as_bool() ? "measured" : "predicted");
    const auto contender_ms = number("contender_time_ms");
    if (contender && time_ms && contender_ms && *contender_ms > 0)
      line << "; may fit and predicted " << num(100.0 * (*time_ms / *contender_ms - 1.0), 1) << "% faster: "
           << bj::serialize(*contender);
    out << line.str() << "\n";
  }
}

}  // namespace

std::string format_report(const api::CampaignReport& report) {
  // The configuration column: the state each run executed in (applied, read back) and every axis that varies
  // across the campaign's runs, so no two differently configured runs look alike.
  const std::vector<std::string> varying = varying_axes(report);
  std::vector<std::string> labels;
  size_t width = 13;
  for (const auto& r : report.runs) {
    std::string label = r.applied ? applied_label(*r.applied) : requested_label(r.config);
    const std::string axes = axes_label(r.config, varying);
    if (!axes.empty()) label += " " + axes;
    width = std::max(width, label.size() + 1);
    labels.push_back(std::move(label));
  }
  std::ostringstream out;
  report_header(out, report, width);
  int64_t throttled_epochs = 0;
  std::map<std::string, int64_t> devices;   // what the runs trained on
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const auto& r = report.runs[i];
    if (r.compute_device) ++devices[*r.compute_device];
    const RunRow row(r);
    throttled_epochs += row.throttled_epochs;
    report_row(out, r, row, labels[i], width);
  }
  report_footer(out, report, devices, throttled_epochs);
  for (const auto& w : dataset_fingerprint_warnings(api::data_seen(report.runs))) out << "DATA: " << w << "\n";
  for (const auto& p : report.adaptive) adaptive_plan_section(out, p);
  return out.str();
}

}  // namespace jetsweep::cli

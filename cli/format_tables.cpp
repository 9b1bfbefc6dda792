// Text renderings with aligned columns: the campaign list (`status`), the fleet (`agents`), a comparison of two
// campaigns (`compare`), and the wall-clock ETA they share.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <sstream>

#include "cli/cli.hpp"
#include "cli/table.hpp"

namespace jetsweep::cli {

namespace {

using Align = Table::Align;

std::string fixed(const std::optional<double>& v, int precision) {
  if (!v) return "-";
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", precision, *v);
  return b;
}

std::string signed_fixed(const std::optional<double>& v, int precision, const char* suffix = "") {
  if (!v) return "-";
  char b[48];
  std::snprintf(b, sizeof b, "%+.*f%s", precision, *v, suffix);
  return b;
}

std::string eta_cell(const api::CampaignStatus& s, std::time_t now) {
  if (s.finished) return "done";
  if (s.paused) return "paused";
  if (s.eta_s && *s.eta_s > 0) return format_eta(*s.eta_s, now);
  return "after 1st epoch";
}

}  // namespace

std::string format_eta(double eta_s, std::time_t now) {
  const std::time_t at = now + static_cast<std::time_t>(std::llround(eta_s));
  std::tm now_tm{}, at_tm{};
  localtime_r(&now, &now_tm);
  localtime_r(&at, &at_tm);
  const bool same_day = now_tm.tm_year == at_tm.tm_year && now_tm.tm_yday == at_tm.tm_yday;
  char b[64];
  std::strftime(b, sizeof b, same_day ? "%H:%M" : "%a %d %b %H:%M", &at_tm);
  return std::string(b) + " (in " + format_duration(eta_s) + ")";
}

std::string format_campaigns(const std::vector<api::CampaignStatus>& all, std::time_t now) {
  if (all.empty()) return "no campaigns (submit one: jetsweep submit FILE.yaml)\n";
  Table t({{"id", Align::kRight},
           {"name"},
           {"state"},
           {"runs", Align::kRight},
           {"done", Align::kRight},
           {"running", Align::kRight},
           {"queued", Align::kRight},
           {"failed", Align::kRight},
           {"epochs", Align::kRight},
           {"progress", Align::kRight},
           {"ETA"}});
  for (const auto& s : all) {
    const std::string state = s.finished && s.state == "active" ? "finished" : s.state;
    const int64_t pct = s.epochs_total > 0 ? 100 * s.epochs_done / s.epochs_total : 0;
    t.add_row({std::to_string(s.campaign_id), s.name, state, std::to_string(s.runs), std::to_string(s.done),
               std::to_string(s.running + s.assigned), std::to_string(s.queued),
               std::to_string(s.failed + s.lost), std::to_string(s.epochs_done) + "/" + std::to_string(s.epochs_total),
               std::to_string(pct) + "%", eta_cell(s, now)});
    for (const auto& u : s.unrunnable) t.add_note("    cannot run: " + u.reason);
  }
  return t.render() + "running = assigned or running; failed = failed or lost; ETA in local wall time\n";
}

std::string format_agents(const std::vector<api::AgentInfo>& agents) {
  Table t({{"id", Align::kRight},
           {"name"},
           {"class"},
           {"state"},
           {"run", Align::kRight},
           {"ready"},
           {"host"},
           {"cpus", Align::kRight},
           {"trains on"},
           {"torch"},
           {"git"}});
  bool any_sim = false;
  for (const auto& a : agents) {
    const bool sim = a.backend == "sim";
    any_sim = any_sim || sim;
    t.add_row({std::to_string(a.agent_id), a.name + (sim ? " [sim]" : ""), a.device_class,
               a.connected ? (a.current_run ? "busy" : "idle") : a.rebooting_until ? "rebooting" : "offline",
               a.current_run ? std::to_string(*a.current_run) : "-", a.ready() ? "yes" : "NO", a.hostname,
               std::to_string(a.cpus), a.accelerator, a.torch_version, a.git_sha});
    // A board that is not ready for what it was asked (jetsweep-agent doctor on it says more).
    for (const auto& why : a.not_ready) t.add_note("    NOT READY: " + why);
    if (!a.connected && a.rebooting_until)
      t.add_note("    rebooting its board for run " + (a.current_run ? std::to_string(*a.current_run) : std::string("-")) +
                 "; its run and board are held until " + *a.rebooting_until);
  }
  std::string out = t.render();
  if (agents.empty())
    return out + "no agents have registered with this controller yet (start one: jetsweep-agent --controller "
                 "ws://HOST:PORT --name NAME; docs/DEPLOY.md)\n";
  if (any_sim) out += "[sim] = a simulated board: modelled times and power, not measurements (docs/SIMULATION.md)\n";
  return out;
}

std::string format_comparison(const api::CampaignComparison& c) {
  std::ostringstream out;
  auto side = [&](const char* letter, const api::ComparedCampaign& s) {
    out << letter << ": campaign " << s.campaign.id << " (" << s.campaign.name << ", " << s.campaign.created_at << "), "
        << s.runs << " runs";
    if (s.simulated_runs > 0) out << ", SIMULATED: " << s.simulated_runs << " from simulated boards";
    if (!s.power_sensor) out << ", no power sensor (energy null, never estimated)";
    out << "\n";
  };
  side("A", c.a);
  side("B", c.b);
  out << "matched by run configuration without repetition; device replaced by the class of the board that ran it; "
         "figures are means over epochs 1+ (epoch 0 is the warm-up, excluded); delta = B - A\n\n";
  Table t({{"configuration"},
           {"runs A/B", Align::kRight},
           {"epoch s A", Align::kRight},
           {"epoch s B", Align::kRight},
           {"delta s", Align::kRight},
           {"delta", Align::kRight},
           {"W A", Align::kRight},
           {"W B", Align::kRight},
           {"delta", Align::kRight},
           {"J/epoch A", Align::kRight},
           {"J/epoch B", Align::kRight},
           {"delta", Align::kRight}});
  auto runs = [](const api::ConfigFigures& f) { return std::to_string(f.runs) + (f.simulated ? "*" : ""); };
  for (const auto& m : c.configurations)
    t.add_row({m.label, runs(m.a) + "/" + runs(m.b), fixed(m.a.mean_epoch_s, 3), fixed(m.b.mean_epoch_s, 3),
               signed_fixed(m.mean_epoch_s.abs, 3), signed_fixed(m.mean_epoch_s.pct, 1, "%"),
               fixed(m.a.mean_power_w, 2), fixed(m.b.mean_power_w, 2), signed_fixed(m.mean_power_w.pct, 1, "%"),
               fixed(m.a.energy_per_epoch_j, 1), fixed(m.b.energy_per_epoch_j, 1),
               signed_fixed(m.energy_per_epoch_j.pct, 1, "%")});
  out << (c.configurations.empty() ? std::string("no configuration is in both campaigns\n") : t.render());
  for (const auto& w : c.data_warnings) out << "DATA: " << w << "\n";
  auto unmatched = [&](const char* where, const std::vector<api::UnmatchedConfig>& list) {
    if (list.empty()) return;
    out << "\nonly in " << where << " (" << list.size() << "):\n";
    Table u({{"configuration"}, {"runs", Align::kRight}, {"epoch s", Align::kRight}, {"W", Align::kRight},
             {"J/epoch", Align::kRight}});
    for (const auto& x : list)
      u.add_row({x.label, runs(x.figures), fixed(x.figures.mean_epoch_s, 3), fixed(x.figures.mean_power_w, 2),
                 fixed(x.figures.energy_per_epoch_j, 1)});
    out << u.render();
  };
  unmatched("A", c.only_a);
  unmatched("B", c.only_b);
  out << "\nepoch s = mean end-to-end time per epoch; W = mean power; J/epoch = energy per epoch; - = not measured";
  bool any_sim = c.a.simulated_runs > 0 || c.b.simulated_runs > 0;
  if (any_sim) out << "; * = simulated";
  out << "\n";
  return out.str();
}

}  // namespace jetsweep::cli

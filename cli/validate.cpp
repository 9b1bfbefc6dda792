// `jetsweep validate FILE [--estimate]`: the campaign expanded and checked here, its duration from the papers'
// board model, and (--estimate) the controller's estimate from the epoch times it has measured.
#include "cli/validate.hpp"

#include <algorithm>
#include <map>
#include <ostream>

#include "cli/cli.hpp"
#include "common/board_classes.hpp"
#include "common/perf/estimate.hpp"
#include "common/text.hpp"

namespace jetsweep::cli {
namespace bj = boost::json;

namespace {

// The papers' board model: training time per device target (a class's runs on one board of it).
struct Modelled {
  double seconds = 0;
  int64_t runs = 0;
  std::string why_not;   // first reason a run is not modelled
  int64_t not_modelled = 0;
};

struct Expansion {
  std::map<std::string, int64_t> runs_per_device;
  int64_t epochs = 0;
  std::map<std::string, Modelled> modelled;
  double modelled_wall = 0;   // with one board per device
};

Expansion expand(const Campaign& c) {
  Expansion x;
  perf::RunTimeModel run_time;
  for (const auto& r : c.runs) {
    x.runs_per_device[r.device]++;
    x.epochs += r.epochs;
    auto& m = x.modelled[r.device];
    const std::string cls = device_target_class(r.device);
    Result<double> s = cls.empty() || cls == "host"
                           ? Result<double>(invalid_argument("'" + r.device + "' is not a Jetson board class (the model "
                                                             "covers " + join(board_classes()) + ")"))
                           : run_time.run_seconds(r, cls);
    if (s) {
      m.seconds += s.value();
      ++m.runs;
    } else if (m.not_modelled++ == 0) {
      m.why_not = s.status().message();
    }
  }
  for (const auto& [d, m] : x.modelled) x.modelled_wall = std::max(x.modelled_wall, m.seconds);
  return x;
}

bj::object expansion_json(const Campaign& c, const Expansion& x, const std::optional<bj::value>& estimate) {
  bj::object o;
  o["campaign"] = c.name;
  o["runs"] = c.runs.size();
  o["epochs"] = x.epochs;
  bj::object pd;
  for (const auto& [d, n] : x.runs_per_device) pd[d] = n;
  o["runs_per_device"] = std::move(pd);
  bj::array md;
  for (const auto& [d, m] : x.modelled) {
    bj::object e;
    e["device"] = d;
    e["runs_modelled"] = m.runs;
    e["training_s"] = m.seconds;
    e["runs_not_modelled"] = m.not_modelled;
    if (m.not_modelled) e["why_not"] = m.why_not;
    md.push_back(std::move(e));
  }
  bj::object mo;
  mo["per_device"] = std::move(md);
  mo["wall_s_one_board_per_device"] = x.modelled_wall;
  o["modelled"] = std::move(mo);
  bj::array gating;
  for (const auto& n : gating_notes(c)) gating.push_back(bj::value(n));
  o["gpu_gating_notes"] = std::move(gating);
  o["mode_tables"] = bj::array(c.mode_tables.begin(), c.mode_tables.end());
  if (estimate) o["estimate"] = *estimate;
  return o;
}

void print_estimate(std::ostream& out, const api::CampaignEstimate& est) {
  out << "estimated duration: " << format_duration(est.estimated_wall_s) << " (from the epoch times measured so far)\n";
  for (const auto& t : est.per_device) {
    out << "  " << t.device << ": " << t.runs << " runs, " << format_duration(t.run_seconds) << " of training on "
        << t.boards << " boards";
    if (t.runs_without_measurement > 0) out << "; " << t.runs_without_measurement << " runs have no measurement to go by";
    out << "\n";
  }
  if (!est.mode_tables.empty()) out << "the controller expanded it to " << est.runs << " runs\n";
  for (const auto& t : est.mode_tables) out << "  power modes generated from " << t << "\n";
  for (const auto& r : est.gating_refused) out << "refused on the enrolled boards: " << r << "\n";
}

void print_expansion(std::ostream& out, const std::string& file, const Campaign& c, const Expansion& x) {
  out << file << ": campaign '" << c.name << "' expands to " << c.runs.size() << " runs (" << x.epochs << " epochs)\n";
  for (const auto& [d, n] : x.runs_per_device) {
    const auto& m = x.modelled.at(d);
    out << "  device " << d << ": " << n << " runs"
        << (is_every_instance(d) ? " per enrolled board (expanded at submission)" : "");
    if (m.runs > 0) out << "; modelled " << format_duration(m.seconds) << " of training on one board";
    if (m.not_modelled > 0) out << "; " << m.not_modelled << " runs not modelled: " << m.why_not;
    out << "\n";
  }
  if (x.modelled_wall > 0)
    out << "modelled duration with one board per device: " << format_duration(x.modelled_wall)
        << " (the papers' calibrated board model, docs/SIMULATION.md)\n";
  for (const auto& n : gating_notes(c)) out << "GPU gating: " << n << "\n";
  for (const auto& t : c.mode_tables) out << "power modes generated from " << t << "\n";
}

}  // namespace

void print_validation(std::ostream& out, const std::string& file, const Campaign& c,
                      const std::optional<Answer<api::CampaignEstimate>>& estimate, bool as_json) {
  const Expansion x = expand(c);
  if (as_json) {
    out << bj::serialize(expansion_json(c, x, estimate ? std::optional<bj::value>(estimate->json) : std::nullopt)) << "\n";
    return;
  }
  print_expansion(out, file, c, x);
  if (estimate) print_estimate(out, estimate->value);
  else out << "(--estimate: its duration from the epoch times the controller has measured)\n";
}

void print_controller_expansion(std::ostream& out, const std::string& file, const std::string& local_error,
                                const Answer<api::CampaignEstimate>& estimate, bool as_json) {
  if (as_json) {
    bj::object o;
    o["campaign"] = estimate.value.campaign;
    o["not_expanded_here"] = local_error;
    o["estimate"] = estimate.json;
    out << bj::serialize(o) << "\n";
    return;
  }
  out << file << ": campaign '" << estimate.value.campaign << "' expands only at the controller (here: " << local_error
      << ")\n";
  print_estimate(out, estimate.value);
}

}  // namespace jetsweep::cli

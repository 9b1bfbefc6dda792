// Printers of `analyze adaptive`: the rounds, the figures of the adaptive predictor beside the PowerTrain
// baselines, and the adaptive pick per power budget.
#include "analysis/print_reports.hpp"
#include "analysis/print_util.hpp"

namespace jetsweep::analysis {

namespace bj = boost::json;

namespace {

bj::object figures_json(const AdaptiveFigures& f) {
  bj::object o;
  o["strategy"] = f.strategy;
  o["profiled"] = f.profiled;
  o["time_mape_pct"] = jnum(f.time_mape_pct, 5);
  o["power_mape_pct"] = jnum(f.power_mape_pct, 5);
  o["energy_mape_pct"] = jnum(f.energy_mape_pct, 5);
  o["front_precision"] = jnum(f.front_precision, 5);
  o["front_recall"] = jnum(f.front_recall, 5);
  o["front_size"] = f.front_size;
  o["true_front_size"] = f.true_front_size;
  o["budgets"] = f.sweep.budgets;
  o["infeasible"] = f.sweep.infeasible;
  o["abstained"] = f.abstained;
  o["time_penalty_median_pct"] = jnum(f.sweep.time_penalty_median_pct, 5);
  o["time_penalty_q3_pct"] = jnum(f.sweep.time_penalty_q3_pct, 5);
  o["time_penalty_mean_pct"] = jnum(f.sweep.time_penalty_mean_pct, 5);
  o["over_budget_pct"] = jnum(f.sweep.over_limit_pct, 5);
  o["over_budget_plus1_pct"] = jnum(f.sweep.over_limit_plus1_pct, 5);
  o["time_penalty_true_power_pct"] = jnum(f.penalty_true_power_pct, 5);
  o["time_penalty_true_time_pct"] = jnum(f.penalty_true_time_pct, 5);
  o["seconds"] = jnum(f.seconds, 4);
  return o;
}

std::string modes_text(const std::vector<ModeKey>& modes) {
  std::string s;
  for (const auto& m : modes) s += (s.empty() ? "" : " ") + m.label();
  return s;
}

// The adaptive sweep's outcome for a budget (the sweep skips budgets without an optimum or a pick).
const BudgetOutcome* outcome_of(const AdaptiveReport& r, double budget) {
  if (r.figures.empty()) return nullptr;
  for (const auto& o : r.figures.front().sweep.outcomes)
    if (o.budget_w == budget) return &o;
  return nullptr;
}

// An oracle mode with its true values.
bj::object pick_json(const AdaptiveReport& r, size_t i) {
  bj::object o = mode_json(r.oracle.modes[i]);
  o["time_ms"] = jnum(r.oracle.time_ms[i]);
  o["power_w"] = jnum(r.oracle.power_w[i]);
  return o;
}

}  // namespace

bj::object report_json(const AdaptiveReport& r) {
  bj::object o;
  workload_json(o, r.target, r.context);
  o["reference"] = r.query.reference.to_string();
  o["reference_modes"] = r.reference.modes;
  o["reference_loaded"] = r.reference.loaded;
  o["reference_seconds"] = jnum(r.reference.seconds, 4);
  o["anchor"] = to_string(r.anchor);
  o["strategy"] = to_string(r.query.options.strategy);
  o["budget"] = r.query.options.budget;
  o["seed"] = r.query.options.seed;
  o["candidates"] = r.oracle.modes.size();
  bj::array rounds;
  for (const auto& rd : r.rounds) {
    bj::object x;
    bj::array modes;
    for (const auto& m : rd.modes) modes.push_back(mode_json(m));
    x["modes"] = std::move(modes);
    x["time_loo_mape_pct"] = jnum(rd.time_loo_pct, 5);
    x["power_loo_mape_pct"] = jnum(rd.power_loo_pct, 5);
    x["seconds"] = jnum(rd.seconds, 4);
    rounds.push_back(std::move(x));
  }
  o["rounds"] = std::move(rounds);
  bj::array figures;
  for (const auto& f : r.figures) figures.push_back(figures_json(f));
  o["figures"] = std::move(figures);
  bj::array picks;
  for (const auto& p : r.picks) {
    bj::object x;
    x["budget_w"] = jnum(p.budget_w);
    x["chosen"] = p.candidate ? bj::value(pick_json(r, *p.candidate)) : bj::value(nullptr);
    x["measured"] = p.measured;
    if (p.candidate && !p.measured) {
      x["predicted_time_ms"] = jnum(p.time_ms);
      x["predicted_power_w"] = jnum(p.power_w);
    }
    if (p.contender) {
      bj::object c = pick_json(r, *p.contender);
      c["predicted_time_ms"] = jnum(p.contender_time_ms);
      c["predicted_power_w"] = jnum(p.contender_power_w);
      c["predicted_gain_pct"] = p.candidate ? jnum(contender_gain_pct(p), 5) : bj::value(nullptr);
      x["contender"] = std::move(c);
    } else {
      x["contender"] = nullptr;
    }
    const BudgetOutcome* oc = outcome_of(r, p.budget_w);
    x["optimal"] = oc && oc->optimal ? bj::value(pick_json(r, *oc->optimal)) : bj::value(nullptr);
    x["time_penalty_pct"] = oc ? jnum(oc->time_penalty_pct, 5) : bj::value(nullptr);
    x["excess_power_w"] = oc ? jnum(oc->excess_power_w, 5) : bj::value(nullptr);
    picks.push_back(std::move(x));
  }
  o["picks"] = std::move(picks);
  bj::array notes;
  for (const auto& n : r.notes) notes.push_back(bj::string(n));
  o["notes"] = std::move(notes);
  o["seconds"] = jnum(r.seconds, 4);
  return o;
}

void print_text(std::ostream& out, const AdaptiveReport& r) {
  out << "adaptive profiling of " << workload_heading(r.target, r.context.labels) << " from "
      << r.query.reference.to_string() << ": strategy " << to_string(r.query.options.strategy) << ", budget "
      << r.query.options.budget << " of " << r.oracle.modes.size() << " modes, seed " << r.query.options.seed << "\n";
  print_selection(out, r.context);
  out << "reference network: " << r.reference.modes << " modes, " << (r.reference.loaded ? "loaded" : "trained")
      << " in " << fixed(r.reference.seconds, 1) << " s; the adaptive predictor corrects "
      << (r.anchor == AdaptiveAnchor::kMeasured ? "the reference's measured values" : "its predictions") << "\n";
  for (size_t i = 0; i < r.rounds.size(); ++i) {
    const auto& rd = r.rounds[i];
    out << "round " << i + 1 << ": " << modes_text(rd.modes) << "  (leave-one-out MAPE time "
        << fixed(rd.time_loo_pct, 1) << "%, power " << fixed(rd.power_loo_pct, 1) << "%)\n";
  }
  out << "\n"
      << pad("strategy", 24) << pad_left("profiled", 9) << pad_left("time%", 8) << pad_left("power%", 8)
      << pad_left("energy%", 8) << pad_left("front P", 8) << pad_left("front R", 8) << pad_left("pen med%", 9)
      << pad_left("pen q3%", 8) << pad_left(">B+1W%", 8) << pad_left("no pick", 8) << pad_left("s", 7) << "\n";
  for (const auto& f : r.figures) {
    out << pad(f.strategy, 24) << pad_left(std::to_string(f.profiled), 9) << pad_left(fixed(f.time_mape_pct, 1), 8)
        << pad_left(fixed(f.power_mape_pct, 1), 8) << pad_left(fixed(f.energy_mape_pct, 1), 8)
        << pad_left(fixed(f.front_precision, 2), 8) << pad_left(fixed(f.front_recall, 2), 8)
        << pad_left(fixed(f.sweep.time_penalty_median_pct, 2), 9) << pad_left(fixed(f.sweep.time_penalty_q3_pct, 2), 8)
        << pad_left(fixed(f.sweep.over_limit_plus1_pct, 1), 8) << pad_left(std::to_string(f.abstained), 8)
        << pad_left(fixed(f.seconds, 2), 7) << "\n";
  }
  out << "(MAPE over the modes not profiled; front P/R: precision and recall of the predicted time-power Pareto "
         "front; pen: time penalty against the true optimum per budget; >B+1W: picks over the budget by > 1 W; no pick: budgets with an optimum where it chose nothing, left out of pen and >B+1W)\n";
  for (const auto& f : r.figures)
    if (f.penalty_true_power_pct && f.penalty_true_time_pct)
      out << f.strategy << ": median penalty " << fixed(f.penalty_true_power_pct, 2)
          << "% with the true power of every mode (what its time model costs), " << fixed(f.penalty_true_time_pct, 2)
          << "% with the true time (what its power model and the power bound cost)\n";
  out << "\n";
  out << "adaptive pick per power budget:\n";
  for (const auto& p : r.picks) {
    out << "  " << pad_left(fixed(p.budget_w, 1), 6) << " W: ";
    if (!p.candidate) {
      out << "no mode expected to fit";
      if (p.contender) out << "; " << r.oracle.modes[*p.contender].label() << " may fit";
      out << "\n";
      continue;
    }
    const size_t c = *p.candidate;
    out << pad(r.oracle.modes[c].label(), 26) << (p.measured ? "profiled " : "predicted") << " "
        << fixed(r.oracle.time_ms[c], 2) << " ms " << fixed(r.oracle.power_w[c], 1) << " W";
    if (!p.measured) out << " (predicted " << fixed(p.time_ms, 2) << " ms " << fixed(p.power_w, 1) << " W)";
    if (const BudgetOutcome* oc = outcome_of(r, p.budget_w); oc && oc->optimal) {
      out << "; optimum " << r.oracle.modes[*oc->optimal].label() << " " << fixed(r.oracle.time_ms[*oc->optimal], 2)
          << " ms, penalty " << fixed(oc->time_penalty_pct, 1) << "%";
      if (oc->excess_power_w > 0) out << ", over by " << fixed(oc->excess_power_w, 2) << " W";
    }
    if (p.contender)
      out << "; may fit and predicted " << fixed(contender_gain_pct(p), 1) << "% faster: "
          << r.oracle.modes[*p.contender].label();
    out << "\n";
  }
  for (const auto& n : r.notes) out << "note: " << n << "\n";
}

}  // namespace jetsweep::analysis

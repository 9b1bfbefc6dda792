#include "common/compare.hpp"

#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "common/json_fields.hpp"

namespace jetsweep::api {
namespace bj = boost::json;

namespace {

// Sums over the epochs 1+ of a group of runs.
struct Accumulator {
  ConfigFigures figures;
  double sum_e2e = 0, sum_power = 0, sum_energy = 0;
  bool power_complete = true, energy_complete = true;

  void add(const ReportRun& run) {
    ++figures.runs;
    figures.run_ids.push_back(run.run_id);
    figures.simulated = figures.simulated || run.simulated;
    for (const auto& e : run.epochs) {
      if (e.epoch == 0) continue;   // the warm-up
      ++figures.epochs;
      sum_e2e += e.e2e_s;
      power_complete = power_complete && e.mean_power_w.has_value();
      energy_complete = energy_complete && e.energy_j.has_value();
      sum_power += e.mean_power_w.value_or(0);
      sum_energy += e.energy_j.value_or(0);
    }
  }
  ConfigFigures finish() const {
    ConfigFigures f = figures;
    if (f.epochs > 0) {
      const double n = static_cast<double>(f.epochs);
      f.mean_epoch_s = sum_e2e / n;
      if (power_complete) f.mean_power_w = sum_power / n;
      if (energy_complete) f.energy_per_epoch_j = sum_energy / n;
    }
    return f;
  }
};

// One campaign's configurations in order of first appearance.
struct Grouped {
  std::vector<std::string> order;
  std::map<std::string, std::pair<bj::object, Accumulator>> groups;
};

Grouped group_runs(const CampaignReport& report) {
  Grouped g;
  for (const auto& run : report.runs) {
    bj::object config = comparison_config(run);
    std::string key = bj::serialize(config);
    auto it = g.groups.find(key);
    if (it == g.groups.end()) {
      g.order.push_back(key);
      it = g.groups.emplace(key, std::make_pair(std::move(config), Accumulator{})).first;
    }
    it->second.second.add(run);
  }
  return g;
}

ComparedCampaign compared_campaign(const CampaignReport& r) {
  return {r.campaign, static_cast<int64_t>(r.runs.size()), r.simulated_runs, r.power_sensor};
}

std::string value_text(const bj::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  if (v.is_object()) {   // a power mode: its name, else its settings
    if (const auto* name = v.get_object().if_contains("name"); name && name->is_string())
      return std::string(name->get_string());
  }
  return bj::serialize(v);
}

// "agx-orin lenet5/mnist" plus "key=value" for every key whose value differs between the configurations.
std::string label_of(const bj::object& config, const std::set<std::string>& varying) {
  auto text = [&](const char* k) {
    const auto* v = config.if_contains(k);
    return v ? value_text(*v) : std::string("-");
  };
  std::string label = text(kCompareBoardClassKey) + " " + text("model") + "/" + text("dataset");
  for (const auto& [k, v] : config) {
    const std::string key(k);
    if (key == kCompareBoardClassKey || key == "model" || key == "dataset" || !varying.count(key)) continue;
    label += " " + key + "=" + value_text(v);
  }
  return label;
}

// The keys whose values are not the same in every configuration of both campaigns.
std::set<std::string> varying_keys(const std::vector<const bj::object*>& configs) {
  std::map<std::string, std::set<std::string>> values;
  for (const auto* c : configs)
    for (const auto& [k, v] : *c) values[std::string(k)].insert(bj::serialize(v));
  std::set<std::string> varying;
  for (const auto& [k, vs] : values) {
    size_t carrying = 0;
    for (const auto* c : configs) carrying += c->contains(k) ? 1 : 0;
    if (vs.size() > 1 || carrying != configs.size()) varying.insert(k);
  }
  return varying;
}

template <class T>
bj::array numbers(const std::vector<T>& v) {
  bj::array a;
  for (const auto& x : v) a.emplace_back(x);
  return a;
}

Status expect_object(const bj::value& v, const std::string& where) {
  return v.is_object() ? Status::ok() : protocol_error(where + ": expected an object");
}

// A nested struct in field `name` of `parent` (an object).
template <class T>
Status nested(const bj::object& parent, const char* name, const std::string& where, T& out) {
  const auto* v = parent.if_contains(name);
  if (!v) return protocol_error(where + " field '" + name + "': missing");
  return from_json(*v, where + " field '" + name + "'", out);
}

// The fields shared by ComparedConfig and UnmatchedConfig.
Status config_fields(const bj::value& v, const std::string& where, std::string& key, std::string& label,
                     bj::object& config) {
  JS_RETURN_IF_ERROR(expect_object(v, where));
  json::FieldReader r(v.get_object(), where);
  key = r.string("key");
  label = r.string("label");
  if (const auto* c = r.object("config")) config = *c;
  return r.status();
}

}  // namespace

bj::object comparison_config(const ReportRun& run) {
  bj::object config;
  std::string board_class;
  if (run.facts)
    if (const auto* c = run.facts->if_contains("device_class"); c && c->is_string())
      board_class = std::string(c->get_string());
  if (board_class.empty()) {
    const auto* device = run.config.if_contains("device");
    board_class = device ? value_text(*device) : std::string("any");
  }
  config[kCompareBoardClassKey] = board_class;
  const bj::object stored = report_config(run.config);   // report_config's fixed key order: a canonical key
  for (const auto& [k, v] : stored) {
    bool excluded = false;
    for (const char* x : kCompareExcludedKeys) excluded = excluded || k == x;
    if (!excluded) config[k] = v;
  }
  return config;
}

FigureDelta figure_delta(const std::optional<double>& a, const std::optional<double>& b) {
  FigureDelta d;
  if (!a || !b) return d;
  d.abs = *b - *a;
  if (*a != 0) d.pct = 100.0 * (*b - *a) / *a;
  return d;
}

CampaignComparison compare_campaigns(const CampaignReport& a, const CampaignReport& b) {
  CampaignComparison out;
  out.a = compared_campaign(a);
  out.b = compared_campaign(b);
  const Grouped ga = group_runs(a), gb = group_runs(b);
  std::vector<const bj::object*> all;
  for (const auto& [k, g] : ga.groups) all.push_back(&g.first);
  for (const auto& [k, g] : gb.groups) all.push_back(&g.first);
  const std::set<std::string> varying = varying_keys(all);
  for (const auto& key : ga.order) {
    const auto& [config, acc] = ga.groups.at(key);
    auto in_b = gb.groups.find(key);
    if (in_b == gb.groups.end()) {
      out.only_a.push_back({key, label_of(config, varying), config, acc.finish()});
      continue;
    }
    ComparedConfig c{key, label_of(config, varying), config, acc.finish(), in_b->second.second.finish(), {}, {}, {}};
    c.mean_epoch_s = figure_delta(c.a.mean_epoch_s, c.b.mean_epoch_s);
    c.mean_power_w = figure_delta(c.a.mean_power_w, c.b.mean_power_w);
    c.energy_per_epoch_j = figure_delta(c.a.energy_per_epoch_j, c.b.energy_per_epoch_j);
    out.configurations.push_back(std::move(c));
  }
  for (const auto& key : gb.order)
    if (!ga.groups.count(key)) {
      const auto& [config, acc] = gb.groups.at(key);
      out.only_b.push_back({key, label_of(config, varying), config, acc.finish()});
    }
  std::vector<DataSeen> seen = data_seen(a.runs, "A: ");
  for (auto& s : data_seen(b.runs, "B: ")) seen.push_back(std::move(s));
  out.data_warnings = dataset_fingerprint_warnings(seen);
  return out;
}

std::vector<DataSeen> data_seen(const std::vector<ReportRun>& runs, const std::string& board_prefix) {
  std::vector<DataSeen> out;
  for (const auto& r : runs) {
    // Started: it reported what it trained, or measured epochs (an agent older than the field: none recorded).
    if (!r.workload && r.summary.epochs == 0 && r.epochs.empty()) continue;
    DataSeen s;
    if (const auto* d = r.config.if_contains("dataset"); d && d->is_string()) s.dataset = d->get_string();
    const auto* f = r.workload ? r.workload->if_contains("dataset_fingerprint") : nullptr;
    if (f && f->is_string()) s.fingerprint = f->get_string();
    s.board = board_prefix + r.agent.value_or("");
    out.push_back(std::move(s));
  }
  return out;
}

std::string campaign_compare_path(const std::string& a, const std::string& b) {
  return campaign_path(a) + "/compare/" + b;
}

// ---- codec ----

bj::object to_json(const ComparedCampaign& v) {
  return {{"campaign", to_json(v.campaign)}, {"runs", v.runs}, {"simulated_runs", v.simulated_runs},
          {"power_sensor", v.power_sensor}};
}

Status from_json(const bj::value& v, const std::string& where, ComparedCampaign& out) {
  JS_RETURN_IF_ERROR(expect_object(v, where));
  json::FieldReader r(v.get_object(), where);
  out.runs = r.integer("runs");
  out.simulated_runs = r.integer("simulated_runs");
  out.power_sensor = r.boolean("power_sensor");
  JS_RETURN_IF_ERROR(r.status());
  return nested(v.get_object(), "campaign", where, out.campaign);
}

bj::object to_json(const ConfigFigures& v) {
  return {{"runs", v.runs},
          {"run_ids", numbers(v.run_ids)},
          {"epochs", v.epochs},
          {"mean_epoch_s", json::optional_number(v.mean_epoch_s)},
          {"mean_power_w", json::optional_number(v.mean_power_w)},
          {"energy_per_epoch_j", json::optional_number(v.energy_per_epoch_j)},
          {"simulated", v.simulated}};
}

Status from_json(const bj::value& v, const std::string& where, ConfigFigures& out) {
  JS_RETURN_IF_ERROR(expect_object(v, where));
  json::FieldReader r(v.get_object(), where);
  out.runs = r.integer("runs");
  out.run_ids = r.integer_array("run_ids");
  out.epochs = r.integer("epochs");
  out.mean_epoch_s = r.opt_number("mean_epoch_s");
  out.mean_power_w = r.opt_number("mean_power_w");
  out.energy_per_epoch_j = r.opt_number("energy_per_epoch_j");
  out.simulated = r.boolean("simulated");
  return r.status();
}

bj::object to_json(const FigureDelta& v) {
  return {{"abs", json::optional_number(v.abs)}, {"pct", json::optional_number(v.pct)}};
}

Status from_json(const bj::value& v, const std::string& where, FigureDelta& out) {
  JS_RETURN_IF_ERROR(expect_object(v, where));
  json::FieldReader r(v.get_object(), where);
  out.abs = r.opt_number("abs");
  out.pct = r.opt_number("pct");
  return r.status();
}

bj::object to_json(const ComparedConfig& v) {
  return {{"key", v.key},
          {"label", v.label},
          {"config", v.config},
          {"a", to_json(v.a)},
          {"b", to_json(v.b)},
          {"delta", bj::object{{"mean_epoch_s", to_json(v.mean_epoch_s)},
                               {"mean_power_w", to_json(v.mean_power_w)},
                               {"energy_per_epoch_j", to_json(v.energy_per_epoch_j)}}}};
}

Status from_json(const bj::value& v, const std::string& where, ComparedConfig& out) {
  JS_RETURN_IF_ERROR(config_fields(v, where, out.key, out.label, out.config));
  const bj::object& o = v.get_object();
  JS_RETURN_IF_ERROR(nested(o, "a", where, out.a));
  JS_RETURN_IF_ERROR(nested(o, "b", where, out.b));
  const auto* delta = o.if_contains("delta");
  const std::string dwhere = where + " field 'delta'";
  if (!delta) return protocol_error(dwhere + ": missing");
  JS_RETURN_IF_ERROR(expect_object(*delta, dwhere));
  JS_RETURN_IF_ERROR(nested(delta->get_object(), "mean_epoch_s", dwhere, out.mean_epoch_s));
  JS_RETURN_IF_ERROR(nested(delta->get_object(), "mean_power_w", dwhere, out.mean_power_w));
  return nested(delta->get_object(), "energy_per_epoch_j", dwhere, out.energy_per_epoch_j);
}

bj::object to_json(const UnmatchedConfig& v) {
  return {{"key", v.key}, {"label", v.label}, {"config", v.config}, {"figures", to_json(v.figures)}};
}

Status from_json(const bj::value& v, const std::string& where, UnmatchedConfig& out) {
  JS_RETURN_IF_ERROR(config_fields(v, where, out.key, out.label, out.config));
  return nested(v.get_object(), "figures", where, out.figures);
}

bj::object to_json(const CampaignComparison& v) {
  bj::array excluded;
  for (const char* k : kCompareExcludedKeys) excluded.emplace_back(k);
  return {{"a", to_json(v.a)},
          {"b", to_json(v.b)},
          {"warmup_epochs_excluded", v.warmup_epochs_excluded},
          {"match_keys_excluded", std::move(excluded)},
          {"match_keys_added", bj::array{kCompareBoardClassKey}},
          {"configurations", to_json(v.configurations)},
          {"only_a", to_json(v.only_a)},
          {"only_b", to_json(v.only_b)},
          {"data_warnings", bj::value_from(v.data_warnings)}};
}

Status from_json(const bj::value& v, const std::string& where, CampaignComparison& out) {
  JS_RETURN_IF_ERROR(expect_object(v, where));
  const bj::object& o = v.get_object();
  json::FieldReader r(o, where);
  out.warmup_epochs_excluded = r.integer("warmup_epochs_excluded");
  JS_RETURN_IF_ERROR(r.status());
  JS_RETURN_IF_ERROR(nested(o, "a", where, out.a));
  JS_RETURN_IF_ERROR(nested(o, "b", where, out.b));
  JS_RETURN_IF_ERROR(nested(o, "configurations", where, out.configurations));
  JS_RETURN_IF_ERROR(nested(o, "only_a", where, out.only_a));
  out.data_warnings = r.opt_string_array("data_warnings");
  JS_RETURN_IF_ERROR(r.status());
  return nested(o, "only_b", where, out.only_b);
}

}  // namespace jetsweep::api

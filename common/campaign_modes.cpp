// Power-mode generators of the campaign language: `power_mode: {generate: grid | sample, ...}` expanded from a
// board class's frequency tables.
#include <algorithm>
#include <random>
#include <set>

#include "common/board_classes.hpp"
#include "common/campaign.hpp"
#include "common/campaign_yaml.hpp"

namespace jetsweep::campaign_yaml {

bool is_generator(const YAML::Node& n) { return n.IsMap() && n["generate"]; }

namespace {

const char* const kAdaptiveKeys =
    "budget, reference, reference_workload, strategy, anchor, power_budgets_w, cross_board";

bool is_adaptive_key(const std::string& key) {
  return key == "budget" || key == "reference" || key == "reference_workload" || key == "strategy" ||
         key == "anchor" || key == "power_budgets_w" || key == "cross_board";
}

// The plan's own keys of `generate: adaptive` (the grid's every/cores/seed are read with the other generators').
void read_adaptive(const std::string& file, const YAML::Node& n, const std::vector<YAML::const_iterator>& keys,
                   ModeGenerator& g) {
  AdaptivePlanSpec& s = *g.adaptive;
  s.seed = g.seed;
  s.where = place(file, n.Mark());
  bool has_budget = false;
  for (const auto& it : keys) {
    const std::string key = scalar_text(it->first);
    const YAML::Node v = it->second;
    if (key == "budget") {
      s.budget = to_int(file, "power_mode.budget", v);
      if (s.budget < kAdaptivePlanMinBudget)
        fail(file, v, "'power_mode.budget' " + std::to_string(s.budget) + " is below the adaptive strategy's minimum of " +
                          std::to_string(kAdaptivePlanMinBudget) + " modes (its first round must fit the model)");
      has_budget = true;
    } else if (key == "reference") {
      s.reference = to_string_value(file, "power_mode.reference", v);
    } else if (key == "reference_workload") {
      s.reference_workload = to_string_value(file, "power_mode.reference_workload", v);
    } else if (key == "strategy") {
      s.strategy = to_string_value(file, "power_mode.strategy", v);
      if (s.strategy != "front" && s.strategy != "random")
        fail(file, v, "'power_mode.strategy' must be 'front' or 'random', not '" + s.strategy + "'");
    } else if (key == "anchor") {
      s.anchor = to_string_value(file, "power_mode.anchor", v);
      if (s.anchor != "powertrain" && s.anchor != "measured")
        fail(file, v, "'power_mode.anchor' must be 'powertrain' or 'measured', not '" + s.anchor + "'");
    } else if (key == "power_budgets_w") {
      if (!v.IsSequence() || v.size() == 0)
        fail(file, v, "'power_mode.power_budgets_w' expects a list of watts, e.g. [20, 30, 40]");
      if (v.size() > 1000) fail(file, v, "'power_mode.power_budgets_w' lists more than 1000 budgets");
      for (const auto& b : v) {
        const double w = to_double(file, "power_mode.power_budgets_w", b);
        if (!(w > 0) || w > 1e4) fail(file, b, "'power_mode.power_budgets_w' must be watts in (0, 10000]");
        s.power_budgets_w.push_back(w);
      }
    } else if (key == "cross_board") {
      s.cross_board = to_bool(file, "power_mode.cross_board", v);
    }
  }
  if (!has_budget) fail(file, n, "'power_mode: {generate: adaptive}' needs 'budget' (modes to profile, >= " +
                                     std::to_string(kAdaptivePlanMinBudget) + ")");
  if (s.reference.empty())
    fail(file, n, "'power_mode: {generate: adaptive}' needs 'reference': a CSV corpus on the controller's machine, or "
                  "a campaign (id or name) that profiled a reference workload on the board class");
  if (g.count != 0) fail(file, n, "'count' goes with 'generate: sample'");
}

}  // namespace

ModeGenerator parse_generator(const std::string& file, const YAML::Node& n, const CampaignLimits& limits) {
  ModeGenerator g;
  std::vector<YAML::const_iterator> adaptive_keys;
  g.node = n;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = scalar_text(it->first);
    if (key == "generate") {
      const std::string kind = to_string_value(file, "power_mode.generate", it->second);
      if (kind != "grid" && kind != "sample" && kind != "adaptive")
        fail(file, it->second, "'power_mode.generate' must be 'grid', 'sample' or 'adaptive', not '" + kind + "'");
      g.sample = kind == "sample";
      if (kind == "adaptive") g.adaptive.emplace();
    } else if (key == "every") {
      g.every = to_int(file, "power_mode.every", it->second);
      if (g.every < 1) fail(file, it->second, "'power_mode.every' must be >= 1");
    } else if (key == "count") {
      g.count = to_int(file, "power_mode.count", it->second);
      if (g.count < 1) fail(file, it->second, "'power_mode.count' must be >= 1");
      if (g.count > limits.max_generated_modes)
        fail_limit(file, it->second, "'power_mode.count' asks for " + std::to_string(g.count) + " modes",
                   "max_generated_modes", limits.max_generated_modes);
    } else if (key == "seed") {
      g.seed = to_int(file, "power_mode.seed", it->second);
    } else if (key == "cores") {
      const YAML::Node v = it->second;   // a copy: it-> yields a temporary
      if (v.IsSequence() && static_cast<int64_t>(v.size()) > limits.max_list_length)
        fail_limit(file, v, "'power_mode.cores' lists " + std::to_string(v.size()) + " values", "max_list_length",
                   limits.max_list_length);
      if (v.IsSequence()) {
        for (const auto& c : v) g.cores.push_back(to_int(file, "power_mode.cores", c));
      } else {
        g.cores.push_back(to_int(file, "power_mode.cores", v));
      }
      std::set<int64_t> distinct;
      for (int64_t c : g.cores) {
        if (c < 1) fail(file, v, "'power_mode.cores' must be >= 1");
        if (!distinct.insert(c).second) fail(file, v, "'power_mode.cores' lists " + std::to_string(c) + " twice");
      }
    } else if (is_adaptive_key(key)) {
      adaptive_keys.push_back(it);
    } else {
      fail(file, it->first, "unknown power_mode generator key '" + key +
                                "' (known: generate, every, count, seed, cores; with generate: adaptive also " +
                                kAdaptiveKeys + ")");
    }
  }
  if (g.adaptive) {
    read_adaptive(file, n, adaptive_keys, g);
    return g;
  }
  if (!adaptive_keys.empty())
    fail(file, adaptive_keys.front()->first,
         "'" + scalar_text(adaptive_keys.front()->first) + "' goes with 'generate: adaptive'");
  if (g.sample && g.count == 0) fail(file, n, "'power_mode: {generate: sample}' needs 'count'");
  if (!g.sample && g.count != 0) fail(file, n, "'count' goes with 'generate: sample'");
  return g;
}

namespace {

// The frequency tables a generator draws from: every k-th value of each (all of them for a sample).
struct ModeTables {
  std::vector<int64_t> cores, cpu, gpu, emc;
  uint64_t total() const { return cores.size() * cpu.size() * gpu.size() * emc.size(); }
};

ModeTables mode_tables(const ModeGenerator& g, const BoardTables& t) {
  ModeTables m;
  m.cores = g.cores;
  if (m.cores.empty())
    for (int64_t c = 1; c <= t.cores; ++c) m.cores.push_back(c);
  auto every = [&](const std::vector<int64_t>& v) {
    std::vector<int64_t> out;
    const size_t step = static_cast<size_t>(g.sample ? 1 : g.every);
    for (size_t i = 0; i < v.size(); i += step) out.push_back(v[i]);
    return out;
  };
  m.cpu = every(t.cpu_khz);
  m.gpu = every(t.gpu_hz);
  m.emc = every(t.emc_hz);
  return m;
}

}  // namespace

uint64_t generated_mode_count(const ModeGenerator& g, const std::string& device, const FleetTables& fleet) {
  if (g.sample) return static_cast<uint64_t>(g.count);
  auto tables = fleet.resolve(device);
  return tables ? mode_tables(g, tables->tables).total() : 0;
}

// The modes a generator yields for one board class, in table order (cores, CPU, GPU, EMC).
std::vector<RunConfig> generate_modes(const std::string& file, const ModeGenerator& g, const RunConfig& base,
                                      const CampaignLimits& limits, const FleetTables& fleet,
                                      std::vector<std::string>& tables_used) {
  auto resolved = fleet.resolve(base.device);
  if (!resolved)
    fail(file, g.node, "power_mode generation needs a board class (or an enrolled board) in 'device' for this run, "
                       "got '" + base.device + "': " + resolved.status().message());
  const auto& t = resolved->tables;
  const std::string from = base.device + ": " + resolved->label;
  if (std::find(tables_used.begin(), tables_used.end(), from) == tables_used.end()) tables_used.push_back(from);
  for (int64_t c : g.cores)
    if (c > t.cores)
      fail(file, g.node, "'power_mode.cores' " + std::to_string(c) + " exceeds the " + std::to_string(t.cores) +
                             " cores of " + resolved->label);
  const ModeTables m = mode_tables(g, t);
  const auto& cores = m.cores;
  const auto& cpu = m.cpu;
  const auto& gpu = m.gpu;
  const auto& emc = m.emc;
  const uint64_t total = m.total();
  std::vector<uint64_t> picks;
  if (g.sample) {
    if (static_cast<uint64_t>(g.count) > total)
      fail(file, g.node, "'power_mode.count' " + std::to_string(g.count) + " exceeds the " + std::to_string(total) +
                             " modes of " + resolved->label);
    // Floyd's algorithm: a uniform sample of `count` distinct indices, reproducible from the seed.
    std::mt19937_64 rng(static_cast<uint64_t>(g.seed));
    std::set<uint64_t> chosen;
    for (uint64_t j = total - static_cast<uint64_t>(g.count); j < total; ++j) {
      std::uniform_int_distribution<uint64_t> d(0, j);
      const uint64_t r = d(rng);
      if (!chosen.insert(r).second) chosen.insert(j);
    }
    picks.assign(chosen.begin(), chosen.end());
  } else {
    if (total > static_cast<uint64_t>(limits.max_generated_modes))
      fail_limit(file, g.node, "the generated grid of " + base.device + " has " + std::to_string(total) + " modes",
                 "max_generated_modes", limits.max_generated_modes);
    picks.resize(total);
    for (uint64_t i = 0; i < total; ++i) picks[i] = i;
  }
  std::vector<RunConfig> out;
  out.reserve(picks.size());
  for (uint64_t idx : picks) {
    RunConfig c = base;
    c.power_mode.name.clear();
    c.power_mode.emc_hz = emc[idx % emc.size()];
    idx /= emc.size();
    c.power_mode.gpu_hz = gpu[idx % gpu.size()];
    idx /= gpu.size();
    c.power_mode.cpu_khz = cpu[idx % cpu.size()];
    idx /= cpu.size();
    c.power_mode.cores = cores[idx];
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace jetsweep::campaign_yaml

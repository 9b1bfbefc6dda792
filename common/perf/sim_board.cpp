#include "common/perf/sim_board.hpp"

#include <algorithm>

namespace jetsweep::sim {

namespace {

std::string list(const std::vector<int64_t>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
  return s;
}

bool in_table(const std::vector<int64_t>& table, int64_t v) {
  return std::find(table.begin(), table.end(), v) != table.end();
}

// A cap between table entries is rounded down to the nearest entry (cpufreq/devfreq behaviour);
// 0 means "no cap" (the table maximum). A cap below the table minimum gives the minimum.
int64_t apply_cap(const std::vector<int64_t>& table, int64_t cap) {
  if (cap <= 0) return table.back();
  int64_t best = table.front();
  for (auto f : table)
    if (f <= cap) best = f;
  return best;
}

}  // namespace

Result<SimBoard> SimBoard::open(std::string_view board_class) {
  SimBoard b;
  JS_ASSIGN_OR_RETURN(b.class_, class_calibration(board_class));
  JS_ASSIGN_OR_RETURN(b.tables_, board_class_tables(board_class));
  b.current_ = b.class_.reference;
  return b;
}

Result<Settings> SimBoard::resolve_named(const std::string& name) const {
  std::string names;
  for (const auto& m : class_.modes) {
    if (m.name == name || std::to_string(m.id) == name) {
      Settings s;
      s.cores = m.cores;
      s.cpu_khz = apply_cap(tables_.cpu_khz, m.cpu_max_khz);
      s.gpu_hz = apply_cap(tables_.gpu_hz, m.gpu_max_hz);
      s.emc_hz = apply_cap(tables_.emc_hz, m.emc_max_hz);
      return s;
    }
    names += (names.empty() ? "" : ", ") + std::to_string(m.id) + "=" + m.name;
  }
  return invalid_argument("simulated " + class_.board_class + " has no power mode '" + name + "' (modes: " + names + ")");
}

Result<Settings> SimBoard::resolve(const RunConfig& c) const {
  if (!c.power_mode_name.empty()) return resolve_named(c.power_mode_name);
  Settings s = current_;
  const std::string who = "simulated " + class_.board_class + " (" + tables_.module + ")";
  if (c.cores > 0) {
    if (c.cores > tables_.cores)
      return invalid_argument(who + ": cores " + std::to_string(c.cores) + " outside 1.." + std::to_string(tables_.cores));
    s.cores = static_cast<int>(c.cores);
  }
  if (c.cpu_khz > 0) {
    if (!in_table(tables_.cpu_khz, c.cpu_khz))
      return invalid_argument(who + ": CPU frequency " + std::to_string(c.cpu_khz) + " kHz is not in the class's table (kHz: " +
                              list(tables_.cpu_khz) + ")");
    s.cpu_khz = c.cpu_khz;
  }
  if (c.gpu_hz > 0) {
    if (!in_table(tables_.gpu_hz, c.gpu_hz))
      return invalid_argument(who + ": GPU frequency " + std::to_string(c.gpu_hz) + " Hz is not in the class's table (Hz: " +
                              list(tables_.gpu_hz) + ")");
    s.gpu_hz = c.gpu_hz;
  }
  if (c.emc_hz > 0) {
    if (!in_table(tables_.emc_hz, c.emc_hz))
      return invalid_argument(who + ": EMC rate " + std::to_string(c.emc_hz) + " Hz is not in the class's table (Hz: " +
                              list(tables_.emc_hz) + ")");
    s.emc_hz = c.emc_hz;
  }
  return s;
}

Status SimBoard::apply(const RunConfig& config) {
  if (!config.has_power_mode()) return Status::ok();
  JS_ASSIGN_OR_RETURN(current_, resolve(config));
  return Status::ok();
}

}  // namespace jetsweep::sim

#include "common/perf/sim_board.hpp"

#include <algorithm>

namespace jetsweep::perf {

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
  const NamedMode* def = nullptr;
  JS_ASSIGN_OR_RETURN(b.reference_, b.resolve_named(std::to_string(b.class_.default_mode_id), &def));
  b.reference_mode_ = *def;
  b.restore();
  return b;
}

Result<Settings> SimBoard::resolve_named(const std::string& name, const NamedMode** found) const {
  std::string names;
  for (const auto& m : class_.modes) {
    if (m.name == name || std::to_string(m.id) == name) {
      if (found) *found = &m;
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
  Settings s = reference_;
  if (!c.base_mode.empty()) {
    JS_ASSIGN_OR_RETURN(s, resolve_named(c.base_mode));
  }
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
  const NamedMode* named = nullptr;
  Settings s;
  if (!config.power_mode_name.empty()) {
    JS_ASSIGN_OR_RETURN(s, resolve_named(config.power_mode_name, &named));
  } else {
    JS_ASSIGN_OR_RETURN(s, resolve(config));
    if (!config.has_power_mode() && !config.base_mode.empty()) (void)resolve_named(config.base_mode, &named);
    else if (!config.has_power_mode()) named = &reference_mode_;
  }
  current_ = s;
  current_name_ = named ? named->name : "";
  current_id_ = named ? std::optional<int64_t>(named->id) : std::nullopt;
  pinned_ = config.pin_clocks;
  fan_max_ = config.fan_max;
  return Status::ok();
}

proto::BoardState SimBoard::state() const {
  proto::BoardState b;
  b.mode_name = current_name_;
  b.nvpmodel_id = current_id_;
  b.cores_online = current_.cores;
  b.cpu_khz = current_.cpu_khz;
  b.gpu_hz = current_.gpu_hz;
  b.emc_hz = current_.emc_hz;
  b.clocks_pinned = pinned_;
  b.fan = fan_max_ ? "max" : "auto";
  return b;
}

}  // namespace jetsweep::perf

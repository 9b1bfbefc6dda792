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
  b.booted_ = b.masks_of(*def);
  b.reference_.tpcs = b.class_.tpcs_on(b.booted_.tpc_pg_mask);
  b.boot_mode_ = *def;
  b.boot_ = b.reference_;
  b.restore();
  return b;
}

ModeMasks SimBoard::masks_of(const NamedMode& mode) const {
  const ModeMasks* m = class_.masks_of(mode.id);
  return m ? *m : ModeMasks{mode.id, std::nullopt, std::nullopt};
}

// A mask the mode does not set stays as booted; one it sets must be in force.
bool SimBoard::applies_live(const ModeMasks& want, const ModeMasks& booted) {
  return (!want.tpc_pg_mask || want.tpc_pg_mask == booted.tpc_pg_mask) &&
         (!want.fbp_pg_mask || want.fbp_pg_mask == booted.fbp_pg_mask);
}

std::optional<proto::RebootPending> SimBoard::reboot_needed(const RunConfig& config) const {
  const NamedMode* mode = nullptr;
  if (config.gating_mode().empty() || !resolve_named(config.gating_mode(), &mode) || !mode) return std::nullopt;
  const ModeMasks want = masks_of(*mode);
  if (applies_live(want, booted_)) return std::nullopt;
  proto::RebootPending r;
  r.mode_name = mode->name;
  r.nvpmodel_id = mode->id;
  if (want.tpc_pg_mask) r.tpc_pg_mask_from = booted_.tpc_pg_mask.value_or(0), r.tpc_pg_mask_to = want.tpc_pg_mask;
  if (want.fbp_pg_mask) r.fbp_pg_mask_from = booted_.fbp_pg_mask.value_or(0), r.fbp_pg_mask_to = want.fbp_pg_mask;
  return r;
}

Status SimBoard::reboot_into(int64_t id) {
  const NamedMode* mode = nullptr;
  JS_ASSIGN_OR_RETURN(Settings s, resolve_named(std::to_string(id), &mode));
  booted_ = masks_of(*mode);
  cache_.clear();   // a reboot empties the page cache
  boot_mode_ = *mode;
  boot_ = s;
  boot_.tpcs = class_.tpcs_on(booted_.tpc_pg_mask);
  restore();
  return Status::ok();
}

std::vector<std::string> SimBoard::live_modes() const {
  std::vector<std::string> keys;
  for (const auto& m : class_.modes)
    if (applies_live(masks_of(m), booted_)) keys.insert(keys.end(), {m.name, std::to_string(m.id)});
  return keys;
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
  Settings s = reference_;
  s.tpcs = class_.tpcs_on(booted_.tpc_pg_mask);   // no named or base mode: the gating as booted
  if (!c.gating_mode().empty()) {
    const NamedMode* mode = nullptr;
    JS_ASSIGN_OR_RETURN(s, resolve_named(c.gating_mode(), &mode));
    s.tpcs = class_.tpcs_on(masks_of(*mode).tpc_pg_mask);   // the mode's masks (in force after its reboot)
    if (!c.power_mode.name.empty()) return s;
  }
  const PowerModeRequest& pm = c.power_mode;
  const std::string who = "simulated " + class_.board_class + " (" + tables_.module + ")";
  if (pm.cores > 0) {
    if (pm.cores > tables_.cores)
      return invalid_argument(who + ": cores " + std::to_string(pm.cores) + " outside 1.." + std::to_string(tables_.cores));
    s.cores = static_cast<int>(pm.cores);
  }
  if (pm.cpu_khz > 0) {
    if (!in_table(tables_.cpu_khz, pm.cpu_khz))
      return invalid_argument(who + ": CPU frequency " + std::to_string(pm.cpu_khz) + " kHz is not in the class's table (kHz: " +
                              list(tables_.cpu_khz) + ")");
    s.cpu_khz = pm.cpu_khz;
  }
  if (pm.gpu_hz > 0) {
    if (!in_table(tables_.gpu_hz, pm.gpu_hz))
      return invalid_argument(who + ": GPU frequency " + std::to_string(pm.gpu_hz) + " Hz is not in the class's table (Hz: " +
                              list(tables_.gpu_hz) + ")");
    s.gpu_hz = pm.gpu_hz;
  }
  if (pm.emc_hz > 0) {
    if (!in_table(tables_.emc_hz, pm.emc_hz))
      return invalid_argument(who + ": EMC rate " + std::to_string(pm.emc_hz) + " Hz is not in the class's table (Hz: " +
                              list(tables_.emc_hz) + ")");
    s.emc_hz = pm.emc_hz;
  }
  return s;
}

Status SimBoard::apply(const RunConfig& config) {
  if (auto need = reboot_needed(config)) {
    ModeMasks to{0, need->tpc_pg_mask_to, need->fbp_pg_mask_to};
    return invalid_argument(
                  "simulated " + class_.board_class + ": nvpmodel mode " + need->mode_name + " (" + to.to_string() +
                      ") cannot apply on the GPU masks the board booted with (" + booted_.to_string() +
                      "): it needs `nvpmodel -m " + std::to_string(need->nvpmodel_id) +
                      "` and a reboot (which an agent serving a controller with --allow-reboot models)");
  }
  const NamedMode* named = nullptr;
  JS_ASSIGN_OR_RETURN(Settings s, resolve(config));
  if (!config.gating_mode().empty()) (void)resolve_named(config.gating_mode(), &named);
  if (!config.power_mode.name.empty() || !config.has_power_mode()) {
    // The reference mode's clocks on another gating are not that mode (as the jetson backend labels it).
    if (!named && applies_live(masks_of(reference_mode_), booted_)) named = &reference_mode_;
  } else {
    named = nullptr;   // explicit settings: no mode name
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
  b.tpc_pg_mask = booted_.tpc_pg_mask;
  b.fbp_pg_mask = booted_.fbp_pg_mask;
  return b;
}

}  // namespace jetsweep::perf

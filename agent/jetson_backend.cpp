#include "agent/jetson_backend.hpp"

#include <filesystem>
#include <optional>

#include "agent/device/board_state.hpp"
#include "agent/device/fs_util.hpp"
#include "agent/device/nvpmodel.hpp"
#include "agent/device/power_control.hpp"
#include "agent/device/restore_state.hpp"
#include "agent/device/run_mode.hpp"
#include "agent/device/service_control.hpp"
#include "agent/telemetry.hpp"
#include "common/log.hpp"

namespace jetsweep::agent {

JetsonBackend::JetsonBackend(const ExecutorOptions& options, device::Board board)
    : root_(options.root), state_dir_(options.state_dir), board_(board),
      controller_(std::make_unique<device::PowerController>(
          std::move(board), options.state_dir, std::make_shared<device::SystemctlServiceControl>(options.systemctl))) {}

JetsonBackend::~JetsonBackend() = default;

Result<std::unique_ptr<JetsonBackend>> JetsonBackend::open(const ExecutorOptions& options) {
  // A previous agent may have died with the board in a run's power mode: put it back first.
  device::SystemctlServiceControl services(options.systemctl);
  auto restored = device::restore_pending(options.state_dir, nullptr, &services);
  if (!restored) {
    return restored.status().with_context("restoring the board settings recorded in " +
                                          device::restore_state_path(options.state_dir).string() +
                                          " (fix the cause, then run 'jetsweep-agent restore --state-dir " +
                                          options.state_dir + "')");
  }
  if (*restored)
    JS_LOG_WARN << "jetson backend: restored board settings a previous agent left in "
                << device::restore_state_path(options.state_dir).string();
  auto board = device::open_board(options.root);
  if (!board) return board.status().with_context("jetson backend: opening the board under " + options.root);
  std::unique_ptr<JetsonBackend> backend(new JetsonBackend(options, std::move(board).value()));
  auto power = BoardPowerSource::open(options.root);
  backend->power_readable_ = power.is_ok();
  if (!power.is_ok())
    JS_LOG_WARN << "jetson backend: " << power.status().message() << "; energy will be reported as null";
  return backend;
}

void JetsonBackend::describe(proto::DeviceFacts& facts) const {
  const device::BoardInfo& info = board_.info;
  facts.device_class = device::device_class_of(info);
  facts.kernel = info.kernel + "; L4T " + (info.l4t ? info.l4t->to_string() : std::string("unknown")) + "; " +
                 std::string(device::module_name(info.module)) + " " + info.module_part +
                 (info.nvpmodel_conf_fnv1a64.empty() ? std::string() : "; nvpmodel.conf " + info.nvpmodel_conf_fnv1a64);
  // The board is this host's sysfs tree (/ in production): another agent on it is the same board.
  std::error_code ec;
  const auto root = std::filesystem::weakly_canonical(root_, ec);
  facts.board_id = "jetson:" + facts.hostname + ":" + (ec ? root_ : root.string());
  // The modes that apply as booted: the controller hands this board those runs first (fewest reboots).
  auto conf = device::read_nvpmodel_conf(root_);
  auto gating = device::read_board_gating(root_, conf.is_ok() ? &conf.value() : nullptr, info.l4t_major());
  if (conf.is_ok() && gating.is_ok()) facts.live_modes = device::live_mode_keys(*conf, gating->gating);
  // The tables this board's runs are checked against and its grids generated from, at the controller.
  // Tables the controller would refuse (clusters with no common frequency, say) are not sent: its campaigns then
  // fall back to the papers' BSP, and the board checks each setting as it applies it.
  const device::FrequencyTables& t = board_.tables;
  BoardTables own{std::string(kTablesFromBoard), t.cores, t.cpu_khz, t.gpu_hz, t.emc_hz};
  if (Status ok = check_board_tables(own, "board tables under " + root_); ok.is_ok())
    facts.tables = std::move(own);
  else
    JS_LOG_WARN << "not sending this board's frequency tables: " << ok.message();
}

Result<std::optional<proto::RebootPending>> JetsonBackend::reboot_for(const RunConfig& config) {
  std::optional<proto::RebootPending> none;
  const std::string& wanted = config.gating_mode();
  if (wanted.empty()) return none;   // the reference state runs on the gating as booted
  std::lock_guard lock(mu_);
  JS_ASSIGN_OR_RETURN(device::NvpmodelConf conf, device::read_nvpmodel_conf(root_));
  const device::NvpMode* mode = conf.find(wanted);
  if (!mode) return none;   // prepare() refuses it, naming the modes there are
  JS_ASSIGN_OR_RETURN(device::GpuGating want, mode->gating(conf.source));
  JS_ASSIGN_OR_RETURN(device::BoardGating have, device::read_board_gating(root_, &conf, board_.info.l4t_major()));
  // A mask the board does not show at all is not cured by a reboot: prepare() names the missing file.
  if ((want.tpc_pg_mask && !have.gating.tpc_pg_mask) || (want.fbp_pg_mask && !have.gating.fbp_pg_mask)) return none;
  if (want.applies_live_on(have.gating)) return none;
  proto::RebootPending r;
  r.mode_name = mode->name;
  r.nvpmodel_id = mode->id;
  if (want.tpc_pg_mask) r.tpc_pg_mask_from = have.gating.tpc_pg_mask, r.tpc_pg_mask_to = want.tpc_pg_mask;
  if (want.fbp_pg_mask) r.fbp_pg_mask_from = have.gating.fbp_pg_mask, r.fbp_pg_mask_to = want.fbp_pg_mask;
  return std::optional<proto::RebootPending>(std::move(r));
}

bool JetsonBackend::board_modified() const {
  std::lock_guard lock(mu_);
  return modified_;
}

Status JetsonBackend::restore_board() {
  std::lock_guard lock(mu_);
  auto r = controller_->restore();
  if (!r) return r.status().with_context("restoring the board");
  modified_ = false;
  JS_LOG_INFO << "jetson backend: board settings restored (" << (*r ? "from " : "nothing recorded in ")
              << device::restore_state_path(state_dir_).string() << ")";
  return Status::ok();
}

Status JetsonBackend::prepare(int64_t run_id, const RunConfig& config, proto::RunStarted& started) {
  std::lock_guard lock(mu_);
  device::PowerController& ctl = *controller_;
  const device::Board& board = ctl.board();
  const auto state_file = device::restore_state_path(state_dir_);
  auto apply = [&](Result<device::DeviceTarget> target, const std::string& what) -> Status {
    if (!target) return target.status().with_context(what);
    Status s = ctl.apply(target.value());
    // A failed apply may have written some files: the state file then allows restore().
    modified_ = modified_ || device::exists_file(state_file);
    return s.is_ok() ? s : s.with_context(what);
  };
  JS_ASSIGN_OR_RETURN(device::NvpmodelConf conf, device::read_nvpmodel_conf(root_));
  if (!conf.default_mode)
    return invalid_argument(conf.source + " has no PM_CONFIG DEFAULT: this board's reference state is undefined");
  // The base of every run: its named mode, else its base_mode, else the class's reference state (the default
  // nvpmodel mode). A named mode or a base mode needs its GPU masks in force.
  const std::string& wanted = config.gating_mode();
  const std::string base = wanted.empty() ? std::to_string(*conf.default_mode) : wanted;
  const device::NvpMode* named = conf.find(base);
  if (!named) {
    std::string names;
    for (const auto& m : conf.modes) names += (names.empty() ? "" : ", ") + std::to_string(m.id) + "=" + m.name;
    return invalid_argument("no nvpmodel mode '" + base + "' in " + conf.source + " (modes: " + names + ")");
  }
  const PowerModeRequest& pm = config.power_mode;
  const bool explicit_settings = pm.cores > 0 || pm.cpu_khz > 0 || pm.gpu_hz > 0 || pm.emc_hz > 0;
  const std::string base_what = !config.base_mode.empty() && config.power_mode.name.empty()
                                    ? "base_mode " + named->name
                                    : (config.has_power_mode() ? "nvpmodel mode " : "reference state (nvpmodel mode ") +
                                          named->name + (config.has_power_mode() ? "" : ")");
  // Plan (and so check every value against the board's tables) before anything is written: a refused mode
  // leaves the board as it is.
  // A named mode needs its GPU masks in force (else nvpmodel and a reboot); the reference state, the base of
  // runs that name none, runs on the gating the board booted with, which every run records (applied).
  auto base_target = device::plan_named_mode(board, base, device::ApplyOptions{},
                                             wanted.empty() ? device::GatingRule::kAsBooted
                                                            : device::GatingRule::kRequireBooted);
  if (!base_target) return base_target.status().with_context(base_what);
  const bool base_gating_differs = base_target->gating_differs;
  for (const auto& note : base_target->notes)
    if (base_gating_differs && note.find("gates the GPU") != std::string::npos)
      JS_LOG_WARN << "run " << run_id << ": reference state: " << note;
  device::RunModeRequest req{"", pm.cores, pm.cpu_khz, pm.gpu_hz, pm.emc_hz, false};
  std::optional<Result<device::DeviceTarget>> overlay;
  if (explicit_settings) {
    overlay = device::plan_run_mode(board, req);
    if (!*overlay) return overlay->status().with_context("power mode " + req.to_string());
  }
  // Every run starts from the state the agent found the board in, so nothing carries over from the run
  // before (a pinned clock, a core offline, the fan), then gets its own state applied in full: the base mode,
  // the settings the run gives, then pinned clocks and fan.
  if (modified_) {
    auto r = ctl.restore();
    if (!r) return r.status().with_context("putting the board back before the run");
    modified_ = false;
  }
  JS_RETURN_IF_ERROR(apply(std::move(base_target), base_what));
  if (overlay) JS_RETURN_IF_ERROR(apply(std::move(*overlay), "power mode " + req.to_string()));
  if (config.pin_clocks) {
    JS_RETURN_IF_ERROR(apply(device::plan_pin_current(board, device::ApplyOptions{true, config.fan_max}), "pin_clocks"));
  } else if (config.fan_max) {
    device::DeviceTarget fan;
    fan.fan_max = true;
    JS_RETURN_IF_ERROR(apply(fan, "fan_max"));
  }
  started.applied = device::read_board_state(root_, &board);
  // Named only when the board is in that mode, GPU gating included: the reference mode's clocks on another
  // gating are not that mode, and the read-back settings and masks say what ran.
  if (!explicit_settings && !base_gating_differs) {
    started.applied->mode_name = named->name;
    started.applied->nvpmodel_id = named->id;
  }
  JS_LOG_INFO << "run " << run_id << ": " << (started.reference_state ? "reference state " : "power mode ")
              << started.applied->to_string() << " applied and read back";
  if (config.drop_caches) {
    Status s = device::drop_page_cache(root_);
    if (!s.is_ok()) return s.with_context("drop_caches");
    started.page_cache_dropped = true;
  }
  return Status::ok();
}

std::unique_ptr<PowerSource> JetsonBackend::power_source(int64_t run_id) {
  if (!power_readable_) return nullptr;
  auto src = BoardPowerSource::open(root_);
  if (src) return std::move(src).value();
  JS_LOG_WARN << "run " << run_id << ": " << src.status().message() << "; energy will be null";
  return nullptr;
}

}  // namespace jetsweep::agent

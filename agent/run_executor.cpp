#include "agent/run_executor.hpp"

#include <cmath>
#include <filesystem>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <optional>
#include <ostream>

#include "agent/device/board.hpp"
#include "agent/device/board_state.hpp"
#include "agent/device/nvpmodel.hpp"
#include "agent/device/fs_util.hpp"
#include "agent/device/power_control.hpp"
#include "agent/device/restore_state.hpp"
#include "agent/device/run_mode.hpp"
#include "agent/device/service_control.hpp"
#include "agent/sim/sim_executor.hpp"
#include "agent/storage/disk_stats.hpp"
#include "agent/storage/page_cache.hpp"
#include "agent/telemetry.hpp"
#include "agent/trainer.hpp"
#include "common/log.hpp"

namespace jetsweep::agent {

namespace {

Status drop_host_page_cache(const std::string& root) {
  ::sync();
  const std::string path = (root == "/" ? std::string() : root) + "/proc/sys/vm/drop_caches";
  std::ofstream out(path);
  if (!out) return io_error("drop_caches requested but " + path + " is not writable (run the agent as root)");
  out << "3\n";
  out.flush();
  if (!out) return io_error("drop_caches: writing 3 to " + path + " failed");
  return Status::ok();
}

// Page-cache residency of the dataset's files, or null (logged once per run) when it cannot be measured.
std::optional<double> cache_fraction(int64_t run_id, const Dataset& data, bool& warned) {
  auto r = storage::page_cache_residency(data.files());
  if (r && r->total_pages > 0) return r->fraction();
  if (!warned) {
    JS_LOG_WARN << "run " << run_id << ": page-cache residency of dataset '" << data.name()
                << "' not measured: " << (r ? std::string("its files are empty") : r.status().message());
    warned = true;
  }
  return std::nullopt;
}

// Where the observer reads clocks at epoch boundaries and what it judges them against.
struct ClockContext {
  std::string root;
  const device::Board* board = nullptr;   // jetson: GPU and EMC clocks too
  proto::BoardState applied;               // the state read back after it was applied
};

// Buffers per-minibatch timings into chunks and turns epoch ends into EpochResult + samples, with the
// epoch's exact window on the samples' timeline, its energy over that window, the clocks read back at its
// start and end (throttled when they left the applied state), the dataset's page-cache residency at epoch
// start and end and the read IO of its block device.
class EmittingObserver final : public TrainingObserver {
 public:
  // t0_unix_s: the wall clock when the sampler started (t_s = 0).
  EmittingObserver(int64_t run_id, ResultSink& sink, Sampler& sampler, PowerReading reading, const Dataset& data,
                   storage::IoMeter& io, double t0_unix_s, ClockContext clocks)
      : run_id_(run_id), sink_(sink), sampler_(sampler), reading_(reading), data_(data), io_(io), t0_unix_s_(t0_unix_s),
        clocks_(std::move(clocks)) {}

  void on_epoch_start(int64_t epoch) override {
    cache_start_ = cache_fraction(run_id_, data_, cache_warned_);
    io_.start();
    clocks_start_ = device::read_clocks(clocks_.root, clocks_.board);
    sampler_.sample_now();   // a sample close to the window's start edge
    chunk_ = proto::MinibatchChunk{run_id_, epoch, 0, {}, {}, {}};
  }
  void on_minibatch(int64_t epoch, const MinibatchTimes& t) override {
    if (chunk_.stall_s.empty()) chunk_.first_index = t.index;
    chunk_.stall_s.push_back(t.stall_s);
    chunk_.compute_s.push_back(t.compute_s);
    if (t.copy_s) chunk_.copy_s.push_back(*t.copy_s);
    if (chunk_.stall_s.size() >= proto::kMaxMinibatchesPerChunk) flush_chunk(epoch);
  }
  void on_epoch_end(const EpochTiming& t) override {
    flush_chunk(t.epoch);
    sampler_.sample_now();   // a sample at or after the window's end edge
    const double t0 = sampler_.since_start_s(t.start);
    const double t1 = sampler_.since_start_s(t.end);
    const auto rates = io_.stop();
    const auto clocks_end = device::read_clocks(clocks_.root, clocks_.board);
    const auto samples = sampler_.window(t0, t1);
    proto::EpochResult r;
    r.run_id = run_id_;
    r.epoch = t.epoch;
    r.e2e_s = t.e2e_s;
    r.stall_s = t.stall_s;
    r.compute_s = t.compute_s;
    r.copy_s = t.copy_s;
    r.minibatches = t.minibatches;
    if (std::isfinite(t.mean_loss)) r.loss = t.mean_loss;
    else JS_LOG_WARN << "run " << run_id_ << " epoch " << t.epoch << ": the training loss is " << t.mean_loss
                     << " (the model diverged); reported as null";
    r.t_start_s = t0;
    r.t_end_s = t1;
    const EnergyWindow energy = integrate_energy(samples, t0, t1, reading_);
    r.energy_j = energy.energy_j;
    r.mean_power_w = energy.mean_power_w;
    r.power_coverage = energy.coverage;
    if (!r.energy_j && energy.coverage > 0)
      JS_LOG_WARN << "run " << run_id_ << " epoch " << t.epoch << ": power samples cover only "
                  << 100.0 * energy.coverage << "% of the epoch; energy reported as null";
    r.clocks_start = clocks_start_;
    r.clocks_end = clocks_end;
    r.throttle_reason = device::throttle_reason(clocks_.applied, clocks_start_);
    if (r.throttle_reason.empty()) r.throttle_reason = device::throttle_reason(clocks_.applied, clocks_end);
    for (const auto& s : samples) {   // CPU frequency sampled during the epoch
      if (!r.throttle_reason.empty()) break;
      if (s.t_s < t0 || s.t_s > t1 || !s.cpu_freq_mhz) continue;
      proto::ClockReading c;
      c.cpu_khz = *s.cpu_freq_mhz * 1000.0;
      r.throttle_reason = device::throttle_reason(clocks_.applied, c);
      if (!r.throttle_reason.empty()) r.throttle_reason += " at t = " + std::to_string(s.t_s) + " s";
    }
    r.throttled = !r.throttle_reason.empty();
    if (r.throttled)
      JS_LOG_WARN << "run " << run_id_ << " epoch " << t.epoch << ": throttled (" << r.throttle_reason << ")";
    if (rates) {
      r.read_mb_s = rates->read_mb_s;
      r.read_iops = rates->read_iops;
    }
    r.cache_start_frac = cache_start_;
    r.cache_end_frac = cache_fraction(run_id_, data_, cache_warned_);
    flush_samples();
    sink_.emit(r);
    sampler_.forget_before(t1);   // the next epoch's window starts after t1: bounded memory for long runs
    JS_LOG_INFO << "run " << run_id_ << " epoch " << t.epoch << ": e2e " << t.e2e_s << " s, stall " << t.stall_s
                << " s, compute " << t.compute_s << " s, " << t.minibatches << " minibatches, loss " << t.mean_loss
                << ", page cache " << (r.cache_start_frac ? std::to_string(*r.cache_start_frac) : "-") << " -> "
                << (r.cache_end_frac ? std::to_string(*r.cache_end_frac) : "-") << ", read "
                << (r.read_mb_s ? std::to_string(*r.read_mb_s) + " MB/s " + std::to_string(*r.read_iops) + " IOPS" : "-");
  }
  void flush_samples() {
    auto fresh = sampler_.take_new();
    for (size_t i = 0; i < fresh.size(); i += proto::kMaxSamplesPerChunk) {
      proto::SampleChunk c;
      c.run_id = run_id_;
      c.t0_unix_s = t0_unix_s_;
      c.samples.assign(fresh.begin() + static_cast<long>(i),
                       fresh.begin() + static_cast<long>(std::min(fresh.size(), i + proto::kMaxSamplesPerChunk)));
      sink_.emit(std::move(c));
    }
  }

 private:
  void flush_chunk(int64_t epoch) {
    if (chunk_.stall_s.empty()) return;
    sink_.emit(chunk_);
    chunk_ = proto::MinibatchChunk{run_id_, epoch, 0, {}, {}, {}};
  }

  int64_t run_id_;
  ResultSink& sink_;
  Sampler& sampler_;
  PowerReading reading_;
  const Dataset& data_;
  storage::IoMeter& io_;
  double t0_unix_s_;
  ClockContext clocks_;
  proto::ClockReading clocks_start_;
  std::optional<double> cache_start_;
  bool cache_warned_ = false;
  proto::MinibatchChunk chunk_;
};

}  // namespace

// The opened Jetson board, its power controller (owner of the restore state file) and provenance.
struct RunExecutor::Jetson {
  device::Board board;
  std::unique_ptr<device::PowerController> controller;
  bool power_readable = false;
  bool modified = false;
};

namespace {
ExecutorOptions host_options(std::string root) {
  ExecutorOptions o;
  o.root = std::move(root);
  return o;
}
}  // namespace

RunExecutor::RunExecutor(std::string root) : RunExecutor(host_options(std::move(root))) {}

RunExecutor::RunExecutor(ExecutorOptions options) : options_(std::move(options)) {}

RunExecutor::~RunExecutor() = default;

Result<std::unique_ptr<RunExecutor>> RunExecutor::open(const ExecutorOptions& options) {
  std::unique_ptr<RunExecutor> ex(new RunExecutor(options));
  if (options.backend == "host") return ex;
  if (options.backend == "sim") {
    JS_ASSIGN_OR_RETURN(ex->sim_, sim::SimExecutor::open(options.sim_class, options.sim_instance, options.time_scale));
    std::vector<std::string> media;
    for (const auto& [name, dir] : options.storage.media()) media.push_back(name);
    JS_RETURN_IF_ERROR(ex->sim_->set_media(media));
    return ex;
  }
  if (options.backend != "jetson")
    return invalid_argument("--backend '" + options.backend + "': expected host, jetson or sim");

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
  ex->jetson_ = std::make_unique<Jetson>();
  ex->jetson_->board = board.value();
  ex->jetson_->controller = std::make_unique<device::PowerController>(
      std::move(board).value(), options.state_dir, std::make_shared<device::SystemctlServiceControl>(options.systemctl));
  auto power = BoardPowerSource::open(options.root);
  ex->jetson_->power_readable = power.is_ok();
  if (!power.is_ok())
    JS_LOG_WARN << "jetson backend: " << power.status().message() << "; energy will be reported as null";
  return ex;
}

std::string RunExecutor::default_accelerator() const { return jetson_ ? "cuda" : "auto"; }

std::string RunExecutor::accelerator_fact() const {
  if (sim_) return "simulated";
  auto device = compute_device_for(default_accelerator());
  return device ? device.value() : "none: " + cuda_unavailable_reason();
}

bool RunExecutor::has_power_sensor() const {
  if (sim_) return true;
  if (jetson_) return jetson_->power_readable;
  return RaplPowerSource::open(options_.root) != nullptr;
}

void RunExecutor::describe(proto::DeviceFacts& facts) const {
  facts.backend = options_.backend;
  if (jetson_) {
    const device::BoardInfo& info = jetson_->board.info;
    facts.device_class = device::device_class_of(info);
    facts.kernel = info.kernel + "; L4T " + (info.l4t ? info.l4t->to_string() : std::string("unknown")) + "; " +
                   std::string(device::module_name(info.module)) + " " + info.module_part +
                   (info.nvpmodel_conf_fnv1a64.empty() ? std::string() : "; nvpmodel.conf " + info.nvpmodel_conf_fnv1a64);
    // The board is this host's sysfs tree (/ in production): another agent on it is the same board.
    std::error_code ec;
    const auto root = std::filesystem::weakly_canonical(options_.root, ec);
    facts.board_id = "jetson:" + facts.hostname + ":" + (ec ? options_.root : root.string());
  } else if (sim_) {
    facts.device_class = options_.sim_class;
    facts.mem_bytes = sim_->model().tables().mem_total_bytes();  // the simulated board's RAM, not the host's
    facts.board_id = "sim:" + facts.hostname + ":" + options_.sim_class + "/" + options_.sim_instance;
    // The kernel stays the host's: instance names and time scales are not software, and putting them there
    // made every class with two simulated boards look like boards with different software.
  }
}

bool RunExecutor::board_modified() const {
  if (sim_) return sim_->modified();
  std::lock_guard lock(board_mu_);
  return jetson_ && jetson_->modified;
}

Status RunExecutor::restore_board() {
  if (sim_) {
    sim_->restore();
    return Status::ok();
  }
  std::lock_guard lock(board_mu_);
  if (!jetson_) return Status::ok();
  auto r = jetson_->controller->restore();
  if (!r) return r.status().with_context("restoring the board");
  jetson_->modified = false;
  JS_LOG_INFO << "jetson backend: board settings restored (" << (*r ? "from " : "nothing recorded in ")
              << device::restore_state_path(options_.state_dir).string() << ")";
  return Status::ok();
}

Result<const Dataset*> RunExecutor::dataset_for(int64_t run_id, const RunConfig& config, std::string& path,
                                                std::string& medium) {
  JS_ASSIGN_OR_RETURN(auto resolved, options_.storage.resolve(config.data, config.dataset, default_data_path(config.dataset)));
  path = resolved.path;
  medium = resolved.medium;
  if (!resolved.medium.empty())
    JS_LOG_INFO << "run " << run_id << ": dataset " << config.dataset << " on medium '" << resolved.medium << "' at " << path;
  const std::string key = config.dataset + "|" + path;
  if (cached_ && cached_key_ == key) return static_cast<const Dataset*>(cached_.get());
  cached_.reset();
  auto opened = open_training_set(config.dataset, path);
  if (!opened) return opened.status();
  cached_ = std::move(opened).value();
  cached_key_ = key;
  return static_cast<const Dataset*>(cached_.get());
}

Status RunExecutor::prepare_jetson(int64_t run_id, const RunConfig& config, proto::RunStarted& started) {
  std::lock_guard lock(board_mu_);
  device::PowerController& ctl = *jetson_->controller;
  const device::Board& board = ctl.board();
  const auto state_file = device::restore_state_path(options_.state_dir);
  auto apply = [&](Result<device::DeviceTarget> target, const std::string& what) -> Status {
    if (!target) return target.status().with_context(what);
    Status s = ctl.apply(target.value());
    // A failed apply may have written some files: the state file then allows restore().
    jetson_->modified = jetson_->modified || device::exists_file(state_file);
    return s.is_ok() ? s : s.with_context(what);
  };
  JS_ASSIGN_OR_RETURN(device::NvpmodelConf conf, device::read_nvpmodel_conf(options_.root));
  if (!conf.default_mode)
    return invalid_argument(conf.source + " has no PM_CONFIG DEFAULT: this board's reference state is undefined");
  // The base of every run: its named mode, else the class's reference state (the default nvpmodel mode).
  const std::string base = config.power_mode_name.empty() ? std::to_string(*conf.default_mode) : config.power_mode_name;
  const device::NvpMode* named = conf.find(base);
  if (!named) {
    std::string names;
    for (const auto& m : conf.modes) names += (names.empty() ? "" : ", ") + std::to_string(m.id) + "=" + m.name;
    return invalid_argument("no nvpmodel mode '" + base + "' in " + conf.source + " (modes: " + names + ")");
  }
  const bool explicit_settings = config.cores > 0 || config.cpu_khz > 0 || config.gpu_hz > 0 || config.emc_hz > 0;
  const std::string base_what = (config.has_power_mode() ? "nvpmodel mode " : "reference state (nvpmodel mode ") +
                                named->name + (config.has_power_mode() ? "" : ")");
  // Plan (and so check every value against the board's tables) before anything is written: a refused mode
  // leaves the board as it is.
  auto base_target = device::plan_named_mode(board, base, device::ApplyOptions{});
  if (!base_target) return base_target.status().with_context(base_what);
  device::RunModeRequest req{"", config.cores, config.cpu_khz, config.gpu_hz, config.emc_hz, false};
  std::optional<Result<device::DeviceTarget>> overlay;
  if (explicit_settings) {
    overlay = device::plan_run_mode(board, req);
    if (!*overlay) return overlay->status().with_context("power mode " + req.to_string());
  }
  // Every run starts from the state the agent found the board in, so nothing carries over from the run
  // before (a pinned clock, a core offline, the fan), then gets its own state applied in full: the base mode,
  // the settings the run gives, then pinned clocks and fan.
  if (jetson_->modified) {
    auto r = ctl.restore();
    if (!r) return r.status().with_context("putting the board back before the run");
    jetson_->modified = false;
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
  started.applied = device::read_board_state(options_.root, &board);
  if (!explicit_settings) {
    started.applied->mode_name = named->name;
    started.applied->nvpmodel_id = named->id;
  }
  JS_LOG_INFO << "run " << run_id << ": " << (started.reference_state ? "reference state " : "power mode ")
              << started.applied->to_string() << " applied and read back";
  if (config.drop_caches) {
    Status s = device::drop_page_cache(options_.root);
    if (!s.is_ok()) return s.with_context("drop_caches");
    started.page_cache_dropped = true;
  }
  return Status::ok();
}

proto::RunFinished RunExecutor::execute(int64_t run_id, const RunConfig& config, ResultSink& sink,
                                        const std::atomic<bool>& cancel) {
  if (sim_) return sim_->execute(run_id, config, sink, cancel);
  const auto start = std::chrono::steady_clock::now();
  proto::RunFinished fin;
  fin.run_id = run_id;
  auto finish = [&](const Status& s) {
    fin.status = s.is_ok() ? "done" : s.code() == Code::kCancelled ? "cancelled" : "failed";
    fin.error = s.is_ok() ? "" : s.to_string();
    fin.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!s.is_ok()) JS_LOG_WARN << "run " << run_id << " failed: " << s.to_string();
    sink.emit(fin);
    return fin;
  };
  proto::RunStarted started;
  started.run_id = run_id;
  started.reference_state = !config.has_power_mode();
  // Where it trains, decided before the board is touched: a run that needs CUDA fails here, naming why.
  RunConfig effective = config;
  if (effective.accelerator.empty()) effective.accelerator = default_accelerator();
  auto device = compute_device_for(effective.accelerator);
  if (!device) return finish(device.status());
  started.compute_device = device.value();
  std::string data_path;
  auto data = dataset_for(run_id, config, data_path, started.storage_medium);
  if (!data) return finish(data.status());
  std::unique_ptr<PowerSource> power;
  if (jetson_) {
    Status s = prepare_jetson(run_id, config, started);
    if (!s.is_ok()) return finish(s);
    if (jetson_->power_readable) {
      auto src = BoardPowerSource::open(options_.root);
      if (src) power = std::move(src).value();
      else JS_LOG_WARN << "run " << run_id << ": " << src.status().message() << "; energy will be null";
    }
  } else {
    if (config.has_power_mode() || config.fan_max)
      return finish(invalid_argument("the run asks for a power mode or the fan but this agent's backend is '" +
                                     options_.backend + "' (they need --backend jetson or --sim)"));
    if (config.drop_caches) {
      Status s = drop_host_page_cache(options_.root);
      if (!s.is_ok()) return finish(s);
      started.page_cache_dropped = true;
    }
    // Nothing is applied on a host: its state as it is, read back, is what the run executes in.
    started.applied = device::read_board_state(options_.root, nullptr);
    power = RaplPowerSource::open(options_.root);
  }
  HostProbe probe(options_.root, std::move(power));
  Sampler sampler(probe, config.sample_hz);
  sampler.start();
  const double t0_unix_s = proto::unix_now_s();
  storage::IoMeter io(data_path, options_.root);
  if (!io.device())
    JS_LOG_WARN << "run " << run_id << ": read IO of the dataset's device not measured: " << io.unavailable_reason();
  started.storage_device = io.device() ? io.device()->disk : "";
  started.t0_unix_s = t0_unix_s;
  sink.emit(started);
  ClockContext clocks{options_.root, jetson_ ? &jetson_->board : nullptr, started.applied.value_or(proto::BoardState{})};
  EmittingObserver observer(run_id, sink, sampler, probe.power_reading(), *data.value(), io, t0_unix_s, std::move(clocks));
  Status s = train(effective, *data.value(), observer, cancel);
  sampler.stop();
  observer.flush_samples();
  return finish(s);
}

void JsonLinesSink::emit(proto::Body body) {
  auto v = boost::json::parse(proto::encode(proto::Envelope{0, std::move(body)}));
  auto& o = v.as_object();
  o.erase("version");
  o.erase("id");
  if (o["type"] == "epoch_result") o["type"] = "epoch";
  out_ << boost::json::serialize(o) << '\n';
  out_.flush();
}

}  // namespace jetsweep::agent

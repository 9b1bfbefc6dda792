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
#include "agent/device/fs_util.hpp"
#include "agent/device/power_control.hpp"
#include "agent/device/restore_state.hpp"
#include "agent/device/run_mode.hpp"
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

// Buffers per-minibatch timings into chunks and turns epoch ends into EpochResult + samples, with the
// dataset's page-cache residency at epoch start and end and the read IO of its block device.
class EmittingObserver final : public TrainingObserver {
 public:
  // t0_unix_s: the wall clock when the sampler started (t_s = 0).
  EmittingObserver(int64_t run_id, ResultSink& sink, Sampler& sampler, const Dataset& data, storage::IoMeter& io,
                   double t0_unix_s)
      : run_id_(run_id), sink_(sink), sampler_(sampler), data_(data), io_(io), t0_unix_s_(t0_unix_s) {}

  void on_epoch_start(int64_t epoch) override {
    cache_start_ = cache_fraction(run_id_, data_, cache_warned_);
    io_.start();
    epoch_t0_ = sampler_.sample_now();
    chunk_ = proto::MinibatchChunk{run_id_, epoch, 0, {}, {}};
  }
  void on_minibatch(int64_t epoch, int64_t index, double stall_s, double compute_s) override {
    if (chunk_.stall_s.empty()) chunk_.first_index = index;
    chunk_.stall_s.push_back(stall_s);
    chunk_.compute_s.push_back(compute_s);
    if (chunk_.stall_s.size() >= proto::kMaxMinibatchesPerChunk) flush_chunk(epoch);
  }
  void on_epoch_end(const EpochTiming& t) override {
    flush_chunk(t.epoch);
    const double t1 = sampler_.sample_now();
    const auto rates = io_.stop();
    auto samples = sampler_.all();
    proto::EpochResult r;
    r.run_id = run_id_;
    r.epoch = t.epoch;
    r.e2e_s = t.e2e_s;
    r.stall_s = t.stall_s;
    r.compute_s = t.compute_s;
    r.minibatches = t.minibatches;
    if (std::isfinite(t.mean_loss)) r.loss = t.mean_loss;
    else JS_LOG_WARN << "run " << run_id_ << " epoch " << t.epoch << ": the training loss is " << t.mean_loss
                     << " (the model diverged); reported as null";
    r.energy_j = integrate_energy_j(samples, epoch_t0_, t1);
    if (r.energy_j && t1 > epoch_t0_) r.mean_power_w = *r.energy_j / (t1 - epoch_t0_);
    if (rates) {
      r.read_mb_s = rates->read_mb_s;
      r.read_iops = rates->read_iops;
    }
    r.cache_start_frac = cache_start_;
    r.cache_end_frac = cache_fraction(run_id_, data_, cache_warned_);
    flush_samples();
    sink_.emit(r);
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
    chunk_ = proto::MinibatchChunk{run_id_, epoch, 0, {}, {}};
  }

  int64_t run_id_;
  ResultSink& sink_;
  Sampler& sampler_;
  const Dataset& data_;
  storage::IoMeter& io_;
  double t0_unix_s_;
  std::optional<double> cache_start_;
  bool cache_warned_ = false;
  double epoch_t0_ = 0;
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
    return ex;
  }
  if (options.backend != "jetson")
    return invalid_argument("--backend '" + options.backend + "': expected host, jetson or sim");

  // A previous agent may have died with the board in a run's power mode: put it back first.
  auto restored = device::restore_pending(options.state_dir);
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
  ex->jetson_->controller = std::make_unique<device::PowerController>(std::move(board).value(), options.state_dir);
  auto power = BoardPowerSource::open(options.root);
  ex->jetson_->power_readable = power.is_ok();
  if (!power.is_ok())
    JS_LOG_WARN << "jetson backend: " << power.status().message() << "; energy will be reported as null";
  return ex;
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
    facts.kernel += "; simulated " + sim_->model().tables().module + " instance " + options_.sim_instance +
                    " (time scale " + std::to_string(options_.time_scale) + ")";
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

Result<const Dataset*> RunExecutor::dataset_for(int64_t run_id, const RunConfig& config, std::string& path) {
  JS_ASSIGN_OR_RETURN(auto resolved, options_.storage.resolve(config.data, config.dataset, default_data_path(config.dataset)));
  path = resolved.path;
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

Status RunExecutor::prepare_jetson(int64_t run_id, const RunConfig& config) {
  std::lock_guard lock(board_mu_);
  if (config.has_power_mode()) {
    device::RunModeRequest req{config.power_mode_name, config.cores, config.cpu_khz, config.gpu_hz, config.emc_hz,
                               config.pin_clocks};
    auto target = device::plan_run_mode(jetson_->controller->board(), req);
    if (!target) return target.status().with_context("power mode " + req.to_string());
    Status s = jetson_->controller->apply(target.value());
    // A failed apply may have written some files: the state file then allows restore().
    jetson_->modified = jetson_->modified || device::exists_file(device::restore_state_path(options_.state_dir));
    if (!s.is_ok()) return s.with_context("power mode " + req.to_string());
    JS_LOG_INFO << "run " << run_id << ": power mode " << req.to_string() << " applied ("
                << jetson_->controller->last_writes().size() << " writes)";
  }
  if (config.drop_caches) {
    Status s = device::drop_page_cache(options_.root);
    if (!s.is_ok()) return s.with_context("drop_caches");
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
  std::string data_path;
  auto data = dataset_for(run_id, config, data_path);
  if (!data) return finish(data.status());
  std::unique_ptr<PowerSource> power;
  if (jetson_) {
    Status s = prepare_jetson(run_id, config);
    if (!s.is_ok()) return finish(s);
    if (jetson_->power_readable) {
      auto src = BoardPowerSource::open(options_.root);
      if (src) power = std::move(src).value();
      else JS_LOG_WARN << "run " << run_id << ": " << src.status().message() << "; energy will be null";
    }
  } else {
    if (config.has_power_mode())
      return finish(invalid_argument("the run asks for a power mode but this agent's backend is '" + options_.backend +
                                     "' (power modes need --backend jetson or --sim)"));
    if (config.drop_caches) {
      Status s = drop_host_page_cache(options_.root);
      if (!s.is_ok()) return finish(s);
    }
    power = RaplPowerSource::open(options_.root);
  }
  HostProbe probe(options_.root, std::move(power));
  Sampler sampler(probe, config.sample_hz);
  sampler.start();
  const double t0_unix_s = proto::unix_now_s();
  storage::IoMeter io(data_path, options_.root);
  if (!io.device())
    JS_LOG_WARN << "run " << run_id << ": read IO of the dataset's device not measured: " << io.unavailable_reason();
  EmittingObserver observer(run_id, sink, sampler, *data.value(), io, t0_unix_s);
  Status s = train(config, *data.value(), observer, cancel);
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

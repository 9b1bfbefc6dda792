#include "agent/sim/sim_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "agent/models/registry.hpp"
#include "agent/telemetry.hpp"
#include "agent/trainer.hpp"
#include "common/perf/calibration.hpp"
#include "common/log.hpp"

namespace jetsweep::agent::sim {
using namespace jetsweep::perf;  // the board model and its calibration (common/perf)

namespace {

constexpr int64_t kPaceEveryMinibatches = 64;
constexpr auto kMaxSleepSlice = std::chrono::milliseconds(50);

// Waits until time_scale x modelled seconds have passed since start (cancellable).
class Pacer {
 public:
  Pacer(double scale, const std::atomic<bool>& cancel)
      : scale_(scale), cancel_(cancel), start_(std::chrono::steady_clock::now()) {}
  void wait_until(double modelled_s) const {
    if (scale_ <= 0) return;
    const auto target = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(modelled_s * scale_));
    // A pacing delay, not synchronisation: the simulated board takes this long.
    while (!cancel_) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= target) return;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(target - now, kMaxSleepSlice));
    }
  }

 private:
  double scale_;
  const std::atomic<bool>& cancel_;
  std::chrono::steady_clock::time_point start_;
};

// The telemetry samples of one modelled run: one every `period` modelled seconds, sent in chunks; only the
// last one is kept across epochs, so memory stays bounded however long the run.
class SampleStream {
 public:
  SampleStream(int64_t run_id, ResultSink& sink, double period, const Settings& mode, int64_t mem_used_kb)
      : run_id_(run_id), sink_(sink), period_(period), mode_(mode), mem_used_kb_(mem_used_kb), next_sample_(period) {}

  void add(double at, const EpochModel& em, SplitMix& rng, int64_t disk_bytes) {
    proto::Sample s;
    s.t_s = at;
    s.cpu_util_pct = std::clamp(em.cpu_util_pct * (1.0 + kSamplePowerJitter * rng.symmetric()), 0.0, 100.0);
    s.cpu_freq_mhz = static_cast<double>(mode_.cpu_khz) / 1000.0;
    s.mem_used_kb = mem_used_kb_;
    s.disk_read_bytes = disk_bytes;
    s.power_w = em.power_w * (1.0 + kSamplePowerJitter * rng.symmetric());
    samples_.push_back(s);
  }
  // Samples at every period tick up to `until`, reading `read_rate` bytes per modelled second.
  void sample_until(double until, const EpochModel& em, SplitMix& rng, double read_rate) {
    while (next_sample_ <= until) {
      add(next_sample_, em, rng, static_cast<int64_t>(read_rate * (next_sample_ - last_t())));
      next_sample_ += period_;
    }
  }
  // A sample at the epoch's end edge t1 when the last tick fell before it.
  void close_epoch(double t1, const EpochModel& em, SplitMix& rng, double read_rate) {
    if (last_t() >= t1) return;
    add(t1, em, rng, static_cast<int64_t>(read_rate * (t1 - last_t())));
    next_sample_ = t1 + period_;
  }
  void flush() {
    for (size_t i = sent_; i < samples_.size(); i += proto::kMaxSamplesPerChunk) {
      proto::SampleChunk c;
      c.run_id = run_id_;
      c.samples.assign(samples_.begin() + static_cast<long>(i),
                       samples_.begin() + static_cast<long>(std::min(samples_.size(), i + proto::kMaxSamplesPerChunk)));
      sink_.emit(std::move(c));
    }
    sent_ = samples_.size();
  }
  // Only the last sample (at the epoch's end) is needed from here on.
  void keep_last() {
    samples_.erase(samples_.begin(), samples_.end() - 1);
    sent_ = samples_.size();
  }
  const std::vector<proto::Sample>& samples() const { return samples_; }
  double last_t() const { return samples_.back().t_s; }

 private:
  int64_t run_id_;
  ResultSink& sink_;
  double period_;
  Settings mode_;
  int64_t mem_used_kb_;
  std::vector<proto::Sample> samples_;
  size_t sent_ = 0;
  double next_sample_;  // the next tick (the first sample, at 0, is added by the caller)
};

// One modelled run after its state is applied: its epochs, as the protocol messages a real run sends.
class ModelledRun {
 public:
  ModelledRun(int64_t run_id, const std::string& who, ResultSink& sink, const std::atomic<bool>& cancel,
              const Pacer& pacer, SampleStream& stream, proto::ClockReading clocks)
      : run_id_(run_id), who_(who), sink_(sink), cancel_(cancel), pacer_(pacer), stream_(stream),
        clocks_(clocks) {}

  double t() const { return t_; }

  // Emits epoch `epoch`'s minibatch chunks, samples and summary; kCancelled when cancelled in it.
  Status epoch(int64_t epoch, const EpochModel& em, SplitMix& rng, int64_t dataset_bytes) {
    const double t0 = t_;
    // Bytes read from storage in this epoch (only a cold epoch 0 reads the dataset).
    const double read_rate = em.cold_stall_s > 0 ? static_cast<double>(dataset_bytes) / em.e2e_s() : 0.0;
    t_ += em.overhead_s;  // loader start-up and framework work of the epoch
    stream_.sample_until(t_, em, rng, read_rate);
    double stall_sum = 0, compute_sum = 0;
    JS_RETURN_IF_ERROR(minibatches(epoch, em, rng, read_rate, stall_sum, compute_sum));
    const double t1 = t_;
    stream_.close_epoch(t1, em, rng, read_rate);

    proto::EpochResult r;
    r.run_id = run_id_;
    r.epoch = epoch;
    r.e2e_s = t1 - t0;
    r.stall_s = stall_sum;
    r.compute_s = compute_sum;
    r.minibatches = em.minibatches;
    // A modelled sample's power is the mean over the interval since the previous sample.
    const EnergyWindow energy = integrate_energy(stream_.samples(), t0, t1, PowerReading::kIntervalAverage);
    r.energy_j = energy.energy_j;
    r.mean_power_w = energy.mean_power_w;
    r.power_coverage = energy.coverage;
    r.t_start_s = t0;
    r.t_end_s = t1;
    r.clocks_start = clocks_;
    r.clocks_end = clocks_;
    r.loss = 0.0;  // nothing is trained on a simulated board (docs/SIMULATION.md)
    stream_.flush();
    sink_.emit(r);
    stream_.keep_last();
    JS_LOG_INFO << who_ << " epoch " << epoch << ": e2e " << r.e2e_s << " s, stall " << r.stall_s << " s, compute "
                << r.compute_s << " s, " << r.minibatches << " minibatches, "
                << (r.mean_power_w ? std::to_string(*r.mean_power_w) : std::string("?")) << " W (modelled)";
    pacer_.wait_until(t1);
    return Status::ok();
  }

 private:
  Status minibatches(int64_t epoch, const EpochModel& em, SplitMix& rng, double read_rate, double& stall_sum,
                     double& compute_sum) {
    proto::MinibatchChunk chunk{run_id_, epoch, 0, {}, {}, {}};
    const double cold_per_mb = em.cold_stall_s / static_cast<double>(em.minibatches);
    for (int64_t i = 0; i < em.minibatches; ++i) {
      const double stall = std::max(0.0, em.stall_mb_s * (1.0 + kMinibatchJitter * rng.symmetric())) + cold_per_mb;
      const double compute = em.compute_mb_s * (1.0 + kMinibatchJitter * rng.symmetric()) +
                             (i == 0 ? em.first_compute_extra_s : 0.0);
      if (chunk.stall_s.empty()) chunk.first_index = i;
      chunk.stall_s.push_back(stall);
      chunk.compute_s.push_back(compute);
      stall_sum += stall;
      compute_sum += compute;
      t_ += stall + compute;
      stream_.sample_until(t_, em, rng, read_rate);
      if (chunk.stall_s.size() >= proto::kMaxMinibatchesPerChunk) {
        sink_.emit(chunk);
        chunk = proto::MinibatchChunk{run_id_, epoch, 0, {}, {}, {}};
      }
      if ((i + 1) % kPaceEveryMinibatches == 0) {
        pacer_.wait_until(t_);
        if (cancel_) {
          if (!chunk.stall_s.empty()) sink_.emit(chunk);
          stream_.flush();
          return Status(Code::kCancelled, "cancelled in epoch " + std::to_string(epoch));
        }
      }
    }
    if (!chunk.stall_s.empty()) sink_.emit(chunk);
    return Status::ok();
  }

  int64_t run_id_;
  const std::string& who_;
  ResultSink& sink_;
  const std::atomic<bool>& cancel_;
  const Pacer& pacer_;
  SampleStream& stream_;
  proto::ClockReading clocks_;
  double t_ = 0;  // modelled seconds since the run started
};

}  // namespace

Result<std::unique_ptr<SimExecutor>> SimExecutor::open(std::string_view board_class, std::string_view instance,
                                                       double time_scale) {
  if (!(time_scale >= 0.0) || time_scale > 1000.0)
    return invalid_argument("--time-scale " + std::to_string(time_scale) + ": must be between 0 and 1000");
  JS_ASSIGN_OR_RETURN(SimModel model, SimModel::create(board_class, instance));
  JS_ASSIGN_OR_RETURN(SimBoard board, SimBoard::open(board_class));
  return std::unique_ptr<SimExecutor>(new SimExecutor(std::move(model), std::move(board), time_scale,
                                                      std::string(board_class), std::string(instance)));
}

Status SimExecutor::set_media(const std::vector<std::string>& media) {
  for (const auto& m : media) {
    auto mb_s = simulated_medium_mb_s(m);
    if (!mb_s) return mb_s.status().with_context("--storage " + m);
    media_mb_s_[m] = *mb_s;
  }
  return Status::ok();
}

Settings SimExecutor::current_mode() const {
  std::lock_guard lock(mu_);
  return board_.current();
}

bool SimExecutor::modified() const {
  std::lock_guard lock(mu_);
  return board_.modified();
}

void SimExecutor::restore() {
  std::lock_guard lock(mu_);
  board_.restore();
}

void SimExecutor::describe(proto::DeviceFacts& facts) const {
  facts.device_class = board_class_;
  facts.mem_bytes = model_.tables().mem_total_bytes();  // the simulated board's RAM, not the host's
  facts.board_id = "sim:" + facts.hostname + ":" + board_class_ + "/" + instance_;
  const auto& t = model_.tables();   // a simulated board's tables are its class's in the papers
  facts.tables = BoardTables{std::string(kTablesPapersBsp), t.cores, t.cpu_khz, t.gpu_hz, t.emc_hz};
  std::lock_guard lock(mu_);
  facts.live_modes = board_.live_modes();   // the controller hands it runs of these first (fewest reboots)
  // The kernel stays the host's: instance names and time scales are not software, and putting them there
  // made every class with two simulated boards look like boards with different software.
}

Status SimExecutor::prepare(int64_t, const RunConfig&, proto::RunStarted&) {
  return Status(Code::kInternal, "simulated boards model runs whole (execute_modelled); nothing is prepared");
}

std::unique_ptr<PowerSource> SimExecutor::power_source(int64_t) { return nullptr; }

Result<std::optional<proto::RebootPending>> SimExecutor::reboot_for(const RunConfig& config) {
  std::lock_guard lock(mu_);
  return board_.reboot_needed(config);
}

Result<bool> SimExecutor::reboot_into(const RebootOptions&, const proto::RebootPending& reboot,
                                      const std::atomic<bool>& cancel) {
  JS_LOG_INFO << "sim " << board_class_ << "/" << instance_ << ": rebooting into nvpmodel mode " << reboot.mode_name
              << " (" << kSimRebootS << " modelled s, time scale " << time_scale_ << ")";
  Pacer(time_scale_, cancel).wait_until(kSimRebootS);
  if (cancel) return Status(Code::kCancelled, "cancelled while the simulated board rebooted");
  std::lock_guard lock(mu_);
  JS_RETURN_IF_ERROR(board_.reboot_into(reboot.nvpmodel_id));
  return true;
}

Status SimExecutor::start_run(const RunConfig& config, proto::RunStarted& started, double& medium_mb_s,
                              Settings& mode, bool& cold) {
  // The medium the data is read from: "@NAME[/REL]" names one this agent offers; else the class's default.
  if (config.accelerator == "cpu")
    return invalid_argument("accelerator: cpu: simulated boards model GPU training only");
  started.compute_device = "simulated";
  if (!config.data.empty() && config.data[0] == '@') {
    started.storage_medium = config.data.substr(1, config.data.find('/') == std::string::npos ? std::string::npos
                                                                                             : config.data.find('/') - 1);
    auto it = media_mb_s_.find(started.storage_medium);
    if (it == media_mb_s_.end())
      return invalid_argument("data '" + config.data + "': this simulated agent offers no storage medium '" +
                              started.storage_medium + "' (start it with --storage " + started.storage_medium +
                              "=DIR)");
    medium_mb_s = it->second;
  }
  started.storage_device = "simulated " + (started.storage_medium.empty() ? model_.calibration().storage : started.storage_medium);
  started.page_cache_dropped = config.drop_caches;
  std::lock_guard lock(mu_);
  Status applied = board_.apply(config);
  if (!applied.is_ok()) return applied.with_context("power mode");
  if (config.drop_caches) board_.drop_caches();
  cold = !board_.cached(config.dataset);
  mode = board_.current();
  started.applied = board_.state();
  return Status::ok();
}

namespace {

// A model's input on a dataset simulated boards model (the shapes the agent's readers produce).
Result<models::InputSpec> simulated_input(const std::string& dataset) {
  if (auto shape = standard_shape(dataset)) return input_spec_for(*shape);
  return invalid_argument("simulated boards model TorchScript models on mnist, fashion-mnist, cifar10 and gld23k, not '" +
                          dataset + "'");
}

// A TorchScript model on a simulated board is modelled as the built-in model calibrated on the same dataset (the
// papers' measurements), its compute time scaled by the ratio of their forward multiply-accumulates, both measured
// here with LibTorch on the dataset's sample shape (the file is loaded and checked as for training).
struct ScaledWorkload {
  RunConfig config;          // the run as the calibrated model
  double compute_scale = 1;  // the TorchScript model's MACs / the calibrated model's
  std::string note;          // what the run's compute device says
  models::ModelFigures figures;   // the TorchScript model's own
};

Result<ScaledWorkload> scale_torchscript(const RunConfig& config, const Backend::ModelFileLookup& model_file) {
  if (!model_file) return internal_error("no model file lookup for " + config.model);
  JS_ASSIGN_OR_RETURN(std::string file, model_file());
  JS_ASSIGN_OR_RETURN(models::InputSpec spec, simulated_input(config.dataset));
  std::string reference;
  for (const auto& w : all_workloads())
    for (const auto& d : w.datasets)
      if (d == config.dataset && reference.empty()) reference = w.model;
  if (reference.empty()) return invalid_argument("no calibrated model on '" + config.dataset + "' to model " + config.model + " by");
  JS_ASSIGN_OR_RETURN(models::ModelFigures own, models::measure_torchscript(config.model, file, spec));
  JS_ASSIGN_OR_RETURN(models::ModelFigures ref, models::measure_model(reference, spec));
  if (own.forward_macs <= 0 || ref.forward_macs <= 0)
    return invalid_argument(config.model + ": no convolution or matrix product was measured in its forward pass; "
                            "simulated boards model compute by multiply-accumulates");
  ScaledWorkload s;
  s.config = config;
  s.config.model = reference;
  s.compute_scale = static_cast<double>(own.forward_macs) / static_cast<double>(ref.forward_macs);
  s.figures = own;
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.3g", s.compute_scale);
  s.note = "simulated: TorchScript model of " + std::to_string(own.parameters) + " parameters and " +
           std::to_string(own.forward_macs) + " forward MACs per sample, modelled as " + reference + " x " + scale;
  return s;
}

}  // namespace

proto::RunFinished SimExecutor::execute(int64_t run_id, const RunConfig& config_in, ResultSink& sink,
                                        const std::atomic<bool>& cancel, const ModelFileLookup& model_file) {
  const std::string who = "run " + std::to_string(run_id) + " (sim " + model_.calibration().board_class + "/" +
                          model_.instance() + ")";
  proto::RunFinished fin;
  fin.run_id = run_id;
  double wall_s = 0;  // modelled seconds of the run
  auto finish = [&](const Status& s) {
    fin.status = s.is_ok() ? "done" : s.code() == Code::kCancelled ? "cancelled" : "failed";
    fin.error = s.is_ok() ? "" : s.to_string();
    fin.wall_s = wall_s;
    if (!s.is_ok()) JS_LOG_WARN << who << " failed: " << s.to_string();
    sink.emit(fin);
    return fin;
  };

  proto::RunStarted started;
  started.run_id = run_id;
  started.reference_state = !config_in.has_power_mode() && config_in.base_mode.empty();   // a base mode is a chosen state
  double medium_mb_s = 0;
  Settings mode;
  bool cold = false;
  ScaledWorkload scaled{config_in, 1, "", {}};
  if (is_torchscript_model(config_in.model)) {
    const std::string key = config_in.model + "|" + config_in.dataset;
    if (!torchscript_scales_.count(key)) {
      auto s = scale_torchscript(config_in, model_file);
      if (!s) return finish(s.status());
      torchscript_scales_[key] = Scale{s->config.model, s->compute_scale, s->note, s->figures};
    }
    const Scale& known = torchscript_scales_.at(key);
    scaled.config.model = known.reference;
    scaled.compute_scale = known.compute_scale;
    scaled.note = known.note;
    // No data is read on a simulated board: no fingerprint. A built-in model's size is not measured here (a
    // simulated fleet at time scale 0 would spend its start building every model); a TorchScript model's is.
    proto::WorkloadFacts facts;
    facts.model_sha256 = torchscript_sha256(config_in.model);
    facts.parameters = known.figures.parameters;
    facts.forward_macs = known.figures.forward_macs;
    started.workload = facts;
  } else {
    started.workload = proto::WorkloadFacts{};
  }
  const RunConfig& config = scaled.config;
  Status begun = start_run(config, started, medium_mb_s, mode, cold);
  if (!begun.is_ok()) return finish(begun);
  if (!scaled.note.empty()) started.compute_device = scaled.note;
  auto workload = workload_calibration(config.model, config.dataset);
  if (!workload) return finish(workload.status());
  auto first = model_.epoch(config, mode, 0, cold, medium_mb_s, scaled.compute_scale);
  if (!first) return finish(first.status());
  // t0_unix_s stays 0: modelled runs must be deterministic; the agent's sink stamps the run's wall clock
  // (PostingSink), as it does on the sample chunks.
  sink.emit(started);
  JS_LOG_INFO << who << ": " << (started.reference_state ? "reference state " : "power mode ")
              << started.applied->to_string() << (cold ? ", cold page cache" : "") << ", data on "
              << started.storage_device << ", " << first->minibatches << " minibatches per epoch, time scale " << time_scale_;
  proto::ClockReading clocks;
  clocks.cores_online = mode.cores;
  clocks.cpu_khz = static_cast<double>(mode.cpu_khz);
  clocks.gpu_hz = static_cast<double>(mode.gpu_hz);
  clocks.emc_hz = static_cast<double>(mode.emc_hz);

  const Pacer pacer(time_scale_, cancel);
  const ClassCalibration& cls = model_.calibration();
  SampleStream stream(run_id, sink, 1.0 / config.sample_hz, mode,
                      cls.os_mem_kb + workload->model_mem_kb + workload->dataset_bytes / 1024);
  {
    SplitMix rng(model_.epoch_seed(config, -1));
    stream.add(0.0, first.value(), rng, 0);
  }
  ModelledRun run(run_id, who, sink, cancel, pacer, stream, clocks);
  for (int64_t epoch = 0; epoch < config.epochs; ++epoch) {
    wall_s = run.t();
    if (cancel) {
      stream.flush();
      return finish(Status(Code::kCancelled, "cancelled before epoch " + std::to_string(epoch)));
    }
    auto em = epoch == 0 ? first : model_.epoch(config, mode, epoch, false, 0, scaled.compute_scale);
    if (!em) return finish(em.status());
    SplitMix rng(model_.epoch_seed(config, epoch));
    Status s = run.epoch(epoch, em.value(), rng, workload->dataset_bytes);
    wall_s = run.t();
    if (!s.is_ok()) return finish(s);
  }
  {
    std::lock_guard lock(mu_);
    board_.mark_cached(config.dataset);
  }
  stream.flush();
  return finish(Status::ok());
}

}  // namespace jetsweep::agent::sim

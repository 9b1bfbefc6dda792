#include "agent/sim/sim_executor.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "agent/telemetry.hpp"
#include "common/log.hpp"

namespace jetsweep::agent::sim {
using namespace jetsweep::sim;  // the board model and its calibration (common/perf)

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

}  // namespace

Result<std::unique_ptr<SimExecutor>> SimExecutor::open(std::string_view board_class, std::string_view instance,
                                                       double time_scale) {
  if (!(time_scale >= 0.0) || time_scale > 1000.0)
    return invalid_argument("--time-scale " + std::to_string(time_scale) + ": must be between 0 and 1000");
  JS_ASSIGN_OR_RETURN(SimModel model, SimModel::create(board_class, instance));
  JS_ASSIGN_OR_RETURN(SimBoard board, SimBoard::open(board_class));
  return std::unique_ptr<SimExecutor>(new SimExecutor(std::move(model), std::move(board), time_scale));
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

proto::RunFinished SimExecutor::execute(int64_t run_id, const RunConfig& config, ResultSink& sink,
                                        const std::atomic<bool>& cancel) {
  const std::string who = "run " + std::to_string(run_id) + " (sim " + model_.calibration().board_class + "/" +
                          model_.instance() + ")";
  proto::RunFinished fin;
  fin.run_id = run_id;
  double t = 0;  // modelled seconds since the run started
  auto finish = [&](const Status& s) {
    fin.status = s.is_ok() ? "done" : s.code() == Code::kCancelled ? "cancelled" : "failed";
    fin.error = s.is_ok() ? "" : s.to_string();
    fin.wall_s = t;
    if (!s.is_ok()) JS_LOG_WARN << who << " failed: " << s.to_string();
    sink.emit(fin);
    return fin;
  };

  // The medium the data is read from: "@NAME[/REL]" names one this agent offers; else the class's default.
  proto::RunStarted started;
  started.run_id = run_id;
  started.reference_state = !config.has_power_mode();
  if (config.accelerator == "cpu")
    return finish(invalid_argument("accelerator: cpu: simulated boards model GPU training only"));
  started.compute_device = "simulated";
  double medium_mb_s = 0;
  if (!config.data.empty() && config.data[0] == '@') {
    started.storage_medium = config.data.substr(1, config.data.find('/') == std::string::npos ? std::string::npos
                                                                                             : config.data.find('/') - 1);
    auto it = media_mb_s_.find(started.storage_medium);
    if (it == media_mb_s_.end())
      return finish(invalid_argument("data '" + config.data + "': this simulated agent offers no storage medium '" +
                                     started.storage_medium + "' (start it with --storage " + started.storage_medium +
                                     "=DIR)"));
    medium_mb_s = it->second;
  }
  started.storage_device = "simulated " + (started.storage_medium.empty() ? model_.calibration().storage : started.storage_medium);
  started.page_cache_dropped = config.drop_caches;

  Settings mode;
  bool cold = false;
  {
    std::lock_guard lock(mu_);
    Status applied = board_.apply(config);
    if (!applied.is_ok()) return finish(applied.with_context("power mode"));
    if (config.drop_caches) board_.drop_caches();
    cold = !board_.cached(config.dataset);
    mode = board_.current();
    started.applied = board_.state();
  }
  auto workload = workload_calibration(config.model, config.dataset);
  if (!workload) return finish(workload.status());
  auto first = model_.epoch(config, mode, 0, cold, medium_mb_s);
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
  const double period = 1.0 / config.sample_hz;
  const ClassCalibration& cls = model_.calibration();
  const int64_t mem_used_kb = cls.os_mem_kb + workload->model_mem_kb + workload->dataset_bytes / 1024;
  std::vector<proto::Sample> samples;
  size_t sent_samples = 0;
  auto make_sample = [&](double at, const EpochModel& em, SplitMix& rng, int64_t disk_bytes) {
    proto::Sample s;
    s.t_s = at;
    s.cpu_util_pct = std::clamp(em.cpu_util_pct * (1.0 + kSamplePowerJitter * rng.symmetric()), 0.0, 100.0);
    s.cpu_freq_mhz = static_cast<double>(mode.cpu_khz) / 1000.0;
    s.mem_used_kb = mem_used_kb;
    s.disk_read_bytes = disk_bytes;
    s.power_w = em.power_w * (1.0 + kSamplePowerJitter * rng.symmetric());
    samples.push_back(s);
  };
  auto flush_samples = [&] {
    for (size_t i = sent_samples; i < samples.size(); i += proto::kMaxSamplesPerChunk) {
      proto::SampleChunk c;
      c.run_id = run_id;
      c.samples.assign(samples.begin() + static_cast<long>(i),
                       samples.begin() + static_cast<long>(std::min(samples.size(), i + proto::kMaxSamplesPerChunk)));
      sink.emit(std::move(c));
    }
    sent_samples = samples.size();
  };
  {
    SplitMix rng(model_.epoch_seed(config, -1));
    make_sample(0.0, first.value(), rng, 0);
  }
  double next_sample = period;

  for (int64_t epoch = 0; epoch < config.epochs; ++epoch) {
    if (cancel) {
      flush_samples();
      return finish(Status(Code::kCancelled, "cancelled before epoch " + std::to_string(epoch)));
    }
    auto em_r = epoch == 0 ? first : model_.epoch(config, mode, epoch, false);
    if (!em_r) return finish(em_r.status());
    const EpochModel& em = em_r.value();
    SplitMix rng(model_.epoch_seed(config, epoch));
    const double t0 = t;
    const double e2e_estimate = em.e2e_s();
    // Bytes read from storage in this epoch (only a cold epoch 0 reads the dataset).
    const double read_rate = em.cold_stall_s > 0 ? static_cast<double>(workload->dataset_bytes) / e2e_estimate : 0.0;
    double last_sample_t = samples.back().t_s;
    auto sample_until = [&](double until) {
      while (next_sample <= until) {
        make_sample(next_sample, em, rng, static_cast<int64_t>(read_rate * (next_sample - last_sample_t)));
        last_sample_t = next_sample;
        next_sample += period;
      }
    };

    t += em.overhead_s;  // loader start-up and framework work of the epoch
    sample_until(t);
    proto::MinibatchChunk chunk{run_id, epoch, 0, {}, {}, {}};
    double stall_sum = 0, compute_sum = 0;
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
      t += stall + compute;
      sample_until(t);
      if (chunk.stall_s.size() >= proto::kMaxMinibatchesPerChunk) {
        sink.emit(chunk);
        chunk = proto::MinibatchChunk{run_id, epoch, 0, {}, {}, {}};
      }
      if ((i + 1) % kPaceEveryMinibatches == 0) {
        pacer.wait_until(t);
        if (cancel) {
          if (!chunk.stall_s.empty()) sink.emit(chunk);
          flush_samples();
          return finish(Status(Code::kCancelled, "cancelled in epoch " + std::to_string(epoch)));
        }
      }
    }
    if (!chunk.stall_s.empty()) sink.emit(chunk);
    const double t1 = t;
    if (last_sample_t < t1) {
      make_sample(t1, em, rng, static_cast<int64_t>(read_rate * (t1 - last_sample_t)));
      next_sample = t1 + period;
    }

    proto::EpochResult r;
    r.run_id = run_id;
    r.epoch = epoch;
    r.e2e_s = t1 - t0;
    r.stall_s = stall_sum;
    r.compute_s = compute_sum;
    r.minibatches = em.minibatches;
    // A modelled sample's power is the mean over the interval since the previous sample.
    const EnergyWindow energy = integrate_energy(samples, t0, t1, PowerReading::kIntervalAverage);
    r.energy_j = energy.energy_j;
    r.mean_power_w = energy.mean_power_w;
    r.power_coverage = energy.coverage;
    r.t_start_s = t0;
    r.t_end_s = t1;
    r.clocks_start = clocks;
    r.clocks_end = clocks;
    r.loss = 0.0;  // nothing is trained on a simulated board (docs/SIMULATION.md)
    flush_samples();
    sink.emit(r);
    // Only the last sample (at t1) is needed from here on: memory stays bounded however long the run.
    samples.erase(samples.begin(), samples.end() - 1);
    sent_samples = samples.size();
    JS_LOG_INFO << who << " epoch " << epoch << ": e2e " << r.e2e_s << " s, stall " << r.stall_s << " s, compute "
                << r.compute_s << " s, " << r.minibatches << " minibatches, "
                << (r.mean_power_w ? std::to_string(*r.mean_power_w) : std::string("?")) << " W (modelled)";
    pacer.wait_until(t1);
  }
  {
    std::lock_guard lock(mu_);
    board_.mark_cached(config.dataset);
  }
  flush_samples();
  return finish(Status::ok());
}

}  // namespace jetsweep::agent::sim

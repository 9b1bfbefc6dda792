#include "agent/run_executor.hpp"

#include <cmath>

#include <boost/json.hpp>
#include <chrono>
#include <optional>
#include <ostream>

#include "agent/device/board_state.hpp"
#include "agent/host_backend.hpp"
#include "agent/host_facts.hpp"
#include "agent/model_cache.hpp"
#include "agent/storage/disk_stats.hpp"
#include "agent/storage/page_cache.hpp"
#include "agent/telemetry.hpp"
#include "agent/trainer.hpp"
#include "common/json_parse.hpp"
#include "common/log.hpp"

namespace jetsweep::agent {

namespace {

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
    board_throttle_start_ = clocks_.board ? device::board_throttle_reason(clocks_.root, clocks_.applied) : "";
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
    // Over-current alarms and the measured GPU clock, at the epoch's start and end (Jetson boards).
    if (r.throttle_reason.empty()) r.throttle_reason = board_throttle_start_;
    if (r.throttle_reason.empty() && clocks_.board)
      r.throttle_reason = device::board_throttle_reason(clocks_.root, clocks_.applied);
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
  std::string board_throttle_start_;
  std::optional<double> cache_start_;
  bool cache_warned_ = false;
  proto::MinibatchChunk chunk_;
};

}  // namespace

namespace {
ExecutorOptions host_options(std::string root) {
  ExecutorOptions o;
  o.root = std::move(root);
  return o;
}
}  // namespace

namespace {
std::string fingerprint_cache_file(const ExecutorOptions& options) {
  return options.model_dir.empty() ? std::string() : options.model_dir + "/dataset-hashes.tsv";
}
}  // namespace

RunExecutor::RunExecutor(std::string root)
    : options_(host_options(std::move(root))),
      backend_(std::make_unique<HostBackend>(options_.root)),
      fingerprinter_(fingerprint_cache_file(options_)) {}

RunExecutor::RunExecutor(ExecutorOptions options, std::unique_ptr<Backend> backend)
    : options_(std::move(options)), backend_(std::move(backend)), fingerprinter_(fingerprint_cache_file(options_)) {}

RunExecutor::~RunExecutor() = default;

Result<std::unique_ptr<RunExecutor>> RunExecutor::open(const ExecutorOptions& options) {
  JS_ASSIGN_OR_RETURN(auto backend, open_backend(options));
  return std::unique_ptr<RunExecutor>(new RunExecutor(options, std::move(backend)));
}

std::string RunExecutor::default_accelerator() const { return backend_->default_accelerator(); }

std::string RunExecutor::accelerator_fact() const { return backend_->accelerator_fact(); }

bool RunExecutor::has_power_sensor() const { return backend_->has_power_sensor(); }

void RunExecutor::describe(proto::DeviceFacts& facts) const {
  facts.backend = options_.backend;
  backend_->describe(facts);
}

bool RunExecutor::board_modified() const { return backend_->board_modified(); }

Result<std::optional<proto::RebootPending>> RunExecutor::reboot_for(const RunConfig& config) {
  return backend_->reboot_for(config);
}

Result<bool> RunExecutor::reboot_into(const RebootOptions& options, const proto::RebootPending& reboot,
                                      const std::atomic<bool>& cancel) {
  return backend_->reboot_into(options, reboot, cancel);
}

Status RunExecutor::restore_board() { return backend_->restore_board(); }

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

Result<std::string> RunExecutor::model_file_for(const RunConfig& config, const std::atomic<bool>& cancel) const {
  if (!is_torchscript_model(config.model)) return std::string();
  const std::string sha = torchscript_sha256(config.model);
  if (sha.empty()) return invalid_argument("model '" + config.model + "' is not torchscript:<SHA-256 of the file>");
  if (options_.model_dir.empty())
    return Status(Code::kNotFound, "model " + config.model + ": this agent has no model cache (--model-dir)");
  ModelCache cache(options_.model_dir);
  if (model_source_) return cache.find_or_fetch(sha, *model_source_, cancel);
  auto path = cache.find(sha);
  if (!path)
    return Status(path.status().code(), path.status().message() + " (copy the file to the board and add it with "
                                                                  "`jetsweep-agent models --add FILE --model-dir " +
                                            options_.model_dir + "`)");
  return path;
}

Result<proto::WorkloadFacts> RunExecutor::workload_facts(const RunConfig& config, const Dataset& data,
                                                         const std::string& model_file, const std::atomic<bool>& cancel) {
  proto::WorkloadFacts facts;
  facts.model_sha256 = torchscript_sha256(config.model);
  const models::InputSpec spec = input_spec_for(data.shape());
  const std::string key = config.model + "|" + spec.to_string();
  auto known = figures_.find(key);
  if (known == figures_.end()) {
    auto measured = model_file.empty() ? models::measure_model(config.model, spec)
                                       : models::measure_torchscript(config.model, model_file, spec);
    // A TorchScript model that does not load or run on these samples fails here, before the board is touched. A
    // built-in model that cannot be built for them fails in train() with the message users know.
    if (!measured && !model_file.empty()) return measured.status();
    if (measured) known = figures_.emplace(key, measured.value()).first;
  }
  if (known != figures_.end()) {
    facts.parameters = known->second.parameters;
    facts.forward_macs = known->second.forward_macs;
  }
  std::vector<std::string> files = data.files();
  for (auto& f : data.label_files()) files.push_back(std::move(f));
  auto fingerprint = fingerprinter_.fingerprint(files, &cancel);
  if (fingerprint) {
    facts.dataset_fingerprint = fingerprint->sha256;
    facts.dataset_files = fingerprint->files;
    facts.dataset_bytes = fingerprint->bytes;
  } else if (fingerprint.status().code() == Code::kCancelled) {
    return fingerprint.status();
  } else {   // recorded as none (report and analysis say the data is then not proven the same), never a guess
    JS_LOG_WARN << "dataset " << data.name() << ": no fingerprint recorded: " << fingerprint.status().message();
  }
  return facts;
}

proto::RunFinished RunExecutor::execute(int64_t run_id, const RunConfig& config, ResultSink& sink,
                                        const std::atomic<bool>& cancel) {
  try {
    auto model_file = [&] { return model_file_for(config, cancel); };
    if (auto modelled = backend_->execute_modelled(run_id, config, sink, cancel, model_file)) return *modelled;
    return train_run(run_id, config, sink, cancel);
  } catch (const std::exception& e) {
    // Nothing may leave the training thread (it would end the agent): the run fails, naming what was thrown.
    proto::RunFinished fin;
    fin.run_id = run_id;
    fin.status = "failed";
    fin.error = std::string("internal: unexpected error: ") + e.what();
    JS_LOG_ERROR << "run " << run_id << " failed: " << fin.error;
    sink.emit(fin);
    return fin;
  }
}

proto::RunFinished RunExecutor::train_run(int64_t run_id, const RunConfig& config, ResultSink& sink,
                                          const std::atomic<bool>& cancel) {
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
  started.reference_state = !config.has_power_mode() && config.base_mode.empty();   // a base mode is a chosen state
  // Where it trains, decided before the board is touched: a run that needs CUDA fails here, naming why.
  RunConfig effective = config;
  if (effective.accelerator.empty()) effective.accelerator = default_accelerator();
  auto device = compute_device_for(effective.accelerator);
  if (!device) return finish(device.status());
  started.compute_device = device.value();
  // A TorchScript model trains from the file its name hashes to, checked before the board is touched.
  auto model_file = model_file_for(config, cancel);
  if (!model_file) return finish(model_file.status());
  std::string data_path;
  auto data = dataset_for(run_id, config, data_path, started.storage_medium);
  if (!data) return finish(data.status());
  auto workload = workload_facts(config, *data.value(), model_file.value(), cancel);
  if (!workload) return finish(workload.status());
  started.workload = workload.value();
  Status prepared = backend_->prepare(run_id, config, started);
  if (!prepared.is_ok()) return finish(prepared);
  HostProbe probe(options_.root, backend_->power_source(run_id));
  Sampler sampler(probe, config.sample_hz);
  sampler.start();
  const double t0_unix_s = proto::unix_now_s();
  const double t0_boot_s = proto::boot_now_s();   // the same instant on the boot clock, which steps do not move
  storage::IoMeter io(data_path, options_.root);
  if (!io.device())
    JS_LOG_WARN << "run " << run_id << ": read IO of the dataset's device not measured: " << io.unavailable_reason();
  started.storage_device = io.device() ? io.device()->disk : "";
  started.t0_unix_s = t0_unix_s;
  started.boot_id = read_boot_id(options_.root);
  if (!started.boot_id.empty()) started.t0_boot_s = t0_boot_s;
  sink.emit(started);
  ClockContext clocks{options_.root, backend_->board(), started.applied.value_or(proto::BoardState{})};
  EmittingObserver observer(run_id, sink, sampler, probe.power_reading(), *data.value(), io, t0_unix_s, std::move(clocks));
  Status s = train(effective, *data.value(), observer, cancel, model_file.value());
  sampler.stop();
  observer.flush_samples();
  return finish(s);
}

void JsonLinesSink::emit(proto::Body body) {
  auto v = json::parse_exact(proto::encode(proto::Envelope{0, std::move(body)}));
  auto& o = v.as_object();
  o.erase("version");
  o.erase("id");
  if (o["type"] == "epoch_result") o["type"] = "epoch";
  out_ << boost::json::serialize(o) << '\n';
  out_.flush();
}

}  // namespace jetsweep::agent

#include "agent/run_executor.hpp"

#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <ostream>

#include "agent/telemetry.hpp"
#include "agent/trainer.hpp"
#include "common/log.hpp"

namespace jetsweep::agent {

namespace {

Status drop_page_cache(const std::string& root) {
  ::sync();
  const std::string path = (root == "/" ? std::string() : root) + "/proc/sys/vm/drop_caches";
  std::ofstream out(path);
  if (!out) return io_error("drop_caches requested but " + path + " is not writable (run the agent as root)");
  out << "3\n";
  out.flush();
  if (!out) return io_error("drop_caches: writing 3 to " + path + " failed");
  return Status::ok();
}

// Buffers per-minibatch timings into chunks and turns epoch ends into EpochResult + samples.
class EmittingObserver final : public TrainingObserver {
 public:
  EmittingObserver(int64_t run_id, ResultSink& sink, Sampler& sampler)
      : run_id_(run_id), sink_(sink), sampler_(sampler) {}

  void on_epoch_start(int64_t epoch) override {
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
    auto samples = sampler_.all();
    proto::EpochResult r;
    r.run_id = run_id_;
    r.epoch = t.epoch;
    r.e2e_s = t.e2e_s;
    r.stall_s = t.stall_s;
    r.compute_s = t.compute_s;
    r.minibatches = t.minibatches;
    r.loss = t.mean_loss;
    r.energy_j = integrate_energy_j(samples, epoch_t0_, t1);
    if (r.energy_j && t1 > epoch_t0_) r.mean_power_w = *r.energy_j / (t1 - epoch_t0_);
    flush_samples();
    sink_.emit(r);
    JS_LOG_INFO << "run " << run_id_ << " epoch " << t.epoch << ": e2e " << t.e2e_s << " s, stall " << t.stall_s
                << " s, compute " << t.compute_s << " s, " << t.minibatches << " minibatches, loss " << t.mean_loss;
  }
  void flush_samples() {
    auto fresh = sampler_.take_new();
    for (size_t i = 0; i < fresh.size(); i += proto::kMaxSamplesPerChunk) {
      proto::SampleChunk c;
      c.run_id = run_id_;
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
  double epoch_t0_ = 0;
  proto::MinibatchChunk chunk_;
};

}  // namespace

RunExecutor::RunExecutor(std::string root) : root_(std::move(root)) {}

bool RunExecutor::has_power_sensor() const { return RaplPowerSource::open(root_) != nullptr; }

Result<const ImageDataset*> RunExecutor::dataset_for(const RunConfig& config) {
  const std::string path = config.data.empty() ? default_data_path(config.dataset) : config.data;
  const std::string key = config.dataset + "|" + path;
  if (cached_ && cached_key_ == key) return static_cast<const ImageDataset*>(cached_.get());
  cached_.reset();
  auto loaded = load_training_set(config.dataset, path);
  if (!loaded) return loaded.status();
  cached_ = std::make_unique<ImageDataset>(std::move(loaded).value());
  cached_key_ = key;
  return static_cast<const ImageDataset*>(cached_.get());
}

proto::RunFinished RunExecutor::execute(int64_t run_id, const RunConfig& config, ResultSink& sink,
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
  auto data = dataset_for(config);
  if (!data) return finish(data.status());
  if (config.drop_caches) {
    Status s = drop_page_cache(root_);
    if (!s.is_ok()) return finish(s);
  }
  HostProbe probe(root_, RaplPowerSource::open(root_));
  Sampler sampler(probe, config.sample_hz);
  sampler.start();
  EmittingObserver observer(run_id, sink, sampler);
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

#include "common/perf/board_model.hpp"

#include <algorithm>
#include <cmath>

namespace jetsweep::perf {

uint64_t SplitMix::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double SplitMix::symmetric() { return uniform() + uniform() - 1.0; }

uint64_t hash64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h;
}

namespace {

double ratio(double ref, double value) { return value > 0 ? ref / value : 1.0; }

// Busy threads competing for cores: the loader workers, the training thread and telemetry.
double demand(int64_t workers) { return workers > 0 ? static_cast<double>(workers) + 2.0 : 2.0; }

double contention(double slope, int cores, int64_t workers) {
  return 1.0 + slope * std::max(0.0, 1.0 - static_cast<double>(cores) / demand(workers));
}

double batch_compute(const WorkloadCalibration& w, int64_t bs) {
  const double b = static_cast<double>(bs);
  const double ref = w.batch_a + static_cast<double>(kReferenceBatch);
  if (w.batch_saturation > 0 && bs > w.batch_saturation) {
    const double sat = static_cast<double>(w.batch_saturation);
    return (w.batch_a + sat) / ref * (b / sat);
  }
  return (w.batch_a + b) / ref;
}

double batch_stall(int64_t bs) {
  return (kStallBatchOffset + static_cast<double>(bs)) / (kStallBatchOffset + static_cast<double>(kReferenceBatch));
}

double worker_factor(const WorkloadCalibration& w, int64_t workers) {
  if (workers <= 0) return w.stall_w0;
  if (workers == 1) return w.stall_w1;
  if (workers == 2) return w.stall_w2;
  if (workers == 3) return 0.5 * (w.stall_w2 + 1.0);
  return 1.0;
}

struct Terms {
  double memory = 1;   // M(emc)
  double gpu = 0;      // gpu_share * G / f_gpu
  double cpu = 0;      // cpu_share * C / f_cpu * P(cores)
  double fixed = 0;
  double bracket() const { return gpu + cpu + fixed; }
  double total() const { return memory * bracket(); }
};

// Reference TPCs over the TPCs powered in `s` (1 where the class is not gated or `s` does not say).
double tpc_ratio(const Settings& ref, const Settings& s) {
  return ref.tpcs > 0 && s.tpcs > 0 ? static_cast<double>(ref.tpcs) / static_cast<double>(s.tpcs) : 1.0;
}

// Unnormalised compute per minibatch (the reference mode and batch are the unit).
Terms compute_terms(const WorkloadCalibration& w, const Settings& ref, const Settings& s, int64_t workers) {
  Terms t;
  t.memory = (1.0 - w.emc_share) + w.emc_share * ratio(static_cast<double>(ref.emc_hz), static_cast<double>(s.emc_hz));
  // Fewer TPCs powered (a gated mode) stretch the GPU's share as fewer units at the same clock would.
  t.gpu = w.gpu_share * ratio(static_cast<double>(ref.gpu_hz), static_cast<double>(s.gpu_hz)) * tpc_ratio(ref, s);
  t.cpu = w.cpu_share * ratio(static_cast<double>(ref.cpu_khz), static_cast<double>(s.cpu_khz)) *
          contention(kComputeCoreContention, s.cores, workers);
  t.fixed = w.const_share;
  return t;
}

double stall_raw(const WorkloadCalibration& w, const Settings& ref, const Settings& s, int64_t workers) {
  const double mem =
      (1.0 - w.stall_emc_share) + w.stall_emc_share * ratio(static_cast<double>(ref.emc_hz), static_cast<double>(s.emc_hz));
  const double cpu = w.stall_cpu_share * ratio(static_cast<double>(ref.cpu_khz), static_cast<double>(s.cpu_khz)) *
                         contention(kStallCoreContention, s.cores, workers) +
                     (1.0 - w.stall_cpu_share);
  return mem * cpu * worker_factor(w, workers);
}

double clock_level(const BoardClassTables& t, const Settings& s) {
  const double mean = (static_cast<double>(s.cores) / t.cores + static_cast<double>(s.cpu_khz) / t.cpu_khz.back() +
                       static_cast<double>(s.gpu_hz) / t.gpu_hz.back() + static_cast<double>(s.emc_hz) / t.emc_hz.back()) /
                      4.0;
  return kIdleFloor + (1.0 - kIdleFloor) * mean;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Result<SimModel> SimModel::create(std::string_view board_class, std::string_view instance) {
  SimModel m;
  JS_ASSIGN_OR_RETURN(m.class_, class_calibration(board_class));
  JS_ASSIGN_OR_RETURN(m.tables_, board_class_tables(board_class));
  m.instance_ = std::string(instance);
  const std::string key = std::string(board_class) + "/" + m.instance_;
  SplitMix time_rng(hash64(key + "/time"));
  SplitMix power_rng(hash64(key + "/power"));
  // Log-uniform around 1 with max/min = 1 + spread over all instances: the time factor spans the
  // published time spread, and time x power spans the published energy spread.
  const double time_log = std::log1p(m.class_.time_spread);
  const double power_log = std::max(0.0, std::log1p(m.class_.energy_spread) - time_log);
  m.time_factor_ = std::exp(time_log * (time_rng.uniform() - 0.5));
  m.power_factor_ = std::exp(power_log * (power_rng.uniform() - 0.5));
  return m;
}

Result<SimModel> SimModel::nominal(std::string_view board_class) {
  SimModel m;
  JS_ASSIGN_OR_RETURN(m.class_, class_calibration(board_class));
  JS_ASSIGN_OR_RETURN(m.tables_, board_class_tables(board_class));
  m.instance_ = "nominal";
  m.class_.epoch_noise = 0;   // every epoch after the first alike
  return m;
}

Result<int64_t> SimModel::minibatches_per_epoch(const RunConfig& config) const {
  JS_ASSIGN_OR_RETURN(WorkloadCalibration w, workload_calibration(config.model, config.dataset));
  int64_t samples = known_train_samples(config.dataset);
  if (samples <= 0) samples = w.train_samples;
  if (config.batch_size < 1) return invalid_argument("batch_size must be >= 1");
  int64_t n = ceil_div(samples, config.batch_size);
  if (config.max_minibatches > 0) n = std::min(n, config.max_minibatches);
  return n;
}

uint64_t SimModel::epoch_seed(const RunConfig& c, int64_t epoch) const {
  // The power mode is deliberately not part of the seed: runs that differ only in their mode see the
  // same deviations (common random numbers), so mode-to-mode differences are the model's alone.
  const std::string key = class_.board_class + "/" + instance_ + "|" + c.model + "|" + c.dataset + "|" +
                          std::to_string(c.batch_size) + "|" + std::to_string(c.workers) + "|" + std::to_string(c.seed) +
                          "|" + std::to_string(c.repetition) + "|" + std::to_string(epoch);
  return hash64(key);
}

Result<EpochModel> SimModel::epoch(const RunConfig& config, const Settings& s, int64_t epoch, bool cold_cache,
                                   double storage_mb_s, double compute_scale) const {
  JS_ASSIGN_OR_RETURN(WorkloadCalibration w, workload_calibration(config.model, config.dataset));
  const ClassReference* ref = nullptr;
  for (const auto& r : w.classes)
    if (r.board_class == class_.board_class) ref = &r;
  if (!ref) {
    return invalid_argument("simulated " + class_.board_class + ": model '" + config.model + "' on '" + config.dataset +
                            "' is not simulated on this class: " + w.unsupported_reason);
  }
  if (s.cores < 1 || s.cpu_khz <= 0 || s.gpu_hz <= 0 || s.emc_hz <= 0)
    return invalid_argument("simulated " + class_.board_class + ": incomplete power mode " + s.to_string());

  EpochModel e;
  JS_ASSIGN_OR_RETURN(e.minibatches, minibatches_per_epoch(config));
  int64_t samples = known_train_samples(config.dataset);
  if (samples <= 0) samples = w.train_samples;
  const double mb_ref = static_cast<double>(ceil_div(samples, kReferenceBatch));
  const Settings& rs = class_.reference;
  const int64_t kRefWorkers = 4;

  // Times at this mode, before instance and epoch variation.
  const Terms ct = compute_terms(w, rs, s, config.workers);
  const Terms ct_ref = compute_terms(w, rs, rs, kRefWorkers);
  const double compute_mb =
      ref->compute_s / mb_ref * (ct.total() / ct_ref.total()) * batch_compute(w, config.batch_size) * compute_scale;
  const double stall_mb = ref->stall_s / mb_ref * (stall_raw(w, rs, s, config.workers) / stall_raw(w, rs, rs, kRefWorkers)) *
                          batch_stall(config.batch_size);
  const double cpu_slowdown = ratio(static_cast<double>(rs.cpu_khz), static_cast<double>(s.cpu_khz));
  const double overhead_mb = ref->overhead_s / mb_ref * (0.5 + 0.5 * cpu_slowdown);

  // Power: base load scaled by clock level, dynamic parts by frequency and busy fraction.
  const double e2e_mb = compute_mb + stall_mb + overhead_mb;
  const double e2e_mb_ref = (ref->compute_s + ref->stall_s + ref->overhead_s) / mb_ref;
  const double gpu_time = compute_mb * (ct.memory * ct.gpu / ct.total());
  const double gpu_time_ref = ref->compute_s / mb_ref * (ct_ref.memory * ct_ref.gpu / ct_ref.total());
  const double gpu_busy = (gpu_time / e2e_mb) / (gpu_time_ref / e2e_mb_ref);
  const double cpu_work = cpu_slowdown * batch_stall(config.batch_size);
  const double cpu_busy = (cpu_work / e2e_mb) / (1.0 / e2e_mb_ref);
  const double emc_busy = (batch_compute(w, config.batch_size) / e2e_mb) / (1.0 / e2e_mb_ref);
  const double base = class_.base_w * clock_level(tables_, s) / clock_level(tables_, rs);
  const double dyn = std::max(0.0, ref->power_w - class_.base_w);
  const double gpu_p = dyn * w.dyn_gpu_share *
                       std::pow(static_cast<double>(s.gpu_hz) / static_cast<double>(rs.gpu_hz), kDynamicPowerExponent) * gpu_busy /
                       tpc_ratio(rs, s);   // fewer TPCs switching
  const double cpu_p = dyn * w.dyn_cpu_share *
                       std::pow(static_cast<double>(s.cpu_khz) / static_cast<double>(rs.cpu_khz), kDynamicPowerExponent) *
                       cpu_busy;
  const double emc_p = dyn * w.dyn_emc_share * (static_cast<double>(s.emc_hz) / static_cast<double>(rs.emc_hz)) * emc_busy;

  // Deterministic variation: instance (fixed per board) and epoch-to-epoch.
  SplitMix rng(epoch_seed(config, epoch) ^ 0x5eed5eed5eed5eedull);
  const double epoch_factor = 1.0 + class_.epoch_noise * rng.symmetric();
  const double tf = time_factor_ * epoch_factor;
  e.compute_mb_s = compute_mb * tf;
  e.stall_mb_s = stall_mb * tf;
  e.overhead_s = overhead_mb * static_cast<double>(e.minibatches) * tf;
  if (epoch == 0) {
    e.first_compute_extra_s = class_.first_minibatch_s * cpu_slowdown * time_factor_;
    const double mb_s = storage_mb_s > 0 ? storage_mb_s : class_.storage_mb_s;
    if (cold_cache) e.cold_stall_s = static_cast<double>(w.dataset_bytes) / 1e6 / mb_s;
  }
  e.power_w = (base + gpu_p + cpu_p + emc_p) * power_factor_;
  e.cpu_util_pct = std::min(100.0, 100.0 * w.cpu_util_ref * cpu_busy * static_cast<double>(rs.cores) /
                                       static_cast<double>(s.cores));
  return e;
}

}  // namespace jetsweep::perf

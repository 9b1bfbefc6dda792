#include "analysis/synthetic_corpus.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace jetsweep::analysis {

namespace {

std::vector<double> ladder_mhz(double first_khz, double step_khz, double last_khz) {
  std::vector<double> v;
  for (double f = first_khz; f <= last_khz + 1e-9; f += step_khz) v.push_back(f / 1000.0);
  return v;
}

double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }


}  // namespace

// Per (workload, mode) noise: a hash of the inputs so every corpus slice sees the same value.
double synthetic_noise_factor(uint64_t seed, const std::string& workload, const ModeKey& m, int which, double pct) {
  if (pct <= 0) return 1.0;
  uint64_t h = 1469598103934665603ULL ^ seed;
  auto mix = [&](uint64_t v) {
    h ^= v;
    h *= 1099511628211ULL;
  };
  for (char c : workload) mix(static_cast<unsigned char>(c));
  mix(static_cast<uint64_t>(m.cores));
  mix(static_cast<uint64_t>(m.cpu_mhz * 10));
  mix(static_cast<uint64_t>(m.gpu_mhz * 10));
  mix(static_cast<uint64_t>(m.emc_mhz * 10));
  mix(static_cast<uint64_t>(which));
  std::mt19937_64 rng(h);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return 1.0 + pct / 100.0 * u(rng);
}

std::vector<ModeKey> BoardGrid::modes() const {
  std::vector<ModeKey> out;
  out.reserve(static_cast<size_t>(max_cores) * cpu_mhz.size() * gpu_mhz.size() * emc_mhz.size());
  for (int c = 1; c <= max_cores; ++c)
    for (double f : cpu_mhz)
      for (double g : gpu_mhz)
        for (double e : emc_mhz) out.push_back({c, f, g, e});
  return out;
}

std::vector<std::string> synthetic_boards() { return {"agx-orin", "agx-xavier", "orin-nano"}; }

Result<BoardGrid> synthetic_board(const std::string& device) {
  BoardGrid b;
  b.device = device;
  if (device == "agx-orin") {
    b.max_cores = 12;
    b.cpu_mhz = ladder_mhz(115200, 76800, 2188800);
    b.cpu_mhz.push_back(2201.6);
    b.gpu_mhz = {114.75, 216.75, 318.75, 420.75, 522.75, 624.75, 726.75, 828.75, 930.75, 1032.75, 1134.75, 1236.75, 1300.5};
    b.emc_mhz = {204, 665.6, 2133, 3199};
  } else if (device == "agx-xavier") {
    b.max_cores = 8;
    b.cpu_mhz = ladder_mhz(115200, 76800, 2265600);
    b.gpu_mhz = {114.75, 216.75, 318.75, 420.75, 522.75, 624.75, 675.75, 828.75, 905.25, 1032.75, 1198.5, 1236.75, 1338.75, 1377};
    b.emc_mhz = {204, 408, 665.6, 800, 1065.6, 1331.2, 1600, 1866, 2133};
  } else if (device == "orin-nano") {
    b.max_cores = 6;
    b.cpu_mhz = ladder_mhz(115200, 76800, 1420800);
    b.cpu_mhz.push_back(1497.6);
    b.cpu_mhz.push_back(1510.4);
    b.gpu_mhz = {306, 408, 510, 612, 624.75};
    b.emc_mhz = {204, 665.6, 2133};
  } else {
    return invalid_argument("--device: unknown synthetic board '" + device + "' (known: agx-orin, agx-xavier, orin-nano)");
  }
  return b;
}

std::vector<SyntheticWorkload> synthetic_workloads() {
  //        name        gpu_ms exp   mem_ms exp  launch prep   base  cpu   gpu   emc (W)
  return {{"resnet", 120.0, 0.95, 30.0, 0.70, 6.0, 40.0, 9.0, 6.0, 34.0, 6.0},
          {"mobilenet", 70.0, 0.85, 35.0, 0.75, 10.0, 75.0, 9.0, 8.0, 24.0, 6.5},
          {"yolo", 95.0, 0.90, 40.0, 0.65, 8.0, 60.0, 9.0, 7.0, 30.0, 7.0},
          {"lenet", 4.0, 0.60, 2.0, 0.50, 5.0, 22.0, 8.0, 9.0, 8.0, 3.0},
          {"bert", 900.0, 1.0, 260.0, 0.80, 12.0, 8.0, 9.5, 4.0, 40.0, 8.0}};
}

Result<SyntheticWorkload> synthetic_workload(const std::string& name) {
  std::string known;
  for (const auto& w : synthetic_workloads()) {
    if (w.name == name) return w;
    known += (known.empty() ? "" : ", ") + w.name;
  }
  return invalid_argument("--workloads: unknown synthetic workload '" + name + "' (known: " + known + ")");
}

std::vector<double> synthetic_linear_coefficients() { return {-0.1, -5.0, -0.3, -0.05, 900.0}; }

double synthetic_time_ms(const BoardGrid& board, const SyntheticWorkload& w, const ModeKey& m) {
  const double cpu_ratio = max_of(board.cpu_mhz) / m.cpu_mhz;
  const double gpu_ratio = max_of(board.gpu_mhz) / m.gpu_mhz;
  const double emc_ratio = max_of(board.emc_mhz) / m.emc_mhz;
  // Compute: GPU kernels + memory-bound part + launch overhead (one core busy launching; contention
  // below 6 cores with 4 loader workers and the logger, as SIGMETRICS sec. 5.6.6 observes).
  const double contention = m.cores < 6 ? 1.0 + 0.15 * (6 - m.cores) : 1.0;
  const double compute = w.gpu_ms * std::pow(gpu_ratio, w.gpu_exp) + w.mem_ms * std::pow(emc_ratio, w.mem_exp) +
                         w.launch_ms * cpu_ratio * contention;
  // Pre-processing by 4 workers sharing the cores left after the launcher.
  const double worker_cores = std::min(4.0, std::max(1.0, m.cores - 1.0)) + (m.cores > 5 ? 0.25 : 0.0);
  const double prep = w.prep_ms * std::pow(cpu_ratio, 0.85) * std::pow(4.0 / worker_cores, 0.6) *
                      std::pow(emc_ratio, 0.1);
  // Pipelined: a smooth max of the two stages plus a small serial part.
  const double p = 6.0;
  return std::pow(std::pow(compute, p) + std::pow(prep, p), 1.0 / p) + 0.02 * prep;
}

double synthetic_power_mw(const BoardGrid& board, const SyntheticWorkload& w, const ModeKey& m) {
  const double t = synthetic_time_ms(board, w, m);
  const double cpu_ratio = max_of(board.cpu_mhz) / m.cpu_mhz;
  const double gpu_ratio = max_of(board.gpu_mhz) / m.gpu_mhz;
  const double emc_ratio = max_of(board.emc_mhz) / m.emc_mhz;
  const double gpu_busy = std::min(1.0, (w.gpu_ms * std::pow(gpu_ratio, w.gpu_exp)) / t);
  const double cpu_busy = std::min(1.0, (w.prep_ms * cpu_ratio + w.launch_ms * cpu_ratio) / t);
  const double cpu_f = 1.0 / cpu_ratio, gpu_f = 1.0 / gpu_ratio, emc_f = 1.0 / emc_ratio;
  const double watts = w.base_w + w.cpu_w * (m.cores / static_cast<double>(board.max_cores)) * std::pow(cpu_f, 1.8) * (0.3 + 0.7 * cpu_busy) +
                       w.gpu_w * std::pow(gpu_f, 2.2) * (0.15 + 0.85 * gpu_busy) + w.emc_w * std::pow(emc_f, 1.2);
  return 1000.0 * watts;
}

Corpus generate_corpus(const BoardGrid& board, const std::vector<SyntheticWorkload>& workloads,
                       const SyntheticOptions& options) {
  Corpus c;
  c.source = "synthetic:" + board.device;
  std::vector<ModeKey> modes = board.modes();
  if (options.max_modes > 0 && options.max_modes < modes.size()) {
    std::mt19937_64 rng(options.seed);
    std::shuffle(modes.begin(), modes.end(), rng);
    modes.resize(options.max_modes);
    std::sort(modes.begin(), modes.end());
  }
  const auto lin = synthetic_linear_coefficients();
  for (const auto& w : workloads) {
    for (const auto& m : modes) {
      ModeRecord r;
      r.device = board.device;
      r.workload = w.name;
      r.mode = m;
      const double t = options.linear_truth
                           ? lin[0] * m.cpu_mhz + lin[1] * m.cores + lin[2] * m.gpu_mhz + lin[3] * m.emc_mhz + lin[4]
                           : synthetic_time_ms(board, w, m);
      r.minibatch_ms = t * synthetic_noise_factor(options.seed, w.name, m, 0, options.noise_pct);
      r.power_mw = synthetic_power_mw(board, w, m) * synthetic_noise_factor(options.seed, w.name, m, 1, options.noise_pct);
      r.runs = 1;
      r.epochs = 1;
      r.where = c.source;
      c.rows.push_back(r);
      EpochSample e;
      e.device = r.device;
      e.workload = r.workload;
      e.mode = m;
      e.time = r.minibatch_ms;
      e.power_w = *r.power_mw / 1000.0;
      e.energy = *r.power_mw * r.minibatch_ms / 1e6 * 1000.0;  // mJ per minibatch
      e.where = c.source;
      c.epochs.push_back(std::move(e));
    }
  }
  return c;
}

}  // namespace jetsweep::analysis

#include "agent/profile.hpp"

#include <algorithm>
#include <atomic>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "common/log.hpp"

namespace jetsweep::agent {

namespace {

// Keeps a mode's messages for summarise_mode (training thread = this thread).
class CollectingSink final : public ResultSink {
 public:
  void emit(proto::Body body) override { messages.push_back(std::move(body)); }
  std::vector<proto::Body> messages;
};

std::string field(double v, int precision) {
  std::ostringstream ss;
  ss << std::fixed << std::setprecision(precision) << v;
  std::string s = ss.str();
  while (s.find('.') != std::string::npos && (s.back() == '0' || s.back() == '.')) {
    const bool dot = s.back() == '.';
    s.pop_back();
    if (dot) break;
  }
  return s;
}

std::string optional_field(const std::optional<double>& v, int precision) { return v ? field(*v, precision) : ""; }

}  // namespace

std::vector<RunConfig> order_for_profiling(std::vector<RunConfig> modes) {
  std::stable_sort(modes.begin(), modes.end(), [](const RunConfig& a, const RunConfig& b) {
    const PowerModeRequest &x = a.power_mode, &y = b.power_mode;
    return std::tie(y.cores, y.cpu_khz, y.gpu_hz, y.emc_hz) < std::tie(x.cores, x.cpu_khz, x.gpu_hz, x.emc_hz);
  });
  return modes;
}

Result<ModeProfile> summarise_mode(const std::vector<proto::Body>& messages, const ProfileOptions& options) {
  std::vector<std::pair<int64_t, double>> minibatches;  // (index, stall + compute)
  std::vector<proto::Sample> samples;
  for (const auto& m : messages) {
    if (const auto* c = std::get_if<proto::MinibatchChunk>(&m)) {
      for (size_t i = 0; i < c->stall_s.size(); ++i)
        minibatches.emplace_back(c->first_index + static_cast<int64_t>(i), c->stall_s[i] + c->compute_s[i]);
    } else if (const auto* s = std::get_if<proto::SampleChunk>(&m)) {
      samples.insert(samples.end(), s->samples.begin(), s->samples.end());
    }
  }
  if (minibatches.size() < 2) return invalid_argument("fewer than 2 minibatches were trained: nothing left after dropping the first");
  std::sort(minibatches.begin(), minibatches.end());
  std::sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return a.t_s < b.t_s; });

  ModeProfile p;
  // Power settles when a window of consecutive samples varies by less than settle_pct of its mean.
  std::vector<const proto::Sample*> powered;
  for (const auto& s : samples)
    if (s.power_w) powered.push_back(&s);
  const size_t window = static_cast<size_t>(std::max<int64_t>(2, options.settle_window));
  for (size_t i = 0; i + window <= powered.size(); ++i) {
    double lo = *powered[i]->power_w, hi = lo, sum = 0;
    for (size_t k = i; k < i + window; ++k) {
      lo = std::min(lo, *powered[k]->power_w);
      hi = std::max(hi, *powered[k]->power_w);
      sum += *powered[k]->power_w;
    }
    const double mean = sum / static_cast<double>(window);
    if (mean > 0 && (hi - lo) / mean * 100.0 < options.settle_pct) {
      p.settled_after_s = powered[i]->t_s;
      break;
    }
  }
  // Count the minibatches (after the first) that start once power has settled.
  double t = 0, time_sum = 0, first_start = -1, last_end = 0;
  for (size_t j = 0; j < minibatches.size(); ++j) {
    const double start = t;
    t += minibatches[j].second;
    if (j == 0) continue;
    if (p.settled_after_s && start < *p.settled_after_s - 1e-6) continue;  // 1 us: summed durations drift
    if (first_start < 0) first_start = start;
    last_end = t;
    time_sum += minibatches[j].second;
    ++p.counted;
  }
  if (p.counted == 0)
    return invalid_argument("power settled only after the last minibatch: raise --minibatches or --settle-pct");
  p.minibatch_ms = time_sum / static_cast<double>(p.counted) * 1000.0;
  double power_sum = 0;
  int64_t power_n = 0;
  for (const auto* s : powered)
    if (s->t_s >= first_start && s->t_s <= last_end + 1e-9) {
      power_sum += *s->power_w;
      ++power_n;
    }
  if (power_n > 0) p.power_mw = power_sum / static_cast<double>(power_n) * 1000.0;
  return p;
}

int profile_modes(RunExecutor& executor, const std::string& device_class, std::vector<RunConfig> modes,
                  const ProfileOptions& options, std::ostream& csv) {
  modes = order_for_profiling(std::move(modes));
  csv << "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,minibatches,settled_after_s,mode_name\n";
  int failed = 0;
  std::atomic<bool> cancel{false};
  for (size_t i = 0; i < modes.size(); ++i) {
    RunConfig c = modes[i];
    c.epochs = 1;
    c.max_minibatches = options.minibatches;
    const PowerModeRequest& pm = c.power_mode;
    CollectingSink sink;
    auto fin = executor.execute(static_cast<int64_t>(i + 1), c, sink, cancel);
    Result<ModeProfile> p = fin.status == "done" ? summarise_mode(sink.messages, options)
                                                 : Result<ModeProfile>(internal_error(fin.error));
    if (!p) {
      ++failed;
      JS_LOG_ERROR << "profile: mode " << i + 1 << " of " << modes.size() << " (cores " << pm.cores << ", cpu " << pm.cpu_khz
                   << " kHz, gpu " << pm.gpu_hz << " Hz, emc " << pm.emc_hz << " Hz) failed: " << p.status().message();
      continue;
    }
    auto mhz = [](int64_t v, double per_mhz) { return v > 0 ? field(static_cast<double>(v) / per_mhz, 3) : std::string(); };
    csv << device_class << "," << c.model << "/" << c.dataset << "," << (pm.cores > 0 ? std::to_string(pm.cores) : "")
        << "," << mhz(pm.cpu_khz, 1e3) << "," << mhz(pm.gpu_hz, 1e6) << "," << mhz(pm.emc_hz, 1e6) << ","
        << optional_field(p->minibatch_ms, 4) << "," << optional_field(p->power_mw, 1) << "," << p->counted << ","
        << optional_field(p->settled_after_s, 3) << "," << pm.name << "\n";
    csv.flush();
    JS_LOG_INFO << "profile: mode " << i + 1 << " of " << modes.size() << ": " << p->counted << " minibatches, "
                << optional_field(p->minibatch_ms, 2) << " ms, " << optional_field(p->power_mw, 0) << " mW";
  }
  return failed;
}

}  // namespace jetsweep::agent

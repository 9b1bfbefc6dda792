// Prometheus metrics without a library: thread-safe instruments that live as long as what they measure
// (Counter, Histogram with fixed buckets), and a Registry that a scrape fills with the values of the moment and
// renders in the text exposition format 0.0.4 (# HELP, # TYPE, samples; label values and help text escaped as the
// format requires). GET /metrics (controller/api_metrics.cpp) builds one Registry per scrape.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jetsweep::controller::metrics {

// The Content-Type of the text exposition format.
inline constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

using Labels = std::vector<std::pair<std::string, std::string>>;   // name -> value, in the order written

// A monotonically increasing count. Any thread.
class Counter {
 public:
  void inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// A histogram's counts at one moment: counts[i] observations <= bounds[i] and > bounds[i-1] (not cumulative);
// counts.back() (one more than bounds) the ones above the last bound.
struct HistogramSnapshot {
  std::vector<double> bounds;
  std::vector<uint64_t> counts;
  double sum = 0;
  uint64_t count = 0;
};

// Observations counted in fixed buckets (upper bounds, increasing), with their sum. Any thread (a mutex).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  HistogramSnapshot snapshot() const;

 private:
  const std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

// Bucket bounds for latencies in seconds: 1 ms .. 10 s.
std::vector<double> latency_buckets_s();

// Seconds elapsed since `start` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The text exposition of one scrape: families (name, help, type) in the order first added, each with its samples.
// Adding a sample to a family of another type, or with an invalid metric or label name, is a programming error:
// it is dropped and counted in invalid_samples() (tests check it is 0). One thread (the scrape's).
class Registry {
 public:
  void counter(const std::string& name, const std::string& help, const Labels& labels, double value);
  void gauge(const std::string& name, const std::string& help, const Labels& labels, double value);
  // Written as name_bucket{...,le="B"} (cumulative, ending with le="+Inf"), name_sum and name_count.
  void histogram(const std::string& name, const std::string& help, const Labels& labels, const HistogramSnapshot& h);
  // Declares a family without samples (written with # HELP and # TYPE only), so a scrape always names it.
  void declare(const std::string& name, const std::string& help, const std::string& type);

  std::string text() const;
  int invalid_samples() const { return invalid_; }

 private:
  struct Family {
    std::string help;
    std::string type;   // counter | gauge | histogram
    std::vector<std::string> lines;
  };
  Family* family(const std::string& name, const std::string& help, const std::string& type, const Labels& labels);

  std::vector<std::string> order_;
  std::map<std::string, Family> families_;
  int invalid_ = 0;
};

// Text helpers of the format (exposed for tests).
bool valid_metric_name(std::string_view name);   // [a-zA-Z_:][a-zA-Z0-9_:]*
bool valid_label_name(std::string_view name);    // [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__"
std::string escape_label_value(std::string_view value);   // \ -> \\, " -> \", newline -> \n
std::string escape_help(std::string_view help);           // \ -> \\, newline -> \n
std::string format_value(double value);                   // integral in full, else shortest round-trip; NaN, +Inf, -Inf
std::string format_labels(const Labels& labels);          // {a="x",b="y"}, or "" when there are none

// The controller's own instruments (Controller::metrics()); each is thread-safe.
struct ControllerMetrics {
  // A claim posted to the database -> the assign_run sent to the agent.
  Histogram dispatch_s{latency_buckets_s()};
  // Clock probes discarded because their reply waited behind results (AgentSession).
  Counter clock_probes_discarded;
  // Ingest messages committed (acked), by message type; of them, the duplicates (all of it stored already) and
  // those set aside (their agent no longer held the run); rows of minibatch and sample chunks stored; and the
  // time from a message's arrival to its commit, by type. Types: the protocol's ingest messages.
  struct PerType {
    Counter messages;
    Counter duplicates;
    Counter set_aside;
    Counter rows;
    Histogram seconds{latency_buckets_s()};
  };
  // Io thread only (the map itself is not locked): AgentSession and the scrape both run there.
  PerType& ingest(const std::string& type) { return ingest_[type]; }
  const std::map<std::string, PerType>& ingest_by_type() const { return ingest_; }

 private:
  std::map<std::string, PerType> ingest_;
};

}  // namespace jetsweep::controller::metrics

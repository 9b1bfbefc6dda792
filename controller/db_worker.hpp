// DbWorker: owns the Store and the one thread that uses it. Jobs run in FIFO order; a job whose Store call
// reports kUnavailable (PostgreSQL down or restarting) is retried with capped backoff until it succeeds or
// the worker stops, so no ingest is lost. Completions are posted back to the caller's executor: the
// io_context, whose one I/O thread runs them (the threading rule: README.md, "Threading"). Jobs touch only
// the Store they are given, never io-thread state. post(), queued() and the metrics may be called from any thread.
#pragma once

#include <array>
#include <boost/asio.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "controller/metrics.hpp"
#include "controller/store.hpp"

namespace jetsweep::controller {

class DbWorker {
 public:
  explicit DbWorker(std::unique_ptr<Store> store);
  ~DbWorker();
  void start();
  void stop();   // finishes queued jobs first

  // Runs `job(store)` on the worker thread; retried while it returns kUnavailable. Then `done(result)`
  // is posted to `ex`.
  template <class R>
  void post(boost::asio::any_io_executor ex, std::function<R(Store&)> job, std::function<void(R)> done) {
    enqueue([this, ex, job = std::move(job), done = std::move(done)](Store& s, const std::atomic<bool>& stopping) {
      R result = run_with_retry<R>(s, job, stopping);
      boost::asio::post(ex, [done, result = std::move(result)]() mutable { done(std::move(result)); });
    });
  }

  size_t queued() const;

  // For GET /metrics: how long each Store call took (every attempt, retries included), and the calls that
  // returned an error, by its code (code_name: "unavailable" = PostgreSQL unreachable, retried; "db_error";
  // "not_found" and "invalid_argument" are mostly requests naming something absent or invalid).
  metrics::HistogramSnapshot latency() const { return latency_.snapshot(); }
  std::vector<std::pair<std::string, uint64_t>> errors_by_code() const;

 private:
  using Job = std::function<void(Store&, const std::atomic<bool>&)>;
  void enqueue(Job job);
  void loop();

  template <class R>
  R run_with_retry(Store& s, const std::function<R(Store&)>& job, const std::atomic<bool>& stopping) {
    int attempt = 0;
    while (true) {
      const auto start = std::chrono::steady_clock::now();
      R r = job(s);
      record(metrics::seconds_since(start), status_of(r).code());
      if (status_of(r).code() != Code::kUnavailable || stopping.load()) return r;
      backoff(++attempt, status_of(r));
    }
  }
  static const Status& status_of(const Status& s) { return s; }
  template <class T>
  static const Status& status_of(const Result<T>& r) { return r.status(); }
  static void backoff(int attempt, const Status& why);
  void record(double seconds, Code code);

  metrics::Histogram latency_{metrics::latency_buckets_s()};
  std::array<metrics::Counter, static_cast<size_t>(Code::kInternal) + 1> errors_;   // by Code

  std::unique_ptr<Store> store_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stopping_flag_ = false;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace jetsweep::controller

// DbWorker: owns the Store and the one thread that uses it. Jobs run in FIFO order (ingest jobs queued back to
// back are written together, as one group commit: Store::ingest_batch); a job whose Store call
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
#include <variant>
#include <vector>

#include "common/log.hpp"
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

  // Writes agent `agent_id`'s result message on the worker thread, in one transaction with the ingest jobs
  // queued right behind it (at most kMaxIngestBatch: one commit, one fsync, for many messages); retried whole
  // while the store reports kUnavailable. Then `done(outcome or error)` is posted to `ex`, after the commit.
  void post_ingest(boost::asio::any_io_executor ex, int64_t agent_id, proto::Body body,
                   std::function<void(Result<IngestOutcome>)> done);
  static constexpr size_t kMaxIngestBatch = 64;

  size_t queued() const;

  // For GET /metrics: how long each Store call took (every attempt, retries included), and the calls that
  // returned an error, by its code (code_name: "unavailable" = PostgreSQL unreachable, retried; "db_error";
  // "not_found" and "invalid_argument" are mostly requests naming something absent or invalid).
  metrics::HistogramSnapshot latency() const { return latency_.snapshot(); }
  std::vector<std::pair<std::string, uint64_t>> errors_by_code() const;

 private:
  using Job = std::function<void(Store&, const std::atomic<bool>&)>;
  struct IngestJob {
    boost::asio::any_io_executor ex;
    IngestItem item;
    std::function<void(Result<IngestOutcome>)> done;
  };
  void enqueue(std::variant<Job, IngestJob> job);
  void loop();
  void run_ingest_batch(std::vector<IngestJob>& batch);
  // Items the store refused (kDbError), each tried once more alone, then kept apart (Store::set_aside_refused)
  // instead of being dropped once acknowledged: their result becomes the outcome of the try that took them (stored,
  // kSetAside or kDuplicate), or kUnavailable (never acknowledged) while stopping or when keeping them failed too.
  void keep_refused(std::vector<IngestItem>& items);

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

  log::RateLimit refusals_logged_{5, std::chrono::minutes(1)};   // keep_refused's log lines (worker thread only)
  metrics::Histogram latency_{metrics::latency_buckets_s()};
  std::array<metrics::Counter, static_cast<size_t>(Code::kInternal) + 1> errors_;   // by Code

  std::unique_ptr<Store> store_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::variant<Job, IngestJob>> jobs_;
  bool stopping_flag_ = false;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace jetsweep::controller

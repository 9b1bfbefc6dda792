#include "controller/db_worker.hpp"

#include <algorithm>
#include <chrono>

#include "common/log.hpp"

namespace jetsweep::controller {

DbWorker::DbWorker(std::unique_ptr<Store> store) : store_(std::move(store)) {}

DbWorker::~DbWorker() { stop(); }

void DbWorker::start() {
  thread_ = std::thread([this] { loop(); });
}

void DbWorker::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_flag_) return;
    stopping_flag_ = true;
  }
  stopping_ = true;  // queued jobs still run once, but no longer wait out a database outage
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t DbWorker::queued() const {
  std::lock_guard lock(mu_);
  return jobs_.size();
}

void DbWorker::post_ingest(boost::asio::any_io_executor ex, int64_t agent_id, proto::Body body,
                           std::function<void(Result<IngestOutcome>)> done) {
  enqueue(IngestJob{std::move(ex), IngestItem{agent_id, std::move(body), Status::ok(), IngestOutcome::kStored},
                    std::move(done)});
}

void DbWorker::enqueue(std::variant<Job, IngestJob> job) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void DbWorker::loop() {
  while (true) {
    Job job;
    std::vector<IngestJob> batch;   // the ingest jobs at the front of the queue, back to back
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_flag_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      if (auto* j = std::get_if<Job>(&jobs_.front())) {
        job = std::move(*j);
        jobs_.pop_front();
      }
      while (!job && !jobs_.empty() && batch.size() < kMaxIngestBatch && std::holds_alternative<IngestJob>(jobs_.front())) {
        batch.push_back(std::move(std::get<IngestJob>(jobs_.front())));
        jobs_.pop_front();
      }
    }
    if (job) job(*store_, stopping_);
    else run_ingest_batch(batch);
  }
}

void DbWorker::run_ingest_batch(std::vector<IngestJob>& batch) {
  std::vector<IngestItem> items;
  items.reserve(batch.size());
  for (auto& j : batch) items.push_back(std::move(j.item));
  Status s;
  for (int attempt = 0;;) {
    const auto start = std::chrono::steady_clock::now();
    s = store_->ingest_batch(items);
    record(metrics::seconds_since(start), s.code());
    if (s.code() != Code::kUnavailable || stopping_.load()) break;
    backoff(++attempt, s);
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    // A batch that failed whole: every message failed.
    Result<IngestOutcome> result = !s.is_ok()                 ? Result<IngestOutcome>(s)
                                   : items[i].result.is_ok() ? Result<IngestOutcome>(items[i].outcome)
                                                             : Result<IngestOutcome>(items[i].result);
    boost::asio::post(batch[i].ex, [done = std::move(batch[i].done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  }
}

void DbWorker::record(double seconds, Code code) {
  latency_.observe(seconds);
  if (code != Code::kOk && static_cast<size_t>(code) < errors_.size()) errors_[static_cast<size_t>(code)].inc();
}

std::vector<std::pair<std::string, uint64_t>> DbWorker::errors_by_code() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (size_t i = 1; i < errors_.size(); ++i) out.emplace_back(code_name(static_cast<Code>(i)), errors_[i].value());
  return out;
}

void DbWorker::backoff(int attempt, const Status& why) {
  // Capped exponential backoff while PostgreSQL is unreachable: 100 ms .. 5 s.
  const auto wait = std::chrono::milliseconds(std::min<int64_t>(5000, 100LL << std::min(attempt, 6)));
  if (attempt == 1 || attempt % 10 == 0)
    JS_LOG_WARN << "database unavailable (attempt " << attempt << "), retrying in " << wait.count()
                << " ms: " << why.message();
  std::this_thread::sleep_for(wait);
}

}  // namespace jetsweep::controller

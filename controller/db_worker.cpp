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
  const std::function<Status(Store&)> together = [&](Store& s) { return s.ingest_batch(items); };
  Status s = run_with_retry<Status>(*store_, together, stopping_);
  if (s.code() == Code::kDbError) {
    // The batch failed whole, on none of its messages in particular (its commit, say): each message is written in a
    // transaction of its own (Store's default ingest_batch), so that the failure is the one message's it is.
    JS_LOG_WARN << "a group commit of " << items.size() << " results failed: " << s.to_string()
                << "; writing them one by one";
    const std::function<Status(Store&)> one_by_one = [&](Store& st) { return st.Store::ingest_batch(items); };
    s = run_with_retry<Status>(*store_, one_by_one, stopping_);
  }
  if (s.is_ok()) keep_refused(items);
  for (size_t i = 0; i < batch.size(); ++i) {
    // A batch that failed whole (only kUnavailable, while stopping): every message failed.
    Result<IngestOutcome> result = !s.is_ok()                 ? Result<IngestOutcome>(s)
                                   : items[i].result.is_ok() ? Result<IngestOutcome>(items[i].outcome)
                                                             : Result<IngestOutcome>(items[i].result);
    boost::asio::post(batch[i].ex, [done = std::move(batch[i].done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  }
}

void DbWorker::keep_refused(std::vector<IngestItem>& items) {
  for (auto& item : items) {
    if (item.result.code() != Code::kDbError) continue;
    // Once more alone, in a transaction of its own (Store's default ingest_batch): a refusal that does not repeat
    // (a lost race on a chunk, a lock or a standby's moment) is stored after all, not set aside.
    std::vector<IngestItem> alone{item};
    const std::function<Status(Store&)> again = [&](Store& s) { return s.Store::ingest_batch(alone); };
    if (run_with_retry<Status>(*store_, again, stopping_).is_ok() && alone[0].result.code() != Code::kDbError) {
      item.result = alone[0].result;
      item.outcome = alone[0].outcome;
      continue;
    }
    const std::string why = item.result.message();
    const std::function<Result<IngestOutcome>(Store&)> keep = [&](Store& s) {
      return s.set_aside_refused(item.agent_id, item.body, why);
    };
    Result<IngestOutcome> kept = run_with_retry<Result<IngestOutcome>>(*store_, keep, stopping_);
    int64_t held_back = 0;
    const bool log_it = refusals_logged_.allow(std::chrono::steady_clock::now(), held_back);
    const std::string what = "agent " + std::to_string(item.agent_id) + ": '" + std::string(proto::type_name(item.body)) +
                             "' of run " + std::to_string(proto::result_run_id(item.body).value_or(0)) + " refused by the store (" +
                             log::excerpt(why, 500) + ")";
    const std::string not_logged =
        held_back ? "; " + std::to_string(held_back) + " refused results not logged before this one" : "";
    if (kept.is_ok()) {
      if (log_it) JS_LOG_ERROR << what << "; kept apart in set_aside_results" << not_logged;
      item.result = Status::ok();
      item.outcome = *kept;
    } else {
      // Not kept (stopping, or the database refuses every write: a read-only standby, say): never acknowledged.
      // The session closes and the agent resends it when it reconnects.
      if (kept.status().code() != Code::kUnavailable && log_it)
        JS_LOG_ERROR << what << "; keeping it apart failed too, so it is not acknowledged: "
                     << kept.status().to_string() << not_logged;
      item.result = unavailable("not stored and not kept apart: " + kept.status().message());
    }
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

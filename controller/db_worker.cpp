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

void DbWorker::enqueue(Job job) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void DbWorker::loop() {
  while (true) {
    Job job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_flag_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job(*store_, stopping_);
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

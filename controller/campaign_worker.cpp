#include "controller/campaign_worker.hpp"

namespace jetsweep::controller {

CampaignWorker::CampaignWorker(size_t max_waiting) : max_waiting_(max_waiting) {}

CampaignWorker::~CampaignWorker() { stop(); }

void CampaignWorker::start() {
  thread_ = std::thread([this] { loop(); });
}

void CampaignWorker::stop() {
  std::deque<Job> dropped;   // destroyed here, outside the lock
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    dropped.swap(jobs_);
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t CampaignWorker::waiting() const {
  std::lock_guard lock(mu_);
  return jobs_.size();
}

void CampaignWorker::set_before_job(std::function<void()> hook) {
  std::lock_guard lock(mu_);
  before_job_ = std::move(hook);
}

bool CampaignWorker::enqueue(Job job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || jobs_.size() >= max_waiting_) return false;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

void CampaignWorker::loop() {
  while (true) {
    Job job;
    std::function<void()> before;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      before = before_job_;
    }
    if (before) before();
    job();
  }
}

}  // namespace jetsweep::controller

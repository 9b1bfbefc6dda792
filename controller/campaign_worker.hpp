// CampaignWorker: owns one thread that parses and expands campaign YAML (common/campaign.hpp, bounded by
// CampaignLimits) off the I/O thread, and its queue, which is bounded: a job that would wait behind
// max_waiting others is refused and the caller answers "busy". Completions are posted back to the caller's
// executor, the io_context, whose one I/O thread runs them (the threading rule: README.md, "Threading"); jobs
// touch only what they are given, never io-thread state. post(), waiting() and set_before_job() may be called
// from any thread; start() and stop() from the thread that owns the worker.
#pragma once

#include <boost/asio.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace jetsweep::controller {

class CampaignWorker {
 public:
  static constexpr size_t kDefaultMaxWaiting = 8;   // each waiting job holds its YAML (<= max_yaml_bytes)

  explicit CampaignWorker(size_t max_waiting = kDefaultMaxWaiting);
  ~CampaignWorker();
  void start();
  // Waiting jobs are dropped (their completions never run); the one running finishes first.
  void stop();

  // Runs `job()` on the worker thread, then posts `done(result)` to `ex`. False, and nothing queued, when
  // max_waiting jobs wait already.
  template <class R>
  [[nodiscard]] bool post(boost::asio::any_io_executor ex, std::function<R()> job, std::function<void(R)> done) {
    return enqueue([ex, job = std::move(job), done = std::move(done)] {
      R result = job();
      boost::asio::post(ex, [done, result = std::move(result)]() mutable { done(std::move(result)); });
    });
  }

  // Jobs queued and not started.
  size_t waiting() const;
  size_t max_waiting() const { return max_waiting_; }
  // Tests only: `hook` runs on the worker thread before each job (a latch the test holds keeps a job in
  // progress, deterministically).
  void set_before_job(std::function<void()> hook);

 private:
  using Job = std::function<void()>;
  bool enqueue(Job job);
  void loop();

  const size_t max_waiting_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  std::function<void()> before_job_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace jetsweep::controller

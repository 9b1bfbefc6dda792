#include "agent/journal_worker.hpp"

#include <boost/asio/post.hpp>

namespace jetsweep::agent {

JournalWorker::JournalWorker(std::shared_ptr<Journal> journal, boost::asio::any_io_executor ex)
    : journal_(std::move(journal)), ex_(std::move(ex)) {
  thread_ = std::thread([this] { loop(); });
}

JournalWorker::~JournalWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void JournalWorker::enqueue(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void JournalWorker::complete(std::function<void()> completion) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!stopping_) boost::asio::post(ex_, std::move(completion));
}

void JournalWorker::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;   // stopping, and every queued job has run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job(*journal_);
  }
}

JournalWorker::Appended JournalWorker::write_backlog() {
  Appended out;
  while (!backlog_.empty()) {
    const Message& m = backlog_.front();
    Status s = journal_->append(m.id, m.run_id, m.run_finished, *m.frame, m.type);
    // Written but not synced (fdatasync failed) is in the file all the same: journaled, never appended twice.
    const bool written = s.is_ok() || m.id < journal_->next_id();
    if (written) {
      out.journaled.push_back(m.id);
      backlog_.pop_front();
    }
    if (!s.is_ok()) {
      out.error = std::move(s);
      out.failed_id = written ? out.journaled.back() : m.id;
      break;
    }
  }
  out.disk_bytes = journal_->disk_bytes();
  return out;
}

void JournalWorker::append(Message message, std::function<void(Appended)> done) {
  enqueue([this, message = std::move(message), done = std::move(done)](Journal&) mutable {
    backlog_.push_back(std::move(message));
    Appended out = write_backlog();
    complete([done = std::move(done), out = std::move(out)]() mutable { done(std::move(out)); });
  });
}

void JournalWorker::ack(uint64_t up_to, std::function<void(Acked)> done) {
  enqueue([this, up_to, done = std::move(done)](Journal& journal) mutable {
    while (!backlog_.empty() && backlog_.front().id <= up_to) backlog_.pop_front();
    Acked out{journal.ack(up_to), journal.disk_bytes()};
    complete([done = std::move(done), out = std::move(out)]() mutable { done(std::move(out)); });
  });
}

void JournalWorker::read(uint64_t id, std::function<void(Result<std::string>)> done) {
  enqueue([this, id, done = std::move(done)](Journal& journal) mutable {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;   // nobody waits for it
    }
    Result<std::string> frame = journal.read_frame(id);
    complete([done = std::move(done), frame = std::move(frame)]() mutable { done(std::move(frame)); });
  });
}

void JournalWorker::run(std::function<void(Journal&)> job) { enqueue(std::move(job)); }

}  // namespace jetsweep::agent

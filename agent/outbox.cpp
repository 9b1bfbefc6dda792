#include "agent/outbox.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "common/log.hpp"

namespace jetsweep::agent {

void ProducerGate::posted() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++posted_;
}

void ProducerGate::taken() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (posted_ > 0) --posted_;
  }
  room_.notify_all();
}

void ProducerGate::set_full(bool full) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (full_ == full) return;
    full_ = full;
  }
  room_.notify_all();
}

double ProducerGate::wait_for_room(const std::atomic<bool>& cancel) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (cancel || !(full_ || posted_ > kMaxPosted)) return 0.0;   // room: no wait (exactly 0 in paused_before_s)
  const auto start = std::chrono::steady_clock::now();
  // Woken by the io thread; the timeout only notices `cancel`, which nobody signals through this gate.
  while (!cancel && (full_ || posted_ > kMaxPosted)) room_.wait_for(lock, std::chrono::milliseconds(100));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double ProducerGate::pause_between_epochs(const std::string& agent, int64_t run, const std::atomic<bool>& cancel) {
  const bool was_full = full();
  const double waited = wait_for_room(cancel);
  if (waited >= 1.0)
    JS_LOG_WARN << "agent " << agent << ": run " << run << " paused " << waited << " s between epochs: "
                << (was_full ? "the outbox reached its limit (--journal-max-mb, or --outbox-memory-mb without a journal) "
                               "while results waited for the controller"
                             : "results were produced faster than the agent could journal them");
  return waited;
}

size_t ProducerGate::posted_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return posted_;
}

bool ProducerGate::full() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return full_;
}

Outbox::Outbox(std::shared_ptr<Journal> journal, Limits limits, boost::asio::any_io_executor io, std::string agent)
    : limits_(limits), agent_(std::move(agent)) {
  if (!journal) return;
  for (const auto& m : journal->unacked()) {
    Item it;
    it.id = m.id;
    it.run_id = m.run_id;
    it.run_finished = m.run_finished;
    it.frame_bytes = m.frame_bytes();
    it.disk = Item::Disk::kJournaled;
    bytes_ += it.frame_bytes;
    items_.push_back(std::move(it));
  }
  next_id_ = journal->next_id();
  journal_disk_bytes_ = journal->disk_bytes();
  worker_ = std::make_unique<JournalWorker>(std::move(journal), std::move(io));
  update_gate();
}

Outbox::~Outbox() = default;

template <class T>
std::function<void(T)> Outbox::completion(std::function<void(T)> fn) {
  ++journal_jobs_;
  return [this, alive = std::weak_ptr<int>(alive_), fn = std::move(fn)](T value) mutable {
    if (!alive.lock()) return;
    --journal_jobs_;
    fn(std::move(value));
  };
}

Outbox::Item* Outbox::find(uint64_t id) {
  auto it = std::lower_bound(items_.begin(), items_.end(), id, [](const Item& i, uint64_t v) { return i.id < v; });
  return it != items_.end() && it->id == id ? &*it : nullptr;
}

uint64_t Outbox::add(proto::Body body, bool from_producer) {
  Item it;
  it.id = next_id_++;
  it.run_id = proto::result_run_id(body).value_or(0);
  it.run_finished = std::holds_alternative<proto::RunFinished>(body);
  std::string type(proto::type_name(body));
  it.frame = std::make_shared<const std::string>(proto::encode(proto::Envelope{it.id, std::move(body)}));
  it.frame_bytes = it.frame->size();
  // Held in memory until written (and sent from there if it cannot be): with a journal, sendable once written.
  it.disk = worker_ ? Item::Disk::kWriting : Item::Disk::kNotJournaled;
  unjournaled_bytes_ += it.frame_bytes;
  bytes_ += it.frame_bytes;
  const uint64_t id = it.id;
  if (worker_) {
    worker_->append(JournalWorker::Message{it.id, it.run_id, it.run_finished, std::move(type), it.frame},
                    completion<JournalWorker::Appended>([this, id, from_producer](JournalWorker::Appended out) {
                      appended(out, id, from_producer);
                    }));
  } else if (from_producer) {
    gate_.taken();
  }
  items_.push_back(std::move(it));
  update_gate();
  return id;
}

void Outbox::appended(const JournalWorker::Appended& out, uint64_t id, bool from_producer) {
  journal_disk_bytes_ = out.disk_bytes;
  for (uint64_t j : out.journaled) {
    Item* it = find(j);
    if (!it || it->disk == Item::Disk::kJournaled) continue;   // acked meanwhile
    it->disk = Item::Disk::kJournaled;
    unjournaled_bytes_ -= it->frame_bytes;
    if (memory_bytes() + it->frame_bytes <= limits_.memory_bytes) {
      kept_bytes_ += it->frame_bytes;
    } else {
      it->frame.reset();   // on disk only: read back when sent
    }
  }
  if (Item* it = find(id); it && it->disk == Item::Disk::kWriting) {
    it->disk = Item::Disk::kNotJournaled;   // behind a message the disk refused: held, sent from memory
  }
  if (!out.error.is_ok()) {
    JS_LOG_ERROR << "agent " << agent_ << ": journal append of result message #" << out.failed_id << ": "
                 << out.error.to_string() << "; it and the messages after it are kept in memory and sent, and "
                 << "journaled when the journal can write";
  }
  if (from_producer) gate_.taken();
  update_gate();
  ready();
}

void Outbox::ack(uint64_t up_to) {
  uint64_t popped = 0;
  while (!items_.empty() && items_.front().id <= up_to) {
    const Item& it = items_.front();
    bytes_ -= it.frame_bytes;
    if (it.frame) {
      if (it.read_back) read_back_bytes_ -= it.frame_bytes;
      else if (it.disk == Item::Disk::kJournaled) kept_bytes_ -= it.frame_bytes;
      else unjournaled_bytes_ -= it.frame_bytes;
    }
    if (sent_ > 0) {
      --sent_;
      if (!it.lost) in_flight_bytes_ -= it.frame_bytes;
    }
    popped = it.id;
    items_.pop_front();
  }
  if (popped) journal_ack(up_to);
  forget_leading_lost();
  update_gate();
}

void Outbox::journal_ack(uint64_t up_to) {
  if (!worker_) return;
  worker_->ack(up_to, completion<JournalWorker::Acked>([this, up_to](JournalWorker::Acked out) {
    journal_disk_bytes_ = out.disk_bytes;
    if (!out.error.is_ok())
      JS_LOG_ERROR << "agent " << agent_ << ": journal ack up to #" << up_to << ": " << out.error.to_string()
                   << " (the messages may be resent after a restart; the controller acks them as duplicates)";
    update_gate();
  }));
}

void Outbox::forget_leading_lost() {
  uint64_t up_to = 0;
  while (!items_.empty() && items_.front().lost && sent_ > 0) {
    bytes_ -= items_.front().frame_bytes;
    up_to = items_.front().id;
    --sent_;
    items_.pop_front();
  }
  if (up_to) journal_ack(up_to);
}

void Outbox::restart_sending() {
  sent_ = 0;
  in_flight_bytes_ = 0;
  read_failed_.clear();   // the next connection reads them again
}

Result<std::optional<Outbox::Frame>> Outbox::next_to_send() {
  while (sent_ < items_.size()) {
    Item& it = items_[sent_];
    if (it.lost) {   // passed over: it takes no room in the window
      ++sent_;
      forget_leading_lost();
      continue;
    }
    // The window: at least one message is always allowed, however large.
    if (in_flight_bytes_ > 0 && in_flight_bytes_ + it.frame_bytes > limits_.send_window_bytes)
      return std::optional<Frame>();
    if (it.disk == Item::Disk::kWriting) return std::optional<Frame>();   // sendable once written
    if (!it.frame) {
      if (auto failed = read_failed_.find(it.id); failed != read_failed_.end()) {
        Status error = std::move(failed->second);
        read_failed_.erase(failed);
        return error;   // everything before it is sent; the caller drops the connection, the next one reads again
      }
      if (!it.reading) read_ahead();
      return std::optional<Frame>();   // sendable once read back
    }
    ++sent_;
    in_flight_bytes_ += it.frame_bytes;
    Frame frame = it.frame;
    if (it.read_back) {   // sent: the journal keeps it, memory does not
      it.read_back = false;
      read_back_bytes_ -= it.frame_bytes;
      it.frame.reset();
    }
    return std::optional<Frame>(std::move(frame));
  }
  return std::optional<Frame>();
}

void Outbox::read_ahead() {
  uint64_t ahead = in_flight_bytes_;
  for (size_t i = sent_; i < items_.size(); ++i) {
    Item& it = items_[i];
    if (it.lost) continue;
    if (i > sent_ && ahead + it.frame_bytes > limits_.send_window_bytes) break;
    ahead += it.frame_bytes;
    if (it.frame || it.reading || it.disk != Item::Disk::kJournaled) continue;
    it.reading = true;
    const uint64_t id = it.id;
    worker_->read(id, completion<Result<std::string>>([this, id](Result<std::string> frame) {
      read_back(id, std::move(frame));
    }));
  }
}

void Outbox::read_back(uint64_t id, Result<std::string> frame) {
  Item* it = find(id);
  if (!it) return;   // acked meanwhile
  it->reading = false;
  if (frame) {
    if (!it->frame) {
      it->frame = std::make_shared<const std::string>(std::move(frame).value());
      it->read_back = true;
      read_back_bytes_ += it->frame_bytes;
    }
  } else if (frame.status().code() != Code::kInvalidArgument) {
    read_failed_.emplace(id, frame.status());   // reading failed: an error once the sending reaches it
  } else if (!it->lost) {
    it->lost = true;
    ++lost_;
    const int64_t run = it->run_id;
    const bool run_finished = it->run_finished;
    JS_LOG_ERROR << "agent " << agent_ << ": result message #" << id << " of run " << run
                 << " is damaged in the journal and lost (" << frame.status().message()
                 << "); the messages after it are sent" << (run_finished ? "; the run is reported failed in its place" : "");
    if (run_finished)
      add(proto::RunFinished{run, "failed",
                             "its run_finished (message #" + std::to_string(id) + ") was damaged in the agent's journal",
                             0});
  }
  ready();
}

bool Outbox::run_on_journal_thread(std::function<void(Journal&)> job) {
  if (!worker_) return false;
  worker_->run(std::move(job));
  return true;
}

void Outbox::ready() {
  if (ready_) ready_();
}

proto::Heartbeat Outbox::heartbeat(std::string state, std::optional<int64_t> run) const {
  return proto::Heartbeat{std::move(state), run, static_cast<int64_t>(items_.size()), static_cast<int64_t>(bytes_)};
}

std::vector<int64_t> Outbox::runs() const {
  std::set<int64_t> runs;
  for (const auto& it : items_) runs.insert(it.run_id);
  return {runs.begin(), runs.end()};
}

bool Outbox::full() const {
  return unjournaled_bytes_ >= limits_.memory_bytes || (worker_ && journal_disk_bytes_ >= limits_.journal_bytes);
}

void Outbox::update_gate() { gate_.set_full(full()); }

}  // namespace jetsweep::agent

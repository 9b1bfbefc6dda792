#include "agent/outbox.hpp"

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

Outbox::Outbox(std::shared_ptr<Journal> journal, Limits limits) : journal_(std::move(journal)), limits_(limits) {
  if (!journal_) return;
  for (const auto& m : journal_->unacked()) {
    Item it;
    it.id = m.id;
    it.run_id = m.run_id;
    it.run_finished = m.run_finished;
    it.frame_bytes = m.frame_bytes();
    it.journaled = true;
    bytes_ += it.frame_bytes;
    items_.push_back(std::move(it));
  }
  next_id_ = journal_->next_id();
  update_gate();
}

uint64_t Outbox::add(proto::Body body, Status& journal_error) {
  Item it;
  it.id = next_id_++;
  it.run_id = proto::result_run_id(body).value_or(0);
  it.run_finished = std::holds_alternative<proto::RunFinished>(body);
  const std::string type(proto::type_name(body));
  it.frame = proto::encode(proto::Envelope{it.id, std::move(body)});
  it.frame_bytes = it.frame.size();
  journal_error = Status::ok();
  if (journal_) {
    // Written (and synced per the journal's policy) before it can reach the controller; after the messages that
    // could not be written before it (a full disk), so the journal never holds a later message without an earlier.
    journal_error = journal_backlog();
    if (journal_error.is_ok()) journal_error = journal(it, type);
  }
  if (it.journaled && memory_bytes_ + it.frame_bytes > limits_.memory_bytes) {
    it.frame.clear();
    it.frame.shrink_to_fit();   // on disk only: read back when sent
  } else {
    memory_bytes_ += it.frame_bytes;
    if (!it.journaled) {
      unjournaled_bytes_ += it.frame_bytes;
      ++unjournaled_items_;
    }
  }
  bytes_ += it.frame_bytes;
  const uint64_t id = it.id;
  items_.push_back(std::move(it));
  update_gate();
  return id;
}

Status Outbox::journal(Item& it, std::string_view type) {
  JournalEntry entry{it.id, it.run_id, it.run_finished, std::move(it.frame)};   // lent, not copied
  Status s = journal_->append(entry, type);
  it.frame = std::move(entry.frame);
  // Written but not synced (fdatasync failed) is in the file all the same: journaled, never appended twice.
  it.journaled = s.is_ok() || it.id < journal_->next_id();
  return s;
}

Status Outbox::journal_backlog() {
  if (unjournaled_items_ == 0) return Status::ok();
  for (Item& it : items_) {
    if (it.journaled || it.lost) continue;
    Status s = journal(it, "");   // its kind is not kept; the backlog is synced as a whole below
    if (it.journaled) {
      --unjournaled_items_;
      unjournaled_bytes_ -= it.frame_bytes;   // still held in memory until acked, now journaled too
    }
    if (!s.is_ok()) {
      update_gate();
      return s;
    }
    if (unjournaled_items_ == 0) break;
  }
  update_gate();
  return journal_->sync();
}

Status Outbox::ack(uint64_t up_to) {
  while (!items_.empty() && items_.front().id <= up_to) {
    const Item& it = items_.front();
    bytes_ -= it.frame_bytes;
    if (!it.frame.empty()) memory_bytes_ -= it.frame_bytes;
    if (!it.frame.empty() && !it.journaled) {
      unjournaled_bytes_ -= it.frame_bytes;
      --unjournaled_items_;
    }
    if (sent_ > 0) {
      --sent_;
      if (!it.lost) in_flight_bytes_ -= it.frame_bytes;
    }
    items_.pop_front();
  }
  Status s = journal_ ? journal_->ack(up_to) : Status::ok();
  if (s.is_ok()) s = forget_leading_lost();
  update_gate();
  return s;
}

Status Outbox::forget_leading_lost() {
  uint64_t up_to = 0;
  while (!items_.empty() && items_.front().lost && sent_ > 0) {
    bytes_ -= items_.front().frame_bytes;
    up_to = items_.front().id;
    --sent_;
    items_.pop_front();
  }
  return up_to && journal_ ? journal_->ack(up_to) : Status::ok();
}

void Outbox::restart_sending() {
  sent_ = 0;
  in_flight_bytes_ = 0;
}

Result<std::optional<std::string>> Outbox::next_to_send(const std::string& agent) {
  while (sent_ < items_.size()) {
    Item& it = items_[sent_];
    if (it.lost) {   // passed over: it takes no room in the window
      ++sent_;
      JS_RETURN_IF_ERROR(forget_leading_lost());
      continue;
    }
    // The window: at least one message is always allowed, however large.
    if (in_flight_bytes_ > 0 && in_flight_bytes_ + it.frame_bytes > limits_.send_window_bytes)
      return std::optional<std::string>();
    if (!it.frame.empty()) {
      ++sent_;
      in_flight_bytes_ += it.frame_bytes;
      return std::optional<std::string>(it.frame);
    }
    auto frame = journal_->read_frame(it.id);
    if (frame) {
      ++sent_;
      in_flight_bytes_ += it.frame_bytes;
      return std::optional<std::string>(std::move(frame).value());
    }
    if (frame.status().code() != Code::kInvalidArgument) return frame.status();   // reading failed: retried
    it.lost = true;
    ++lost_;
    ++sent_;
    const uint64_t id = it.id;
    const int64_t run = it.run_id;
    const bool run_finished = it.run_finished;
    JS_LOG_ERROR << "agent " << agent << ": result message #" << id << " of run " << run
                 << " is damaged in the journal and lost (" << frame.status().message() << "); the messages after it "
                 << "are sent" << (run_finished ? "; the run is reported failed in its place" : "");
    JS_RETURN_IF_ERROR(forget_leading_lost());
    if (run_finished) {
      Status journal_error;
      add(proto::RunFinished{run, "failed",
                             "its run_finished (message #" + std::to_string(id) + ") was damaged in the agent's journal",
                             0},
          journal_error);
      JS_RETURN_IF_ERROR(journal_error);
    }
  }
  return std::optional<std::string>();
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
  return unjournaled_bytes_ >= limits_.memory_bytes || (journal_ && journal_->disk_bytes() >= limits_.journal_bytes);
}

void Outbox::update_gate() { gate_.set_full(full()); }

}  // namespace jetsweep::agent

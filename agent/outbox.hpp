// Outbox: the agent's result messages from the moment they are produced until the controller acks them, in
// bounded memory (issue 29). Each message is journaled first (agent/journal.hpp, when there is a journal, on its
// own thread: agent/journal_worker.hpp); its frame stays in memory only while the frames held fit
// `memory_bytes`, and is read back from the journal (on that thread, a window ahead) when it is sent or resent
// otherwise. The io thread never touches the disk. Sending is windowed: at most `send_window_bytes` are sent and not yet acked on a
// connection, so the frames in the socket's write queue stay bounded too and a control message (heartbeat,
// clock-probe reply) never waits behind more than a window of results. Without a journal every frame stays in
// memory until acked.
//
// Back-pressure reaches the producer through ProducerGate: the training thread waits between epochs (never
// inside one, where it would be timed) while too many of its messages are still to be journaled, or
// while the outbox is full (the journal over `journal_bytes` on disk, or, without a journal, frames over
// `memory_bytes` in memory): the run pauses, nothing is dropped.
//
// Threads: Outbox is io-thread only (its journal completions are posted there); ProducerGate is the one part the
// training thread touches.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/journal.hpp"
#include "agent/journal_worker.hpp"
#include "common/protocol.hpp"

namespace jetsweep::agent {

// ProducerGate: the count of results posted to the io thread and not yet journaled, and whether the outbox is
// full. Thread-safe: the training thread posts and waits, the io thread takes in and sets `full`.
class ProducerGate {
 public:
  // Results posted and not yet journaled before the producer waits (a sample chunk is up to ~1 MB in memory).
  static constexpr size_t kMaxPosted = 8;

  void posted();                  // training thread, before posting a result
  void taken();                   // io thread, once the result is journaled (or held: no journal)
  void set_full(bool full);       // io thread
  // Training thread: waits while more than kMaxPosted results wait to be journaled or the outbox is full, until
  // `cancel` is set. Returns the seconds it waited.
  double wait_for_room(const std::atomic<bool>& cancel);
  // wait_for_room, logging a pause of a second or more with its cause (agent `agent`, run `run`). Returns the
  // seconds it waited.
  double pause_between_epochs(const std::string& agent, int64_t run, const std::atomic<bool>& cancel);
  size_t posted_count() const;
  bool full() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable room_;
  size_t posted_ = 0;
  bool full_ = false;
};

class Outbox {
 public:
  struct Limits {
    uint64_t memory_bytes = 64u << 20;         // result frames held in memory
    uint64_t journal_bytes = 2048ull << 20;    // journal disk use at which the producer pauses
    uint64_t send_window_bytes = 4u << 20;     // sent and not yet acked on one connection
  };
  using Frame = std::shared_ptr<const std::string>;
  // Starts with the messages the journal holds unacknowledged (frames left on disk); from here on the journal is
  // the outbox's JournalWorker's alone. Completions run on `io` (the io thread); `agent` names the agent in logs.
  Outbox(std::shared_ptr<Journal> journal, Limits limits, boost::asio::any_io_executor io, std::string agent);
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Called on the io thread when a message may have become sendable (written, or read back) or reading failed:
  // the agent's write loop asks next_to_send() again.
  void on_ready(std::function<void()> ready) { ready_ = std::move(ready); }

  // Encodes `body` with the next id and keeps it until acked; returns its id. With a journal it is sendable once
  // the journal thread has written it (or failed to: then it is held in memory, sent all the same, and journaled
  // before any later message once the disk takes writes again; the failure is logged). `from_producer`: posted
  // by the training thread through gate() (its place there is given back once written).
  uint64_t add(proto::Body body, bool from_producer = false);
  // The controller committed every message with id <= up_to (forgotten here at once; in the journal in order
  // with the appends before it; a journal error is logged).
  void ack(uint64_t up_to);
  // A new connection: everything unacknowledged is to be sent again, oldest first.
  void restart_sending();
  // The next frame to send on this connection, never waiting: nullopt when the window is full, everything is
  // sent, or the next message is still being written or read back (on_ready fires when it is); an error when
  // its frame could not be read from the journal (the caller drops the connection and the next one reads it
  // again). A record
  // damaged on disk never reads back: it is logged once as lost (naming the agent, its id and run), counted in
  // lost(), passed over without taking room in the window, and forgotten (acked in the journal) once everything
  // before it is acked; when it was a run's run_finished, a run_finished "failed" naming the loss takes its
  // place, so the run still ends.
  Result<std::optional<Frame>> next_to_send();
  int64_t lost() const { return lost_; }

  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  uint64_t bytes() const { return bytes_; }                    // frames unacknowledged
  // Frames held in memory: kept (within memory_bytes), not yet journaled, and read back for sending (within
  // the send window).
  uint64_t memory_bytes() const { return kept_bytes_ + unjournaled_bytes_ + read_back_bytes_; }
  uint64_t in_flight_bytes() const { return in_flight_bytes_; }
  uint64_t journal_disk_bytes() const { return journal_disk_bytes_; }   // as of the last journal completion
  // Journal jobs posted whose completion has not run yet (tests wait for 0).
  size_t journal_jobs() const { return journal_jobs_; }
  uint64_t next_id() const { return next_id_; }
  uint64_t last_id() const { return next_id_ - 1; }
  std::vector<int64_t> runs() const;   // runs with unacknowledged messages
  // A heartbeat in `state` (running `run`) that reports this outbox's backlog.
  proto::Heartbeat heartbeat(std::string state, std::optional<int64_t> run) const;
  // Over its bound: the journal's disk use over journal_bytes, or frames not (yet) journaled over memory_bytes.
  bool full() const;
  ProducerGate& gate() { return gate_; }
  const Limits& limits() const { return limits_; }
  // Runs `job` on the journal thread in order with the outbox's own jobs (tests: a disk that stalls); false
  // without a journal.
  bool run_on_journal_thread(std::function<void(Journal&)> job);

 private:
  // A message in the outbox: its frame is held in memory or read back from the journal.
  struct Item {
    enum class Disk { kWriting, kJournaled, kNotJournaled };
    uint64_t id = 0;
    int64_t run_id = 0;
    bool run_finished = false;
    uint64_t frame_bytes = 0;
    Frame frame;              // null when on disk only
    Disk disk = Disk::kNotJournaled;
    bool read_back = false;   // `frame` was read back to be sent: dropped once sent
    bool reading = false;     // a read of its frame is queued
    bool lost = false;        // damaged in the journal: never sent
  };
  Item* find(uint64_t id);
  void appended(const JournalWorker::Appended& out, uint64_t id, bool from_producer);
  void read_back(uint64_t id, Result<std::string> frame);
  // Queues reads of the disk-only frames from items_[sent_] on, within a send window.
  void read_ahead();
  // Forgets lost items at the front (everything before them is acked), acking them in the journal.
  void forget_leading_lost();
  void journal_ack(uint64_t up_to);
  // Runs a completion for the outbox: nothing when the outbox is gone.
  template <class T>
  std::function<void(T)> completion(std::function<void(T)> fn);
  void update_gate();
  void ready();

  Limits limits_;
  std::string agent_;
  std::deque<Item> items_;   // in id order
  size_t sent_ = 0;          // items_[0, sent_) sent on this connection
  uint64_t bytes_ = 0;
  uint64_t kept_bytes_ = 0;          // journaled frames kept in memory
  uint64_t unjournaled_bytes_ = 0;   // frames being written or that could not be written: held in memory
  uint64_t read_back_bytes_ = 0;
  uint64_t in_flight_bytes_ = 0;
  uint64_t journal_disk_bytes_ = 0;
  uint64_t next_id_ = 1;
  int64_t lost_ = 0;
  size_t journal_jobs_ = 0;
  std::map<uint64_t, Status> read_failed_;   // frames whose read failed (not damaged: may pass), by id
  std::function<void()> ready_;
  ProducerGate gate_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);   // completions hold it weakly
  std::unique_ptr<JournalWorker> worker_;   // last: its thread stops before the rest goes
};

}  // namespace jetsweep::agent

// JournalWorker: owns the agent's Journal and the one thread that touches it, so that the io thread never waits
// on the disk (issue 29: a write(2) throttled by dirty pages, an fdatasync on an SD card, a compaction, a frame
// read back from a cold file). Jobs run one at a time in the order they were posted; each one's completion is
// posted to the executor it names, in the same order.
//
// Appends keep the journal's rule "never a later message without an earlier one": a message that cannot be
// written (a full disk) stays in the worker's backlog with every message after it, and each later append first
// writes the backlog, oldest first, stopping at the first that fails again. An ack forgets backlog messages it
// covers (the controller has them).
//
// Threads: post from one thread (the agent's io thread; tests: theirs); the Journal only on the worker thread.
// Destruction finishes the appends and acks already queued (reads are skipped) and posts no more completions.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/journal.hpp"
#include "common/status.hpp"

namespace jetsweep::agent {

class JournalWorker {
 public:
  // A message to append; its frame is shared with the outbox (immutable), never copied.
  struct Message {
    uint64_t id = 0;
    int64_t run_id = 0;
    bool run_finished = false;
    std::string type;   // its message type: the journal syncs after epoch_result and run_finished
    std::shared_ptr<const std::string> frame;
  };
  // What an append did: the messages now in the journal (the backlog's first, in id order), and the first
  // failure (the message `failed_id` and every later one stay in the backlog).
  struct Appended {
    std::vector<uint64_t> journaled;
    Status error;
    uint64_t failed_id = 0;
    uint64_t disk_bytes = 0;   // the journal's disk use afterwards
  };
  struct Acked {
    Status error;
    uint64_t disk_bytes = 0;
  };

  // Starts the thread; from here on only it touches `journal`.
  JournalWorker(std::shared_ptr<Journal> journal, boost::asio::any_io_executor ex);
  ~JournalWorker();
  JournalWorker(const JournalWorker&) = delete;
  JournalWorker& operator=(const JournalWorker&) = delete;

  void append(Message message, std::function<void(Appended)> done);
  // Every message with id <= up_to is committed.
  void ack(uint64_t up_to, std::function<void(Acked)> done);
  // The frame of journaled message `id` (Journal::read_frame's errors).
  void read(uint64_t id, std::function<void(Result<std::string>)> done);
  // Runs `job` on the worker thread, in order with the rest (tests: a disk that stalls).
  void run(std::function<void(Journal&)> job);

 private:
  using Job = std::function<void(Journal&)>;
  void enqueue(Job job);
  void loop();
  // Posts `completion` to the executor unless the worker is being destroyed.
  void complete(std::function<void()> completion);
  Appended write_backlog();   // worker thread

  std::shared_ptr<Journal> journal_;
  boost::asio::any_io_executor ex_;
  std::deque<Message> backlog_;   // worker thread: messages not yet written, in id order
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace jetsweep::agent

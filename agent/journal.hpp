// The agent's on-disk journal of result messages ("nothing lost, nothing twice", issue 5).
//
// Directory layout (one directory per agent name):
//   DIR/lock          flock(2)ed while an agent has the journal open; holds that agent's pid
//   DIR/journal.bin   "JSJRNL01" magic, then records: u32 payload length | u32 CRC-32 of the payload | payload
// Payload kinds (first byte; integers little-endian):
//   'H' header:  u64 next_id | agent name                   (first record; written only by compaction)
//   'M' message: u64 id | i64 run_id | u8 is_run_finished | the encoded envelope frame
//   'A' ack:     u64 up_to                                  (every message with id <= up_to is committed)
// A last record whose length runs past the end of the file or whose CRC does not match is dropped (logged): a
// record torn by a crash. A damaged record with intact ones after it (a failing disk) is skipped, alone: reading
// resumes at the next record whose length, kind and CRC check out. Zeros
// where a record should start are acked space given back (below): reading resumes at the next intact record
// (found by its checksum) or, when only zeros follow, they are a torn tail.
//
// Durability (fsync policy): every message is written (one writev(2)) before it is sent, so it survives the
// agent process dying at any point. fdatasync(2) runs after every run_finished and every epoch_result, and
// after minibatch/sample chunks once kSyncBytes of them are unsynced (otherwise they ride on the next epoch's
// sync), so an OS crash or power loss can lose at most the current epoch's chunks - of a run without its
// run_finished, which the controller reruns anyway. Ack records are not synced: losing one only means
// resending messages the controller already has (it acknowledges them as duplicates). Compaction writes a new
// file, syncs it, renames it over the old one and syncs the directory.
//
// Bounded memory (issue 29): the journal keeps only each unacknowledged message's id, run and place in the file;
// frames are read back from disk (read_frame) when they are sent or resent. Opening, compaction and replay stream
// record by record, so a journal of gigabytes needs no more memory than its largest record. Disk: the space of
// acknowledged records is given back as they are acked (fallocate PUNCH_HOLE over the acked prefix; where the
// file system cannot, by compaction once acked bytes outweigh the unacked ones), and the whole file is compacted
// to its header once everything is acked. disk_bytes() is what it occupies; the agent's outbox pauses the run
// between epochs while it is over the agent's limit (agent/outbox.hpp).
//
// Message ids keep increasing across restarts: the header carries the next id at compaction time and the
// next id after opening is above every id and ack in the file (plus kIdGapAfterDroppedTail when a tail was
// dropped).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/protocol.hpp"
#include "common/status.hpp"

namespace jetsweep::agent {

// A result message kept until the controller acks it.
struct JournalEntry {
  uint64_t id = 0;
  int64_t run_id = 0;
  bool run_finished = false;
  std::string frame;   // proto::encode(Envelope{id, body})
};

// Journal: owns DIR/journal.bin and the DIR/lock flock. Not thread-safe: the agent uses it only on its journal
// thread (agent/journal_worker.hpp), once opened; tests from one thread.
class Journal {
 public:
  static constexpr uint64_t kSyncBytes = 1u << 20;          // unsynced chunk bytes that force an fdatasync
  static constexpr uint64_t kCompactMinBytes = 64u << 10;   // all acked and the file is larger: rewrite it
  // Without PUNCH_HOLE: acked bytes over this that also outweigh the unacked ones force a compaction.
  static constexpr uint64_t kCompactAckedBytes = 4u << 20;
  // Ids skipped after a torn or corrupt tail was dropped: unsynced records lost with it (at most kSyncBytes of
  // them, or an epoch's chunks) may have been sent, and their ids are never reused.
  static constexpr uint64_t kIdGapAfterDroppedTail = 1u << 16;

  // An unacknowledged message: its frame is read back with read_frame(id).
  struct Message {
    uint64_t id = 0;
    int64_t run_id = 0;
    bool run_finished = false;
    uint64_t offset = 0;   // of the record (its length field) in the file
    uint64_t bytes = 0;    // whole record
    uint64_t frame_bytes() const;
  };

  // What open() found in an existing journal.
  struct Recovery {
    size_t entries = 0;              // unacknowledged messages recovered (including synthetic run_finished)
    size_t dropped_bytes = 0;        // torn or corrupt tail dropped, and damaged records skipped
    size_t damaged_records = 0;      // damaged records mid-file skipped (the records after them kept)
    std::vector<int64_t> cancelled;  // runs without run_finished: a cancelled run_finished was appended
  };

  // Opens (creating if needed) the journal of agent `name` in `dir`: takes the lock (an error naming the
  // holder's pid when another agent has it), reads and compacts the file, and appends a
  // RunFinished{run, "cancelled", "agent restarted mid-run"} for every run with unacknowledged results but
  // no run_finished. The recovered messages are in unacked(), in id order.
  static Result<std::unique_ptr<Journal>> open(const std::string& dir, const std::string& name);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::string& dir() const { return dir_; }
  const Recovery& recovery() const { return recovery_; }
  // Unacknowledged messages (recovered at open(), then appended), in id order.
  const std::deque<Message>& unacked() const { return live_; }
  // The frame of unacknowledged message `id`, read back from disk: kIoError when reading fails (may pass),
  // kInvalidArgument when the record on disk is damaged (its checksum, kind or id do not match: it never will).
  Result<std::string> read_frame(uint64_t id) const;
  // Every unacknowledged message with its frame (tests and tools: the agent reads them one at a time).
  Result<std::deque<JournalEntry>> read_unacked() const;
  // The first id not used by any message in the journal.
  uint64_t next_id() const { return next_id_; }

  // Appends a message (its id must be >= next_id()); syncs per the policy above. On error the message is
  // not in the journal (the caller keeps it in memory).
  Status append(const JournalEntry& entry, std::string_view type);
  Status append(uint64_t id, int64_t run_id, bool run_finished, std::string_view frame, std::string_view type);
  // Every message with id <= up_to is committed: forgets them, compacting the file when they dominate.
  Status ack(uint64_t up_to);
  // fdatasync now.
  Status sync();

  // Runs with unacknowledged messages in the journal.
  std::vector<int64_t> unacked_runs() const;
  size_t unacked_count() const { return live_.size(); }
  uint64_t unacked_bytes() const { return live_bytes_; }
  // The file's length, and the space it occupies (its length less the acked ranges given back).
  uint64_t file_bytes() const { return file_bytes_; }
  uint64_t disk_bytes() const { return file_bytes_ - punched_bytes_; }

 private:
  Journal(std::string dir, std::string name, int lock_fd);
  // Reads the file record by record: the unacknowledged messages (with their place in `fd`) into `kept`.
  Status load(int fd, std::deque<Message>& kept);
  // Where records resume after zeros at `pos` (acked space given back); nullopt when only zeros follow.
  Result<std::optional<uint64_t>> record_after_hole(int fd, uint64_t pos, uint64_t size) const;
  // A damaged record at `pos` with intact ones after it: counted, logged, skipped; the next record's offset, or
  // nullopt when none follows (a damaged tail).
  Result<std::optional<uint64_t>> skip_damaged_record(int fd, uint64_t pos, uint32_t len, uint64_t size,
                                                      const std::string& problem);
  // The offset of the first intact record after the damaged one at `pos` (length field `len`), or nullopt.
  Result<std::optional<uint64_t>> record_after_damage(int fd, uint64_t pos, uint32_t len, uint64_t size) const;
  // Whether an intact record (length in range, known kind, CRC-32) starts at `offset`.
  Result<bool> intact_record_at(int fd, uint64_t offset, uint64_t size) const;
  Status write_record(const std::string& payload, uint64_t& offset);
  // A record whose payload is `payload` followed by `tail`, written without joining them.
  Status write_record(std::string_view payload, std::string_view tail, uint64_t& offset);
  // Writes header + the records of `kept` (copied from `from_fd`) + `extra` to a new file, renamed over
  // journal.bin; streams, record by record.
  Status rewrite(int from_fd, const std::deque<Message>& kept, const std::deque<JournalEntry>& extra);
  Status compact();
  // Gives back the disk space of the acked prefix of the file (punch_supported_ false once it fails).
  void release_acked_space();
  std::string path() const;

  std::string dir_;
  std::string name_;
  int lock_fd_ = -1;
  int fd_ = -1;
  uint64_t next_id_ = 1;
  uint64_t file_bytes_ = 0;
  uint64_t live_bytes_ = 0;
  uint64_t unsynced_bytes_ = 0;
  uint64_t data_start_ = 0;      // offset of the first record after the header
  uint64_t punched_bytes_ = 0;   // [data_start_, data_start_ + punched_bytes_) given back to the file system
  bool punch_supported_ = true;
  std::deque<Message> live_;
  Recovery recovery_;
};

}  // namespace jetsweep::agent

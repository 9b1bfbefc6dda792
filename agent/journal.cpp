#include "agent/journal.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "common/log.hpp"

namespace jetsweep::agent {
namespace {

constexpr char kMagic[8] = {'J', 'S', 'J', 'R', 'N', 'L', '0', '1'};
constexpr size_t kRecordHead = 8;                       // u32 length + u32 crc
constexpr uint32_t kMaxPayload = proto::kMaxFrameBytes + 64;
constexpr char kHeader = 'H';
constexpr char kMessage = 'M';
constexpr char kAck = 'A';

std::string errno_text() { return std::strerror(errno); }

void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// CRC-32 of `payload` followed by `tail`: a record's checksum covers both (a message's frame is its tail).
uint32_t checksum(std::string_view payload, std::string_view tail = {}) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // (Empty parts are skipped: zlib's crc32 of a null buffer is its initial value, not `crc`.)
  for (std::string_view part : {payload, tail})
    if (!part.empty()) crc = crc32(crc, reinterpret_cast<const Bytef*>(part.data()), static_cast<uInt>(part.size()));
  return static_cast<uint32_t>(crc);
}

// A record's head (length and checksum of payload + tail) followed by `payload`; the tail goes after it.
std::string record_head(std::string_view payload, std::string_view tail = {}) {
  std::string r;
  r.reserve(kRecordHead + payload.size());
  put_u32(r, static_cast<uint32_t>(payload.size() + tail.size()));
  put_u32(r, checksum(payload, tail));
  r += payload;
  return r;
}
std::string record(const std::string& payload) { return record_head(payload); }

std::string message_payload(uint64_t id, int64_t run_id, bool run_finished, std::string_view frame) {
  std::string p(1, kMessage);
  p.reserve(18 + frame.size());
  put_u64(p, id);
  put_u64(p, static_cast<uint64_t>(run_id));
  p.push_back(run_finished ? 1 : 0);
  p += frame;
  return p;
}

std::string message_payload(const JournalEntry& e) { return message_payload(e.id, e.run_id, e.run_finished, e.frame); }

std::string header_payload(uint64_t next_id, const std::string& name) {
  std::string p(1, kHeader);
  put_u64(p, next_id);
  p += name;
  return p;
}

// Writes `first` then `second` (may be empty) at the file's offset: one writev(2) unless the kernel takes less.
Status write_all(int fd, std::string_view first, std::string_view second, const std::string& what) {
  iovec parts[2] = {{const_cast<char*>(first.data()), first.size()}, {const_cast<char*>(second.data()), second.size()}};
  int at = 0;
  const int count = second.empty() ? 1 : 2;
  while (at < count) {
    ssize_t n = ::writev(fd, parts + at, count - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(what + ": write: " + errno_text());
    size_t done = static_cast<size_t>(n);
    while (at < count && done >= parts[at].iov_len) done -= parts[at++].iov_len;
    if (at < count) {   // a short write: the rest of this part, from where it stopped
      parts[at].iov_base = static_cast<char*>(parts[at].iov_base) + done;
      parts[at].iov_len -= done;
    }
  }
  return Status::ok();
}
Status write_all(int fd, std::string_view data, const std::string& what) { return write_all(fd, data, {}, what); }

Status sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error(dir + ": open: " + errno_text());
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  if (rc != 0) return io_error(dir + ": fsync: " + std::strerror(saved));
  return Status::ok();
}

}  // namespace

Journal::Journal(std::string dir, std::string name, int lock_fd)
    : dir_(std::move(dir)), name_(std::move(name)), lock_fd_(lock_fd) {}

Journal::~Journal() {
  if (fd_ >= 0) {
    if (unsynced_bytes_ > 0) ::fdatasync(fd_);
    ::close(fd_);
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);   // releases the flock
}

std::string Journal::path() const { return dir_ + "/journal.bin"; }

Result<std::unique_ptr<Journal>> Journal::open(const std::string& dir, const std::string& name) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("journal directory " + dir + ": " + ec.message());
  const std::string lock_path = dir + "/lock";
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return io_error("journal lock " + lock_path + ": open: " + errno_text());
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    const int saved = errno;
    char buf[32] = {};
    ssize_t n = ::pread(lock_fd, buf, sizeof(buf) - 1, 0);
    ::close(lock_fd);
    if (saved != EWOULDBLOCK) return io_error("journal lock " + lock_path + ": flock: " + std::strerror(saved));
    std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
    holder.erase(std::remove(holder.begin(), holder.end(), '\n'), holder.end());
    return Status(Code::kAlreadyExists,
                  "journal directory " + dir + " is in use by another jetsweep-agent (pid " + holder +
                      "): two agents cannot share the name '" + name +
                      "' or a journal directory; stop the other agent or give this one its own --name/--journal-dir");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd, 0) != 0 || ::pwrite(lock_fd, pid.data(), pid.size(), 0) < 0)
    JS_LOG_WARN << "journal lock " << lock_path << ": cannot record pid: " << errno_text();

  std::unique_ptr<Journal> j(new Journal(dir, name, lock_fd));
  const std::string p = j->path();
  int old_fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (old_fd < 0 && errno != ENOENT) return io_error("journal " + p + ": open: " + errno_text());
  std::deque<Message> kept;
  if (old_fd >= 0) {
    Status loaded = j->load(old_fd, kept);
    if (!loaded.is_ok()) {
      ::close(old_fd);
      return loaded;
    }
  }

  // Runs with results but no run_finished: the agent died mid-run; tell the controller so it reruns them.
  std::set<int64_t> with_results, finished;
  for (const auto& m : kept) {
    with_results.insert(m.run_id);
    if (m.run_finished) finished.insert(m.run_id);
  }
  std::deque<JournalEntry> extra;
  for (int64_t run : with_results) {
    if (finished.count(run)) continue;
    JournalEntry e;
    e.id = j->next_id_++;
    e.run_id = run;
    e.run_finished = true;
    e.frame = proto::encode(proto::Envelope{e.id, proto::RunFinished{run, "cancelled", "agent restarted mid-run", 0}});
    JS_LOG_WARN << "journal " << dir << ": run " << run
                << " has results but no run_finished (the agent stopped mid-run); reporting it cancelled as message #"
                << e.id;
    j->recovery_.cancelled.push_back(run);
    extra.push_back(std::move(e));
  }
  const Status rewritten = j->rewrite(old_fd, kept, extra);
  if (old_fd >= 0) ::close(old_fd);
  JS_RETURN_IF_ERROR(rewritten);
  j->recovery_.entries = j->live_.size();
  if (!j->live_.empty())
    JS_LOG_INFO << "journal " << dir << ": " << j->live_.size() << " unacknowledged result messages (#"
                << j->live_.front().id << "..#" << j->live_.back().id << ", " << j->live_bytes_
                << " bytes) to replay; next id " << j->next_id_;
  return j;
}

uint64_t Journal::Message::frame_bytes() const { return bytes - kRecordHead - 18; }

// Reads `n` bytes at `offset` of `fd` into `out`; false at a short read (the end of the file).
static Status read_at(int fd, uint64_t offset, size_t n, std::string& out, const std::string& what, bool& short_read) {
  out.resize(n);
  size_t done = 0;
  short_read = false;
  while (done < n) {
    ssize_t r = ::pread(fd, out.data() + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return io_error(what + ": read: " + errno_text());
    if (r == 0) {
      short_read = true;
      out.resize(done);
      return Status::ok();
    }
    done += static_cast<size_t>(r);
  }
  return Status::ok();
}

Status Journal::load(int fd, std::deque<Message>& kept) {
  const std::string p = path();
  struct stat st {};
  if (::fstat(fd, &st) != 0) return io_error("journal " + p + ": stat: " + errno_text());
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) return Status::ok();   // created but never written (crash before the first rewrite)
  std::string buf;
  bool short_read = false;
  JS_RETURN_IF_ERROR(read_at(fd, 0, sizeof(kMagic), buf, "journal " + p, short_read));
  if (short_read || std::memcmp(buf.data(), kMagic, sizeof(kMagic)) != 0)
    return invalid_argument("journal " + p + ": not a jetsweep agent journal (bad magic); move it away to start afresh");

  std::map<uint64_t, Message> messages;
  uint64_t acked = 0;
  bool have_header = false;
  uint64_t pos = sizeof(kMagic);
  uint64_t data_start = 0;   // the first record after the header (where a hole may start)
  std::string head, payload;
  while (pos < size) {
    const uint64_t left = size - pos;
    std::string problem;
    uint32_t len = 0;
    if (left < kRecordHead) {
      problem = "truncated record header";
    } else {
      JS_RETURN_IF_ERROR(read_at(fd, pos, kRecordHead, head, "journal " + p, short_read));
      len = get_u32(head.data());
      if (len == 0 && get_u32(head.data() + 4) == 0 && pos == data_start) {
        // Zeros right after the header: acked space given back (release_acked_space, which only ever frees the
        // acked prefix), unless they run to the end (a torn tail). Zeros elsewhere are a torn tail, as before.
        JS_ASSIGN_OR_RETURN(std::optional<uint64_t> next, record_after_hole(fd, pos, size));
        if (next) {
          pos = *next;
          continue;
        }
      }
      if (len == 0 || len > kMaxPayload) problem = "bad record length " + std::to_string(len);
      else if (left - kRecordHead < len) problem = "record of " + std::to_string(len) + " bytes runs past the end";
      else {
        JS_RETURN_IF_ERROR(read_at(fd, pos + kRecordHead, len, payload, "journal " + p, short_read));
        if (short_read || checksum(payload) != get_u32(head.data() + 4)) problem = "checksum mismatch";
      }
    }
    if (problem.empty()) {
      const char* q = payload.data();
      const char kind = q[0];
      if (kind == kHeader && len >= 9) {
        const std::string owner(q + 9, len - 9);
        if (owner != name_)
          return invalid_argument("journal " + p + " belongs to agent '" + owner + "', not '" + name_ +
                                  "': each agent name needs its own --journal-dir");
        next_id_ = std::max(next_id_, get_u64(q + 1));
        have_header = true;
        data_start = pos + kRecordHead + len;
      } else if (kind == kMessage && len >= 18) {
        Message m;
        m.id = get_u64(q + 1);
        m.run_id = static_cast<int64_t>(get_u64(q + 9));
        m.run_finished = q[17] != 0;
        m.offset = pos;
        m.bytes = kRecordHead + len;
        next_id_ = std::max(next_id_, m.id + 1);
        messages[m.id] = m;
      } else if (kind == kAck && len >= 9) {
        acked = std::max(acked, get_u64(q + 1));
        next_id_ = std::max(next_id_, acked + 1);
        // Messages are acked in id order: everything at or below it is gone for good.
        messages.erase(messages.begin(), messages.upper_bound(acked));
      } else {
        problem = std::string("unknown record kind '") + kind + "'";
      }
    }
    if (!problem.empty()) {
      const bool tail = left < kRecordHead || (len <= kMaxPayload && left - kRecordHead <= len);
      if (!tail) {
        JS_ASSIGN_OR_RETURN(std::optional<uint64_t> next, skip_damaged_record(fd, pos, len, size, problem));
        if (next) {
          pos = *next;
          continue;
        }
      }
      recovery_.dropped_bytes += left;
      JS_LOG_WARN << "journal " << p << ": " << (tail ? "torn last record" : "corrupt record") << " at offset " << pos
                  << " (" << problem << "); dropping its " << left << " bytes"
                  << "; message ids continue from " << next_id_ + kIdGapAfterDroppedTail;
      next_id_ += kIdGapAfterDroppedTail;
      break;
    }
    pos += kRecordHead + len;
  }
  if (!have_header) JS_LOG_WARN << "journal " << p << ": no header record; continuing with ids from its messages";
  for (auto& [id, m] : messages)
    if (id > acked) kept.push_back(m);
  return Status::ok();
}

Result<std::optional<uint64_t>> Journal::skip_damaged_record(int fd, uint64_t pos, uint32_t len, uint64_t size,
                                                             const std::string& problem) {
  // Damage mid-file (a failing disk: a crash only tears the last record, and opening rewrites the file): only the
  // damaged record is lost, reading resumes at the next intact record. Ids continue past any it may have held.
  JS_ASSIGN_OR_RETURN(std::optional<uint64_t> next, record_after_damage(fd, pos, len, size));
  if (!next) return next;
  recovery_.dropped_bytes += *next - pos;
  ++recovery_.damaged_records;
  JS_LOG_WARN << "journal " << path() << ": corrupt record at offset " << pos << " (" << problem << "); its "
              << *next - pos << " bytes are lost (a result message in them will not be sent; a run left without its "
              << "run_finished is reported cancelled and runs again); reading resumes at offset " << *next;
  next_id_ += kIdGapAfterDroppedTail;
  return next;
}

Result<bool> Journal::intact_record_at(int fd, uint64_t offset, uint64_t size) const {
  std::string head, payload;
  bool short_read = false;
  if (offset + kRecordHead > size) return false;
  JS_RETURN_IF_ERROR(read_at(fd, offset, kRecordHead, head, "journal " + path(), short_read));
  const uint32_t len = get_u32(head.data());
  if (short_read || len < 9 || len > kMaxPayload || offset + kRecordHead + len > size) return false;
  JS_RETURN_IF_ERROR(read_at(fd, offset + kRecordHead, len, payload, "journal " + path(), short_read));
  if (short_read) return false;
  const char kind = payload[0];
  if (!((kind == kMessage && len >= 18) || (kind == kAck && len == 9))) return false;
  return checksum(payload) == get_u32(head.data() + 4);
}

Result<std::optional<uint64_t>> Journal::record_after_damage(int fd, uint64_t pos, uint32_t len, uint64_t size) const {
  // Most often the damage is inside the payload and the length is right: the next record starts where it says.
  const uint64_t end = pos + kRecordHead + len;
  if (len >= 9 && len <= kMaxPayload && end < size) {
    JS_ASSIGN_OR_RETURN(bool intact, intact_record_at(fd, end, size));
    if (intact) return std::optional<uint64_t>(end);
  }
  // Else scan forward: a candidate needs a length in range and a known kind before its CRC-32 is checked (the
  // frames are JSON text, whose bytes never read as a length in range).
  constexpr uint64_t kChunk = 1u << 20;
  std::string buf;
  bool short_read = false;
  for (uint64_t s = pos + 1; s + kRecordHead < size; s += kChunk) {
    const uint64_t n = std::min<uint64_t>(size - s, kChunk + kRecordHead + 1);
    JS_RETURN_IF_ERROR(read_at(fd, s, static_cast<size_t>(n), buf, "journal " + path(), short_read));
    for (size_t i = 0; i < kChunk && i + kRecordHead < buf.size(); ++i) {
      const uint32_t l = get_u32(buf.data() + i);
      if (l < 9 || l > kMaxPayload || s + i + kRecordHead + l > size) continue;
      const char kind = buf[i + kRecordHead];
      if (!((kind == kMessage && l >= 18) || (kind == kAck && l == 9))) continue;
      JS_ASSIGN_OR_RETURN(bool intact, intact_record_at(fd, s + i, size));
      if (intact) return std::optional<uint64_t>(s + i);
    }
  }
  return std::optional<uint64_t>();
}

Result<std::optional<uint64_t>> Journal::record_after_hole(int fd, uint64_t pos, uint64_t size) const {
  // The hole ends on a block boundary; the acked record that straddled it leaves its tail before the next whole
  // record. Find the first non-zero byte, then the first offset from its block's start where an intact record
  // (length in range, known kind, checksum) begins: every candidate is checked by its CRC-32.
  constexpr uint64_t kBlock = 4096, kChunk = 1u << 16;
  std::string buf;
  bool short_read = false;
  uint64_t z = pos;
  for (;; z += buf.size()) {
    if (z >= size) return std::optional<uint64_t>();
    JS_RETURN_IF_ERROR(read_at(fd, z, static_cast<size_t>(std::min(kChunk, size - z)), buf, "journal " + path(), short_read));
    const size_t nz = buf.find_first_not_of('\0');
    if (nz != std::string::npos) {
      z += nz;
      break;
    }
  }
  const uint64_t start = std::max(pos, z / kBlock * kBlock);
  const uint64_t span = std::min<uint64_t>(size - start, kBlock + kRecordHead + kMaxPayload);
  JS_RETURN_IF_ERROR(read_at(fd, start, static_cast<size_t>(span), buf, "journal " + path(), short_read));
  for (size_t i = 0; i + kRecordHead < buf.size(); ++i) {
    const uint32_t len = get_u32(buf.data() + i);
    if (len < 9 || len > kMaxPayload || i + kRecordHead + len > buf.size()) continue;
    const char kind = buf[i + kRecordHead];
    if (!((kind == kMessage && len >= 18) || (kind == kAck && len == 9))) continue;
    if (checksum(std::string_view(buf.data() + i + kRecordHead, len)) == get_u32(buf.data() + i + 4))
      return std::optional<uint64_t>(start + i);
  }
  return std::optional<uint64_t>();
}

Status Journal::rewrite(int from_fd, const std::deque<Message>& kept, const std::deque<JournalEntry>& extra) {
  // Header + records into a new file, synced and renamed into place, then the directory synced. Records are
  // copied one at a time, written out a megabyte at a time.
  constexpr size_t kFlushBytes = 1u << 20;
  const std::string p = path(), tmp = p + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("journal " + tmp + ": open: " + errno_text());
  std::string out(kMagic, sizeof(kMagic));
  out += record(header_payload(next_id_, name_));
  const uint64_t data_start = out.size();
  uint64_t written = 0;   // bytes of `out` already in the file
  std::deque<Message> live;
  uint64_t live_bytes = 0;
  Status s;
  auto place = [&](Message m, const std::string& rec) {
    m.offset = written + out.size();
    m.bytes = rec.size();
    live_bytes += rec.size();
    live.push_back(m);
    out += rec;
    if (out.size() >= kFlushBytes && s.is_ok()) {
      s = write_all(fd, out, "journal " + tmp);
      written += out.size();
      out.clear();
    }
  };
  std::string rec;
  bool short_read = false;
  for (const auto& m : kept) {
    if (!s.is_ok()) break;
    s = read_at(from_fd, m.offset, m.bytes, rec, "journal " + p, short_read);
    if (s.is_ok() && short_read) s = io_error("journal " + p + ": message #" + std::to_string(m.id) + " cut short");
    if (s.is_ok()) place(m, rec);
  }
  for (const auto& e : extra) {
    if (!s.is_ok()) break;
    place(Message{e.id, e.run_id, e.run_finished, 0, 0}, record(message_payload(e)));
  }
  if (s.is_ok()) s = write_all(fd, out, "journal " + tmp);
  written += out.size();
  if (s.is_ok() && ::fdatasync(fd) != 0) s = io_error("journal " + tmp + ": fdatasync: " + errno_text());
  ::close(fd);
  if (s.is_ok() && ::rename(tmp.c_str(), p.c_str()) != 0) s = io_error("journal " + p + ": rename: " + errno_text());
  if (s.is_ok()) s = sync_dir(dir_);
  if (!s.is_ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  int nfd = ::open(p.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (nfd < 0) return io_error("journal " + p + ": open: " + errno_text());
  if (fd_ >= 0) ::close(fd_);
  fd_ = nfd;
  file_bytes_ = written;
  data_start_ = data_start;
  punched_bytes_ = 0;
  live_ = std::move(live);
  live_bytes_ = live_bytes;
  unsynced_bytes_ = 0;
  return Status::ok();
}

Status Journal::compact() {
  const uint64_t before = file_bytes_;
  const std::deque<Message> kept = live_;
  JS_RETURN_IF_ERROR(rewrite(fd_, kept, {}));
  JS_LOG_DEBUG << "journal " << dir_ << ": compacted " << before << " -> " << file_bytes_ << " bytes ("
               << live_.size() << " unacknowledged messages)";
  return Status::ok();
}

Result<std::string> Journal::read_frame(uint64_t id) const {
  auto it = std::lower_bound(live_.begin(), live_.end(), id, [](const Message& m, uint64_t v) { return m.id < v; });
  if (it == live_.end() || it->id != id)
    return not_found("journal " + path() + ": message #" + std::to_string(id) + " is not unacknowledged");
  std::string rec;
  bool short_read = false;
  JS_RETURN_IF_ERROR(read_at(fd_, it->offset, it->bytes, rec, "journal " + path(), short_read));
  if (short_read || rec.size() < kRecordHead + 18 ||
      checksum(std::string_view(rec.data() + kRecordHead, rec.size() - kRecordHead)) != get_u32(rec.data() + 4) ||
      rec[kRecordHead] != kMessage || get_u64(rec.data() + kRecordHead + 1) != id)
    return invalid_argument("journal " + path() + ": message #" + std::to_string(id) + " at offset " +
                            std::to_string(it->offset) + " does not read back intact");
  rec.erase(0, kRecordHead + 18);   // in place: the frame alone
  return rec;
}

Result<std::deque<JournalEntry>> Journal::read_unacked() const {
  std::deque<JournalEntry> out;
  for (const auto& m : live_) {
    JS_ASSIGN_OR_RETURN(std::string frame, read_frame(m.id));
    out.push_back(JournalEntry{m.id, m.run_id, m.run_finished, std::move(frame)});
  }
  return out;
}

Status Journal::write_record(const std::string& payload, uint64_t& offset) {
  return write_record(payload, std::string_view(), offset);
}

Status Journal::write_record(std::string_view payload, std::string_view tail, uint64_t& offset) {
  // The record's head, then `tail` (a frame) straight from its buffer (no copy of a frame of up to megabytes), in one
  // writev.
  const std::string head = record_head(payload, tail);
  offset = file_bytes_;
  Status s = write_all(fd_, head, tail, "journal " + path());
  if (!s.is_ok()) {
    // Never leave a partial record in front of later ones: cut the file back. Should that fail too, the partial
    // record stays, skipped as damaged when the file is read (load()), and later records go after it: their
    // offsets come from the file's real length.
    if (::ftruncate(fd_, static_cast<off_t>(file_bytes_)) != 0) {
      JS_LOG_ERROR << "journal " << path() << ": ftruncate after a failed write: " << errno_text();
      struct stat st {};
      if (::fstat(fd_, &st) == 0) file_bytes_ = static_cast<uint64_t>(st.st_size);
    }
    return s;
  }
  file_bytes_ += head.size() + tail.size();
  return Status::ok();
}

Status Journal::append(const JournalEntry& entry, std::string_view type) {
  return append(entry.id, entry.run_id, entry.run_finished, entry.frame, type);
}

Status Journal::append(uint64_t id, int64_t run_id, bool run_finished, std::string_view frame, std::string_view type) {
  if (id < next_id_)
    return internal_error("journal " + path() + ": message id " + std::to_string(id) + " is below the next id " +
                          std::to_string(next_id_));
  uint64_t offset = 0;
  const std::string payload = message_payload(id, run_id, run_finished, std::string_view());   // the frame follows it
  JS_RETURN_IF_ERROR(write_record(payload, frame, offset));
  const uint64_t bytes = kRecordHead + payload.size() + frame.size();
  live_.push_back(Message{id, run_id, run_finished, offset, bytes});
  live_bytes_ += bytes;
  next_id_ = id + 1;
  unsynced_bytes_ += bytes;
  if (run_finished || type == "epoch_result" || unsynced_bytes_ >= kSyncBytes) return sync();
  return Status::ok();
}

Status Journal::sync() {
  if (::fdatasync(fd_) != 0) return io_error("journal " + path() + ": fdatasync: " + errno_text());
  unsynced_bytes_ = 0;
  return Status::ok();
}

Status Journal::ack(uint64_t up_to) {
  if (live_.empty() || live_.front().id > up_to) return Status::ok();
  while (!live_.empty() && live_.front().id <= up_to) {
    live_bytes_ -= live_.front().bytes;
    live_.pop_front();
  }
  std::string payload(1, kAck);
  put_u64(payload, up_to);
  uint64_t offset = 0;
  JS_RETURN_IF_ERROR(write_record(payload, offset));
  if (live_.empty()) return file_bytes_ > kCompactMinBytes ? compact() : Status::ok();
  release_acked_space();
  const uint64_t acked_bytes = disk_bytes() - live_bytes_;
  if (!punch_supported_ && acked_bytes >= kCompactAckedBytes && acked_bytes > live_bytes_) return compact();
  return Status::ok();
}

void Journal::release_acked_space() {
  // Everything before the first unacknowledged record is acked (records are appended in id order); whole
  // 4 KiB blocks of it are given back, the file keeping its length and offsets.
  constexpr uint64_t kBlock = 4096;
  if (!punch_supported_ || live_.empty()) return;
  const uint64_t from = data_start_ + punched_bytes_;
  const uint64_t to = live_.front().offset / kBlock * kBlock;
  if (to <= from || to - from < 16 * kBlock) return;
  if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(from),
                  static_cast<off_t>(to - from)) != 0) {
    JS_LOG_INFO << "journal " << path() << ": the file system cannot punch holes (" << errno_text()
                << "); acked space is given back by compaction instead";
    punch_supported_ = false;
    return;
  }
  punched_bytes_ = to - data_start_;
}

std::vector<int64_t> Journal::unacked_runs() const {
  std::set<int64_t> runs;
  for (const auto& l : live_) runs.insert(l.run_id);
  return {runs.begin(), runs.end()};
}

}  // namespace jetsweep::agent

#include "agent/journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
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

uint32_t checksum(std::string_view payload) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size())));
}

std::string record(const std::string& payload) {
  std::string r;
  r.reserve(kRecordHead + payload.size());
  put_u32(r, static_cast<uint32_t>(payload.size()));
  put_u32(r, checksum(payload));
  r += payload;
  return r;
}

std::string message_payload(const JournalEntry& e) {
  std::string p(1, kMessage);
  put_u64(p, e.id);
  put_u64(p, static_cast<uint64_t>(e.run_id));
  p.push_back(e.run_finished ? 1 : 0);
  p += e.frame;
  return p;
}

std::string header_payload(uint64_t next_id, const std::string& name) {
  std::string p(1, kHeader);
  put_u64(p, next_id);
  p += name;
  return p;
}

Status write_all(int fd, const std::string& data, const std::string& what) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(what + ": write: " + errno_text());
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

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

int64_t result_run_id(const proto::Body& body) {
  if (const auto* m = std::get_if<proto::MinibatchChunk>(&body)) return m->run_id;
  if (const auto* m = std::get_if<proto::EpochResult>(&body)) return m->run_id;
  if (const auto* m = std::get_if<proto::SampleChunk>(&body)) return m->run_id;
  if (const auto* m = std::get_if<proto::RunFinished>(&body)) return m->run_id;
  if (const auto* m = std::get_if<proto::RunStarted>(&body)) return m->run_id;
  if (const auto* m = std::get_if<proto::RebootPending>(&body)) return m->run_id;
  return 0;
}

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
  std::deque<JournalEntry> entries;
  JS_RETURN_IF_ERROR(j->load(entries));

  // Runs with results but no run_finished: the agent died mid-run; tell the controller so it reruns them.
  std::set<int64_t> with_results, finished;
  for (const auto& e : entries) {
    with_results.insert(e.run_id);
    if (e.run_finished) finished.insert(e.run_id);
  }
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
    entries.push_back(std::move(e));
  }
  JS_RETURN_IF_ERROR(j->rewrite(entries));
  j->recovery_.entries = entries.size();
  j->pending_ = std::move(entries);
  if (!j->pending_.empty())
    JS_LOG_INFO << "journal " << dir << ": " << j->pending_.size() << " unacknowledged result messages (#"
                << j->pending_.front().id << "..#" << j->pending_.back().id << ") to replay; next id " << j->next_id_;
  return j;
}

Status Journal::load(std::deque<JournalEntry>& entries) {
  const std::string p = path();
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::ok();   // a new journal
    return io_error("journal " + p + ": open: " + errno_text());
  }
  std::string data;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      return io_error("journal " + p + ": read: " + std::strerror(saved));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (data.empty()) return Status::ok();   // created but never written (crash before the first rewrite)
  if (data.size() < sizeof(kMagic) || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0)
    return invalid_argument("journal " + p + ": not a jetsweep agent journal (bad magic); move it away to start afresh");

  std::map<uint64_t, JournalEntry> messages;
  uint64_t acked = 0;
  bool have_header = false;
  size_t pos = sizeof(kMagic);
  while (pos < data.size()) {
    const size_t left = data.size() - pos;
    std::string problem;
    uint32_t len = 0;
    if (left < kRecordHead) {
      problem = "truncated record header";
    } else {
      len = get_u32(data.data() + pos);
      if (len == 0 || len > kMaxPayload) problem = "bad record length " + std::to_string(len);
      else if (left - kRecordHead < len) problem = "record of " + std::to_string(len) + " bytes runs past the end";
      else if (checksum(std::string_view(data.data() + pos + kRecordHead, len)) != get_u32(data.data() + pos + 4))
        problem = "checksum mismatch";
    }
    if (problem.empty()) {
      const char* q = data.data() + pos + kRecordHead;
      const char kind = q[0];
      if (kind == kHeader && len >= 9) {
        const std::string owner(q + 9, len - 9);
        if (owner != name_)
          return invalid_argument("journal " + p + " belongs to agent '" + owner + "', not '" + name_ +
                                  "': each agent name needs its own --journal-dir");
        next_id_ = std::max(next_id_, get_u64(q + 1));
        have_header = true;
      } else if (kind == kMessage && len >= 18) {
        JournalEntry e;
        e.id = get_u64(q + 1);
        e.run_id = static_cast<int64_t>(get_u64(q + 9));
        e.run_finished = q[17] != 0;
        e.frame.assign(q + 18, len - 18);
        next_id_ = std::max(next_id_, e.id + 1);
        messages[e.id] = std::move(e);
      } else if (kind == kAck && len >= 9) {
        acked = std::max(acked, get_u64(q + 1));
        next_id_ = std::max(next_id_, acked + 1);
      } else {
        problem = std::string("unknown record kind '") + kind + "'";
      }
    }
    if (!problem.empty()) {
      recovery_.dropped_bytes = left;
      const bool tail = left < kRecordHead || (len <= kMaxPayload && left - kRecordHead <= len);
      JS_LOG_WARN << "journal " << p << ": " << (tail ? "torn last record" : "corrupt record") << " at offset " << pos
                  << " (" << problem << "); dropping its " << left << " bytes"
                  << "; message ids continue from " << next_id_ + kIdGapAfterDroppedTail;
      next_id_ += kIdGapAfterDroppedTail;
      break;
    }
    pos += kRecordHead + len;
  }
  if (!have_header) JS_LOG_WARN << "journal " << p << ": no header record; continuing with ids from its messages";
  for (auto& [id, e] : messages)
    if (id > acked) entries.push_back(std::move(e));
  return Status::ok();
}

Status Journal::rewrite(const std::deque<JournalEntry>& entries) {
  // Header + records into a new file, synced and renamed into place, then the directory synced.
  const std::string p = path(), tmp = p + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("journal " + tmp + ": open: " + errno_text());
  std::string out(kMagic, sizeof(kMagic));
  out += record(header_payload(next_id_, name_));
  std::deque<Live> live;
  uint64_t live_bytes = 0;
  for (const auto& e : entries) {
    const std::string r = record(message_payload(e));
    live.push_back(Live{e.id, e.run_id, out.size(), r.size()});
    live_bytes += r.size();
    out += r;
  }
  Status s = write_all(fd, out, "journal " + tmp);
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
  file_bytes_ = out.size();
  live_ = std::move(live);
  live_bytes_ = live_bytes;
  unsynced_bytes_ = 0;
  return Status::ok();
}

Status Journal::compact() {
  std::deque<JournalEntry> entries;
  for (const auto& l : live_) {
    std::string r(l.bytes, '\0');
    ssize_t n = ::pread(fd_, r.data(), r.size(), static_cast<off_t>(l.offset));
    if (n != static_cast<ssize_t>(r.size()))
      return io_error("journal " + path() + ": reading message #" + std::to_string(l.id) + " back: " +
                      (n < 0 ? errno_text() : std::string("short read")));
    const char* q = r.data() + kRecordHead;
    JournalEntry e;
    e.id = l.id;
    e.run_id = l.run_id;
    e.run_finished = q[17] != 0;
    e.frame.assign(q + 18, r.size() - kRecordHead - 18);
    entries.push_back(std::move(e));
  }
  const uint64_t before = file_bytes_;
  JS_RETURN_IF_ERROR(rewrite(entries));
  JS_LOG_DEBUG << "journal " << dir_ << ": compacted " << before << " -> " << file_bytes_ << " bytes ("
               << live_.size() << " unacknowledged messages)";
  return Status::ok();
}

std::deque<JournalEntry> Journal::take_pending() { return std::exchange(pending_, {}); }

Status Journal::write_record(const std::string& payload, uint64_t& offset) {
  const std::string r = record(payload);
  offset = file_bytes_;
  Status s = write_all(fd_, r, "journal " + path());
  if (!s.is_ok()) {
    // Never leave a partial record in front of later ones: cut the file back.
    if (::ftruncate(fd_, static_cast<off_t>(file_bytes_)) != 0)
      JS_LOG_ERROR << "journal " << path() << ": ftruncate after a failed write: " << errno_text();
    return s;
  }
  file_bytes_ += r.size();
  return Status::ok();
}

Status Journal::append(const JournalEntry& entry, std::string_view type) {
  if (entry.id < next_id_)
    return internal_error("journal " + path() + ": message id " + std::to_string(entry.id) + " is below the next id " +
                          std::to_string(next_id_));
  uint64_t offset = 0;
  const std::string payload = message_payload(entry);
  JS_RETURN_IF_ERROR(write_record(payload, offset));
  const uint64_t bytes = kRecordHead + payload.size();
  live_.push_back(Live{entry.id, entry.run_id, offset, bytes});
  live_bytes_ += bytes;
  next_id_ = entry.id + 1;
  unsynced_bytes_ += bytes;
  if (entry.run_finished || type == "epoch_result" || unsynced_bytes_ >= kSyncBytes) return sync();
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
  const uint64_t acked_bytes = file_bytes_ - live_bytes_;
  if ((live_.empty() && file_bytes_ > kCompactMinBytes) ||
      (acked_bytes >= kCompactAckedBytes && acked_bytes * 4 > file_bytes_ * 3))
    return compact();
  return Status::ok();
}

std::vector<int64_t> Journal::unacked_runs() const {
  std::set<int64_t> runs;
  for (const auto& l : live_) runs.insert(l.run_id);
  return {runs.begin(), runs.end()};
}

}  // namespace jetsweep::agent

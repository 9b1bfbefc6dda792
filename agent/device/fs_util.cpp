#include "agent/device/fs_util.hpp"

#include <fcntl.h>
#include <locale.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>

namespace jetsweep::device {

namespace {

std::string errno_text(int err) { return std::string(std::strerror(err)); }

}  // namespace

fs::path under(const fs::path& root, std::string_view board_path) {
  while (!board_path.empty() && board_path.front() == '/') board_path.remove_prefix(1);
  if (board_path.empty()) return root;
  return root / fs::path(std::string(board_path));
}

Result<std::string> read_raw(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return io_error("missing file " + path.string());
    return io_error("cannot open " + path.string() + ": " + errno_text(err));
  }
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return io_error("cannot read " + path.string() + ": " + errno_text(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Result<std::string> read_trimmed(const fs::path& path) {
  JS_ASSIGN_OR_RETURN(std::string raw, read_raw(path));
  return trim(raw);
}

Result<int64_t> read_int(const fs::path& path) {
  JS_ASSIGN_OR_RETURN(std::string text, read_trimmed(path));
  auto v = parse_int(text);
  if (!v) return invalid_argument("expected an integer in " + path.string() + ", got '" + text + "'");
  return *v;
}

Result<std::vector<int64_t>> read_int_list(const fs::path& path) {
  JS_ASSIGN_OR_RETURN(std::string text, read_trimmed(path));
  std::vector<int64_t> out;
  auto tokens = split_ws(text);
  for (size_t i = 0; i < tokens.size(); ++i) {
    auto v = parse_int(tokens[i]);
    if (v) {
      out.push_back(*v);
      continue;
    }
    bool unit_suffix = i + 1 == tokens.size() && tokens[i].front() == '(' && tokens[i].back() == ')';
    if (!unit_suffix) {
      return invalid_argument("unexpected token '" + tokens[i] + "' in " + path.string());
    }
  }
  if (out.empty()) return invalid_argument("no values in " + path.string());
  return out;
}

int write_all(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

Status write_raw(const fs::path& path, std::string_view value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return io_error("missing file " + path.string() + " (writing '" + std::string(value) + "')");
    return io_error("cannot open " + path.string() + " to write '" + std::string(value) + "': " + errno_text(err));
  }
  if (int err = write_all(fd, value)) {
    ::close(fd);
    return io_error("write of '" + std::string(value) + "' to " + path.string() + " failed: " + errno_text(err));
  }
  if (::close(fd) != 0) {
    int err = errno;
    return io_error("write of '" + std::string(value) + "' to " + path.string() + " failed on close: " +
                    errno_text(err));
  }
  return Status::ok();
}

Status write_verified(const fs::path& path, std::string_view value) {
  JS_RETURN_IF_ERROR(write_raw(path, value));
  auto back = read_trimmed(path);
  if (!back.is_ok()) return back.status().with_context("read-back after writing '" + std::string(value) + "'");
  std::string want = trim(value);
  auto a = parse_int(want);
  auto b = parse_int(*back);
  bool same = (a && b) ? (*a == *b) : (want == *back);
  if (!same) {
    return io_error("read-back mismatch at " + path.string() + ": wrote '" + want + "', read '" + *back + "'");
  }
  return Status::ok();
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::vector<int> out;
  std::string t = trim(text);
  if (t.empty()) return out;
  // "0-3,6" (cpu lists) and "0 1 2 3" (related_cpus) are both accepted.
  for (char& c : t) {
    if (c == ' ' || c == '\t' || c == '\n') c = ',';
  }
  size_t pos = 0;
  while (pos <= t.size()) {
    size_t comma = t.find(',', pos);
    std::string part = t.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t dash = part.find('-');
    if (dash == std::string::npos) {
      auto v = parse_int(part);
      if (!v || *v < 0) return std::nullopt;
      out.push_back(static_cast<int>(*v));
    } else {
      auto a = parse_int(part.substr(0, dash));
      auto b = parse_int(part.substr(dash + 1));
      if (!a || !b || *a < 0 || *b < *a) return std::nullopt;
      for (int64_t c = *a; c <= *b; ++c) out.push_back(static_cast<int>(c));
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<int> numeric_suffix(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view rest = name.substr(prefix.size());
  if (rest.empty()) return std::nullopt;
  for (char c : rest) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  auto v = parse_int(rest);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

std::vector<fs::path> list_prefixed(const fs::path& dir, std::string_view prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return out;
  for (const auto& entry : it) {
    std::string name = entry.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end(), [&](const fs::path& a, const fs::path& b) {
    std::string na = a.filename().string(), nb = b.filename().string();
    auto sa = numeric_suffix(na, prefix), sb = numeric_suffix(nb, prefix);
    if (sa && sb) return *sa < *sb;
    if (sa != sb) return sa.has_value();
    return na < nb;
  });
  return out;
}

Result<fs::path> resolve_in_root(const fs::path& root, const fs::path& path) {
  fs::path root_abs = fs::absolute(root).lexically_normal();
  fs::path rel = fs::absolute(path).lexically_normal().lexically_relative(root_abs);
  if (rel.empty() || *rel.begin() == "..") {
    return invalid_argument("path " + path.string() + " is not under root " + root.string());
  }
  std::vector<std::string> pending;
  for (const auto& part : rel) pending.push_back(part.string());
  std::reverse(pending.begin(), pending.end());
  fs::path current = root_abs;
  int links_followed = 0;
  while (!pending.empty()) {
    std::string part = pending.back();
    pending.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (current != root_abs) current = current.parent_path();
      continue;
    }
    fs::path next = current / part;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(next, ec))) {
      if (++links_followed > 40) return io_error("too many symlinks resolving " + path.string());
      fs::path target = fs::read_symlink(next, ec);
      if (ec) return io_error("cannot read symlink " + next.string() + ": " + ec.message());
      std::vector<std::string> parts;
      for (const auto& p : target.relative_path()) parts.push_back(p.string());
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.push_back(*it);
      if (target.is_absolute()) current = root_abs;
      continue;
    }
    current = next;
  }
  return current;
}

bool exists_file(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

bool is_writable(const fs::path& path) { return ::access(path.c_str(), W_OK) == 0; }

std::string fnv1a64_hex(std::string_view data) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  static const char* kHex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kHex[h & 0xf];
    h >>= 4;
  }
  return out;
}

}  // namespace jetsweep::device

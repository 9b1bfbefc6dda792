#include "common/log.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>

namespace jetsweep::log {
namespace {
std::atomic<int> g_min_level{static_cast<int>(Level::kInfo)};
std::mutex g_component_mutex;
std::string g_component = "jetsweep";

const char* level_name(Level level) {
  switch (level) {
    case Level::kDebug: return "DEBUG";
    case Level::kInfo: return "INFO";
    case Level::kWarn: return "WARN";
    case Level::kError: return "ERROR";
  }
  return "?";
}

// `text` with control characters escaped, cut at the line limit.
void append_escaped(std::string& line, std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  const size_t limit = line.size() + kMaxLineBytes;
  for (size_t i = 0; i < text.size(); ++i) {
    if (line.size() >= limit) {
      line += "... (line cut: " + std::to_string(text.size() - i) + " more bytes)";
      return;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != 0x7f) {
      line.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else if (c == '\t') {
      line += "\\t";
    } else {
      line += "\\x";
      line.push_back(kHex[c >> 4]);
      line.push_back(kHex[c & 0xf]);
    }
  }
}
}  // namespace

void set_min_level(Level level) { g_min_level = static_cast<int>(level); }

void set_component(std::string_view component) {
  std::lock_guard lock(g_component_mutex);
  g_component = std::string(component);
}

void write(Level level, std::string_view text) {
  if (static_cast<int>(level) < g_min_level.load()) return;
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  std::string line;
  {
    std::lock_guard lock(g_component_mutex);
    line = std::string(stamp) + " " + level_name(level) + " " + g_component + ": ";
  }
  append_escaped(line, text);
  line.push_back('\n');
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

std::string excerpt(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return std::string(text.substr(0, max_bytes)) + "... (" + std::to_string(text.size() - max_bytes) + " more bytes)";
}

bool RateLimit::allow(std::chrono::steady_clock::time_point now, int64_t& suppressed) {
  if (in_window_ == 0 || now - window_start_ >= window_) {
    window_start_ = now;
    in_window_ = 0;
  }
  if (in_window_ >= burst_) {
    ++suppressed_;
    return false;
  }
  ++in_window_;
  suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

}  // namespace jetsweep::log

// Minimal thread-safe line logger to stderr: "2026-11-21T23:30:01.123Z INFO controller: agent 3 (nx-1) registered".
// Any thread may log; each line is written with one write() so lines never interleave. A line is one line: control
// characters in the text are escaped (\n, \r, \t, \xNN), so text from a peer cannot forge lines, and a line is cut
// at kMaxLineBytes. Text from a peer should go through excerpt(), and repeated complaints about one peer through
// a RateLimit.
#pragma once

#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

namespace jetsweep::log {

enum class Level { kDebug, kInfo, kWarn, kError };

void set_min_level(Level level);
void set_component(std::string_view component);  // process-wide name, e.g. "controller", "agent nx-1"
void write(Level level, std::string_view text);

inline constexpr size_t kMaxLineBytes = 16 * 1024;
// Untrusted text for a log line: at most max_bytes of it, then "... (N more bytes)"; control characters are escaped
// by write() anyway.
std::string excerpt(std::string_view text, size_t max_bytes = 240);

// Lets `burst` events through per `window`, then holds the rest back and counts them. Owned by one thread.
class RateLimit {
 public:
  RateLimit(int burst, std::chrono::steady_clock::duration window) : burst_(burst), window_(window) {}
  // Whether to log an event at `now`. When it says yes, `suppressed` is how many were held back since the last
  // one it let through (say so in the line).
  bool allow(std::chrono::steady_clock::time_point now, int64_t& suppressed);

 private:
  int burst_;
  std::chrono::steady_clock::duration window_;
  std::chrono::steady_clock::time_point window_start_{};
  int in_window_ = 0;
  int64_t suppressed_ = 0;
};

// Builds one line and writes it on destruction.
class Line {
 public:
  explicit Line(Level level) : level_(level) {}
  ~Line() { write(level_, stream_.str()); }
  template <typename T>
  Line& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  Level level_;
  std::ostringstream stream_;
};

}  // namespace jetsweep::log

#define JS_LOG_DEBUG ::jetsweep::log::Line(::jetsweep::log::Level::kDebug)
#define JS_LOG_INFO ::jetsweep::log::Line(::jetsweep::log::Level::kInfo)
#define JS_LOG_WARN ::jetsweep::log::Line(::jetsweep::log::Level::kWarn)
#define JS_LOG_ERROR ::jetsweep::log::Line(::jetsweep::log::Level::kError)

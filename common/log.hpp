// Minimal thread-safe line logger to stderr: "2026-11-21T23:30:01.123Z INFO controller: agent 3 (nx-1) registered".
// Any thread may log; each line is written with one write() so lines never interleave.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace jetsweep::log {

enum class Level { kDebug, kInfo, kWarn, kError };

void set_min_level(Level level);
void set_component(std::string_view component);  // process-wide name, e.g. "controller", "agent nx-1"
void write(Level level, std::string_view text);

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

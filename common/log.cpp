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
  line.append(text);
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

}  // namespace jetsweep::log

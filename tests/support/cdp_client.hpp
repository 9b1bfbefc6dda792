// A headless Chromium driven over the Chrome DevTools Protocol, for the dashboard's browser tests: launches
// Debian's `chromium` with a private profile, speaks CDP over one Boost.Beast WebSocket (flattened sessions,
// one page target), and collects every JavaScript error the page reports. Single-threaded use: every call
// runs the client's own io_context on the calling thread, each with a deadline. The destructor kills the
// browser's whole process group.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::testing {

struct BrowserOptions {
  std::string executable;          // empty: $JETSWEEP_CHROMIUM, else /usr/bin/chromium
  int width = 1280;                // the window (and screenshot) size in CSS pixels
  int height = 900;
  std::chrono::milliseconds start_timeout{30000};
  std::chrono::milliseconds call_timeout{30000};   // each CDP command
};

// One JavaScript error the page reported: a console.error call, an uncaught exception or rejection, or an
// error-level log entry (failed requests, CSP violations, ...).
struct JsError {
  std::string source;              // "console", "exception" or "log/<Log.entry.source>"
  std::string text;
  std::string url;                 // where it came from, when the browser says
};

// Owns the chromium process (and its process group), its temp profile directory and the DevTools connection.
// Single-threaded: only the thread that launched it may call it.
class Browser {
 public:
  // Starts chromium and opens one page (about:blank). A missing executable is a clear error naming the
  // Debian package; a browser that does not come up in time is an error carrying the tail of its log.
  static Result<std::unique_ptr<Browser>> launch(const BrowserOptions& options = {});
  ~Browser();
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  // Loads `url` in the page and waits for its load event; a URL differing from the current one only in its
  // fragment is a same-document navigation (a hash route) and returns once the browser has committed it.
  Status navigate(const std::string& url);
  // Evaluates `expression` in the page (promises awaited) and returns its value as JSON (undefined: null);
  // an exception thrown by it is an error carrying its description.
  Result<boost::json::value> evaluate(const std::string& expression);
  // Polls `predicate` (a JavaScript expression, truthy or not) until it holds or `timeout` passes,
  // processing the browser's events in between; the timeout error names the predicate and its last value.
  Status wait_for(const std::string& predicate, std::chrono::milliseconds timeout);
  // Handles the browser's events (errors, loads) until `done()` holds or `timeout` passes; whether it held.
  bool process_events_until(const std::function<bool()>& done, std::chrono::milliseconds timeout);
  // Focuses the input matching `selector`, empties it and types `text` into it as keyboard input would.
  Status type_text(const std::string& selector, const std::string& text);
  // Clicks the element matching `selector` (scrolled into view; a mouse press and release at its centre).
  Status click(const std::string& selector);
  // Writes a PNG of the whole page (beyond the viewport) to `path`, creating its directory.
  Status screenshot(const std::filesystem::path& path);

  // Every JavaScript error reported since the last clear_errors(), oldest first.
  const std::vector<JsError>& errors() const { return errors_; }
  void clear_errors() { errors_.clear(); }
  // The errors as text, one per line, for a test's failure message.
  std::string errors_text() const;
  // The tail of chromium's own stderr log (for a failure message).
  std::string log_tail(size_t max_bytes = 4000) const;

 private:
  Browser() = default;
  Status start(const BrowserOptions& options);
  Status connect(int port, const std::string& path);
  Status open_page();
  // Sends one command (to the page session unless `browser_level`) and waits for its answer.
  Result<boost::json::object> call(const std::string& method, boost::json::object params = {},
                                   bool browser_level = false);
  // Runs the io_context until `done()` holds or the deadline passes; false on timeout or a dead connection.
  bool run_until(std::chrono::steady_clock::time_point deadline, const std::function<bool()>& done);
  void start_read();
  void on_message(const std::string& text);
  void on_event(const std::string& method, const boost::json::object& params);
  Status connection_status(const std::string& what) const;

  BrowserOptions options_;
  pid_t pid_ = -1;                 // chromium, leader of its own process group
  std::filesystem::path profile_dir_;
  std::filesystem::path log_path_;
  boost::asio::io_context ioc_;
  std::unique_ptr<boost::beast::websocket::stream<boost::beast::tcp_stream>> ws_;
  boost::beast::flat_buffer in_;
  boost::beast::error_code read_error_;
  bool connected_ = false;
  int64_t next_id_ = 1;
  std::map<int64_t, boost::json::object> replies_;   // answers not yet taken by call()
  std::string session_id_;         // the page target's flattened session
  int64_t load_events_ = 0;        // Page.loadEventFired count
  int64_t same_document_navigations_ = 0;
  std::vector<JsError> errors_;
};

}  // namespace jetsweep::testing

#include "support/cdp_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/websocket.hpp>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "support/process.hpp"

namespace jetsweep::testing {
namespace bj = boost::json;
namespace beast = boost::beast;
namespace ws = beast::websocket;
using Clock = std::chrono::steady_clock;

namespace {

std::string read_whole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Standard base64 (as CDP sends binary data) to bytes; nullopt on a character outside the alphabet.
std::optional<std::string> decode_base64(const std::string& text) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int count = 0;
  for (char ch : text) {
    if (ch == '=') break;
    const auto pos = kAlphabet.find(ch);
    if (pos == std::string::npos) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(pos);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return out;
}

// A JavaScript string literal of `text`.
std::string js_string(const std::string& text) { return bj::serialize(bj::value(text)); }

std::string string_at(const bj::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

// Console arguments as the console would print them: strings unquoted, anything else by its description.
std::string console_text(const bj::object& params) {
  std::string text;
  if (const auto* args = params.if_contains("args"); args && args->is_array()) {
    for (const auto& a : args->as_array()) {
      if (!a.is_object()) continue;
      const auto& arg = a.as_object();
      if (!text.empty()) text += ' ';
      if (const auto* v = arg.if_contains("value"); v && v->is_string())
        text += std::string(v->as_string());
      else if (v)
        text += bj::serialize(*v);
      else
        text += string_at(arg, "description");
    }
  }
  return text;
}

std::string first_frame_url(const bj::object& holder) {
  const auto* st = holder.if_contains("stackTrace");
  if (!st || !st->is_object()) return string_at(holder, "url");
  const auto* frames = st->as_object().if_contains("callFrames");
  if (!frames || !frames->is_array() || frames->as_array().empty() || !frames->as_array()[0].is_object())
    return string_at(holder, "url");
  const auto& f = frames->as_array()[0].as_object();
  std::string url = string_at(f, "url");
  if (const auto* line = f.if_contains("lineNumber"); line && line->is_int64())
    url += ":" + std::to_string(line->as_int64() + 1);
  return url;
}

std::string exception_text(const bj::object& details) {
  std::string text = string_at(details, "text");
  if (const auto* e = details.if_contains("exception"); e && e->is_object()) {
    const std::string description = string_at(e->as_object(), "description");
    if (!description.empty()) text += (text.empty() ? "" : " ") + description;
    else if (const auto* v = e->as_object().if_contains("value")) text += " " + bj::serialize(*v);
  }
  return text;
}

std::string chromium_executable(const BrowserOptions& options) {
  if (!options.executable.empty()) return options.executable;
  if (const char* env = std::getenv("JETSWEEP_CHROMIUM"); env && *env) return env;
  return "/usr/bin/chromium";
}

}  // namespace

Result<std::unique_ptr<Browser>> Browser::launch(const BrowserOptions& options) {
  std::unique_ptr<Browser> browser(new Browser());
  browser->options_ = options;
  JS_RETURN_IF_ERROR(browser->start(options));
  return browser;
}

Status Browser::start(const BrowserOptions& options) {
  const std::string exe = chromium_executable(options);
  if (::access(exe.c_str(), X_OK) != 0)
    return not_found("no chromium at " + exe + ": the browser tests need Debian's 'chromium' package "
                     "(apt-get install chromium; it is in deploy/packages/debian-build.txt), or set "
                     "JETSWEEP_CHROMIUM to a Chromium executable");
  std::string tmpl = (std::filesystem::temp_directory_path() / "jetsweep-chromium-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) return io_error("cannot make a temp directory for chromium's profile: " + tmpl);
  profile_dir_ = tmpl;
  log_path_ = profile_dir_ / "chromium.log";
  const std::filesystem::path user_data = profile_dir_ / "profile";
  std::vector<std::string> args = {
      exe, "--headless=new", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
      "--user-data-dir=" + user_data.string(), "--disable-gpu", "--no-first-run", "--no-default-browser-check",
      "--disable-dev-shm-usage", "--disable-extensions", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
      "--window-size=" + std::to_string(options.width) + "," + std::to_string(options.height)};
  if (::geteuid() == 0) args.push_back("--no-sandbox");   // Chromium refuses to sandbox as root
  args.push_back("about:blank");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) return io_error("fork failed starting chromium");
  if (pid_ == 0) {
    ::setpgid(0, 0);   // its own process group: the destructor kills every process it spawns
    const int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ::setpgid(pid_, pid_);   // also from here, so that the group exists before anything is killed
  const auto port_file = user_data / "DevToolsActivePort";
  std::string port_text;
  bool exited = false;
  const bool up = wait_until(options.start_timeout, [&] {
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      exited = true;
      pid_ = -1;
      return true;
    }
    port_text = read_whole(port_file);   // "PORT\n/devtools/browser/UUID" once written completely
    const auto at = port_text.find("/devtools/browser/");
    return at != std::string::npos && port_text.size() >= at + 18 + 36;
  });
  if (exited) return unavailable("chromium (" + exe + ") exited at start; its log:\n" + log_tail());
  if (!up)
    return unavailable("chromium wrote no " + port_file.string() + " within " +
                       std::to_string(options.start_timeout.count() / 1000) + " s; its log:\n" + log_tail());
  std::istringstream lines(port_text);
  int port = 0;
  std::string path;
  lines >> port >> path;
  JS_RETURN_IF_ERROR(connect(port, path));
  return open_page();
}

Status Browser::connect(int port, const std::string& path) {
  namespace ip = boost::asio::ip;
  ws_ = std::make_unique<ws::stream<beast::tcp_stream>>(ioc_);
  ws_->read_message_max(256u << 20);   // full-page screenshots come base64-encoded in one message
  beast::error_code ec;
  beast::get_lowest_layer(*ws_).expires_after(options_.call_timeout);
  beast::get_lowest_layer(*ws_).socket().connect(ip::tcp::endpoint(ip::make_address("127.0.0.1"),
                                                                   static_cast<unsigned short>(port)), ec);
  if (ec) return unavailable("cannot connect to chromium's DevTools port " + std::to_string(port) + ": " + ec.message());
  ws_->handshake("127.0.0.1:" + std::to_string(port), path, ec);
  if (ec) return unavailable("DevTools WebSocket handshake with chromium failed: " + ec.message());
  beast::get_lowest_layer(*ws_).expires_never();
  connected_ = true;
  start_read();
  return Status::ok();
}

Status Browser::open_page() {
  bj::object create{{"url", "about:blank"}};
  JS_ASSIGN_OR_RETURN(bj::object target, call("Target.createTarget", create, true));
  bj::object attach{{"targetId", target["targetId"]}, {"flatten", true}};
  JS_ASSIGN_OR_RETURN(bj::object attached, call("Target.attachToTarget", attach, true));
  session_id_ = string_at(attached, "sessionId");
  if (session_id_.empty()) return protocol_error("Target.attachToTarget answered no sessionId");
  for (const char* domain : {"Page.enable", "Runtime.enable", "Log.enable"}) {
    JS_ASSIGN_OR_RETURN(bj::object ignored, call(domain));
    (void)ignored;
  }
  bj::object metrics{{"width", options_.width}, {"height", options_.height}, {"deviceScaleFactor", 1},
                     {"mobile", false}};
  JS_ASSIGN_OR_RETURN(bj::object ignored, call("Emulation.setDeviceMetricsOverride", metrics));
  (void)ignored;
  return Status::ok();
}

Browser::~Browser() {
  if (ws_ && connected_) {
    beast::error_code ec;
    beast::get_lowest_layer(*ws_).socket().close(ec);
  }
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);   // the group: chromium and every renderer, GPU and utility process it forked
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
  if (!profile_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(profile_dir_, ec);
  }
}

void Browser::start_read() {
  ws_->async_read(in_, [this](beast::error_code ec, size_t) {
    if (ec) {
      read_error_ = ec;
      connected_ = false;
      return;
    }
    const std::string text = beast::buffers_to_string(in_.data());
    in_.consume(in_.size());
    on_message(text);
    start_read();
  });
}

bool Browser::run_until(Clock::time_point deadline, const std::function<bool()>& done) {
  while (!done()) {
    if (!connected_) return false;
    if (ioc_.stopped()) ioc_.restart();
    if (ioc_.run_one_until(deadline) == 0 && Clock::now() >= deadline) return done();
  }
  return true;
}

bool Browser::process_events_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  return run_until(Clock::now() + timeout, done);
}

Status Browser::connection_status(const std::string& what) const {
  return unavailable(what + ": the DevTools connection to chromium is gone (" + read_error_.message() +
                     "); chromium's log:\n" + log_tail());
}

Result<bj::object> Browser::call(const std::string& method, bj::object params, bool browser_level) {
  if (!connected_) return connection_status("CDP " + method);
  const int64_t id = next_id_++;
  bj::object message{{"id", id}, {"method", method}, {"params", std::move(params)}};
  if (!browser_level) message["sessionId"] = session_id_;
  auto out = std::make_shared<std::string>(bj::serialize(message));
  bool written = false;
  beast::error_code write_error;
  ws_->text(true);
  ws_->async_write(boost::asio::buffer(*out), [&written, &write_error, out](beast::error_code ec, size_t) {
    write_error = ec;
    written = true;
  });
  const auto deadline = Clock::now() + options_.call_timeout;
  const bool answered = run_until(deadline, [&] { return written && replies_.count(id) > 0; });
  if (write_error) return unavailable("CDP " + method + ": sending failed: " + write_error.message());
  if (!answered) {
    if (!connected_) return connection_status("CDP " + method);
    connected_ = false;   // a write may still be in flight: the connection cannot be used again
    return unavailable("CDP " + method + ": no answer within " +
                       std::to_string(options_.call_timeout.count() / 1000) + " s");
  }
  bj::object reply = std::move(replies_[id]);
  replies_.erase(id);
  if (const auto* error = reply.if_contains("error"); error && error->is_object())
    return internal_error("CDP " + method + ": " + string_at(error->as_object(), "message") + " " +
                          string_at(error->as_object(), "data"));
  if (auto* result = reply.if_contains("result"); result && result->is_object()) return std::move(result->as_object());
  return bj::object{};
}

void Browser::on_message(const std::string& text) {
  boost::system::error_code ec;
  bj::value v = bj::parse(text, ec);
  if (ec || !v.is_object()) {
    errors_.push_back({"cdp", "unparseable DevTools message: " + text.substr(0, 200), ""});
    return;
  }
  auto& o = v.as_object();
  if (const auto* id = o.if_contains("id"); id && id->is_int64()) {
    replies_[id->as_int64()] = std::move(o);
    return;
  }
  const std::string session = string_at(o, "sessionId");
  if (!session.empty() && session != session_id_) return;
  const auto* params = o.if_contains("params");
  on_event(string_at(o, "method"), params && params->is_object() ? params->as_object() : bj::object{});
}

void Browser::on_event(const std::string& method, const bj::object& params) {
  if (method == "Page.loadEventFired") {
    ++load_events_;
  } else if (method == "Page.navigatedWithinDocument") {
    ++same_document_navigations_;
  } else if (method == "Runtime.consoleAPICalled") {
    const std::string type = string_at(params, "type");
    if (type == "error" || type == "assert") errors_.push_back({"console", console_text(params), first_frame_url(params)});
  } else if (method == "Runtime.exceptionThrown") {
    const auto* d = params.if_contains("exceptionDetails");
    if (d && d->is_object()) errors_.push_back({"exception", exception_text(d->as_object()), first_frame_url(d->as_object())});
  } else if (method == "Log.entryAdded") {
    const auto* e = params.if_contains("entry");
    if (e && e->is_object() && string_at(e->as_object(), "level") == "error")
      errors_.push_back({"log/" + string_at(e->as_object(), "source"), string_at(e->as_object(), "text"),
                         string_at(e->as_object(), "url")});
  } else if (method == "Inspector.targetCrashed") {
    errors_.push_back({"crash", "the page's renderer crashed", ""});
  }
}

Status Browser::navigate(const std::string& url) {
  const int64_t loads_before = load_events_;
  JS_ASSIGN_OR_RETURN(bj::object result, call("Page.navigate", bj::object{{"url", url}}));
  const std::string error_text = string_at(result, "errorText");
  if (!error_text.empty()) return unavailable("loading " + url + " failed: " + error_text);
  if (!result.contains("loaderId")) return Status::ok();   // same-document (fragment) navigation, committed
  if (!run_until(Clock::now() + options_.call_timeout, [&] { return load_events_ > loads_before; }))
    return connected_ ? unavailable("no load event for " + url + " within " +
                                    std::to_string(options_.call_timeout.count() / 1000) + " s")
                      : connection_status("loading " + url);
  return Status::ok();
}

Result<bj::value> Browser::evaluate(const std::string& expression) {
  bj::object params{{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true},
                    {"userGesture", true}};
  JS_ASSIGN_OR_RETURN(bj::object result, call("Runtime.evaluate", std::move(params)));
  if (const auto* d = result.if_contains("exceptionDetails"); d && d->is_object())
    return invalid_argument("evaluating `" + expression + "` threw: " + exception_text(d->as_object()));
  if (const auto* r = result.if_contains("result"); r && r->is_object())
    if (const auto* v = r->as_object().if_contains("value")) return *v;
  return bj::value(nullptr);
}

Status Browser::wait_for(const std::string& predicate, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string last;
  while (true) {
    auto v = evaluate("(() => { return !!(" + predicate + "); })()");
    if (!v.is_ok() && !connected_) return v.status();
    if (v.is_ok() && v->is_bool() && v->as_bool()) return Status::ok();
    last = v.is_ok() ? bj::serialize(*v) : v.status().message();
    if (Clock::now() >= deadline) break;
    // Poll again in 100 ms, handling the browser's events (console errors, loads) meanwhile.
    run_until(std::min(deadline, Clock::now() + std::chrono::milliseconds(100)), [] { return false; });
  }
  return unavailable("timed out after " + std::to_string(timeout.count() / 1000) + " s waiting for `" + predicate +
                     "` (last: " + last + ")");
}

Status Browser::type_text(const std::string& selector, const std::string& text) {
  JS_ASSIGN_OR_RETURN(bj::value focused,
                      evaluate("(() => { const e = document.querySelector(" + js_string(selector) +
                               "); if (!e) return false; e.focus(); e.value = '';"
                               " return document.activeElement === e; })()"));
  if (!focused.is_bool() || !focused.as_bool()) return not_found("no focusable element matches " + selector);
  JS_ASSIGN_OR_RETURN(bj::object ignored, call("Input.insertText", bj::object{{"text", text}}));
  (void)ignored;
  return Status::ok();
}

Status Browser::click(const std::string& selector) {
  JS_ASSIGN_OR_RETURN(bj::value box,
                      evaluate("(() => { const e = document.querySelector(" + js_string(selector) +
                               "); if (!e) return null; e.scrollIntoView({block: 'center'});"
                               " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2,"
                               " r.width, r.height]; })()"));
  if (!box.is_array()) return not_found("no element matches " + selector);
  const auto& b = box.as_array();
  if (b[2].to_number<double>() <= 0 || b[3].to_number<double>() <= 0)
    return invalid_argument("the element " + selector + " is not visible (zero size)");
  for (const char* type : {"mousePressed", "mouseReleased"}) {
    bj::object event{{"type", type}, {"x", b[0].to_number<double>()}, {"y", b[1].to_number<double>()},
                     {"button", "left"}, {"buttons", 1}, {"clickCount", 1}};
    JS_ASSIGN_OR_RETURN(bj::object ignored, call("Input.dispatchMouseEvent", std::move(event)));
    (void)ignored;
  }
  return Status::ok();
}

Status Browser::screenshot(const std::filesystem::path& path) {
  JS_ASSIGN_OR_RETURN(bj::object layout, call("Page.getLayoutMetrics"));
  double width = options_.width, height = options_.height;
  if (const auto* size = layout.if_contains("cssContentSize"); size && size->is_object()) {
    width = std::max(width, size->at("width").to_number<double>());
    height = std::min(std::max(height, size->at("height").to_number<double>()), 16000.0);
  }
  bj::object clip{{"x", 0}, {"y", 0}, {"width", width}, {"height", height}, {"scale", 1}};
  bj::object params{{"format", "png"}, {"captureBeyondViewport", true}, {"clip", std::move(clip)}};
  JS_ASSIGN_OR_RETURN(bj::object shot, call("Page.captureScreenshot", std::move(params)));
  const auto png = decode_base64(string_at(shot, "data"));
  if (!png || png->size() < 8) return protocol_error("Page.captureScreenshot answered no PNG data");
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << *png;
  out.close();
  if (!out) return io_error("cannot write the screenshot " + path.string());
  return Status::ok();
}

std::string Browser::errors_text() const {
  std::string text;
  for (const auto& e : errors_) text += "[" + e.source + "] " + e.text + (e.url.empty() ? "" : " (" + e.url + ")") + "\n";
  return text;
}

std::string Browser::log_tail(size_t max_bytes) const {
  const std::string log = read_whole(log_path_);
  return log.size() > max_bytes ? log.substr(log.size() - max_bytes) : log;
}

}  // namespace jetsweep::testing

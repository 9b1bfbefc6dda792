// libFuzzer target: the controller's HTTP JSON API (Controller::handle_api, routes in common/api.hpp) over a
// MemoryStore, wired as tests/controller/controller_fixture.cpp wires it (a DbWorker, the Controller with
// its CampaignWorker, one io_context whose handlers this thread runs), without a database or a socket.
// Every input starts from a store holding one small campaign (so status, report, pause/resume/cancel and
// run cancels find something) and is up to kMaxRequests requests, separated by a line "###":
//   METHOD TARGET
//   Header: value            (any number, up to kMaxHeaders)
//   <empty line>
//   body
// The API token is "fuzz-token" (seeds send "Authorization: Bearer fuzz-token"). Properties: each request
// is answered exactly once within kAnswerTimeout, never with 500, with a JSON body on /api/... and for every
// error (an error reply names why), with a content type elsewhere (the dashboard's page and assets, /metrics);
// the threading rule holds (IoThreadChecker enabled: a handler off the io thread aborts).
#include <boost/asio.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/campaign.hpp"
#include "controller/api_call.hpp"
#include "controller/controller.hpp"
#include "controller/io_thread.hpp"
#include "controller/memory_store.hpp"
#include "fuzz/fuzz_util.hpp"

namespace {

using namespace jetsweep;
using namespace jetsweep::controller;
namespace asio = boost::asio;
namespace http = boost::beast::http;

constexpr size_t kMaxRequests = 4;
constexpr size_t kMaxHeaders = 16;
constexpr auto kAnswerTimeout = std::chrono::seconds(20);
constexpr std::string_view kSeparator = "\n###\n";
constexpr double kNow = 1.7e9;

// The campaign every input's store starts with: two runs, one of them on a board class.
constexpr std::string_view kStoredCampaign = R"(campaign: stored
matrix:
  model: lenet5
  dataset: fashion-mnist
  batch_size: [16, 64]
  epochs: 1
  device: [any, agx-orin]
  power_mode: MAXN
exclude:
  - {batch_size: 64, device: any}
)";

ControllerOptions fuzz_options() {
  ControllerOptions o;
  o.heartbeat_interval = std::chrono::hours(1);
  o.sweep_interval = std::chrono::hours(1);
  o.api_token = "fuzz-token";
  o.max_campaigns_waiting = 2;
  // Bounded work per request (as fuzz_campaign's limits).
  o.campaign_limits.max_yaml_bytes = 64 << 10;
  o.campaign_limits.max_runs = 2'000;
  o.campaign_limits.max_generated_modes = 2'000;
  o.campaign_limits.max_list_length = 200;
  o.campaign_limits.max_rules = 200;
  o.campaign_limits.max_rule_evaluations = 100'000;
  return o;
}

std::string_view take_line(std::string_view& text) {
  const size_t nl = text.find('\n');
  std::string_view line = text.substr(0, nl);
  text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

HttpRequest make_request(std::string_view text) {
  HttpRequest req;
  req.version(11);
  std::string_view start = take_line(text);
  const size_t space = start.find(' ');
  const std::string_view method = start.substr(0, space);
  const std::string_view target = space == std::string_view::npos ? "/" : start.substr(space + 1);
  const http::verb verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) req.method_string(method.empty() ? "GET" : method);
  else req.method(verb);
  req.target(target.empty() ? "/" : target);
  bool content_length = false;
  for (size_t n = 0; n < kMaxHeaders && !text.empty(); ++n) {
    const std::string_view line = take_line(text);
    if (line.empty()) break;
    const size_t colon = line.find(':');
    std::string_view name = line.substr(0, colon), value;
    if (colon != std::string_view::npos) value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (name.empty()) continue;
    // Copies: Beast 1.81's iequals reads one byte past the end of names that differ only in case ("a" vs
    // "A"); a std::string's terminator keeps that read inside its buffer, as the parser's buffer does in the
    // server (fuzz/regressions/api/beast-iequals-overread-header-name; fixed in Boost 1.82).
    const std::string name_copy(name), value_copy(value);
    content_length |= http::string_to_field(name_copy) == http::field::content_length;
    req.insert(name_copy, value_copy);
  }
  req.body() = std::string(text);
  if (content_length) return req;
  // Beast's prepare_payload throws for a TRACE request with a body (std::invalid_argument), yet a client
  // can send one and the server's parser accepts it: state its length as such a client would
  // (fuzz/regressions/api/trace-with-body-harness-threw).
  if (req.method() == http::verb::trace && !req.body().empty()) req.content_length(req.body().size());
  else req.prepare_payload();
  return req;
}

const Campaign& stored_campaign() {
  static const Campaign c = [] {
    auto parsed = parse_campaign(kStoredCampaign, "stored.yaml");
    fuzz::require(parsed.is_ok(), "the stored campaign parses", parsed.is_ok() ? "" : parsed.status().to_string());
    return parsed.value();
  }();
  return c;
}

// The API's answers are JSON; the dashboard's page and assets (GET / and /ui/NAME) and /metrics (Prometheus
// text) answer 200 with their own content type; every error, on any path, is a JSON ErrorReply.
bool json_route(const HttpRequest& req) {
  const auto parts = split_path(req.target());
  return !parts.empty() && parts[0] == "api";
}

void check_answer(const HttpRequest& req, const HttpResponse& res, std::string_view request) {
  const std::string where = std::string(request.substr(0, 200));
  fuzz::require(res.result() != http::status::internal_server_error, "no request is answered 500",
                where + " -> " + res.body());
  if (res.result_int() < 400 && !json_route(req)) {
    fuzz::require(!res[http::field::content_type].empty(), "a page, asset or metrics answer has a content type",
                  where);
    return;
  }
  boost::system::error_code ec;
  const boost::json::value body = boost::json::parse(res.body(), ec);
  fuzz::require(!ec, "every API answer and every error is JSON", where + " -> " + res.body());
  if (res.result_int() >= 400) {
    const auto* obj = body.if_object();
    const auto* error = obj ? obj->if_contains("error") : nullptr;
    fuzz::require(error && error->is_string() && !error->as_string().empty(), "an error answer says why",
                  where + " -> " + res.body());
  }
}

// What every input shares, made once (LLVMFuzzerInitialize): the io_context (this thread runs it) and the
// DbWorker with its thread and MemoryStore. Creating them per input cost more than the requests themselves
// (an epoll instance and its timer service, a thread under ASan); each input still starts from the same
// state: the store is reset to `initial` before its first request, and the worker's queue is empty between
// inputs (run_input waits for a job posted behind everything the input queued). Only the worker's metrics
// (GET /metrics) carry over from one input to the next.
struct Shared {
  asio::io_context ioc{1};
  MemoryStore initial{3, [] { return kNow; }};
  DbWorker db{std::make_unique<MemoryStore>(3, [] { return kNow; })};
};

Shared& shared() {
  static Shared* s = [] {
    auto* made = new Shared();   // never destroyed: its worker serves every input until the process exits
    auto created = made->initial.create_campaign(stored_campaign(), "stored.yaml", std::string(kStoredCampaign), "");
    fuzz::require(created.is_ok(), "the stored campaign is stored", created.is_ok() ? "" : created.status().to_string());
    made->db.start();
    return made;
  }();
  return *s;
}

// Runs `job` on the DbWorker behind every job queued before it and returns once its completion has run on
// this thread, so every completion queued before it has run too (both queues are FIFO).
void db_barrier(Shared& s, std::function<Status(Store&)> job) {
  bool done = false;
  s.db.post<Status>(s.ioc.get_executor(), std::move(job), [&](Status st) {
    fuzz::require(st.is_ok(), "the DbWorker's barrier job succeeds", st.to_string());
    done = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + kAnswerTimeout;
  while (!done && std::chrono::steady_clock::now() < deadline) s.ioc.run_one_for(std::chrono::milliseconds(50));
  fuzz::require(done, "the DbWorker's queue drains");
}

// One input: the store reset, a fresh controller (with its CampaignWorker); the requests answered one after
// the other.
void run_input(std::string_view input) {
  Shared& s = shared();
  s.ioc.restart();
  auto guard = asio::make_work_guard(s.ioc);   // the worker's completions are posted from its thread
  db_barrier(s, [&s](Store& store) {
    dynamic_cast<MemoryStore&>(store).copy_contents_from(s.initial);
    return Status::ok();
  });
  auto controller = std::make_shared<Controller>(s.ioc, s.db, fuzz_options());
  for (size_t i = 0; i < kMaxRequests && !input.empty(); ++i) {
    const size_t sep = input.find(kSeparator);
    const std::string_view text = input.substr(0, sep);
    input = sep == std::string_view::npos ? std::string_view() : input.substr(sep + kSeparator.size());
    int answers = 0;
    std::optional<HttpResponse> response;
    HttpRequest req = make_request(text);
    const HttpRequest sent = req;   // a copy for the check (handle_api takes the request)
    controller->handle_api(std::move(req), [&](HttpResponse&& r) {
      ++answers;
      response = std::move(r);
    });
    const auto deadline = std::chrono::steady_clock::now() + kAnswerTimeout;
    while (!response && std::chrono::steady_clock::now() < deadline) s.ioc.run_one_for(std::chrono::milliseconds(50));
    fuzz::require(response.has_value(), "every request is answered", std::string(text.substr(0, 200)));
    check_answer(sent, *response, text);
    s.ioc.poll();   // whatever else is ready (nothing should answer twice)
    fuzz::require(answers == 1, "every request is answered once", std::string(text.substr(0, 200)));
  }
  controller->stop();
  // The store's jobs still queued finish and their completions run here, while the controller lives.
  db_barrier(s, [](Store&) { return Status::ok(); });
  guard.reset();
  // Nothing of this input's may stay queued (a timer or handler left would outlive its controller).
  s.ioc.run_for(kAnswerTimeout);
  fuzz::require(s.ioc.stopped(), "nothing of an input's stays queued after its controller stopped");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  IoThreadChecker::set_enabled(true);
  (void)shared();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run_input(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

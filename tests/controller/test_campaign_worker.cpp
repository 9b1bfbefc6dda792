// Campaigns are parsed and expanded on the CampaignWorker, off the I/O thread: the controller keeps answering
// while one is in progress (a latch the test holds keeps it in progress, deterministically), a full queue is
// answered 503, a campaign over a limit 400 naming it, and a body over the YAML limit 413 before it is read.
#include <doctest/doctest.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "common/api.hpp"
#include "controller_fixture.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
namespace http = boost::beast::http;
using controller::HttpRequest;
using controller::HttpResponse;

namespace {

const char* const kCampaign = "campaign: c\nmatrix: {model: lenet5, dataset: mnist, device: host, batch_size: [8, 16]}\n";

// Holds the CampaignWorker's jobs at their start until released; counts the jobs that reached it.
class Gate {
 public:
  void pass() {
    std::unique_lock lock(mu_);
    ++entered_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  // Jobs that have reached the gate. A submission reaches the worker once the io thread has had the enrolled
  // boards' tables from the database: tests drain the io_context until it has.
  int entered() {
    std::lock_guard lock(mu_);
    return entered_;
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int entered_ = 0;
  bool open_ = false;
};

// Installs a Gate on the fixture's CampaignWorker; releases it when the test ends, pass or fail, before the
// fixture stops the worker.
struct GatedWorker {
  explicit GatedWorker(ControllerFixture& f) : gate(std::make_shared<Gate>()) {
    f.controller->campaign_worker().set_before_job([g = gate] { g->pass(); });
  }
  ~GatedWorker() { gate->release(); }
  std::shared_ptr<Gate> gate;
};

// Starts an API call; its answer lands in `out` once the io_context has been drained far enough.
void start_call(ControllerFixture& f, http::verb method, const std::string& target, const std::string& body,
                std::optional<HttpResponse>& out) {
  HttpRequest req{method, target, 11};
  req.body() = body;
  req.prepare_payload();
  f.controller->handle_api(std::move(req), [&out](HttpResponse&& r) { out = std::move(r); });
}

}  // namespace

TEST_SUITE("controller") {

TEST_CASE("health is answered while a campaign is being expanded; the submission is answered after") {
  ControllerFixture f;
  GatedWorker worker(f);
  std::optional<HttpResponse> submitted, estimated;
  start_call(f, http::verb::post, "/api/campaigns", kCampaign, submitted);
  REQUIRE(f.drain_until([&] { return worker.gate->entered() == 1; }));   // the parse is in progress on the worker
  start_call(f, http::verb::post, "/api/campaigns/estimate", kCampaign, estimated);   // waits behind it
  auto health = f.api(http::verb::get, "/api/health");
  CHECK(health.result() == http::status::ok);
  CHECK_FALSE(submitted.has_value());
  CHECK_FALSE(estimated.has_value());
  worker.gate->release();
  REQUIRE(f.drain_until([&] { return submitted.has_value() && estimated.has_value(); }));
  CHECK(submitted->result() == http::status::created);
  CHECK(estimated->result() == http::status::ok);
  auto reply = api::decode<api::CreatedCampaignReply>(boost::json::parse(submitted->body()), "submit reply");
  REQUIRE(reply.is_ok());
  CHECK(reply->runs == 2);
}

TEST_CASE("a full CampaignWorker queue answers 503 busy at once; the queued ones are answered") {
  controller::ControllerOptions options = test_options();
  options.max_campaigns_waiting = 2;
  ControllerFixture f(options);
  GatedWorker worker(f);
  std::optional<HttpResponse> running, waiting1, waiting2, refused;
  start_call(f, http::verb::post, "/api/campaigns", kCampaign, running);
  REQUIRE(f.drain_until([&] { return worker.gate->entered() == 1; }));   // taken off the queue: in progress, not waiting
  start_call(f, http::verb::post, "/api/campaigns", kCampaign, waiting1);
  start_call(f, http::verb::post, "/api/campaigns/estimate", kCampaign, waiting2);
  REQUIRE(f.drain_until([&] { return f.controller->campaign_worker().waiting() == 2; }));
  start_call(f, http::verb::post, "/api/campaigns", kCampaign, refused);
  REQUIRE(refused.has_value());   // answered on the spot, before any database work, nothing queued
  CHECK(f.controller->campaign_worker().waiting() == 2);
  CHECK(refused->result() == http::status::service_unavailable);
  CHECK(refused->body().find("busy: 2 campaigns are waiting to be parsed already") != std::string::npos);
  worker.gate->release();
  REQUIRE(f.drain_until([&] { return running && waiting1 && waiting2; }));
  CHECK(running->result() == http::status::created);
  CHECK(waiting1->result() == http::status::created);
  CHECK(waiting2->result() == http::status::ok);
}

TEST_CASE("a campaign over a limit is answered 400 naming the limit; the controller keeps serving") {
  controller::ControllerOptions options = test_options();
  options.campaign_limits.max_runs = 10;
  ControllerFixture f(options);
  auto res = f.api(http::verb::post, "/api/campaigns",
                   "campaign: big\nrepetitions: 6\nmatrix: {model: lenet5, dataset: mnist, batch_size: [8, 16]}\n");
  CHECK(res.result() == http::status::bad_request);
  CHECK(res.body().find("the matrix expands to 12 runs, more than the limit max_runs = 10") != std::string::npos);
  std::string rules = "campaign: r\nmatrix: {model: lenet5, dataset: mnist, seed: [1, 2]}\nexclude:\n";
  for (int i = 0; i < 10001; ++i) rules += "  - {seed: " + std::to_string(100 + i) + "}\n";
  auto est = f.api(http::verb::post, "/api/campaigns/estimate", rules);
  CHECK(est.result() == http::status::bad_request);
  CHECK(est.body().find("'exclude' has 10001 entries, more than the limit max_rules = 10000") != std::string::npos);
  CHECK(f.api(http::verb::get, "/api/health").result() == http::status::ok);
  CHECK(f.submit(kCampaign) > 0);
}

TEST_CASE("a request body over the campaign YAML limit is refused with 413 from its header, before it is read") {
  namespace beast = boost::beast;
  ControllerFixture f;
  boost::asio::ip::tcp::socket socket(f.ioc);
  beast::flat_buffer buffer;
  HttpResponse res;
  bool connected = false, answered = false;
  socket.async_connect({boost::asio::ip::address_v4::loopback(), f.port}, [&](beast::error_code ec) { connected = !ec; });
  REQUIRE(f.drain_until([&] { return connected; }));
  // The header announces 5 MiB; no byte of the body is sent.
  const std::string header = "POST /api/campaigns HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(5u << 20) + "\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(header));
  http::async_read(socket, buffer, res, [&](beast::error_code ec, std::size_t) { answered = !ec; });
  REQUIRE(f.drain_until([&] { return answered; }));
  CHECK(res.result() == http::status::payload_too_large);
  CHECK(res.body().find("max_yaml_bytes = 4194304") != std::string::npos);
}

}  // TEST_SUITE

#include "controller_fixture.hpp"

#include <boost/beast/http.hpp>
#include <doctest/doctest.h>

#include "common/api.hpp"
#include "support/io_drain.hpp"

namespace jetsweep::testing {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using namespace jetsweep::controller;

ControllerOptions test_options() {
  ControllerOptions o;
  o.heartbeat_interval = std::chrono::hours(1);
  o.sweep_interval = std::chrono::milliseconds(5);
  o.lease_s = 30;
  return o;
}

ControllerFixture::ControllerFixture(ControllerOptions options) {
  auto memory = std::make_unique<MemoryStore>(3, [this] { return clock.now(); });
  store = memory.get();
  auto wrapped = std::make_unique<FlakyStore>(std::move(memory));
  flaky = wrapped.get();
  db = std::make_unique<DbWorker>(std::move(wrapped));
  db->start();
  controller = std::make_shared<Controller>(ioc, *db, options);
  listener = std::make_shared<Listener>(ioc, controller);
  REQUIRE(listener->listen({asio::ip::address_v4::loopback(), 0}).is_ok());
  port = listener->local_endpoint().port();
  controller->start();
  listener->start();
}

ControllerFixture::~ControllerFixture() {
  listener->stop();
  controller->stop();
  db->stop();          // finishes queued jobs; their completions wait in the io_context
  drain_ready(ioc);    // and run here, on the io thread, before anything they use goes away
}

bool ControllerFixture::drain_until(const std::function<bool()>& done) { return testing::drain_until(ioc, done); }

std::shared_ptr<ProtocolClient> ControllerFixture::connect_agent(const proto::Register& reg) {
  auto client = ProtocolClient::create(ioc);
  client->connect(port);
  client->send(reg);
  CHECK(drain_until([&] { return client->count<proto::Registered>() == 1 || client->closed(); }));
  return client;
}

int64_t ControllerFixture::registered_id(const ProtocolClient& client) {
  auto r = client.all<proto::Registered>();
  return r.empty() ? 0 : r.back().agent_id;
}

bool ControllerFixture::settle_db() {
  bool done = false;
  db->post<Status>(
      ioc.get_executor(), [](Store&) { return Status::ok(); }, [&done](Status) { done = true; });
  return drain_until([&] { return done; });
}

bool ControllerFixture::round_trip(ProtocolClient& client) {
  proto::EpochResult probe;   // for a run nobody owns: acknowledged, its row dropped
  probe.run_id = std::numeric_limits<int32_t>::max();
  probe.e2e_s = probe.compute_s = 1;
  probe.minibatches = 1;
  const uint64_t id = client.send(probe);
  return drain_until([&] { return client.acked(id) || client.closed(); }) && client.acked(id);
}

HttpResponse ControllerFixture::api(http::verb method, const std::string& target, const std::string& body) {
  HttpRequest req{method, target, 11};
  req.body() = body;
  req.prepare_payload();
  std::optional<HttpResponse> response;
  controller->handle_api(std::move(req), [&](HttpResponse&& r) { response = std::move(r); });
  CHECK(drain_until([&] { return response.has_value(); }));
  return response ? std::move(*response) : HttpResponse{http::status::request_timeout, 11};
}

int64_t ControllerFixture::submit(const std::string& yaml) {
  auto res = api(http::verb::post, "/api/campaigns", yaml);
  if (res.result() != http::status::created) {
    FAIL_CHECK("submit answered " << res.result_int() << ": " << res.body());
    return 0;
  }
  auto reply = api::decode<api::CreatedCampaignReply>(boost::json::parse(res.body()), "submit reply");
  REQUIRE(reply.is_ok());
  return reply->campaign_id;
}

std::shared_ptr<AgentSession> ControllerFixture::accept_session(ProtocolClient& client) {
  asio::ip::tcp::acceptor acceptor(ioc, {asio::ip::address_v4::loopback(), 0});
  std::shared_ptr<AgentSession> session;
  asio::ip::tcp::socket socket(ioc);
  beast::flat_buffer buffer;
  HttpRequest upgrade;
  bool accepted = false, read = false;
  acceptor.async_accept(socket, [&](beast::error_code ec) { accepted = !ec; });
  client.connect(acceptor.local_endpoint().port());
  REQUIRE(drain_until([&] { return accepted || client.closed(); }));
  http::async_read(socket, buffer, upgrade, [&](beast::error_code ec, std::size_t) { read = !ec; });
  REQUIRE(drain_until([&] { return read; }));
  session = std::make_shared<AgentSession>(std::move(socket), controller);
  session->run(std::move(upgrade));
  REQUIRE(drain_until([&] { return client.connected() || client.closed(); }));
  REQUIRE(client.connected());
  return session;
}

}  // namespace jetsweep::testing

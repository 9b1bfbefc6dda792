// ControllerFixture: the controller as jetsweep-controller wires it (Controller, Listener, a DbWorker) over
// a MemoryStore with a manual clock (behind a FlakyStore a test may tell to fail calls), on an io_context the test drains on its own thread; agents are
// ProtocolClients in the same process. No PostgreSQL, no processes, no sleeps. Test thread only.
#pragma once

#include <boost/asio.hpp>
#include <functional>
#include <memory>
#include <string>

#include "controller/agent_session.hpp"
#include "controller/controller.hpp"
#include "controller/memory_store.hpp"
#include "controller/server.hpp"
#include "support/flaky_store.hpp"
#include "support/manual_clock.hpp"
#include "support/protocol_client.hpp"

namespace jetsweep::testing {

// Options for tests: no heartbeats or clock probes during a test, a fast lease sweep.
controller::ControllerOptions test_options();

class ControllerFixture {
 public:
  explicit ControllerFixture(controller::ControllerOptions options = test_options());
  ~ControllerFixture();

  // Runs the io_context until `done()` holds (false after a generous timeout: the test failed).
  bool drain_until(const std::function<bool()>& done);
  // A connected agent that sent `reg` and got its 'registered' reply (check registered_id()).
  std::shared_ptr<ProtocolClient> connect_agent(const proto::Register& reg);
  // The agent id the controller gave `client` (0 before 'registered').
  static int64_t registered_id(const ProtocolClient& client);
  // Waits until every database job posted so far has run (a no-op job behind them has completed): a fault armed
  // after this meets only calls made after it.
  bool settle_db();
  // Sends a message the controller acknowledges and waits for its ack. The controller handles frames and
  // database jobs in order, so whatever it was going to send `client` before has arrived by then.
  bool round_trip(ProtocolClient& client);
  // An HTTP API call through Controller::handle_api, answered once drained.
  controller::HttpResponse api(boost::beast::http::verb method, const std::string& target, const std::string& body = "");
  // Submits a campaign (POST /api/campaigns); its id, or 0 when refused.
  int64_t submit(const std::string& yaml);
  // An AgentSession of the test's own making over loopback (the Listener makes them likewise), for checks
  // of its flow control; the client is connected once the session has accepted it.
  std::shared_ptr<controller::AgentSession> accept_session(ProtocolClient& client);

  ManualClock clock;
  boost::asio::io_context ioc{1};
  controller::MemoryStore* store = nullptr;   // owned by flaky
  FlakyStore* flaky = nullptr;                // owned by db; passes every call through unless told to fail one
  std::unique_ptr<controller::DbWorker> db;
  std::shared_ptr<controller::Controller> controller;
  std::shared_ptr<controller::Listener> listener;
  uint16_t port = 0;
};

}  // namespace jetsweep::testing

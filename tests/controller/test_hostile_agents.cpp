// Issue 12, findings 3 and 5, against the real Listener, AgentSession and Controller over a MemoryStore: a holder of
// the enrollment secret cannot take over an enrolled agent's name; revoking a credential; rejected frames are
// counted for the whole connection and logged at a bounded rate; a newline cannot forge a log line; invalid UTF-8
// in the API is a 400 naming the place.
#include <doctest/doctest.h>

#include <boost/beast/http.hpp>

#include "common/api.hpp"
#include "controller/client_error.hpp"
#include "controller_fixture.hpp"
#include "support/stderr_capture.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
namespace http = boost::beast::http;

namespace {

const char* const kOneRun = "campaign: one\nmatrix: {model: lenet5, dataset: mnist, device: host}\n";

// An agent's connection that sent `reg` and was either registered or turned away (closed).
std::shared_ptr<ProtocolClient> try_register(ControllerFixture& f, const proto::Register& reg) {
  auto client = ProtocolClient::create(f.ioc);
  client->connect(f.port);
  client->send(reg);
  CHECK(f.drain_until([&] { return client->count<proto::Registered>() == 1 || client->closed(); }));
  return client;
}

std::optional<std::string> issued_credential(const ProtocolClient& client) {
  auto r = client.all<proto::Registered>();
  return r.empty() ? std::nullopt : r.back().credential;
}

bool refused_for_credential(const ProtocolClient& client) {
  for (const auto& e : client.all<proto::Error>())
    if (e.code == "credential_refused") return client.closed() && client.count<proto::Registered>() == 0;
  return false;
}

}  // namespace

TEST_SUITE("controller") {

TEST_CASE("an enrolled agent's name cannot be taken over without its credential (finding 3)") {
  ControllerFixture f;
  auto victim = f.connect_agent(test_register("host-1"));
  const auto credential = issued_credential(*victim);
  REQUIRE(credential);
  CHECK(proto::is_credential_text(*credential));
  const int64_t campaign = f.submit(kOneRun);
  REQUIRE(f.drain_until([&] { return victim->count<proto::AssignRun>() == 1; }));
  const int64_t run_id = victim->all<proto::AssignRun>()[0].run_id;

  SUBCASE("presenting no credential, claiming the victim's run") {
    auto reg = test_register("host-1");
    reg.current_run = run_id;
    auto impostor = try_register(f, reg);
    CHECK(refused_for_credential(*impostor));
  }
  SUBCASE("presenting a made-up credential") {
    auto reg = test_register("host-1");
    reg.credential = std::string(proto::kCredentialChars, '0');
    auto impostor = try_register(f, reg);
    CHECK(refused_for_credential(*impostor));
  }
  // The victim kept its connection and its run; the controller keeps serving it.
  REQUIRE(f.round_trip(*victim));
  CHECK_FALSE(victim->closed());
  const auto run = f.store->runs_of(campaign).front();
  CHECK(run.status == "assigned");
  CHECK(run.agent_id == ControllerFixture::registered_id(*victim));
  CHECK(f.store->agent(ControllerFixture::registered_id(*victim))->connected);
  // The victim itself, reconnecting with its credential, is accepted and gets no new one.
  auto reg = test_register("host-1");
  reg.credential = credential;
  reg.current_run = run_id;
  auto again = f.connect_agent(reg);
  REQUIRE(again->count<proto::Registered>() == 1);
  CHECK_FALSE(issued_credential(*again));
}

TEST_CASE("revoking a credential disconnects its holder and lets the name enroll again") {
  ControllerFixture f;
  auto first = f.connect_agent(test_register("host-1"));
  const auto old_credential = issued_credential(*first);
  REQUIRE(old_credential);

  auto res = f.api(http::verb::post, "/api/agents/host-1/revoke");
  REQUIRE(res.result() == http::status::ok);
  auto revoked = api::decode<api::AgentRevoked>(boost::json::parse(res.body()), "revocation");
  REQUIRE(revoked.is_ok());
  CHECK(revoked->had_credential);
  CHECK(revoked->disconnected);
  REQUIRE(f.drain_until([&] { return first->closed(); }));

  auto second = f.connect_agent(test_register("host-1"));
  const auto new_credential = issued_credential(*second);
  REQUIRE(new_credential);
  CHECK(*new_credential != *old_credential);
  // The revoked credential no longer opens the name.
  auto reg = test_register("host-1");
  reg.credential = old_credential;
  CHECK(refused_for_credential(*try_register(f, reg)));

  CHECK(f.api(http::verb::post, "/api/agents/nobody/revoke").result() == http::status::not_found);
  CHECK(f.api(http::verb::post, "/api/agents/bad%0Aname/revoke").result() == http::status::bad_request);
}

TEST_CASE("the enrollment secret is needed once: an enrolled agent's credential admits it without the secret") {
  auto options = test_options();
  options.enroll_secret = "lab-secret";
  ControllerFixture f(options);
  auto connect = [&](const std::string& secret, const std::string& credential, const proto::Register& reg) {
    auto client = ProtocolClient::create(f.ioc);
    client->connect(f.port, secret, credential);
    client->send(reg);
    CHECK(f.drain_until([&] { return client->count<proto::Registered>() == 1 || client->closed(); }));
    return client;
  };
  auto enrolled = connect("lab-secret", "", test_register("host-1"));
  const auto credential = issued_credential(*enrolled);
  REQUIRE(credential);
  enrolled->close();

  auto reg = test_register("host-1");
  reg.credential = credential;
  auto again = connect("", *credential, reg);   // no secret: the credential header admits it
  CHECK(again->count<proto::Registered>() == 1);
  CHECK_FALSE(issued_credential(*again));
  // Neither secret nor credential: refused at the upgrade, as before.
  CHECK(connect("", "", test_register("host-2"))->count<proto::Registered>() == 0);
  // Some credential-looking header but no secret: admitted to the socket, yet it can neither enroll a new name ...
  auto newcomer = connect("", std::string(proto::kCredentialChars, 'b'), test_register("host-2"));
  CHECK(newcomer->count<proto::Registered>() == 0);
  REQUIRE_FALSE(newcomer->all<proto::Error>().empty());
  CHECK(newcomer->all<proto::Error>()[0].message.find("did not present the enrollment secret") != std::string::npos);
  // ... nor take an enrolled one.
  auto other = test_register("host-1");
  other.credential = std::string(proto::kCredentialChars, 'b');
  CHECK(refused_for_credential(*connect("", *other.credential, other)));
}

TEST_CASE("rejected frames count for the whole connection, and only a few a minute are logged (finding 5)") {
  ControllerFixture f;
  StderrCapture log;
  auto agent = f.connect_agent(test_register("host-1"));
  REQUIRE(agent->count<proto::Registered>() == 1);
  const std::string junk(1 << 20, 'x');   // 1 MiB of garbage per frame
  int sent = 0;
  // A valid heartbeat after every bad frame used to reset the count, keeping the connection open for ever.
  while (!agent->closed() && sent < 40) {
    agent->send_raw(junk);
    agent->send(proto::Heartbeat{"idle", std::nullopt, {}, {}});
    ++sent;
    // The controller answers each rejected frame with an error (or closes at the limit).
    REQUIRE(f.drain_until([&] { return agent->count<proto::Error>() == static_cast<size_t>(sent) || agent->closed(); }));
  }
  REQUIRE(f.drain_until([&] { return agent->closed(); }));
  CHECK(sent <= 21);   // closed at the 20th (the 21st may be on its way when the close arrives)
  CHECK(agent->count<proto::Error>() <= 20);
  CHECK(log.lines_with("): rejected frame ") == 5);
  CHECK(log.lines_with("disconnected: too many rejected frames") == 1);
  CHECK(log.text().size() < 64 * 1024);   // 20 MiB of garbage, a few KiB of log
  CHECK(f.api(http::verb::get, "/api/health").result() == http::status::ok);
}

TEST_CASE("agent names outside [A-Za-z0-9._-] are refused; a newline cannot forge a log line (finding 5)") {
  ControllerFixture f;
  StderrCapture log;
  const std::string forged = "2026-11-24T00:00:00.000Z INFO controller: ok";   // fits the 64 characters
  auto client = ProtocolClient::create(f.ioc);
  client->connect(f.port);
  client->send(test_register("evil\n" + forged));
  REQUIRE(f.drain_until([&] { return client->count<proto::Error>() == 1 || client->closed(); }));
  CHECK(client->count<proto::Registered>() == 0);
  REQUIRE_FALSE(client->all<proto::Error>().empty());
  CHECK_MESSAGE(client->all<proto::Error>()[0].message.find("outside [A-Za-z0-9._-]") != std::string::npos,
                client->all<proto::Error>()[0].message);
  // Log lines text from the peer appears in is escaped: no line begins with the forged text.
  log::write(log::Level::kWarn, "peer said: evil\n" + forged);
  const std::string text = log.text();
  CHECK(text.find("\n" + forged) == std::string::npos);
  CHECK(text.find("evil\\n2026-11-24") != std::string::npos);
}

TEST_CASE("invalid UTF-8 in a campaign or a request target is a 400 naming the place (finding 5)") {
  ControllerFixture f;
  auto res = f.api(http::verb::post, "/api/campaigns",
                   "campaign: caf\xe9\nmatrix: {model: lenet5, dataset: mnist, device: host}\n");
  CHECK(res.result() == http::status::bad_request);
  CHECK(res.body().find("campaign.yaml:1:14: byte 0xE9 is not valid UTF-8") != std::string::npos);
  auto target = f.api(http::verb::get, "/api/campaigns/caf\xc3\x28");
  CHECK(target.result() == http::status::bad_request);
  CHECK(target.body().find("not valid UTF-8") != std::string::npos);
  CHECK(f.api(http::verb::get, "/api/health").result() == http::status::ok);
}

TEST_CASE("a database error reaches a client as a short message with an error id; the detail only in the log") {
  StderrCapture log;
  const Status db = db_error("registering agent: ERROR:  relation \"agents\" does not exist (SQL: INSERT INTO agents ...)");
  const controller::ClientError e = controller::client_error(db, "GET /api/agents");
  REQUIRE(e.error_id);
  CHECK(e.status.code() == Code::kDbError);
  CHECK(e.status.message() == "database error (error id " + *e.error_id + "; the controller's log has the detail)");
  CHECK(e.status.message().find("relation") == std::string::npos);
  CHECK(log.lines_with(*e.error_id) == 1);
  CHECK(log.text().find("while GET /api/agents: db_error: registering agent: ERROR:  relation") != std::string::npos);
  const auto other = controller::client_error(db, "GET /api/agents");
  CHECK(other.error_id != e.error_id);
  // The client's own mistakes keep their message: it names the place.
  const auto mine = controller::client_error(invalid_argument("c.yaml:3:1: unknown key 'x'"), "POST /api/campaigns");
  CHECK_FALSE(mine.error_id);
  CHECK(mine.status.message() == "c.yaml:3:1: unknown key 'x'");
}

}  // TEST_SUITE

// Issue 12, findings 3 and 5 with the real processes and PostgreSQL: an impostor agent process cannot take an
// enrolled name; `jetsweep agents revoke` lets the board enroll again; a database error reaches the CLI as a
// short message with an error id (PostgreSQL's text only in the controller's log); a campaign whose name is not
// UTF-8 is refused at its place instead of reaching PostgreSQL. The controller keeps serving after each.
#include <doctest/doctest.h>

#include <pqxx/pqxx>
#include <regex>

#include "common/protocol.hpp"
#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;

namespace {

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool connected_count_is(Fleet& fleet, size_t n) {
  auto r = cli::http_request(fleet.url(), "GET", "/api/agents");
  if (!r || r->status != 200) return false;
  size_t connected = 0;
  const bj::value agents = bj::parse(r->body);   // kept: a range-for over parse(...).as_array() would dangle
  for (const auto& a : agents.as_array()) connected += a.at("connected").as_bool() ? 1 : 0;
  return connected == n;
}

}  // namespace

TEST_CASE("an impostor agent cannot take an enrolled name; after a revoke the board enrolls again") {
  TestDatabase db;
  Fleet fleet(db);
  const auto board_journal = fleet.dir() / "journal-board";
  auto& board = fleet.add_agent("nx-1", {"--journal-dir", board_journal.string(), "--sim", "xavier-nx/1"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  REQUIRE_MESSAGE(wait_until(30s, [&] { return std::filesystem::exists(board_journal / "credential"); }), fleet.logs());
  const std::string first_credential = read_text(board_journal / "credential");
  CHECK(first_credential.size() == proto::kCredentialChars + 1);

  // Same name, same enrollment (none needed here), but its own state directory: no credential.
  auto& impostor = fleet.add_agent("nx-1", {"--journal-dir", (fleet.dir() / "journal-impostor").string()});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return impostor.log().find("refused this agent's registration") != std::string::npos; }),
                  fleet.logs());
  CHECK(fleet.controller().log().find("registration refused") != std::string::npos);
  CHECK(connected_count_is(fleet, 1));
  CHECK(db.count("SELECT count(*) FROM agents WHERE name = 'nx-1' AND device_class = 'xavier-nx'") == 1);
  impostor.signal(SIGKILL);
  impostor.wait(10s);

  // The operator revokes nx-1 (e.g. the board's credential leaked): it is disconnected, re-enrolls by itself on
  // reconnecting, and keeps the new credential.
  const std::string out = fleet.cli({"agents", "revoke", "nx-1"});
  CHECK(out.find("agent nx-1: credential revoked; disconnected") != std::string::npos);
  REQUIRE_MESSAGE(wait_until(60s, [&] {
                    return std::filesystem::exists(board_journal / "credential") &&
                           read_text(board_journal / "credential") != first_credential && fleet.agents_connected(1);
                  }),
                  fleet.logs());
  CHECK(board.log().find("enrolled; credential kept in") != std::string::npos);
  fleet.cli({"agents", "revoke", "nobody"}, 2);
  fleet.cli({"agents", "revoke", "bad name"}, 2);
}

TEST_CASE("a database error reaches the CLI as a short message with an error id; the detail stays in the log") {
  TestDatabase db;
  Fleet fleet(db);
  {
    pqxx::connection c(db.dsn());
    pqxx::nontransaction n(c);
    n.exec("ALTER TABLE campaigns RENAME TO campaigns_elsewhere");
  }
  std::string out, err;
  const int rc = run_command(kBin + "/jetsweep", {"--controller", fleet.url(), "status"}, &out, &err);
  CHECK(rc == 1);
  std::smatch id;
  REQUIRE_MESSAGE(std::regex_search(err, id, std::regex("database error \\(error id (E[0-9a-f]+-[0-9]+); the controller's log")),
                  err);
  CHECK(err.find("campaigns") == std::string::npos);   // no SQL, no relation names
  CHECK(err.find("does not exist") == std::string::npos);
  const std::string log = fleet.controller().log();
  const size_t at = log.find("error " + id[1].str() + " while GET /api/campaigns");
  REQUIRE_MESSAGE(at != std::string::npos, log);
  CHECK(log.find("does not exist", at) != std::string::npos);
  auto health = cli::http_request(fleet.url(), "GET", "/api/health");
  REQUIRE(health);
  CHECK(health->status == 200);
}

TEST_CASE("a campaign whose name is not UTF-8 is refused at its place, not by PostgreSQL") {
  TestDatabase db;
  Fleet fleet(db);
  write_file(fleet.dir() / "latin1.yaml", "campaign: caf\xe9\nmatrix: {model: lenet5, dataset: mnist, device: host}\n");
  std::string out, err;
  const std::string file = (fleet.dir() / "latin1.yaml").string();
  CHECK(run_command(kBin + "/jetsweep", {"--controller", fleet.url(), "submit", file}, &out, &err) == 2);
  CHECK(err.find(file + ":1:14: byte 0xE9 is not valid UTF-8") != std::string::npos);
  // Past the CLI's own check, the controller refuses it alike (400 naming the place).
  auto r = cli::http_request(fleet.url(), "POST", "/api/campaigns", read_text(file), {{"X-Jetsweep-Source", "raw.yaml"}});
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(r->body.find("raw.yaml:1:14: byte 0xE9 is not valid UTF-8") != std::string::npos);
  CHECK(db.count("SELECT count(*) FROM campaigns") == 0);
}

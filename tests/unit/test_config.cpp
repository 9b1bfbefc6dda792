#include <doctest/doctest.h>

#include "agent/config.hpp"
#include "controller/config.hpp"

using namespace jetsweep;

TEST_CASE("agent arguments") {
  auto c = agent::parse_agent_args({"--controller", "ws://127.0.0.1:9000", "--name", "nx-1"});
  REQUIRE(c.is_ok());
  CHECK(c->mode == agent::AgentConfig::Mode::kServe);
  CHECK(c->host == "127.0.0.1");
  CHECK(c->port == "9000");
  CHECK(c->target == "/agent");
  CHECK(agent::parse_agent_args({"--name", "x"}).status().message() == "--controller ws://HOST:PORT is required");
  CHECK(agent::parse_agent_args({"--controller", "http://h:1", "--name", "x"}).status().message() ==
        "--controller 'http://h:1': must start with ws://");
  CHECK(agent::parse_agent_args({"--controller", "ws://h:1x", "--name", "x"}).status().message() ==
        "--controller 'ws://h:1x': bad port '1x'");
  CHECK(agent::parse_agent_args({"--controller"}).status().message() == "--controller: missing value");
  CHECK(agent::parse_agent_args({"--frobnicate"}).status().message() == "unknown argument '--frobnicate'");
  auto run = agent::parse_agent_args({"run", "--spec", "s.yaml", "--out", "o.jsonl"});
  REQUIRE(run.is_ok());
  CHECK(run->mode == agent::AgentConfig::Mode::kRun);
  CHECK(agent::parse_agent_args({"run", "--spec", "s.yaml"}).status().message() == "run: --out FILE.jsonl is required");
  auto probe = agent::parse_agent_args({"probe", "--root", "/x", "--json"});
  REQUIRE(probe.is_ok());
  CHECK(probe->mode == agent::AgentConfig::Mode::kDevice);
  CHECK(probe->device_args == std::vector<std::string>{"--root", "/x", "--json"});
}

TEST_CASE("controller arguments") {
  auto c = controller::parse_controller_args({"--db", "dbname=x", "--listen", "0.0.0.0:0", "--lease-s", "5"});
  REQUIRE(c.is_ok());
  CHECK(c->listen_host == "0.0.0.0");
  CHECK(c->listen_port == 0);
  CHECK(c->options.lease_s == 5.0);
  CHECK(controller::parse_controller_args({}).status().message() == "--db DSN is required");
  CHECK(controller::parse_controller_args({"--db", "x", "--listen", "host"}).status().message() ==
        "--listen 'host': expected HOST:PORT");
  CHECK(controller::parse_controller_args({"--db", "x", "--listen", "h:70000"}).status().message() ==
        "--listen port: '70000' is not an integer in [0, 65535]");
  CHECK(controller::parse_controller_args({"--db", "x", "--heartbeat-ms", "1"}).status().code() == Code::kInvalidArgument);
}

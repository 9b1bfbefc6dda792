#include <doctest/doctest.h>

#include "agent/config.hpp"
#include "controller/config.hpp"
#include "support/temp_dir.hpp"

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
        "--controller 'http://h:1': must start with ws:// or wss://");
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

TEST_CASE("controller TLS files come in pairs; secrets come from a flag, a file or the environment, never two") {
  testing::TempDir dir;
  testing::write_file(dir / "token", "tok-from-file\n");
  testing::write_file(dir / "secret", "enroll-from-file\r\n");
  testing::write_file(dir / "empty", "");
  const std::string token = (dir / "token").string(), secret = (dir / "secret").string(), empty = (dir / "empty").string();
  auto parse = [](std::vector<std::string> a) {
    a.insert(a.begin(), {"--db", "x"});
    return controller::parse_controller_args(a);
  };
  auto c = parse({"--tls-cert", "c.pem", "--tls-key", "k.pem", "--api-token-file", token, "--enroll-secret-file", secret});
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  CHECK(c->tls_cert == "c.pem");
  CHECK(c->tls_key == "k.pem");
  CHECK(c->options.api_token == "tok-from-file");
  CHECK(c->options.enroll_secret == "enroll-from-file");
  CHECK(parse({"--tls-cert", "c.pem"}).status().message() == "--tls-cert needs --tls-key FILE (give both or neither)");
  CHECK(parse({"--tls-key", "k.pem"}).status().message() == "--tls-key needs --tls-cert FILE (give both or neither)");
  CHECK(parse({"--api-token", "t", "--api-token-file", token}).status().message() ==
        "--api-token and --api-token-file exclude each other; give one");
  CHECK(parse({"--enroll-secret", "s", "--enroll-secret-file", secret}).status().message() ==
        "--enroll-secret and --enroll-secret-file exclude each other; give one");
  CHECK(parse({"--api-token-file", empty}).status().message() == "--api-token-file " + empty + ": the file is empty");
  CHECK(parse({"--enroll-secret-file", (dir / "nope").string()}).status().message() ==
        "--enroll-secret-file " + (dir / "nope").string() + ": cannot be read");
  CHECK(parse({"--api-token-file"}).status().message() == "--api-token-file: missing value");
}

// Backend flags of jetsweep-agent: --backend, --sim CLASS[/INSTANCE], --time-scale, --state-dir.
#include <doctest/doctest.h>

#include "agent/config.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace jetsweep;

TEST_CASE("--sim selects the sim backend; the instance defaults to the agent name") {
  auto c = agent::parse_agent_args({"--controller", "ws://h:1", "--name", "nx-7", "--sim", "xavier-nx", "--time-scale", "0.001"});
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  CHECK(c->backend == "sim");
  CHECK(c->sim_class == "xavier-nx");
  CHECK(c->sim_instance == "nx-7");
  CHECK(c->time_scale == doctest::Approx(0.001));
  auto d = agent::parse_agent_args({"--controller", "ws://h:1", "--name", "a", "--sim", "agx-orin/3"});
  REQUIRE(d.is_ok());
  CHECK(d->sim_class == "agx-orin");
  CHECK(d->sim_instance == "3");
  CHECK(d->time_scale == 1.0);
  auto run = agent::parse_agent_args({"run", "--spec", "s.yaml", "--out", "o.jsonl", "--sim", "nano"});
  REQUIRE(run.is_ok());
  CHECK(run->sim_instance == "0");
}

TEST_CASE("jetson backend flags") {
  auto c = agent::parse_agent_args(
      {"--controller", "ws://h:1", "--name", "b", "--backend", "jetson", "--state-dir", "/tmp/s", "--idle-restore-s", "30"});
  REQUIRE(c.is_ok());
  CHECK(c->backend == "jetson");
  CHECK(c->state_dir == "/tmp/s");
  CHECK(c->idle_restore_s == 30);
  CHECK(agent::parse_agent_args({"--controller", "ws://h:1", "--name", "b"})->backend == "host");
}

TEST_CASE("reboot flags: off by default; only for a jetson (or sim) agent serving a controller, with its journal") {
  const std::vector<std::string> jetson = {"--controller", "ws://h:1", "--name", "b", "--backend", "jetson"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = jetson;
    args.insert(args.end(), extra.begin(), extra.end());
    return agent::parse_agent_args(args);
  };
  auto plain = with({});
  REQUIRE(plain.is_ok());
  CHECK_FALSE(plain->allow_reboot);
  CHECK(plain->nvpmodel_command == "nvpmodel");
  CHECK(plain->reboot_command == "systemctl reboot");
  auto c = with({"--allow-reboot", "--nvpmodel-command", "/usr/sbin/nvpmodel", "--reboot-command", "/sbin/reboot now",
                 "--reboot-timeout-s", "900"});
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  CHECK(c->allow_reboot);
  CHECK(c->nvpmodel_command == "/usr/sbin/nvpmodel");
  CHECK(c->reboot_command == "/sbin/reboot now");
  CHECK(c->reboot_timeout_s == 900);
  auto error = [](const Result<agent::AgentConfig>& r) { return r.is_ok() ? std::string() : r.status().message(); };
  CHECK(error(agent::parse_agent_args({"--controller", "ws://h:1", "--name", "b", "--allow-reboot"}))
            .find("apply to serving a controller with --backend jetson") != std::string::npos);
  CHECK(error(with({"--reboot-command", "reboot"})).find("need --allow-reboot") != std::string::npos);
  CHECK(error(with({"--allow-reboot", "--no-journal"})).find("--allow-reboot needs the journal") != std::string::npos);
  CHECK(error(with({"--allow-reboot", "--reboot-timeout-s", "0"})).find("--reboot-timeout-s: must be between 1 and 86400") !=
        std::string::npos);
  CHECK(error(with({"--allow-reboot", "--reboot-command", " "})).find("--reboot-command: must not be empty") !=
        std::string::npos);
  // A simulated board models its reboot: the permission and the timeout, not the commands.
  const std::vector<std::string> sim = {"--controller", "ws://h:1", "--name", "s", "--sim", "agx-orin/1", "--allow-reboot"};
  auto sim_with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = sim;
    args.insert(args.end(), extra.begin(), extra.end());
    return agent::parse_agent_args(args);
  };
  auto modelled = sim_with({"--reboot-timeout-s", "120"});
  REQUIRE_MESSAGE(modelled.is_ok(), modelled.status().message());
  CHECK((modelled->allow_reboot && modelled->reboot_timeout_s == 120));
  CHECK(error(sim_with({"--reboot-command", "reboot"})).find("apply to --backend jetson (a simulated board models its "
                                                             "reboot)") != std::string::npos);
}

TEST_CASE("bad backend flags name the flag") {
  auto msg = [](std::vector<std::string> a) { return agent::parse_agent_args(a).status().message(); };
  CHECK(msg({"--controller", "ws://h:1", "--name", "b", "--backend", "gpu"}) == "--backend 'gpu': expected host, jetson or sim");
  CHECK(msg({"--controller", "ws://h:1", "--name", "b", "--backend", "sim"}) == "--backend sim needs --sim CLASS[/INSTANCE]");
  CHECK(msg({"--controller", "ws://h:1", "--name", "b", "--backend", "jetson", "--sim", "nano"}) ==
        "--sim cannot be combined with --backend jetson");
  CHECK(msg({"--controller", "ws://h:1", "--name", "b", "--time-scale", "2"}) == "--time-scale applies to --sim only");
  CHECK(msg({"--controller", "ws://h:1", "--name", "b", "--sim", "nano", "--time-scale", "x"}) ==
        "--time-scale: 'x' is not a number");
  CHECK(msg({"--controller", "ws://h:1", "--name", "b", "--sim", "nano", "--time-scale", "-1"}) ==
        "--time-scale: must be between 0 and 1000");
  CHECK(msg({"--controller", "ws://h:1", "--name", "b", "--sim", "nano/"}) == "--sim 'nano/': expected CLASS or CLASS/INSTANCE");
}

TEST_CASE("wss:// with --ca; the enrollment secret from a file") {
  auto c = agent::parse_agent_args({"--controller", "wss://ctl.lab:8420", "--name", "a", "--ca", "/etc/ca.pem"});
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  CHECK(c->tls);
  CHECK(c->host == "ctl.lab");
  CHECK(c->port == "8420");
  CHECK(c->target == "/agent");
  CHECK(c->ca_file == "/etc/ca.pem");
  CHECK_FALSE(agent::parse_agent_args({"--controller", "ws://h:1", "--name", "a"})->tls);
  auto msg = [](std::vector<std::string> a) { return agent::parse_agent_args(a).status().message(); };
  CHECK(msg({"--controller", "ws://h:1", "--name", "a", "--ca", "x.pem"}) ==
        "--ca applies to a wss:// controller, not 'ws://h:1'");
  CHECK(msg({"--controller", "https://h:1", "--name", "a"}) == "--controller 'https://h:1': must start with ws:// or wss://");

  const auto dir = std::filesystem::temp_directory_path() / ("jetsweep-agent-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string secret = (dir / "secret").string(), empty = (dir / "empty").string();
  std::ofstream(secret) << "s3cret\n";
  std::ofstream(empty) << "";
  ::chmod(secret.c_str(), 0600);
  auto s = agent::parse_agent_args({"--controller", "ws://h:1", "--name", "a", "--enroll-secret-file", secret});
  REQUIRE_MESSAGE(s.is_ok(), s.status().message());
  CHECK(s->enroll_secret == "s3cret");
  CHECK(msg({"--controller", "ws://h:1", "--name", "a", "--enroll-secret", "x", "--enroll-secret-file", secret}) ==
        "--enroll-secret and --enroll-secret-file exclude each other; give one");
  CHECK(msg({"--controller", "ws://h:1", "--name", "a", "--enroll-secret-file", empty}) ==
        "--enroll-secret-file " + empty + ": the file is empty");
  std::filesystem::remove_all(dir);
}

// TLS (issue 12, finding 6): a controller with --tls-cert/--tls-key serves https and wss on its port, plain
// http/ws from loopback only; agents (wss://, --ca) and the CLI (https://, --ca) verify it; secrets come from
// files and stay out of /proc/PID/cmdline.
#include <ifaddrs.h>
#include <netinet/in.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "support/fleet.hpp"
#include "support/tls_files.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;
namespace bj = boost::json;

namespace {

const std::string kToken = "tls-test-api-token-7f3a";
const std::string kEnroll = "tls-test-enroll-secret-91c2";

std::string cmdline_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A non-loopback IPv4 address of this machine ("" when it has none).
std::string local_non_loopback_ipv4() {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  std::string found;
  for (ifaddrs* i = all; i && found.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    const auto address = boost::asio::ip::address_v4(ntohl(in->sin_addr.s_addr));
    if (!address.is_loopback()) found = address.to_string();
  }
  freeifaddrs(all);
  return found;
}

// The controller's API over https with the token, as the CLI's client makes the request.
struct HttpsApi {
  std::string url, ca;
  Result<cli::HttpResult> get(const std::string& target) const {
    return cli::http_request(url, "GET", target, "", {{"Authorization", "Bearer " + kToken}}, ca);
  }
  size_t connected_agents() const {
    auto r = get("/api/agents");
    if (!r || r->status != 200) return 0;
    size_t n = 0;
    const bj::value agents = bj::parse(r->body);
    for (const auto& a : agents.as_array()) n += a.at("connected").as_bool() ? 1 : 0;
    return n;
  }
  bool finished(int64_t campaign) const {
    auto r = get("/api/campaigns/" + std::to_string(campaign));
    return r && r->status == 200 && bj::parse(r->body).at("finished").as_bool();
  }
};

std::unique_ptr<Process> sim_agent(Fleet& fleet, const std::string& name, const std::string& url,
                                   std::vector<std::string> extra) {
  std::vector<std::string> args = {"--controller", url, "--name", name, "--sim", "nano/" + name, "--time-scale", "0",
                                   "--no-journal"};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<Process>(kBin + "/jetsweep-agent", args, (fleet.dir() / (name + ".log")).string());
}

}  // namespace

TEST_CASE("TLS: a campaign over wss and https; plain ws/http from loopback still served; a wrong CA is refused") {
  TlsFiles tls;
  const std::string token_file = tls.secret_file("api-token", kToken);
  const std::string enroll_file = tls.secret_file("enroll-secret", kEnroll);
  TestDatabase db;
  Fleet fleet(db, {"--tls-cert", tls.cert, "--tls-key", tls.key, "--api-token-file", token_file,
                   "--enroll-secret-file", enroll_file});
  const std::string port = std::to_string(fleet.port());
  const HttpsApi api{"https://127.0.0.1:" + port, tls.ca};

  // Secrets passed by file are nowhere on the controller's command line.
  const std::string cmdline = cmdline_of(fleet.controller().pid());
  CHECK(cmdline.find("--api-token-file") != std::string::npos);
  CHECK(cmdline.find(kToken) == std::string::npos);
  CHECK(cmdline.find(kEnroll) == std::string::npos);

  // An agent that trusts the wrong CA does not get in, and the campaign's runs wait for the right ones.
  auto wrong = sim_agent(fleet, "wrong-ca", "wss://127.0.0.1:" + port, {"--ca", tls.wrong_ca, "--enroll-secret-file",
                                                                       enroll_file});
  write_file(fleet.dir() / "tls.yaml",
             "campaign: tls\nmatrix:\n  device: nano\n  model: lenet5\n  dataset: fashion-mnist\n"
             "  batch_size: [32, 64]\n  workers: 0\n  epochs: 1\n  sample_hz: 1\n");
  std::string out, err;
  const std::vector<std::string> https_cli = {"--controller", "https://localhost:" + port, "--ca", tls.ca,
                                              "--token-file", token_file};
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), https_cli.begin(), https_cli.end());
    return run_command(kBin + "/jetsweep", args, &out, &err);
  };
  REQUIRE_MESSAGE(cli({"submit", "--json", (fleet.dir() / "tls.yaml").string()}) == 0, err);
  const int64_t id = bj::parse(out).at("campaign_id").as_int64();
  REQUIRE_MESSAGE(wait_until(60s, [&] { return count_of(wrong->log(), "certificate verify failed") >= 2; }),
                  wrong->log());
  CHECK(wrong->log().find("trust: CA file " + tls.wrong_ca) != std::string::npos);
  CHECK(api.connected_agents() == 0);
  CHECK(db.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(id) + " AND status = 'queued'") == 2);

  // One agent over wss (verified against the CA), one over plain ws from loopback: both are served.
  auto secure = sim_agent(fleet, "over-wss", "wss://127.0.0.1:" + port, {"--ca", tls.ca, "--enroll-secret-file",
                                                                        enroll_file});
  auto plain = sim_agent(fleet, "over-ws", "ws://127.0.0.1:" + port, {"--enroll-secret-file", enroll_file});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return api.connected_agents() == 2; }), fleet.logs() << secure->log());
  CHECK(cmdline_of(secure->pid()).find(kEnroll) == std::string::npos);
  REQUIRE_MESSAGE(wait_until(300s, [&] { return api.finished(id); }), fleet.logs() << secure->log() << plain->log());
  CHECK(db.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(id) + " AND status = 'done'") == 2);
  CHECK(db.count("SELECT count(*) FROM runs r JOIN agents a ON a.id = r.agent_id WHERE a.name = 'wrong-ca'") == 0);

  // The CLI over https: status and report.
  REQUIRE_MESSAGE(cli({"status", std::to_string(id)}) == 0, err);
  REQUIRE_MESSAGE(cli({"report", "--json", std::to_string(id)}) == 0, err);
  CHECK(bj::parse(out).at("runs").as_array().size() == 2);
  // Plain http from loopback still answers.
  auto plain_health = cli::http_request(fleet.url(), "GET", "/api/health");
  REQUIRE(plain_health.is_ok());
  CHECK(plain_health->status == 200);
  // The CLI with the wrong CA: an error naming the failure, the exit code of an unreachable controller.
  CHECK(run_command(kBin + "/jetsweep", {"--controller", "https://127.0.0.1:" + port, "--ca", tls.wrong_ca,
                                         "--token-file", token_file, "status"},
                    &out, &err) == 1);
  CHECK(err.find("TLS handshake failed") != std::string::npos);
  CHECK(err.find("certificate verify failed") != std::string::npos);
  CHECK(err.find(tls.wrong_ca) != std::string::npos);
}

TEST_CASE("TLS: a plain connection from a non-loopback address gets 403 'TLS required'") {
  const std::string address = local_non_loopback_ipv4();
  if (address.empty()) {
    MESSAGE("skipped: this machine has no non-loopback IPv4 address");
    return;
  }
  TlsFiles tls;
  TestDatabase db;
  Fleet fleet(db, {"--tls-cert", tls.cert, "--tls-key", tls.key, "--listen", "0.0.0.0:0"});
  auto refused = cli::http_request("http://" + address + ":" + std::to_string(fleet.port()), "GET", "/api/health");
  REQUIRE_MESSAGE(refused.is_ok(), refused.status().message());
  CHECK(refused->status == 403);
  CHECK(refused->body.find("requires TLS") != std::string::npos);
  CHECK(refused->body.find("https://") != std::string::npos);
  // Loopback plain and https from anywhere are served.
  CHECK(cli::http_request(fleet.url(), "GET", "/api/health")->status == 200);
  auto https = cli::http_request("https://127.0.0.1:" + std::to_string(fleet.port()), "GET", "/api/health", "", {}, tls.ca);
  REQUIRE_MESSAGE(https.is_ok(), https.status().message());
  CHECK(https->status == 200);
}

TEST_CASE("TLS and secret files: bad files are refused at start with the flag and the file named") {
  TlsFiles tls;
  TlsFiles other;
  std::string out, err;
  auto controller = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--db", "dbname=not-used", "--listen", "127.0.0.1:0"});
    return run_command(kBin + "/jetsweep-controller", args, &out, &err);
  };
  CHECK(controller({"--tls-cert", tls.cert, "--tls-key", other.key}) == 2);
  CHECK(err.find("does not match the certificate") != std::string::npos);
  CHECK(err.find(other.key) != std::string::npos);
  CHECK(controller({"--tls-cert", (tls.dir / "missing.pem").string(), "--tls-key", tls.key}) == 2);
  CHECK(err.find("missing.pem") != std::string::npos);
  CHECK(controller({"--tls-cert", tls.key, "--tls-key", tls.key}) == 2);
  CHECK(err.find("not a PEM certificate") != std::string::npos);
  CHECK(controller({"--tls-cert", tls.cert}) == 2);
  CHECK(err.find("--tls-cert needs --tls-key") != std::string::npos);
  const std::string empty = tls.secret_file("empty", "");
  CHECK(controller({"--api-token-file", empty}) == 2);
  CHECK(err.find("--api-token-file " + empty + ": the file is empty") != std::string::npos);
}

// Accept loop at the file-descriptor limit (issue 12, finding 5): a controller started under a low
// RLIMIT_NOFILE (prlimit) that runs out of descriptors backs off instead of spinning, logs a bounded number of
// lines, and serves again once connections close.
#include <boost/asio.hpp>

#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;

namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("at the file-descriptor limit the accept loop backs off, logs little and recovers") {
  TestDatabase db;
  TempDir dir;
  const std::string port_file = (dir / "port").string();
  // 64 descriptors: the database connections, epoll and the listener take about 20; connections take the rest.
  Process controller("/usr/bin/prlimit",
                     {"--nofile=64:64", kBin + "/jetsweep-controller", "--db", db.dsn(), "--listen", "127.0.0.1:0",
                      "--port-file", port_file, "--ingest-connections", "1"},
                     (dir / "controller.log").string());
  REQUIRE_MESSAGE(wait_until(60s, [&] { return std::filesystem::exists(port_file); }), controller.log());
  int port = 0;
  std::ifstream(port_file) >> port;
  const std::string url = "http://127.0.0.1:" + std::to_string(port);

  // Idle connections until the controller cannot accept any more (they wait in the listen backlog).
  boost::asio::io_context ioc;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::socket>> held;
  const boost::asio::ip::tcp::endpoint endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                static_cast<unsigned short>(port));
  for (int i = 0; i < 100; ++i) {
    held.push_back(std::make_unique<boost::asio::ip::tcp::socket>(ioc));
    held.back()->connect(endpoint);
  }
  REQUIRE_MESSAGE(wait_until(30s, [&] { return controller.log().find("accept failed") != std::string::npos; }),
                  controller.log());
  CHECK(controller.log().find("file-descriptor limit") != std::string::npos);
  // Without backoff the loop retries at once and writes thousands of lines a second; with it, one line per 10 s.
  CHECK_FALSE(wait_until(3s, [&] { return count_of(controller.log(), "accept failed") > 3; }));
  CHECK(controller.running());

  held.clear();   // the controller's descriptors are freed as it sees these connections close
  REQUIRE_MESSAGE(wait_until(60s, [&] {
                    auto r = cli::http_request(url, "GET", "/api/health");
                    return r.is_ok() && r->status == 200;
                  }),
                  controller.log());
  CHECK(controller.log().find("accepting connections again after") != std::string::npos);
  CHECK(count_of(controller.log(), "accept failed") <= 3);
  controller.signal(SIGTERM);
  CHECK(controller.wait(30s) == 0);
}

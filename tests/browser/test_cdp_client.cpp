// The DevTools client the dashboard tests stand on, checked against a real headless Chromium with pages
// given as data: URLs (no controller): it must see every kind of JavaScript error, read values, type, click,
// wait on conditions and write screenshots.
#include <doctest/doctest.h>

#include <fstream>

#include "support/cdp_client.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;
namespace bj = boost::json;

namespace {

std::unique_ptr<Browser> start_browser() {
  auto browser = Browser::launch();
  REQUIRE_MESSAGE(browser.is_ok(), browser.status().to_string());
  return std::move(browser).value();
}

std::string data_url(const std::string& html) {
  std::string encoded;
  for (unsigned char ch : html) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.') {
      encoded += static_cast<char>(ch);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", ch);
      encoded += hex;
    }
  }
  return "data:text/html;charset=utf-8," + encoded;
}

}  // namespace

TEST_CASE("a missing chromium is a clear error naming the Debian package") {
  BrowserOptions options;
  options.executable = "/nonexistent/chromium";
  auto browser = Browser::launch(options);
  REQUIRE_FALSE(browser.is_ok());
  CHECK(browser.status().message().find("Debian's 'chromium' package") != std::string::npos);
}

TEST_CASE("the CDP client sees console errors, uncaught exceptions and rejections") {
  auto browser = start_browser();
  REQUIRE(browser->navigate(data_url("<p id=x>hi</p><script>console.log('fine'); console.error('bad', 42);"
                                     "setTimeout(() => { throw new Error('boom'); }, 0);"
                                     "Promise.reject(new Error('nope'));</script>")));
  REQUIRE(browser->wait_for("document.getElementById('x')", 10s));
  // The three errors arrive as events; wait on them rather than for a fixed time.
  const auto has = [&](const std::string& source, const std::string& text) {
    for (const auto& e : browser->errors())
      if (e.source == source && e.text.find(text) != std::string::npos) return true;
    return false;
  };
  // The errors arrive as events: wait on them.
  CHECK(browser->process_events_until(
      [&] { return has("console", "bad 42") && has("exception", "boom") && has("exception", "nope"); }, 10s));
  CHECK_MESSAGE(has("console", "bad 42"), browser->errors_text());
  CHECK_MESSAGE(has("exception", "boom"), browser->errors_text());
  CHECK_MESSAGE(has("exception", "nope"), browser->errors_text());
  CHECK_FALSE(has("console", "fine"));   // console.log is no error
  browser->clear_errors();
  CHECK(browser->errors().empty());
}

TEST_CASE("the CDP client evaluates, types, clicks, follows hash routes and writes screenshots") {
  auto browser = start_browser();
  REQUIRE(browser->navigate(data_url(
      "<input id=t><button id=b onclick=\"document.getElementById('out').textContent = "
      "document.getElementById('t').value.toUpperCase()\">go</button><span id=out></span>"
      "<script>addEventListener('hashchange', () => { document.title = location.hash; });</script>")));
  auto sum = browser->evaluate("Promise.resolve(20 + 22)");
  REQUIRE_MESSAGE(sum.is_ok(), sum.status().to_string());
  CHECK(sum->to_number<double>() == 42);
  auto thrown = browser->evaluate("null.x");
  CHECK_FALSE(thrown.is_ok());
  CHECK(browser->errors().empty());   // an evaluation's own exception is its answer, not a page error
  REQUIRE(browser->type_text("#t", "dashboard"));
  REQUIRE(browser->click("#b"));
  CHECK(browser->wait_for("document.getElementById('out').textContent === 'DASHBOARD'", 10s));
  CHECK_FALSE(browser->click("#missing"));
  const auto wait = browser->wait_for("document.title === 'never'", 300ms);
  CHECK_FALSE(wait);
  CHECK(wait.message().find("document.title === 'never'") != std::string::npos);

  auto here = browser->evaluate("location.href");
  REQUIRE(here.is_ok());
  REQUIRE(browser->navigate(std::string(here->as_string()) + "#/fleet"));
  CHECK(browser->wait_for("document.title === '#/fleet'", 10s));

  TempDir dir;
  REQUIRE(browser->screenshot(dir / "shots/page.png"));
  std::ifstream png(dir / "shots/page.png", std::ios::binary);
  std::string magic(8, '\0');
  png.read(magic.data(), 8);
  CHECK(magic == "\x89PNG\r\n\x1a\n");
  CHECK(browser->errors().empty());
}

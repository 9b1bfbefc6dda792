// The world the dashboard's browser tests look at, started once per test process and shared by its test cases
// (a controller with PostgreSQL and simulated agents takes a while to fill): a controller behind an API token
// and a viewer token, a fast simulated Nano that has finished two identical campaigns (A and B: runs, epochs,
// samples to show and compare) and a real-time simulated AGX Orin working through a long campaign (live
// updates). Plus the page helpers: open a route, read a data-testid's value, compare it with the API's.
// Single-threaded use (the test thread).
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cli/client.hpp"
#include "common/text.hpp"
#include "support/cdp_client.hpp"
#include "support/fleet.hpp"

namespace jetsweep::testing {

// Owns the shared database, controller and agent processes and the token files; the test thread only.
class DashboardEnv {
 public:
  // The shared environment, started by the first test case that asks (its REQUIREs fail that test case).
  static DashboardEnv& get();
  // Stops it (the controller, the agents, the database); called when the doctest run ends.
  static void stop();

  const std::string& url() const { return fleet_->url(); }
  const std::string kAdminToken = "browser-admin-token-0123456789";
  const std::string kViewerToken = "browser-viewer-token-9876543210";
  int64_t campaign_a = 0, campaign_b = 0, campaign_live = 0;
  int64_t campaign_adaptive = 0;   // an adaptive-profiling plan on the Nano, finished (issue 33)

  // An API request with `token` (the admin token unless given; "" for none).
  cli::HttpResult request(const std::string& method, const std::string& target, const std::string& body = "",
                          std::optional<std::string> token = std::nullopt);
  // GET `target` with the admin token; REQUIREs a 200 with JSON.
  boost::json::value api(const std::string& target);
  std::string logs() const { return fleet_->logs(); }
  // Where screenshots go: $JETSWEEP_TEST_ARTIFACTS, else build/test-artifacts/browser.
  std::filesystem::path artifacts() const;

 private:
  DashboardEnv() = default;
  void start();
  int64_t submit(const std::string& name, const std::string& yaml);
  bool connected_agents(size_t n);

  static std::unique_ptr<DashboardEnv> shared_;
  static bool tried_;
  TempDir secrets_;
  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Fleet> fleet_;
};

// ---- the page helpers (doctest checks inside; the messages name the data-testid)

// A headless Chromium (REQUIREd to start).
std::unique_ptr<Browser> start_browser();
// Loads `route` (e.g. "#/fleet") afresh and waits until the page named `page` says it is drawn (data-ready).
void open_route(Browser& browser, const std::string& route, const std::string& page);
// A headless Chromium logged in through the login form with `token`, on the default page.
std::unique_ptr<Browser> logged_in_browser(const std::string& token);
// `[data-testid="ID"]` as a CSS selector.
std::string testid(const std::string& id);
// The element's data-value, or nullopt when there is no such element.
std::optional<std::string> data_value(Browser& browser, const std::string& id);
// The element's trimmed text, or nullopt when there is no such element.
std::optional<std::string> text_of(Browser& browser, const std::string& id);
bool has_element(Browser& browser, const std::string& id);
// Whether a page's data-value `shown` equals the API's value: "" for null, else the same number within
// `rel_tol` (0: exactly, as the page writes JavaScript's String(number), which reads back to the same double;
// up to the few units in the last place Boost.JSON's own parsing of the API's answer may be off).
bool same_number(const std::optional<std::string>& shown, const boost::json::value& api, double rel_tol = 0);
// CHECKs that `id`'s data-value equals `api` (see same_number).
void check_number(Browser& browser, const std::string& id, const boost::json::value& api, double rel_tol = 0);
// CHECKs that `id`'s text equals `text`.
void check_text(Browser& browser, const std::string& id, const std::string& text);
// For values that move while the campaign runs: CHECKs that `id`'s data-value and `api()` (fetched afresh each
// time) agree at some moment within `timeout`; the failure shows the last pair.
void check_number_eventually(Browser& browser, const std::string& id, const std::function<boost::json::value()>& api,
                             std::chrono::seconds timeout = std::chrono::seconds(30));
// The same for a text: `id`'s text and `api()` agree at some moment within `timeout`.
void check_text_eventually(Browser& browser, const std::string& id, const std::function<std::string()>& api,
                           std::chrono::seconds timeout = std::chrono::seconds(30));
// For a request the test makes fail on purpose (a refused login, a viewer's write): CHECKs that the page reported
// at least one error and that each is the browser's failed-resource entry with `http_status`; then clears them.
void check_only_refusals(Browser& browser, int http_status, const std::string& where);
// CHECKs that the page reported no JavaScript error (console, uncaught exception, error log entry).
void check_no_js_errors(Browser& browser, const std::string& where);
// Saves a screenshot as ARTIFACTS/NAME.png (CHECKed).
void save_screenshot(Browser& browser, const std::string& name);

// The mean of `field` over the report run's epochs 1 and later that have it (epoch 0 is the warm-up); null when
// none has it.
boost::json::value mean_after_warmup(const boost::json::object& run, const char* field);

}  // namespace jetsweep::testing

#include "browser/dashboard_env.hpp"

#include "common/json_parse.hpp"
#include "common/text.hpp"

namespace jetsweep::testing {
namespace bj = boost::json;
using namespace std::chrono_literals;

namespace {

// Two identical campaigns for the fast simulated Nano (A and B: finished before the tests look; compared).
std::string nano_campaign(const std::string& name) {
  return "campaign: " + name +
         "\nrepetitions: 2\nmatrix:\n  device: nano\n  model: lenet5\n  dataset: fashion-mnist\n"
         "  batch_size: [32, 64]\n  workers: 0\n  epochs: 3\n  sample_hz: 2\n  max_minibatches: 50\n";
}

// The long one for the real-time simulated AGX Orin: under a second per epoch, some 8 minutes in all, so it is
// still running while the tests watch the pages update.
const char* kLiveCampaign =
    "campaign: browser-live\nmatrix:\n  device: agx-orin\n  model: lenet5\n  dataset: fashion-mnist\n"
    "  batch_size: [16, 32, 48, 64]\n  workers: 0\n  epochs: 150\n  sample_hz: 2\n  max_minibatches: 100\n";

void write_secret(const std::filesystem::path& path, const std::string& secret) {
  write_file(path, secret + "\n");
  ::chmod(path.c_str(), 0600);
}

std::string js_string(const std::string& text) { return bj::serialize(bj::value(text)); }

}  // namespace

std::unique_ptr<DashboardEnv> DashboardEnv::shared_;
bool DashboardEnv::tried_ = false;

DashboardEnv& DashboardEnv::get() {
  if (!shared_) {
    REQUIRE_MESSAGE(!tried_, "the controller, agents and campaigns failed to start in an earlier test case");
    tried_ = true;
    std::unique_ptr<DashboardEnv> fresh(new DashboardEnv());
    fresh->start();
    shared_ = std::move(fresh);
  }
  return *shared_;
}

void DashboardEnv::stop() { shared_.reset(); }

namespace {

// Stops the shared environment when the test run ends, while main() still runs: left to the static destructors,
// dropping the database would use libpq and OpenSSL after their own clean-up at exit.
struct DashboardEnvTeardown : doctest::IReporter {
  explicit DashboardEnvTeardown(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override { DashboardEnv::stop(); }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("dashboard-env-teardown", 1, DashboardEnvTeardown);

}  // namespace

void DashboardEnv::start() {
  write_secret(secrets_ / "api-token", kAdminToken);
  write_secret(secrets_ / "viewer-token", kViewerToken);
  db_ = std::make_unique<TestDatabase>();
  fleet_ = std::make_unique<Fleet>(*db_, std::vector<std::string>{
                                              "--api-token-file", (secrets_ / "api-token").string(),
                                              "--viewer-token-file", (secrets_ / "viewer-token").string()});
  fleet_->add_agent("sim-nano-1", {"--sim", "nano/1", "--time-scale", "0", "--no-journal"});
  fleet_->add_agent("sim-orin-1", {"--sim", "agx-orin/1", "--time-scale", "1", "--no-journal"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return connected_agents(2); }), fleet_->logs());
  campaign_a = submit("browser-a.yaml", nano_campaign("browser-a"));
  campaign_b = submit("browser-b.yaml", nano_campaign("browser-b"));
  const auto finished = [&](int64_t id) {
    const bj::value s = api("/api/campaigns/" + std::to_string(id));
    return s.at("finished").as_bool();
  };
  // An adaptive plan of LeNet-5 on Fashion-MNIST anchored on the simulator's LeNet-5 on MNIST (its measured values
  // of every Nano mode: no network to train).
  const std::string reference = (secrets_ / "nano-lenet5-mnist.csv").string();
  std::string out, err;
  REQUIRE_MESSAGE(run_command(kBin + "/jetsweep", {"analyze", "synth", "--simulator", "--device", "nano", "--workloads",
                                                   "lenet5/mnist", "--out", reference},
                              &out, &err) == 0,
                  err);
  campaign_adaptive = submit("browser-adaptive.yaml",
                             "campaign: browser-adaptive\nmatrix:\n  device: nano\n  model: lenet5\n  dataset: fashion-mnist\n"
                             "  batch_size: 32\n  workers: 0\n  epochs: 2\n  sample_hz: 2\n  max_minibatches: 20\n"
                             "  power_mode: {generate: adaptive, budget: 7, every: 4, seed: 3, anchor: measured, reference: '" +
                                 reference + "'}\n");
  REQUIRE_MESSAGE(wait_until(300s, [&] {
                    return finished(campaign_a) && finished(campaign_b) && finished(campaign_adaptive);
                  }),
                  fleet_->logs());
  campaign_live = submit("browser-live.yaml", kLiveCampaign);
  REQUIRE_MESSAGE(wait_until(120s, [&] {
                    return api("/api/campaigns/" + std::to_string(campaign_live)).at("epochs_done").as_int64() >= 1;
                  }),
                  fleet_->logs());
}

cli::HttpResult DashboardEnv::request(const std::string& method, const std::string& target, const std::string& body,
                                      std::optional<std::string> token) {
  const std::string t = token.value_or(kAdminToken);
  cli::Headers headers;
  if (!t.empty()) headers.emplace_back("Authorization", "Bearer " + t);
  if (method == "POST") headers.emplace_back("X-Jetsweep-Source", "browser-test.yaml");
  auto r = cli::http_request(url(), method, target, body, headers);
  REQUIRE_MESSAGE(r.is_ok(), method << " " << target << ": " << r.status().to_string());
  return *r;
}

bj::value DashboardEnv::api(const std::string& target) {
  const auto r = request("GET", target);
  REQUIRE_MESSAGE(r.status == 200, "GET " << target << " answered " << r.status << ": " << r.body);
  boost::system::error_code ec;
  bj::value v = json::parse_exact(r.body, ec);
  REQUIRE_MESSAGE(!ec, "GET " << target << " answered no JSON: " << r.body);
  return v;
}

int64_t DashboardEnv::submit(const std::string& file, const std::string& yaml) {
  const auto r = request("POST", "/api/campaigns", yaml);
  REQUIRE_MESSAGE(r.status == 201, file << ": " << r.status << " " << r.body);
  return json::parse_exact(r.body).at("campaign_id").as_int64();
}

bool DashboardEnv::connected_agents(size_t n) {
  size_t connected = 0;
  const bj::value agents = api("/api/agents");
  for (const auto& a : agents.as_array()) connected += a.at("connected").as_bool() ? 1 : 0;
  return connected >= n;
}

std::filesystem::path DashboardEnv::artifacts() const {
  if (const char* dir = std::getenv("JETSWEEP_TEST_ARTIFACTS"); dir && *dir) return dir;
  return JETSWEEP_ARTIFACTS_DIR;
}

std::unique_ptr<Browser> start_browser() {
  auto browser = Browser::launch();
  REQUIRE_MESSAGE(browser.is_ok(), browser.status().to_string());
  return std::move(browser).value();
}

std::string testid(const std::string& id) { return "[data-testid=\"" + id + "\"]"; }

void open_route(Browser& browser, const std::string& route, const std::string& page) {
  // A fresh load each time: no state of the previous page can pass for this one.
  REQUIRE(browser.navigate("about:blank"));
  const std::string url = DashboardEnv::get().url() + "/" + route;
  const Status loaded = browser.navigate(url);
  REQUIRE_MESSAGE(loaded, loaded.to_string());
  const Status drawn = browser.wait_for("(() => { const p = document.querySelector('[data-testid=\"page\"]');"
                                        " return p && p.dataset.page === " + js_string(page) +
                                            " && p.dataset.ready === '1'; })()",
                                        30s);
  REQUIRE_MESSAGE(drawn, url << ": " << drawn.to_string() << "\nJavaScript errors:\n" << browser.errors_text());
}

std::unique_ptr<Browser> logged_in_browser(const std::string& token) {
  auto browser = start_browser();
  open_route(*browser, "", "login");
  REQUIRE(browser->type_text(testid("login-token"), token));
  REQUIRE(browser->click(testid("login-submit")));
  const Status in = browser->wait_for("(() => { const p = document.querySelector('[data-testid=\"page\"]');"
                                      " return p && p.dataset.page !== 'login' && p.dataset.ready === '1'; })()",
                                      30s);
  REQUIRE_MESSAGE(in, in.to_string() << "\nJavaScript errors:\n" << browser->errors_text());
  return browser;
}

std::optional<std::string> data_value(Browser& browser, const std::string& id) {
  auto v = browser.evaluate("(() => { const e = document.querySelector(" + js_string(testid(id)) +
                            "); return e ? e.getAttribute('data-value') : null; })()");
  REQUIRE_MESSAGE(v.is_ok(), v.status().to_string());
  if (!v->is_string()) return std::nullopt;
  return std::string(v->as_string());
}

std::optional<std::string> text_of(Browser& browser, const std::string& id) {
  auto v = browser.evaluate("(() => { const e = document.querySelector(" + js_string(testid(id)) +
                            "); return e ? e.textContent.trim() : null; })()");
  REQUIRE_MESSAGE(v.is_ok(), v.status().to_string());
  if (!v->is_string()) return std::nullopt;
  return std::string(v->as_string());
}

bool has_element(Browser& browser, const std::string& id) {
  auto v = browser.evaluate("document.querySelector(" + js_string(testid(id)) + ") !== null");
  REQUIRE_MESSAGE(v.is_ok(), v.status().to_string());
  return v->is_bool() && v->as_bool();
}

bool same_number(const std::optional<std::string>& shown, const bj::value& api, double rel_tol) {
  if (!shown) return false;
  if (api.is_null()) return shown->empty();
  if (api.is_bool()) return *shown == (api.as_bool() ? "true" : "false");
  if (api.is_string()) return *shown == std::string(api.as_string());
  if (!api.is_number()) return false;
  const auto page = parse_double(*shown);
  if (!page) return false;
  const double want = api.to_number<double>();
  // Exactly: the page's data-value is JavaScript's shortest text for its correctly rounded reading of the API's
  // number, and json::parse_exact and parse_double read both texts correctly rounded too.
  if (rel_tol == 0) return *page == want;
  return std::fabs(*page - want) <= rel_tol * std::max(1.0, std::fabs(want));
}

void check_number(Browser& browser, const std::string& id, const bj::value& api, double rel_tol) {
  const auto shown = data_value(browser, id);
  CHECK_MESSAGE(same_number(shown, api, rel_tol),
                id << ": page data-value " << (shown ? "'" + *shown + "'" : "(missing)") << ", API " << bj::serialize(api));
}

void check_text(Browser& browser, const std::string& id, const std::string& text) {
  const auto shown = text_of(browser, id);
  CHECK_MESSAGE(shown == text, id << ": page text " << (shown ? "'" + *shown + "'" : "(missing)") << ", want '" << text << "'");
}

void check_number_eventually(Browser& browser, const std::string& id, const std::function<bj::value()>& api,
                             std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<std::string> shown;
  bj::value want;
  while (true) {
    want = api();
    shown = data_value(browser, id);
    if (same_number(shown, want)) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    // Poll again in a quarter second, handling the page's events (and so its errors) meanwhile.
    browser.process_events_until([] { return false; }, 250ms);
  }
  FAIL_CHECK(id << ": page and API never agreed within " << timeout.count() << " s; last: page data-value "
                << (shown ? "'" + *shown + "'" : "(missing)") << ", API " << bj::serialize(want));
}

void check_text_eventually(Browser& browser, const std::string& id, const std::function<std::string()>& api,
                           std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<std::string> shown;
  std::string want;
  while (true) {
    want = api();
    shown = text_of(browser, id);
    if (shown == want) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    browser.process_events_until([] { return false; }, 250ms);
  }
  FAIL_CHECK(id << ": page and API never agreed within " << timeout.count() << " s; last: page text "
                << (shown ? "'" + *shown + "'" : "(missing)") << ", API '" << want << "'");
}

void check_only_refusals(Browser& browser, int http_status, const std::string& where) {
  // The browser logs the failed request asynchronously: wait for the entry.
  const std::string status = "status of " + std::to_string(http_status);
  CHECK_MESSAGE(browser.process_events_until([&] { return !browser.errors().empty(); }, 10s),
                where << ": the browser reported no failed request");
  for (const auto& e : browser.errors())
    CHECK_MESSAGE((e.source == "log/network" && e.text.find(status) != std::string::npos),
                  where << ": unexpected JavaScript error [" << e.source << "] " << e.text << " " << e.url);
  browser.clear_errors();
}

void check_no_js_errors(Browser& browser, const std::string& where) {
  CHECK_MESSAGE(browser.errors().empty(), where << ": JavaScript errors:\n" << browser.errors_text());
}

void save_screenshot(Browser& browser, const std::string& name) {
  const auto path = DashboardEnv::get().artifacts() / (name + ".png");
  const Status saved = browser.screenshot(path);
  CHECK_MESSAGE(saved, saved.to_string());
}

bj::value mean_after_warmup(const bj::object& run, const char* field) {
  double sum = 0;
  int64_t n = 0;
  for (const auto& e : run.at("epochs").as_array()) {
    if (e.at("epoch").as_int64() < 1) continue;
    const auto* v = e.as_object().if_contains(field);
    if (!v || !v->is_number()) continue;
    sum += v->to_number<double>();
    ++n;
  }
  if (n == 0) return nullptr;
  return sum / static_cast<double>(n);
}

}  // namespace jetsweep::testing

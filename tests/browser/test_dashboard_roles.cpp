// Who may do what on the dashboard, in a real headless Chromium: the read-only viewer token reads every page but
// has no buttons and its writes are refused (403), the admin pauses and resumes a campaign with the buttons, and
// logging out ends the session (dashboard_env.hpp; ids: controller/web/README.md).
#include "browser/dashboard_env.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;
namespace bj = boost::json;

namespace {

bool paused(int64_t campaign) {
  return DashboardEnv::get().api("/api/campaigns/" + std::to_string(campaign)).at("paused").as_bool();
}

// Whether the page shows element `id` (re-read until it does or 30 s pass, processing the live updates).
bool shows(Browser& browser, const std::string& id) {
  return browser.wait_for("document.querySelector('" + testid(id) + "') !== null", 30s).is_ok();
}

}  // namespace

TEST_CASE("viewer token: reads the pages, has no buttons, and a pause it sends anyway is refused") {
  auto& env = DashboardEnv::get();
  auto viewer = logged_in_browser(env.kViewerToken);
  check_text(*viewer, "role", "viewer");
  const std::string live = std::to_string(env.campaign_live);
  open_route(*viewer, "#/campaigns", "campaigns");
  check_number(*viewer, "campaign-runs-" + live, env.api("/api/campaigns/" + live).at("runs"));
  for (const char* button : {"campaign-pause-", "campaign-resume-", "campaign-cancel-"})
    CHECK_FALSE(has_element(*viewer, button + live));
  open_route(*viewer, "#/campaign/" + live, "campaign");
  for (const char* button : {"campaign-pause-", "campaign-resume-", "campaign-cancel-"})
    CHECK_FALSE(has_element(*viewer, button + live));
  save_screenshot(*viewer, "viewer-campaign-" + live);
  check_no_js_errors(*viewer, "the viewer's pages");

  // The page's own cookie, with the header the dashboard sends on writes: refused for the viewer's session.
  const auto answer = viewer->evaluate("fetch('/api/campaigns/" + live + "/pause', {method: 'POST', headers: "
                                       "{'X-Jetsweep-CSRF': '1'}}).then(async r => [r.status, await r.text()])");
  REQUIRE_MESSAGE(answer.is_ok(), answer.status().to_string());
  CHECK(answer->as_array().at(0).to_number<double>() == 403);
  CHECK(std::string(answer->as_array().at(1).as_string()).find("read-only access") != std::string::npos);
  check_only_refusals(*viewer, 403, "a viewer's pause");
  CHECK_FALSE(paused(env.campaign_live));
}

TEST_CASE("admin: pause and resume with the buttons; logging out ends the session") {
  auto& env = DashboardEnv::get();
  auto admin = logged_in_browser(env.kAdminToken);
  const std::string live = std::to_string(env.campaign_live);
  open_route(*admin, "#/campaign/" + live, "campaign");
  REQUIRE_FALSE(paused(env.campaign_live));
  REQUIRE(admin->click(testid("campaign-pause-" + live)));
  CHECK_MESSAGE(wait_until(30s, [&] { return paused(env.campaign_live); }), env.logs());
  // The page follows: the campaign is shown paused, with a resume button instead of pause.
  CHECK(shows(*admin, "campaign-resume-" + live));
  CHECK_MESSAGE(admin->wait_for("document.querySelector('" + testid("campaign-state-" + live) +
                                    "').textContent.trim().startsWith('paused')", 30s),
                text_of(*admin, "campaign-state-" + live).value_or("(missing)"));
  CHECK_FALSE(has_element(*admin, "campaign-pause-" + live));
  save_screenshot(*admin, "campaign-" + live + "-paused");
  REQUIRE(admin->click(testid("campaign-resume-" + live)));
  CHECK(wait_until(30s, [&] { return !paused(env.campaign_live); }));
  CHECK(shows(*admin, "campaign-pause-" + live));
  check_no_js_errors(*admin, "pausing and resuming");

  REQUIRE(admin->click(testid("logout")));
  CHECK(admin->wait_for("document.querySelector('[data-testid=\"page\"]').dataset.page === 'login'", 30s));
  check_no_js_errors(*admin, "logging out");
  CHECK(admin->evaluate("fetch('/api/campaigns').then(r => r.status)")->to_number<double>() == 401);
  check_only_refusals(*admin, 401, "reading the API after logging out");
}

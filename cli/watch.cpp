#include "cli/watch.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ctime>
#include <ostream>
#include <sstream>
#include <thread>

#include "cli/cli.hpp"

namespace jetsweep::cli {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) { g_interrupted = 1; }

// SIGINT sets g_interrupted while this lives; the previous disposition is restored after.
class SigintGuard {
 public:
  SigintGuard() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    installed_ = sigaction(SIGINT, &sa, &previous_) == 0;
  }
  ~SigintGuard() {
    if (installed_) sigaction(SIGINT, &previous_, nullptr);
  }
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

 private:
  struct sigaction previous_ {};
  bool installed_ = false;
};

std::string clock_time(std::time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  char b[16];
  std::strftime(b, sizeof b, "%H:%M:%S", &tm);
  return b;
}

// Sleeps `seconds` in short slices; false when Ctrl-C came.
bool wait_interval(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_interrupted && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return !g_interrupted;
}

size_t line_count(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// The campaign to watch: as given, else the newest unfinished one, else the newest.
Result<std::string> pick_campaign(ApiClient& client, const std::string& given) {
  if (!given.empty()) return given;
  JS_ASSIGN_OR_RETURN(auto all, client.request<std::vector<api::CampaignStatus>>("GET", "/api/campaigns", "campaign list"));
  if (all.value.empty()) return not_found("no campaigns to watch (submit one: jetsweep submit FILE.yaml)");
  const api::CampaignStatus* pick = nullptr;
  for (const auto& s : all.value)
    if (!s.finished && (!pick || s.campaign_id > pick->campaign_id)) pick = &s;
  if (!pick)
    for (const auto& s : all.value)
      if (!pick || s.campaign_id > pick->campaign_id) pick = &s;
  return std::to_string(pick->campaign_id);
}

}  // namespace

std::string watch_frame(const api::CampaignStatus& s, std::time_t now) {
  std::ostringstream out;
  const std::string state = s.finished ? "finished" : s.state.empty() ? "active" : s.state;
  out << "campaign " << s.campaign_id << " (" << s.name << ")  " << state << "  at " << clock_time(now) << "\n";
  out << progress_bar(s.epochs_done, s.epochs_total) << "  epochs " << s.epochs_done << "/" << s.epochs_total << "\n";
  out << "runs " << s.runs << ": " << s.done << " done, " << s.running << " running, " << s.assigned << " assigned, "
      << s.queued << " queued, " << s.failed << " failed";
  if (s.lost > 0) out << ", " << s.lost << " lost";
  if (s.cancelled > 0) out << ", " << s.cancelled << " cancelled";
  out << "\n";
  if (s.finished) out << "ETA -: finished\n";
  else if (s.paused) out << "ETA -: paused (jetsweep resume " << s.campaign_id << ")\n";
  else if (s.eta_s && *s.eta_s > 0) out << "ETA " << format_eta(*s.eta_s, now) << "\n";
  else out << "ETA known after the first measured epoch\n";
  for (const auto& u : s.unrunnable) out << "  cannot run: " << u.reason << "\n";
  return out.str();
}

std::string watch_line(const api::CampaignStatus& s, std::time_t now) {
  return clock_time(now) + " " + format_status(s, false, now) + "\n";
}

int run_watch(ApiClient& client, const WatchOptions& o, std::ostream& out, std::ostream& err) {
  SigintGuard guard;
  auto fail = [&](const Status& s) {
    err << "jetsweep watch: " << s.message() << "\n";
    return s.code() == Code::kInvalidArgument || s.code() == Code::kNotFound ? 2 : 1;
  };
  auto ref = pick_campaign(client, o.campaign);
  if (!ref) return fail(ref.status());
  std::string previous;        // the last frame (tty) or the last line without its time (plain)
  std::string last_error;
  bool first = true;
  while (true) {
    auto r = client.request<api::CampaignStatus>("GET", api::campaign_path(ref.value()), "campaign status");
    if (!r) {
      if (first) return fail(r.status());
      if (r.status().message() != last_error) err << "jetsweep watch: " << r.status().message() << " (retrying)\n";
      last_error = r.status().message();
    } else {
      last_error.clear();
      const api::CampaignStatus& s = r->value;
      const std::time_t now = std::time(nullptr);
      if (o.tty) {
        const std::string frame = watch_frame(s, now);
        if (!first) out << "\x1b[" << line_count(previous) << "F\x1b[J";   // back to the frame's top, clear below
        out << frame << std::flush;
        previous = frame;
      } else {
        const std::string line = format_status(s, false, now);
        if (line != previous) out << watch_line(s, now) << std::flush;
        previous = line;
      }
      first = false;
      if (s.finished) {
        out << "campaign " << s.campaign_id << " finished: " << s.done << " done, " << s.failed + s.lost
            << " failed or lost, " << s.cancelled << " cancelled\n";
        return 0;
      }
    }
    if (!wait_interval(o.interval_s)) {
      err << "jetsweep watch: stopped (the campaign carries on)\n";
      return 130;
    }
  }
}

}  // namespace jetsweep::cli

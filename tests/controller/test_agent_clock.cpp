// AgentClock on its own (no socket, no store): which probe replies are kept, discarded, refused or ignored, what a
// clock step does, when a probe is due, and the offsets runs' live telemetry is placed with. The sessions' tests
// (test_agent_session.cpp) hold the same rules through a real connection.
#include <doctest/doctest.h>

#include "controller/agent_clock.hpp"

using namespace jetsweep;
using jetsweep::controller::AgentClock;
using Kind = AgentClock::Verdict::Kind;

namespace {
constexpr double kT0 = 1.8e9;       // the controller's clock when the first probe is sent
constexpr double kBound = 0.25;     // the round trip above which a probe counts as taken under load

// The reply of an agent `offset` s ahead of the controller, `rtt` s after t0 (the agent's turnaround: 0), its boot
// clock `boot_offset` s ahead (boot "b1") when given.
proto::TimeSyncReply reply(double t0, double offset, double rtt, std::optional<double> boot_offset = std::nullopt) {
  proto::TimeSyncReply r{t0, t0 + rtt / 2 + offset, t0 + rtt / 2 + offset, {}, {}, {}};
  if (boot_offset) {
    r.boot_id = "b1";
    r.t1_boot = r.t2_boot = t0 + rtt / 2 + *boot_offset;
  }
  return r;
}

AgentClock::Verdict probe(AgentClock& c, double t0, double offset, double rtt, bool paused = false,
                          std::optional<double> boot_offset = std::nullopt) {
  c.start_probe(t0, paused);
  return c.on_reply(reply(t0, offset, rtt, boot_offset), t0 + rtt, kBound);
}
}  // namespace

TEST_CASE("agent clock: the fastest probe is kept; a slower one agreeing with it is not; one under load is discarded") {
  AgentClock c;
  CHECK_FALSE(c.offset_s());
  auto v = probe(c, kT0, 2.0, 0.010, false, 100.0);
  REQUIRE(v.kind == Kind::kKept);
  CHECK(v.offset_s == doctest::Approx(2.0));
  CHECK(v.rtt_s == doctest::Approx(0.010));
  REQUIRE(v.boot);
  CHECK(v.boot->boot_id == "b1");
  CHECK(v.boot->offset_s == doctest::Approx(100.0));
  CHECK_FALSE(v.stepped_from_s);
  CHECK(probe(c, kT0 + 10, 2.001, 0.020).kind == Kind::kNotBetter);
  CHECK(probe(c, kT0 + 20, 2.0005, 0.005).kind == Kind::kKept);
  CHECK(*c.offset_s() == doctest::Approx(2.0005));
  // Taken while reading was paused for ingest, or slower than the bound: its round trip measures a backlog.
  CHECK(probe(c, kT0 + 30, 2.0, 0.001, true).kind == Kind::kDiscarded);
  CHECK(probe(c, kT0 + 40, 2.0, 0.9).kind == Kind::kDiscarded);
  CHECK(c.probes_discarded() == 2);
  CHECK(*c.offset_s() == doctest::Approx(2.0005));
}

TEST_CASE("agent clock: a probe that cannot agree with the kept one is a clock step, kept even under load") {
  AgentClock c;
  REQUIRE(probe(c, kT0, 2.0, 0.010, false, 100.0).kind == Kind::kKept);
  const auto v = probe(c, kT0 + 10, 302.0, 0.400, true, 100.2);   // NTP moved the board's clock by 300 s
  REQUIRE(v.kind == Kind::kKept);
  REQUIRE(v.stepped_from_s);
  CHECK(*v.stepped_from_s == doctest::Approx(2.0));
  CHECK(*c.offset_s() == doctest::Approx(302.0));
  // The boot clock does not step: the slower probe keeps the closer estimate of the same boot.
  REQUIRE(v.boot);
  CHECK(v.boot->offset_s == doctest::Approx(100.0));
  // Taken under load, it asks for another probe at the next heartbeat.
  CHECK(c.probe_due(kT0 + 11, 50, 3, 30));
}

TEST_CASE("agent clock: a probe years off is refused and offers its boot offset unless taken under load") {
  AgentClock c;
  auto v = probe(c, kT0, -1.7e9, 0.010, false, 55.0);   // a board at 1970 before NTP
  CHECK(v.kind == Kind::kRefused);
  REQUIRE(v.boot);
  CHECK(v.boot->offset_s == doctest::Approx(55.0));
  CHECK_FALSE(c.offset_s());
  v = probe(c, kT0 + 10, -1.7e9, 0.010, true, 55.0);
  CHECK(v.kind == Kind::kRefused);
  CHECK_FALSE(v.boot);
  CHECK(probe(c, kT0 + 20, 0.5, -0.1).kind == Kind::kImplausible);
}

TEST_CASE("agent clock: only the outstanding probe's reply counts; probes are due as the heartbeats say") {
  AgentClock c;
  CHECK(c.on_reply(reply(kT0, 1.0, 0.01), kT0 + 0.01, kBound).kind == Kind::kStale);   // none outstanding
  CHECK(c.probe_due(kT0, 1, 3, 30));
  c.start_probe(kT0, false);
  CHECK(c.probe_outstanding());
  CHECK_FALSE(c.probe_due(kT0 + 5, 2, 3, 30));                // one at a time
  CHECK(c.on_reply(reply(kT0 + 1, 1.0, 0.01), kT0 + 1.01, kBound).kind == Kind::kStale);   // another probe's t0
  CHECK(c.probe_due(kT0 + 31, 4, 3, 30) == false);            // given up after 30 s, but the 4th heartbeat sends none
  CHECK_FALSE(c.probe_outstanding());
  CHECK(c.probe_due(kT0 + 40, 30, 3, 30));                    // every 30th heartbeat
  // None kept yet and the last discarded: one at every heartbeat until one is kept.
  c.start_probe(kT0 + 50, true);
  REQUIRE(c.on_reply(reply(kT0 + 50, 1.0, 0.01), kT0 + 50.01, kBound).kind == Kind::kDiscarded);
  CHECK(c.probe_due(kT0 + 60, 5, 3, 30));
  CHECK_FALSE(c.probe_due(kT0 + 70, 6, 3, 30));               // asked once
}

TEST_CASE("agent clock: a run's live telemetry keeps the offset it started under; one started before any takes the "
          "first kept") {
  AgentClock c;
  proto::RunStarted early;
  early.run_id = 1;
  early.t0_unix_s = kT0;
  c.run_started(early);
  CHECK_FALSE(c.run_offset_s(1));
  REQUIRE(probe(c, kT0 + 10, 5.0, 0.010).kind == Kind::kKept);
  CHECK(*c.run_offset_s(1) == doctest::Approx(5.0));
  proto::RunStarted later;
  later.run_id = 2;
  later.t0_unix_s = kT0 + 20;
  c.run_started(later);
  REQUIRE(probe(c, kT0 + 30, 65.0, 0.005).kind == Kind::kKept);   // a step of a minute
  CHECK(*c.run_offset_s(1) == doctest::Approx(5.0));
  CHECK(*c.run_offset_s(2) == doctest::Approx(5.0));
  CHECK(*c.run_offset_s(3) == doctest::Approx(65.0));   // a run this connection did not see start: the current one
  c.run_finished(2);
  CHECK(*c.run_offset_s(2) == doctest::Approx(65.0));
}

TEST_CASE("agent clock: a slow link is judged by its own fastest round trip; once one is kept, a discarded probe asks "
          "for no other") {
  AgentClock c;
  CHECK(probe(c, kT0, 1.0, 0.300).kind == Kind::kDiscarded);   // over the bound, nothing to judge the link by yet
  CHECK(c.probe_due(kT0 + 10, 50, 3, 30));                      // none kept: another at the next heartbeat
  CHECK(probe(c, kT0 + 10, 1.0, 0.310).kind == Kind::kKept);    // within twice the link's fastest (0.6 s)
  CHECK(probe(c, kT0 + 20, 1.0, 0.700).kind == Kind::kDiscarded);   // beyond it
  CHECK_FALSE(c.probe_due(kT0 + 30, 50, 3, 30));                // one is kept: no extra probe
}

TEST_CASE("agent clock: a run stamped in the kept probe's boot is placed by the boot clock; at most 64 runs are held") {
  AgentClock c;
  REQUIRE(probe(c, kT0, 2.0, 0.010, false, 100.0).kind == Kind::kKept);
  // The board's wall clock stepped by 300 s after the probe; the run starts at kT0 + 10 on the controller's clock.
  const auto started = [](int64_t run, const std::string& boot) {
    proto::RunStarted r;
    r.run_id = run;
    r.t0_unix_s = kT0 + 10 + 302;
    r.boot_id = boot;
    r.t0_boot_s = kT0 + 10 + 100;
    return r;
  };
  c.run_started(started(1, "b1"));
  c.run_started(started(2, "b2"));   // another boot's stamps say nothing: the wall clock's kept offset
  CHECK(*c.run_offset_s(1) == doctest::Approx(302.0));
  CHECK(*c.run_offset_s(2) == doctest::Approx(2.0));
  for (int64_t run = 3; run <= 64; ++run) c.run_started(started(run, "b1"));
  CHECK(*c.run_offset_s(1) == doctest::Approx(302.0));   // 64 held
  c.run_started(started(65, "b1"));
  CHECK(*c.run_offset_s(1) == doctest::Approx(2.0));     // the lowest run id forgotten: the current offset
  CHECK(*c.run_offset_s(65) == doctest::Approx(302.0));
}

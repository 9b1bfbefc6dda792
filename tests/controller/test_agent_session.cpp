// AgentSession flow control: reading pauses while max_ingest_in_flight results wait for the database, or while
// every agent's results together reach max_ingest_bytes (the controller's IngestBudget), acks are
// cumulative (one pending, however many results), a clock probe answered behind paused reading is discarded, and
// a connection whose write queue reaches max_queued_frames is closed.
#include <doctest/doctest.h>

#include <cmath>
#include <condition_variable>
#include <mutex>

#include "controller_fixture.hpp"
#include "support/io_drain.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;

namespace {

// Holds the DbWorker's thread in a job until opened: a database that is slow to answer.
class Gate {
 public:
  void hold(controller::DbWorker& db, boost::asio::any_io_executor ex) {
    db.post<Status>(
        ex,
        [this](controller::Store&) {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [this] { return open_; });
          return Status::ok();
        },
        [](Status) {});
  }
  void open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  ~Gate() { open(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

proto::EpochResult epoch_of(int64_t run_id, int64_t epoch) {
  proto::EpochResult e;
  e.run_id = run_id;
  e.epoch = epoch;
  e.e2e_s = e.compute_s = 1;
  e.minibatches = 1;
  return e;
}

// A session of the test's making whose agent (the client) registered and whose database work is done.
struct RegisteredSession {
  explicit RegisteredSession(ControllerFixture& f) : client(ProtocolClient::create(f.ioc)), session(f.accept_session(*client)) {
    client->send(test_register("host-1"));
    REQUIRE(f.drain_until([&] { return client->count<proto::Registered>() == 1; }));
    REQUIRE(f.round_trip(*client));   // the registration's claim is answered
  }
  std::shared_ptr<ProtocolClient> client;
  std::shared_ptr<controller::AgentSession> session;
};

// Sends a clock probe to the registered agent and waits for it to arrive; returns its t0.
double send_clock_probe(ControllerFixture& f, RegisteredSession& agent) {
  auto& [client, session] = agent;
  const size_t n = client->count<proto::TimeSync>();
  session->send_clock_probe();
  REQUIRE(f.drain_until([&] { return client->count<proto::TimeSync>() == n + 1; }));
  return client->all<proto::TimeSync>().back().t0;
}

controller::ControllerOptions options_with(size_t max_ingest_in_flight, size_t max_queued_frames) {
  auto options = test_options();
  options.max_ingest_in_flight = max_ingest_in_flight;
  options.max_queued_frames = max_queued_frames;
  return options;
}

// Sends `reply` behind two results while the database is held, so that the session reads it only after pausing its
// reading for ingest (a session with max_ingest_in_flight 2); returns once both results are acknowledged.
void reply_under_load(ControllerFixture& f, RegisteredSession& agent, const proto::TimeSyncReply& reply) {
  auto& [client, session] = agent;
  Gate gate;
  gate.hold(*f.db, f.controller->executor());
  std::vector<uint64_t> ids;
  for (int64_t e = 0; e < 2; ++e) ids.push_back(client->send(epoch_of(4343, e)));
  client->send(reply);
  REQUIRE(f.drain_until([&] { return client->unsent() == 0 && !session->reading(); }));
  gate.open();
  REQUIRE(f.drain_until([&] { return client->acked(ids.back()); }));
}

}  // namespace

TEST_SUITE("agent session") {

TEST_CASE("reading pauses while max_ingest_in_flight results wait for the database, and resumes") {
  ControllerFixture f(options_with(2, 1024));
  RegisteredSession agent(f);
  auto& [client, session] = agent;

  const size_t acks_before = client->count<proto::Ack>();
  Gate gate;
  gate.hold(*f.db, f.controller->executor());
  std::vector<uint64_t> ids;
  for (int64_t e = 0; e < 6; ++e) ids.push_back(client->send(epoch_of(4242, e)));
  // All six frames leave the client; the session takes two and stops reading.
  REQUIRE(f.drain_until([&] { return client->unsent() == 0 && session->ingest_in_flight() == 2 && !session->reading(); }));
  drain_ready(f.ioc);
  CHECK(session->ingest_in_flight() == 2);
  CHECK_FALSE(session->reading());
  CHECK(client->count<proto::Ack>() == acks_before);

  gate.open();
  REQUIRE(f.drain_until([&] { return client->acked(ids.back()); }));
  // Cumulative acks: at most one per result, fewer when several commits land while one is being written.
  CHECK(client->count<proto::Ack>() > acks_before);
  CHECK(client->count<proto::Ack>() <= acks_before + 6);
  CHECK_FALSE(session->pending_ack());
  CHECK(session->ingest_in_flight() == 0);
  CHECK(session->reading());
  CHECK(session->open());
}

TEST_CASE("IngestBudget: a connection holding nothing may always read; room goes to the longest waiting, skipping "
          "wakes that find their connection reading or gone") {
  controller::IngestBudget budget(100);
  CHECK(budget.may_read(0));
  budget.take(60);
  CHECK(budget.may_read(60));
  budget.take(60);   // over the limit by the last frame read
  CHECK(budget.bytes() == 120);
  CHECK_FALSE(budget.may_read(60));
  CHECK(budget.may_read(0));
  std::vector<std::string> woken;
  budget.wait([&] { woken.push_back("gone"); });
  budget.wait([&] { woken.push_back("first"); });
  budget.wait([&] {
    woken.push_back("second");
    budget.take(50);   // its frame came in at once: the total is at the limit again
  });
  budget.wait([&] { woken.push_back("third"); });
  budget.give_back(10);   // still at the limit: nobody
  CHECK(woken.empty());
  budget.give_back(20);   // under it: in the order they came, while there is room
  CHECK(woken == std::vector<std::string>{"gone", "first", "second"});
  CHECK(budget.waiting() == 1);
  budget.give_back(60);
  CHECK(woken == std::vector<std::string>{"gone", "first", "second", "third"});
  CHECK(budget.waiting() == 0);
  CHECK(budget.bytes() == 80);
  CHECK(budget.peak_bytes() == 140);
}

TEST_CASE("reading pauses on every connection while all agents' results waiting reach max_ingest_bytes, each "
          "connection still getting one through, and resumes") {
  auto options = options_with(8, 1024);
  options.max_ingest_bytes = 1;   // any result fills it
  ControllerFixture f(options);
  RegisteredSession a(f);
  auto b_client = ProtocolClient::create(f.ioc);
  auto b_session = f.accept_session(*b_client);
  b_client->send(test_register("host-2"));
  REQUIRE(f.drain_until([&] { return b_client->count<proto::Registered>() == 1; }));
  REQUIRE(f.round_trip(*b_client));
  auto& budget = f.controller->ingest_budget();
  REQUIRE(budget.bytes() == 0);

  Gate gate;
  gate.hold(*f.db, f.controller->executor());
  std::vector<uint64_t> a_ids, b_ids;
  for (int64_t e = 0; e < 3; ++e) {
    a_ids.push_back(a.client->send(epoch_of(4242, e)));
    b_ids.push_back(b_client->send(epoch_of(4343, e)));
  }
  // Each connection reads one result (it held none), then both wait for room, far below max_ingest_in_flight.
  REQUIRE(f.drain_until([&] {
    return a.client->unsent() == 0 && b_client->unsent() == 0 && a.session->ingest_in_flight() == 1 &&
           b_session->ingest_in_flight() == 1 && !a.session->reading() && !b_session->reading();
  }));
  drain_ready(f.ioc);
  CHECK(a.session->ingest_in_flight() == 1);
  CHECK(b_session->ingest_in_flight() == 1);
  CHECK(budget.bytes() == a.session->ingest_bytes_in_flight() + b_session->ingest_bytes_in_flight());
  CHECK(budget.bytes() > 0);
  CHECK(budget.waiting() == 2);
  CHECK(a.session->waiting_for_budget());
  CHECK(b_session->waiting_for_budget());
  CHECK(a.session->paused_for_ingest());   // the heartbeat watchdog leaves it be

  gate.open();
  REQUIRE(f.drain_until([&] { return a.client->acked(a_ids.back()) && b_client->acked(b_ids.back()); }));
  REQUIRE(f.drain_until([&] { return a.session->reading() && b_session->reading(); }));
  CHECK(budget.bytes() == 0);
  CHECK(a.session->ingest_bytes_in_flight() == 0);
  CHECK(b_session->ingest_bytes_in_flight() == 0);
  CHECK(a.session->open());
  CHECK(b_session->open());
}

TEST_CASE("a connection waiting for room under max_ingest_bytes reads again when another connection gives room back, "
          "its own results still waiting") {
  auto options = options_with(8, 1024);
  options.max_ingest_bytes = 4096;
  ControllerFixture f(options);
  RegisteredSession agent(f);
  auto& [client, session] = agent;
  auto& budget = f.controller->ingest_budget();
  Gate gate;
  gate.hold(*f.db, f.controller->executor());
  budget.take(4096);   // another connection's results fill the limit
  std::vector<uint64_t> ids;
  for (int64_t e = 0; e < 3; ++e) ids.push_back(client->send(epoch_of(4242, e)));
  REQUIRE(f.drain_until([&] { return client->unsent() == 0 && session->ingest_in_flight() == 1 && !session->reading(); }));
  drain_ready(f.ioc);
  CHECK(session->ingest_in_flight() == 1);   // it held none, so it read one
  CHECK(session->waiting_for_budget());
  CHECK(session->paused_for_ingest());
  budget.give_back(4096);   // the other connection's results are stored; this one's are still held by the gate
  REQUIRE(f.drain_until([&] { return session->ingest_in_flight() == 3; }));
  CHECK_FALSE(session->waiting_for_budget());
  gate.open();
  REQUIRE(f.drain_until([&] { return client->acked(ids.back()); }));
  REQUIRE(f.drain_until([&] { return session->reading(); }));
  CHECK(budget.bytes() == 0);
}

TEST_CASE("a clock probe whose reply waited behind paused reading is discarded; a prompt one is not") {
  auto options = options_with(2, 1024);
  options.max_clock_probe_rtt_s = 60;   // only the paused reading decides here, never this machine's speed
  ControllerFixture f(options);
  RegisteredSession agent(f);
  auto& [client, session] = agent;
  REQUIRE(f.drain_until([&] { return session->queued_frames() == 0; }));
  const int64_t before = session->probes_discarded();

  // The probe the session sends, answered (the agent's reply carries the probe's t0).
  const auto probe = [&] { return send_clock_probe(f, agent); };
  // The agent's stamps 0.1 ms after t0 and none apart (t2 = t1): a round trip of any length is plausible (with t2
  // after t1, a loopback reply faster than their gap measured a negative round trip and was refused).
  const auto reply = [&](double t0) { client->send(proto::TimeSyncReply{t0, t0 + 0.0001, t0 + 0.0001, {}, {}, {}}); };

  // A reply the controller reads at once: kept. A reply to no outstanding probe (stale) is ignored.
  reply(probe());
  REQUIRE(f.round_trip(*client));
  CHECK(session->probes_discarded() == before);
  reply(proto::unix_now_s() - 5);
  REQUIRE(f.round_trip(*client));
  CHECK(session->probes_discarded() == before);

  // Reading paused for ingest with the reply behind the results: its round trip measures the database. Its t0 an ulp
  // off, as a JSON parser may give it back: still this probe.
  const double t0 = std::nextafter(probe(), 1e10);
  reply_under_load(f, agent, proto::TimeSyncReply{t0, t0 + 0.0001, t0 + 0.0001, {}, {}, {}});
  REQUIRE(f.drain_until([&] { return session->probes_discarded() == before + 1; }));
  CHECK(f.controller->metrics().clock_probes_discarded.value() >= 1);
}

TEST_CASE("a clock step on the board: a slower probe that cannot agree with the kept offset replaces it") {
  auto options = options_with(64, 1024);
  options.max_clock_probe_rtt_s = 60;
  ControllerFixture f(options);
  RegisteredSession agent(f);
  auto& [client, session] = agent;
  const auto probe = [&] { return send_clock_probe(f, agent); };
  // Agreeing clocks, a prompt reply: kept.
  double t0 = probe();
  client->send(proto::TimeSyncReply{t0, t0 + 0.0001, t0 + 0.0001, {}, {}, {}});
  REQUIRE(f.round_trip(*client));
  REQUIRE(session->clock_offset_s());
  CHECK(std::abs(*session->clock_offset_s()) < 0.5);
  // The board's clock now 300 s ahead, and this reply 1 s slower than any before (the agent's clock stepped back
  // between its receive and send stamps by 1 s): a slower probe, which alone would be ignored, but it cannot agree.
  t0 = probe();
  client->send(proto::TimeSyncReply{t0, t0 + 300.5, t0 + 299.5, {}, {}, {}});
  REQUIRE(f.round_trip(*client));
  REQUIRE(session->clock_offset_s());
  CHECK(std::abs(*session->clock_offset_s() - 300) < 0.5);
  const int64_t id = session->agent_id();
  REQUIRE(f.drain_until([&] {
    const auto a = f.store->agent(id);
    return a && a->clock_offset_s && std::abs(*a->clock_offset_s - 300) < 0.5;
  }));
  // A slower probe that agrees with the kept one is still ignored.
  t0 = probe();
  client->send(proto::TimeSyncReply{t0, t0 + 301.5, t0 + 299.5, {}, {}, {}});   // offset ~300.5, 2 s slower
  REQUIRE(f.round_trip(*client));
  CHECK(std::abs(*session->clock_offset_s() - 300) < 0.25);
}

TEST_CASE("a clock step mid-run does not move the run's live telemetry: it keeps the offset the run started under") {
  auto options = options_with(64, 1024);
  options.max_clock_probe_rtt_s = 60;
  ControllerFixture f(options);
  RegisteredSession agent(f);
  auto& [client, session] = agent;
  const auto answer_probe = [&](double ahead_s) {
    const double t0 = send_clock_probe(f, agent);
    client->send(proto::TimeSyncReply{t0, t0 + ahead_s, t0 + ahead_s, {}, {}, {}});
    REQUIRE(f.round_trip(*client));
  };
  answer_probe(0.0);   // the board's clock agrees with the controller's
  REQUIRE(session->clock_offset_s());
  // Run 41 starts (its t0 on the board's clock), then NTP steps the board's clock 300 s ahead.
  const double t0_unix_s = proto::unix_now_s();
  proto::RunStarted started;
  started.run_id = 41, started.t0_unix_s = t0_unix_s;
  client->send(started);
  REQUIRE(f.round_trip(*client));
  answer_probe(300.0);
  REQUIRE(std::abs(*session->clock_offset_s() - 300) < 0.5);
  // Its samples keep its t0 and a monotonic t_s: they belong at t0 + t_s on the controller's clock, not 300 s earlier.
  client->send(proto::SampleChunk{41, t0_unix_s, {proto::Sample{2.0, 50.0, {}, std::nullopt, 1, 0, 5.0, std::nullopt}}});
  REQUIRE(f.round_trip(*client));
  const auto* board = f.controller->fleet_telemetry().board(session->agent_id());
  REQUIRE(board);
  REQUIRE(board->latest);
  CHECK(std::abs(board->latest->t_unix_s - (t0_unix_s + 2.0)) < 0.5);
  CHECK(std::abs(*session->run_clock_offset_s(41)) < 0.5);
  // A run started after the step takes the new offset.
  proto::RunStarted next = started;
  next.run_id = 42, next.t0_unix_s = t0_unix_s + 300.0;
  client->send(next);
  REQUIRE(f.round_trip(*client));
  client->send(proto::SampleChunk{42, t0_unix_s + 300.0, {proto::Sample{3.0, 50.0, {}, std::nullopt, 1, 0, 5.0, std::nullopt}}});
  REQUIRE(f.round_trip(*client));
  REQUIRE(board->latest);
  CHECK(board->latest->run_id == 42);
  CHECK(std::abs(board->latest->t_unix_s - (t0_unix_s + 3.0)) < 0.5);
}

TEST_CASE("a clock step between the probe and a run's start: a run stamped on the boot clock takes the boot clock's "
          "offset") {
  auto options = options_with(64, 1024);
  options.max_clock_probe_rtt_s = 60;
  ControllerFixture f(options);
  RegisteredSession agent(f);
  auto& [client, session] = agent;
  // The board's wall clock agrees with the controller's; its boot clock (boot "b1") reads 900 s less.
  const double t0 = send_clock_probe(f, agent);
  client->send(proto::TimeSyncReply{t0, t0, t0, "b1", t0 - 900.0, t0 - 900.0});
  REQUIRE(f.round_trip(*client));
  REQUIRE(session->clock_offset_s());
  const int64_t id = session->agent_id();
  REQUIRE(f.drain_until([&] {
    const auto a = f.store->agent(id);
    return a && a->boot && a->boot->boot_id == "b1" && std::abs(a->boot->offset_s + 900.0) < 0.5;
  }));
  // NTP steps the wall clock 300 s ahead; run 51 starts before any other probe.
  const double now = proto::unix_now_s();
  proto::RunStarted started;
  started.run_id = 51, started.t0_unix_s = now + 300.0, started.boot_id = "b1", started.t0_boot_s = now - 900.0;
  client->send(started);
  REQUIRE(f.round_trip(*client));
  REQUIRE(session->run_clock_offset_s(51));
  CHECK(std::abs(*session->run_clock_offset_s(51) - 300.0) < 0.5);
  client->send(proto::SampleChunk{51, now + 300.0, {proto::Sample{2.0, 50.0, {}, std::nullopt, 1, 0, 5.0, std::nullopt}}});
  REQUIRE(f.round_trip(*client));
  const auto* board = f.controller->fleet_telemetry().board(id);
  REQUIRE(board);
  REQUIRE(board->latest);
  CHECK(std::abs(board->latest->t_unix_s - (now + 2.0)) < 0.5);   // not 300 s late
  // A run of another boot (a journal replayed after a reboot) takes the wall clock's offset.
  proto::RunStarted other = started;
  other.run_id = 52, other.boot_id = "b0";
  client->send(other);
  REQUIRE(f.round_trip(*client));
  CHECK(std::abs(*session->run_clock_offset_s(52)) < 0.5);
}

TEST_CASE("a probe kept because the wall clock stepped keeps the faster probe's boot clock offset") {
  auto options = options_with(64, 1024);
  options.max_clock_probe_rtt_s = 60;
  ControllerFixture f(options);
  RegisteredSession agent(f);
  auto& [client, session] = agent;
  // A prompt probe: wall clocks agree, the boot clock (boot "b1") reads 900 s less.
  double t0 = send_clock_probe(f, agent);
  client->send(proto::TimeSyncReply{t0, t0, t0, "b1", t0 - 900.0, t0 - 900.0});
  REQUIRE(f.round_trip(*client));
  // The wall clock stepped 300 s ahead; this reply is 2 s slower (its stamps 2 s apart), so its boot clock offset is
  // off by up to 1 s: the step's probe is kept for the wall clock, the earlier one's boot offset stays.
  t0 = send_clock_probe(f, agent);
  client->send(proto::TimeSyncReply{t0, t0 + 302.0, t0 + 300.0, "b1", t0 - 898.0, t0 - 900.0});
  REQUIRE(f.round_trip(*client));
  REQUIRE(session->clock_offset_s());
  CHECK(std::abs(*session->clock_offset_s() - 301.0) < 0.5);
  const int64_t id = session->agent_id();
  REQUIRE(f.drain_until([&] {
    const auto a = f.store->agent(id);
    return a && a->clock_offset_s && std::abs(*a->clock_offset_s - 301.0) < 0.5;
  }));
  const auto a = f.store->agent(id);
  REQUIRE(a->boot);
  CHECK(std::abs(a->boot->offset_s + 900.0) < 0.05);   // not -899, the slow probe's
}

TEST_CASE("a probe refused for its wall clock's offset (a board decades off) still gives its boot's offset") {
  auto options = options_with(64, 1024);
  options.max_clock_probe_rtt_s = 60;
  ControllerFixture f(options);
  RegisteredSession agent(f);
  auto& [client, session] = agent;
  // The board booted at 1970 (no RTC battery, no NTP yet): its wall clock reads 60 s; its boot clock (boot "b3") 30 s.
  const double t0 = send_clock_probe(f, agent);
  client->send(proto::TimeSyncReply{t0, 60.0, 60.0, "b3", 30.0, 30.0});
  REQUIRE(f.round_trip(*client));
  CHECK_FALSE(session->clock_offset_s());   // refused: beyond kMaxClockOffsetSeconds
  const int64_t id = session->agent_id();
  REQUIRE(f.drain_until([&] {
    const auto a = f.store->agent(id);
    return a && a->boot_offsets.count("b3") == 1;
  }));
  const auto a = f.store->agent(id);
  CHECK(std::abs(a->boot_offsets.at("b3") - (30.0 - t0)) < 0.5);
  CHECK_FALSE(a->clock_offset_s);
  CHECK_FALSE(a->boot);   // the kept estimate (and its boot) still none
}

TEST_CASE("a refused probe taken under load gives no boot offset; the boot's first prompt one does") {
  auto options = options_with(2, 1024);
  options.max_clock_probe_rtt_s = 60;   // only the paused reading decides here, never this machine's speed
  ControllerFixture f(options);
  RegisteredSession agent(f);
  auto& [client, session] = agent;
  REQUIRE(f.drain_until([&] { return session->queued_frames() == 0; }));
  const int64_t id = session->agent_id();
  // A board at 1970 (wall clock 60 s): its reply waits behind results while reading is paused for ingest. Its boot
  // clock reads 100 s in this reply, so its boot offset, were it taken, would be about 100 - t0.
  const double loaded_t0 = send_clock_probe(f, agent);
  reply_under_load(f, agent, proto::TimeSyncReply{loaded_t0, 60.0, 60.0, "b3", 100.0, 100.0});
  REQUIRE(f.round_trip(*client));
  // A prompt reply of the same boot (boot clock 30 s): the first offered for "b3", so the one remembered.
  const double t0 = send_clock_probe(f, agent);
  client->send(proto::TimeSyncReply{t0, 60.0, 60.0, "b3", 30.0, 30.0});
  REQUIRE(f.round_trip(*client));
  REQUIRE(f.drain_until([&] {
    const auto a = f.store->agent(id);
    return a && a->boot_offsets.count("b3") == 1;
  }));
  CHECK(std::abs(f.store->agent(id)->boot_offsets.at("b3") - (30.0 - t0)) < 5.0);   // not about 100 - loaded_t0
}

TEST_CASE("a connection whose write queue reaches max_queued_frames is closed") {
  ControllerFixture f(options_with(8, 4));
  RegisteredSession agent(f);
  auto& [client, session] = agent;
  REQUIRE(f.drain_until([&] { return session->queued_frames() == 0; }));

  // Frames queued faster than they can be written (all within one handler, so none completes meanwhile).
  for (int i = 0; i < 4; ++i) session->send(proto::Heartbeat{"controller", std::nullopt, {}, {}});
  CHECK(session->open());
  CHECK(session->queued_frames() == 4);
  session->send(proto::Heartbeat{"controller", std::nullopt, {}, {}});
  CHECK_FALSE(session->open());
  REQUIRE(f.drain_until([&] { return client->closed(); }));
}

}  // TEST_SUITE

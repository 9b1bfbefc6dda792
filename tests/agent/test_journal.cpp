// The agent's on-disk journal (issue 5): append/ack/compaction, replay in order after reopening, ids that keep
// increasing across restarts, a torn last record, the lock, and the synthetic run_finished after a mid-run crash;
// plus the journal and enrollment flags of the agent CLI.
#include <doctest/doctest.h>

#include <cmath>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/config.hpp"
#include "agent/journal.hpp"
#include "support/disk_usage.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using agent::Journal;
using agent::JournalEntry;

namespace {

JournalEntry entry(uint64_t id, proto::Body body) {
  JournalEntry e;
  e.id = id;
  e.run_id = proto::result_run_id(body).value_or(0);
  e.run_finished = std::holds_alternative<proto::RunFinished>(body);
  e.frame = proto::encode(proto::Envelope{id, std::move(body)});
  return e;
}

proto::Body chunk(int64_t run, int64_t epoch, size_t n = 4) {
  return proto::MinibatchChunk{run, epoch, 0, std::vector<double>(n, 0.01), std::vector<double>(n, 0.02), {}};
}

proto::Body epoch_result(int64_t run, int64_t epoch) {
  proto::EpochResult r;
  r.run_id = run;
  r.epoch = epoch;
  r.minibatches = 4;
  return r;
}

std::unique_ptr<Journal> open_ok(const testing::TempDir& dir, const std::string& name = "a1") {
  auto j = Journal::open(dir.str(), name);
  REQUIRE_MESSAGE(j.is_ok(), j.status().to_string());
  return std::move(j).value();
}

Status append(Journal& j, proto::Body body) {
  const std::string type(proto::type_name(body));
  return j.append(entry(j.next_id(), std::move(body)), type);
}

std::string journal_file(const testing::TempDir& dir) { return (dir / "journal.bin").string(); }

// The bytes the journal file occupies on disk (its blocks, not its length).
uint64_t allocated_bytes(const testing::TempDir& dir) {
  const auto bytes = testing::allocated_bytes(journal_file(dir));
  REQUIRE(bytes);
  return *bytes;
}

// Checks that `e` is a run_finished entry with message id `id` whose frame decodes to `expected`.
void check_run_finished(const JournalEntry& e, int64_t id, const proto::RunFinished& expected) {
  CHECK(e.id == id);
  CHECK(e.run_finished);
  auto decoded = proto::decode(e.frame);
  REQUIRE(decoded.is_ok());
  CHECK(decoded->id == id);
  CHECK(decoded->body == proto::Body(expected));
}

}  // namespace

TEST_CASE("journal: appended messages stay until acked; acked ones are compacted away") {
  testing::TempDir dir;
  auto j = open_ok(dir);
  CHECK(j->next_id() == 1);
  CHECK(j->read_unacked().value().empty());
  const uint64_t empty_bytes = j->file_bytes();
  REQUIRE(append(*j, chunk(7, 0)).is_ok());
  REQUIRE(append(*j, epoch_result(7, 0)).is_ok());
  REQUIRE(append(*j, chunk(8, 0)).is_ok());
  CHECK(j->unacked_count() == 3);
  CHECK(j->unacked_runs() == std::vector<int64_t>{7, 8});
  REQUIRE(j->ack(2).is_ok());
  CHECK(j->unacked_count() == 1);
  CHECK(j->unacked_runs() == std::vector<int64_t>{8});
  // Below the compaction threshold the file only grows (an ack record).
  CHECK(j->file_bytes() > empty_bytes);
  // An id below the next one is refused.
  CHECK_FALSE(j->append(entry(2, chunk(8, 1)), "minibatch_chunk").is_ok());

  // Enough acked data and everything acked: the file is rewritten to just its header.
  for (int i = 0; i < 40; ++i) REQUIRE(append(*j, chunk(8, i + 1, 400)).is_ok());
  CHECK(j->file_bytes() > Journal::kCompactMinBytes);
  REQUIRE(j->ack(j->next_id() - 1).is_ok());
  CHECK(j->unacked_count() == 0);
  CHECK(j->file_bytes() == empty_bytes);
  CHECK(std::filesystem::file_size(journal_file(dir)) == empty_bytes);
}

TEST_CASE("journal: acked data that dominates a large file is compacted while messages are outstanding") {
  testing::TempDir dir;
  auto j = open_ok(dir);
  for (int i = 0; i < 500; ++i) REQUIRE(append(*j, chunk(4, i, 1000)).is_ok());
  const uint64_t big = j->disk_bytes();
  REQUIRE(big > Journal::kCompactAckedBytes);
  REQUIRE(j->ack(j->next_id() - 3).is_ok());   // acked data dominates: given back (punched, or compacted)
  CHECK(j->unacked_count() == 2);
  CHECK(j->disk_bytes() < big / 10);
  CHECK(allocated_bytes(dir) < big / 10);   // what the file system says it occupies
  REQUIRE(j->ack(j->next_id() - 2).is_ok());   // all but the last chunk
  CHECK(j->unacked_count() == 1);
  CHECK(j->disk_bytes() < big / 10);
  j.reset();
  auto again = open_ok(dir);
  auto pending = again->read_unacked().value();
  REQUIRE(pending.size() == 2);   // the last chunk and the synthetic run_finished of run 4 (no run_finished)
  CHECK(pending[0].run_id == 4);
  CHECK(pending[1].run_finished);
}

TEST_CASE("journal: reopening replays the unacked messages in order, with ids above everything used before") {
  testing::TempDir dir;
  std::vector<std::string> frames;
  {
    auto j = open_ok(dir);
    REQUIRE(append(*j, chunk(5, 0)).is_ok());
    REQUIRE(append(*j, epoch_result(5, 0)).is_ok());
    REQUIRE(append(*j, chunk(5, 1)).is_ok());
    REQUIRE(append(*j, epoch_result(5, 1)).is_ok());
    REQUIRE(append(*j, proto::RunFinished{5, "done", "", 1.5}).is_ok());
    REQUIRE(j->ack(2).is_ok());
    CHECK(j->next_id() == 6);
  }
  auto j = open_ok(dir);
  CHECK(j->recovery().entries == 3);
  CHECK(j->recovery().cancelled.empty());
  CHECK(j->recovery().dropped_bytes == 0);
  CHECK(j->next_id() == 6);
  auto pending = j->read_unacked().value();
  REQUIRE(pending.size() == 3);
  CHECK(pending[0].id == 3);
  CHECK(pending[1].id == 4);
  check_run_finished(pending[2], 5, proto::RunFinished{5, "done", "", 1.5});
  CHECK(j->unacked_runs() == std::vector<int64_t>{5});

  // Everything acked and compacted: the next id still survives a restart (it is in the header).
  REQUIRE(j->ack(5).is_ok());
  j.reset();
  auto k = open_ok(dir);
  CHECK(k->read_unacked().value().empty());
  CHECK(k->next_id() == 6);
  REQUIRE(append(*k, chunk(9, 0)).is_ok());
  REQUIRE(k->ack(6).is_ok());   // only an ack record, no compaction (small file)
  k.reset();
  auto l = open_ok(dir);
  CHECK(l->next_id() == 7);
  CHECK(l->read_unacked().value().empty());
}

TEST_CASE("journal: a torn last record is detected by length and checksum, logged and dropped") {
  testing::TempDir dir;
  {
    auto j = open_ok(dir);
    REQUIRE(append(*j, chunk(2, 0)).is_ok());
    REQUIRE(append(*j, epoch_result(2, 0)).is_ok());
    REQUIRE(append(*j, proto::RunFinished{2, "done", "", 1}).is_ok());
  }
  const auto size = std::filesystem::file_size(journal_file(dir));
  SUBCASE("cut short") { std::filesystem::resize_file(journal_file(dir), size - 5); }
  SUBCASE("garbled") {
    std::fstream f(journal_file(dir), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 3));
    f.write("xyz", 3);
  }
  auto j = open_ok(dir);
  CHECK(j->recovery().dropped_bytes > 0);
  auto pending = j->read_unacked().value();
  // The run_finished was torn: the two results remain and the run is reported cancelled.
  REQUIRE(pending.size() == 3);
  CHECK(pending[0].id == 1);
  CHECK(pending[1].id == 2);
  // Id 3 (and ids of other unsynced records lost with it) may have reached the controller: never reused.
  check_run_finished(pending[2], 3 + Journal::kIdGapAfterDroppedTail,
                     proto::RunFinished{2, "cancelled", "agent restarted mid-run", 0});
  CHECK(j->next_id() == pending[2].id + 1);
}

TEST_CASE("journal: a damaged record mid-file is skipped alone; every record after it is kept") {
  testing::TempDir dir;
  uint64_t offset = 0;
  {
    auto j = open_ok(dir);
    REQUIRE(append(*j, chunk(2, 0)).is_ok());
    REQUIRE(append(*j, epoch_result(2, 0)).is_ok());
    REQUIRE(append(*j, proto::RunFinished{2, "done", "", 1}).is_ok());
    REQUIRE(append(*j, chunk(3, 0)).is_ok());
    REQUIRE(append(*j, proto::RunFinished{3, "done", "", 1}).is_ok());
    offset = j->unacked()[1].offset;   // the epoch_result's record
  }
  std::fstream f(journal_file(dir), std::ios::in | std::ios::out | std::ios::binary);
  SUBCASE("a flipped byte in its payload") {
    f.seekp(static_cast<std::streamoff>(offset + 30));
    f.write("#", 1);
  }
  SUBCASE("a garbled length") {
    f.seekp(static_cast<std::streamoff>(offset));
    f.write("\xff\xff\xff\x7f", 4);
  }
  f.close();
  auto j = open_ok(dir);
  CHECK(j->recovery().damaged_records == 1);
  CHECK(j->recovery().dropped_bytes > 0);
  auto pending = j->read_unacked().value();
  // Only the epoch_result is lost; both runs keep their run_finished, so neither is reported cancelled.
  REQUIRE(pending.size() == 4);
  CHECK(pending[0].id == 1);
  CHECK(pending[1].id == 3);
  CHECK(pending[2].id == 4);
  CHECK(pending[3].id == 5);
  CHECK(j->recovery().cancelled.empty());
  CHECK(j->next_id() > 5);   // above every id in the file: none is reused
}

TEST_CASE("journal: an agent that died mid-run gets a cancelled run_finished appended, once") {
  testing::TempDir dir;
  {
    auto j = open_ok(dir);
    REQUIRE(append(*j, chunk(11, 0)).is_ok());
    REQUIRE(append(*j, epoch_result(11, 0)).is_ok());
    REQUIRE(append(*j, proto::RunFinished{10, "done", "", 3}).is_ok());   // another run, complete
  }
  {
    auto j = open_ok(dir);
    CHECK(j->recovery().cancelled == std::vector<int64_t>{11});
    auto pending = j->read_unacked().value();
    REQUIRE(pending.size() == 4);
    CHECK(pending[3].run_id == 11);
    check_run_finished(pending[3], 4, proto::RunFinished{11, "cancelled", "agent restarted mid-run", 0});
    CHECK(j->unacked_runs() == std::vector<int64_t>{10, 11});
  }
  // The synthetic run_finished was journaled: a second restart does not add another.
  auto j = open_ok(dir);
  CHECK(j->recovery().cancelled.empty());
  CHECK(j->read_unacked().value().size() == 4);
  CHECK(j->next_id() == 5);
}

TEST_CASE("journal: one agent per directory (lock) and per name") {
  testing::TempDir dir;
  auto first = open_ok(dir, "edge-1");
  auto second = Journal::open(dir.str(), "edge-1");
  REQUIRE_FALSE(second.is_ok());
  CHECK(second.status().code() == Code::kAlreadyExists);
  CHECK(second.status().message().find("in use by another jetsweep-agent (pid " + std::to_string(::getpid())) !=
        std::string::npos);
  first.reset();
  // Released with the journal; a journal written for another name is refused.
  auto other = Journal::open(dir.str(), "edge-2");
  REQUIRE_FALSE(other.is_ok());
  CHECK(other.status().message().find("belongs to agent 'edge-1'") != std::string::npos);
  CHECK(Journal::open(dir.str(), "edge-1").is_ok());
}

TEST_CASE("journal: a file that is not a journal is refused, not overwritten") {
  testing::TempDir dir;
  testing::write_file(dir / "journal.bin", "hello world, not a journal");
  auto j = Journal::open(dir.str(), "a1");
  REQUIRE_FALSE(j.is_ok());
  CHECK(j.status().message().find("not a jetsweep agent journal") != std::string::npos);
  std::ifstream in(journal_file(dir));
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(content == "hello world, not a journal");
}

TEST_CASE("agent CLI: journal and enrollment flags") {
  auto c = agent::parse_agent_args({"--controller", "ws://h:1", "--name", "n1", "--journal-dir", "/tmp/j",
                                    "--enroll-secret", "s3cret"});
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  CHECK(c->journal_dir == "/tmp/j");
  CHECK_FALSE(c->no_journal);
  CHECK(c->enroll_secret == "s3cret");
  auto n = agent::parse_agent_args({"--controller", "ws://h:1", "--name", "n1", "--no-journal"});
  REQUIRE(n.is_ok());
  CHECK(n->no_journal);
  CHECK(n->journal_dir.empty());
  auto both = agent::parse_agent_args({"--controller", "ws://h:1", "--name", "n1", "--no-journal", "--journal-dir", "/x"});
  REQUIRE_FALSE(both.is_ok());
  CHECK(both.status().message().find("--no-journal") != std::string::npos);
  CHECK_FALSE(agent::parse_agent_args({"--controller", "ws://h:1", "--name", "n1", "--enroll-secret", ""}).is_ok());
  CHECK_FALSE(agent::parse_agent_args({"run", "--spec", "s", "--out", "o", "--journal-dir", "/x"}).is_ok());

  auto d = agent::default_journal_dir("edge-3");
  REQUIRE(d.is_ok());
  const std::string expected = ::geteuid() == 0 ? "/var/lib/jetsweep/journal/edge-3" : "jetsweep/edge-3";
  REQUIRE(d->size() >= expected.size());
  CHECK(d->substr(d->size() - expected.size()) == expected);
  CHECK_FALSE(agent::default_journal_dir("a/b").is_ok());
  CHECK_FALSE(agent::default_journal_dir("..").is_ok());
}

// ---- The agent against a scripted controller: enrollment secret, HTTP 401, clock sync, journal replay. ----

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "agent/agent.hpp"
#include "agent/host_facts.hpp"

namespace {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

// A one-thread scripted controller: each accepted connection's upgrade request is handed to `on_upgrade`.
struct ScriptedController {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  uint16_t port() const { return acceptor.local_endpoint().port(); }
};

// Runs an agent on its own io thread until `stop()`; shuts it down and joins.
class AgentRunner {
 public:
  AgentRunner(uint16_t port, std::string secret, std::shared_ptr<agent::Journal> journal) {
    agent::AgentOptions o;
    o.port = std::to_string(port);
    o.name = "wire-1";
    o.backoff_initial = std::chrono::milliseconds(10);
    o.backoff_max = std::chrono::milliseconds(50);
    o.drain_timeout = std::chrono::milliseconds(500);
    o.enroll_secret = std::move(secret);
    o.journal = std::move(journal);
    agent_ = std::make_shared<agent::Agent>(ioc_, o);
    agent_->start();
    thread_ = std::thread([this] { ioc_.run_for(std::chrono::seconds(60)); });
  }
  ~AgentRunner() {
    asio::post(ioc_, [a = agent_] { a->shutdown(); });
    thread_.join();
  }
  // Runs `fn(agent)` on the agent's io thread.
  void post(std::function<void(agent::Agent&)> fn) {
    asio::post(ioc_, [a = agent_, fn = std::move(fn)] { fn(*a); });
  }

 private:
  asio::io_context ioc_{1};
  std::shared_ptr<agent::Agent> agent_;
  std::thread thread_;
};

http::request<http::string_body> read_upgrade(tcp::socket& s, beast::flat_buffer& buf) {
  http::request<http::string_body> req;
  http::read(s, buf, req);
  return req;
}

proto::Envelope read_envelope(websocket::stream<tcp::socket>& ws) {
  beast::flat_buffer b;
  ws.read(b);
  auto env = proto::decode(beast::buffers_to_string(b.data()));
  REQUIRE_MESSAGE(env.is_ok(), env.status().message());
  return env.value();
}

// A run's results as the journal holds them when its agent stopped before the controller acked them: a chunk,
// the epoch's result and run_finished "done".
void append_finished_run(agent::Journal& j, int64_t run) {
  REQUIRE(append(j, chunk(run, 0)).is_ok());
  REQUIRE(append(j, epoch_result(run, 0)).is_ok());
  REQUIRE(append(j, proto::RunFinished{run, "done", "", 2}).is_ok());
}

void write_envelope(websocket::stream<tcp::socket>& ws, proto::Body body) {
  ws.text(true);
  ws.write(asio::buffer(proto::encode(proto::Envelope{0, std::move(body)})));
}

}  // namespace

TEST_CASE("agent: a refused enrollment secret (HTTP 401) is retried, the secret is sent as a bearer token") {
  ScriptedController ctl;
  AgentRunner runner(ctl.port(), "wrong-secret", nullptr);
  for (int attempt = 0; attempt < 3; ++attempt) {
    tcp::socket s(ctl.ioc);
    ctl.acceptor.accept(s);
    beast::flat_buffer buf;
    auto req = read_upgrade(s, buf);
    CHECK(websocket::is_upgrade(req));
    CHECK(req[http::field::authorization] == "Bearer wrong-secret");
    http::response<http::string_body> res{http::status::unauthorized, req.version()};
    res.set(http::field::www_authenticate, "Bearer");
    res.body() = "enrollment secret refused";
    res.prepare_payload();
    http::write(s, res);
  }
  // Three attempts were made: the agent kept retrying after each refusal instead of giving up.
}

TEST_CASE("agent: TimeSync is answered at once; journaled results are announced and replayed after registration") {
  testing::TempDir dir;
  {
    auto j = open_ok(dir, "wire-1");
    append_finished_run(*j, 21);
    REQUIRE(append(*j, chunk(22, 0)).is_ok());   // run 22 died mid-run: a cancelled run_finished follows
  }
  auto journal = open_ok(dir, "wire-1");
  ScriptedController ctl;
  AgentRunner runner(ctl.port(), "", std::move(journal));
  tcp::socket s(ctl.ioc);
  ctl.acceptor.accept(s);
  beast::flat_buffer buf;
  auto req = read_upgrade(s, buf);
  CHECK(req.find(http::field::authorization) == req.end());   // no secret, no header
  websocket::stream<tcp::socket> ws(std::move(s));
  ws.accept(req);
  auto reg = read_envelope(ws);
  REQUIRE(std::holds_alternative<proto::Register>(reg.body));
  CHECK(std::get<proto::Register>(reg.body).name == "wire-1");
  CHECK(std::get<proto::Register>(reg.body).journal_runs == std::vector<int64_t>{21, 22});
  CHECK_FALSE(std::get<proto::Register>(reg.body).current_run.has_value());
  write_envelope(ws, proto::Registered{5, 60000});
  const double t0 = proto::unix_now_s();
  const double boot_t0 = proto::boot_now_s();
  write_envelope(ws, proto::TimeSync{t0});

  std::vector<proto::Envelope> results;
  std::optional<proto::TimeSyncReply> reply;
  while (!reply || results.size() < 5) {
    auto env = read_envelope(ws);
    if (const auto* r = std::get_if<proto::TimeSyncReply>(&env.body)) {
      CHECK(env.id == 0);   // control message: not numbered, not journaled
      reply = *r;
    } else if (proto::needs_ack(env.body)) {
      results.push_back(env);
    }
  }
  const double t3 = proto::unix_now_s();
  const double boot_t3 = proto::boot_now_s();
  // Boost.JSON 1.81 does not always parse doubles correctly rounded: a Unix time may come back one ulp
  // (~2e-7 s) off, far below what a clock offset estimate can resolve.
  CHECK(std::fabs(reply->t0 - t0) < 1e-6);
  CHECK(reply->t1 >= t0 - 1e-3);
  CHECK(reply->t1 <= reply->t2);
  CHECK(reply->t2 <= t3 + 1e-3);
  // The same two instants on the boot clock, with this machine's boot (the agent's root is "/"); none where the
  // kernel's boot_id cannot be read.
  const std::string boot_id = agent::read_boot_id("/");
  CHECK(reply->boot_id == boot_id);
  if (!boot_id.empty()) {
    REQUIRE(reply->t1_boot);
    REQUIRE(reply->t2_boot);
    CHECK(*reply->t1_boot >= boot_t0 - 1e-3);
    CHECK(*reply->t1_boot <= *reply->t2_boot);
    CHECK(*reply->t2_boot <= boot_t3 + 1e-3);
  } else {
    CHECK_FALSE(reply->t1_boot);
  }
  // Replayed in id order, the synthetic cancelled run_finished last.
  REQUIRE(results.size() == 5);
  for (size_t i = 0; i < results.size(); ++i) CHECK(results[i].id == i + 1);
  CHECK(results[4].body == proto::Body(proto::RunFinished{22, "cancelled", "agent restarted mid-run", 0}));
  write_envelope(ws, proto::Ack{5});
  // After the ack the journal is empty: the agent shuts down cleanly (drained) when the runner ends.
}

TEST_CASE("read_boot_id: the kernel's boot_id under the root, \"\" when absent or malformed") {
  testing::TempDir dir;
  const std::string root = dir.path().string();
  CHECK(agent::read_boot_id(root) == "");   // a fake tree without it
  std::filesystem::create_directories(dir.path() / "proc/sys/kernel/random");
  const auto write = [&](const std::string& text) { std::ofstream(dir.path() / "proc/sys/kernel/random/boot_id") << text; };
  write("0f6e6d3c-8a1b-4c2d-9e0f-123456789abc\n");
  CHECK(agent::read_boot_id(root) == "0f6e6d3c-8a1b-4c2d-9e0f-123456789abc");
  write("NOT-A-UUID\n");
  CHECK(agent::read_boot_id(root) == "");
  write(std::string(65, 'a'));
  CHECK(agent::read_boot_id(root) == "");
  write("");
  CHECK(agent::read_boot_id(root) == "");
}

TEST_CASE("agent: while its journal's disk stalls, clock probes and heartbeats are answered; results follow after") {
  testing::TempDir dir;
  append_finished_run(*open_ok(dir, "wire-1"), 31);   // an agent stopped before the controller acked run 31
  ScriptedController ctl;
  AgentRunner runner(ctl.port(), "", open_ok(dir, "wire-1"));
  tcp::socket s(ctl.ioc);
  ctl.acceptor.accept(s);
  beast::flat_buffer buf;
  auto req = read_upgrade(s, buf);
  websocket::stream<tcp::socket> ws(std::move(s));
  // An agent whose io thread waited on the disk would answer nothing: after 20 s the socket is shut down, and the
  // read waiting on it fails the test instead of hanging it.
  const int fd = ws.next_layer().native_handle();
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread deadline([&] {
    std::unique_lock<std::mutex> lock(m);
    if (!cv.wait_for(lock, std::chrono::seconds(20), [&] { return done; })) ::shutdown(fd, SHUT_RDWR);
  });
  struct EndDeadline {
    std::function<void()> end;
    ~EndDeadline() { end(); }
  } end_deadline{[&] {
    {
      std::lock_guard<std::mutex> lock(m);
      done = true;
    }
    cv.notify_all();
    deadline.join();
  }};
  ws.accept(req);
  REQUIRE(std::holds_alternative<proto::Register>(read_envelope(ws).body));
  // Registered, the agent reads its journal back to replay it; the journal thread blocks first: a disk that does
  // not answer.
  std::promise<void> disk_back;
  std::shared_future<void> back = disk_back.get_future().share();
  std::promise<bool> stalled;
  runner.post([back, &stalled](agent::Agent& a) {
    stalled.set_value(a.run_on_journal_thread([back](agent::Journal&) { back.wait(); }));
  });
  REQUIRE(stalled.get_future().get());
  write_envelope(ws, proto::Registered{5, 100});   // heartbeats every 100 ms
  write_envelope(ws, proto::TimeSync{proto::unix_now_s()});
  bool replied = false;
  int heartbeats = 0;
  while (!replied || heartbeats < 2) {   // the replay's reads wait behind the stalled disk; these do not
    auto env = read_envelope(ws);
    REQUIRE_FALSE(proto::needs_ack(env.body));   // no result can be sent: none is read back yet
    replied = replied || std::holds_alternative<proto::TimeSyncReply>(env.body);
    if (std::holds_alternative<proto::Heartbeat>(env.body)) ++heartbeats;
  }
  disk_back.set_value();
  std::vector<uint64_t> ids;
  while (ids.size() < 3) {
    auto env = read_envelope(ws);
    if (proto::needs_ack(env.body)) ids.push_back(env.id);
  }
  CHECK(ids == std::vector<uint64_t>{1, 2, 3});
  write_envelope(ws, proto::Ack{3});
}

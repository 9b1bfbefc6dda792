// bench_load_agents: many simulated agents in one process (one WebSocket connection each, one io thread)
// against a real controller, speaking the real protocol. Each agent registers with device class "load",
// heartbeats ("running" with the run's id while it has one, else "idle"), answers clock probes, and "executes"
// an assigned run by waiting --run-s seconds, then reports one epoch and run_finished (acked by the controller
// like any result). Prints a JSON summary: agents registered, dispatch latency (agent idle -> assign_run
// received) p50/p99, runs done, the makespan of the runs, what was sent and acknowledged, and the controller's
// error messages (an ingest that failed).
// With --samples-per-run N each run also streams N telemetry samples (--sample-cores per-core values each)
// in chunks of --sample-chunk, as the real agent does at epoch end, and a run counts as done only when the
// controller has acknowledged its run_finished (acks come after the rows are committed, in order), so
// samples_per_s is end-to-end ingestion: decode, COPY into staging, merge, commit.
// With --epochs E each run streams what a real E-epoch run writes, in the real agent's order (run_started; per
// epoch: --minibatches-per-epoch times in chunks of --minibatch-chunk, --samples-per-epoch samples, the
// epoch_result; then run_finished; bench/load_agent_stream.hpp), with at most --window unacknowledged messages
// per agent (more are made as acks arrive, so memory stays bounded however long the run), and a run counts as
// done when its run_finished is acknowledged. ingest_s runs from the first result message sent to the last
// run_finished acknowledged; minibatches_per_s and messages_per_s are over it.
// Usage: bench_load_agents --controller ws://HOST:PORT --agents N [...]; bench_load_agents --help lists the flags.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench/load_agent_stream.hpp"
#include "common/protocol.hpp"

namespace asio = boost::asio;
namespace proto = jetsweep::proto;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string host = "127.0.0.1", port;
  int agents = 100;
  double run_s = 1.0;
  int64_t runs = 0;      // stop when this many runs are done (0 = hold for hold_s)
  double hold_s = 10;
  int heartbeat_ms = 1000;
  int connect_batch = 200;
  std::string secret;
  // Agent names are PREFIX<index>. A name registers once per database: the controller enrolls it with a credential
  // this tool does not keep, so a second load on the same database needs another prefix.
  std::string name_prefix = "load-";
  int64_t samples_per_run = 0;
  int64_t sample_chunk = 2048;
  int sample_cores = 8;
  jetsweep::bench::StreamShape shape;   // --epochs > 0: epoch streaming
  int64_t window = 64;                  // unacknowledged messages per agent in epoch streaming
  double max_s = 3600;                  // give up after this long
  bool waits_for_ack() const { return samples_per_run > 0 || shape.epochs > 0; }
};

struct Stats {
  int connecting = 0;
  int registered = 0;
  int failed = 0;
  int64_t runs_done = 0;
  int64_t samples_acked = 0;
  int64_t epochs_acked = 0;
  int64_t minibatches_sent = 0;
  int64_t samples_sent = 0;
  int64_t messages_sent = 0;   // result messages (those the controller acknowledges)
  int64_t errors = 0;          // error messages from the controller (an ingest failed, a frame was refused)
  std::vector<double> dispatch_ms;
  std::optional<Clock::time_point> first_assign, last_finish, first_result;
};

// One simulated agent: its socket, write queue and timers. All on the single io thread.
class LoadAgent : public std::enable_shared_from_this<LoadAgent> {
 public:
  LoadAgent(asio::io_context& ioc, const Options& o, Stats& st, int index)
      : ioc_(ioc), o_(o), st_(st), ws_(ioc), hb_(ioc), run_timer_(ioc), name_(o.name_prefix + std::to_string(index)) {}

  void start(const tcp::resolver::results_type& endpoints, std::function<void()> on_connected) {
    ++st_.connecting;
    auto self = shared_from_this();
    beast::get_lowest_layer(ws_).async_connect(endpoints, [self, on_connected](beast::error_code ec, const tcp::endpoint&) {
      if (ec) return self->fail(on_connected);
      if (!self->o_.secret.empty())
        self->ws_.set_option(websocket::stream_base::decorator([s = self->o_.secret](websocket::request_type& r) {
          r.set(beast::http::field::authorization, "Bearer " + s);
        }));
      self->ws_.async_handshake(self->o_.host + ":" + self->o_.port, "/agent", [self, on_connected](beast::error_code ec2) {
        if (ec2) return self->fail(on_connected);
        --self->st_.connecting;
        on_connected();
        proto::Register reg;
        reg.name = self->name_;
        reg.facts.hostname = "load-host";
        reg.facts.cpus = 1;
        reg.facts.mem_bytes = 1 << 30;
        reg.facts.backend = "sim";
        reg.facts.device_class = "load";
        reg.facts.git_sha = "bench";
        self->send(proto::Envelope{0, reg});
        self->read();
      });
    });
  }

 private:
  void fail(const std::function<void()>& on_connected) {
    --st_.connecting;
    ++st_.failed;
    on_connected();
  }
  void send(proto::Envelope env) {
    queue_.push_back(proto::encode(env));
    if (queue_.size() == 1) write();
  }
  void write() {
    auto self = shared_from_this();
    ws_.text(true);
    ws_.async_write(asio::buffer(queue_.front()), [self](beast::error_code ec, std::size_t) {
      if (ec) return;
      self->queue_.pop_front();
      if (!self->queue_.empty()) self->write();
    });
  }
  void read() {
    auto self = shared_from_this();
    ws_.async_read(buf_, [self](beast::error_code ec, std::size_t) {
      if (ec) return;
      auto env = proto::decode(beast::buffers_to_string(self->buf_.data()));
      self->buf_.consume(self->buf_.size());
      if (env) self->handle(env.value());
      self->read();
    });
  }
  void handle(const proto::Envelope& env) {
    if (std::holds_alternative<proto::Registered>(env.body)) {
      ++st_.registered;
      idle_since_ = Clock::now();
      heartbeat();
    } else if (const auto* a = std::get_if<proto::AssignRun>(&env.body)) {
      on_assign(a->run_id);
    } else if (const auto* ack = std::get_if<proto::Ack>(&env.body)) {
      on_ack(ack->up_to);
    } else if (const auto* c = std::get_if<proto::CancelRun>(&env.body)) {
      if (stream_ && stream_->run_id() == c->run_id) {
        stream_->cancel();   // the next message is run_finished "cancelled"
        pump();
      }
    } else if (const auto* e = std::get_if<proto::Error>(&env.body)) {
      if (++st_.errors <= 10) std::cerr << name_ << ": controller error " << e->code << ": " << e->message << "\n";
    } else if (const auto* t = std::get_if<proto::TimeSync>(&env.body)) {
      const double now = proto::unix_now_s();
      send(proto::Envelope{0, proto::TimeSyncReply{t->t0, now, now, {}, {}, {}}});
    }
  }
  void on_assign(int64_t run) {
    const auto now = Clock::now();
    st_.dispatch_ms.push_back(std::chrono::duration<double, std::milli>(now - idle_since_).count());
    if (!st_.first_assign) st_.first_assign = now;
    run_ = run;
    if (o_.shape.epochs > 0) {
      stream_.emplace(run, o_.shape, proto::unix_now_s());
      return pump();
    }
    run_timer_.expires_after(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.run_s)));
    auto self = shared_from_this();
    run_timer_.async_wait([self, run](beast::error_code ec) {
      if (ec) return;
      self->send_samples(run);
      proto::EpochResult e;
      e.run_id = run;
      e.e2e_s = e.compute_s = self->o_.run_s;
      e.minibatches = 1;
      self->send_result(e);
      self->send_result(proto::RunFinished{run, "done", "", self->o_.run_s});
      if (!self->o_.waits_for_ack()) self->run_done();
    });
  }
  // Every message up to `up_to` is committed: count the epochs among them, finish the run when its
  // run_finished is, and send more of the run's messages (epoch streaming).
  void on_ack(uint64_t up_to) {
    acked_ = std::max(acked_, up_to);
    for (; !epoch_ids_.empty() && epoch_ids_.front() <= acked_; epoch_ids_.pop_front()) ++st_.epochs_acked;
    if (o_.waits_for_ack() && finish_id_ != 0 && acked_ >= finish_id_) {
      finish_id_ = 0;
      st_.samples_acked += o_.samples_per_run;
      stream_.reset();
      run_done();
    }
    pump();
  }
  // Epoch streaming: sends the run's next messages while fewer than --window are unacknowledged.
  void pump() {
    while (stream_ && !stream_->finished() && next_id_ - 1 - acked_ < static_cast<uint64_t>(o_.window)) {
      auto body = stream_->next();
      if (!body) break;
      send_result(std::move(*body));
    }
  }
  // Sends a message the controller acknowledges (numbered) and counts what it carries.
  void send_result(proto::Body body) {
    const uint64_t id = next_id_++;
    ++st_.messages_sent;
    if (!st_.first_result) st_.first_result = Clock::now();
    if (const auto* m = std::get_if<proto::MinibatchChunk>(&body))
      st_.minibatches_sent += static_cast<int64_t>(m->stall_s.size());
    else if (const auto* c = std::get_if<proto::SampleChunk>(&body))
      st_.samples_sent += static_cast<int64_t>(c->samples.size());
    else if (std::holds_alternative<proto::EpochResult>(body))
      epoch_ids_.push_back(id);
    else if (std::holds_alternative<proto::RunFinished>(body))
      finish_id_ = id;
    send(proto::Envelope{id, std::move(body)});
  }
  void run_done() {
    ++st_.runs_done;
    st_.last_finish = Clock::now();
    idle_since_ = Clock::now();
    run_.reset();
  }
  // Telemetry of one run, shaped like the real agent's: 10 Hz timestamps, per-core utilisation.
  void send_samples(int64_t run) {
    for (int64_t first = 0; first < o_.samples_per_run; first += o_.sample_chunk) {
      proto::SampleChunk c;
      c.run_id = run;
      c.t0_unix_s = proto::unix_now_s();
      const int64_t last = std::min(o_.samples_per_run, first + o_.sample_chunk);
      c.samples.reserve(static_cast<size_t>(last - first));
      for (int64_t i = first; i < last; ++i) {
        proto::Sample x;
        x.t_s = 0.1 * static_cast<double>(i);
        x.cpu_util_pct = 37.5 + static_cast<double>(i % 50);
        x.core_util_pct.assign(static_cast<size_t>(o_.sample_cores), 12.5 + static_cast<double>(i % 80));
        x.cpu_freq_mhz = 1190.4;
        x.mem_used_kb = 2'000'000 + i;
        x.disk_read_bytes = 4096 * (i % 7);
        x.power_w = 9.25 + 0.001 * static_cast<double>(i % 1000);
        c.samples.push_back(std::move(x));
      }
      send_result(std::move(c));
    }
  }
  void heartbeat() {
    hb_.expires_after(std::chrono::milliseconds(o_.heartbeat_ms));
    auto self = shared_from_this();
    hb_.async_wait([self](beast::error_code ec) {
      if (ec) return;
      self->send(proto::Envelope{0, proto::Heartbeat{self->run_ ? "running" : "idle", self->run_, {}, {}}});
      self->heartbeat();
    });
  }

  asio::io_context& ioc_;
  const Options& o_;
  Stats& st_;
  websocket::stream<beast::tcp_stream> ws_;
  asio::steady_timer hb_, run_timer_;
  beast::flat_buffer buf_;
  std::deque<std::string> queue_;
  std::string name_;
  uint64_t next_id_ = 1;
  uint64_t finish_id_ = 0;   // id of the run_finished awaiting its ack (samples mode, epoch streaming)
  uint64_t acked_ = 0;       // every message up to this id is acknowledged
  std::deque<uint64_t> epoch_ids_;   // ids of the epoch results sent and not yet acknowledged
  std::optional<int64_t> run_;       // the run being executed
  std::optional<jetsweep::bench::RunStream> stream_;   // its messages still to send (epoch streaming)
  Clock::time_point idle_since_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

// The JSON summary on stdout (one line).
void print_summary(const Options& o, const Stats& st) {
  auto seconds = [](const std::optional<Clock::time_point>& a, const std::optional<Clock::time_point>& b) {
    return a && b ? std::chrono::duration<double>(*b - *a).count() : 0.0;
  };
  auto per_s = [](int64_t n, double s) { return s > 0 ? static_cast<double>(n) / s : 0.0; };
  const double makespan = seconds(st.first_assign, st.last_finish);
  const double ingest = seconds(st.first_result, st.last_finish);
  const double ideal = o.runs > 0 && o.shape.epochs == 0 ? std::ceil(static_cast<double>(o.runs) / o.agents) * o.run_s : 0;
  std::cout << "{\"agents\":" << o.agents << ",\"registered\":" << st.registered << ",\"failed\":" << st.failed
            << ",\"runs_done\":" << st.runs_done << ",\"dispatch_p50_ms\":" << percentile(st.dispatch_ms, 0.5)
            << ",\"dispatch_p99_ms\":" << percentile(st.dispatch_ms, 0.99) << ",\"makespan_s\":" << makespan
            << ",\"ideal_makespan_s\":" << ideal << ",\"samples_acked\":" << st.samples_acked
            << ",\"samples_per_s\":" << per_s(st.samples_acked, makespan) << ",\"epochs_acked\":" << st.epochs_acked
            << ",\"minibatches_sent\":" << st.minibatches_sent << ",\"samples_sent\":" << st.samples_sent
            << ",\"messages_sent\":" << st.messages_sent << ",\"ingest_s\":" << ingest
            << ",\"minibatches_per_s\":" << per_s(st.minibatches_sent, ingest)
            << ",\"messages_per_s\":" << per_s(st.messages_sent, ingest) << ",\"errors\":" << st.errors << "}"
            << std::endl;
}

// The options from the command line (CLI11, generated --help); exits 2 on bad input, 0 after --help.
Options parse_options(int argc, char** argv) {
  Options o;
  std::string url;
  CLI::App app("Simulated agents against a real controller: dispatch latency, makespan and end-to-end ingestion "
               "(docs/PERFORMANCE.md).",
               "bench_load_agents");
  app.add_option("--controller", url, "the controller's agent endpoint (required)")->type_name("ws://HOST:PORT");
  app.add_option("--agents", o.agents, "connections to hold")->type_name("N");
  app.add_option("--run-s", o.run_s, "seconds each assigned run takes")->type_name("S");
  app.add_option("--runs", o.runs, "stop once this many runs are done (0: hold --hold-s after registering)")->type_name("M");
  app.add_option("--hold-s", o.hold_s, "seconds to hold the connections when --runs is 0")->type_name("S");
  app.add_option("--heartbeat-ms", o.heartbeat_ms, "heartbeat interval")->type_name("N");
  app.add_option("--connect-batch", o.connect_batch, "connections opening at once")->type_name("N");
  app.add_option("--secret", o.secret, "the enroll secret")->type_name("S");
  app.add_option("--name-prefix", o.name_prefix, "agent names are PREFIX0, PREFIX1, ... (default load-; one load per "
                                                 "prefix and database: names enroll once)")->type_name("PREFIX");
  app.add_option("--samples-per-run", o.samples_per_run, "telemetry samples each run streams")->type_name("N");
  app.add_option("--sample-chunk", o.sample_chunk, "samples per chunk")->type_name("N")->check(CLI::PositiveNumber);
  app.add_option("--sample-cores", o.sample_cores, "per-core values in each sample")->type_name("N")->check(CLI::NonNegativeNumber);
  auto& s = o.shape;
  app.add_option("--epochs", s.epochs, "epoch streaming: epochs each run streams (0: off; --run-s is then unused)")
      ->type_name("N")->check(CLI::NonNegativeNumber);
  app.add_option("--minibatches-per-epoch", s.minibatches, "epoch streaming: minibatch times per epoch (default 469)")
      ->type_name("M")->check(CLI::PositiveNumber);
  app.add_option("--samples-per-epoch", s.samples, "epoch streaming: telemetry samples per epoch (default 66)")
      ->type_name("S")->check(CLI::NonNegativeNumber);
  app.add_option("--minibatch-chunk", s.minibatch_chunk, "epoch streaming: minibatches per message (default 4096)")
      ->type_name("C")->check(CLI::Range(int64_t{1}, static_cast<int64_t>(proto::kMaxMinibatchesPerChunk)));
  app.add_option("--window", o.window, "epoch streaming: unacknowledged messages per agent (default 64)")
      ->type_name("N")->check(CLI::PositiveNumber);
  app.add_option("--max-s", o.max_s, "give up after this many seconds (default 3600)")->type_name("S")
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);   // help: 0; bad input: 2 (as every jetsweep binary)
  }
  if (url.rfind("ws://", 0) != 0 || url.find(':', 5) == std::string::npos) {
    std::cerr << "--controller ws://HOST:PORT is required\n";
    std::exit(2);
  }
  if (o.shape.epochs > 0 && o.samples_per_run > 0) {
    std::cerr << "--epochs and --samples-per-run are two modes: give one\n";
    std::exit(2);
  }
  if (o.shape.epochs > 0 && o.sample_chunk > static_cast<int64_t>(proto::kMaxSamplesPerChunk)) {
    std::cerr << "--sample-chunk is at most " << proto::kMaxSamplesPerChunk << " with --epochs\n";
    std::exit(2);
  }
  o.shape.sample_chunk = o.sample_chunk;
  o.shape.sample_cores = o.sample_cores;
  o.host = url.substr(5, url.find(':', 5) - 5);
  o.port = url.substr(url.find(':', 5) + 1);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  asio::io_context ioc(1);
  Stats st;
  auto endpoints = tcp::resolver(ioc).resolve(o.host, o.port);
  std::vector<std::shared_ptr<LoadAgent>> agents;
  int launched = 0;
  // Connect in batches so the listen backlog is not overrun.
  std::function<void()> launch_more = [&] {
    while (launched < o.agents && st.connecting < o.connect_batch) {
      auto a = std::make_shared<LoadAgent>(ioc, o, st, launched++);
      agents.push_back(a);
      a->start(endpoints, [&] { asio::post(ioc, launch_more); });
    }
  };
  launch_more();
  const auto start = Clock::now();
  asio::steady_timer tick(ioc);
  std::optional<Clock::time_point> all_registered;
  std::function<void()> check = [&] {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (!all_registered && st.registered + st.failed >= o.agents) {
      all_registered = Clock::now();
      std::cerr << "registered " << st.registered << " agents (" << st.failed << " failed) in " << elapsed << " s\n";
    }
    const bool done = o.runs > 0 ? st.runs_done >= o.runs
                                 : all_registered && std::chrono::duration<double>(Clock::now() - *all_registered).count() >= o.hold_s;
    if (done || elapsed > o.max_s) return ioc.stop();
    tick.expires_after(std::chrono::milliseconds(100));
    tick.async_wait([&](beast::error_code) { check(); });
  };
  check();
  ioc.run();
  print_summary(o, st);
  const bool all_runs = st.runs_done >= o.runs;   // else --max-s ran out
  if (!all_runs) std::cerr << "gave up after --max-s " << o.max_s << " s: " << st.runs_done << " of " << o.runs << " runs done\n";
  return st.registered == o.agents && all_runs ? 0 : 1;
}

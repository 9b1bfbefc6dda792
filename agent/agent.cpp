#include "agent/agent.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <iterator>
#include <utility>

#include "agent/credential_file.hpp"
#include "agent/device/service_control.hpp"
#include "common/log.hpp"
#include "net/tls.hpp"
#include "net/ws_stream.hpp"

namespace jetsweep::agent {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace http = beast::http;
using tcp = asio::ip::tcp;

const char* state_name(AgentState s) {
  static constexpr const char* kNames[] = {"disconnected", "connecting", "registering", "idle",
                                           "running",      "rebooting",  "draining",    "stopped"};
  const auto i = static_cast<size_t>(s);
  return i < std::size(kNames) ? kNames[i] : "?";
}

// One WebSocket connection attempt; callbacks check they still belong to the current connection.
struct Agent::Connection {
  Connection(asio::io_context& ioc, asio::ssl::context* tls)
      : resolver(ioc), ws(tls ? net::WsStream(ioc, *tls) : net::WsStream(ioc)) {}
  tcp::resolver resolver;
  net::WsStream ws;   // ws:// or wss://
  beast::flat_buffer buffer;
  websocket::response_type upgrade_response;   // the controller's answer to the upgrade request
  bool open = false;
  bool registered = false;   // `registered` arrived on this connection: results may be sent
};

// Forwards results from the training thread to the io thread, in order. Sample chunks and run_started the
// executor left without a clock anchor (the sim backend, whose sample times are modelled and must stay
// deterministic) get the wall clock at which the run was started (and run_started that instant on the boot clock).
class Agent::PostingSink final : public ResultSink {
 public:
  PostingSink(std::shared_ptr<Agent> agent, Instant run_t0) : agent_(std::move(agent)), run_t0_(run_t0) {}
  void emit(proto::Body body) override {
    if (auto* c = std::get_if<proto::SampleChunk>(&body); c && !c->t0_unix_s) c->t0_unix_s = run_t0_.unix_s;
    if (auto* s = std::get_if<proto::RunStarted>(&body); s && s->t0_unix_s == 0)
      s->t0_unix_s = run_t0_.unix_s, s->boot_id = agent_->boot_id_, s->t0_boot_s = agent_->boot_stamp(run_t0_.boot_s);
    // The run may wait for room in the outbox between epochs (after an epoch's result, before the first), never in one.
    const bool between_epochs = std::holds_alternative<proto::EpochResult>(body) ||
                                std::holds_alternative<proto::RunStarted>(body);
    const int64_t run = proto::result_run_id(body).value_or(0);
    if (auto* e = std::get_if<proto::EpochResult>(&body)) e->paused_before_s = std::exchange(paused_s_, 0.0);
    agent_->outbox_.gate().posted();
    asio::post(agent_->ioc_, [a = agent_, b = std::move(body)]() mutable { a->enqueue_result(std::move(b), true); });
    if (between_epochs) paused_s_ += agent_->outbox_.gate().pause_between_epochs(agent_->options_.name, run, agent_->cancel_);
  }

 private:
  std::shared_ptr<Agent> agent_;
  Instant run_t0_;
  double paused_s_ = 0;   // waited since the last epoch's result (or run_started): the next epoch's paused_before_s
};

Agent::Agent(asio::io_context& ioc, AgentOptions options)
    : ioc_(ioc),
      options_(std::move(options)),
      reconnect_timer_(ioc), heartbeat_timer_(ioc), drain_timer_(ioc), idle_timer_(ioc), reboot_timer_(ioc),
      backoff_(options_.backoff_initial),
      rng_(std::random_device{}()),
      credential_(options_.credential),
      // Messages left unacknowledged by a previous process are the outbox, replayed after registration.
      outbox_(options_.journal, options_.outbox, ioc.get_executor(), options_.name),
      executor_(options_.executor ? options_.executor : std::make_shared<RunExecutor>(options_.root)) {
  if (options_.resume_after_reboot) {
    // Back from a reboot for this run: the controller kept it (and the board) for this agent.
    pending_reboot_ = options_.resume_after_reboot;
    resume_pending_ = true;
    current_run_ = pending_reboot_->run_id;
  }
}

Agent::~Agent() {
  cancel_ = true;
  if (training_thread_.joinable()) training_thread_.join();
}

void Agent::set_state(AgentState s) {
  if (s == state_) return;
  JS_LOG_INFO << "agent " << options_.name << ": " << state_name(state_) << " -> " << state_name(s);
  state_ = s;
}

void Agent::start() {
  if (!executor_->has_power_sensor())
    JS_LOG_WARN << "agent " << options_.name << ": no power sensor readable; energy will be reported as null";
  model_fetcher_ = std::make_shared<ControllerModelFetcher>([w = weak_from_this(), &ioc = ioc_](proto::FetchModel m) {
    asio::post(ioc, [w, m = std::move(m)] { if (auto self = w.lock()) self->send_now(m); });
  });
  executor_->set_model_source(model_fetcher_);
  // A result written (or read back) by the journal thread: the write loop may go on.
  outbox_.on_ready([w = weak_from_this()] {
    auto self = w.lock();
    if (!self) return;
    if (!self->writing_) self->write_next();
    self->maybe_finish_drain();   // a lost record passed over may have emptied the outbox
  });
  connect();
}

void Agent::connect() {
  if (shutting_down_) return;
  set_state(AgentState::kConnecting);
  auto c = std::make_shared<Connection>(ioc_, options_.tls.get());
  conn_ = c;
  auto self = shared_from_this();
  c->resolver.async_resolve(options_.host, options_.port, [self, c](beast::error_code ec, tcp::resolver::results_type r) {
    if (ec) return self->conn_ == c ? self->drop_connection("resolve: " + ec.message()) : void();
    if (self->conn_ != c) return;
    c->ws.tcp().expires_after(std::chrono::seconds(10));
    c->ws.tcp().async_connect(r, [self, c](beast::error_code ec, const tcp::endpoint&) {
      if (self->conn_ != c) return;
      if (ec) return self->drop_connection("connect: " + ec.message());
      if (c->ws.is_tls()) return self->tls_handshake(c);
      c->ws.tcp().expires_never();
      self->ws_handshake(c);
    });
  });
}

// wss://: SNI (for a host name), the controller's certificate checked against the CA and the host name.
void Agent::tls_handshake(std::shared_ptr<Connection> c) {
  auto& tls = c->ws.tls_layer();
  boost::system::error_code not_an_address;
  (void)asio::ip::make_address(options_.host, not_an_address);   // SNI carries host names only
  if (not_an_address) SSL_set_tlsext_host_name(tls.native_handle(), options_.host.c_str());
  tls.set_verify_callback(asio::ssl::host_name_verification(options_.host));
  auto self = shared_from_this();
  tls.async_handshake(asio::ssl::stream_base::client, [self, c](beast::error_code ec) {
    if (self->conn_ != c) return;
    if (ec) {
      JS_LOG_ERROR << "agent " << self->options_.name << ": TLS handshake with controller " << self->options_.host << ":"
                   << self->options_.port << " failed: " << net::describe_tls_failure(ec, self->options_.ca_file)
                   << "; retrying";
      return self->drop_connection("TLS handshake failed");
    }
    c->ws.tcp().expires_never();
    self->ws_handshake(c);
  });
}

void Agent::ws_handshake(std::shared_ptr<Connection> c) {
  auto self = shared_from_this();
  c->ws.set_option(websocket::stream_base::timeout{std::chrono::seconds(10), websocket::stream_base::none(), false});
  c->ws.read_message_max(proto::kMaxFrameBytes);
  // The enrollment secret (when given) and, once enrolled, the credential, which admits this agent without it.
  c->ws.set_option(websocket::stream_base::decorator(
      [secret = self->options_.enroll_secret, credential = self->credential_](websocket::request_type& req) {
        if (!secret.empty()) req.set(http::field::authorization, "Bearer " + secret);
        if (credential) req.set(proto::kCredentialHeader, *credential);
      }));
  const std::string host = self->options_.host + ":" + self->options_.port;
  c->ws.async_handshake(c->upgrade_response, host, self->options_.target, [self, c](beast::error_code ec) {
    if (self->conn_ != c) return;
    if (ec == websocket::error::upgrade_declined && c->upgrade_response.result() == http::status::unauthorized) {
      JS_LOG_ERROR << "agent " << self->options_.name << ": controller refused the enrollment secret (HTTP 401 from "
                   << self->options_.host << ":" << self->options_.port << self->options_.target << "; "
                   << (self->options_.enroll_secret.empty() ? "none was given: pass --enroll-secret or set "
                                                              "JETSWEEP_ENROLL_SECRET"
                                                            : "check --enroll-secret / JETSWEEP_ENROLL_SECRET")
                   << "); retrying";
      return self->drop_connection("enrollment secret refused");
    }
    if (ec)
      return self->drop_connection("websocket handshake: " + ec.message() +
                                   (ec == websocket::error::upgrade_declined
                                        ? " (HTTP " + std::to_string(c->upgrade_response.result_int()) + ": " +
                                              c->upgrade_response.body().substr(0, 300) + ")"
                                        : std::string()));
    self->on_connected(c);
  });
}

void Agent::on_connected(std::shared_ptr<Connection> c) {
  c->open = true;
  last_rx_ = std::chrono::steady_clock::now();
  set_state(AgentState::kRegistering);
  proto::Register reg;
  reg.name = options_.name;
  reg.facts = options_.facts;
  reg.current_run = current_run_;
  reg.credential = credential_;
  reg.journal_runs = outbox_.runs();   // journaled or (--no-journal) held in memory
  send_now(reg);
  read_next(c);
}

void Agent::read_next(std::shared_ptr<Connection> c) {
  auto self = shared_from_this();
  c->ws.async_read(c->buffer, [self, c](beast::error_code ec, std::size_t) {
    if (self->conn_ != c) return;
    if (ec) return self->drop_connection("read: " + ec.message());
    const Instant rx{proto::unix_now_s(), proto::boot_now_s()};   // before decoding: TimeSyncReply.t1, t1_boot
    std::string frame = beast::buffers_to_string(c->buffer.data());
    c->buffer.consume(c->buffer.size());
    self->last_rx_ = std::chrono::steady_clock::now();
    self->on_frame(c, frame, rx);
    if (self->conn_ == c && c->open) self->read_next(c);
  });
}

void Agent::on_frame(std::shared_ptr<Connection> c, const std::string& frame, Instant rx) {
  auto env = proto::decode(frame);
  if (!env) {
    JS_LOG_WARN << "agent " << options_.name << ": rejected frame from controller: " << env.status().message();
    send_now(proto::Error{"protocol_error", env.status().message(), std::nullopt});
    return;
  }
  handle(c, env.value(), rx);
}

void Agent::handle(std::shared_ptr<Connection> c, const proto::Envelope& env, Instant rx) {
  if (const auto* m = std::get_if<proto::Registered>(&env.body)) {
    if (m->credential) keep_credential(*m->credential);
    agent_id_ = m->agent_id;
    heartbeat_interval_ = std::chrono::milliseconds(m->heartbeat_interval_ms);
    backoff_ = options_.backoff_initial;
    JS_LOG_INFO << "agent " << options_.name << ": registered as agent " << agent_id_ << ", resending "
                << outbox_.size() << " unacknowledged result messages (" << outbox_.bytes() << " bytes)";
    set_state(shutting_down_ ? AgentState::kDraining : awaiting_reboot_ ? AgentState::kRebooting
              : current_run_ ? AgentState::kRunning : AgentState::kIdle);
    c->registered = true;
    outbox_.restart_sending();
    if (!writing_) write_next();
    start_heartbeat();
    maybe_finish_drain();
    if (resume_pending_ && !shutting_down_) {
      resume_pending_ = false;
      JS_LOG_INFO << "agent " << options_.name << ": back from the reboot for run " << pending_reboot_->run_id
                  << " (nvpmodel mode " << pending_reboot_->announced.mode_name << "); checking the GPU masks";
      start_run(proto::AssignRun{pending_reboot_->run_id, pending_reboot_->config});
    }
  } else if (const auto* m = std::get_if<proto::AssignRun>(&env.body)) {
    if (!c->registered) {
      send_now(proto::Error{"protocol_error", "assign_run before registered", env.id});
    } else if (current_run_ || shutting_down_) {
      JS_LOG_WARN << "agent " << options_.name << ": refusing run " << m->run_id << " (busy or shutting down)";
      send_now(proto::Error{"busy", "agent is busy with run " + std::to_string(current_run_.value_or(0)), env.id});
    } else {
      start_run(*m);
    }
  } else if (const auto* m = std::get_if<proto::CancelRun>(&env.body)) {
    if (current_run_ == m->run_id) {
      JS_LOG_INFO << "agent " << options_.name << ": cancelling run " << m->run_id << " at the controller's request ("
                  << m->reason << ")";
      cancel_ = true;
      // Waiting for the controller to record its reboot: nothing ran yet, the run ends here.
      if (awaiting_reboot_ && !reboot_commands_started_)
        fail_reboot(m->run_id, "cancelled before the reboot (" + m->reason + ")", "cancelled");
    } else {
      JS_LOG_INFO << "agent " << options_.name << ": cancel of run " << m->run_id << " ignored (not running it)";
    }
  } else if (const auto* m = std::get_if<proto::Ack>(&env.body)) {
    outbox_.ack(m->up_to);   // a journal error is logged by the outbox
    if (awaiting_reboot_ && !reboot_commands_started_ && m->up_to >= reboot_announce_id_)
      run_reboot_commands();
    if (!writing_) write_next();   // the window moved
    maybe_finish_drain();
  } else if (const auto* m = std::get_if<proto::TimeSync>(&env.body)) {
    // Control path, not journaled: a stale clock probe is worthless after a reconnect. The boot clock too, if known.
    send_now(proto::TimeSyncReply{m->t0, rx.unix_s, proto::unix_now_s(), boot_id_, boot_stamp(rx.boot_s),
                                  boot_stamp(proto::boot_now_s())});
  } else if (const auto* m = std::get_if<proto::ModelChunk>(&env.body)) {
    model_fetcher_->deliver(*m);   // to the training thread, which asked for it
  } else if (std::holds_alternative<proto::Heartbeat>(env.body)) {
    // last_rx_ already updated.
  } else if (const auto* m = std::get_if<proto::Error>(&env.body)) {
    if (m->code == "credential_refused")
      JS_LOG_ERROR << "agent " << options_.name << ": the controller refused this agent's registration: " << m->message
                   << (options_.credential_file.empty() ? "" : " (credential file: " + options_.credential_file + ")")
                   << "; retrying";
    else
      JS_LOG_WARN << "agent " << options_.name << ": controller reported " << m->code << ": " << m->message;
  } else {
    JS_LOG_WARN << "agent " << options_.name << ": unexpected message '" << proto::type_name(env.body)
                << "' from controller";
    send_now(proto::Error{"protocol_error", "unexpected message type '" + std::string(proto::type_name(env.body)) + "'",
                          env.id});
  }
}

void Agent::keep_credential(const std::string& credential) {
  credential_ = credential;
  keep_enrolled_credential(options_.credential_file, credential, options_.name);
}

void Agent::drop_connection(const std::string& why) {
  if (!conn_) return;
  auto c = conn_;
  conn_.reset();
  writing_ = false;
  control_queue_.clear();
  outbox_.restart_sending();
  heartbeat_timer_.cancel();
  if (c->open) {
    c->open = false;
    beast::error_code ignored;
    c->ws.socket().shutdown(tcp::socket::shutdown_both, ignored);
    c->ws.socket().close(ignored);
  }
  if (shutting_down_ && state_ == AgentState::kStopped) return;
  JS_LOG_WARN << "agent " << options_.name << ": connection lost (" << why << "); " << outbox_.size()
              << " result messages kept for resend";
  set_state(AgentState::kDisconnected);
  if (shutting_down_ && !current_run_) return stop_now();
  schedule_reconnect();
}

void Agent::schedule_reconnect() {
  // Capped exponential backoff with full jitter.
  std::uniform_int_distribution<int64_t> jitter(backoff_.count() / 2, backoff_.count());
  auto wait = std::chrono::milliseconds(jitter(rng_));
  backoff_ = std::min(options_.backoff_max, backoff_ * 2);
  JS_LOG_INFO << "agent " << options_.name << ": reconnecting in " << wait.count() << " ms";
  reconnect_timer_.expires_after(wait);
  auto self = shared_from_this();
  reconnect_timer_.async_wait([self](beast::error_code ec) {
    if (ec) return;  // cancelled
    self->connect();
  });
}

void Agent::send_now(proto::Body body) {
  if (!conn_ || !conn_->open) return;
  control_queue_.push_back(proto::encode(proto::Envelope{0, std::move(body)}));
  if (!writing_) write_next();
}

void Agent::enqueue_result(proto::Body body, bool from_producer) {
  outbox_.add(std::move(body), from_producer);   // a journal error is logged by the outbox
  if (!writing_) write_next();
}

bool Agent::sending_results() const { return conn_ && conn_->open && conn_->registered; }   // never before Registered

void Agent::write_next() {
  writing_ = false;
  if (!conn_ || !conn_->open) return;
  if (!control_queue_.empty()) {
    writing_frame_ = std::make_shared<const std::string>(std::move(control_queue_.front()));
    control_queue_.pop_front();
  } else if (sending_results()) {
    auto next = outbox_.next_to_send();
    if (!next) return drop_connection("reading a result back from the journal: " + next.status().to_string());
    // The window is full (an ack reopens it), everything is sent, or the next is on the journal thread (on_ready).
    if (!next->has_value()) return;
    writing_frame_ = std::move(**next);
  } else {
    return;
  }
  writing_ = true;
  auto c = conn_;
  auto self = shared_from_this();
  c->ws.text(true);
  c->ws.async_write(asio::buffer(*writing_frame_), [self, c](beast::error_code ec, std::size_t) {
    if (self->conn_ != c) return;
    if (ec) return self->drop_connection("write: " + ec.message());
    self->write_next();
  });
}

void Agent::start_heartbeat() {
  heartbeat_timer_.expires_after(heartbeat_interval_);
  auto self = shared_from_this();
  auto c = conn_;
  heartbeat_timer_.async_wait([self, c](beast::error_code ec) {
    if (ec || self->conn_ != c) return;
    const auto silent = std::chrono::steady_clock::now() - self->last_rx_;
    if (silent > self->heartbeat_interval_ * 5 + std::chrono::seconds(2))
      return self->drop_connection("no message from the controller for " +
                                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(silent).count()) +
                                   " ms");
    self->send_now(self->outbox_.heartbeat(state_name(self->state_), self->current_run_));
    self->start_heartbeat();
  });
}

void Agent::start_run(const proto::AssignRun& assign) {
  if (training_thread_.joinable()) training_thread_.join();
  current_run_ = assign.run_id;
  cancel_ = false;
  set_state(AgentState::kRunning);
  JS_LOG_INFO << "agent " << options_.name << ": starting run " << assign.run_id << " (" << assign.config.model << "/"
              << assign.config.dataset << " bs " << assign.config.batch_size << " w " << assign.config.workers << ")";
  idle_timer_.cancel();
  auto self = shared_from_this();
  // Whether the run's masks are checked first: the agent may reboot, or it rebooted for this run.
  const bool check_masks = options_.reboot.allowed || (pending_reboot_ && pending_reboot_->run_id == assign.run_id);
  training_thread_ = std::thread([self, assign, check_masks, t0 = Instant{proto::unix_now_s(), proto::boot_now_s()}] {
    PostingSink sink(self, t0);
    if (check_masks) {
      // A mode whose GPU masks are not the booted ones: the reboot flow (an error here is left for execute()
      // below, whose prepare() reads the same files and fails the run naming them).
      auto need = self->executor_->reboot_for(assign.config);
      if (need.is_ok() && need->has_value())
        return asio::post(self->ioc_, [self, assign, n = **need] { self->on_reboot_needed(assign, n); });
      if (need.is_ok()) asio::post(self->ioc_, [self, id = assign.run_id] { self->on_reboot_verified(id); });
    }
    self->executor_->execute(assign.run_id, assign.config, sink, self->cancel_);
    asio::post(self->ioc_, [self, id = assign.run_id] { self->on_run_finished(id); });
  });
}

void Agent::on_reboot_needed(const proto::AssignRun& assign, proto::RebootPending need) {
  const std::string what = "nvpmodel mode " + need.mode_name + " (`nvpmodel -m " + std::to_string(need.nvpmodel_id) +
                           "`: " + describe_mask_change(need) + ")";
  const bool again = pending_reboot_ && pending_reboot_->run_id == assign.run_id;
  if (again && pending_reboot_->commands_started)
    return fail_reboot(assign.run_id, "after the reboot for " + what + " the board still runs with other GPU masks: "
                                      "nvpmodel did not apply the mode at boot (check nvpmodel.service, "
                                      "/var/lib/nvpmodel/status and /etc/nvpmodel.conf)");
  if (!options_.reboot.allowed)   // announced by an earlier start that had --allow-reboot
    return fail_reboot(assign.run_id, what + " needs a reboot, and this agent was started without --allow-reboot");
  if (shutting_down_ || cancel_) return fail_reboot(assign.run_id, "agent stopped before rebooting for " + what, "cancelled");
  need.run_id = assign.run_id;
  need.expected_back_s = static_cast<double>(options_.reboot.expected_back.count());
  need.requested_unix_s = proto::unix_now_s();
  // Stopped before its commands ran last time: the same reboot, announced again (the controller records it once).
  if (again) need = pending_reboot_->announced;
  PendingReboot pending{assign.run_id, assign.config, need, false};
  if (Status s = save_pending_reboot(options_.reboot.pending_file, pending); !s.is_ok())
    return fail_reboot(assign.run_id, what + " needs a reboot, but " + s.to_string());
  pending_reboot_ = pending;
  reboot_commands_started_ = false;
  awaiting_reboot_ = true;
  set_state(AgentState::kRebooting);
  JS_LOG_INFO << "agent " << options_.name << ": run " << assign.run_id << " needs " << what
              << "; rebooting the board once the controller has recorded it (back expected within "
              << options_.reboot.expected_back.count() << " s)";
  reboot_announce_id_ = outbox_.next_id();
  enqueue_result(need);
}

void Agent::run_reboot_commands() {
  reboot_commands_started_ = true;
  if (training_thread_.joinable()) training_thread_.join();   // it only checked the masks
  const int64_t run = pending_reboot_->run_id;
  if (cancel_ || shutting_down_) return fail_reboot(run, "cancelled before the reboot", "cancelled");
  pending_reboot_->commands_started = true;
  if (Status s = save_pending_reboot(options_.reboot.pending_file, *pending_reboot_); !s.is_ok())
    return fail_reboot(run, "cannot reboot for nvpmodel mode " + pending_reboot_->announced.mode_name + ": " + s.to_string());
  auto self = shared_from_this();
  training_thread_ = std::thread([self, opts = options_.reboot, announced = pending_reboot_->announced] {
    Result<bool> back = self->executor_->reboot_into(opts, announced, self->cancel_);
    asio::post(self->ioc_, [self, back] { self->on_reboot_commands_done(back); });
  });
}

void Agent::on_reboot_commands_done(const Result<bool>& back) {
  // Stopped mid-reboot (a modelled one returns cancelled): the pending file stays for the next start to resume.
  if (!pending_reboot_ || !awaiting_reboot_ || (shutting_down_ && !back)) return;
  const int64_t run = pending_reboot_->run_id;
  if (!back) return fail_reboot(run, "rebooting the board for nvpmodel mode " + pending_reboot_->announced.mode_name +
                                         " failed: " + back.status().message(),
                                back.status().code() == Code::kCancelled ? "cancelled" : "failed");
  if (*back) {   // a modelled reboot (sim): on as an agent that restarted (reconnect, register, resume the run)
    awaiting_reboot_ = false;
    resume_pending_ = true;
    executor_->describe(options_.facts);   // the board's new live modes
    return drop_connection("the board rebooted into nvpmodel mode " + pending_reboot_->announced.mode_name);
  }
  JS_LOG_INFO << "agent " << options_.name << ": reboot for run " << run << " requested; waiting to be taken down";
  reboot_timer_.expires_after(options_.reboot.expected_back);
  auto self = shared_from_this();
  reboot_timer_.async_wait([self, run](beast::error_code ec) {
    if (ec || !self->pending_reboot_ || !self->awaiting_reboot_) return;
    self->fail_reboot(run, "the board did not reboot within " + std::to_string(self->options_.reboot.expected_back.count()) +
                               " s of `" + device::command_line(self->options_.reboot.reboot_command) +
                               "` (check --reboot-command and the agent's permission to reboot)");
  });
}

void Agent::on_reboot_verified(int64_t run_id) {
  if (!pending_reboot_ || pending_reboot_->run_id != run_id) return;
  JS_LOG_INFO << "agent " << options_.name << ": run " << run_id << ": the board came back in nvpmodel mode "
              << pending_reboot_->announced.mode_name << " with its GPU masks (" << describe_mask_change(pending_reboot_->announced)
              << ")";
  if (Status s = clear_pending_reboot(options_.reboot.pending_file); !s.is_ok())
    JS_LOG_ERROR << "agent " << options_.name << ": " << s.to_string();
  pending_reboot_.reset();
}

void Agent::fail_reboot(int64_t run_id, const std::string& why, const char* status) {
  JS_LOG_ERROR << "agent " << options_.name << ": run " << run_id << " " << status << ": " << why;
  reboot_timer_.cancel();
  if (Status s = clear_pending_reboot(options_.reboot.pending_file); !s.is_ok())
    JS_LOG_ERROR << "agent " << options_.name << ": " << s.to_string();
  pending_reboot_.reset();
  enqueue_result(proto::RunFinished{run_id, status, why, 0});
  awaiting_reboot_ = false;
  if (state_ == AgentState::kRebooting) set_state(AgentState::kRunning);
  on_run_finished(run_id);
}

void Agent::on_run_finished(int64_t run_id) {
  if (training_thread_.joinable()) training_thread_.join();
  current_run_.reset();
  if (pending_reboot_ && pending_reboot_->run_id == run_id) {
    // Resumed after its reboot and ended (its masks could not even be read): nothing to resume any more.
    if (Status s = clear_pending_reboot(options_.reboot.pending_file); !s.is_ok())
      JS_LOG_ERROR << "agent " << options_.name << ": " << s.to_string();
    pending_reboot_.reset();
  }
  JS_LOG_INFO << "agent " << options_.name << ": run " << run_id << " finished";
  if (shutting_down_) {
    set_state(AgentState::kDraining);
    maybe_finish_drain();
    if (!conn_) stop_now();
  } else if (state_ == AgentState::kRunning) {
    set_state(AgentState::kIdle);
    send_now(outbox_.heartbeat("idle", std::nullopt));
  }
  schedule_idle_restore();
}

void Agent::schedule_idle_restore() {
  if (shutting_down_ || options_.idle_restore.count() <= 0 || !executor_->board_modified()) return;
  idle_timer_.expires_after(options_.idle_restore);
  auto self = shared_from_this();
  idle_timer_.async_wait([self](beast::error_code ec) {
    // A new run cancels the timer; the training thread is joined whenever current_run_ is empty.
    if (ec || self->current_run_ || self->shutting_down_) return;
    JS_LOG_INFO << "agent " << self->options_.name << ": idle for "
                << std::chrono::duration_cast<std::chrono::seconds>(self->options_.idle_restore).count()
                << " s, restoring the board";
    Status s = self->executor_->restore_board();
    if (!s.is_ok()) JS_LOG_ERROR << "agent " << self->options_.name << ": " << s.to_string();
  });
}

Status Agent::release_board() {
  cancel_ = true;
  idle_timer_.cancel();
  if (training_thread_.joinable()) training_thread_.join();
  if (!executor_->board_modified()) return Status::ok();
  JS_LOG_INFO << "agent " << options_.name << ": restoring the board before exit";
  return executor_->restore_board();
}

void Agent::shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  JS_LOG_INFO << "agent " << options_.name << ": shutting down (" << outbox_.size() << " unacknowledged messages"
              << (current_run_ ? ", cancelling run " + std::to_string(*current_run_) : std::string()) << ")";
  cancel_ = true;
  reconnect_timer_.cancel();
  // Taken down for its reboot: the run waits in the pending-reboot file for the agent that comes back.
  if (awaiting_reboot_) current_run_.reset();
  if (!conn_ || !conn_->open) {
    if (!current_run_) stop_now();
    return;
  }
  if (!current_run_) set_state(AgentState::kDraining);
  drain_timer_.expires_after(options_.drain_timeout);
  auto self = shared_from_this();
  drain_timer_.async_wait([self](beast::error_code ec) {
    if (ec) return;
    JS_LOG_WARN << "agent " << self->options_.name << ": drain timed out with " << self->outbox_.size()
                << " unacknowledged messages";
    self->stop_now();
  });
  maybe_finish_drain();
}

void Agent::maybe_finish_drain() {
  if (shutting_down_ && !current_run_ && outbox_.empty() && state_ != AgentState::kStopped) stop_now();
}

void Agent::stop_now() {
  if (state_ == AgentState::kStopped) return;
  set_state(AgentState::kStopped);
  drain_timer_.cancel();
  heartbeat_timer_.cancel();
  reconnect_timer_.cancel();
  idle_timer_.cancel();
  reboot_timer_.cancel();
  cancel_ = true;
  if (conn_ && conn_->open) {
    auto c = conn_;
    conn_.reset();
    c->open = false;
    c->ws.async_close(websocket::close_code::normal, [c](beast::error_code) {});
  }
}

}  // namespace jetsweep::agent

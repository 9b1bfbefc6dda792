#include "controller/agent_session.hpp"

#include <cmath>

#include "common/log.hpp"
#include "controller/client_error.hpp"
#include "controller/credentials.hpp"
#include "controller/io_thread.hpp"

namespace jetsweep::controller {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

namespace {
// Rejected frames a connection may send in all before it is closed (never reset: a valid frame in between does
// not buy more).
constexpr int kMaxBadFrames = 20;
}

AgentSession::AgentSession(net::WsStream&& ws, std::shared_ptr<Controller> controller)
    : ws_(std::move(ws)), controller_(std::move(controller)), heartbeat_timer_(ws_.get_executor()) {
  beast::error_code ec;
  auto ep = ws_.socket().remote_endpoint(ec);
  peer_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
}

void AgentSession::check_io_thread(const char* where) { check_io_thread_of(ws_.get_executor(), where); }

void AgentSession::run(HttpRequest req) {
  check_io_thread("AgentSession::run");
  // Admitted by the enrollment secret (or none is set): it may enroll a name; admitted by a credential header only:
  // it may only register a name enrolled with that credential (Store::register_agent).
  may_enroll_ = authorized(req[beast::http::field::authorization], controller_->options().enroll_secret);
  ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  // Frames a little over the protocol limit still reach decode() and get an error message back;
  // anything far larger is refused by the WebSocket layer itself (and logged on the read error).
  ws_.read_message_max(proto::kMaxFrameBytes * 2);
  ws_.set_option(websocket::stream_base::decorator(
      [](websocket::response_type& res) { res.set(beast::http::field::server, "jetsweep-controller"); }));
  auto self = shared_from_this();
  ws_.async_accept(req, [self](beast::error_code ec) {
    self->check_io_thread("AgentSession accept handler");
    if (ec) {
      JS_LOG_WARN << "agent connection from " << self->peer_ << ": websocket accept failed: " << ec.message();
      return;
    }
    self->open_ = true;
    self->last_rx_ = std::chrono::steady_clock::now();
    JS_LOG_INFO << "agent connection from " << self->peer_ << " accepted";
    self->read_next();
  });
}

bool AgentSession::paused_for_ingest() const {
  // An open session stops reading only for backpressure (read_next), and then waits for a completion: its own, or,
  // under the budget, any connection's, however long the database takes.
  return open_ && !reading_;
}

void AgentSession::read_next() {
  if (!open_ || reading_) return;
  const bool over_count = in_flight_ >= controller_->options().max_ingest_in_flight;
  if (over_count || !controller_->ingest_budget().may_read(in_flight_bytes_)) {
    // Backpressure: reading resumes on ingest_done (ours, or, for the budget, any connection's). Frames behind
    // (heartbeats, probe replies) wait in the socket, so the outstanding probe's round trip now measures the database.
    clock_.reading_paused();
    if (!over_count && !queued_for_budget_) {
      queued_for_budget_ = true;   // one place in the queue at a time
      std::weak_ptr<AgentSession> weak = shared_from_this();
      controller_->ingest_budget().wait([weak] {
        if (auto self = weak.lock()) {
          self->queued_for_budget_ = false;
          self->read_next();   // nothing when it reads already or closed
        }
      });
    }
    return;
  }
  reading_ = true;
  auto self = shared_from_this();
  ws_.async_read(buffer_, [self](beast::error_code ec, std::size_t) {
    self->check_io_thread("AgentSession read handler");
    self->reading_ = false;
    if (ec) {
      if (ec != websocket::error::closed && ec != asio::error::operation_aborted)
        JS_LOG_WARN << "agent " << self->agent_id_ << " (" << self->name_ << ", " << self->peer_
                    << "): read failed: " << ec.message();
      return self->close("read: " + ec.message());
    }
    std::string frame = beast::buffers_to_string(self->buffer_.data());
    self->buffer_.consume(self->buffer_.size());
    self->last_rx_ = std::chrono::steady_clock::now();
    self->on_frame(std::move(frame));
    self->read_next();
  });
}

void AgentSession::reject(const std::string& code, const std::string& message, std::optional<uint64_t> ref) {
  int64_t held_back = 0;
  if (rejections_logged_.allow(std::chrono::steady_clock::now(), held_back))
    JS_LOG_WARN << "agent " << agent_id_ << " (" << (name_.empty() ? "unregistered" : name_) << ", " << peer_
                << "): rejected frame " << bad_frames_ + 1 << ": " << log::excerpt(message)
                << (held_back ? " (" + std::to_string(held_back) + " rejections not logged before this one)" : "");
  send(proto::Error{code, log::excerpt(message, 1024), ref});
  if (++bad_frames_ >= kMaxBadFrames) close("too many rejected frames");
}

void AgentSession::on_frame(std::string frame) {
  auto env = proto::decode(frame);
  if (!env) return reject("protocol_error", env.status().message(), std::nullopt);
  const uint64_t id = env->id;
  auto& body = env->body;
  if (const auto* reg = std::get_if<proto::Register>(&body)) return on_register(id, *reg);
  if (!registered()) return reject("not_registered", "first message must be 'register'", id);
  if (proto::needs_ack(body)) return ingest(id, std::move(body), frame.size());
  if (const auto* hb = std::get_if<proto::Heartbeat>(&body)) {
    controller_->fleet_telemetry().heartbeat(agent_id_, *hb, proto::unix_now_s());
    // Everything the agent journaled is acknowledged: a replayed run whose run_finished never came (a frame that
    // could not be decoded or stored) will not get one now, and the agent may take runs again.
    if (hb->backlog_messages == 0 && in_flight_ == 0 && !replaying_runs.empty()) {
      JS_LOG_WARN << "agent " << agent_id_ << " (" << name_ << ") has nothing left to replay but no run_finished came for "
                  << replaying_runs.size() << " of its journal's runs (first: run " << *replaying_runs.begin()
                  << "); it may take runs again";
      replaying_runs.clear();
      controller_->try_dispatch(shared_from_this());
    }
    return;
  }
  if (const auto* t = std::get_if<proto::TimeSyncReply>(&body)) return on_time_sync_reply(*t);
  if (const auto* f = std::get_if<proto::FetchModel>(&body)) return on_fetch_model(*f);
  if (const auto* e = std::get_if<proto::Error>(&body)) {
    JS_LOG_WARN << "agent " << agent_id_ << " (" << name_ << ") reported " << e->code << ": " << e->message;
    if (e->code == "busy" && current_run) {
      // The agent refused the assignment: give the run back to the queue.
      const int64_t run = *current_run;
      current_run.reset();
      controller_->db().post<Status>(
          controller_->executor(), [run, a = agent_id_](Store& s) { return s.unclaim_run(run, a); },
          // Claimable again, for other agents now and for this one at the next sweep (not at once: an agent
          // that says it is busy would be offered runs in a tight loop).
          [c = controller_](Status) { c->queue_changed(); });
    }
    return;
  }
  reject("protocol_error", "message '" + std::string(proto::type_name(body)) + "' is not accepted by the controller", id);
}

void AgentSession::on_register(uint64_t id, const proto::Register& reg) {
  if (registered() || registering_) return reject("protocol_error", "already registered", id);
  registering_ = true;
  name_ = reg.name;
  device_class_ = reg.facts.device_class;
  auto self = shared_from_this();
  // The credential it would be issued, minted once for this registration: a retry of the database work (DbWorker
  // retries on kUnavailable) presents the same one, so an attempt that committed but whose answer was lost is
  // recognised (Store::admit_agent) instead of refusing the board it just enrolled.
  auto fresh = new_agent_credential();
  if (!fresh) {
    registering_ = false;
    return reject("registration_failed", fresh.status().message(), id);
  }
  controller_->db().post<Result<Outcome>>(
      controller_->executor(),
      [reg, may_enroll = may_enroll_, fresh = fresh.value()](Store& s) -> Result<Outcome> {
        AgentProof proof;
        proof.may_enroll = may_enroll;
        if (reg.credential) proof.presented_sha256 = credential_sha256(*reg.credential);
        proof.issue_sha256 = credential_sha256(fresh);
        // One transaction: registered, and the runs it held but no longer executes back in the queue.
        JS_ASSIGN_OR_RETURN(AgentRegistration registration,
                            s.admit_agent(reg, proof, "agent " + reg.name + " re-registered without it"));
        Outcome out{registration.agent_id, registration.requeued, std::nullopt};
        if (registration.enrolled) out.issued_credential = fresh;
        return out;
      },
      [self, reg](Result<Outcome> r) { self->on_registered(reg, std::move(r)); });
}

void AgentSession::on_registered(const proto::Register& reg, Result<Outcome> r) {
  check_io_thread("AgentSession registration done");
  registering_ = false;
  if (!r) {
    const bool refused = r.status().code() == Code::kPermissionDenied;
    const ClientError e = client_error(r.status(), "registering agent " + reg.name + " from " + peer_);
    if (refused) JS_LOG_WARN << "agent " << reg.name << " from " << peer_ << ": registration refused: " << e.status.message();
    send(proto::Error{refused ? "credential_refused" : "registration_failed", e.status.message(), std::nullopt});
    return close(refused ? "registration refused: wrong or missing credential" : "registration failed");
  }
  if (!open_) return;
  agent_id_ = r->agent_id;
  current_run = reg.current_run;
  controller_->fleet_telemetry().forget_backlog(agent_id_);   // the last connection's, until a heartbeat says
  replaying_runs = std::set<int64_t>(reg.journal_runs.begin(), reg.journal_runs.end());
  if (reg.current_run) replaying_runs.erase(*reg.current_run);
  JS_LOG_INFO << "agent " << agent_id_ << " (" << reg.name << ", " << reg.facts.device_class << ", "
              << reg.facts.hostname << ") registered" << (r->issued_credential ? " and enrolled (credential issued)" : "")
              << (reg.current_run ? ", still running run " + std::to_string(*reg.current_run) : std::string())
              << (r->requeued ? ", requeued " + std::to_string(r->requeued) + " of its runs" : std::string());
  if (r->requeued > 0) controller_->queue_changed();
  proto::Registered answer{agent_id_, controller_->options().heartbeat_interval.count(), r->issued_credential};
  send(std::move(answer));
  // A probe at once, ahead of anything the agent sends next: a run it resumes after a reboot (a Jetson without an RTC
  // battery may come back with another clock) is stored with an offset measured after it.
  send_clock_probe();
  start_heartbeat();
  controller_->on_agent_registered(shared_from_this());
}

// One chunk of a model file a run needs, read on the database thread and sent as model_chunk. The agent asks for the
// next chunk once it has this one: one in flight per agent, nothing piles up in the write queue.
void AgentSession::on_fetch_model(const proto::FetchModel& m) {
  if (m.index == 0) JS_LOG_INFO << "agent " << agent_id_ << " (" << name_ << ") fetches model file " << m.sha256;
  auto self = shared_from_this();
  controller_->db().post<Result<proto::ModelChunk>>(
      controller_->executor(),
      [m](Store& s) -> Result<proto::ModelChunk> {
        proto::ModelChunk c{m.sha256, m.index, 0, 0, {}, {}};
        JS_ASSIGN_OR_RETURN(auto file, s.model_file(m.sha256));
        if (!file) {
          c.error = "the controller has no model file " + m.sha256;
          return c;
        }
        c.chunks = file->chunks;
        c.bytes = file->bytes;
        auto data = s.model_file_chunk(m.sha256, m.index);
        if (!data && data.status().code() != Code::kNotFound) return data.status();
        if (!data) c.error = data.status().message();
        else c.data = std::move(data).value();
        return c;
      },
      [self, m](Result<proto::ModelChunk> r) {
        self->check_io_thread("AgentSession fetch_model done");
        if (r) return self->send(std::move(r).value());
        const ClientError e = client_error(r.status(), "reading model file " + m.sha256 + " for agent " + self->name_);
        self->send(proto::ModelChunk{m.sha256, m.index, 0, 0, {}, "the controller could not read it: " + e.status.message()});
      });
}

void AgentSession::on_time_sync_reply(const proto::TimeSyncReply& m) {
  using Kind = AgentClock::Verdict::Kind;
  const AgentClock::Verdict v = clock_.on_reply(m, proto::unix_now_s(), controller_->options().max_clock_probe_rtt_s);
  const auto who = [&] { return "agent " + std::to_string(agent_id_) + " (" + name_ + "): "; };
  switch (v.kind) {
    case Kind::kStale:
    case Kind::kNotBetter: return;
    case Kind::kImplausible:
      JS_LOG_WARN << who() << "implausible clock probe (round trip " << v.rtt_s << " s)";
      return;
    case Kind::kRefused:
      JS_LOG_WARN << who() << "clock probe refused: offset " << v.offset_s << " s is beyond the bound of "
                  << proto::kMaxClockOffsetSeconds << " s"
                  << (v.boot ? "; its boot clock's offset is recorded for boot " + v.boot->boot_id + " if it has none"
                             : std::string());
      if (v.boot)
        controller_->ingest_db(agent_id_).post<Status>(
            controller_->executor(), [a = agent_id_, b = *v.boot](Store& s) { return s.record_boot_offset(a, b); },
            [a = agent_id_](Status st) {
              if (!st.is_ok()) JS_LOG_WARN << "agent " << a << ": recording its boot clock offset failed: " << st.to_string();
            });
      return;
    case Kind::kDiscarded:
      controller_->metrics().clock_probes_discarded.inc();
      JS_LOG_DEBUG << who() << "clock probe discarded (round trip " << v.rtt_s << " s, taken under load)";
      return;
    case Kind::kKept: break;
  }
  if (v.stepped_from_s)
    JS_LOG_INFO << who() << "its clock was stepped: offset " << *v.stepped_from_s << " s -> " << v.offset_s
                << " s (round trip " << v.rtt_s << " s)";
  JS_LOG_DEBUG << who() << "clock offset " << v.offset_s << " s (round trip " << v.rtt_s << " s)";
  // Through the agent's ingest worker, in order with its results: a run_started read after this reply is stored with
  // this offset (runs.clock_offset_s), whichever worker is busier.
  controller_->ingest_db(agent_id_).post<Status>(
      controller_->executor(),
      [a = agent_id_, offset = v.offset_s, rtt = v.rtt_s, boot = v.boot](Store& s) { return s.record_clock(a, offset, rtt, boot); },
      [a = agent_id_](Status st) {
        if (!st.is_ok()) JS_LOG_WARN << "agent " << a << ": recording its clock offset failed: " << st.to_string();
      });
}

std::optional<double> AgentSession::run_clock_offset_s(int64_t run_id) const { return clock_.run_offset_s(run_id); }

void AgentSession::ingest(uint64_t id, proto::Body body, size_t bytes) {
  ++in_flight_;
  in_flight_bytes_ += bytes;
  controller_->ingest_budget().take(bytes);
  const std::string type(proto::type_name(body));
  const auto received = std::chrono::steady_clock::now();
  size_t rows = 0;   // the rows it carries (minibatch and sample chunks), for the ingest counters of /metrics
  if (const auto* m = std::get_if<proto::MinibatchChunk>(&body)) rows = m->stall_s.size();
  if (const auto* started = std::get_if<proto::RunStarted>(&body)) clock_.run_started(*started);
  if (const auto* c = std::get_if<proto::SampleChunk>(&body)) {
    rows = c->samples.size();
    controller_->fleet_telemetry().add_samples(agent_id_, *c, run_clock_offset_s(c->run_id), proto::unix_now_s());
  }
  const int64_t agent = agent_id_;
  auto self = shared_from_this();
  std::optional<int64_t> finished;
  if (const auto* f = std::get_if<proto::RunFinished>(&body)) {
    finished = f->run_id;
    clock_.run_finished(f->run_id);   // nothing of it follows its end
  }
  controller_->ingest_db(agent).post_ingest(
      controller_->executor(), agent, std::move(body),
      [self, id, type, finished, rows, received, bytes](Result<IngestOutcome> r) {
        if (r.is_ok()) {
          // Duplicates and set-aside messages are counted, not logged one by one (a replay brings thousands);
          // what was set aside is in set_aside_results and its campaign's status.
          auto& m = self->controller_->metrics().ingest(type);
          m.messages.inc();
          if (*r == IngestOutcome::kDuplicate) m.duplicates.inc();
          if (*r == IngestOutcome::kSetAside) m.set_aside.inc();
          if (*r == IngestOutcome::kStored) m.rows.inc(rows);
          m.seconds.observe(metrics::seconds_since(received));
        }
        self->ingest_done(id, type, r.status(), finished, bytes);
      });
}

void AgentSession::ingest_done(uint64_t id, const std::string& type, const Status& s,
                               std::optional<int64_t> finished_run, size_t bytes) {
  check_io_thread("AgentSession::ingest_done");
  --in_flight_;
  in_flight_bytes_ -= bytes;
  // Room for the connections waiting for it, in the order they came (this one reads again below in any case).
  controller_->ingest_budget().give_back(bytes);
  if (s.code() == Code::kUnavailable) {
    // While the controller stops (the DbWorker retries outages until then), or a result the store refused could not
    // be kept apart either (DbWorker::keep_refused): not stored, so never acknowledged.
    // Acks are cumulative, so the connection closes before any later one goes out; the agent resends on reconnect.
    return close("ingest of '" + type + "' #" + std::to_string(id) + " not stored: " + s.message());
  }
  if (!s.is_ok()) {
    // Permanent failures (bad data) are acked too, or the agent would resend them forever; they are logged
    // and reported back.
    JS_LOG_ERROR << "agent " << agent_id_ << " (" << name_ << "): ingest of '" << type << "' #" << id
                 << " failed: " << s.to_string();
    send(proto::Error{std::string(code_name(s.code())), "ingest of '" + type + "' failed: " + s.message(), id});
  }
  ack(id);
  if (finished_run) {
    JS_LOG_INFO << "agent " << agent_id_ << " (" << name_ << ") finished run " << *finished_run;
    controller_->queue_changed();  // it may have been requeued, and its board is free for its other agents
    if (current_run == finished_run) current_run.reset();
    replaying_runs.erase(*finished_run);
    controller_->try_dispatch(shared_from_this());
  }
  read_next();
}

void AgentSession::send(proto::Body body) {
  check_io_thread("AgentSession::send");
  if (!open_) return;
  if (queued_frames() >= controller_->options().max_queued_frames) {
    JS_LOG_WARN << "agent " << agent_id_ << " (" << name_ << "): write queue full ("
                << queued_frames() << " frames); closing slow connection";
    return close("write queue full");
  }
  write_queue_.push_back(proto::encode(proto::Envelope{0, std::move(body)}));
  if (!writing_) write_next();
}

void AgentSession::ack(uint64_t id) {
  // Cumulative: a later ack covers every earlier one, so one is pending at most, however slowly the agent reads.
  pending_ack_ = std::max(pending_ack_.value_or(0), id);
  if (!writing_) write_next();
}

void AgentSession::write_next() {
  writing_ = false;
  if (!open_) return;
  if (!write_queue_.empty()) {
    writing_frame_ = std::move(write_queue_.front());
    write_queue_.pop_front();
  } else if (pending_ack_) {
    writing_frame_ = proto::encode(proto::Envelope{0, proto::Ack{*pending_ack_}});
    pending_ack_.reset();
  } else {
    return;
  }
  writing_ = true;
  ws_.text(true);
  auto self = shared_from_this();
  ws_.async_write(asio::buffer(writing_frame_), [self](beast::error_code ec, std::size_t) {
    self->check_io_thread("AgentSession write handler");
    if (ec) return self->close("write: " + ec.message());
    self->write_next();
  });
}

void AgentSession::start_heartbeat() {
  heartbeat_timer_.expires_after(controller_->options().heartbeat_interval);
  auto self = shared_from_this();
  heartbeat_timer_.async_wait([self](beast::error_code ec) {
    self->check_io_thread("AgentSession heartbeat handler");
    if (ec || !self->open_) return;
    const auto interval = self->controller_->options().heartbeat_interval;
    const auto silent = std::chrono::steady_clock::now() - self->last_rx_;
    // While reading is paused for backpressure, silence is ours, not the agent's.
    if (!self->paused_for_ingest() && silent > interval * 5 + std::chrono::seconds(2))
      return self->close("no heartbeat for " +
                         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(silent).count()) + " ms");
    self->send(proto::Heartbeat{"controller", std::nullopt, {}, {}});
    const auto& o = self->controller_->options();
    ++self->heartbeats_;
    // One probe outstanding at a time, as AgentClock::probe_due says (e.g. another at each heartbeat while a
    // replaying journal has every probe discarded and none is kept).
    if (self->clock_.probe_due(proto::unix_now_s(), self->heartbeats_, o.time_sync_probes, o.time_sync_every_heartbeats))
      self->send_clock_probe();
    self->start_heartbeat();
  });
}

void AgentSession::probe_clock_before_run() {
  check_io_thread("AgentSession::probe_clock_before_run");
  if (!clock_.probe_outstanding()) send_clock_probe();
}

void AgentSession::send_clock_probe() {
  check_io_thread("AgentSession::send_clock_probe");
  send(proto::TimeSync{clock_.start_probe(proto::unix_now_s(), !reading_)});   // !reading_: paused for ingest now
}

void AgentSession::close(const std::string& why) {
  check_io_thread("AgentSession::close");
  if (!open_) return;
  open_ = false;
  heartbeat_timer_.cancel();
  JS_LOG_INFO << "agent " << agent_id_ << " (" << (name_.empty() ? "unregistered" : name_) << ", " << peer_
              << ") disconnected: " << why;
  beast::error_code ignored;
  ws_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  ws_.socket().close(ignored);
  controller_->on_agent_gone(shared_from_this());
}

}  // namespace jetsweep::controller

#include "controller/controller.hpp"

#include <boost/json.hpp>
#include <charconv>

#include "common/campaign.hpp"
#include "common/log.hpp"
#include "controller/agent_session.hpp"

namespace jetsweep::controller {
namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace bj = boost::json;

bool authorized(std::string_view header, const std::string& token) {
  if (token.empty()) return true;
  const std::string_view prefix = "Bearer ";
  if (header.substr(0, prefix.size()) != prefix) return false;
  const std::string_view presented = header.substr(prefix.size());
  unsigned diff = presented.size() == token.size() ? 0u : 1u;
  for (size_t i = 0; i < token.size(); ++i) diff |= static_cast<unsigned>(token[i] ^ (i < presented.size() ? presented[i] : 0));
  return diff == 0;
}

Controller::Controller(asio::io_context& ioc, DbWorker& db, ControllerOptions options, std::vector<DbWorker*> ingest)
    : ioc_(ioc), db_(db), ingest_(std::move(ingest)), options_(options), sweep_timer_(ioc) {}

void Controller::start() { sweep(); }

void Controller::stop() {
  stopped_ = true;
  sweep_timer_.cancel();
  for (auto& [id, weak] : agents_)
    if (auto s = weak.lock()) s->close("controller shutting down");
  agents_.clear();
}

void Controller::sweep() {
  if (stopped_) return;
  auto self = shared_from_this();
  const double lease = options_.lease_s;
  db_.post<Result<int64_t>>(
      executor(), [lease](Store& s) { return s.requeue_orphaned_runs(lease); },
      [self](Result<int64_t> r) {
        if (!r) JS_LOG_WARN << "lease sweep failed: " << r.status().to_string();
        else if (r.value() > 0) JS_LOG_INFO << "lease sweep requeued " << r.value() << " runs of vanished agents";
        // Requeued runs are claimable; every 15th sweep everyone looks again anyway (a safety net).
        if ((r && r.value() > 0) || ++self->sweeps_ % 15 == 0) self->queue_changed();
        self->dispatch_all();
        self->stop_cancelled_runs();
      });
  sweep_timer_.expires_after(options_.sweep_interval);
  sweep_timer_.async_wait([self](boost::system::error_code ec) {
    if (!ec) self->sweep();
  });
}

void Controller::on_agent_registered(const std::shared_ptr<AgentSession>& session) {
  auto& slot = agents_[session->agent_id()];
  if (auto old = slot.lock(); old && old != session) old->close("replaced by a new connection of the same agent");
  slot = session;
  try_dispatch(session);
}

void Controller::on_agent_gone(const std::shared_ptr<AgentSession>& session) {
  if (!session->registered()) return;
  auto it = agents_.find(session->agent_id());
  if (it != agents_.end() && it->second.lock() == session) {
    agents_.erase(it);
    db_.post<Status>(
        executor(), [id = session->agent_id()](Store& s) { return s.set_agent_connected(id, false); },
        [id = session->agent_id()](Status st) {
          if (!st.is_ok()) JS_LOG_WARN << "agent " << id << ": marking it disconnected failed: " << st.to_string();
        });
  }
}

void Controller::try_dispatch(const std::shared_ptr<AgentSession>& session) {
  if (stopped_ || !session->open() || !session->registered() || session->current_run || session->claiming) return;
  if (session->nothing_at == queue_generation_) return;  // nothing new since its last empty claim
  session->claiming = true;
  const uint64_t generation = queue_generation_;
  auto self = shared_from_this();
  db_.post<Result<std::optional<Assignment>>>(
      executor(),
      [id = session->agent_id(), cls = session->device_class()](Store& s) { return s.claim_run(id, cls); },
      [self, session, generation](Result<std::optional<Assignment>> r) {
        session->claiming = false;
        if (!r) {
          JS_LOG_ERROR << "agent " << session->agent_id() << " (" << session->name()
                       << "): claiming a run failed: " << r.status().to_string();
          return;
        }
        if (!r.value()) {  // nothing queued for this agent
          session->nothing_at = generation;
          return;
        }
        session->nothing_at.reset();
        const Assignment& a = *r.value();
        if (!session->open()) {
          self->db_.post<Status>(
              self->executor(), [run = a.run_id, id = session->agent_id()](Store& s) { return s.unclaim_run(run, id); },
              [self](Status) {
                self->queue_changed();
                self->dispatch_all();
              });
          return;
        }
        session->current_run = a.run_id;
        JS_LOG_INFO << "run " << a.run_id << " assigned to agent " << session->agent_id() << " (" << session->name()
                    << ")";
        session->send(proto::AssignRun{a.run_id, a.config});
      });
}

void Controller::dispatch_all() {
  for (auto& [id, weak] : agents_)
    if (auto s = weak.lock()) try_dispatch(s);
}

void Controller::stop_cancelled_runs() {
  if (stopped_) return;
  auto self = shared_from_this();
  db_.post<Result<std::vector<RunOnAgent>>>(
      executor(), [](Store& s) { return s.runs_to_stop(); },
      [self](Result<std::vector<RunOnAgent>> r) {
        if (!r) {
          JS_LOG_WARN << "listing runs to stop failed: " << r.status().to_string();
          return;
        }
        for (const auto& run : r.value()) {
          auto it = self->agents_.find(run.agent_id);
          if (it == self->agents_.end()) continue;  // disconnected: the lease sweep cancels it
          auto session = it->second.lock();
          if (!session || session->current_run != run.run_id || session->cancel_sent == run.run_id) continue;
          session->cancel_sent = run.run_id;
          JS_LOG_INFO << "asking agent " << run.agent_id << " (" << session->name() << ") to stop run " << run.run_id;
          session->send(proto::CancelRun{run.run_id, "cancelled on the controller"});
        }
      });
}

namespace {

HttpResponse json_response(const HttpRequest& req, http::status status, const bj::value& body) {
  HttpResponse res{status, req.version()};
  res.set(http::field::server, "jetsweep-controller");
  res.set(http::field::content_type, "application/json");
  res.keep_alive(req.keep_alive());
  res.body() = bj::serialize(body) + "\n";
  res.prepare_payload();
  return res;
}

HttpResponse error_response(const HttpRequest& req, http::status status, const std::string& message) {
  bj::object o;
  o["error"] = message;
  return json_response(req, status, o);
}

http::status status_for(const Status& s) {
  switch (s.code()) {
    case Code::kInvalidArgument: return http::status::bad_request;
    case Code::kNotFound: return http::status::not_found;
    case Code::kUnavailable: return http::status::service_unavailable;
    default: return http::status::internal_server_error;
  }
}

std::vector<std::string> split_path(const std::string& target) {
  std::string path = target.substr(0, target.find('?'));
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) parts.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

}  // namespace

void Controller::handle_api(HttpRequest&& req, std::function<void(HttpResponse&&)> respond) {
  const auto parts = split_path(std::string(req.target()));
  const auto method = req.method();
  auto shared_req = std::make_shared<HttpRequest>(std::move(req));
  auto reply = [shared_req, respond](auto&& result) {
    if (!result) return respond(error_response(*shared_req, status_for(result.status()), result.status().message()));
    respond(json_response(*shared_req, http::status::ok, bj::value(result.value())));
  };
  auto self = shared_from_this();

  if (parts.size() < 1 || parts[0] != "api")
    return respond(error_response(*shared_req, http::status::not_found, "no such endpoint: " + std::string(shared_req->target())));

  const bool is_health = parts.size() == 2 && parts[1] == "health";
  if (!is_health && !authorized(shared_req->base()[http::field::authorization], options_.api_token))
    return respond(error_response(*shared_req, http::status::unauthorized,
                                  "missing or wrong API token (Authorization: Bearer ...; jetsweep --token or "
                                  "$JETSWEEP_API_TOKEN)"));
  if (is_health && method == http::verb::get) {
    bj::object o;
    o["ok"] = true;
    o["agents_connected"] = agents_.size();
    size_t ingest_queue = 0;
    for (auto* w : ingest_) ingest_queue += w->queued();
    o["db_queue"] = db_.queued();
    o["ingest_queue"] = ingest_queue;
    return respond(json_response(*shared_req, http::status::ok, o));
  }
  if (parts.size() == 2 && parts[1] == "agents" && method == http::verb::get) {
    return db_.post<Result<bj::array>>(executor(), [](Store& s) { return s.list_agents(); }, reply);
  }
  if (parts.size() == 2 && parts[1] == "campaigns" && method == http::verb::get) {
    return db_.post<Result<bj::array>>(executor(), [](Store& s) { return s.list_campaigns(); }, reply);
  }
  // A campaign posted as YAML; the X-Jetsweep-Source header names the file in its errors.
  std::string file = "campaign.yaml";
  if (auto it = shared_req->find("X-Jetsweep-Source"); it != shared_req->end() && !it->value().empty())
    file = std::string(it->value());
  auto posted_campaign = [&]() -> std::shared_ptr<Campaign> {
    auto campaign = parse_campaign(shared_req->body(), file);
    if (!campaign) {
      respond(error_response(*shared_req, http::status::bad_request, campaign.status().message()));
      return nullptr;
    }
    return std::make_shared<Campaign>(std::move(campaign).value());
  };
  if (parts.size() == 3 && parts[1] == "campaigns" && parts[2] == "estimate" && method == http::verb::post) {
    auto c = posted_campaign();
    if (!c) return;
    return db_.post<Result<bj::object>>(executor(), [c](Store& s) { return s.estimate_campaign(*c); }, reply);
  }
  if (parts.size() == 2 && parts[1] == "campaigns" && method == http::verb::post) {
    auto c = posted_campaign();
    if (!c) return;
    // ?max_runs=N&max_epochs=E&max_minibatches=M: a dry run (docs/CAMPAIGNS.md).
    const std::string target(shared_req->target());
    if (const size_t q = target.find('?'); q != std::string::npos) {
      auto caps = parse_dry_run_caps(std::string_view(target).substr(q + 1));
      if (!caps) return respond(error_response(*shared_req, http::status::bad_request, caps.status().message()));
      apply_dry_run_caps(*c, *caps);
    }
    return db_.post<Result<CreatedCampaign>>(
        executor(), [c, file, body = shared_req->body()](Store& s) { return s.create_campaign(*c, file, body); },
        [self, shared_req, respond, c](Result<CreatedCampaign> r) {
          if (!r) return respond(error_response(*shared_req, status_for(r.status()), r.status().message()));
          JS_LOG_INFO << "campaign " << r->campaign_id << " (" << c->name << ") submitted with " << r->runs << " runs";
          self->queue_changed();
          bj::object o;
          o["campaign_id"] = r->campaign_id;
          o["name"] = c->name;
          o["runs"] = r->runs;
          respond(json_response(*shared_req, http::status::created, o));
          self->dispatch_all();
        });
  }
  if (parts.size() == 4 && parts[1] == "campaigns" && method == http::verb::post &&
      (parts[3] == "pause" || parts[3] == "resume" || parts[3] == "cancel")) {
    const std::string ref = parts[2];
    const std::string state = parts[3] == "pause" ? "paused" : parts[3] == "resume" ? "active" : "cancelled";
    return db_.post<Result<bj::object>>(
        executor(),
        [ref, state](Store& s) -> Result<bj::object> {
          auto id = s.resolve_campaign(ref);
          if (!id) return id.status();
          Status st = s.set_campaign_state(id.value(), state);
          if (!st.is_ok()) return st;
          return s.campaign_status(id.value());
        },
        [self, reply, state](Result<bj::object> r) {
          if (r) JS_LOG_INFO << "campaign " << r->at("campaign_id").as_int64() << " is now " << state;
          reply(std::move(r));
          if (state == "active") {
            self->queue_changed();
            self->dispatch_all();
          }
          if (state == "cancelled") self->stop_cancelled_runs();
        });
  }
  if (parts.size() == 4 && parts[1] == "runs" && parts[3] == "cancel" && method == http::verb::post) {
    int64_t run_id = 0;
    const auto& ref = parts[2];
    auto [end, ec] = std::from_chars(ref.data(), ref.data() + ref.size(), run_id);
    if (ec != std::errc() || end != ref.data() + ref.size() || run_id <= 0)
      return respond(error_response(*shared_req, http::status::bad_request, "run id '" + ref + "' is not a positive integer"));
    return db_.post<Result<bj::object>>(
        executor(), [run_id](Store& s) { return s.cancel_run(run_id); },
        [self, reply, run_id](Result<bj::object> r) {
          if (r) JS_LOG_INFO << "run " << run_id << " cancel requested: " << bj::serialize(r.value());
          reply(std::move(r));
          self->stop_cancelled_runs();
        });
  }
  if (parts.size() >= 3 && parts[1] == "campaigns" && method == http::verb::get) {
    const std::string ref = parts[2];
    const bool report = parts.size() == 4 && parts[3] == "report";
    if (parts.size() > 4 || (parts.size() == 4 && !report))
      return respond(error_response(*shared_req, http::status::not_found, "no such endpoint"));
    return db_.post<Result<bj::object>>(
        executor(),
        [ref, report](Store& s) -> Result<bj::object> {
          auto id = s.resolve_campaign(ref);
          if (!id) return id.status();
          return report ? s.campaign_report(id.value()) : s.campaign_status(id.value());
        },
        reply);
  }
  respond(error_response(*shared_req, http::status::not_found,
                         "no such endpoint: " + std::string(to_string(method)) + " " + std::string(shared_req->target())));
}

}  // namespace jetsweep::controller

#include "controller/controller.hpp"

#include <boost/json.hpp>
#include <cstdio>
#include <optional>
#include <random>

#include "common/api.hpp"
#include "common/campaign.hpp"
#include "common/perf/estimate.hpp"
#include "common/text.hpp"
#include "common/log.hpp"
#include "controller/agent_session.hpp"
#include "controller/api_call.hpp"
#include "controller/client_error.hpp"
#include "controller/io_thread.hpp"
#include "controller/live_hub.hpp"
#include "controller/web_auth.hpp"

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

namespace {

// 128 random bits as hex: the prefix of this controller's request keys (a later controller never reuses one).
std::string random_key_prefix() {
  std::random_device device;
  std::string out;
  char hex[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(device()));
    out += hex;
  }
  return out;
}

}  // namespace

std::string Controller::request_key() { return key_prefix_ + "-" + std::to_string(++keys_minted_); }

Controller::Controller(asio::io_context& ioc, DbWorker& db, ControllerOptions options, std::vector<DbWorker*> ingest)
    : ioc_(ioc),
      db_(db),
      ingest_(std::move(ingest)),
      options_(options),
      campaigns_(options_.max_campaigns_waiting),
      planner_(AdaptivePlanner::Options{options_.analysis_dsn, options_.model_dir}),
      ingest_budget_(options_.max_ingest_bytes),
      sweep_timer_(ioc),
      key_prefix_(random_key_prefix()) {
  campaigns_.start();
  planner_.start();
  web_auth_ = std::make_unique<WebAuth>(options_.api_token, options_.viewer_token);
  live_ = std::make_shared<LiveHub>(ioc.get_executor(), [this](std::function<void(std::optional<std::string>)> done) {
    live_snapshot(std::move(done));
  });
}

Controller::~Controller() { campaigns_.stop(); }

void Controller::start() {
  JS_CHECK_IO_THREAD(ioc_);
  sweep();
}

void Controller::stop() {
  JS_CHECK_IO_THREAD(ioc_);
  stopped_ = true;
  sweep_timer_.cancel();
  campaigns_.stop();
  planner_.stop();
  live_->stop();   // closes the dashboard's event streams
  const auto agents = agents_;   // a copy: close() calls on_agent_gone, which erases from agents_
  for (const auto& [id, weak] : agents)
    if (auto s = weak.lock()) s->close("controller shutting down");
  agents_.clear();
}

void Controller::sweep() {
  JS_CHECK_IO_THREAD(ioc_);
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
  plan_adaptive();
  sweep_timer_.expires_after(options_.sweep_interval);
  sweep_timer_.async_wait([self](boost::system::error_code ec) {
    if (!ec) self->sweep();
  });
}

void Controller::on_agent_registered(const std::shared_ptr<AgentSession>& session) {
  JS_CHECK_IO_THREAD(ioc_);
  // The new connection takes the slot before the old one is closed: the old one's on_agent_gone then finds
  // itself replaced and leaves both the registry and the agent's connected flag alone.
  auto old = agents_[session->agent_id()].lock();
  agents_[session->agent_id()] = session;
  if (old && old != session) old->close("replaced by a new connection of the same agent");
  try_dispatch(session);
}

void Controller::on_agent_gone(const std::shared_ptr<AgentSession>& session) {
  JS_CHECK_IO_THREAD(ioc_);
  if (!session->registered()) return;
  auto it = agents_.find(session->agent_id());
  if (it != agents_.end() && it->second.lock() == session) {
    agents_.erase(it);
    auto self = shared_from_this();
    db_.post<Status>(
        executor(), [id = session->agent_id()](Store& s) { return s.set_agent_connected(id, false); },
        [self, id = session->agent_id()](Status st) {
          if (!st.is_ok()) JS_LOG_WARN << "agent " << id << ": marking it disconnected failed: " << st.to_string();
          // A new connection of the agent may have registered while this write waited: its registration's write
          // (connected) ran first, this one undid it. One database thread runs both in order and posts their
          // answers here in the same order, so that session is in the registry by now: the agent is connected.
          self->mark_connected_if_registered(id);
        });
  }
}

void Controller::mark_connected_if_registered(int64_t agent_id) {
  JS_CHECK_IO_THREAD(ioc_);
  auto it = agents_.find(agent_id);
  if (stopped_ || it == agents_.end()) return;
  if (auto s = it->second.lock(); !s || !s->open()) return;
  db_.post<Status>(
      executor(), [agent_id](Store& s) { return s.set_agent_connected(agent_id, true); },
      [agent_id](Status st) {
        if (!st.is_ok()) JS_LOG_WARN << "agent " << agent_id << ": marking it connected failed: " << st.to_string();
      });
}

void Controller::try_dispatch(const std::shared_ptr<AgentSession>& session) {
  JS_CHECK_IO_THREAD(ioc_);
  if (stopped_ || !session->open() || !session->registered() || session->current_run || session->claiming ||
      !session->replaying_runs.empty())
    return;
  if (session->nothing_at == queue_generation_) return;  // nothing new since its last empty claim
  session->claiming = true;
  const uint64_t generation = queue_generation_;
  const auto claim_posted = std::chrono::steady_clock::now();   // dispatch latency: claim posted -> assign sent
  auto self = shared_from_this();
  db_.post<Result<std::optional<Assignment>>>(
      executor(),
      [id = session->agent_id(), cls = session->device_class(), key = request_key()](Store& s) {
        return s.claim_run(id, cls, key);
      },
      [self, session, generation, claim_posted](Result<std::optional<Assignment>> r) {
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
              [self, run = a.run_id](Status st) {
                if (!st.is_ok()) JS_LOG_WARN << "run " << run << ": putting it back in the queue failed: " << st.to_string();
                self->queue_changed();
                self->dispatch_all();
              });
          return;
        }
        session->current_run = a.run_id;
        JS_LOG_INFO << "run " << a.run_id << " assigned to agent " << session->agent_id() << " (" << session->name()
                    << ")";
        session->probe_clock_before_run();
        session->send(proto::AssignRun{a.run_id, a.config});
        self->metrics_.dispatch_s.observe(metrics::seconds_since(claim_posted));
      });
}

void Controller::dispatch_all() {
  JS_CHECK_IO_THREAD(ioc_);
  for (auto& [id, weak] : agents_)
    if (auto s = weak.lock()) try_dispatch(s);
}

void Controller::stop_cancelled_runs() {
  JS_CHECK_IO_THREAD(ioc_);
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

HttpResponse json_response(const HttpRequest& req, http::status status, const bj::value& body) {
  HttpResponse res{status, req.version()};
  res.set(http::field::server, "jetsweep-controller");
  res.set(http::field::content_type, "application/json");
  res.keep_alive(req.keep_alive());
  res.body() = bj::serialize(body) + "\n";
  res.prepare_payload();
  return res;
}

http::status status_for(const Status& s) {
  switch (s.code()) {
    case Code::kInvalidArgument: return http::status::bad_request;
    case Code::kNotFound: return http::status::not_found;
    case Code::kPermissionDenied: return http::status::forbidden;
    case Code::kUnavailable: return http::status::service_unavailable;
    default: return http::status::internal_server_error;
  }
}

std::vector<std::string> split_path(std::string_view target) {
  std::vector<std::string> parts;
  for (auto& part : split(target.substr(0, target.find('?')), '/'))
    if (!part.empty()) parts.push_back(std::move(part));
  return parts;
}

namespace {

bool matches(const Controller::ApiRoute& route, http::verb method, const std::vector<std::string>& parts) {
  if (route.method != method || route.pattern.size() != parts.size()) return false;
  for (size_t i = 0; i < parts.size(); ++i)
    if (route.pattern[i] != "*" && route.pattern[i] != parts[i]) return false;
  return true;
}

}  // namespace

const std::vector<Controller::ApiRoute>& Controller::api_routes() {
  using C = Controller;
  constexpr auto kPublic = RouteAccess::kPublic;
  static const std::vector<ApiRoute> routes = {
      {http::verb::get, {"api", "health"}, &C::api_health, kPublic},
      {http::verb::get, {"api", "agents"}, &C::api_agents},
      {http::verb::get, {"api", "campaigns"}, &C::api_campaigns},
      {http::verb::post, {"api", "campaigns"}, &C::api_submit},
      {http::verb::post, {"api", "campaigns", "estimate"}, &C::api_estimate},
      {http::verb::get, {"api", "campaigns", "*"}, &C::api_campaign_status},
      {http::verb::get, {"api", "campaigns", "*", "report"}, &C::api_campaign_report},
      {http::verb::get, {"api", "campaigns", "*", "compare", "*"}, &C::api_compare},   // api_compare.cpp
      {http::verb::post, {"api", "campaigns", "*", "*"}, &C::api_campaign_action},
      {http::verb::post, {"api", "runs", "*", "cancel"}, &C::api_cancel_run},
      {http::verb::post, {"api", "agents", "*", "revoke"}, &C::api_revoke_agent},
      {http::verb::get, {"api", "fleet"}, &C::api_fleet},                               // api_metrics.cpp
      {http::verb::get, {"metrics"}, &C::api_metrics},                                  // api_metrics.cpp
      {http::verb::get, {"api", "runs", "*"}, &C::api_run},                             // api_web.cpp
      {http::verb::get, {"api", "runs", "*", "samples"}, &C::api_run_samples},          // api_web.cpp
      {http::verb::post, {"api", "login"}, &C::api_login, kPublic},                     // api_web.cpp
      {http::verb::post, {"api", "logout"}, &C::api_logout, kPublic},                   // api_web.cpp
      {http::verb::get, {"api", "session"}, &C::api_session, kPublic},                  // api_web.cpp
      {http::verb::put, {"api", "models", "*", "chunks", "*"}, &C::api_put_model_chunk},   // api_models.cpp
      {http::verb::post, {"api", "models", "*"}, &C::api_complete_model},                 // api_models.cpp
      {http::verb::get, {"api", "models", "*"}, &C::api_model_file},                      // api_models.cpp
      {http::verb::get, {}, &C::serve_ui, kPublic},                                     // api_web.cpp: the dashboard
      {http::verb::get, {"ui", "*"}, &C::serve_ui, kPublic},                            // its assets
  };
  return routes;
}

void Controller::handle_api(HttpRequest&& req, std::function<void(HttpResponse&&)> respond) {
  JS_CHECK_IO_THREAD(ioc_);
  ApiCall call{std::make_shared<HttpRequest>(std::move(req)), {}, std::move(respond)};
  if (auto bad = invalid_utf8_at(call.req->target()))
    return call.fail(http::status::bad_request,
                     "request target: byte " + std::to_string(*bad) + " is not valid UTF-8 (percent-encode it)");
  call.parts = split_path(call.req->target());
  // The API token or the viewer token (Authorization: Bearer), else the dashboard's login cookie (web_auth.hpp).
  const Caller who = web_auth_->identify(*call.req);
  const bool token = who.role != Role::kNone;
  const std::string refused = "missing or wrong API token (Authorization: Bearer ...; jetsweep --token or $JETSWEEP_API_TOKEN)";
  for (const auto& route : api_routes()) {
    if (!matches(route, call.req->method(), call.parts)) continue;
    if (route.access != RouteAccess::kPublic) {
      if (!token) return call.fail(http::status::unauthorized, refused);
      const bool read = call.req->method() == http::verb::get || call.req->method() == http::verb::head;
      if (!read && who.role != Role::kAdmin)
        return call.fail(http::status::forbidden, "read-only access (the viewer token): only GET requests are allowed");
      if (!read && who.by_cookie && call.req->find(WebAuth::kCsrfHeader) == call.req->end())
        return call.fail(http::status::forbidden, std::string("a request authorised by the login cookie must carry the ") +
                                                      WebAuth::kCsrfHeader + " header (cross-site request refused)");
    }
    return (this->*route.handler)(call);
  }
  // An unknown endpoint is named only to token holders.
  if (!token) return call.fail(http::status::unauthorized, refused);
  call.no_such_endpoint();
}

template <class T, class Job>
void Controller::answer_from_store(const ApiCall& call, Job job) {
  db_.post<Result<T>>(executor(), std::move(job), [call](Result<T> r) { call.reply(r); });
}

void Controller::api_health(const ApiCall& call) {
  api::Health h;
  h.agents_connected = static_cast<int64_t>(agents_.size());
  h.db_queue = static_cast<int64_t>(db_.queued());
  for (auto* w : ingest_) h.ingest_queue += static_cast<int64_t>(w->queued());
  call.reply(http::status::ok, api::to_json(h));
}

void Controller::api_agents(const ApiCall& call) {
  answer_from_store<std::vector<api::AgentInfo>>(call, [](Store& s) { return s.list_agents(); });
}

void Controller::api_campaigns(const ApiCall& call) {
  answer_from_store<std::vector<api::CampaignStatus>>(call, [](Store& s) { return s.list_campaigns(); });
}

void Controller::api_campaign_status(const ApiCall& call) {
  answer_from_store<api::CampaignStatus>(call, [ref = call.parts[2]](Store& s) -> Result<api::CampaignStatus> {
    JS_ASSIGN_OR_RETURN(int64_t id, s.resolve_campaign(ref));
    return s.campaign_status(id);
  });
}

void Controller::api_campaign_report(const ApiCall& call) {
  // ?epochs=none: each run's summary without its per-epoch rows (what the text report prints).
  const std::string_view target = call.req->target();
  const size_t query = target.find('?');
  const bool without_epochs = query != std::string_view::npos &&
                              target.substr(query + 1).find(api::kReportWithoutEpochs) != std::string_view::npos;
  answer_from_store<api::CampaignReport>(
      call, [ref = call.parts[2], without_epochs](Store& s) -> Result<api::CampaignReport> {
        JS_ASSIGN_OR_RETURN(int64_t id, s.resolve_campaign(ref));
        return s.campaign_report(id, without_epochs ? ReportEpochs::kSummaryOnly : ReportEpochs::kRows);
      });
}

// The submission posted to /api/campaigns[/estimate]: the YAML body, the file the X-Jetsweep-Source header
// names (for its errors), and the campaign parsed from it.
struct Controller::Posted {
  api::CampaignSubmission submission;
  std::shared_ptr<Campaign> campaign;
};

namespace {
// Runs on the CampaignWorker: the campaign parsed and expanded within `limits` against the enrolled boards'
// tables, then the dry-run caps of the query string (?max_runs=N&max_epochs=E&max_minibatches=M,
// docs/CAMPAIGNS.md), applied when asked to.
Result<Controller::Posted> parse_submission(Controller::Posted p, const std::string& query, const CampaignLimits& limits,
                                            const FleetTables& fleet, bool apply_dry_run) {
  try {
    JS_ASSIGN_OR_RETURN(Campaign campaign, parse_campaign(p.submission.yaml, p.submission.source_file, limits, fleet));
    p.campaign = std::make_shared<Campaign>(std::move(campaign));
    if (!query.empty()) {
      JS_ASSIGN_OR_RETURN(p.submission.dry_run, parse_dry_run_caps(query));
    }
    if (apply_dry_run && p.submission.dry_run) apply_dry_run_caps(*p.campaign, *p.submission.dry_run);
    return p;
  } catch (const std::bad_alloc&) {
    return Status(Code::kInternal, p.submission.source_file + ": out of memory expanding the campaign");
  }
}
}  // namespace

void Controller::parse_posted(const ApiCall& call, bool apply_dry_run, std::function<void(Posted&&)> then) {
  Posted p;
  HttpRequest& req = *call.req;
  if (auto it = req.find(api::kSourceHeader); it != req.end() && !it->value().empty())
    p.submission.source_file = std::string(it->value());
  if (auto bad = invalid_utf8_at(p.submission.source_file))
    return call.fail(http::status::bad_request, "header " + std::string(api::kSourceHeader) + ": byte " +
                                                    std::to_string(*bad) + " is not valid UTF-8");
  p.submission.yaml = std::move(req.body());
  const std::string_view target = req.target();
  const size_t q = target.find('?');
  std::string query(q == std::string_view::npos ? std::string_view() : target.substr(q + 1));
  // The enrolled boards' tables first (database thread), then the parse (campaign worker) against them. Those
  // on their way to the worker count as waiting: busy is answered at once, before any database work.
  auto busy = [this, call] {
    call.fail(http::status::service_unavailable,
              "busy: " + std::to_string(campaigns_.max_waiting()) +
                  " campaigns are waiting to be parsed already (max_campaigns_waiting); try again shortly");
  };
  if (posts_reading_boards_ + campaigns_.waiting() >= campaigns_.max_waiting()) return busy();
  ++posts_reading_boards_;
  auto self = shared_from_this();
  db_.post<Result<std::vector<perf::BoardGatingFacts>>>(
      executor(), [](Store& s) { return s.enrolled_board_facts(); },
      [self, call, busy, p = std::move(p), query = std::move(query), apply_dry_run,
       then = std::move(then)](Result<std::vector<perf::BoardGatingFacts>> boards) mutable {
        --self->posts_reading_boards_;
        if (!boards) return call.fail(boards.status());
        const bool queued = self->campaigns_.post<Result<Posted>>(
            self->executor(),
            [p = std::move(p), query = std::move(query), limits = self->options_.campaign_limits, apply_dry_run,
             boards = std::move(boards).value(), planner = &self->planner_]() mutable -> Result<Posted> {
              JS_ASSIGN_OR_RETURN(Posted parsed,
                                  parse_submission(std::move(p), query, limits, perf::fleet_tables(boards), apply_dry_run));
              // Every adaptive plan's reference found and fit to anchor it (loaded here, off the I/O thread).
              for (const auto& plan : parsed.campaign->adaptive_plans) JS_RETURN_IF_ERROR(planner->check(plan));
              return parsed;
            },
            [call, then = std::move(then)](Result<Posted> r) {
              if (!r) return call.fail(r.status().code() == Code::kInternal ? http::status::internal_server_error
                                                                            : http::status::bad_request,
                                       r.status().message());
              then(std::move(r).value());
            });
        if (!queued) busy();
      });
}

void Controller::api_estimate(const ApiCall& call) {
  auto self = shared_from_this();
  parse_posted(call, false, [self, call](Posted&& posted) {
    self->db_.post<Result<perf::EstimateInputs>>(
        self->executor(), [](Store& s) { return s.estimate_inputs(); },
        [call, c = posted.campaign](Result<perf::EstimateInputs> in) {
          if (!in) return call.fail(in.status());
          perf::RunTimeModel model;
          call.reply(http::status::ok, api::to_json(perf::estimate_campaign(*c, in.value(), model)));
        });
  });
}

void Controller::api_submit(const ApiCall& call) {
  auto self = shared_from_this();
  parse_posted(call, true, [self, call](Posted&& posted) {
    std::shared_ptr<Campaign> c = posted.campaign;
    self->db_.post<Result<CreatedCampaign>>(
        self->executor(),
        [c, sub = std::move(posted.submission), key = self->request_key()](Store& s) -> Result<CreatedCampaign> {
          JS_RETURN_IF_ERROR(check_model_files(s, *c));
          return s.create_campaign(*c, sub.source_file, sub.yaml, key);
        },
        [self, call, c](Result<CreatedCampaign> r) {
          if (!r) return call.fail(r.status());
          JS_LOG_INFO << "campaign " << r->campaign_id << " (" << c->name << ") submitted with " << r->runs << " runs and "
                      << c->adaptive_plans.size() << " adaptive plans";
          self->queue_changed();
          call.reply(http::status::created, api::to_json(api::CreatedCampaignReply{r->campaign_id, c->name, r->runs,
                                                                              static_cast<int64_t>(c->adaptive_plans.size())}));
          self->dispatch_all();
          if (!c->adaptive_plans.empty()) self->plan_adaptive();
        });
  });
}

void Controller::api_campaign_action(const ApiCall& call) {
  const api::CampaignStateChange change{call.parts[2], call.parts[3]};
  const std::string state = change.state();
  if (state.empty()) return call.no_such_endpoint();
  auto self = shared_from_this();
  db_.post<Result<api::CampaignStatus>>(
      executor(),
      [ref = change.ref, state](Store& s) -> Result<api::CampaignStatus> {
        JS_ASSIGN_OR_RETURN(int64_t id, s.resolve_campaign(ref));
        JS_RETURN_IF_ERROR(s.set_campaign_state(id, state));
        return s.campaign_status(id);
      },
      [self, call, state](Result<api::CampaignStatus> r) {
        if (r) JS_LOG_INFO << "campaign " << r->campaign_id << " is now " << state;
        call.reply(r);
        if (state == "active") {
          self->queue_changed();
          self->dispatch_all();
        }
        if (state == "cancelled") self->stop_cancelled_runs();
      });
}

void Controller::api_cancel_run(const ApiCall& call) {
  const std::string& ref = call.parts[2];
  const std::optional<int64_t> run_id = parse_int(ref);
  if (!run_id || *run_id <= 0 || ref.find_first_not_of("0123456789") != std::string::npos)
    return call.fail(http::status::bad_request, "run id '" + ref + "' is not a positive integer");
  auto self = shared_from_this();
  db_.post<Result<api::RunCancelled>>(
      executor(), [id = *run_id](Store& s) { return s.cancel_run(id); },
      [self, call, id = *run_id](Result<api::RunCancelled> r) {
        if (r) JS_LOG_INFO << "run " << id << " cancel requested: " << bj::serialize(api::to_json(r.value()));
        call.reply(r);
        self->stop_cancelled_runs();
      });
}

void Controller::api_revoke_agent(const ApiCall& call) {
  const std::string name = call.parts[2];
  if (auto bad = proto::agent_name_problem(name)) return call.fail(http::status::bad_request, "agent name " + *bad);
  auto self = shared_from_this();
  db_.post<Result<bool>>(
      executor(), [name](Store& s) { return s.revoke_agent_credential(name); },
      [self, call, name](Result<bool> r) {
        if (!r) return call.fail(r.status());
        api::AgentRevoked out{name, r.value(), false};
        // Whoever holds the revoked credential is disconnected now; the name enrolls again on its next registration.
        // Collected first: closing a session may erase it from agents_.
        std::vector<std::shared_ptr<AgentSession>> holders;
        for (auto& [id, weak] : self->agents_)
          if (auto session = weak.lock(); session && session->name() == name) holders.push_back(std::move(session));
        for (auto& session : holders) session->close("its credential was revoked");
        out.disconnected = !holders.empty();
        JS_LOG_WARN << "agent " << name << ": credential revoked by an API client"
                    << (out.had_credential ? "" : " (it had none)") << (out.disconnected ? "; disconnected it" : "");
        call.reply(http::status::ok, api::to_json(out));
      });
}

}  // namespace jetsweep::controller

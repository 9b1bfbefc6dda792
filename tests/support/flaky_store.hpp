// FlakyStore: a Store decorator that fails the calls a test names the way a PostgreSQL outage fails them, so the
// controller's use cases can be driven through every failure point (issue 32). A call fails with kUnavailable
// either before it reaches the store (nothing done) or after the store did it (committed, the answer lost: a
// connection that broke after COMMIT, before its acknowledgement). A failure during the commit is one of those two
// to the caller, who cannot tell which (the commit is in doubt), so these two cover it. DbWorker retries
// kUnavailable, so each injected failure is a retry of a use case the store must take as the same use case.
// Thread-safe: the plan and the log under a mutex (the test thread plans, the DbWorker thread calls). A call can
// also be held after it is made (hold_after), to order the controller's io-thread events against the database's.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "controller/store.hpp"

namespace jetsweep::testing {

class FlakyStore : public controller::Store {
 public:
  enum class When { kBefore, kAfter };
  static const char* when_name(When w) { return w == When::kBefore ? "before" : "after"; }

  explicit FlakyStore(std::unique_ptr<controller::Store> inner) : inner_(std::move(inner)) {}
  controller::Store& inner() { return *inner_; }

  // The next `times` calls of `method` (its name, e.g. "claim_run") fail `when`.
  void fail(const std::string& method, When when, int times = 1) {
    std::lock_guard lock(mu_);
    plan_[method] = {when, times};
  }
  // The next `times` calls of `method` are refused as a database error (kDbError, as for data the store cannot
  // keep), without reaching the store.
  void refuse(const std::string& method, int times = 1) {
    std::lock_guard lock(mu_);
    refusals_[method] = times;
  }
  // The next call of `method` is made, then holds the database thread until release(): what the controller posts
  // meanwhile queues behind a write already done, whose answer has not reached the io thread yet.
  void hold_after(const std::string& method) {
    std::lock_guard lock(mu_);
    hold_ = method;
    holding_ = false;
  }
  // Whether the held call is waiting now.
  bool holding() const {
    std::lock_guard lock(mu_);
    return holding_;
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      hold_.clear();
    }
    released_.notify_all();
  }
  // How many calls of `method` were made (failed ones included), and how many were failed.
  int64_t calls(const std::string& method) const {
    std::lock_guard lock(mu_);
    auto it = calls_.find(method);
    return it == calls_.end() ? 0 : it->second;
  }
  int64_t failed(const std::string& method) const {
    std::lock_guard lock(mu_);
    auto it = failed_.find(method);
    return it == failed_.end() ? 0 : it->second;
  }

  Status migrate() override { return call("migrate", [&] { return inner_->migrate(); }); }
  Status reset_connections() override { return call("reset_connections", [&] { return inner_->reset_connections(); }); }
  Result<controller::AgentRegistration> register_agent(const proto::Register& reg,
                                                       const controller::AgentProof& proof) override {
    return call("register_agent", [&] { return inner_->register_agent(reg, proof); });
  }
  Result<controller::AgentRegistration> admit_agent(const proto::Register& reg, const controller::AgentProof& proof,
                                                    const std::string& why) override {
    return call("admit_agent", [&] { return inner_->admit_agent(reg, proof, why); });
  }
  Result<bool> revoke_agent_credential(const std::string& name) override {
    return call("revoke_agent_credential", [&] { return inner_->revoke_agent_credential(name); });
  }
  Status set_agent_connected(int64_t agent_id, bool connected) override {
    return call("set_agent_connected", [&] { return inner_->set_agent_connected(agent_id, connected); });
  }
  Result<int64_t> requeue_agent_runs(int64_t agent_id, const std::vector<int64_t>& keep_runs,
                                     const std::string& why) override {
    return call("requeue_agent_runs", [&] { return inner_->requeue_agent_runs(agent_id, keep_runs, why); });
  }
  Result<int64_t> requeue_orphaned_runs(double lease_s) override {
    return call("requeue_orphaned_runs", [&] { return inner_->requeue_orphaned_runs(lease_s); });
  }
  Status record_clock(int64_t agent_id, double offset_s, double rtt_s,
                      const std::optional<controller::BootClockOffset>& boot) override {
    return call("record_clock", [&] { return inner_->record_clock(agent_id, offset_s, rtt_s, boot); });
  }
  Status record_boot_offset(int64_t agent_id, const controller::BootClockOffset& boot) override {
    return call("record_boot_offset", [&] { return inner_->record_boot_offset(agent_id, boot); });
  }
  Status set_campaign_state(int64_t campaign_id, const std::string& state) override {
    return call("set_campaign_state", [&] { return inner_->set_campaign_state(campaign_id, state); });
  }
  Result<std::optional<controller::Assignment>> claim_run(int64_t agent_id, const std::string& device_class,
                                                         const std::string& claim_key) override {
    return call("claim_run", [&] { return inner_->claim_run(agent_id, device_class, claim_key); });
  }
  Result<api::RunCancelled> cancel_run(int64_t run_id) override {
    return call("cancel_run", [&] { return inner_->cancel_run(run_id); });
  }
  Result<std::vector<controller::RunOnAgent>> runs_to_stop() override {
    return call("runs_to_stop", [&] { return inner_->runs_to_stop(); });
  }
  Status unclaim_run(int64_t run_id, int64_t agent_id) override {
    return call("unclaim_run", [&] { return inner_->unclaim_run(run_id, agent_id); });
  }
  Result<controller::IngestOutcome> start_run(int64_t agent_id, const proto::RunStarted& m) override {
    return call("start_run", [&] { return inner_->start_run(agent_id, m); });
  }
  Result<controller::IngestOutcome> ingest_minibatches(int64_t agent_id, const proto::MinibatchChunk& m) override {
    return call("ingest_minibatches", [&] { return inner_->ingest_minibatches(agent_id, m); });
  }
  Result<controller::IngestOutcome> ingest_epoch(int64_t agent_id, const proto::EpochResult& m) override {
    return call("ingest_epoch", [&] { return inner_->ingest_epoch(agent_id, m); });
  }
  Result<controller::IngestOutcome> ingest_samples(int64_t agent_id, const proto::SampleChunk& m) override {
    return call("ingest_samples", [&] { return inner_->ingest_samples(agent_id, m); });
  }
  Result<controller::IngestOutcome> finish_run(int64_t agent_id, const proto::RunFinished& m) override {
    return call("finish_run", [&] { return inner_->finish_run(agent_id, m); });
  }
  Result<controller::IngestOutcome> record_reboot(int64_t agent_id, const proto::RebootPending& m) override {
    return call("record_reboot", [&] { return inner_->record_reboot(agent_id, m); });
  }
  Result<controller::IngestOutcome> set_aside_refused(int64_t agent_id, const proto::Body& body,
                                                      const std::string& why) override {
    return call("set_aside_refused", [&] { return inner_->set_aside_refused(agent_id, body, why); });
  }
  // The inner store's group commit (PgStore's one transaction, or the default one by one), failed as a whole.
  Status ingest_batch(std::vector<controller::IngestItem>& items) override {
    return call("ingest_batch", [&] { return inner_->ingest_batch(items); });
  }
  Result<perf::EstimateInputs> estimate_inputs() override {
    return call("estimate_inputs", [&] { return inner_->estimate_inputs(); });
  }
  Result<std::vector<perf::BoardGatingFacts>> enrolled_board_facts() override {
    return call("enrolled_board_facts", [&] { return inner_->enrolled_board_facts(); });
  }
  Result<controller::CreatedCampaign> create_campaign(const Campaign& c, const std::string& source_file,
                                                     const std::string& source_yaml,
                                                     const std::string& request_key) override {
    return call("create_campaign", [&] { return inner_->create_campaign(c, source_file, source_yaml, request_key); });
  }
  Result<int64_t> resolve_campaign(const std::string& ref) override {
    return call("resolve_campaign", [&] { return inner_->resolve_campaign(ref); });
  }
  Result<api::CampaignStatus> campaign_status(int64_t campaign_id) override {
    return call("campaign_status", [&] { return inner_->campaign_status(campaign_id); });
  }
  Result<std::vector<api::CampaignStatus>> list_campaigns() override {
    return call("list_campaigns", [&] { return inner_->list_campaigns(); });
  }
  Result<api::CampaignReport> campaign_report(int64_t campaign_id, controller::ReportEpochs epochs) override {
    return call("campaign_report", [&] { return inner_->campaign_report(campaign_id, epochs); });
  }
  Result<std::vector<api::AgentInfo>> list_agents() override {
    return call("list_agents", [&] { return inner_->list_agents(); });
  }
  Result<api::RunDetail> run_detail(int64_t run_id) override {
    return call("run_detail", [&] { return inner_->run_detail(run_id); });
  }
  Result<std::vector<api::RunSample>> run_samples(int64_t run_id) override {
    return call("run_samples", [&] { return inner_->run_samples(run_id); });
  }
  Result<std::vector<controller::AgentApplied>> agents_applied() override {
    return call("agents_applied", [&] { return inner_->agents_applied(); });
  }
  Status put_model_chunk(const std::string& sha256, int64_t index, const std::string& data) override {
    return call("put_model_chunk", [&] { return inner_->put_model_chunk(sha256, index, data); });
  }
  Result<controller::ModelFileInfo> complete_model_file(const std::string& sha256, int64_t bytes) override {
    return call("complete_model_file", [&] { return inner_->complete_model_file(sha256, bytes); });
  }
  Result<std::optional<controller::ModelFileInfo>> model_file(const std::string& sha256) override {
    return call("model_file", [&] { return inner_->model_file(sha256); });
  }
  Result<std::string> model_file_chunk(const std::string& sha256, int64_t index) override {
    return call("model_file_chunk", [&] { return inner_->model_file_chunk(sha256, index); });
  }
  Result<std::vector<controller::DuePlan>> adaptive_plans_due() override {
    return call("adaptive_plans_due", [&] { return inner_->adaptive_plans_due(); });
  }
  Result<bool> add_adaptive_round(int64_t plan_id, int64_t round, const std::vector<ModeSettings>& modes,
                                  const boost::json::object& fit) override {
    return call("add_adaptive_round", [&] { return inner_->add_adaptive_round(plan_id, round, modes, fit); });
  }
  Status finish_adaptive_plan(int64_t plan_id, const std::string& state, const boost::json::object& fit,
                              const std::string& error) override {
    return call("finish_adaptive_plan", [&] { return inner_->finish_adaptive_plan(plan_id, state, fit, error); });
  }

 private:
  // Whether this call of `method` is to fail, and when; counts it.
  std::optional<When> next_failure(const char* method) {
    std::lock_guard lock(mu_);
    ++calls_[method];
    auto it = plan_.find(method);
    if (it == plan_.end() || it->second.second <= 0) return std::nullopt;
    --it->second.second;
    ++failed_[method];
    return it->second.first;
  }
  bool next_refusal(const char* method) {
    std::lock_guard lock(mu_);
    auto it = refusals_.find(method);
    if (it == refusals_.end() || it->second <= 0) return false;
    --it->second;
    ++calls_[method];
    ++failed_[method];
    return true;
  }
  template <class Fn>
  auto call(const char* method, Fn&& fn) -> decltype(fn()) {
    if (next_refusal(method))
      return db_error(std::string(method) + ": ERROR:  value refused (FlakyStore) [sqlstate 22003]");
    const std::optional<When> failure = next_failure(method);
    const Status lost = unavailable(std::string(method) + ": connection to PostgreSQL lost (FlakyStore, " +
                                    when_name(failure.value_or(When::kBefore)) + " the call)");
    if (failure == When::kBefore) return lost;
    auto result = fn();
    {
      std::unique_lock lock(mu_);
      if (hold_ == method) {
        holding_ = true;
        released_.wait(lock, [&] { return hold_ != method; });
        holding_ = false;
      }
    }
    if (failure == When::kAfter) return lost;
    return result;
  }

  std::unique_ptr<controller::Store> inner_;
  mutable std::mutex mu_;
  std::map<std::string, std::pair<When, int>> plan_;
  std::map<std::string, int> refusals_;   // refuse's
  std::map<std::string, int64_t> calls_, failed_;
  std::string hold_;   // hold_after's method
  bool holding_ = false;
  std::condition_variable released_;
};

}  // namespace jetsweep::testing

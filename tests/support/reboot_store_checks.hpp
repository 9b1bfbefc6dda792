// What every Store keeps of board reboots (issue 28; Store::record_reboot, claim_run, requeue_orphaned_runs):
// claims take runs whose mode applies on the board as booted first (fewest reboots), the others only for an agent
// that may reboot (status names the mode the runs wait for meanwhile), an agent away rebooting
// keeps its run past the lease until its expected return and loses it after, naming the reboot, a replayed
// announcement is recorded once, and coming back clears the absence. Run against MemoryStore
// (a manual clock) and PgStore (real time), in tests/store. One test thread.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "common/campaign.hpp"
#include "controller/store.hpp"

namespace jetsweep::testing {

// An agent booted in MODE_30W without permission to reboot claims nothing of a campaign whose MAXN and MODE_15W
// runs are left: they wait, and the campaign's status says for what.
inline void check_waiting_for_a_reboot(controller::Store& store, int64_t agent, int64_t campaign_id) {
  auto none = store.claim_run(agent, "agx-orin", "");
  REQUIRE(none.is_ok());
  CHECK_FALSE(none->has_value());
  auto waiting = store.campaign_status(campaign_id);
  REQUIRE(waiting.is_ok());
  CHECK(waiting->unrunnable_runs == 2);
  REQUIRE(waiting->unrunnable.size() == 2);
  for (const auto& u : waiting->unrunnable)
    CHECK_MESSAGE((u.reason.find("1 run needs nvpmodel mode M") == 0 &&
                   u.reason.find("; the enrolled boards of 'agx-orin' booted with other GPU masks and no agent may "
                                 "reboot into it (start one with --allow-reboot") != std::string::npos),
                  u.reason);
}

// `pass(s)`: makes `s` seconds pass on the store's clock. Leases of 1 s, reboots expected back in 3 s.
inline void check_reboot_semantics(controller::Store& store, const std::function<void(double)>& pass) {
  // Enrolls on first contact, presents the same credential after.
  const controller::AgentProof proof{std::string(64, 'b'), std::string(64, 'b')};
  auto orin = [&](std::vector<std::string> live, bool may_reboot = true) {
    proto::Register reg;
    reg.name = "orin-1";
    reg.facts.hostname = "orin-1.test";
    reg.facts.cpus = 12;
    reg.facts.mem_bytes = int64_t{64} << 30;
    reg.facts.backend = "jetson";
    reg.facts.device_class = "agx-orin";
    reg.facts.board_id = "jetson:orin-1:/";
    reg.facts.live_modes = std::move(live);
    reg.facts.may_reboot = may_reboot;
    auto r = store.register_agent(reg, proof);
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return r->agent_id;
  };
  const std::string yaml =
      "campaign: gating\nmatrix: {model: lenet5, dataset: mnist, device: agx-orin, power_mode: [MAXN, MODE_15W, MODE_30W]}\n";
  auto parsed = parse_campaign(yaml, "gating.yaml");
  REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
  auto created = store.create_campaign(parsed.value(), "gating.yaml", yaml, "");
  REQUIRE_MESSAGE(created.is_ok(), created.status().to_string());
  auto claim = [&](int64_t agent) {
    auto a = store.claim_run(agent, "agx-orin", "");
    REQUIRE_MESSAGE(a.is_ok(), a.status().to_string());
    REQUIRE(a->has_value());
    return **a;
  };
  auto run_of = [&](int64_t run_id) {
    auto d = store.run_detail(run_id);
    REQUIRE_MESSAGE(d.is_ok(), d.status().to_string());
    return static_cast<const api::ReportRun&>(*d);
  };

  // Booted in MODE_30W (masks 240): its run first although MAXN's and MODE_15W's are older.
  int64_t agent = orin({"MODE_30W", "2"}, false);
  const controller::Assignment first = claim(agent);
  CHECK(first.config.power_mode.name == "MODE_30W");
  REQUIRE(store.finish_run(agent, proto::RunFinished{first.run_id, "done", "", 1.0}).is_ok());
  check_waiting_for_a_reboot(store, agent, created->campaign_id);
  agent = orin({"MODE_30W", "2"});   // restarted with --allow-reboot
  auto reachable = store.campaign_status(created->campaign_id);
  REQUIRE(reachable.is_ok());
  CHECK(reachable->unrunnable_runs == 0);
  // None left that applies as booted: the oldest, MAXN, which needs a reboot.
  const controller::Assignment maxn = claim(agent);
  CHECK(maxn.config.power_mode.name == "MAXN");
  const proto::RebootPending reboot{maxn.run_id, "MAXN", 0, 240, 0, std::nullopt, std::nullopt, 3, 1763770000.5};
  REQUIRE(store.record_reboot(agent, reboot).is_ok());
  REQUIRE(store.record_reboot(agent, reboot).is_ok());   // a journal replay: the same reboot
  CHECK(run_of(maxn.run_id).reboots == 1);
  REQUIRE(store.set_agent_connected(agent, false).is_ok());
  auto rebooting = [&] {
    auto agents = store.list_agents();
    REQUIRE(agents.is_ok());
    REQUIRE(agents->size() == 1);
    return agents->front().rebooting_until.has_value();
  };
  CHECK(rebooting());   // `jetsweep agents`: rebooting, its run and board held
  pass(1.5);
  auto requeued = store.requeue_orphaned_runs(1);
  REQUIRE(requeued.is_ok());
  CHECK(requeued.value() == 0);   // past the 1 s lease, but away rebooting for 3 s
  CHECK(run_of(maxn.run_id).status == "assigned");
  pass(2.0);
  requeued = store.requeue_orphaned_runs(1);
  REQUIRE(requeued.is_ok());
  CHECK(requeued.value() == 1);   // not back in time
  CHECK_FALSE(rebooting());
  const api::ReportRun lost_reboot = run_of(maxn.run_id);
  CHECK(lost_reboot.status == "queued");
  CHECK_MESSAGE(lost_reboot.error.find("agent orin-1 rebooted its board and did not come back by ") == 0, lost_reboot.error);

  // Back in MAXN: the requeued MAXN run; a second reboot for it, and the agent comes back: no longer away.
  agent = orin({"MAXN", "0", "MODE_50W", "3"});
  const controller::Assignment again = claim(agent);
  CHECK(again.run_id == maxn.run_id);
  REQUIRE(store.record_reboot(agent, proto::RebootPending{again.run_id, "MAXN", 0, 240, 0, std::nullopt, std::nullopt, 3,
                                                           1763770100.5})
              .is_ok());
  CHECK(run_of(maxn.run_id).reboots == 2);
  CHECK(orin({"MAXN", "0"}) == agent);
  REQUIRE(store.set_agent_connected(agent, false).is_ok());
  pass(1.5);
  requeued = store.requeue_orphaned_runs(1);
  REQUIRE(requeued.is_ok());
  CHECK(requeued.value() == 1);   // an ordinary lease now
  CHECK(run_of(maxn.run_id).error.find("disconnected for more than 1 s") != std::string::npos);
  // A reboot for a run the agent does not own is not recorded.
  REQUIRE(store.record_reboot(agent, proto::RebootPending{first.run_id, "MAXN", 0, 240, 0, std::nullopt, std::nullopt,
                                                           3, 1763770200.5})
              .is_ok());
  CHECK(run_of(first.run_id).reboots == 0);
}

// enrolled_board_facts: every enrolled board by name with the tables it registered (none for a host), replaced
// when it registers again; a claimed run's facts leave the tables in the agent's row.
inline void check_enrolled_board_facts(controller::Store& store) {
  const controller::AgentProof proof{std::string(64, 'c'), std::string(64, 'c')};
  auto enroll = [&](const std::string& name, const std::string& cls, std::optional<BoardTables> tables) {
    proto::Register reg;
    reg.name = name;
    reg.facts.hostname = name + ".test";
    reg.facts.cpus = 12;
    reg.facts.mem_bytes = int64_t{64} << 30;
    reg.facts.backend = cls == "host" ? "host" : "jetson";
    reg.facts.device_class = cls;
    reg.facts.tables = std::move(tables);
    auto r = store.register_agent(reg, proof);
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return r->agent_id;
  };
  BoardTables own{std::string(kTablesFromBoard), 12, {115200, 2201600}, {306000000, 408000000}, {204000000, 3199000000}};
  const int64_t orin = enroll("orin-2", "agx-orin", own);
  enroll("host-1", "host", std::nullopt);
  auto facts = store.enrolled_board_facts();
  REQUIRE_MESSAGE(facts.is_ok(), facts.status().to_string());
  REQUIRE(facts->size() == 2);
  CHECK(facts->at(0).name == "host-1");
  CHECK_FALSE(facts->at(0).tables.has_value());
  CHECK(facts->at(1).name == "orin-2");
  REQUIRE(facts->at(1).tables.has_value());
  CHECK(*facts->at(1).tables == own);
  own.gpu_hz.push_back(1300500000);   // registers again after a BSP update
  enroll("orin-2", "agx-orin", own);
  facts = store.enrolled_board_facts();
  REQUIRE(facts.is_ok());
  REQUIRE(facts->size() == 2);
  CHECK(*facts->at(1).tables == own);
  auto in = store.estimate_inputs();
  REQUIRE(in.is_ok());
  REQUIRE(in->gating.size() == 2);
  CHECK(in->gating[1].tables == facts->at(1).tables);

  const std::string yaml = "campaign: t\nmatrix: {model: lenet5, dataset: mnist, device: agx-orin}\n";
  auto parsed = parse_campaign(yaml, "t.yaml");
  REQUIRE(parsed.is_ok());
  REQUIRE(store.create_campaign(parsed.value(), "t.yaml", yaml, "").is_ok());
  auto claimed = store.claim_run(orin, "agx-orin", "");
  REQUIRE(claimed.is_ok());
  REQUIRE(claimed->has_value());
  auto detail = store.run_detail((*claimed)->run_id);
  REQUIRE(detail.is_ok());
  REQUIRE(detail->facts.has_value());
  CHECK_FALSE(detail->facts->contains("tables"));
  CHECK(detail->facts->contains("may_reboot"));
}

}  // namespace jetsweep::testing

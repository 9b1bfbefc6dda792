// What only the in-memory Store can show: a lease measured on its injected clock to the exact boundary. Its contract
// with PgStore (every Store method) is the conformance suite in tests/store/.
#include <doctest/doctest.h>

#include "controller/memory_store.hpp"
#include "support/manual_clock.hpp"
#include "support/protocol_client.hpp"

using namespace jetsweep;
using jetsweep::controller::MemoryStore;
using jetsweep::testing::ManualClock;
using jetsweep::testing::test_register;

TEST_SUITE("memory store") {

TEST_CASE("runs of an agent disconnected for longer than the lease are requeued, by the injected clock") {
  ManualClock clock;
  MemoryStore store{2, [&] { return clock.now(); }};
  const std::string yaml = "campaign: c\nmatrix: {model: lenet5, dataset: mnist, device: host}\n";
  auto parsed = parse_campaign(yaml, "test.yaml");
  REQUIRE(parsed.is_ok());
  REQUIRE(store.create_campaign(parsed.value(), "test.yaml", yaml, "").is_ok());
  auto registered = store.register_agent(test_register("host-1"), {std::nullopt, std::string(64, 'a')});
  REQUIRE(registered.is_ok());
  const int64_t host = registered->agent_id;
  auto claimed = store.claim_run(host, "host", "");
  REQUIRE(claimed.is_ok());
  REQUIRE(claimed->has_value());
  const int64_t run = (*claimed)->run_id;
  clock.advance(100);
  CHECK(store.requeue_orphaned_runs(30).value() == 0);   // connected: no lease runs
  REQUIRE(store.set_agent_connected(host, false).is_ok());
  clock.advance(30);
  CHECK(store.requeue_orphaned_runs(30).value() == 0);   // exactly the lease: not yet
  clock.advance(0.5);
  CHECK(store.requeue_orphaned_runs(30).value() == 1);
  CHECK(store.run(run)->status == "queued");
  CHECK(store.run(run)->error == "agent host-1 disconnected for more than 30 s");
}

}  // TEST_SUITE

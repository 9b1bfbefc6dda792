// Shared helpers of the agent, workload and training tests: a RunConfig built from the few fields a test
// sets, and the check that a refused run fails with a message naming the refusal and emits nothing but its
// run_finished. Single-threaded: the run and the checks happen on the test's thread. C++17.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "agent/run_executor.hpp"
#include "common/run_config.hpp"
#include "support/collecting_sink.hpp"

namespace jetsweep::testing {

// A run of `model` on `dataset` with `batch_size`, `workers` loader workers and `epochs` epochs; every other
// field keeps RunConfig's default.
inline RunConfig make_run(const std::string& model, const std::string& dataset, int64_t batch_size, int64_t workers,
                          int64_t epochs) {
  RunConfig c;
  c.model = model;
  c.dataset = dataset;
  c.batch_size = batch_size;
  c.workers = workers;
  c.epochs = epochs;
  return c;
}

// A RunExecutor on simulated board `cls`/`instance` at time scale `scale` (0: no waiting).
inline std::unique_ptr<agent::RunExecutor> sim_executor(const std::string& cls, const std::string& instance, double scale) {
  agent::ExecutorOptions o;
  o.backend = "sim";
  o.sim_class = cls;
  o.sim_instance = instance;
  o.time_scale = scale;
  auto ex = agent::RunExecutor::open(o);
  REQUIRE_MESSAGE(ex.is_ok(), ex.status().to_string());
  return std::move(ex).value();
}

// Executes `c` as run `run_id` and checks it was refused: status "failed", every one of `needles` in the
// error, and run_finished the only message emitted. Returns the error.
inline std::string expect_refused(agent::RunExecutor& ex, int64_t run_id, const RunConfig& c,
                                  std::initializer_list<const char*> needles) {
  CollectingSink sink;
  std::atomic<bool> cancel{false};
  const auto fin = ex.execute(run_id, c, sink, cancel);
  CHECK(fin.status == "failed");
  for (const char* needle : needles) CHECK_MESSAGE(fin.error.find(needle) != std::string::npos, needle << ": " << fin.error);
  CHECK(sink.messages.size() == 1);
  return fin.error;
}

}  // namespace jetsweep::testing

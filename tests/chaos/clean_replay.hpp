// The chaos soak's verdict on one finished campaign of simulated boards (issue 32): every run done once, and every
// epoch, minibatch and sample row it stored present exactly once and equal to a clean replay - the same run config
// executed again, in this process, by the agent's RunExecutor on the same simulated board (class and instance)
// with no faults and no waiting, its messages passed through the wire codec. Simulated boards model each epoch from the run's seed, so a run re-executed after a
// fault, or resent from a journal, must store exactly what the clean replay emits. One test thread.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <pqxx/pqxx>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/run_checks.hpp"
#include "support/test_database.hpp"

namespace jetsweep::testing {

// What was compared, summed over runs.
struct ReplayTally {
  int64_t runs = 0, epochs = 0, minibatches = 0, samples = 0, mismatched_runs = 0;
};

namespace replay_detail {

// A float4 column's value as stored (the compact chunks keep minibatch and sample figures as float4).
inline float as_float(double v) { return static_cast<float>(v); }

inline std::optional<double> optional_double(const pqxx::field& f) {
  return f.is_null() ? std::nullopt : std::optional<double>(f.as<double>());
}

inline std::string epoch_line(int64_t epoch, double e2e, double stall, double compute, int64_t minibatches,
                              const std::optional<double>& energy) {
  std::ostringstream o;
  o.precision(17);
  o << epoch << ' ' << e2e << ' ' << stall << ' ' << compute << ' ' << minibatches << ' '
    << (energy ? std::to_string(*energy) : std::string("null"));
  return o.str();
}

}  // namespace replay_detail

// Checks campaign `campaign_id` in `db` against clean replays. `board_of(agent_name)` names the simulated board
// (class, instance) that agent ran on. Returns what it compared.
inline ReplayTally check_equal_to_clean_replay(const TestDatabase& db, int64_t campaign_id,
                                               const std::function<std::pair<std::string, std::string>(const std::string&)>& board_of) {
  using replay_detail::as_float;
  using replay_detail::optional_double;
  ReplayTally tally;
  pqxx::connection c(db.dsn());
  pqxx::work w(c);
  const std::string cid = std::to_string(campaign_id);
  for (const auto& r : w.exec("SELECT id, status, attempts, error FROM runs WHERE campaign_id = " + cid +
                              " AND status <> 'done' ORDER BY id"))
    FAIL_CHECK("run " << std::string(r[0].c_str()) << " is " << std::string(r[1].c_str()) << " after " << std::string(r[2].c_str()) << " attempts: " << std::string(r[3].c_str()));
  const auto runs = w.exec("SELECT r.id, r.config::text, a.name FROM runs r JOIN agents a ON a.id = r.agent_id "
                           "WHERE r.campaign_id = " + cid + " ORDER BY r.id");
  for (const auto& row : runs) {
    const int64_t run_id = row[0].as<int64_t>();
    const std::string rid = std::to_string(run_id);
    CAPTURE(run_id);
    auto config = run_config_from_json(boost::json::parse(row[1].c_str()).as_object(), "run " + rid);
    REQUIRE_MESSAGE(config.is_ok(), config.status().to_string());
    const auto [cls, instance] = board_of(row[2].c_str());
    CollectingSink emitted;
    std::atomic<bool> cancel{false};
    const auto finished = sim_executor(cls, instance, 0)->execute(run_id, config.value(), emitted, cancel);
    REQUIRE(finished.status == "done");
    // What the controller receives: each message through the wire codec (Boost.JSON 1.81's parser is not correctly
    // rounded: a double can come back 1 ulp off, the same for every delivery of the same frame).
    CollectingSink sink;
    for (const auto& m : emitted.messages) {
      auto decoded = proto::decode(proto::encode(proto::Envelope{1, m}));
      REQUIRE_MESSAGE(decoded.is_ok(), decoded.status().to_string());
      sink.emit(decoded->body);
    }

    std::vector<std::string> want_epochs, got_epochs;
    for (const auto& e : sink.epochs())
      want_epochs.push_back(replay_detail::epoch_line(e.epoch, e.e2e_s, e.stall_s, e.compute_s, e.minibatches, e.energy_j));
    for (const auto& r : w.exec("SELECT epoch, e2e_s, stall_s, compute_s, minibatches, energy_j FROM epochs "
                                "WHERE run_id = " + rid + " ORDER BY epoch"))
      got_epochs.push_back(replay_detail::epoch_line(r[0].as<int64_t>(), r[1].as<double>(), r[2].as<double>(),
                                                     r[3].as<double>(), r[4].as<int64_t>(), optional_double(r[5])));

    std::vector<std::tuple<int64_t, int64_t, float, float>> want_mb, got_mb;
    for (const auto& chunk : sink.chunks())
      for (size_t i = 0; i < chunk.stall_s.size(); ++i)
        want_mb.emplace_back(chunk.epoch, chunk.first_index + static_cast<int64_t>(i), as_float(chunk.stall_s[i]),
                             as_float(chunk.compute_s[i]));
    std::sort(want_mb.begin(), want_mb.end());
    for (const auto& r : w.exec("SELECT epoch, idx, stall_s, compute_s FROM minibatches WHERE run_id = " + rid +
                                " ORDER BY epoch, idx"))
      got_mb.emplace_back(r[0].as<int64_t>(), r[1].as<int64_t>(), as_float(r[2].as<double>()), as_float(r[3].as<double>()));

    std::vector<std::pair<float, std::optional<float>>> want_samples, got_samples;
    for (const auto& s : sink.samples())
      want_samples.emplace_back(as_float(s.t_s), s.power_w ? std::optional<float>(as_float(*s.power_w)) : std::nullopt);
    for (const auto& r : w.exec("SELECT t_s, power_w FROM samples WHERE run_id = " + rid + " ORDER BY t_s")) {
      const auto p = optional_double(r[1]);
      got_samples.emplace_back(as_float(r[0].as<double>()), p ? std::optional<float>(as_float(*p)) : std::nullopt);
    }

    const bool same = want_epochs == got_epochs && want_mb == got_mb && want_samples == got_samples;
    CHECK_MESSAGE(want_epochs == got_epochs, "epochs: " << got_epochs.size() << " stored, " << want_epochs.size() << " replayed");
    CHECK_MESSAGE(want_mb == got_mb, "minibatches: " << got_mb.size() << " stored, " << want_mb.size() << " replayed");
    CHECK_MESSAGE(want_samples == got_samples,
                  "samples: " << got_samples.size() << " stored, " << want_samples.size() << " replayed");
    ++tally.runs;
    tally.epochs += static_cast<int64_t>(got_epochs.size());
    tally.minibatches += static_cast<int64_t>(got_mb.size());
    tally.samples += static_cast<int64_t>(got_samples.size());
    tally.mismatched_runs += same ? 0 : 1;
  }
  return tally;
}

}  // namespace jetsweep::testing

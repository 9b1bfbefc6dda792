// PgStore: campaigns submitted (expanded, queued in dispatch order) and what their estimates need.
#include <pqxx/pqxx>

#include <algorithm>
#include <map>
#include <tuple>

#include "common/board_classes.hpp"
#include "common/json_parse.hpp"
#include "controller/pg_store.hpp"
#include "controller/pg_util.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

Result<CreatedCampaign> PgStore::create_campaign(const Campaign& c, const std::string& source_file,
                                                 const std::string& source_yaml, const std::string& request_key) {
  return guarded("storing the campaign", [&]() -> Result<CreatedCampaign> {
    pqxx::work w(*conn_);
    // A retry of a submission that committed: the campaign it created.
    if (!request_key.empty()) {
      auto again = w.exec_params("SELECT id, (SELECT count(*) FROM runs WHERE campaign_id = c.id) AS runs FROM campaigns c "
                                 "WHERE request_key = $1", request_key);
      if (!again.empty()) {
        w.commit();
        return CreatedCampaign{again[0]["id"].as<int64_t>(), again[0]["runs"].as<int64_t>()};
      }
    }
    auto r = w.exec_params(
        "INSERT INTO campaigns (name, description, source_file, source_yaml, run_count, priority, request_key) "
        "VALUES ($1,$2,$3,$4,$5,$6,nullif($7, '')) RETURNING id",
        c.name, c.description, source_file, source_yaml, static_cast<int64_t>(c.runs.size()), c.priority, request_key);
    const int64_t id = r[0][0].as<int64_t>();
    // "CLASS/*": one run per enrolled board of the class (by name), in place of the pattern. Each run's
    // board class (for the queue order of named modes): its device's, or its named board's.
    const Campaign* campaign = &c;
    Campaign expanded;
    std::vector<std::string> expanded_classes;   // per expanded run: the CLASS/* class, else ""
    std::map<std::string, std::string> class_of_agent = pg::agent_classes(w);
    auto class_of = [&](const std::string& device) {
      std::string cls = device_target_class(device);
      if (cls.empty() && class_of_agent.count(device)) cls = class_of_agent[device];
      return cls;
    };
    if (std::any_of(c.runs.begin(), c.runs.end(), [](const RunConfig& run) { return is_every_instance(run.device); })) {
      std::map<std::string, std::vector<std::string>> boards;
      expanded.dispatch_by_power_mode = c.dispatch_by_power_mode;
      for (const auto& run : c.runs) {
        if (!is_every_instance(run.device)) {
          expanded.runs.push_back(run);
          continue;
        }
        const std::string cls = device_target_class(run.device);
        auto it = boards.find(cls);
        if (it == boards.end()) {
          std::vector<std::string> names;
          for (const auto& row :
               w.exec_params(std::string(pg::kEnrolledBoardsSql) + " SELECT name FROM enrolled WHERE device_class = $1 ORDER BY name", cls))
            names.emplace_back(row[0].c_str());
          if (names.empty())
            return invalid_argument("campaign '" + c.name + "': '" + run.device + "' matches no board: no agent of class '" +
                                    cls + "' is connected or was seen in the last 24 hours (start them, then submit)");
          it = boards.emplace(cls, std::move(names)).first;
        }
        for (const auto& name : it->second) {
          expanded.runs.push_back(run);
          expanded.runs.back().device = name;
          expanded_classes.resize(expanded.runs.size());
          expanded_classes.back() = cls;   // the pattern's class, whatever the board's name says
        }
      }
      expanded_classes.resize(expanded.runs.size());
      if (static_cast<int64_t>(expanded.runs.size()) > kMaxRunsPerCampaign)
        return invalid_argument("campaign '" + c.name + "': more than " + std::to_string(kMaxRunsPerCampaign) +
                                " runs once 'CLASS/*' is expanded");
      campaign = &expanded;
      w.exec_params("UPDATE campaigns SET run_count = $2 WHERE id = $1", id, static_cast<int64_t>(expanded.runs.size()));
    }
    w.exec("CREATE TEMP TABLE IF NOT EXISTS runs_stage (seq integer, ordinal integer, config jsonb, device text, "
           "epochs integer, min_mem_bytes bigint, storage text, unfit_classes text[]) ON COMMIT DELETE ROWS");
    {
      // Queued in dispatch order (ids follow it), each keeping its ordinal in the expansion.
      pqxx::stream_to copy(w, "runs_stage");
      int64_t seq = 0;
      std::vector<std::string> classes(campaign->runs.size());
      for (size_t i = 0; i < classes.size(); ++i)
        classes[i] = i < expanded_classes.size() && !expanded_classes[i].empty() ? expanded_classes[i]
                                                                                  : class_of(campaign->runs[i].device);
      for (size_t ordinal : dispatch_order(*campaign, classes)) {
        const RunConfig& run = campaign->runs[ordinal];
        const std::string medium = storage_medium_of(run.data);
        copy << std::make_tuple(seq++, static_cast<int64_t>(ordinal), bj::serialize(to_json(run)), run.device, run.epochs,
                                required_memory_bytes(run), medium.empty() ? nullptr : medium.c_str(),
                                pg::text_array_literal(classes_without_room(run)));
      }
      copy.complete();
    }
    w.exec_params("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, min_mem_bytes, storage, unfit_classes) "
                  "SELECT $1, ordinal, config, device, epochs, min_mem_bytes, storage, unfit_classes FROM runs_stage "
                  "ORDER BY seq",
                  id);
    pg_insert_adaptive_plans(w, id, c);
    w.commit();
    return CreatedCampaign{id, static_cast<int64_t>(campaign->runs.size())};
  });
}


Result<int64_t> PgStore::resolve_campaign(const std::string& ref) {
  return guarded("looking up the campaign", [&]() -> Result<int64_t> {
    pqxx::work w(*conn_);
    bool numeric = !ref.empty() && ref.find_first_not_of("0123456789") == std::string::npos && ref.size() < 18;
    pqxx::result r = numeric ? w.exec_params("SELECT id FROM campaigns WHERE id = $1", std::stoll(ref))
                             : w.exec_params("SELECT id FROM campaigns WHERE name = $1 ORDER BY id DESC LIMIT 1", ref);
    w.commit();
    if (r.empty()) return not_found("no campaign '" + ref + "'");
    return r[0][0].as<int64_t>();
  });
}

namespace {
// The enrolled boards by name, with their gating and reported tables (stored as registered: checked then).
Result<std::vector<perf::BoardGatingFacts>> enrolled_facts(pqxx::transaction_base& w) {
  std::vector<perf::BoardGatingFacts> out;
  for (const auto& row : w.exec(std::string(pg::kEnrolledBoardsSql) +
                                " SELECT e.name, e.device_class, array_to_json(a.live_modes)::text AS live_modes, "
                                "a.may_reboot, a.tables::text AS tables FROM enrolled e JOIN agents a ON a.name = e.name "
                                "ORDER BY e.name")) {
    perf::BoardGatingFacts b{row["name"].c_str(), row["device_class"].c_str(), pg::json_strings(row["live_modes"]),
                             row["may_reboot"].as<bool>(), {}};
    if (!row["tables"].is_null()) {
      boost::system::error_code ec;
      const bj::value v = json::parse_exact(row["tables"].c_str(), ec);
      if (ec || !v.is_object()) return Status(Code::kInternal, "agent " + b.name + ": stored tables are not a JSON object");
      JS_ASSIGN_OR_RETURN(b.tables, board_tables_from_json(v.get_object(), "agent " + b.name + " stored tables"));
    }
    out.push_back(std::move(b));
  }
  return out;
}
}  // namespace

Result<perf::EstimateInputs> PgStore::estimate_inputs() {
  return guarded("estimating the campaign", [&]() -> Result<perf::EstimateInputs> {
    pqxx::work w(*conn_);
    perf::EstimateInputs in;
    // The power mode as perf::power_mode_key() spells it (absent parts empty).
    auto measured = w.exec(
        "SELECT a.device_class, r.config->>'model' AS model, r.config->>'dataset' AS dataset, "
        "  r.config->>'batch_size' AS batch_size, "
        "  concat(r.config->'power_mode'->>'name', '/', r.config->'power_mode'->>'cores', '/', "
        "         r.config->'power_mode'->>'cpu_khz', '/', r.config->'power_mode'->>'gpu_hz', '/', "
        "         r.config->'power_mode'->>'emc_hz', '@' || (r.config->>'base_mode')) AS power_mode, "
        "  sum(e.e2e_s) AS sum_e2e_s, count(*) AS epochs "
        "FROM epochs e JOIN runs r ON r.id = e.run_id JOIN agents a ON a.id = r.agent_id "
        "GROUP BY 1, 2, 3, 4, 5");
    for (const auto& r : measured) {
      const pg::Row row(r);
      in.measured.push_back({row.text("device_class"), row.text("model"), row.text("dataset"), row.text("batch_size"),
                             row.text("power_mode"), row.number("sum_e2e_s"), row.integer("epochs")});
    }
    in.class_of_agent = pg::agent_classes(w);
    for (const auto& row :
         w.exec(std::string(pg::kEnrolledBoardsSql) + " SELECT device_class, count(*) AS boards FROM enrolled GROUP BY 1"))
      in.enrolled_boards[row["device_class"].c_str()] = row["boards"].as<int64_t>();
    JS_ASSIGN_OR_RETURN(in.gating, enrolled_facts(w));
    w.commit();
    return in;
  });
}

Result<std::vector<perf::BoardGatingFacts>> PgStore::enrolled_board_facts() {
  return guarded("reading the enrolled boards", [&]() -> Result<std::vector<perf::BoardGatingFacts>> {
    pqxx::read_transaction w(*conn_);
    return enrolled_facts(w);
  });
}

}  // namespace jetsweep::controller

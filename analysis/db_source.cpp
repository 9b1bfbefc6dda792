#include "analysis/db_source.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include <cstdlib>
#include <sstream>

namespace jetsweep::analysis {

namespace {

std::optional<double> opt(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<double>();
}

ModeKey mode_of(const pqxx::row& r, int first) {
  ModeKey m;
  if (r[first].is_null() || r[first + 1].is_null() || r[first + 2].is_null() || r[first + 3].is_null()) return m;
  m.cores = r[first].as<int>();
  m.cpu_mhz = r[first + 1].as<double>();
  m.gpu_mhz = r[first + 2].as<double>();
  m.emc_mhz = r[first + 3].as<double>();
  return m;
}

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(std::strtod(item.c_str(), nullptr));
  return out;
}

std::map<std::string, std::string> parse_software(const pqxx::field& f) {
  std::map<std::string, std::string> out;
  if (f.is_null()) return out;
  boost::system::error_code ec;
  auto v = boost::json::parse(f.c_str(), ec);
  if (ec || !v.is_object()) return out;
  for (const auto& kv : v.get_object())
    if (kv.value().is_string()) out[std::string(kv.key())] = std::string(kv.value().get_string());
  return out;
}

}  // namespace

Result<Corpus> load_corpus_from_db(const std::string& dsn, const DbFilter& filter) {
  try {
    pqxx::connection conn(dsn);
    pqxx::read_transaction tx(conn);
    // Campaign filter: an id, else a name.
    std::string where = "TRUE";
    if (!filter.campaign.empty()) {
      const bool numeric = filter.campaign.find_first_not_of("0123456789") == std::string::npos;
      where = numeric ? "campaign_id = " + tx.quote(std::stoll(filter.campaign))
                      : "campaign = " + tx.quote(filter.campaign);
      auto n = tx.exec1("SELECT count(*) FROM campaigns WHERE " +
                        std::string(numeric ? "id = " : "name = ") +
                        (numeric ? tx.quote(std::stoll(filter.campaign)) : tx.quote(filter.campaign)));
      if (n[0].as<int64_t>() == 0) return invalid_argument("--campaign: no campaign '" + filter.campaign + "'");
    }
    Corpus corpus;
    corpus.source = "database";
    corpus.epoch_times = true;
    auto modes = tx.exec(
        "SELECT device_class, workload, instance, coalesce(mode_name, ''), cores, cpu_mhz, gpu_mhz, emc_mhz, runs, "
        "epochs, minibatch_ms, power_mw, epoch_s, energy_j, array_to_string(epoch_minibatch_ms, ','), campaign_id "
        "FROM analysis_mode_profile WHERE " + where +
        " ORDER BY device_class, workload, cores, cpu_mhz, gpu_mhz, emc_mhz, instance, campaign_id");
    for (const auto& r : modes) {
      ModeRecord m;
      m.device = r[0].c_str();
      m.workload = r[1].c_str();
      m.instance = r[2].c_str();
      m.mode_name = r[3].c_str();
      m.mode = mode_of(r, 4);
      if (!m.mode.explicit_settings() && m.mode_name.empty()) m.mode_name = "default";
      m.runs = r[8].as<int>();
      m.epochs = r[9].as<int>();
      m.minibatch_ms = r[10].as<double>();
      m.power_mw = opt(r[11]);
      m.epoch_s = opt(r[12]);
      m.energy_j = opt(r[13]);
      m.epoch_minibatch_ms = parse_list(r[14].c_str());
      m.where = "campaign " + std::string(r[15].c_str()) + " " + m.device + "/" + m.instance;
      corpus.rows.push_back(std::move(m));
    }
    auto epochs = tx.exec(
        "SELECT device_class, workload, instance, coalesce(mode_name, ''), cores, cpu_mhz, gpu_mhz, emc_mhz, run_id, "
        "epoch, e2e_s, stall_s, compute_s, energy_j, power_w, minibatches, software::text "
        "FROM analysis_epochs WHERE " + where + " ORDER BY run_id, epoch");
    for (const auto& r : epochs) {
      EpochSample e;
      e.device = r[0].c_str();
      e.workload = r[1].c_str();
      e.instance = r[2].c_str();
      e.mode_name = r[3].c_str();
      e.mode = mode_of(r, 4);
      if (!e.mode.explicit_settings() && e.mode_name.empty()) e.mode_name = "default";
      e.run_id = r[8].as<int64_t>();
      e.epoch = r[9].as<int>();
      e.time = r[10].as<double>();
      e.stall_s = opt(r[11]);
      e.compute_s = opt(r[12]);
      e.energy = opt(r[13]);
      e.power_w = opt(r[14]);
      e.minibatches = r[15].as<int>();
      e.software = parse_software(r[16]);
      e.where = "run " + std::to_string(e.run_id) + " epoch " + std::to_string(e.epoch);
      corpus.epochs.push_back(std::move(e));
    }
    tx.commit();
    if (corpus.epochs.empty())
      return invalid_argument(filter.campaign.empty() ? "database: no epochs recorded yet"
                                                      : "--campaign: campaign '" + filter.campaign + "' has no epochs");
    return corpus;
  } catch (const pqxx::broken_connection& e) {
    return unavailable(std::string("cannot connect to PostgreSQL: ") + e.what());
  } catch (const pqxx::sql_error& e) {
    return db_error(std::string("analysis query failed (are the sql/003_analysis.sql views applied?): ") + e.what());
  } catch (const std::exception& e) {
    return db_error(std::string("analysis query failed: ") + e.what());
  }
}

}  // namespace jetsweep::analysis

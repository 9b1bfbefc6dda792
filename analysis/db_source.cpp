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

std::optional<bool> opt_bool(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<bool>();
}

// The power mode columns; each one that is known (the applied state, else the requested settings).
ModeKey mode_of(const pqxx::row& r) {
  ModeKey m;
  if (!r["cores"].is_null()) m.cores = r["cores"].as<int>();
  if (!r["cpu_mhz"].is_null()) m.cpu_mhz = r["cpu_mhz"].as<double>();
  if (!r["gpu_mhz"].is_null()) m.gpu_mhz = r["gpu_mhz"].as<double>();
  if (!r["emc_mhz"].is_null()) m.emc_mhz = r["emc_mhz"].as<double>();
  return m;
}

// Every configuration axis the view carries (NULL columns are left out).
AxisMap axes_of(const pqxx::row& r, const ModeKey& mode, const std::string& mode_name) {
  AxisMap a;
  a["mode"] = mode_axis_value(mode, mode_name);
  for (const char* axis : {"pin_clocks", "fan", "batch_size", "workers", "prefetch", "threads", "seed", "storage",
                           "max_minibatches", "drop_caches", "compute", "timing"})
    if (!r[axis].is_null()) a[axis] = canonical_axis_value(axis, r[axis].c_str());
  return a;
}

// The configuration columns every query selects.
constexpr const char* kConfigColumns =
    "device_class, workload, instance, coalesce(mode_name, '') AS mode_name, cores, cpu_mhz, gpu_mhz, emc_mhz, "
    "coalesce(simulated, false) AS simulated, pin_clocks, fan, batch_size, workers, prefetch, threads, seed, storage, "
    "max_minibatches, drop_caches, compute, timing";

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
        std::string("SELECT ") + kConfigColumns +
        ", runs, epochs, minibatch_ms, power_mw, epoch_s, energy_j, "
        "array_to_string(epoch_minibatch_ms, ',') AS epoch_list, campaign_id, throttled "
        "FROM analysis_mode_profile WHERE " + where +
        " ORDER BY device_class, workload, cores, cpu_mhz, gpu_mhz, emc_mhz, mode_name, batch_size, workers, prefetch, "
        "threads, seed, storage, max_minibatches, drop_caches, pin_clocks, fan, compute, timing, instance, campaign_id");
    for (const auto& r : modes) {
      ModeRecord m;
      m.device = r["device_class"].c_str();
      m.workload = r["workload"].c_str();
      m.instance = r["instance"].c_str();
      m.mode_name = r["mode_name"].c_str();
      m.mode = mode_of(r);
      m.axes = axes_of(r, m.mode, m.mode_name);
      if (!m.mode.any_setting() && m.mode_name.empty()) m.mode_name = "default";
      m.simulated = r["simulated"].as<bool>();
      m.runs = r["runs"].as<int>();
      m.epochs = r["epochs"].as<int>();
      m.minibatch_ms = r["minibatch_ms"].as<double>();
      m.power_mw = opt(r["power_mw"]);
      m.epoch_s = opt(r["epoch_s"]);
      m.energy_j = opt(r["energy_j"]);
      m.throttled = opt_bool(r["throttled"]);
      m.epoch_minibatch_ms = parse_list(r["epoch_list"].c_str());
      m.where = "campaign " + std::string(r["campaign_id"].c_str()) + " " + m.device + "/" + m.instance;
      corpus.rows.push_back(std::move(m));
    }
    auto epochs = tx.exec(
        std::string("SELECT ") + kConfigColumns +
        ", run_id, epoch, e2e_s, stall_s, compute_s, copy_s, energy_j, power_w, minibatches, software::text AS software, "
        "repetition, dataset, minibatch_ms, power_coverage, throttled, throttle_reason, t_start_s, t_end_s, "
        "start_unix_s, end_unix_s, storage_device, page_cache_dropped, reference_state, compute_device "
        "FROM analysis_epochs WHERE " + where + " ORDER BY run_id, epoch");
    for (const auto& r : epochs) {
      EpochSample e;
      e.device = r["device_class"].c_str();
      e.workload = r["workload"].c_str();
      e.instance = r["instance"].c_str();
      e.mode_name = r["mode_name"].c_str();
      e.mode = mode_of(r);
      e.axes = axes_of(r, e.mode, e.mode_name);
      if (!e.mode.any_setting() && e.mode_name.empty()) e.mode_name = "default";
      e.simulated = r["simulated"].as<bool>();
      e.run_id = r["run_id"].as<int64_t>();
      e.epoch = r["epoch"].as<int>();
      e.time = r["e2e_s"].as<double>();
      e.stall_s = opt(r["stall_s"]);
      e.compute_s = opt(r["compute_s"]);
      e.copy_s = opt(r["copy_s"]);
      e.energy = opt(r["energy_j"]);
      e.power_w = opt(r["power_w"]);
      e.minibatches = r["minibatches"].as<int>();
      e.software = parse_software(r["software"]);
      e.repetition = r["repetition"].is_null() ? 0 : r["repetition"].as<int>();
      e.dataset = r["dataset"].is_null() ? "" : r["dataset"].c_str();
      e.minibatch_ms = opt(r["minibatch_ms"]);
      e.power_coverage = opt(r["power_coverage"]);
      e.throttled = opt_bool(r["throttled"]);
      e.throttle_reason = r["throttle_reason"].is_null() ? "" : r["throttle_reason"].c_str();
      e.t_start_s = opt(r["t_start_s"]);
      e.t_end_s = opt(r["t_end_s"]);
      e.start_unix_s = opt(r["start_unix_s"]);
      e.end_unix_s = opt(r["end_unix_s"]);
      e.storage_device = r["storage_device"].is_null() ? "" : r["storage_device"].c_str();
      e.page_cache_dropped = opt_bool(r["page_cache_dropped"]);
      e.compute_device = r["compute_device"].is_null() ? "" : r["compute_device"].c_str();
      e.reference_state = opt_bool(r["reference_state"]);
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
    return db_error(std::string("analysis query failed (are the analysis views of sql/013_gpu_timing.sql applied?): ") + e.what());
  } catch (const std::exception& e) {
    return db_error(std::string("analysis query failed: ") + e.what());
  }
}

}  // namespace jetsweep::analysis

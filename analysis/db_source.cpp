#include "analysis/db_source.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <utility>

#include "common/text.hpp"

namespace jetsweep::analysis {

namespace {

// A nullable column: nullopt for NULL.
template <class T>
std::optional<T> nullable(const pqxx::field& f) {
  return f.is_null() ? std::nullopt : std::optional<T>(f.as<T>());
}

// Nullable columns and the record members they fill, one list per value type.
template <class Record, class T>
using ColumnMembers = std::initializer_list<std::pair<const char*, std::optional<T> Record::*>>;

template <class Record, class T>
void read_nullable(const pqxx::row& r, Record& record, ColumnMembers<Record, T> columns) {
  for (const auto& [column, member] : columns) record.*member = nullable<T>(r[column]);
}

// Text columns whose NULL reads as "".
void read_text(const pqxx::row& r, EpochSample& e,
               std::initializer_list<std::pair<const char*, std::string EpochSample::*>> columns) {
  for (const auto& [column, member] : columns) e.*member = r[column].is_null() ? "" : r[column].c_str();
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

// The columns every row of both views carries: board class, workload, instance, mode and configuration.
template <class Sample>
void read_identity(const pqxx::row& r, Sample& s) {
  s.device = r["device_class"].c_str();
  s.workload = r["workload"].c_str();
  s.instance = r["instance"].c_str();
  s.mode_name = r["mode_name"].c_str();
  s.mode = mode_of(r);
  s.axes = axes_of(r, s.mode, s.mode_name);
  if (!s.mode.any_setting() && s.mode_name.empty()) s.mode_name = "default";
  s.simulated = r["simulated"].as<bool>();
}

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  for (const auto& item : split(text, ','))
    if (!item.empty()) out.push_back(parse_double(item).value_or(0.0));
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

// A row of analysis_mode_profile.
ModeRecord mode_record(const pqxx::row& r) {
  ModeRecord m;
  read_identity(r, m);
  m.runs = r["runs"].as<int>();
  m.epochs = r["epochs"].as<int>();
  m.minibatch_ms = r["minibatch_ms"].as<double>();
  read_nullable<ModeRecord, double>(
      r, m,
      {{"power_mw", &ModeRecord::power_mw}, {"epoch_s", &ModeRecord::epoch_s}, {"energy_j", &ModeRecord::energy_j}});
  m.throttled = nullable<bool>(r["throttled"]);
  m.epoch_minibatch_ms = parse_list(r["epoch_list"].c_str());
  m.where = "campaign " + std::string(r["campaign_id"].c_str()) + " " + m.device + "/" + m.instance;
  return m;
}

// A row of analysis_epochs.
EpochSample epoch_sample(const pqxx::row& r) {
  EpochSample e;
  read_identity(r, e);
  e.run_id = r["run_id"].as<int64_t>();
  e.epoch = r["epoch"].as<int>();
  e.time = r["e2e_s"].as<double>();
  e.minibatches = r["minibatches"].as<int>();
  e.software = parse_software(r["software"]);
  e.repetition = nullable<int>(r["repetition"]).value_or(0);
  read_nullable<EpochSample, double>(
      r, e,
      {{"stall_s", &EpochSample::stall_s}, {"compute_s", &EpochSample::compute_s}, {"copy_s", &EpochSample::copy_s},
       {"energy_j", &EpochSample::energy}, {"power_w", &EpochSample::power_w},
       {"minibatch_ms", &EpochSample::minibatch_ms}, {"power_coverage", &EpochSample::power_coverage},
       {"t_start_s", &EpochSample::t_start_s}, {"t_end_s", &EpochSample::t_end_s},
       {"start_unix_s", &EpochSample::start_unix_s}, {"end_unix_s", &EpochSample::end_unix_s}});
  read_nullable<EpochSample, bool>(r, e,
                                   {{"throttled", &EpochSample::throttled},
                                    {"page_cache_dropped", &EpochSample::page_cache_dropped},
                                    {"reference_state", &EpochSample::reference_state}});
  read_text(r, e,
            {{"dataset", &EpochSample::dataset}, {"throttle_reason", &EpochSample::throttle_reason},
             {"storage_device", &EpochSample::storage_device}, {"compute_device", &EpochSample::compute_device}});
  e.where = "run " + std::to_string(e.run_id) + " epoch " + std::to_string(e.epoch);
  return e;
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
      if (n[0].as<int64_t>() == 0) {
        std::string hint;   // "--campaign 1,6": one campaign per analysis; two are compared by `jetsweep compare`
        if (const size_t comma = filter.campaign.find(','); comma != std::string::npos)
          hint = " (--campaign takes one campaign, an id or a name; to compare two: jetsweep compare " +
                 filter.campaign.substr(0, comma) + " " + filter.campaign.substr(comma + 1) + ")";
        return invalid_argument("--campaign: no campaign '" + filter.campaign + "'" + hint);
      }
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
    for (const auto& r : modes) corpus.rows.push_back(mode_record(r));
    auto epochs = tx.exec(
        std::string("SELECT ") + kConfigColumns +
        ", run_id, epoch, e2e_s, stall_s, compute_s, copy_s, energy_j, power_w, minibatches, software::text AS software, "
        "repetition, dataset, minibatch_ms, power_coverage, throttled, throttle_reason, t_start_s, t_end_s, "
        "start_unix_s, end_unix_s, storage_device, page_cache_dropped, reference_state, compute_device "
        "FROM analysis_epochs WHERE " + where + " ORDER BY run_id, epoch");
    for (const auto& r : epochs) corpus.epochs.push_back(epoch_sample(r));
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

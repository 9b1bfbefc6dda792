#include "analysis/db_source.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include <charconv>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/json_parse.hpp"
#include "common/text.hpp"

namespace jetsweep::analysis {

namespace {

// One row of a result read by column name, the numbers of the names looked up once per result (pqxx's
// row[name] compares the name with every column's, on every call). Values are parsed with from_chars, not
// pqxx's stream-based conversions. Owns nothing; lives while its result does.
class NamedRow {
 public:
  // The column numbers of `result`, shared by its rows.
  class Columns {
   public:
    explicit Columns(const pqxx::result& result) {
      for (pqxx::row::size_type i = 0; i < result.columns(); ++i) numbers_.emplace(result.column_name(i), i);
    }
    pqxx::row::size_type operator()(std::string_view name) const {
      const auto it = numbers_.find(name);
      if (it == numbers_.end()) throw std::logic_error("analysis query has no column '" + std::string(name) + "'");
      return it->second;
    }

   private:
    std::unordered_map<std::string_view, pqxx::row::size_type> numbers_;   // views into the result's names
  };

  NamedRow(const pqxx::row& row, const Columns& columns) : row_(row), columns_(columns) {}

  pqxx::field operator[](std::string_view name) const { return row_[columns_(name)]; }
  bool is_null(std::string_view name) const { return (*this)[name].is_null(); }
  std::string text(std::string_view name) const {   // NULL reads as ""
    const auto f = (*this)[name];
    return f.is_null() ? std::string() : std::string(f.c_str(), f.size());
  }
  std::optional<double> number(std::string_view name) const {
    const auto f = (*this)[name];
    if (f.is_null()) return std::nullopt;
    double v = 0;   // PostgreSQL's float8 text: the shortest round-trip decimal, "Infinity" or "NaN"
    const auto [end, ec] = std::from_chars(f.c_str(), f.c_str() + f.size(), v);
    if (ec != std::errc() || end != f.c_str() + f.size())
      throw std::runtime_error("column '" + std::string(name) + "': not a number: " + f.c_str());
    return v;
  }
  std::optional<int64_t> integer(std::string_view name) const {
    const auto f = (*this)[name];
    if (f.is_null()) return std::nullopt;
    const auto v = parse_int(std::string_view(f.c_str(), f.size()));
    if (!v) throw std::runtime_error("column '" + std::string(name) + "': not an integer: " + f.c_str());
    return v;
  }
  std::optional<bool> boolean(std::string_view name) const {
    const auto f = (*this)[name];
    if (f.is_null()) return std::nullopt;
    return f.c_str()[0] == 't';
  }
  double required_number(std::string_view name) const { return required(number(name), name); }
  int64_t required_integer(std::string_view name) const { return required(integer(name), name); }

 private:
  template <class T>
  static T required(std::optional<T> v, std::string_view name) {
    if (!v) throw std::runtime_error("column '" + std::string(name) + "' is NULL");
    return *v;
  }

  const pqxx::row& row_;
  const Columns& columns_;
};

// Each row of `result` as a NamedRow, to `read`.
template <class Read>
void for_each_row(const pqxx::result& result, Read read) {
  const NamedRow::Columns columns(result);
  for (const auto& row : result) read(NamedRow(row, columns));
}

// Nullable columns and the record members they fill, one list per value type.
template <class Record, class T>
using ColumnMembers = std::initializer_list<std::pair<const char*, std::optional<T> Record::*>>;

template <class Record>
void read_numbers(const NamedRow& r, Record& record, ColumnMembers<Record, double> columns) {
  for (const auto& [column, member] : columns) record.*member = r.number(column);
}

template <class Record>
void read_booleans(const NamedRow& r, Record& record, ColumnMembers<Record, bool> columns) {
  for (const auto& [column, member] : columns) record.*member = r.boolean(column);
}

// Text columns whose NULL reads as "".
void read_text(const NamedRow& r, EpochSample& e,
               std::initializer_list<std::pair<const char*, std::string EpochSample::*>> columns) {
  for (const auto& [column, member] : columns) e.*member = r.text(column);
}

// The power mode columns; each one that is known (the applied state, else the requested settings).
ModeKey mode_of(const NamedRow& r) {
  ModeKey m;
  if (const auto cores = r.integer("cores")) m.cores = static_cast<int>(*cores);
  if (const auto v = r.number("cpu_mhz")) m.cpu_mhz = *v;
  if (const auto v = r.number("gpu_mhz")) m.gpu_mhz = *v;
  if (const auto v = r.number("emc_mhz")) m.emc_mhz = *v;
  return m;
}

// Every configuration axis the view carries (NULL columns are left out).
AxisMap axes_of(const NamedRow& r, const ModeKey& mode, const std::string& mode_name) {
  AxisMap a;
  a["mode"] = mode_axis_value(mode, mode_name);
  for (const char* axis : {"pin_clocks", "fan", "batch_size", "workers", "prefetch", "threads", "seed", "storage",
                           "max_minibatches", "drop_caches", "compute", "timing"})
    if (!r.is_null(axis)) a[axis] = canonical_axis_value(axis, r[axis].c_str());
  // The GPU's power gating (sql/018_gpu_gating.sql): carried only where the board showed its masks.
  if (!r.is_null("gpu_gating") && !r.text("gpu_gating").empty()) a["gpu_gating"] = r.text("gpu_gating");
  return a;
}

// The configuration columns of analysis_runs and analysis_mode_profile that read_identity reads.
constexpr const char* kConfigColumns =
    "device_class, workload, instance, coalesce(mode_name, '') AS mode_name, cores, cpu_mhz, gpu_mhz, emc_mhz, "
    "coalesce(simulated, false) AS simulated, pin_clocks, fan, batch_size, workers, prefetch, threads, seed, storage, "
    "max_minibatches, drop_caches, compute, timing, gpu_gating";

// Board class, workload, instance, mode and configuration (kConfigColumns).
template <class Sample>
void read_identity(const NamedRow& r, Sample& s) {
  s.device = r.text("device_class");
  s.workload = r.text("workload");
  s.instance = r.text("instance");
  s.mode_name = r.text("mode_name");
  s.mode = mode_of(r);
  s.axes = axes_of(r, s.mode, s.mode_name);
  if (!s.mode.any_setting() && s.mode_name.empty()) s.mode_name = "default";
  s.simulated = r.boolean("simulated").value_or(false);
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
  auto v = json::parse_exact(f.c_str(), ec);
  if (ec || !v.is_object()) return out;
  for (const auto& kv : v.get_object())
    if (kv.value().is_string()) out[std::string(kv.key())] = std::string(kv.value().get_string());
  return out;
}

// A row of analysis_mode_profile.
ModeRecord mode_record(const NamedRow& r) {
  ModeRecord m;
  read_identity(r, m);
  m.runs = static_cast<int>(r.required_integer("runs"));
  m.epochs = static_cast<int>(r.required_integer("epochs"));
  m.minibatch_ms = r.required_number("minibatch_ms");
  read_numbers<ModeRecord>(
      r, m,
      {{"power_mw", &ModeRecord::power_mw}, {"epoch_s", &ModeRecord::epoch_s}, {"energy_j", &ModeRecord::energy_j}});
  m.throttled = r.boolean("throttled");
  m.epoch_minibatch_ms = parse_list(r.text("epoch_list"));
  m.where = "campaign " + r.text("campaign_id") + " " + m.device + "/" + m.instance;
  return m;
}

// What every epoch of a run shares, from its analysis_runs row: identity, configuration, provenance.
EpochSample run_template(const NamedRow& r) {
  EpochSample e;
  read_identity(r, e);
  e.run_id = r.required_integer("run_id");
  e.software = parse_software(r["software"]);
  e.repetition = static_cast<int>(r.integer("repetition").value_or(0));
  read_booleans<EpochSample>(
      r, e, {{"page_cache_dropped", &EpochSample::page_cache_dropped}, {"reference_state", &EpochSample::reference_state}});
  read_text(r, e,
            {{"dataset", &EpochSample::dataset}, {"storage_device", &EpochSample::storage_device},
             {"compute_device", &EpochSample::compute_device},
             {"dataset_fingerprint", &EpochSample::dataset_fingerprint}});
  return e;
}

// A row of analysis_epochs (its epoch columns), on its run's template.
EpochSample epoch_sample(const NamedRow& r, const EpochSample& run) {
  EpochSample e = run;
  e.epoch = static_cast<int>(r.required_integer("epoch"));
  e.time = r.required_number("e2e_s");
  e.minibatches = static_cast<int>(r.required_integer("minibatches"));
  read_numbers<EpochSample>(
      r, e,
      {{"stall_s", &EpochSample::stall_s}, {"compute_s", &EpochSample::compute_s}, {"copy_s", &EpochSample::copy_s},
       {"energy_j", &EpochSample::energy}, {"power_w", &EpochSample::power_w},
       {"minibatch_ms", &EpochSample::minibatch_ms}, {"power_coverage", &EpochSample::power_coverage},
       {"paused_before_s", &EpochSample::paused_before_s},
       {"t_start_s", &EpochSample::t_start_s}, {"t_end_s", &EpochSample::t_end_s},
       {"start_unix_s", &EpochSample::start_unix_s}, {"end_unix_s", &EpochSample::end_unix_s}});
  read_booleans<EpochSample>(r, e, {{"throttled", &EpochSample::throttled}});
  read_text(r, e, {{"throttle_reason", &EpochSample::throttle_reason}});
  e.where = "run " + std::to_string(e.run_id) + " epoch " + std::to_string(e.epoch);
  return e;
}

// The campaign's id for --campaign (an id or a name); kInvalidArgument naming the flag when there is none.
Result<int64_t> campaign_id(pqxx::transaction_base& tx, const std::string& campaign) {
  const bool numeric = campaign.find_first_not_of("0123456789") == std::string::npos;
  auto r = numeric ? tx.exec_params("SELECT id FROM campaigns WHERE id = $1", campaign)
                   : tx.exec_params("SELECT id FROM campaigns WHERE name = $1", campaign);
  if (!r.empty()) return r[0][0].as<int64_t>();
  std::string hint;   // "--campaign 1,6": one campaign per analysis; two are compared by `jetsweep compare`
  if (const size_t comma = campaign.find(','); comma != std::string::npos)
    hint = " (--campaign takes one campaign, an id or a name; to compare two: jetsweep compare " +
           campaign.substr(0, comma) + " " + campaign.substr(comma + 1) + ")";
  return invalid_argument("--campaign: no campaign '" + campaign + "'" + hint);
}

}  // namespace

Result<Corpus> load_corpus_from_db(const std::string& dsn, const DbFilter& filter) {
  try {
    pqxx::connection conn(dsn);
    // One snapshot for the three queries (a read-committed transaction would see rows committed between them).
    pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> tx(conn);
    // Campaign filter: by id (the mode profile view applies it before aggregating).
    std::string where = "TRUE";
    if (!filter.campaign.empty()) {
      const auto id = campaign_id(tx, filter.campaign);
      if (!id.is_ok()) return id.status();
      where = "campaign_id = " + std::to_string(id.value());
    }
    Corpus corpus;
    corpus.source = "database";
    corpus.epoch_times = true;
    for_each_row(
        tx.exec(std::string("SELECT ") + kConfigColumns +
                ", runs, epochs, minibatch_ms, power_mw, epoch_s, energy_j, "
                "array_to_string(epoch_minibatch_ms, ',') AS epoch_list, campaign_id, throttled "
                "FROM analysis_mode_profile WHERE " + where +
                " ORDER BY device_class, workload, cores, cpu_mhz, gpu_mhz, emc_mhz, mode_name, batch_size, workers, "
                "prefetch, threads, seed, storage, max_minibatches, drop_caches, pin_clocks, fan, compute, timing, "
                "gpu_gating, instance, campaign_id"),
        [&](const NamedRow& r) { corpus.rows.push_back(mode_record(r)); });
    // Each run's configuration once (analysis_runs), then its epochs' own columns: the configuration columns of
    // analysis_epochs are the run's, and reading them per epoch would evaluate them per epoch.
    std::unordered_map<int64_t, EpochSample> runs;
    for_each_row(tx.exec(std::string("SELECT ") + kConfigColumns +
                         ", run_id, software::text AS software, repetition, dataset, storage_device, "
                         "page_cache_dropped, reference_state, compute_device, dataset_fingerprint FROM analysis_runs WHERE " +
                             where),
                 [&](const NamedRow& r) {
                   auto run = run_template(r);
                   runs.emplace(run.run_id, std::move(run));
                 });
    const auto epochs = tx.exec(
        "SELECT run_id, epoch, e2e_s, stall_s, compute_s, copy_s, energy_j, power_w, minibatches, minibatch_ms, "
        "power_coverage, paused_before_s, throttled, throttle_reason, t_start_s, t_end_s, start_unix_s, end_unix_s "
        "FROM analysis_epochs WHERE " + where + " ORDER BY run_id, epoch");
    corpus.epochs.reserve(epochs.size());
    for_each_row(epochs, [&](const NamedRow& r) {
      const int64_t run_id = r.required_integer("run_id");
      const auto run = runs.find(run_id);
      if (run == runs.end())   // one snapshot: both queries see the same runs
        throw std::logic_error("run " + std::to_string(run_id) + " has epochs but no analysis_runs row");
      corpus.epochs.push_back(epoch_sample(r, run->second));
    });
    tx.commit();
    if (corpus.epochs.empty())
      return invalid_argument(filter.campaign.empty() ? "database: no epochs recorded yet"
                                                      : "--campaign: campaign '" + filter.campaign + "' has no epochs");
    return corpus;
  } catch (const pqxx::broken_connection& e) {
    return unavailable(std::string("cannot connect to PostgreSQL: ") + e.what());
  } catch (const pqxx::sql_error& e) {
    return db_error(std::string("analysis query failed (are the analysis views of sql/views.sql applied? "
                                "the controller applies them when it migrates the database): ") + e.what());
  } catch (const std::exception& e) {
    return db_error(std::string("analysis query failed: ") + e.what());
  }
}

Result<StoredAdaptiveFit> load_adaptive_fit(const std::string& dsn, const std::string& campaign,
                                            const WorkloadRef& workload) {
  namespace bj = boost::json;
  try {
    pqxx::connection conn(dsn);
    pqxx::read_transaction tx(conn);
    JS_ASSIGN_OR_RETURN(int64_t id, campaign_id(tx, campaign));
    const auto rows = tx.exec_params(
        "SELECT id, device_class, workload, state, fit::text AS fit FROM adaptive_plans WHERE campaign_id = $1 "
        "AND workload = $2 AND ($3 = '' OR device_class = $3) ORDER BY plan_index",
        id, workload.workload, workload.device);
    tx.commit();
    if (rows.empty())
      return not_found("--campaign: campaign '" + campaign + "' has no adaptive plan of " + workload.to_string());
    if (rows.size() > 1)
      return invalid_argument("--workload: campaign '" + campaign + "' has adaptive plans of " + workload.workload +
                              " on several board classes: name one (" + workload.workload + "@CLASS)");
    const NamedRow::Columns columns(rows);
    const NamedRow row(rows[0], columns);
    StoredAdaptiveFit f;
    f.plan_id = row.required_integer("id");
    f.device = row.text("device_class");
    f.workload = row.text("workload");
    f.state = row.text("state");
    const std::string where = "adaptive plan " + std::to_string(f.plan_id) + " of campaign '" + campaign + "'";
    if (row.is_null("fit")) return invalid_argument(where + ": nothing fitted yet (it needs two profiled modes)");
    boost::system::error_code ec;
    const bj::value v = json::parse_exact(row.text("fit"), ec);
    const bj::object* fit = ec ? nullptr : v.if_object();
    if (!fit || !fit->contains("candidates"))
      return invalid_argument(where + ": nothing fitted yet (it needs two profiled modes)");
    const auto& cand = fit->at("candidates").as_array();
    const auto& t = fit->at("time_ms").as_array();
    const auto& w = fit->at("power_w").as_array();
    const auto& m = fit->at("measured").as_array();
    if (t.size() != cand.size() || w.size() != cand.size() || m.size() != cand.size())
      return Status(Code::kDbError, where + ": its stored fit has arrays of different lengths");
    for (size_t i = 0; i < cand.size(); ++i) {
      if (t[i].is_null() || w[i].is_null()) {
        ++f.failed_modes;
        continue;
      }
      const auto& k = cand[i].as_array();
      f.modes.push_back({static_cast<int>(k.at(0).to_number<int64_t>()), k.at(1).to_number<double>() / 1000.0,
                         k.at(2).to_number<double>() / 1e6, k.at(3).to_number<double>() / 1e6});
      f.time_ms.push_back(t[i].to_number<double>());
      f.power_w.push_back(w[i].to_number<double>());
      f.measured.push_back(m[i].as_bool());
    }
    return f;
  } catch (const pqxx::broken_connection& e) {
    return unavailable(std::string("cannot connect to PostgreSQL: ") + e.what());
  } catch (const std::exception& e) {   // pqxx and boost::json (a stored fit of another shape)
    return db_error(std::string("reading the adaptive plan's fit: ") + e.what());
  }
}

}  // namespace jetsweep::analysis

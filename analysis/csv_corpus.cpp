#include "analysis/csv_corpus.hpp"

#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/protocol.hpp"
#include "common/text.hpp"

namespace jetsweep::analysis {

const char* const kCorpusColumns[8] = {"device",  "workload", "cores",        "cpu_mhz",
                                       "gpu_mhz", "emc_mhz",  "minibatch_ms", "power_mw"};

namespace {

const char* const kSoftwareColumns[] = {"kernel", "torch_version", "compiler", "git_sha", "l4t", "jetpack"};
// Physical bounds of the measured columns: those of the protocol for what agents send (common/protocol.hpp).
// A value beyond one is refused naming it, so that no derived figure (energy = power x time, means over
// rows) can overflow to infinity (found by fuzz_csv: fuzz/regressions/csv/energy-overflows-to-inf).
constexpr double kMaxPowerMw = proto::kMaxPowerWatts * 1000.0;
constexpr double kMaxMinibatchMs = proto::kMaxMinibatchSeconds * 1000.0;
constexpr double kMaxEnergyJ = proto::kMaxEpochEnergyJoules;

// Configuration axes as optional columns (the mode axis comes from the mode columns, or a `mode` column).
const char* const kAxisColumns[] = {"pin_clocks", "fan",     "batch_size", "workers",         "prefetch",
                                    "threads",    "seed",    "storage",    "max_minibatches", "drop_caches",
                                    "compute",    "timing",  "gpu_gating"};



// A finite number filling the text; nullopt otherwise.
std::optional<double> to_double(const std::string& s) {
  const auto v = parse_double(s);
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// printf's "%.10g" (std::to_chars with a precision is specified as printf; it is several times faster).
std::string num(double v) {
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 10);
  return std::string(buf, r.ptr);
}

std::string opt_num(const std::optional<double>& v) { return v ? num(*v) : ""; }

// Unix times to the microsecond.
std::string opt_unix(const std::optional<double>& v) {
  if (!v) return "";
  char buf[64];   // "%.6f"
  const auto r = std::to_chars(buf, buf + sizeof buf, *v, std::chars_format::fixed, 6);
  return r.ec == std::errc() ? std::string(buf, r.ptr) : std::string();
}

}  // namespace

Result<std::vector<std::string>> split_record(const std::string& line, const std::string& where) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (quoted) return invalid_argument(where + ": unterminated quoted field");
  out.push_back(cur);
  return out;
}

namespace {

// Column name -> field index, for the header's columns. Every row asks for the same ~40 names, all string
// literals of this file, so a lookup is remembered by the literal's address: one hash of a pointer per cell
// instead of a search by string. Owned by one parse_corpus_csv call (one thread).
class ColumnIndex {
 public:
  static constexpr size_t kAbsent = std::numeric_limits<size_t>::max();
  bool add(std::string name, size_t field) { return by_name_.emplace(std::move(name), field).second; }
  bool has(const char* name) const { return find(name) != kAbsent; }
  size_t size() const { return by_name_.size(); }
  size_t find(const char* name) const {
    if (auto hit = by_address_.find(name); hit != by_address_.end()) return hit->second;
    auto it = by_name_.find(std::string_view(name));
    const size_t field = it == by_name_.end() ? kAbsent : it->second;
    by_address_.emplace(name, field);
    return field;
  }

 private:
  std::map<std::string, size_t, std::less<>> by_name_;
  mutable std::unordered_map<const char*, size_t> by_address_;
};

// The header: the first non-empty line, naming every required column once.

Result<ColumnIndex> read_header(std::istream& in, const std::string& name, size_t& line_no) {
  std::string line;
  while (std::getline(in, line)) {
    ++line_no;
    if (!trim(line).empty()) break;
  }
  if (trim(line).empty()) return invalid_argument(name + ": empty file (expected a header line)");
  const std::string where = name + ":" + std::to_string(line_no);
  JS_ASSIGN_OR_RETURN(auto header, split_record(line, where));
  ColumnIndex col;
  for (size_t i = 0; i < header.size(); ++i) {
    std::string h = trim(header[i]);
    if (!col.add(h, i)) return invalid_argument(where + ": column '" + h + "' appears twice");
  }
  for (const char* c : kCorpusColumns)
    if (!col.has(c))
      return invalid_argument(where + ": missing column '" + c +
                              "' (required: device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw)");
  return col;
}

// One data line: its fields (trimmed once) by column name, and the first error met reading its numbers.
class CsvRow {
 public:
  CsvRow(const ColumnIndex& col, std::vector<std::string> fields, std::string where)
      : col_(col), fields_(std::move(fields)), where_(std::move(where)) {
    for (auto& f : fields_) f = trim(f);
  }
  const std::string& where() const { return where_; }
  const Status& status() const { return bad_; }
  // The column's value; empty when the file has no such column.
  const std::string& text(const char* c) const {
    static const std::string kAbsent;
    const size_t field = col_.find(c);
    return field == ColumnIndex::kAbsent ? kAbsent : fields_[field];
  }
  // The column's number: finite, > 0 (`positive`) or >= 0, and at most `max`; nullopt when empty (an
  // error when `required`). The first error is kept in status().
  std::optional<double> number(const char* c, bool required, bool positive,
                               double max = std::numeric_limits<double>::max()) {
    const std::string& t = text(c);
    if (t.empty()) {
      if (required) fail(c, "empty value");
      return std::nullopt;
    }
    auto v = to_double(t);
    if (!v) {
      fail(c, "expected a number, got '" + t + "'");
      return std::nullopt;
    }
    if (positive && *v <= 0) fail(c, "must be positive, got '" + t + "'");
    if (!positive && *v < 0) fail(c, "must not be negative, got '" + t + "'");
    if (*v > max) fail(c, "must be at most " + num(max) + ", got '" + t + "'");
    return v;
  }

 private:
  void fail(const char* column, const std::string& message) {
    if (bad_.is_ok()) bad_ = invalid_argument(where_ + ": column '" + column + "': " + message);
  }
  const ColumnIndex& col_;
  std::vector<std::string> fields_;
  std::string where_;
  Status bad_;
};

// The numeric columns of a row (absent when empty).
struct RowNumbers {
  std::optional<double> cores, cpu, gpu, emc, minibatch_ms, power, epoch, epoch_s, energy_j, stall, compute,
      minibatches, runs, epochs, repetition, run_id;
};

Result<RowNumbers> read_numbers(CsvRow& row, bool named, const char* epoch_s_col) {
  RowNumbers n;
  n.cores = row.number("cores", !named, true);
  n.cpu = row.number("cpu_mhz", !named, true);
  n.gpu = row.number("gpu_mhz", !named, true);
  n.emc = row.number("emc_mhz", !named, true);
  n.minibatch_ms = row.number("minibatch_ms", true, true, kMaxMinibatchMs);
  n.power = row.number("power_mw", false, true, kMaxPowerMw);
  n.epoch = row.number("epoch", false, false);
  n.epoch_s = row.number(epoch_s_col, false, true, proto::kMaxEpochSeconds);
  n.energy_j = row.number("energy_j", false, false, kMaxEnergyJ);
  n.stall = row.number("stall_s", false, false, proto::kMaxEpochSeconds);
  n.compute = row.number("compute_s", false, false, proto::kMaxEpochSeconds);
  n.minibatches = row.number("minibatches", false, false);
  n.runs = row.number("runs", false, false);
  n.epochs = row.number("epochs", false, false);
  n.repetition = row.number("repetition", false, false);
  n.run_id = row.number("run_id", false, false);
  if (!row.status().is_ok()) return row.status();
  if (n.cores && (*n.cores != std::floor(*n.cores) || *n.cores > 1024))
    return invalid_argument(row.where() + ": column 'cores': expected a whole number of cores, got '" + row.text("cores") + "'");
  // Counts, stored as int (run ids as int64_t): whole numbers within range, or the conversion is undefined
  // (found by fuzz_csv: fuzz/regressions/csv/count-out-of-int-range).
  const std::pair<const char*, std::optional<double>*> counts[] = {
      {"epoch", &n.epoch}, {"minibatches", &n.minibatches}, {"runs", &n.runs}, {"epochs", &n.epochs},
      {"repetition", &n.repetition}, {"run_id", &n.run_id}};
  for (const auto& [column, value] : counts) {
    const double max = std::string_view(column) == "run_id" ? 9e15 : std::numeric_limits<int>::max();
    if (*value && (**value != std::floor(**value) || **value > max))
      return invalid_argument(row.where() + ": column '" + column + "': expected a whole number" +
                              (**value > max ? " up to " + num(max) : std::string()) + ", got '" + row.text(column) + "'");
  }
  return n;
}

// The row's mode profile: board, workload, instance, mode, configuration and the mode's figures.
Result<ModeRecord> mode_record(CsvRow& row, RowNumbers& n, const char* epoch_s_col) {
  ModeRecord r;
  r.where = row.where();
  r.device = row.text("device");
  r.workload = row.text("workload");
  if (r.device.empty()) return invalid_argument(row.where() + ": column 'device': empty value");
  if (r.workload.empty()) return invalid_argument(row.where() + ": column 'workload': empty value");
  r.instance = row.text("instance");
  r.mode_name = row.text("mode_name");
  // A named mode may leave the settings empty; a row with a `mode` label (a partial mode, as export
  // writes it) may leave any of them empty.
  const bool named = (!r.mode_name.empty() && row.text("cores").empty()) || !row.text("mode").empty();
  JS_ASSIGN_OR_RETURN(n, read_numbers(row, named, epoch_s_col));
  if (n.cores) r.mode.cores = static_cast<int>(*n.cores);
  if (n.cpu) r.mode.cpu_mhz = *n.cpu;
  if (n.gpu) r.mode.gpu_mhz = *n.gpu;
  if (n.emc) r.mode.emc_mhz = *n.emc;
  // The configuration: the mode, and every axis column the file has with a value in this row.
  r.axes["mode"] = row.text("mode").empty() ? mode_axis_value(r.mode, r.mode_name) : row.text("mode");
  for (const char* a : kAxisColumns)
    if (!row.text(a).empty()) r.axes[a] = canonical_axis_value(a, row.text(a));
  const std::string sim = canonical_axis_value("simulated", row.text("simulated"));
  if (!sim.empty() && sim != "true" && sim != "false")
    return invalid_argument(row.where() + ": column 'simulated': expected true or false, got '" + row.text("simulated") + "'");
  r.simulated = sim == "true";
  r.minibatch_ms = *n.minibatch_ms;
  r.power_mw = n.power;
  r.epoch_s = n.epoch_s;
  r.energy_j = n.energy_j;
  r.runs = n.runs ? static_cast<int>(*n.runs) : 1;
  r.epochs = n.epochs ? static_cast<int>(*n.epochs) : 1;
  return r;
}

// The row as an epoch sample (time and energy as given; normalised once every row is read).
EpochSample epoch_sample(const CsvRow& row, const ModeRecord& r, const RowNumbers& n) {
  EpochSample e = epoch_sample_of(r);
  e.repetition = n.repetition ? static_cast<int>(*n.repetition) : 0;
  e.run_id = n.run_id ? static_cast<int64_t>(*n.run_id) : 0;
  e.dataset = row.text("dataset");
  e.dataset_fingerprint = row.text("dataset_fingerprint");   // absent from older exports: not recorded
  e.minibatch_ms = r.minibatch_ms;
  e.epoch = n.epoch ? static_cast<int>(*n.epoch) : -1;
  e.stall_s = n.stall;
  e.compute_s = n.compute;
  e.minibatches = n.minibatches ? static_cast<int>(*n.minibatches) : 0;
  if (n.power) e.power_w = *n.power / 1000.0;
  e.where = row.where();
  e.time = n.epoch_s ? *n.epoch_s : r.minibatch_ms;
  e.energy = n.energy_j;
  for (const char* s : kSoftwareColumns)
    if (!row.text(s).empty()) e.software[s] = row.text(s);
  return e;
}

// Epoch energy once the time unit is known: J per epoch (E2E times), else mJ per minibatch from power x time.
void normalise_epoch_energy(Corpus& corpus) {
  for (auto& e : corpus.epochs) {
    if (corpus.epoch_times) {
      if (!e.energy && e.power_w) e.energy = *e.power_w * e.time;
    } else {
      e.energy = e.power_w ? std::optional<double>(*e.power_w * e.time) : std::nullopt;
    }
  }
}

}  // namespace

Result<Corpus> parse_corpus_csv(std::istream& in, const std::string& name) {
  Corpus corpus;
  corpus.source = name;
  size_t line_no = 0;
  JS_ASSIGN_OR_RETURN(const auto col, read_header(in, name, line_no));
  const bool has_epoch_col = col.has("epoch");
  // Per-epoch E2E time: `epoch_s`, or `e2e_s` as `export --per-epoch` writes it.
  const char* const epoch_s_col = col.has("epoch_s") ? "epoch_s" : "e2e_s";
  bool all_epoch_s = col.has(epoch_s_col);
  std::string line;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    const std::string where = name + ":" + std::to_string(line_no);
    JS_ASSIGN_OR_RETURN(auto fields, split_record(line, where));
    if (fields.size() < col.size())
      return invalid_argument(where + ": expected " + std::to_string(col.size()) + " fields, got " +
                              std::to_string(fields.size()));
    CsvRow row(col, std::move(fields), where);
    RowNumbers n;
    JS_ASSIGN_OR_RETURN(ModeRecord r, mode_record(row, n, epoch_s_col));
    if (!n.epoch_s) all_epoch_s = false;
    corpus.epochs.push_back(epoch_sample(row, r, n));
    if (has_epoch_col && n.epoch && *n.epoch == 0) continue;  // warm-up epoch: not part of the profile
    if (has_epoch_col) r.epoch_minibatch_ms = {r.minibatch_ms};
    corpus.rows.push_back(std::move(r));
  }
  if (corpus.epochs.empty()) return invalid_argument(name + ": no data rows after the header");
  corpus.epoch_times = all_epoch_s;
  normalise_epoch_energy(corpus);
  return corpus;
}

Result<Corpus> read_corpus_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_argument(path + ": cannot open CSV corpus");
  return parse_corpus_csv(in, path);
}

namespace {

std::string axis_cell(const AxisMap& axes, const char* axis) {
  auto it = axes.find(axis);
  return it == axes.end() ? std::string() : quote(it->second);
}

std::string opt_bool(const std::optional<bool>& b) { return b ? (*b ? "true" : "false") : ""; }

// The four mode columns: each setting that is known (partial modes fill what they set).
std::string mode_cells(const ModeKey& m) {
  auto f = [](double v) { return v > 0 ? num(v) : std::string(); };
  return (m.cores > 0 ? std::to_string(m.cores) : std::string()) + ',' + f(m.cpu_mhz) + ',' + f(m.gpu_mhz) + ',' + f(m.emc_mhz);
}

std::string dataset_of(const std::string& workload) {
  const auto slash = workload.find('/');
  return slash == std::string::npos ? std::string() : workload.substr(slash + 1);
}

}  // namespace

void write_corpus_csv(std::ostream& out, const Corpus& corpus) {
  for (size_t i = 0; i < 8; ++i) out << (i ? "," : "") << kCorpusColumns[i];
  out << ",instance,mode,mode_name,pin_clocks,fan,workers,prefetch,batch_size,threads,seed,dataset,storage,"
         "max_minibatches,drop_caches,simulated,runs,epochs,epoch_s,energy_j,throttled,compute,timing,gpu_gating\n";
  for (const auto& r : corpus.rows) {
    out << quote(r.device) << ',' << quote(r.workload) << ',' << mode_cells(r.mode);
    out << ',' << num(r.minibatch_ms) << ',' << opt_num(r.power_mw) << ',' << quote(r.instance) << ','
        << axis_cell(r.axes, "mode") << ',' << quote(r.mode_name);
    for (const char* a : {"pin_clocks", "fan", "workers", "prefetch", "batch_size", "threads", "seed"})
      out << ',' << axis_cell(r.axes, a);
    out << ',' << quote(dataset_of(r.workload));
    for (const char* a : {"storage", "max_minibatches", "drop_caches"}) out << ',' << axis_cell(r.axes, a);
    out << ',' << (r.simulated ? "true" : "false") << ',' << r.runs << ',' << r.epochs << ',' << opt_num(r.epoch_s)
        << ',' << opt_num(r.energy_j) << ',' << opt_bool(r.throttled) << ',' << axis_cell(r.axes, "compute") << ','
        << axis_cell(r.axes, "timing") << ',' << axis_cell(r.axes, "gpu_gating") << '\n';
  }
}

void write_epochs_csv(std::ostream& out, const Corpus& corpus) {
  for (size_t i = 0; i < 8; ++i) out << (i ? "," : "") << kCorpusColumns[i];
  out << ",instance,mode,mode_name,pin_clocks,fan,workers,prefetch,batch_size,threads,seed,dataset,storage,"
         "storage_device,max_minibatches,drop_caches,page_cache_dropped,reference_state,simulated,run_id,repetition,"
         "epoch,warmup,e2e_s,stall_s,compute_s,minibatches,energy_j,power_w,power_coverage,throttled,throttle_reason,"
         "t_start_s,t_end_s,start_unix_s,end_unix_s,compute_device,compute,timing,copy_s,gpu_gating,dataset_fingerprint,paused_before_s";
  for (const char* s : kSoftwareColumns) out << ',' << s;
  out << '\n';
  for (const auto& e : corpus.epochs) {
    out << quote(e.device) << ',' << quote(e.workload) << ',' << mode_cells(e.mode);
    // Unknown (no minibatch rows, no minibatches counted: NULL in analysis_epochs) is an empty cell, never 0.
    std::optional<double> mb_ms = e.minibatch_ms;
    if (!mb_ms && !corpus.epoch_times) mb_ms = e.time;
    if (!mb_ms && e.minibatches > 0) mb_ms = 1000.0 * e.time / e.minibatches;
    out << ',' << opt_num(mb_ms) << ',' << (e.power_w ? num(*e.power_w * 1000.0) : "") << ',' << quote(e.instance) << ','
        << axis_cell(e.axes, "mode") << ',' << quote(e.mode_name);
    for (const char* a : {"pin_clocks", "fan", "workers", "prefetch", "batch_size", "threads", "seed"})
      out << ',' << axis_cell(e.axes, a);
    out << ',' << quote(e.dataset.empty() ? dataset_of(e.workload) : e.dataset) << ',' << axis_cell(e.axes, "storage")
        << ',' << quote(e.storage_device) << ',' << axis_cell(e.axes, "max_minibatches") << ','
        << axis_cell(e.axes, "drop_caches") << ',' << opt_bool(e.page_cache_dropped) << ','
        << opt_bool(e.reference_state) << ',' << (e.simulated ? "true" : "false") << ',' << e.run_id << ','
        << e.repetition << ',' << (e.epoch < 0 ? "" : std::to_string(e.epoch)) << ','   // < 0: not known (a mode row)
        << (e.epoch < 0 ? "" : e.epoch == 0 ? "true" : "false") << ','
        << (corpus.epoch_times ? num(e.time) : "") << ',' << opt_num(e.stall_s) << ',' << opt_num(e.compute_s) << ','
        << e.minibatches << ',' << (corpus.epoch_times ? opt_num(e.energy) : "") << ','
        << (e.power_w ? num(*e.power_w) : "") << ',' << opt_num(e.power_coverage) << ',' << opt_bool(e.throttled)
        << ',' << quote(e.throttle_reason) << ',' << opt_num(e.t_start_s) << ',' << opt_num(e.t_end_s) << ','
        << opt_unix(e.start_unix_s) << ',' << opt_unix(e.end_unix_s) << ',' << quote(e.compute_device) << ','
        << axis_cell(e.axes, "compute") << ',' << axis_cell(e.axes, "timing") << ',' << opt_num(e.copy_s) << ','
        << axis_cell(e.axes, "gpu_gating") << ',' << quote(e.dataset_fingerprint) << ',' << opt_num(e.paused_before_s);
    for (const char* s : kSoftwareColumns) {
      auto it = e.software.find(s);
      out << ',' << (it == e.software.end() ? "" : quote(it->second));
    }
    out << '\n';
  }
}

}  // namespace jetsweep::analysis

#include "analysis/csv_corpus.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <vector>

namespace jetsweep::analysis {

const char* const kCorpusColumns[8] = {"device",  "workload", "cores",        "cpu_mhz",
                                       "gpu_mhz", "emc_mhz",  "minibatch_ms", "power_mw"};

namespace {

const char* const kSoftwareColumns[] = {"kernel", "torch_version", "compiler", "git_sha", "l4t", "jetpack"};
// Configuration axes as optional columns (the mode axis comes from the mode columns, or a `mode` column).
const char* const kAxisColumns[] = {"pin_clocks", "fan",     "batch_size", "workers",         "prefetch",
                                    "threads",    "seed",    "storage",    "max_minibatches", "drop_caches",
                                    "compute",    "timing"};

// Splits one CSV record (RFC 4180 quoting; a record never spans lines here).
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

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::optional<double> to_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string opt_num(const std::optional<double>& v) { return v ? num(*v) : ""; }

// Unix times to the microsecond.
std::string opt_unix(const std::optional<double>& v) {
  if (!v) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6f", *v);
  return buf;
}

}  // namespace

Result<Corpus> parse_corpus_csv(std::istream& in, const std::string& name) {
  Corpus corpus;
  corpus.source = name;
  std::string line;
  size_t line_no = 0;
  std::map<std::string, size_t> col;
  // Header: the first non-empty line.
  while (std::getline(in, line)) {
    ++line_no;
    if (!trim(line).empty()) break;
  }
  if (trim(line).empty()) return invalid_argument(name + ": empty file (expected a header line)");
  {
    JS_ASSIGN_OR_RETURN(auto header, split_record(line, name + ":" + std::to_string(line_no)));
    for (size_t i = 0; i < header.size(); ++i) {
      const std::string h = trim(header[i]);
      if (col.count(h))
        return invalid_argument(name + ":" + std::to_string(line_no) + ": column '" + h + "' appears twice");
      col[h] = i;
    }
    for (const char* c : kCorpusColumns)
      if (!col.count(c))
        return invalid_argument(name + ":" + std::to_string(line_no) + ": missing column '" + c +
                                "' (required: device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw)");
  }
  const bool has_epoch_col = col.count("epoch") > 0;
  // Per-epoch E2E time: `epoch_s`, or `e2e_s` as `export --per-epoch` writes it.
  const char* const epoch_s_col = col.count("epoch_s") ? "epoch_s" : "e2e_s";
  bool all_epoch_s = col.count(epoch_s_col) > 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    const std::string where = name + ":" + std::to_string(line_no);
    JS_ASSIGN_OR_RETURN(auto fields, split_record(line, where));
    if (fields.size() < col.size())
      return invalid_argument(where + ": expected " + std::to_string(col.size()) + " fields, got " +
                              std::to_string(fields.size()));
    auto text = [&](const char* c) -> std::string {
      auto it = col.find(c);
      return it == col.end() ? std::string() : trim(fields[it->second]);
    };
    Status bad;
    auto number = [&](const char* c, bool required, bool positive) -> std::optional<double> {
      const std::string t = text(c);
      if (t.empty()) {
        if (required && bad.is_ok()) bad = invalid_argument(where + ": column '" + c + "': empty value");
        return std::nullopt;
      }
      auto v = to_double(t);
      if (!v) {
        if (bad.is_ok()) bad = invalid_argument(where + ": column '" + std::string(c) + "': expected a number, got '" + t + "'");
        return std::nullopt;
      }
      if (positive && *v <= 0 && bad.is_ok())
        bad = invalid_argument(where + ": column '" + std::string(c) + "': must be positive, got '" + t + "'");
      if (!positive && *v < 0 && bad.is_ok())
        bad = invalid_argument(where + ": column '" + std::string(c) + "': must not be negative, got '" + t + "'");
      return v;
    };
    ModeRecord r;
    r.where = where;
    r.device = text("device");
    r.workload = text("workload");
    if (r.device.empty()) return invalid_argument(where + ": column 'device': empty value");
    if (r.workload.empty()) return invalid_argument(where + ": column 'workload': empty value");
    r.instance = text("instance");
    r.mode_name = text("mode_name");
    // A named mode may leave the settings empty; a row with a `mode` label (a partial mode, as export
    // writes it) may leave any of them empty.
    const bool named = (!r.mode_name.empty() && text("cores").empty()) || !text("mode").empty();
    auto cores = number("cores", !named, true);
    auto cpu = number("cpu_mhz", !named, true);
    auto gpu = number("gpu_mhz", !named, true);
    auto emc = number("emc_mhz", !named, true);
    auto mb = number("minibatch_ms", true, true);
    auto power = number("power_mw", false, true);
    auto epoch = number("epoch", false, false);
    auto epoch_s = number(epoch_s_col, false, true);
    auto energy_j = number("energy_j", false, false);
    auto stall = number("stall_s", false, false);
    auto compute = number("compute_s", false, false);
    auto minibatches = number("minibatches", false, false);
    auto runs = number("runs", false, false);
    auto epochs = number("epochs", false, false);
    auto repetition = number("repetition", false, false);
    auto run_id = number("run_id", false, false);
    if (!bad.is_ok()) return bad;
    if (cores && (*cores != std::floor(*cores) || *cores > 1024))
      return invalid_argument(where + ": column 'cores': expected a whole number of cores, got '" + text("cores") + "'");
    if (epoch && *epoch != std::floor(*epoch))
      return invalid_argument(where + ": column 'epoch': expected a whole number, got '" + text("epoch") + "'");
    if (cores) r.mode.cores = static_cast<int>(*cores);
    if (cpu) r.mode.cpu_mhz = *cpu;
    if (gpu) r.mode.gpu_mhz = *gpu;
    if (emc) r.mode.emc_mhz = *emc;
    // The configuration: the mode, and every axis column the file has with a value in this row.
    r.axes["mode"] = text("mode").empty() ? mode_axis_value(r.mode, r.mode_name) : text("mode");
    for (const char* a : kAxisColumns)
      if (!text(a).empty()) r.axes[a] = canonical_axis_value(a, text(a));
    const std::string sim = canonical_axis_value("simulated", text("simulated"));
    if (!sim.empty() && sim != "true" && sim != "false")
      return invalid_argument(where + ": column 'simulated': expected true or false, got '" + text("simulated") + "'");
    r.simulated = sim == "true";
    r.minibatch_ms = *mb;
    r.power_mw = power;
    r.epoch_s = epoch_s;
    r.energy_j = energy_j;
    r.runs = runs ? static_cast<int>(*runs) : 1;
    r.epochs = epochs ? static_cast<int>(*epochs) : 1;
    if (!epoch_s) all_epoch_s = false;

    EpochSample e;
    e.device = r.device;
    e.workload = r.workload;
    e.instance = r.instance;
    e.mode_name = r.mode_name;
    e.mode = r.mode;
    e.axes = r.axes;
    e.simulated = r.simulated;
    e.repetition = repetition ? static_cast<int>(*repetition) : 0;
    e.run_id = run_id ? static_cast<int64_t>(*run_id) : 0;
    e.dataset = text("dataset");
    e.minibatch_ms = r.minibatch_ms;
    e.epoch = epoch ? static_cast<int>(*epoch) : -1;
    e.stall_s = stall;
    e.compute_s = compute;
    e.minibatches = minibatches ? static_cast<int>(*minibatches) : 0;
    if (power) e.power_w = *power / 1000.0;
    e.where = where;
    // time/energy filled below once we know whether every row has epoch_s.
    e.time = epoch_s ? *epoch_s : r.minibatch_ms;
    e.energy = energy_j;
    for (const char* s : kSoftwareColumns)
      if (!text(s).empty()) e.software[s] = text(s);
    corpus.epochs.push_back(std::move(e));
    if (has_epoch_col && epoch && *epoch == 0) continue;  // warm-up epoch: not part of the profile
    if (has_epoch_col) r.epoch_minibatch_ms = {r.minibatch_ms};
    corpus.rows.push_back(std::move(r));
  }
  if (corpus.epochs.empty()) return invalid_argument(name + ": no data rows after the header");
  corpus.epoch_times = all_epoch_s;
  for (auto& e : corpus.epochs) {
    if (corpus.epoch_times) {
      if (!e.energy && e.power_w) e.energy = *e.power_w * e.time;  // J per epoch
    } else {
      // Times are ms per minibatch; energy mJ per minibatch from power x time.
      e.energy = e.power_w ? std::optional<double>(*e.power_w * e.time) : std::nullopt;
    }
  }
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
         "max_minibatches,drop_caches,simulated,runs,epochs,epoch_s,energy_j,throttled,compute,timing\n";
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
        << axis_cell(r.axes, "timing") << '\n';
  }
}

void write_epochs_csv(std::ostream& out, const Corpus& corpus) {
  for (size_t i = 0; i < 8; ++i) out << (i ? "," : "") << kCorpusColumns[i];
  out << ",instance,mode,mode_name,pin_clocks,fan,workers,prefetch,batch_size,threads,seed,dataset,storage,"
         "storage_device,max_minibatches,drop_caches,page_cache_dropped,reference_state,simulated,run_id,repetition,"
         "epoch,warmup,e2e_s,stall_s,compute_s,minibatches,energy_j,power_w,power_coverage,throttled,throttle_reason,"
         "t_start_s,t_end_s,start_unix_s,end_unix_s,compute_device,compute,timing,copy_s";
  for (const char* s : kSoftwareColumns) out << ',' << s;
  out << '\n';
  for (const auto& e : corpus.epochs) {
    out << quote(e.device) << ',' << quote(e.workload) << ',' << mode_cells(e.mode);
    double mb_ms = corpus.epoch_times ? (e.minibatches > 0 ? 1000.0 * e.time / e.minibatches : 0) : e.time;
    if (e.minibatch_ms) mb_ms = *e.minibatch_ms;
    out << ',' << num(mb_ms) << ',' << (e.power_w ? num(*e.power_w * 1000.0) : "") << ',' << quote(e.instance) << ','
        << axis_cell(e.axes, "mode") << ',' << quote(e.mode_name);
    for (const char* a : {"pin_clocks", "fan", "workers", "prefetch", "batch_size", "threads", "seed"})
      out << ',' << axis_cell(e.axes, a);
    out << ',' << quote(e.dataset.empty() ? dataset_of(e.workload) : e.dataset) << ',' << axis_cell(e.axes, "storage")
        << ',' << quote(e.storage_device) << ',' << axis_cell(e.axes, "max_minibatches") << ','
        << axis_cell(e.axes, "drop_caches") << ',' << opt_bool(e.page_cache_dropped) << ','
        << opt_bool(e.reference_state) << ',' << (e.simulated ? "true" : "false") << ',' << e.run_id << ','
        << e.repetition << ',' << e.epoch << ',' << (e.epoch == 0 ? "true" : "false") << ','
        << (corpus.epoch_times ? num(e.time) : "") << ',' << opt_num(e.stall_s) << ',' << opt_num(e.compute_s) << ','
        << e.minibatches << ',' << (corpus.epoch_times ? opt_num(e.energy) : "") << ','
        << (e.power_w ? num(*e.power_w) : "") << ',' << opt_num(e.power_coverage) << ',' << opt_bool(e.throttled)
        << ',' << quote(e.throttle_reason) << ',' << opt_num(e.t_start_s) << ',' << opt_num(e.t_end_s) << ','
        << opt_unix(e.start_unix_s) << ',' << opt_unix(e.end_unix_s) << ',' << quote(e.compute_device) << ','
        << axis_cell(e.axes, "compute") << ',' << axis_cell(e.axes, "timing") << ',' << opt_num(e.copy_s);
    for (const char* s : kSoftwareColumns) {
      auto it = e.software.find(s);
      out << ',' << (it == e.software.end() ? "" : quote(it->second));
    }
    out << '\n';
  }
}

}  // namespace jetsweep::analysis

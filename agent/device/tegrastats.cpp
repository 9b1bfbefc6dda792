#include "agent/device/tegrastats.hpp"

#include <time.h>

#include "agent/device/fs_util.hpp"

namespace jetsweep::device {

namespace {

// "408/15823MB" -> (408, 15823).
std::optional<std::pair<double, double>> parse_used_total_mb(std::string_view tok) {
  if (tok.size() < 3 || tok.substr(tok.size() - 2) != "MB") return std::nullopt;
  tok.remove_suffix(2);
  size_t slash = tok.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto a = parse_double(tok.substr(0, slash));
  auto b = parse_double(tok.substr(slash + 1));
  if (!a || !b) return std::nullopt;
  return std::make_pair(*a, *b);
}

// "12%@2265", "12%", "0%@[305,305]" -> percent and optional MHz; Thor's "@[1000,1000,1000]" -> MHz only.
bool parse_pct_at(std::string_view tok, std::optional<double>* pct, std::optional<double>* mhz) {
  std::string_view rest = tok;
  if (tok.empty() || tok.front() != '@') {
    size_t pc = tok.find('%');
    if (pc == std::string_view::npos) return false;
    auto p = parse_double(tok.substr(0, pc));
    if (!p) return false;
    *pct = *p;
    rest = tok.substr(pc + 1);
  }
  if (rest.empty()) return true;
  if (rest.front() != '@') return false;
  rest.remove_prefix(1);
  if (!rest.empty() && rest.front() == '[') {
    rest.remove_prefix(1);
    size_t e = rest.find_first_of(",]");
    rest = rest.substr(0, e);
  }
  auto f = parse_double(rest);
  if (!f) return false;
  *mhz = *f;
  return true;
}

// "1155/1155", "2399mW/2399mW" (current/average) or JetPack 7's "5139mW/5139mW/5139mW" (current/average/peak)
// -> current mW. Every field must be a number.
std::optional<double> parse_rail_value(std::string_view tok) {
  std::optional<int64_t> current;
  int fields = 0;
  while (true) {
    size_t slash = tok.find('/');
    std::string_view f = tok.substr(0, slash);
    if (f.size() > 2 && f.substr(f.size() - 2) == "mW") f.remove_suffix(2);
    auto v = parse_int(f);
    if (!v) return std::nullopt;
    if (!current) current = v;
    ++fields;
    if (slash == std::string_view::npos) break;
    tok.remove_prefix(slash + 1);
  }
  if (fields < 2 || fields > 3) return std::nullopt;
  return static_cast<double>(*current);
}

// "AO@26.5C" -> ("AO", 26.5).
std::optional<Temperature> parse_temp(std::string_view tok) {
  size_t at = tok.find('@');
  if (at == std::string_view::npos || at == 0 || tok.size() < at + 3 || tok.back() != 'C') return std::nullopt;
  auto v = parse_double(tok.substr(at + 1, tok.size() - at - 2));
  if (!v) return std::nullopt;
  return Temperature{std::string(tok.substr(0, at)), *v};
}

bool is_rail_name(std::string_view tok) {
  if (tok.empty()) return false;
  for (char c : tok) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::optional<double> parse_timestamp(std::string_view date, std::string_view time) {
  // MM-DD-YYYY HH:MM:SS
  if (date.size() != 10 || date[2] != '-' || date[5] != '-' || time.size() != 8 || time[2] != ':' || time[5] != ':') {
    return std::nullopt;
  }
  auto mo = parse_int(date.substr(0, 2)), d = parse_int(date.substr(3, 2)), y = parse_int(date.substr(6, 4));
  auto h = parse_int(time.substr(0, 2)), mi = parse_int(time.substr(3, 2)), s = parse_int(time.substr(6, 2));
  if (!mo || !d || !y || !h || !mi || !s) return std::nullopt;
  tm t{};
  t.tm_year = static_cast<int>(*y) - 1900;
  t.tm_mon = static_cast<int>(*mo) - 1;
  t.tm_mday = static_cast<int>(*d);
  t.tm_hour = static_cast<int>(*h);
  t.tm_min = static_cast<int>(*mi);
  t.tm_sec = static_cast<int>(*s);
  return static_cast<double>(timegm(&t));
}

// The GPU's load: the mean of its clusters' (GR3D_FREQ, GR3D2_FREQ), each kept when there are several.
void set_gpu_load(BoardSample& s, const std::vector<double>& cluster_load) {
  if (cluster_load.empty()) return;
  double sum = 0;
  for (double l : cluster_load) sum += l;
  s.gpu_load_pct = sum / static_cast<double>(cluster_load.size());
  if (cluster_load.size() > 1) s.gpu_cluster_load_pct = cluster_load;
}

}  // namespace

Result<BoardSample> parse_tegrastats_line(std::string_view line) {
  BoardSample s;
  auto tok = split_ws(line);
  size_t i = 0;
  int known = 0;
  std::vector<double> gpc_load;  // GR3D_FREQ, GR3D2_FREQ loads in the order printed
  if (tok.size() >= 2) {
    if (auto ts = parse_timestamp(tok[0], tok[1])) {
      s.t_s = *ts;
      i = 2;
    }
  }
  for (; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    const std::string* next = i + 1 < tok.size() ? &tok[i + 1] : nullptr;
    if ((t == "RAM" || t == "SWAP") && next) {
      if (auto ut = parse_used_total_mb(*next)) {
        (t == "RAM" ? s.ram_used_mb : s.swap_used_mb) = ut->first;
        (t == "RAM" ? s.ram_total_mb : s.swap_total_mb) = ut->second;
        ++i;
        ++known;
        continue;
      }
    }
    if (t == "CPU" && next && next->size() >= 2 && next->front() == '[' && next->back() == ']') {
      std::string_view list(*next);
      list = list.substr(1, list.size() - 2);
      int cpu = 0;
      double sum = 0;
      int n = 0;
      size_t pos = 0;
      while (pos <= list.size()) {
        size_t comma = list.find(',', pos);
        std::string_view item = list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        CoreSample c;
        c.cpu = cpu++;
        if (item == "off") {
          c.online = false;
        } else {
          std::optional<double> pct, mhz;
          if (!parse_pct_at(item, &pct, &mhz)) {
            return invalid_argument("tegrastats: bad CPU entry '" + std::string(item) + "' in '" + *next + "'");
          }
          c.util_pct = pct;
          if (mhz) c.freq_khz = *mhz * 1000.0;
          sum += *pct;
          ++n;
        }
        s.cores.push_back(c);
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
      }
      if (n > 0) s.cpu_util_pct = sum / n;
      ++i;
      ++known;
      continue;
    }
    if ((t == "EMC_FREQ" || t == "GR3D_FREQ" || t == "GR3D2_FREQ") && next) {
      std::optional<double> pct, mhz;
      if (parse_pct_at(*next, &pct, &mhz)) {
        if (t == "EMC_FREQ") {
          s.emc_util_pct = pct;
          if (mhz) s.emc_freq_hz = *mhz * 1e6;
        } else {
          // GR3D_FREQ is the GPU (its first cluster on R35.1 Orin, which prints GR3D2_FREQ for the second); Thor
          // prints clocks only ("@[1000,1000,1000]"), no load.
          // A cluster clocked at 0 MHz is gated (R35.1 MODE_30W prints GR3D2_FREQ 0%@0): not part of the mean.
          if (pct && !(mhz && *mhz == 0 && t == "GR3D2_FREQ")) gpc_load.push_back(*pct);
          if (mhz && t == "GR3D_FREQ") s.gpu_freq_hz = *mhz * 1e6;
        }
        ++i;
        ++known;
        continue;
      }
    }
    if (auto temp = parse_temp(t)) {
      if (temp->celsius > -256.0) s.temps.push_back(*temp);
      ++known;
      continue;
    }
    if (next && is_rail_name(t)) {
      if (auto mw = parse_rail_value(*next)) {
        s.rails.push_back(Rail::with_power(t, *mw));
        ++i;
        ++known;
        continue;
      }
    }
  }
  if (known == 0) return invalid_argument("not a tegrastats line: '" + std::string(line.substr(0, 120)) + "'");
  set_gpu_load(s, gpc_load);
  TotalPower tp = total_power(s.rails);
  s.total_power_w = tp.watts;
  s.total_power_rule = tp.rule;
  return s;
}

}  // namespace jetsweep::device

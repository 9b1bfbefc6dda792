#include "agent/device/restore_state.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "agent/device/fs_util.hpp"
#include "agent/device/service_control.hpp"
#include "common/log.hpp"

namespace jetsweep::device {

namespace {

constexpr std::string_view kHeader = "# jetsweep device restore state v1";

std::string role_name(EntryRole role) {
  switch (role) {
    case EntryRole::kCpuOnline: return "online";
    case EntryRole::kFreqMin: return "min";
    case EntryRole::kFreqMax: return "max";
    case EntryRole::kOther: break;
  }
  return "other";
}

std::optional<EntryRole> parse_role(std::string_view s) {
  if (s == "online") return EntryRole::kCpuOnline;
  if (s == "min") return EntryRole::kFreqMin;
  if (s == "max") return EntryRole::kFreqMax;
  if (s == "other") return EntryRole::kOther;
  return std::nullopt;
}

std::string to_hex(std::string_view bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2) return std::nullopt;
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = val(hex[i]), lo = val(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

bool safe_path_text(const std::string& s) { return s.find('\t') == std::string::npos && s.find('\n') == std::string::npos; }

Status write_state_file(const fs::path& state_dir, const RestoreState& state) {
  std::error_code ec;
  fs::create_directories(state_dir, ec);
  if (ec) return io_error("cannot create state directory " + state_dir.string() + ": " + ec.message());
  std::string text(kHeader);
  text += "\nroot\t" + state.root.string() + "\n";
  for (const auto& unit : state.stopped_services) text += "service\t" + unit + "\n";
  for (const auto& e : state.entries) {
    text += role_name(e.role) + "\t" + e.path.string() + "\t" + to_hex(e.original) + "\n";
  }
  fs::path final_path = restore_state_path(state_dir);
  fs::path tmp = final_path;
  tmp += ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("cannot create " + tmp.string() + ": " + std::strerror(errno));
  if (int err = write_all(fd, text)) {
    ::close(fd);
    return io_error("cannot write " + tmp.string() + ": " + std::strerror(err));
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return io_error("cannot flush " + tmp.string() + ": " + std::strerror(errno));
  fs::rename(tmp, final_path, ec);
  if (ec) return io_error("cannot rename " + tmp.string() + " to " + final_path.string() + ": " + ec.message());
  int dfd = ::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::ok();
}

}  // namespace

fs::path normalized_root(const fs::path& root) {
  fs::path n = root.lexically_normal();
  if (!n.has_filename() && n.has_parent_path() && n != n.root_path()) n = n.parent_path();
  return n;
}

fs::path restore_state_path(const fs::path& state_dir) { return state_dir / "device-restore.state"; }

bool RestoreState::contains(const fs::path& path) const {
  return std::any_of(entries.begin(), entries.end(), [&](const RestoreEntry& e) { return e.path == path; });
}

Result<RestoreState> load_restore_state(const fs::path& state_dir) {
  fs::path file = restore_state_path(state_dir);
  if (!exists_file(file)) return not_found("no restore state at " + file.string());
  JS_ASSIGN_OR_RETURN(std::string text, read_raw(file));
  RestoreState state;
  size_t pos = 0;
  int line_no = 0;
  bool header = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    std::string where = file.string() + ":" + std::to_string(line_no);
    if (line.empty()) continue;
    if (line_no == 1) {
      if (line != kHeader) return invalid_argument(where + ": not a jetsweep restore state file");
      header = true;
      continue;
    }
    std::vector<std::string> fields;
    size_t f = 0;
    while (true) {
      size_t tab = line.find('\t', f);
      fields.push_back(line.substr(f, tab == std::string::npos ? std::string::npos : tab - f));
      if (tab == std::string::npos) break;
      f = tab + 1;
    }
    if (fields.size() == 2 && fields[0] == "root") {
      state.root = fields[1];
      continue;
    }
    if (fields.size() == 2 && fields[0] == "service") {
      if (fields[1].empty()) return invalid_argument(where + ": empty service name");
      state.stopped_services.push_back(fields[1]);
      continue;
    }
    if (fields.size() != 3) return invalid_argument(where + ": expected 'role<TAB>path<TAB>hex'");
    auto role = parse_role(fields[0]);
    auto bytes = from_hex(fields[2]);
    if (!role) return invalid_argument(where + ": unknown role '" + fields[0] + "'");
    if (!bytes) return invalid_argument(where + ": malformed hex content");
    state.entries.push_back({*role, fields[1], *bytes});
  }
  if (!header) return invalid_argument(file.string() + ": empty restore state file");
  return state;
}

namespace {

// The state recorded for `root`, or a new empty one (`existed` false) when there is no state file.
Result<RestoreState> load_for_root(const fs::path& state_dir, const fs::path& root, bool* existed) {
  RestoreState state;
  auto loaded = load_restore_state(state_dir);
  *existed = loaded.is_ok();
  if (loaded.is_ok()) {
    state = std::move(loaded).value();
  } else if (loaded.status().code() != Code::kNotFound) {
    return loaded.status();
  } else {
    state.root = normalized_root(root);
  }
  if (state.root != normalized_root(root)) {
    return invalid_argument("restore state " + restore_state_path(state_dir).string() + " was recorded for root " +
                            state.root.string() + ", not " + root.string() + "; restore it first");
  }
  return state;
}

}  // namespace

Status record_originals(const fs::path& state_dir, const fs::path& root,
                        const std::vector<std::pair<EntryRole, fs::path>>& paths) {
  bool existed = false;
  JS_ASSIGN_OR_RETURN(RestoreState state, load_for_root(state_dir, root, &existed));
  bool added = false;
  for (const auto& [role, path] : paths) {
    if (state.contains(path)) continue;
    if (!safe_path_text(path.string())) return invalid_argument("path with tab or newline: " + path.string());
    JS_ASSIGN_OR_RETURN(std::string original, read_raw(path));
    state.entries.push_back({role, path, std::move(original)});
    added = true;
  }
  if (!added && existed) return Status::ok();
  return write_state_file(state_dir, state);
}

Status record_stopped_service(const fs::path& state_dir, const fs::path& root, const std::string& unit) {
  if (unit.empty() || !safe_path_text(unit)) return invalid_argument("bad service name '" + unit + "'");
  bool existed = false;
  JS_ASSIGN_OR_RETURN(RestoreState state, load_for_root(state_dir, root, &existed));
  const auto& units = state.stopped_services;
  if (existed && std::find(units.begin(), units.end(), unit) != units.end()) return Status::ok();
  state.stopped_services.push_back(unit);
  return write_state_file(state_dir, state);
}

Status forget_stopped_service(const fs::path& state_dir, const std::string& unit) {
  auto loaded = load_restore_state(state_dir);
  if (!loaded.is_ok()) return loaded.status().code() == Code::kNotFound ? Status::ok() : loaded.status();
  RestoreState state = std::move(loaded).value();
  auto& units = state.stopped_services;
  auto it = std::remove(units.begin(), units.end(), unit);
  if (it == units.end()) return Status::ok();
  units.erase(it, units.end());
  return write_state_file(state_dir, state);
}

Result<bool> restore_pending(const fs::path& state_dir, std::vector<fs::path>* written, ServiceControl* services) {
  auto loaded = load_restore_state(state_dir);
  if (!loaded.is_ok()) {
    if (loaded.status().code() == Code::kNotFound) return false;
    return loaded.status();
  }
  const RestoreState& state = *loaded;
  std::vector<std::string> failures;
  auto put_back = [&](const RestoreEntry& e) {
    Status s = write_verified(e.path, e.original);
    if (!s.is_ok()) failures.push_back(s.message());
    if (written) written->push_back(e.path);
  };
  auto online_value = [](const RestoreEntry& e) { return trim(e.original) == "1"; };

  // 1. CPUs that were online come back first, so their cpufreq files exist again.
  for (const auto& e : state.entries) {
    if (e.role == EntryRole::kCpuOnline && online_value(e)) put_back(e);
  }
  // 2. min/max pairs of one folder: raising writes max first, lowering writes min first.
  std::vector<fs::path> dirs;
  std::map<fs::path, std::pair<const RestoreEntry*, const RestoreEntry*>> pairs;
  for (const auto& e : state.entries) {
    if (e.role != EntryRole::kFreqMin && e.role != EntryRole::kFreqMax) continue;
    fs::path dir = e.path.parent_path();
    if (!pairs.count(dir)) dirs.push_back(dir);
    auto& p = pairs[dir];
    (e.role == EntryRole::kFreqMin ? p.first : p.second) = &e;
  }
  for (const auto& dir : dirs) {
    auto [mn, mx] = pairs[dir];
    if (mn && mx) {
      auto cur_max = read_int(mx->path);
      auto orig_max = parse_int(mx->original);
      bool raising = !cur_max.is_ok() || !orig_max || *orig_max >= *cur_max;
      if (raising) {
        put_back(*mx);
        put_back(*mn);
      } else {
        put_back(*mn);
        put_back(*mx);
      }
    } else {
      put_back(mn ? *mn : *mx);
    }
  }
  // 3. Everything else in reverse order: undoes lock-then-rate as rate-then-unlock, and
  //    re-enables GPU rail-gating after its clocks are back.
  for (auto it = state.entries.rbegin(); it != state.entries.rend(); ++it) {
    if (it->role == EntryRole::kOther) put_back(*it);
  }
  // 4. CPUs that were offline go offline last (highest first).
  for (auto it = state.entries.rbegin(); it != state.entries.rend(); ++it) {
    if (it->role == EntryRole::kCpuOnline && !online_value(*it)) put_back(*it);
  }
  // 5. Services the agent stopped (nvfancontrol) start again once the files they manage are back, also
  //    when a file failed: a service is never left stopped.
  const size_t file_failures = failures.size();
  if (!state.stopped_services.empty()) {
    std::unique_ptr<ServiceControl> fallback;
    if (!services) {
      fallback = std::make_unique<SystemctlServiceControl>();
      services = fallback.get();
    }
    for (const auto& unit : state.stopped_services) {
      Status s = services->start(unit);
      if (!s.is_ok()) failures.push_back("starting " + unit + " again: " + s.message());
    }
  }
  if (!failures.empty()) {
    std::string msg = "restore from " + restore_state_path(state_dir).string() + " failed for " +
                      std::to_string(file_failures) + " file(s) and " + std::to_string(failures.size() - file_failures) +
                      " service(s); state file kept: ";
    for (size_t i = 0; i < failures.size(); ++i) msg += (i ? "; " : "") + failures[i];
    return io_error(msg);
  }
  std::error_code ec;
  fs::remove(restore_state_path(state_dir), ec);
  if (ec) return io_error("restored, but cannot remove " + restore_state_path(state_dir).string() + ": " + ec.message());
  JS_LOG_INFO << "device: restored " << state.entries.size() << " file(s)"
              << (state.stopped_services.empty() ? std::string()
                                                  : " and started " + std::to_string(state.stopped_services.size()) +
                                                        " service(s) again")
              << " from " << restore_state_path(state_dir).string();
  return true;
}

}  // namespace jetsweep::device

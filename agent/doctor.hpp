// `jetsweep-agent doctor`: a board's readiness for jetsweep runs as a checklist, each item with a verdict
// (ok, warn, fail, skip) and what was found: root, the board, debugfs, the cpufreq/devfreq/EMC files the
// power modes write, nvpmodel, the INA3221 rails, fan control (and nvfancontrol), CUDA in LibTorch, the
// journal directory. The agent registers the items that fail (DeviceFacts::not_ready). Reads a
// sysfs/procfs root (fake board trees in tests) and this process's facts; any thread.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

namespace jetsweep::agent {

struct DoctorItem {
  std::string name;      // "root", "debugfs", "cpufreq", ...
  std::string verdict;   // "ok", "warn", "fail", "skip"
  std::string detail;    // what was found, or what to do about it
};

struct DoctorReport {
  std::vector<DoctorItem> items;
  bool ready() const;                        // no item failed
  std::vector<std::string> failures() const; // "name: detail" of each failed item
  boost::json::object to_json() const;
  std::string to_text() const;
};

struct DoctorOptions {
  std::string root = "/";
  std::string backend = "jetson";      // host | jetson | sim: what the board must be ready for
  std::string accelerator;             // "" = the backend's default (cuda on jetson, auto elsewhere)
  std::string journal_dir;             // "" = not checked
  bool is_root = false;                // the process runs as root (geteuid() == 0)
};

DoctorReport run_doctor(const DoctorOptions& options);

}  // namespace jetsweep::agent

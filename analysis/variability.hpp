// Variability across epochs and board instances (SIGMETRICS'23 sec. 5.4): per board class, workload
// and full configuration (every axis, simulated or not) and per instance, the distribution of epoch
// time and energy over epochs 1+, and the software versions of each instance, flagging classes whose
// real (non-simulated) instances differ in a software fact. Pure functions; any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"
#include "common/data_fingerprint.hpp"

namespace jetsweep::analysis {

struct Distribution {
  int n = 0;
  double median = 0;
  double max_deviation_pct = 0;  // largest |x - median| / median
  double cv_pct = 0;             // sample stddev / mean
  double min = 0, max = 0;
};
Distribution describe(const std::vector<double>& v);

struct InstanceVariability {
  std::string instance;
  Distribution time;
  std::optional<Distribution> energy;
  std::map<std::string, std::string> software;
  bool simulated = false;
  std::vector<double> time_values;    // epochs 1+ (for plots)
  std::vector<double> energy_values;
};

// One (board class, workload, configuration) group: rows that differ in any axis (or in being
// simulated) are never in one group; repetitions of a configuration are.
struct VariabilityGroup {
  std::string device, workload, mode;  // mode: the mode axis value ("(pooled)" under --pool-over mode)
  AxisMap config;                      // every axis the rows carry, mode included
  bool simulated = false;
  std::vector<InstanceVariability> instances;
  Distribution time;                        // pooled over instances
  std::optional<Distribution> energy;
  double instance_median_spread_pct = 0;   // max deviation of instance medians from their median
  std::optional<double> instance_energy_spread_pct;
};

// The software facts compared between instances: kernel, torch_version, compiler, git_sha, l4t, jetpack.
const std::vector<std::string>& software_keys();

struct ClassSoftware {
  std::string device;
  std::map<std::string, std::map<std::string, std::string>> instances;  // instance -> software
  std::vector<std::string> simulated_instances;  // not compared: a simulated agent reports its host's facts
  int compared_instances = 0;                    // real instances compared
  bool differs = false;                          // real instances differ in a software fact
  std::vector<std::string> differing_keys;
};

struct VariabilityReport {
  std::string time_unit;    // "s per epoch" or "ms per minibatch"
  std::string energy_unit;  // "J per epoch" or "mJ per minibatch"
  std::vector<VariabilityGroup> groups;
  std::vector<ClassSoftware> classes;
  int warmup_epochs_excluded = 0;
  // A dataset whose runs trained on different data, or not all with a recorded fingerprint
  // (common/data_fingerprint.hpp): a variability study must show the boards read the same bytes.
  std::vector<std::string> data_warnings;
  bool data_fingerprints = false;   // some run recorded a fingerprint (else nothing was compared)
};

// `workload` filters when non-empty.
VariabilityReport compute_variability(const Corpus& corpus, const std::string& workload);

}  // namespace jetsweep::analysis

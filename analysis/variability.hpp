// Variability across epochs and board instances (SIGMETRICS'23 sec. 5.4): per board class and
// instance, the distribution of epoch time and energy over epochs 1+, and the software versions of
// each instance, flagging classes whose instances differ in software. Pure functions; any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"

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
  std::vector<double> time_values;    // epochs 1+ (for plots)
  std::vector<double> energy_values;
};

// One (board class, workload, power mode) configuration.
struct VariabilityGroup {
  std::string device, workload, mode;
  std::vector<InstanceVariability> instances;
  Distribution time;                        // pooled over instances
  std::optional<Distribution> energy;
  double instance_median_spread_pct = 0;   // max deviation of instance medians from their median
  std::optional<double> instance_energy_spread_pct;
};

struct ClassSoftware {
  std::string device;
  std::map<std::string, std::map<std::string, std::string>> instances;  // instance -> software
  bool differs = false;
  std::vector<std::string> differing_keys;
};

struct VariabilityReport {
  std::string time_unit;    // "s per epoch" or "ms per minibatch"
  std::string energy_unit;  // "J per epoch" or "mJ per minibatch"
  std::vector<VariabilityGroup> groups;
  std::vector<ClassSoftware> classes;
  int warmup_epochs_excluded = 0;
};

// `workload` filters when non-empty.
VariabilityReport compute_variability(const Corpus& corpus, const std::string& workload);

}  // namespace jetsweep::analysis

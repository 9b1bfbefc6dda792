// The analysis database tests' fixture: a fresh database made by the real migrations (every sql/NNN_*.sql,
// with the analysis views) holding one of three small campaigns, and helpers reading the commands' JSON and
// CSV output. Fails (does not skip) when JETSWEEP_TEST_DSN is unset. Single-threaded use.
#pragma once

#include <boost/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "analysis_fixture.hpp"
#include "support/test_database.hpp"

namespace jetsweep::testing {

// Ground truth of the "sweep" campaign: minibatch time (ms) of workload 0..2 and power (W) per mode.
double truth_ms(int workload, int cores, double cpu, double gpu, double emc);
double truth_w(int cores, double cpu, double gpu, double emc);

// "sweep": agents orin-1, orin-2 (real agx-orin boards, different kernels) and nx-1 (simulated xavier-nx);
// 3 workloads x 12 modes on orin-1 (4 epochs each, epoch 0 slower), the first 4 modes of resnet18 also on
// orin-2, and one named-mode run on nx-1 with minibatch rows and power only in samples.
void populate_sweep(const std::string& dsn);
// "grid": a simulated AGX Xavier campaign: two instances (their agents put their names into the kernel
// string, as simulated agents did), lenet5/mnist in two power modes (the named MAXN and a partial
// {cores: 4, cpu_khz: ..} whose other clocks are only known from the applied state) x workers 2 and 4,
// two repetitions each, 3 epochs per run with windows, power coverage and clocks read back.
void populate_grid(const std::string& dsn);
// "gpu": one AGX Orin: the same model, mode and workers trained on the GPU with paper and pipelined timing
// and on the CPU (accelerator: cpu), one run each on one jetson agent, 3 epochs; GPU runs carry copy_s.
void populate_compute_and_timing(const std::string& dsn);

// A fresh database with every migration applied, filled by `populate`; dropped afterwards.
class CampaignDatabase {
 public:
  explicit CampaignDatabase(void (*populate)(const std::string& dsn));
  const std::string& dsn() const { return db_.dsn(); }

 private:
  TestDatabase db_;
};

// doctest fixtures (TEST_CASE_FIXTURE): each test case gets a fresh database holding one campaign.
struct SweepCampaign : CampaignDatabase {
  SweepCampaign() : CampaignDatabase(populate_sweep) {}
};
struct GridCampaign : CampaignDatabase {
  GridCampaign() : CampaignDatabase(populate_grid) {}
};
struct GpuCampaign : CampaignDatabase {
  GpuCampaign() : CampaignDatabase(populate_compute_and_timing) {}
};

// The JSON object a run printed; the run must have succeeded.
boost::json::object json_of(const Run& r);
// How many configuration groups a successful --json run reported.
int groups_of(const Run& r);
// The rows of a CSV text as column -> value maps. Splits at every comma: the exports read here hold no
// quoted cells, and a row whose cell count differs from the header's fails the test.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& text);

}  // namespace jetsweep::testing

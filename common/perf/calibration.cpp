// The calibration tables. Sources per number: docs/SIMULATION.md ("S23" = SIGMETRICS'23
// characterisation paper, "PT" = PowerTrain FGCS'24, "JM" = shared/reference/JETSON.md).
#include "common/perf/calibration.hpp"

#include <map>

#include "common/text.hpp"

namespace jetsweep::perf {

std::string Settings::to_string() const {
  return std::to_string(cores) + "c/" + std::to_string(cpu_khz) + "kHz/" + std::to_string(gpu_hz) + "Hz/" +
         std::to_string(emc_hz) + "Hz" + (tpcs > 0 ? " " + std::to_string(tpcs) + "tpc" : "");
}

namespace {

std::vector<ClassCalibration> make_classes() {
  std::vector<ClassCalibration> v;
  {
    ClassCalibration c;
    c.board_class = "nano";
    c.reference = {4, 1479000, 921600000, 1600000000};  // S23 Table 3 "Nano MAXN"
    c.base_w = 2.0;                                      // assumption (LeNet total is 5 W, S23 Sec. 5.6)
    c.time_spread = 0.078;                               // S23 Sec. 5.4.2
    c.energy_spread = 0.0881;                            // S23 Sec. 5.4.3
    c.epoch_noise = 0.005;                               // S23 Sec. 5.4.1: within 1% over ~670 epochs
    c.storage = "sd";                                    // S23 Sec. 4.4: data on SD card for the Nano
    c.storage_mb_s = 13.3;                               // derived from S23 Sec. 5.2.1 (SD vs SSD stalls)
    c.first_minibatch_s = 4.0;                           // assumption (PT Sec. 2.5: first minibatch is slow)
    c.os_mem_kb = 1048576;
    c.modes = {{0, "MAXN", 4, 0, 0, 0}, {1, "5W", 2, 918000, 640000000, 0}};  // JM nvpmodel
    c.default_mode_id = 0;                                                   // MAXN: the Nano boots in it (not in JETSON.md: *assumption*)
    v.push_back(c);
  }
  {
    ClassCalibration c;
    c.board_class = "xavier-nx";
    c.reference = {6, 1420800, 1109250000, 1600000000};  // S23 Table 3 "NX 15W" (6c/1400/1100/1600, table entries)
    c.base_w = 4.0;                                       // assumption
    c.time_spread = 0.054;                                // S23 Sec. 5.4.2
    c.energy_spread = 0.0553;                             // S23 Sec. 5.4.3
    c.epoch_noise = 0.025;                                // S23 Sec. 5.4.1: within 5%
    c.storage = "ssd";                                    // S23 Sec. 4.4
    c.storage_mb_s = 84.0;                                // derived from S23 Sec. 5.1.1 (46.4 s vs 12.9 s for 2827 MB)
    c.first_minibatch_s = 2.5;                            // assumption
    c.os_mem_kb = 1048576;
    c.modes = {{0, "MODE_15W_2CORE", 2, 1907200, 1109250000, 1600000000},   // S23 Table 1: 1.9 GHz dual-core
               {2, "MODE_15W_6CORE", 6, 1420800, 1109250000, 1600000000}};  // S23 Table 3 "15W"
    c.default_mode_id = 2;                                                    // 15W 6-core, the NX default (not in JETSON.md: *assumption*)
    v.push_back(c);
  }
  {
    ClassCalibration c;
    c.board_class = "agx-xavier";
    c.reference = {8, 2265600, 1377000000, 2133000000};  // S23 Table 3 mode g (MAXN)
    c.base_w = 7.527;                                     // S23 Sec. 5.6.2: base load at MAXN 7527 mW
    c.time_spread = 0.01;                                 // S23 Sec. 5.4.2
    c.energy_spread = 0.0589;                             // S23 Sec. 5.4.3
    c.epoch_noise = 0.005;                                // S23 Sec. 5.4.1: within 1% over ~150 epochs
    c.storage = "ssd";
    c.storage_mb_s = 84.0;
    c.first_minibatch_s = 2.0;                            // assumption
    c.os_mem_kb = 1048576;
    // JM's nvpmodel table under NVIDIA's mode names (nvpmodel_t194.conf: MODE_10W, ..., NVPMODEL.md).
    c.modes = {{0, "MAXN", 8, 0, 0, 0},
               {1, "MODE_10W", 2, 1200000, 520000000, 1065600000},
               {2, "MODE_15W", 4, 1200000, 670000000, 1331200000},
               {3, "MODE_30W_ALL", 8, 1200000, 900000000, 1600000000},
               {4, "MODE_30W_6CORE", 6, 1450000, 900000000, 1600000000},
               {5, "MODE_30W_4CORE", 4, 1780000, 900000000, 1600000000},
               {6, "MODE_30W_2CORE", 2, 2100000, 900000000, 1600000000}};
    c.default_mode_id = 2;                                          // JM: "2 15W default" (MODE_15W)
    v.push_back(c);
  }
  {
    ClassCalibration c;
    c.board_class = "agx-orin";
    c.reference = {12, 2201600, 1300500000, 3199000000};  // S23 Table 3 "Orin MAXN" (12/2200/1300/3200)
    c.base_w = 10.0;                                       // assumption (PT Sec. 1: whole board 11.8 W in a low mode)
    c.time_spread = 0.01;                                  // assumption: as AGX Xavier (dev kit, same maker)
    c.energy_spread = 0.0589;
    c.epoch_noise = 0.005;
    c.storage = "ssd";
    c.storage_mb_s = 84.0;
    c.first_minibatch_s = 1.5;                             // assumption
    c.os_mem_kb = 1048576;
    // NVIDIA's p3701-0000 modes (NVPMODEL.md; JM's table under NVIDIA's names).
    c.modes = {{0, "MAXN", 12, 0, 0, 0},
               {1, "MODE_15W", 4, 1113600, 408000000, 2133000000},
               {2, "MODE_30W", 8, 1728000, 612000000, 0},
               {3, "MODE_50W", 12, 1497600, 816000000, 0}};
    c.default_mode_id = 2;                                                // JM: "2 30W default" (MODE_30W)
    v.push_back(c);
  }
  {
    ClassCalibration c;
    c.board_class = "orin-nano";
    c.reference = {6, 1510400, 624750000, 2133000000};  // table maxima (PT Table 2: 1500 / 625 / 2133 MHz)
    c.base_w = 4.0;                                      // assumption
    c.time_spread = 0.054;                               // assumption: as Xavier NX
    c.energy_spread = 0.0553;
    c.epoch_noise = 0.025;
    c.storage = "ssd";
    c.storage_mb_s = 84.0;
    c.first_minibatch_s = 2.0;                           // assumption
    c.os_mem_kb = 1048576;
    // NVIDIA's p3767-0003 (R35) modes: 15W uncapped (PT Table 2's maxima, peak power 15 W) and 7W.
    c.modes = {{0, "15W", 6, 0, 0, 0}, {1, "7W", 4, 960000, 408000000, 2133000000}};
    c.default_mode_id = 0;                               // PM_CONFIG DEFAULT=0
    v.push_back(c);
  }
  return v;
}

std::vector<WorkloadCalibration> make_workloads() {
  std::vector<WorkloadCalibration> v;
  {
    WorkloadCalibration w;
    w.model = "lenet5";
    w.datasets = {"mnist", "fashion-mnist"};
    w.train_samples = 60000;          // S23 Table 2
    w.dataset_bytes = 46'000'000;     // S23 Table 2: 46 MB on disk
    w.model_mem_kb = 358;             // S23 Table 2: 0.35 MB
    w.gpu_share = 0.03;               // fitted to S23 Sec. 5.6.6 (modes d-e, k-l, l-m, m-n-g)
    w.cpu_share = 0.82;
    w.const_share = 0.15;
    w.emc_share = 0.50;               // S23 Sec. 5.6.7: -33.4% compute from 1066 to 2133 MHz
    w.stall_cpu_share = 0.70;         // S23 Sec. 5.6.5: -31..38.7% stall from 1.2 to 2.1 GHz
    w.stall_emc_share = 0.524;        // S23 Sec. 5.6.7: -34.4% stall
    w.stall_w0 = 2.04;                // S23 Sec. 5.1.3/5.1.5: 22/12.1, 33.8/18.7, 2.5x
    w.stall_w1 = 1.0;                 // S23 Sec. 5.1.6: w > 1 gives no further benefit
    w.stall_w2 = 1.0;
    w.batch_a = 150;                  // S23 Sec. 5.3.1: 25% GPU use even at bs 128 (launch-bound)
    w.batch_saturation = 0;
    w.dyn_gpu_share = 0.4;            // assumption (S23 Sec. 5.5.2: 7% GPU utilisation)
    w.dyn_cpu_share = 0.4;
    w.dyn_emc_share = 0.2;
    w.cpu_util_ref = 0.30;            // assumption (CPU-bound pre-processing and kernel launch)
    w.classes = {
        {"agx-xavier", 16.8, 12.1, 2.5, 11.1},   // S23 Fig. 9a/Sec. 5.6.4 (38.4 s in mode b), Sec. 5.1.3, Sec. 5.6.2
        {"xavier-nx", 29.7, 18.7, 4.2, 6.5},     // S23 Sec. 5.1.5 (stall 18.7 s); compute via the model at NX 15W
        {"nano", 57.0, 17.2, 6.4, 5.0},          // S23 Sec. 5.4 (670 epochs in 15 h), Sec. 5.1.5, Sec. 5.6 (5 W)
        {"agx-orin", 9.33, 6.72, 1.39, 14.0},    // S23 Sec. 5.1.7: Orin 1.8x faster than AGX (low end)
        {"orin-nano", 13.6, 9.8, 2.0, 7.0},      // agx-orin x 1.46 (CPU clock 2201.6 / 1510.4 MHz)
    };
    v.push_back(w);
  }
  {
    WorkloadCalibration w;
    w.model = "resnet18";
    w.datasets = {"cifar10"};
    w.train_samples = 50000;          // S23 Table 2
    w.dataset_bytes = 150'000'000;    // S23 Table 2
    w.model_mem_kb = 55183;           // S23 Table 2: 53.89 MB
    w.gpu_share = 0.75;               // fitted to S23 Sec. 5.6.4 (-22.3%, 632 s -> 491 s)
    w.cpu_share = 0.04;               // S23 Sec. 5.6.6: -2% from 1.2 to 2.1 GHz
    w.const_share = 0.21;
    w.emc_share = 0.25;               // S23 Sec. 5.6.7: -25.8%
    w.stall_cpu_share = 0.70;
    w.stall_emc_share = 0.379;        // S23 Sec. 5.6.7: -27.5%
    w.stall_w0 = 1.9;                 // S23 Sec. 5.1.3: pipelining cuts the stall 1.9x
    w.stall_w1 = 1.0;
    w.stall_w2 = 1.0;
    w.batch_a = 25.8;                 // S23 Sec. 5.3.1 (MobileNet bs 1/8/16: 1x/1.4x/1.56x), saturates at 16
    w.batch_saturation = 16;
    w.dyn_gpu_share = 0.85;           // S23 Sec. 5.5.2: ~100% GPU, 11% CPU
    w.dyn_cpu_share = 0.05;
    w.dyn_emc_share = 0.10;
    w.cpu_util_ref = 0.11;            // S23 Sec. 5.5.2
    w.classes = {
        {"agx-xavier", 309.0, 12.0, 28.0, 31.0},  // S23 Sec. 5.5.1 (349 s), 5.1.2 (12 s), 5.6 (31 W)
        {"agx-orin", 113.2, 4.4, 10.3, 51.1},     // PT Sec. 1: 8.47 vs 3.1 min (2.73x), 51.1 W
        {"orin-nano", 781.0, 30.4, 71.1, 12.0},   // PT Sec. 4.4: Orin Nano 6.9x less powerful; power assumed
    };
    w.unsupported_reason = "ResNet-18 runs out of memory on Xavier NX and Nano (SIGMETRICS'23 Table 2)";
    v.push_back(w);
  }
  {
    WorkloadCalibration w;
    w.model = "mobilenet_v3";
    w.datasets = {"gld23k"};
    w.train_samples = 23080;          // S23 Table 2
    w.dataset_bytes = 2'827'000'000;  // S23 Table 2: 2827 MB
    w.model_mem_kb = 127724;          // S23 Table 2: 124.73 MB
    w.gpu_share = 0.42;               // fitted to S23 Sec. 5.6.4 (-12.6%) and 5.6.6 (-9.7%)
    w.cpu_share = 0.18;
    w.const_share = 0.40;
    w.emc_share = 0.389;              // S23 Sec. 5.6.7: -28%
    w.stall_cpu_share = 0.70;
    w.stall_emc_share = 0.391;        // S23 Sec. 5.6.7: -28.1%
    w.stall_w0 = 23.9;                // S23 Sec. 5.1.4: pipelining halves the E2E time on AGX
    w.stall_w1 = 1.0;                 // S23 Sec. 5.1.6: hidden with w = 1 on AGX
    w.stall_w2 = 1.0;
    w.batch_a = 25.8;
    w.batch_saturation = 16;
    w.dyn_gpu_share = 0.75;           // S23 Sec. 5.5.2: ~100% GPU, 25% CPU
    w.dyn_cpu_share = 0.15;
    w.dyn_emc_share = 0.10;
    w.cpu_util_ref = 0.25;            // S23 Sec. 5.5.2
    w.classes = {
        {"agx-xavier", 261.0, 13.0, 24.0, 25.0},  // S23 Sec. 5.2.2 (298 s, 13 s stall); power: base share 30%
        {"xavier-nx", 509.0, 21.0, 46.0, 11.0},   // S23 Sec. 5.1.6 (576 s, 21 s); power assumed
        {"agx-orin", 121.0, 6.0, 11.0, 38.0},     // PT Table 3: 2.3 min per epoch; power assumed (> 30 W, PT Sec. 5)
        {"orin-nano", 835.0, 41.4, 75.9, 11.0},   // agx-orin x 6.9 (PT Sec. 4.4); power assumed
    };
    w.unsupported_reason = "MobileNet v3 is not trained on the Nano (SIGMETRICS'23 Table 2: out of memory)";
    v.push_back(w);
  }
  return v;
}

}  // namespace

std::string ModeMasks::to_string() const {
  std::string s;
  if (tpc_pg_mask) s += "TPC_PG_MASK " + std::to_string(*tpc_pg_mask);
  if (fbp_pg_mask) s += std::string(s.empty() ? "" : " ") + "FBP_PG_MASK " + std::to_string(*fbp_pg_mask);
  return s.empty() ? "none" : s;
}

int ClassCalibration::tpcs_on(std::optional<int64_t> tpc_pg_mask) const {
  if (gpu_tpcs <= 0) return 0;
  int on = gpu_tpcs;
  for (int bit = 0; bit < gpu_tpcs && tpc_pg_mask; ++bit)
    if ((*tpc_pg_mask >> bit) & 1) --on;
  return on;
}

const ModeMasks* ClassCalibration::masks_of(int mode_id) const {
  for (const auto& m : mode_masks)
    if (m.id == mode_id) return &m;
  return nullptr;
}

namespace {

// NVIDIA's GPU masks of each class's named modes (nvpmodel_t194.conf, nvpmodel_t194_p3668.conf,
// nvpmodel_p3701_0000.conf, nvpmodel_p3767_0003.conf; the Nano's t210 has none), the TPC bits of each GPU, and
// the masks the papers' reference figures ran with: the TPCs a gated mode is modelled with are relative to those
// (docs/SIMULATION.md, "GPU power gating").
std::vector<ClassCalibration> with_nvidia_masks(std::vector<ClassCalibration> v) {
  struct Gating {
    int gpu_tpcs;
    std::optional<int64_t> reference_mask;   // of the papers' reference mode (ClassCalibration::reference)
    std::vector<ModeMasks> modes;
  };
  const std::map<std::string, Gating> gating = {
      {"xavier-nx", {4, 1, {{0, 1, {}}, {2, 1, {}}}}},  // 3 of 4 TPCs in every mode, the papers' 15W included
      {"agx-xavier", {4, 0, {{0, 0, {}}, {1, 5, {}}, {2, 0, {}}, {3, 0, {}}, {4, 0, {}}, {5, 0, {}}, {6, 0, {}}}}},
      // PowerTrain's Orin figures are MAXN's (all 8 TPCs): its modes are set on MAXN (assumption, PT Sec. 2.5).
      {"agx-orin", {8, 0, {{0, 0, {}}, {1, 248, {}}, {2, 240, {}}, {3, 0, {}}}}},
      {"orin-nano", {8, 240, {{0, 240, 2}, {1, 252, 2}}}}};   // the 8GB module's 4 TPCs under 8 mask bits
  for (auto& c : v) {
    auto it = gating.find(c.board_class);
    if (it == gating.end()) continue;
    c.gpu_tpcs = it->second.gpu_tpcs;
    c.mode_masks = it->second.modes;
    c.reference.tpcs = c.tpcs_on(it->second.reference_mask);
  }
  return v;
}

}  // namespace

Result<ClassCalibration> class_calibration(std::string_view board_class) {
  static const std::vector<ClassCalibration> kClasses = with_nvidia_masks(make_classes());
  for (const auto& c : kClasses)
    if (c.board_class == board_class) return c;
  return invalid_argument("no simulation calibration for board class '" + std::string(board_class) + "' (known: " +
                          join(kClasses, ", ", [](const ClassCalibration& c) { return c.board_class; }) + ")");
}

const std::vector<WorkloadCalibration>& all_workloads() {
  static const std::vector<WorkloadCalibration> kWorkloads = make_workloads();
  return kWorkloads;
}

Result<WorkloadCalibration> workload_calibration(std::string_view model, std::string_view dataset) {
  std::string known;
  for (const auto& w : all_workloads()) {
    for (const auto& d : w.datasets) {
      if (w.model == model && d == dataset) return w;
      known += (known.empty() ? "" : ", ") + w.model + "/" + d;
    }
  }
  return invalid_argument("no simulation calibration for model '" + std::string(model) + "' on dataset '" +
                          std::string(dataset) + "' (calibrated: " + known + ")");
}

std::vector<std::string> simulated_classes() {
  std::vector<std::string> out;
  for (const auto& c : make_classes()) out.push_back(c.board_class);
  return out;
}

Result<double> simulated_medium_mb_s(std::string_view medium) {
  if (medium == "sd") return 13.3;   // S23 Sec. 5.2.1: 485 s vs 306 s (SSD) for the same pre-processing
  if (medium == "ssd") return 84.0;  // S23 Sec. 5.1.1: 2827 MB, 46.4 s vs 12.9 s stall
  if (medium == "hdd") return 6.0;   // S23 Sec. 5.2.1: 741 s
  return invalid_argument("simulated storage medium '" + std::string(medium) +
                          "' has no modelled read speed (modelled: sd, ssd, hdd)");
}

}  // namespace jetsweep::perf

// Frequency tables of each Jetson board class, from shared/reference/JETSON.md and the papers (SIGMETRICS'23 footnote 3: AGX Xavier
// 29 CPU x 14 GPU x 9 EMC; PowerTrain Table 2: AGX Orin 29 x 13 x 4 x 12 cores = 18,096, Orin Nano
// 20 x 5 x 3 x 6 cores = 1,800). JETSON.md leaves the Xavier NX EMC list blank: the NX's LPDDR4x
// tops out at 1866 MHz, so its list is the AGX Xavier ladder up to 1866 MHz (an assumption).
#include "common/board_classes.hpp"

#include "common/text.hpp"

namespace jetsweep {

namespace {

std::vector<int64_t> ladder_khz(int64_t first, int64_t step, int64_t last) {
  std::vector<int64_t> v;
  for (int64_t f = first; f <= last; f += step) v.push_back(f);
  return v;
}

std::vector<int64_t> mhz_x1000(std::initializer_list<int64_t> khz) {
  std::vector<int64_t> v;
  for (int64_t k : khz) v.push_back(k * 1000);
  return v;
}

std::vector<BoardClassTables> all_tables() {
  std::vector<BoardClassTables> out;
  {
    BoardClassTables t;
    t.board_class = "nano";
    t.mem_gb = 4;
    t.module = "Nano";
    t.cores = 4;
    t.cpu_khz = {102000, 204000, 307200, 403200, 518400, 614400, 710400, 825600,
                 921600, 1036800, 1132800, 1224000, 1326000, 1428000, 1479000};
    t.gpu_hz = {76800000, 153600000, 230400000, 307200000, 384000000, 460800000,
                537600000, 614400000, 691200000, 768000000, 844800000, 921600000};
    t.emc_hz = mhz_x1000({204000, 408000, 665600, 800000, 1065600, 1331200, 1600000});
    out.push_back(t);
  }
  {
    BoardClassTables t;
    t.board_class = "xavier-nx";
    t.mem_gb = 8;
    t.module = "Xavier NX";
    t.cores = 6;
    t.cpu_khz = ladder_khz(115200, 76800, 1881600);
    t.cpu_khz.push_back(1907200);
    t.gpu_hz = {114750000, 204000000, 306000000, 408000000, 510000000, 599250000, 701250000, 752250000,
                803250000, 854250000, 905250000, 956250000, 1007250000, 1058250000, 1109250000};
    t.emc_hz = mhz_x1000({204000, 408000, 665600, 800000, 1065600, 1331200, 1600000, 1866000});
    out.push_back(t);
  }
  {
    BoardClassTables t;
    t.board_class = "agx-xavier";
    t.mem_gb = 32;
    t.module = "AGX Xavier";
    t.cores = 8;
    t.cpu_khz = ladder_khz(115200, 76800, 2265600);
    t.gpu_hz = {114750000, 216750000, 318750000, 420750000, 522750000, 624750000, 675750000,
                828750000, 905250000, 1032750000, 1198500000, 1236750000, 1338750000, 1377000000};
    t.emc_hz = mhz_x1000({204000, 408000, 665600, 800000, 1065600, 1331200, 1600000, 1866000, 2133000});
    out.push_back(t);
  }
  {
    BoardClassTables t;
    t.board_class = "agx-orin";
    t.mem_gb = 32;
    t.module = "AGX Orin";
    t.cores = 12;
    t.cpu_khz = ladder_khz(115200, 76800, 2188800);
    t.cpu_khz.push_back(2201600);
    t.gpu_hz = {114750000, 216750000, 318750000, 420750000, 522750000, 624750000, 726750000,
                828750000, 930750000, 1032750000, 1134750000, 1236750000, 1300500000};
    t.emc_hz = mhz_x1000({204000, 665600, 2133000, 3199000});
    out.push_back(t);
  }
  {
    BoardClassTables t;
    t.board_class = "orin-nano";
    t.mem_gb = 8;
    t.module = "Orin Nano";
    t.cores = 6;
    t.cpu_khz = ladder_khz(115200, 76800, 1420800);
    t.cpu_khz.push_back(1497600);
    t.cpu_khz.push_back(1510400);
    t.gpu_hz = {306000000, 408000000, 510000000, 612000000, 624750000};
    t.emc_hz = mhz_x1000({204000, 665600, 2133000});
    out.push_back(t);
  }
  return out;
}

}  // namespace

uint64_t BoardClassTables::mode_count() const {
  return static_cast<uint64_t>(cores) * cpu_khz.size() * gpu_hz.size() * emc_hz.size();
}

std::vector<std::string> board_classes() {
  std::vector<std::string> out;
  for (const auto& t : all_tables()) out.push_back(t.board_class);
  return out;
}

std::string device_target_class(std::string_view device) {
  if (is_every_instance(device)) device.remove_suffix(2);
  static const std::vector<std::string> kClasses = board_classes();
  for (const auto& c : kClasses)
    if (c == device) return c;
  return device == "host" ? "host" : "";
}

bool is_every_instance(std::string_view device) { return device.size() > 2 && device.substr(device.size() - 2) == "/*"; }

Result<BoardClassTables> board_class_tables(std::string_view board_class) {
  static const std::vector<BoardClassTables> kTables = all_tables();
  for (const auto& t : kTables)
    if (t.board_class == board_class) return t;
  return invalid_argument("unknown board class '" + std::string(board_class) + "' (known: " +
                          join(kTables, ", ", [](const BoardClassTables& t) { return t.board_class; }) + ")");
}

}  // namespace jetsweep

// A board's reported frequency tables: their JSON (as DeviceFacts carries them), and FleetTables, which the
// controller expands power-mode grids from and checks a campaign's settings against (issue 28).
#include <doctest/doctest.h>

#include "common/board_classes.hpp"
#include "common/campaign.hpp"
#include "common/perf/estimate.hpp"
#include "common/protocol.hpp"

using namespace jetsweep;
namespace bj = boost::json;

namespace {

// An AGX Orin as a newer BSP ships it: the papers' tables plus 408 MHz on the GPU (a cap of NVIDIA's MODE_15W).
BoardTables orin_board_tables() {
  BoardTables t = papers_bsp_tables("agx-orin").value();
  t.source = std::string(kTablesFromBoard);
  t.gpu_hz.push_back(408000000);
  std::sort(t.gpu_hz.begin(), t.gpu_hz.end());
  return t;
}

BoardTables small_tables(int64_t cores, std::vector<int64_t> cpu, std::vector<int64_t> gpu, std::vector<int64_t> emc) {
  return BoardTables{std::string(kTablesFromBoard), cores, std::move(cpu), std::move(gpu), std::move(emc)};
}

Campaign parse(const std::string& yaml, const FleetTables& fleet) {
  auto c = parse_campaign(yaml, "t.yaml", CampaignLimits{}, fleet);
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  return std::move(c).value();
}

std::string parse_error(const std::string& yaml, const FleetTables& fleet) {
  auto c = parse_campaign(yaml, "t.yaml", CampaignLimits{}, fleet);
  REQUIRE_FALSE(c.is_ok());
  return c.status().message();
}

const char* kGridYaml = R"(campaign: g
matrix:
  device: DEVICE
  model: lenet5
  dataset: fashion-mnist
  power_mode: {generate: grid}
)";

std::string grid_on(const std::string& device) {
  std::string y = kGridYaml;
  y.replace(y.find("DEVICE"), 6, device);
  return y;
}

}  // namespace

TEST_CASE("board tables travel in the registration and are checked by field") {
  proto::DeviceFacts f{"orin-1", 12, 64LL << 30, "jetson", "agx-orin"};
  f.tables = orin_board_tables();
  const proto::Envelope in{1, proto::Register{"orin-1", f, std::nullopt, {}}};
  auto out = proto::decode(proto::encode(in));
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  CHECK(out.value() == in);

  auto bad = [](const std::string& tables) {
    const std::string frame = R"({"type":"register","version":1,"id":1,"name":"a","journal_runs":[],"facts":{)"
                              R"("hostname":"h","cpus":1,"mem_bytes":1,"backend":"jetson","device_class":"agx-orin",)"
                              R"("tables":)" + tables + "}}";
    auto r = proto::decode(frame);
    REQUIRE_FALSE(r.is_ok());
    return r.status().message();
  };
  const std::string descending = bad(R"({"source":"board","cores":4,"cpu_khz":[2,1],"gpu_hz":[1],"emc_hz":[1]})");
  CHECK(descending.find("message 'register' field 'facts', field 'tables', field 'cpu_khz'") != std::string::npos);
  CHECK(descending.find("strictly ascending") != std::string::npos);
  CHECK(bad(R"({"source":"board","cores":4,"cpu_khz":[1],"gpu_hz":[],"emc_hz":[1]})").find("'gpu_hz': the table is empty") !=
        std::string::npos);
  CHECK(bad(R"({"source":"guess","cores":4,"cpu_khz":[1],"gpu_hz":[1],"emc_hz":[1]})").find("'guess'") != std::string::npos);
  CHECK(bad(R"({"source":"board","cores":0,"cpu_khz":[1],"gpu_hz":[1],"emc_hz":[1]})").find("'cores'") != std::string::npos);
  CHECK(bad(R"({"source":"board","cores":4,"cpu_khz":[1],"gpu_hz":[1]})").find("emc_hz") != std::string::npos);
  CHECK(bad(R"([1])").find("tables") != std::string::npos);
}

TEST_CASE("offline, grids come from the papers' BSP tables, labelled so, and settings are not checked") {
  const FleetTables offline;
  const Campaign c = parse(grid_on("agx-orin"), offline);
  CHECK(c.runs.size() == board_class_tables("agx-orin").value().mode_count());
  REQUIRE(c.mode_tables.size() == 1);
  CHECK(c.mode_tables[0] == "agx-orin: the papers' BSP tables of agx-orin");
  RunConfig r;
  r.device = "agx-orin";
  r.power_mode.gpu_hz = 408000000;   // not in the papers' table: a real board's may have it
  CHECK(offline.settings_problem(r).empty());
}

TEST_CASE("a board's own tables generate its grids and check its runs") {
  const BoardTables own = orin_board_tables();
  const FleetTables fleet({{"orin-1", "agx-orin", own}});
  const uint64_t papers = board_class_tables("agx-orin").value().mode_count();

  const Campaign by_class = parse(grid_on("agx-orin"), fleet);
  CHECK(by_class.runs.size() == static_cast<size_t>(own.cores) * own.cpu_khz.size() * own.gpu_hz.size() * own.emc_hz.size());
  CHECK(by_class.runs.size() > papers);
  REQUIRE(by_class.mode_tables.size() == 1);
  CHECK(by_class.mode_tables[0].find("orin-1") != std::string::npos);
  CHECK(by_class.mode_tables[0].find("board") != std::string::npos);
  bool has_408 = false;
  for (const auto& r : by_class.runs) has_408 = has_408 || r.power_mode.gpu_hz == 408000000;
  CHECK(has_408);

  // A run on the board by name: its own tables too (offline that is an error: no class to take tables from).
  const Campaign by_name = parse(grid_on("orin-1"), fleet);
  CHECK(by_name.runs.size() == by_class.runs.size());
  CHECK(parse_error(grid_on("orin-1"), FleetTables()).find("'orin-1' is neither a board class") != std::string::npos);

  // Settings: in the board's table pass; others are refused at the power_mode value, naming the board.
  const std::string fixed = R"(campaign: f
matrix:
  device: agx-orin
  model: lenet5
  dataset: fashion-mnist
  power_mode: {cores: 4, gpu_hz: GPU}
)";
  auto with_gpu = [&](int64_t hz) {
    std::string y = fixed;
    y.replace(y.find("GPU"), 3, std::to_string(hz));
    return y;
  };
  CHECK(parse(with_gpu(408000000), fleet).runs.size() == 1);
  const std::string e = parse_error(with_gpu(400000000), fleet);
  CHECK(e.find("t.yaml:6:15") != std::string::npos);
  CHECK(e.find("power_mode.gpu_hz 400000000 is not in the GPU table (Hz)") != std::string::npos);
  CHECK(e.find("orin-1's: ") != std::string::npos);
  CHECK(parse(with_gpu(400000000), FleetTables()).runs.size() == 1);   // offline: the board decides
  std::string cores = with_gpu(408000000);
  cores.replace(cores.find("cores: 4"), 8, "cores: 13");
  CHECK(parse_error(cores, fleet).find("power_mode.cores 13 exceeds the cores of orin-1") != std::string::npos);
}

TEST_CASE("a class's runs are held to the values all its enrolled boards share") {
  const FleetTables fleet({{"b", "agx-orin", small_tables(8, {100, 200, 300}, {10, 20}, {5})},
                           {"a", "agx-orin", small_tables(12, {200, 300, 400}, {20, 30}, {5, 6})},
                           {"n", "orin-nano", small_tables(6, {1}, {2}, {3})}});
  auto cls = fleet.resolve("agx-orin/*");
  REQUIRE(cls.is_ok());
  CHECK(cls->reported);
  CHECK(cls->tables == small_tables(8, {200, 300}, {20}, {5}));
  CHECK(cls->label == "the values the 2 enrolled agx-orin boards that reported tables share (a, b, board)");
  CHECK(fleet.resolve("a")->tables.cpu_khz == std::vector<int64_t>{200, 300, 400});
  // A class no board reported falls back to the papers', unchecked.
  auto nx = fleet.resolve("xavier-nx");
  REQUIRE(nx.is_ok());
  CHECK_FALSE(nx->reported);
  CHECK(nx->label.find("no enrolled board of the class reported its own") != std::string::npos);

  RunConfig r;
  r.device = "agx-orin";
  r.power_mode.cpu_khz = 400;   // only on a: b would take the run and fail
  const std::string p = fleet.settings_problem(r);
  CHECK(p.find("power_mode.cpu_khz 400") != std::string::npos);
  CHECK(p.find("b's: 100, 200, 300") != std::string::npos);
  CHECK(p.find("a's") == std::string::npos);
  r.device = "a";    // on the board that has it
  CHECK(fleet.settings_problem(r).empty());
  r.device = "agx-orin";
  r.power_mode.cpu_khz = 300;
  r.power_mode.cores = 12;      // b has 8
  CHECK(fleet.settings_problem(r).find("exceeds the cores of b") != std::string::npos);
  r.power_mode.cores = 8;
  CHECK(fleet.settings_problem(r).empty());

  const FleetTables disjoint({{"x", "nano", small_tables(4, {1}, {2}, {3})}, {"y", "nano", small_tables(4, {1}, {9}, {3})}});
  auto none = disjoint.resolve("nano");
  REQUIRE_FALSE(none.is_ok());
  CHECK(none.status().message().find("no GPU table (Hz) value in common; x: 2; y: 9") != std::string::npos);
  RunConfig on_nano;   // settings are still checked, board by board
  on_nano.device = "nano";
  on_nano.power_mode.gpu_hz = 9;
  CHECK(disjoint.settings_problem(on_nano).find("lacking it: x's: 2") != std::string::npos);
  on_nano.device = "y";
  CHECK(disjoint.settings_problem(on_nano).empty());
}

TEST_CASE("check_board_tables: what an agent may send") {
  CHECK(check_board_tables(orin_board_tables(), "t").is_ok());
  CHECK(check_board_tables(small_tables(4, {}, {1}, {1}), "board tables").message() ==
        "board tables field 'cpu_khz': the table is empty");
  CHECK(check_board_tables(small_tables(4, {1}, {5, 5}, {1}), "t").message().find("'gpu_hz'") != std::string::npos);
}

TEST_CASE("perf::fleet_tables takes the boards that reported tables") {
  std::vector<perf::BoardGatingFacts> boards{{"a", "agx-orin", {}, false, orin_board_tables()},
                                             {"h", "host", {}, false, std::nullopt}};
  const FleetTables fleet = perf::fleet_tables(boards);
  REQUIRE(fleet.boards().size() == 1);
  CHECK(fleet.boards()[0].name == "a");
}

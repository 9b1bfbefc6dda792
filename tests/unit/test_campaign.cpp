#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include "common/board_classes.hpp"
#include "common/campaign.hpp"
#include "common/perf/estimate.hpp"
#include "common/perf/sim_board.hpp"
#include "common/text.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;

TEST_CASE("demo matrix expands to the Cartesian product in a fixed order") {
  const char* yaml =
      "campaign: demo\n"
      "matrix:\n"
      "  model: lenet5\n"
      "  dataset: fashion-mnist\n"
      "  batch_size: [16, 64]\n"
      "  workers: [0, 2]\n"
      "  epochs: 2\n";
  auto c = parse_campaign(yaml, "demo.yaml");
  REQUIRE(c.is_ok());
  CHECK(c->name == "demo");
  REQUIRE(c->runs.size() == 4);
  CHECK(c->runs[0].batch_size == 16);
  CHECK(c->runs[0].workers == 0);
  CHECK(c->runs[1].batch_size == 16);
  CHECK(c->runs[1].workers == 2);
  CHECK(c->runs[2].batch_size == 64);
  CHECK(c->runs[3].workers == 2);
  for (const auto& r : c->runs) {
    CHECK(r.epochs == 2);
    CHECK(r.data == "/usr/share/datasets/fashion-mnist");  // default path of the dataset
  }
  CHECK(c->axes == std::vector<std::string>{"batch_size", "workers"});
}

TEST_CASE("repetitions multiply runs and are numbered") {
  auto c = parse_campaign("campaign: r\nrepetitions: 3\nmatrix: {model: lenet5, dataset: mnist, batch_size: [1, 2]}\n",
                          "r.yaml");
  REQUIRE(c.is_ok());
  REQUIRE(c->runs.size() == 6);
  std::set<std::pair<int64_t, int64_t>> seen;
  for (const auto& r : c->runs) seen.insert({r.batch_size, r.repetition});
  CHECK(seen.size() == 6);
}

namespace {
std::string error_of(const std::string& yaml) {
  auto c = parse_campaign(yaml, "bad.yaml");
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().code() == Code::kInvalidArgument);
  return c.status().message();
}
}  // namespace

TEST_CASE("errors name FILE:LINE:COL and what is wrong") {
  CHECK(error_of("campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  bach_size: 3\n") ==
        "bad.yaml:5:3: unknown key 'bach_size' (known: device, model, dataset, data, batch_size, workers, prefetch, "
        "epochs, threads, seed, drop_caches, sample_hz, max_minibatches, power_mode, base_mode, pin_clocks, fan_max, accelerator, timing, "
        "min_memory_mb)");
  CHECK(error_of("campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  batch_size: [16, abc]\n") ==
        "bad.yaml:5:20: 'batch_size' expects an integer, got 'abc'");
  CHECK(error_of("campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  workers: -1\n") ==
        "bad.yaml:5:12: 'workers': must be between 0 and 64");
  CHECK(error_of("campaign: x\nmatrix:\n  model: alexnet\n  dataset: mnist\n").find("bad.yaml:3:10: 'model': unknown model 'alexnet'") == 0);
  CHECK(error_of("campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  batch_size: []\n") ==
        "bad.yaml:5:15: 'batch_size' has an empty list: nothing to run");
  CHECK(error_of("campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  batch_size: [16, 16]\n") ==
        "bad.yaml:5:20: 'batch_size' lists '16' twice");
  CHECK(error_of("matrix:\n  model: lenet5\n  dataset: mnist\n").find("missing 'campaign'") != std::string::npos);
  CHECK(error_of("campaign: x\nmatrix:\n  dataset: mnist\n").find("matrix is missing 'model'") != std::string::npos);
  CHECK(error_of("campaign: x\nmatrixx: {}\n") .find("bad.yaml:2:1: unknown top-level key 'matrixx'") == 0);
  CHECK(error_of("campaign: x\nmatrix: [1, 2\n").find("bad.yaml:") == 0);  // YAML syntax error with a place
  CHECK(error_of("campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  drop_caches: maybe\n") ==
        "bad.yaml:5:16: 'drop_caches' expects true or false, got 'maybe'");
}

TEST_CASE("oversized matrices are refused before expansion") {
  std::string yaml = "campaign: big\nrepetitions: 100000\nmatrix:\n  model: lenet5\n  dataset: mnist\n"
                     "  batch_size: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21]\n";
  auto c = parse_campaign(yaml, "big.yaml");
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().message() == "big.yaml:4:3: the matrix expands to 2100000 runs, more than the limit max_runs = 250000 "
                                "(docs/CAMPAIGNS.md, \"Limits\")");
}

TEST_CASE("run specs: same keys, single values") {
  auto r = parse_run_spec("model: lenet5\ndataset: fashion-mnist\nbatch_size: 32\nworkers: 1\nepochs: 3\nseed: 9\n",
                          "spec.yaml");
  REQUIRE(r.is_ok());
  CHECK(r->batch_size == 32);
  CHECK(r->seed == 9);
  auto bad = parse_run_spec("model: lenet5\ndataset: mnist\nbatch_size: [1, 2]\n", "spec.yaml");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "spec.yaml:3:13: 'batch_size' must be a single value in a run spec");
  auto missing = load_run_spec_file("/nonexistent/spec.yaml");
  CHECK(missing.status().code() == Code::kIoError);
}

TEST_CASE("power modes: named or explicit, as an axis") {
  auto c = parse_campaign(
      "campaign: pm\nmatrix:\n  model: lenet5\n  dataset: mnist\n  pin_clocks: true\n"
      "  power_mode: [MAXN, {cores: 4, cpu_khz: 1190400, gpu_hz: 675750000, emc_hz: 1331200000}]\n",
      "pm.yaml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  REQUIRE(c->runs.size() == 2);
  CHECK(c->runs[0].power_mode.name == "MAXN");
  CHECK(c->runs[1].power_mode.cores == 4);
  CHECK(c->runs[1].power_mode.emc_hz == 1331200000);
  CHECK(c->runs[1].pin_clocks);
  auto round = run_config_from_json(to_json(c->runs[1]), "test");
  REQUIRE(round.is_ok());
  CHECK(round.value() == c->runs[1]);
  CHECK(error_of("campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  power_mode: {cores: 4, gpu: 1}\n") ==
        "bad.yaml:5:26: unknown power_mode key 'gpu' (known: cores, cpu_khz, gpu_hz, emc_hz)");
  CHECK(error_of("campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  power_mode: [{cores: 2}, {cores: 2}]\n")
            .find("lists '") != std::string::npos);
}

namespace {
Campaign parsed(const std::string& yaml) {
  auto c = parse_campaign(yaml, "m.yaml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  return c.value();
}
const char* kHead = "campaign: m\nmatrix:\n  dataset: mnist\n";
}  // namespace

TEST_CASE("generated power modes: the full AGX Xavier grid x 3 models is the ~88,000-run matrix") {
  auto c = parsed(std::string(kHead) +
                  "  device: agx-xavier\n  model: [lenet5, resnet18, mobilenet_v3]\n  power_mode: {generate: grid}\n");
  CHECK(c.runs.size() == 3u * 29232u);
  std::set<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>> distinct;
  for (const auto& r : c.runs)
    distinct.insert({r.model, r.power_mode.cores, r.power_mode.cpu_khz, r.power_mode.gpu_hz, r.power_mode.emc_hz});
  CHECK(distinct.size() == c.runs.size());
  CHECK(c.runs.front().power_mode.cores == 1);
  CHECK(c.runs.front().power_mode.cpu_khz == 115200);
  CHECK(c.runs.front().power_mode.gpu_hz == 114750000);
  CHECK(c.runs.front().power_mode.emc_hz == 204000000);
  CHECK(c.runs[29231].power_mode.cores == 8);
  CHECK(c.runs[29231].power_mode.cpu_khz == 2265600);
  CHECK(c.runs[29231].power_mode.emc_hz == 2133000000);
}

TEST_CASE("generated power modes: every k-th value, core subsets, seeded uniform samples") {
  auto every = parsed(std::string(kHead) + "  device: agx-xavier\n  model: lenet5\n  power_mode: {generate: grid, every: 2, cores: [4, 8]}\n");
  CHECK(every.runs.size() == 2u * 15u * 7u * 5u);
  auto sample = [&](int seed) {
    return parsed(std::string(kHead) + "  device: agx-orin\n  model: lenet5\n  power_mode: {generate: sample, count: 4368, seed: " +
                  std::to_string(seed) + "}\n");
  };
  auto a = sample(7), b = sample(7), other = sample(8);
  REQUIRE(a.runs.size() == 4368);
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> modes;
  for (const auto& r : a.runs)
    modes.insert({r.power_mode.cores, r.power_mode.cpu_khz, r.power_mode.gpu_hz, r.power_mode.emc_hz});
  CHECK(modes.size() == 4368);  // distinct: a sample without replacement of the 18,096 Orin modes
  CHECK(a.runs == b.runs);
  CHECK_FALSE(a.runs == other.runs);
  CHECK(error_of(std::string("campaign: x\nmatrix:\n  dataset: mnist\n  model: lenet5\n  power_mode: {generate: grid}\n"))
            .find("bad.yaml:5:15: power_mode generation needs a board class (or an enrolled board) in 'device' for this run, got 'any'") == 0);
  CHECK(error_of(std::string("campaign: x\nmatrix:\n  dataset: mnist\n  model: lenet5\n  device: nano\n"
                             "  power_mode: {generate: sample, count: 99999}\n"))
            .find("exceeds the 5040 modes of the papers' BSP tables of nano") != std::string::npos);
  CHECK(error_of(std::string("campaign: x\nmatrix:\n  dataset: mnist\n  model: lenet5\n  device: nano\n"
                             "  power_mode: {generate: grid, stride: 2}\n")) ==
        "bad.yaml:6:32: unknown power_mode generator key 'stride' (known: generate, every, count, seed, cores; with "
        "generate: adaptive also budget, reference, reference_workload, strategy, anchor, power_budgets_w, cross_board)");
}

TEST_CASE("exclude, include and zip") {
  auto c = parsed("campaign: m\nmatrix:\n  dataset: cifar10\n  device: [nano, agx-xavier]\n  model: [lenet5, resnet18]\n"
                  "exclude:\n  - {model: resnet18, device: nano}\n"
                  "include:\n  - {device: nano, model: lenet5, batch_size: 128}\n");
  REQUIRE(c.runs.size() == 4);
  for (const auto& r : c.runs) CHECK_FALSE((r.model == "resnet18" && r.device == "nano"));
  CHECK(c.runs.back().batch_size == 128);
  auto z = parsed(std::string(kHead) + "  model: lenet5\n  batch_size: [16, 32, 64]\n  workers: [0, 1, 2]\n  epochs: [1, 2]\n"
                  "zip:\n  - [batch_size, workers]\n");
  REQUIRE(z.runs.size() == 6);
  for (const auto& r : z.runs) CHECK(r.workers == (r.batch_size == 16 ? 0 : r.batch_size == 32 ? 1 : 2));
  CHECK(error_of(std::string(kHead) + "  model: lenet5\n  batch_size: [16, 32]\n  workers: [0, 1, 2]\nzip:\n  - [batch_size, workers]\n") ==
        "bad.yaml:8:18: zipped lists differ in length: 'workers' has 3 values, the others 2");
  CHECK(error_of(std::string(kHead) + "  model: lenet5\nexclude:\n  - {modle: lenet5}\n") ==
        "bad.yaml:6:6: unknown key 'modle' in 'exclude' (known: device, model, dataset, data, batch_size, workers, "
        "prefetch, epochs, threads, seed, drop_caches, sample_hz, max_minibatches, power_mode, base_mode, pin_clocks, fan_max, accelerator, timing, "
        "min_memory_mb)");
  CHECK(error_of(std::string(kHead) + "  model: lenet5\n  timing: [paper, sometimes]\n") ==
        "bad.yaml:5:19: 'timing': must be paper or pipelined, not 'sometimes'");
  {
    auto both = parse_campaign(std::string(kHead) + "  model: lenet5\n  timing: [paper, pipelined]\n", "t.yaml");
    REQUIRE(both.is_ok());
    REQUIRE(both->runs.size() == 2);
    CHECK(both->runs[0].timing == "paper");
    CHECK(both->runs[1].timing == "pipelined");
  }
  CHECK(error_of(std::string(kHead) + "  model: lenet5\nexclude:\n  - {model: lenet5}\n").find("every run is excluded") !=
        std::string::npos);
}

TEST_CASE("memory fit, 'CLASS/*' and the dispatch order") {
  // A model that runs out of memory on a class is refused at its value, unless excluded.
  CHECK(error_of(std::string(kHead) + "  device: [agx-xavier, nano]\n  model: [lenet5, resnet18]\n") ==
        "bad.yaml:5:19: model 'resnet18' does not fit on 'nano' (4 GB): SIGMETRICS'23 Table 2: ResNet-18 runs out of "
        "memory on the Xavier NX and the Nano; exclude that combination");
  // Not a matter of RAM alone: PowerTrain trains ResNet-18 on the 8 GB Orin Nano.
  CHECK(parse_campaign(std::string(kHead) + "  device: orin-nano\n  model: resnet18\n", "ok.yaml").is_ok());
  CHECK(parse_campaign(std::string(kHead) + "  device: [agx-xavier, nano]\n  model: [lenet5, resnet18]\n"
                       "exclude:\n  - {device: nano, model: resnet18}\n", "ok.yaml").is_ok());
  CHECK(error_of(std::string(kHead) + "  device: nano\n  model: lenet5\n  min_memory_mb: 8192\n").find(
            "does not fit on 'nano' (4 GB): min_memory_mb: 8192") != std::string::npos);
  CHECK(error_of(std::string(kHead) + "  device: nano/*\n  model: mobilenet_v3\n").find("does not fit on 'nano'") !=
        std::string::npos);
  CHECK(error_of(std::string(kHead) + "  device: tx2/*\n  model: lenet5\n") ==
        "bad.yaml:4:11: 'tx2/*': '/*' follows a board class (known: nano, xavier-nx, agx-xavier, agx-orin, orin-nano, host)");
  CHECK(error_of(std::string(kHead) + "  model: lenet5\norder: random\n").find("bad.yaml:5:8: 'order' must be") == 0);
  RunConfig r;
  r.model = "resnet18";
  CHECK(required_memory_bytes(r) == 0);
  CHECK(classes_without_room(r) == std::vector<std::string>{"xavier-nx", "nano"});
  r.min_memory_mb = 100;
  CHECK(required_memory_bytes(r) == 100 * (int64_t{1} << 20));
  r.model = "lenet5";
  CHECK(classes_without_room(r).empty());

  // Generated modes with 'CLASS/*' use the class's tables; the queue order takes cores offline only.
  auto c = parse_campaign(std::string(kHead) + "  device: agx-xavier/*\n  model: [lenet5, vgg11]\n"
                          "  power_mode: {generate: grid, every: 7, cores: [2, 8, 4]}\n", "g.yaml");
  REQUIRE(c.is_ok());
  CHECK(c->runs.front().device == "agx-xavier/*");
  const auto order = dispatch_order(c.value());
  REQUIRE(order.size() == c->runs.size());
  std::set<size_t> seen(order.begin(), order.end());
  CHECK(seen.size() == order.size());
  for (size_t i = 1; i < order.size(); ++i) {
    const auto& a = c->runs[order[i - 1]].power_mode;
    const auto& b = c->runs[order[i]].power_mode;
    CHECK(a.cores >= b.cores);
    if (a.cores == b.cores) CHECK(std::tuple(a.cpu_khz, a.gpu_hz, a.emc_hz) >= std::tuple(b.cpu_khz, b.gpu_hz, b.emc_hz));
  }
  // Both models of a mode are queued back to back.
  CHECK(c->runs[order[0]].power_mode.cpu_khz == c->runs[order[1]].power_mode.cpu_khz);
  CHECK(c->runs[order[0]].model != c->runs[order[1]].model);
  // Named modes count with the cores they set (AGX Xavier: MAXN 8, MODE_30W_6CORE 6, MODE_15W 4, MODE_10W 2);
  // explicit settings take what they do not set from the class's reference state (MODE_15W: 4 cores, GPU 624.75
  // MHz), so a GPU-only mode is a 4-core mode with a slower GPU than MODE_15W.
  auto named = parse_campaign(std::string(kHead) + "  device: agx-xavier\n  model: lenet5\n"
                              "  power_mode: [MODE_10W, MAXN, {gpu_hz: 522750000}, MODE_15W, {cores: 6, cpu_khz: 1420800}]\n",
                              "n.yaml");
  REQUIRE(named.is_ok());
  std::vector<std::string> queued;
  for (size_t i : dispatch_order(named.value())) {
    const auto& pm = named->runs[i].power_mode;
    queued.push_back(!pm.name.empty() ? pm.name : pm.cores > 0 ? std::to_string(pm.cores) + "c" : "gpu");
  }
  CHECK(queued == std::vector<std::string>{"MAXN", "6c", "MODE_15W", "gpu", "MODE_10W"});
  auto file_order = parse_campaign(std::string(kHead) + "  device: agx-xavier\n  model: lenet5\norder: file\n"
                                   "  \n", "f.yaml");
  REQUIRE(file_order.is_ok());
  CHECK_FALSE(file_order->dispatch_by_power_mode);
}

TEST_CASE("the papers' board model estimates a campaign: the 15-hour runs take ~15 hours") {
  auto v = load_campaign_file(std::string(JETSWEEP_SOURCE_DIR) + "/experiments/sigmetrics23_variability_15h.yaml");
  REQUIRE(v.is_ok());
  perf::RunTimeModel model;
  for (const auto& run : v->runs) {
    auto s = model.run_seconds(run, device_target_class(run.device));
    REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
    // Epoch counts were chosen from the paper's epoch times to fill 15 h (cold first epoch included).
    CHECK_MESSAGE(std::abs(s.value() / 3600.0 - 15.0) < 0.5, run.device << ": " << s.value() / 3600.0 << " h");
  }
  RunConfig r;
  r.model = "vgg11";
  r.dataset = "cifar10";
  auto none = model.run_seconds(r, "agx-xavier");
  REQUIRE_FALSE(none.is_ok());
  CHECK(none.status().message().find("no simulation calibration for model 'vgg11'") != std::string::npos);
  r.model = "lenet5";
  r.dataset = "mnist";
  r.epochs = 3;
  auto one = model.run_seconds(r, "nano");
  REQUIRE(one.is_ok());
  r.epochs = 5;
  auto more = model.run_seconds(r, "nano");
  REQUIRE(more.is_ok());
  CHECK(more.value() > one.value());
  r.power_mode.cores = 9;
  CHECK(model.run_seconds(r, "nano").status().message().find("cores 9 outside 1..4") != std::string::npos);
}

TEST_CASE("a named power mode the board class does not define is refused at validation, listing its modes") {
  CHECK(error_of(std::string(kHead) + "  device: xavier-nx\n  model: lenet5\n  power_mode: MAXN\n") ==
        "bad.yaml:6:15: power mode 'MAXN' is not defined on 'xavier-nx' (its nvpmodel modes: 0=MODE_15W_2CORE, "
        "2=MODE_15W_6CORE); give the mode's settings instead ({cores, cpu_khz, gpu_hz, emc_hz})");
  CHECK(error_of(std::string(kHead) + "  device: [agx-xavier, nano]\n  model: lenet5\n  power_mode: MODE_15W\n").find(
            "power mode 'MODE_15W' is not defined on 'nano' (its nvpmodel modes: 0=MAXN, 1=5W)") != std::string::npos);
  // The names are NVIDIA's (nvpmodel_t194.conf, nvpmodel_p3701_0000.conf): JETSON.md's short names are not modes.
  CHECK(error_of(std::string(kHead) + "  device: agx-orin\n  model: lenet5\n  power_mode: 30W\n").find(
            "its nvpmodel modes: 0=MAXN, 1=MODE_15W, 2=MODE_30W, 3=MODE_50W") != std::string::npos);
  CHECK(parse_campaign(std::string(kHead) + "  device: orin-nano\n  model: lenet5\n  power_mode: 7W\n", "ok.yaml").is_ok());
  // By id too, on every board of a class, and zipped per class.
  CHECK(parse_campaign(std::string(kHead) + "  device: xavier-nx/*\n  model: lenet5\n  power_mode: 2\n", "ok.yaml").is_ok());
  CHECK(parse_campaign(std::string(kHead) + "  device: [agx-xavier, xavier-nx]\n  model: lenet5\n"
                       "  power_mode: [MAXN, MODE_15W_6CORE]\nzip:\n  - [device, power_mode]\n", "ok.yaml").is_ok());
}

TEST_CASE("gating notes: named modes whose GPU masks differ from the default mode's are named with their nvpmodel id") {
  auto orin = parse_campaign(std::string(kHead) + "  device: agx-orin\n  model: lenet5\n"
                             "  power_mode: [MAXN, MODE_30W, MODE_15W, {cores: 4}]\n", "g.yaml");
  REQUIRE(orin.is_ok());
  const auto notes = gating_notes(*orin);
  REQUIRE(notes.size() == 1);
  CAPTURE(notes[0]);
  CHECK(notes[0].rfind("agx-orin: 2 run(s) name modes (or base modes) that gate the GPU unlike the default mode MODE_30W "
                       "(TPC_PG_MASK 240): MAXN (TPC_PG_MASK 0, nvpmodel -m 0), MODE_15W (TPC_PG_MASK 248, nvpmodel -m 1)",
                       0) == 0);
  auto nano = parse_campaign(std::string(kHead) + "  device: orin-nano\n  model: lenet5\n  power_mode: [15W, 7W]\n",
                             "n.yaml");
  REQUIRE(nano.is_ok());
  REQUIRE(gating_notes(*nano).size() == 1);
  CHECK(gating_notes(*nano)[0].rfind("orin-nano: 1 run(s) name modes (or base modes) that gate the GPU unlike the default mode 15W "
                                     "(TPC_PG_MASK 240 FBP_PG_MASK 2): 7W (TPC_PG_MASK 252 FBP_PG_MASK 2, nvpmodel -m 1)",
                                     0) == 0);
  // Modes with the default mode's masks (and explicit settings) need nothing.
  auto xavier = parse_campaign(std::string(kHead) + "  device: agx-xavier\n  model: lenet5\n"
                               "  power_mode: [MAXN, MODE_15W, MODE_30W_ALL, {cores: 2}]\n", "x.yaml");
  REQUIRE(xavier.is_ok());
  CHECK(gating_notes(*xavier).empty());
  auto ten = parse_campaign(std::string(kHead) + "  device: agx-xavier\n  model: lenet5\n  power_mode: MODE_10W\n", "t.yaml");
  REQUIRE(ten.is_ok());
  REQUIRE(gating_notes(*ten).size() == 1);
  CHECK(gating_notes(*ten)[0].find("MODE_10W (TPC_PG_MASK 5, nvpmodel -m 1)") != std::string::npos);
}

TEST_CASE("base_mode: a sweep's base names a class's mode, not with a named mode; its masks count in the gating notes") {
  auto sweep = parse_campaign(std::string(kHead) + "  device: agx-orin\n  model: lenet5\n  base_mode: MAXN\n"
                              "  power_mode: [{cores: 4}, {cores: 8, gpu_hz: 816000000}]\n", "b.yaml");
  REQUIRE_MESSAGE(sweep.is_ok(), sweep.status().to_string());
  for (const auto& r : sweep->runs) CHECK(r.base_mode == "MAXN");
  auto back = run_config_from_json(to_json(sweep->runs[0]), "stored");   // as the database keeps it
  REQUIRE(back.is_ok());
  CHECK(back->base_mode == "MAXN");
  const auto notes = gating_notes(*sweep);
  REQUIRE(notes.size() == 1);
  CHECK((notes[0].find("agx-orin: 2 run(s) name modes (or base modes)") == 0 && notes[0].find("MAXN (TPC_PG_MASK 0, nvpmodel -m 0)") != std::string::npos));
  CHECK(error_of(std::string(kHead) + "  device: agx-orin\n  model: lenet5\n  base_mode: MODE_99W\n  power_mode: {cores: 2}\n")
            .find("base_mode 'MODE_99W' is not defined on 'agx-orin' (its nvpmodel modes: 0=MAXN, 1=MODE_15W, 2=MODE_30W, "
                  "3=MODE_50W)") != std::string::npos);
  CHECK(error_of(std::string(kHead) + "  device: agx-orin\n  model: lenet5\n  base_mode: MAXN\n  power_mode: MODE_15W\n")
            .find("base_mode") != std::string::npos);
  // On a simulated board the base's cores and clocks are what the settings leave out; alone, the run is in that mode.
  auto board = perf::SimBoard::open("agx-orin");
  REQUIRE(board.is_ok());
  RunConfig on_maxn = sweep->runs[0], named;
  named.power_mode.name = "MAXN";
  auto maxn = board->resolve(named), s = board->resolve(on_maxn);
  REQUIRE((s.is_ok() && maxn.is_ok()));
  CHECK((s->cores == 4 && s->gpu_hz == maxn->gpu_hz));
  on_maxn.power_mode.cores = 0;
  REQUIRE((board->reboot_into(0).is_ok() && board->apply(on_maxn).is_ok()));   // MAXN's masks after its reboot
  CHECK(board->state().mode_name == "MAXN");
}

TEST_CASE("reference state: a run without a power mode, and the settings a run leaves out, come from the class's default mode") {
  auto board = perf::SimBoard::open("agx-xavier");
  REQUIRE(board.is_ok());
  CHECK(board->reference_mode().name == "MODE_15W");
  RunConfig none;
  none.device = "agx-xavier";
  auto s = board->resolve(none);
  REQUIRE(s.is_ok());
  CHECK(s->cores == 4);
  CHECK(s->cpu_khz == 1190400);
  RunConfig two = none;
  two.power_mode.cores = 2;
  REQUIRE(board->apply(two).is_ok());
  CHECK(board->modified());
  auto again = board->resolve(none);   // never what the board is in now
  REQUIRE(again.is_ok());
  CHECK(again->cores == 4);
  REQUIRE(board->apply(none).is_ok());
  CHECK_FALSE(board->modified());
  CHECK(board->state().mode_name == "MODE_15W");
  CHECK(board->state().nvpmodel_id == 2);
}

TEST_CASE("dry-run caps keep a spread of runs, fewer epochs and minibatches") {
  auto c = load_campaign_file(std::string(JETSWEEP_SOURCE_DIR) + "/experiments/agx_xavier_all_modes.yaml");
  REQUIRE(c.is_ok());
  const size_t all = c->runs.size();
  const auto first = c->runs.front(), last = c->runs.back();
  auto caps = parse_dry_run_caps("max_runs=5&max_epochs=1&max_minibatches=10");
  REQUIRE(caps.is_ok());
  apply_dry_run_caps(c.value(), caps.value());
  REQUIRE(c->runs.size() == 5);
  CHECK(all > 80000);
  CHECK(c->runs.front().power_mode.cores == first.power_mode.cores);
  CHECK(c->runs.back().model == last.model);
  CHECK(c->runs.back().power_mode.cpu_khz == last.power_mode.cpu_khz);
  for (const auto& r : c->runs) {
    CHECK(r.epochs == 1);
    CHECK(r.max_minibatches == 10);
  }
  CHECK(c->description.find("[dry run: <= 5 runs, <= 1 epochs, <= 10 minibatches per epoch]") != std::string::npos);
  CHECK(parse_dry_run_caps("max_runs=0").status().message() == "parameter 'max_runs': expected a positive integer, got '0'");
  CHECK(parse_dry_run_caps("runs=3").status().message() ==
        "unknown parameter 'runs' (known: max_runs, max_epochs, max_minibatches)");
}

// ---- Limits (CampaignLimits, docs/CAMPAIGNS.md "Limits"): each is checked before the work it bounds. ----

namespace {
// "[1, 2, ..., n]"
std::string numbers(int n) {
  std::string s = "[";
  for (int i = 1; i <= n; ++i) s += (i > 1 ? ", " : "") + std::to_string(i);
  return s + "]";
}
// `n` exclude entries that match nothing ({seed: 1000001} .. {seed: 1000000 + n}).
std::string excludes(int n) {
  std::string s = "exclude:\n";
  for (int i = 1; i <= n; ++i) s += "  - {seed: " + std::to_string(1000000 + i) + "}\n";
  return s;
}
std::string error_with(const std::string& yaml, const CampaignLimits& limits) {
  auto c = parse_campaign(yaml, "big.yaml", limits);
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().code() == Code::kInvalidArgument);
  return c.status().message();
}
const char* const kLimitsHead = "campaign: l\nmatrix:\n  dataset: mnist\n  model: lenet5\n";
}  // namespace

TEST_CASE("limits: the issue's hostile campaigns are refused by the pre-checks, naming the limit") {
  const CampaignLimits defaults;
  // 1,000 seeds x 20,000 exclude rules (15.6 s of a frozen controller before): too many rules.
  CHECK(error_with(std::string(kLimitsHead) + "  seed: " + numbers(1000) + "\n" + excludes(20000), defaults) ==
        "big.yaml:7:3: 'exclude' has 20000 entries, more than the limit max_rules = 10000 (docs/CAMPAIGNS.md, \"Limits\")");
  // Within max_rules, combinations x rules is bounded: 2,000 seeds x 6,000 rules.
  CHECK(error_with(std::string(kLimitsHead) + "  seed: " + numbers(2000) + "\n" + excludes(6000), defaults)
            .find("big.yaml:7:3: 'exclude' has 6000 entries x 2000 combinations = 12000000 rule evaluations, more than "
                  "the limit max_rule_evaluations = 5000000") == 0);
  // ... generated modes count as combinations: the Orin grid (18,096 modes) x 600 rules.
  CHECK(error_with(std::string(kLimitsHead) + "  device: agx-orin\n  power_mode: {generate: grid}\n" + excludes(600),
                   defaults)
            .find("'exclude' has 600 entries x 18096 combinations = 10857600 rule evaluations, more than the limit "
                  "max_rule_evaluations = 5000000") != std::string::npos);
  // generate: sample, count: 6,000,000, cores: [1, 1, ... x 20,000] (1.7 GB and std::bad_alloc before): the
  // count is over the limit, and so is the list.
  std::string cores = "[1";
  for (int i = 1; i < 20000; ++i) cores += ", 1";
  cores += "]";
  CHECK(error_with(std::string(kLimitsHead) + "  device: agx-orin\n  power_mode: {generate: sample, count: 6000000, cores: " +
                       cores + "}\n", defaults) ==
        "big.yaml:6:41: 'power_mode.count' asks for 6000000 modes, more than the limit max_generated_modes = 100000 "
        "(docs/CAMPAIGNS.md, \"Limits\")");
  CHECK(error_with(std::string(kLimitsHead) + "  device: agx-orin\n  power_mode: {generate: sample, count: 10, cores: " +
                       cores + "}\n", defaults)
            .find("big.yaml:6:52: 'power_mode.cores' lists 20000 values, more than the limit max_list_length = 10000") == 0);
  CHECK(error_with(std::string(kLimitsHead) + "  device: agx-orin\n  power_mode: {generate: sample, count: 10, cores: [1, 2, 1]}\n",
                   defaults)
            .find("'power_mode.cores' lists 1 twice") != std::string::npos);
}

TEST_CASE("limits: a file over max_yaml_bytes is refused by its size, before it is read or parsed") {
  testing::TempDir dir;
  const auto path = dir / "huge.yaml";
  // A valid campaign padded with a comment to one byte over the limit.
  std::string text = std::string(kLimitsHead) + "#";
  text += std::string(static_cast<size_t>(kMaxCampaignYamlBytes) + 1 - text.size(), 'x');
  testing::write_file(path, text);
  auto c = load_campaign_file(path.string());
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().code() == Code::kInvalidArgument);
  CHECK(c.status().message() == path.string() + ": 4194305 bytes, more than the limit max_yaml_bytes = 4194304 "
                                                "(docs/CAMPAIGNS.md, \"Limits\")");
  CHECK(read_text_file(path.string()).status().message().find("more than the limit max_yaml_bytes") != std::string::npos);
  CHECK(read_text_file(path.string(), 0).is_ok());   // no limit
  CampaignLimits small;
  small.max_yaml_bytes = 40;
  CHECK(error_with(std::string(kLimitsHead) + "  seed: 1\n", small) ==
        "big.yaml: 63 bytes, more than the limit max_yaml_bytes = 40 (docs/CAMPAIGNS.md, \"Limits\")");
}

TEST_CASE("limits: runs, lists, generated modes and rules, at the limit accepted and one over refused") {
  CampaignLimits l;
  l.max_runs = 1000;
  l.max_list_length = 500;
  l.max_generated_modes = 1000;
  l.max_rules = 4;
  l.max_rule_evaluations = 2000;
  const std::string head = kLimitsHead;
  // Runs: 500 seeds x 2 repetitions = 1000 runs accepted; x 3 refused before expansion.
  auto at = parse_campaign("campaign: l\nrepetitions: 2\nmatrix:\n  dataset: mnist\n  model: lenet5\n  seed: " +
                               numbers(500) + "\n", "big.yaml", l);
  REQUIRE_MESSAGE(at.is_ok(), at.status().to_string());
  CHECK(at->runs.size() == 1000);
  CHECK(error_with("campaign: l\nrepetitions: 3\nmatrix:\n  dataset: mnist\n  model: lenet5\n  seed: " + numbers(500) + "\n", l) ==
        "big.yaml:4:3: the matrix expands to 1500 runs, more than the limit max_runs = 1000 (docs/CAMPAIGNS.md, \"Limits\")");
  // Lists.
  CHECK(error_with(head + "  seed: " + numbers(501) + "\n", l).find("big.yaml:5:9: 'seed' lists 501 values, more than the "
                                                                   "limit max_list_length = 500") == 0);
  // Generated modes: the nano grid (5,040) is over 1000; every 2nd value of its tables, cores [4] is not.
  CHECK(error_with(head + "  device: nano\n  power_mode: {generate: grid}\n", l)
            .find("the generated grid of nano has 5040 modes, more than the limit max_generated_modes = 1000") !=
        std::string::npos);
  auto some = parse_campaign(head + "  device: nano\n  power_mode: {generate: grid, every: 2, cores: [4]}\n", "big.yaml", l);
  REQUIRE_MESSAGE(some.is_ok(), some.status().to_string());
  const size_t per_model = some->runs.size();
  REQUIRE(per_model < 1000);
  REQUIRE(per_model * 10 > 1000);
  // Runs of generated modes: counted as they are made (exclusions may remove some), refused past the limit.
  CHECK(error_with(head + "  batch_size: " + numbers(10) + "\n  device: nano\n  power_mode: {generate: grid, every: 2, cores: [4]}\n", l)
            .find("the matrix expands to more than 1000 runs, more than the limit max_runs = 1000") != std::string::npos);
  // Rules: 4 entries accepted, 5 refused; 500 combinations x 4 rules = 2000 evaluations accepted.
  auto rules = parse_campaign(head + "  seed: " + numbers(500) + "\n" + excludes(4), "big.yaml", l);
  REQUIRE_MESSAGE(rules.is_ok(), rules.status().to_string());
  CHECK(rules->runs.size() == 500);
  CHECK(error_with(head + "  seed: " + numbers(10) + "\n" + excludes(5), l).find("more than the limit max_rules = 4") !=
        std::string::npos);
  CHECK(error_with(head + "  seed: " + numbers(501 - 1) + "\n  batch_size: [16, 32]\n" + excludes(3), l)
            .find("'exclude' has 3 entries x 1000 combinations = 3000 rule evaluations, more than the limit "
                  "max_rule_evaluations = 2000") != std::string::npos);
  std::string includes = "include:\n";
  for (int i = 1; i <= 5; ++i) includes += "  - {seed: " + std::to_string(1000 + i) + "}\n";
  CHECK(error_with(head + includes, l).find("'include' has 5 entries, more than the limit max_rules = 4") != std::string::npos);
}

TEST_CASE("limits: the deadline is checked during expansion, on the clock it is given") {
  using Clock = std::chrono::steady_clock;
  CampaignLimits l;
  l.deadline = std::chrono::seconds(10);
  int64_t reads = 0;
  l.clock = [&reads] { return Clock::time_point(std::chrono::seconds(reads++)); };   // one second per reading
  // 15,000 combinations: ~30,000 units of work, a clock reading every 1024: past 10 s half way.
  const std::string yaml = std::string(kLimitsHead) + "  seed: " + numbers(5000) + "\n  batch_size: [16, 32, 64]\n";
  CHECK(error_with(yaml, l).find("big.yaml:3:3: parsing and expanding the campaign took 11000 ms, more than the limit "
                                 "deadline_ms = 10000") == 0);
  CHECK(reads == 12);   // the start, then one reading per 1024 units of work
  // A clock that stands still: the same campaign is accepted.
  l.clock = [] { return Clock::time_point(); };
  auto c = parse_campaign(yaml, "big.yaml", l);
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  CHECK(c->runs.size() == 15000);
}

TEST_CASE("a YAML syntax error quoting part of a multi-byte character is still UTF-8 (found by fuzz_api)") {
  // yaml-cpp's "unknown escape character" quotes one byte: the first of the two of 'é' (0xC3 0xA9). The message
  // travels in JSON error replies (fuzz/regressions/api/yaml-escape-error-not-utf8).
  const std::string message = error_of("campaign: \"\\\xC3\xA9\"\nmatrix: {model: lenet5, dataset: mnist}\n");
  CHECK(message.find("bad.yaml:1:") == 0);
  CHECK(message.find("unknown escape character: \\xC3") != std::string::npos);
  CHECK_FALSE(invalid_utf8_at(message).has_value());
}

TEST_CASE("an error quoting a scalar with a NUL byte is still UTF-8 (found by fuzz_campaign)") {
  // yaml-cpp reads the NUL of a plain scalar as a lone byte that is not UTF-8 (fuzz/regressions/campaign/); the
  // text check now refuses the NUL itself, before yaml-cpp reads it.
  const char yaml[] = "campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  power_mode: {cores: 8, gpu\x02\0_hz: 1}\n";
  const std::string raw = error_of(std::string(yaml, sizeof yaml - 1));
  CHECK(raw.find("bad.yaml:5:29: control character U+0002 is not allowed") == 0);
  // The escape \_ makes the same lone byte, in a key that the error quotes.
  const std::string message =
      error_of("campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  power_mode: {cores: 8, \"gpu\\__hz\": 1}\n");
  CHECK(message.find("bad.yaml:5:") == 0);
  CHECK(message.find("unknown power_mode key 'gpu\\xA0_hz'") != std::string::npos);
  CHECK_FALSE(invalid_utf8_at(message).has_value());
}

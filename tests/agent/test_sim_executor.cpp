// Runs on simulated boards through RunExecutor: the protocol messages, energy, time scale,
// power-mode handling and restore.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <cmath>
#include <set>
#include <sstream>

#include "agent/model_cache.hpp"
#include "agent/models/registry.hpp"
#include "agent/profile.hpp"
#include "agent/run_executor.hpp"
#include "agent/sim/sim_executor.hpp"
#include "agent/telemetry.hpp"
#include "common/campaign.hpp"
#include "support/collecting_sink.hpp"
#include "support/run_checks.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::testing::CollectingSink;

namespace {

using jetsweep::testing::sim_executor;

RunConfig lenet(int64_t epochs) {
  RunConfig c = testing::make_run("lenet5", "mnist", 16, 4, epochs);
  c.device = "agx-xavier";
  c.sample_hz = 10;
  return c;
}

}  // namespace

TEST_CASE("a simulated run emits the protocol messages of a real run, with energy = integral of its samples") {
  auto ex = sim_executor("agx-xavier", "a1", 0.0);
  proto::DeviceFacts facts;
  facts.kernel = "Linux 6.1";
  ex->describe(facts);
  CHECK(facts.backend == "sim");
  CHECK(facts.device_class == "agx-xavier");
  CHECK(facts.kernel == "Linux 6.1");   // the host's: instance names are not software (no false differences)
  CHECK(ex->has_power_sensor());

  CollectingSink sink;
  std::atomic<bool> cancel{false};
  auto fin = ex->execute(7, lenet(3), sink, cancel);
  REQUIRE_MESSAGE(fin.status == "done", fin.error);
  CHECK(sink.finished() == fin);

  auto epochs = sink.epochs();
  auto samples = sink.samples();
  REQUIRE(epochs.size() == 3);
  // Minibatches: ceil(60000 / 16) per epoch, chunked at most kMaxMinibatchesPerChunk, indices contiguous.
  std::vector<int64_t> rows(3, 0);
  std::vector<double> stall(3, 0), compute(3, 0);
  for (const auto& c : sink.chunks()) {
    CHECK(c.run_id == 7);
    CHECK(c.stall_s.size() <= proto::kMaxMinibatchesPerChunk);
    CHECK(c.first_index == rows[static_cast<size_t>(c.epoch)]);
    rows[static_cast<size_t>(c.epoch)] += static_cast<int64_t>(c.stall_s.size());
    for (size_t i = 0; i < c.stall_s.size(); ++i) {
      CHECK(c.stall_s[i] >= 0);
      CHECK(c.compute_s[i] > 0);
      stall[static_cast<size_t>(c.epoch)] += c.stall_s[i];
      compute[static_cast<size_t>(c.epoch)] += c.compute_s[i];
    }
  }
  double t0 = 0;
  for (size_t k = 0; k < epochs.size(); ++k) {
    const auto& e = epochs[k];
    CAPTURE(k);
    CHECK(e.epoch == static_cast<int64_t>(k));
    CHECK(e.minibatches == 3750);
    CHECK(rows[k] == 3750);
    CHECK(e.stall_s == doctest::Approx(stall[k]).epsilon(1e-9));
    CHECK(e.compute_s == doctest::Approx(compute[k]).epsilon(1e-9));
    CHECK(e.e2e_s > e.stall_s + e.compute_s);
    REQUIRE(e.energy_j.has_value());
    const double t1 = t0 + e.e2e_s;
    const auto integral = integrate_energy(samples, t0, t1, PowerReading::kIntervalAverage);
    REQUIRE(integral.energy_j.has_value());
    CHECK(*e.energy_j == doctest::Approx(*integral.energy_j).epsilon(1e-12));
    // The epoch's window is on the samples' timeline and matches e2e_s exactly; power covers all of it.
    REQUIRE(e.t_start_s.has_value());
    REQUIRE(e.t_end_s.has_value());
    CHECK(*e.t_start_s == doctest::Approx(t0).epsilon(1e-12));
    CHECK(*e.t_end_s - *e.t_start_s == doctest::Approx(e.e2e_s).epsilon(1e-12));
    CHECK(e.power_coverage.value_or(0) == doctest::Approx(1.0));
    CHECK_FALSE(e.throttled);
    REQUIRE(e.clocks_start.has_value());
    CHECK(e.clocks_start->cores_online == 4);   // AGX Xavier reference state: nvpmodel 15W, 4 cores
    REQUIRE(e.mean_power_w.has_value());
    CHECK(*e.mean_power_w == doctest::Approx(*e.energy_j / e.e2e_s).epsilon(1e-12));
    CHECK(*e.mean_power_w > 7.0);    // AGX base load 7.5 W (SIGMETRICS'23 Sec. 5.6.2)
    CHECK(*e.mean_power_w < 15.0);   // LeNet: base load is 65-80% of the energy
    t0 = t1;
  }
  CHECK(epochs[0].e2e_s > epochs[1].e2e_s);   // bootstrap and cold page cache
  CHECK(fin.wall_s == doctest::Approx(t0).epsilon(1e-12));
  // Samples: t = 0, every 0.1 modelled s, and at every epoch end; in time order, power everywhere; the CPU at
  // the reference state's cap (the run names no mode: nvpmodel 15W, 1.2 GHz rounded into the table).
  CHECK(samples.size() > static_cast<size_t>(t0 * 10) - 2);
  CHECK(samples.front().t_s == 0.0);
  for (size_t i = 1; i < samples.size(); ++i) {
    CHECK(samples[i].t_s > samples[i - 1].t_s);
    CHECK(samples[i].power_w.has_value());
    CHECK(samples[i].cpu_freq_mhz.value_or(0) == doctest::Approx(1190.4));
  }
}

TEST_CASE("same instance and config give identical results; another instance differs") {
  auto run = [](const std::string& instance) {
    auto ex = sim_executor("nano", instance, 0.0);
    CollectingSink sink;
    std::atomic<bool> cancel{false};
    RunConfig c = lenet(2);
    c.max_minibatches = 300;
    ex->execute(1, c, sink, cancel);
    return sink.messages;
  };
  auto a = run("d1");
  CHECK(a == run("d1"));
  CHECK_FALSE(a == run("d2"));
}

TEST_CASE("--time-scale makes the run take F x the modelled time and leaves the reported durations unchanged") {
  RunConfig c = lenet(2);
  c.max_minibatches = 400;
  std::atomic<bool> cancel{false};
  CollectingSink fast;
  auto fin_fast = sim_executor("xavier-nx", "x", 0.0)->execute(3, c, fast, cancel);
  REQUIRE(fin_fast.status == "done");
  const double modelled = fin_fast.wall_s;
  REQUIRE(modelled > 1.0);
  const double scale = 0.4 / modelled;   // about 0.4 s of real waiting

  CollectingSink slow;
  auto ex = sim_executor("xavier-nx", "x", scale);
  const auto start = std::chrono::steady_clock::now();
  auto fin_slow = ex->execute(3, c, slow, cancel);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(fin_slow.status == "done");
  CHECK(waited >= 0.4 * 0.99);
  CHECK(waited < 0.4 + 10.0);
  CHECK(slow.messages == fast.messages);   // modelled durations, not wall-clock ones
}

TEST_CASE("cancellation ends a paced simulated run as cancelled") {
  auto ex = sim_executor("agx-xavier", "c", 1.0);   // real time: would take minutes
  CollectingSink sink;
  std::atomic<bool> cancel{true};
  auto fin = ex->execute(4, lenet(6), sink, cancel);
  CHECK(fin.status == "cancelled");
}

TEST_CASE("power modes: applied and reported, refused ones fail the run naming the value, restore goes back") {
  auto ex = sim_executor("agx-xavier", "p", 0.0);
  std::atomic<bool> cancel{false};
  RunConfig c = lenet(1);
  c.max_minibatches = 50;
  c.power_mode.name = "MODE_10W";
  auto need = ex->reboot_for(c);   // MODE_10W gates 2 of the 4 TPCs (TPC_PG_MASK 5): nvpmodel and a reboot first
  REQUIRE((need.is_ok() && need->has_value()));
  auto back = ex->reboot_into({}, **need, cancel);
  REQUIRE((back.is_ok() && *back));
  CollectingSink named;
  REQUIRE(ex->execute(1, c, named, cancel).status == "done");
  CHECK_FALSE(ex->board_modified());   // the mode it rebooted into is the state it booted in
  auto s = named.samples();
  CHECK(s.back().cpu_freq_mhz.value_or(0) == doctest::Approx(1190.4));   // 1.2 GHz cap rounded down into the table

  // Explicit settings: the knobs not given come from the reference state (15W: CPU capped at 1.2 GHz), not
  // from the run before.
  RunConfig partial = lenet(1);
  partial.max_minibatches = 50;
  partial.power_mode.cores = 8;
  CollectingSink p;
  REQUIRE(ex->execute(2, partial, p, cancel).status == "done");
  CHECK(p.samples().back().cpu_freq_mhz.value_or(0) == doctest::Approx(1190.4));
  CHECK(ex->board_modified());
  CHECK(ex->restore_board().is_ok());
  CHECK_FALSE(ex->board_modified());

  RunConfig bad = lenet(1);
  bad.power_mode.cpu_khz = 1000;
  testing::expect_refused(*ex, 3, bad, {"CPU frequency 1000 kHz is not in the class's table", "agx-xavier"});
  CHECK_FALSE(ex->board_modified());

  auto nx = sim_executor("xavier-nx", "p", 0.0);
  RunConfig maxn = lenet(1);
  maxn.power_mode.name = "MAXN";
  testing::expect_refused(*nx, 4, maxn,
                          {"simulated xavier-nx has no power mode 'MAXN' (modes: 0=MODE_15W_2CORE, 2=MODE_15W_6CORE)"});
}

TEST_CASE("fewer cores and a slower CPU make a simulated LeNet run slower") {
  auto e2e_total = [](int64_t cores, int64_t cpu_khz) {
    auto ex = sim_executor("agx-orin", "o", 0.0);
    RunConfig c = lenet(2);
    c.power_mode.cores = cores;
    c.power_mode.cpu_khz = cpu_khz;
    CollectingSink sink;
    std::atomic<bool> cancel{false};
    auto fin = ex->execute(1, c, sink, cancel);
    REQUIRE_MESSAGE(fin.status == "done", fin.error);
    return sink.epochs().back().e2e_s;
  };
  CHECK(e2e_total(2, 1036800) > e2e_total(4, 1036800));
  CHECK(e2e_total(4, 1036800) > e2e_total(4, 2201600));
}

TEST_CASE("page cache: the first run and a run with drop_caches read the dataset; a warm run does not") {
  auto ex = sim_executor("nano", "cache", 0.0);
  std::atomic<bool> cancel{false};
  auto epoch0_stall = [&](bool drop) {
    RunConfig c = lenet(1);
    c.drop_caches = drop;
    CollectingSink sink;
    REQUIRE(ex->execute(1, c, sink, cancel).status == "done");
    int64_t read = 0;
    for (const auto& s : sink.samples()) read += s.disk_read_bytes;
    return std::make_pair(sink.epochs()[0].stall_s, read);
  };
  auto cold = epoch0_stall(false);
  auto warm = epoch0_stall(false);
  auto dropped = epoch0_stall(true);
  CHECK(cold.first > warm.first + 3.0);   // 46 MB from the SD card
  CHECK(cold.second > 40'000'000);
  CHECK(warm.second == 0);
  CHECK(dropped.first == doctest::Approx(cold.first).epsilon(1e-9));
}

TEST_CASE("a workload the class cannot train fails the run with the reason") {
  auto ex = sim_executor("nano", "m", 0.0);
  RunConfig c = lenet(1);
  c.model = "resnet18";
  c.dataset = "cifar10";
  testing::expect_refused(*ex, 1, c, {"ResNet-18 runs out of memory on Xavier NX and Nano"});
  ExecutorOptions tx2;
  tx2.backend = "sim";
  tx2.sim_class = "tx2";
  auto bad = RunExecutor::open(tx2);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("board class 'tx2' (known: nano, xavier-nx") != std::string::npos);
}

TEST_CASE("experiments/sim_fleet.yaml: every run is valid on the simulated class it names") {
  auto campaign = load_campaign_file(std::string(JETSWEEP_SOURCE_DIR) + "/experiments/sim_fleet.yaml");
  REQUIRE_MESSAGE(campaign.is_ok(), campaign.status().to_string());
  CHECK(campaign->runs.size() == 32);
  std::set<std::string> classes;
  for (const auto& run : campaign->runs) {
    CAPTURE(run.device);
    classes.insert(run.device);
    auto ex = sim_executor(run.device, "fleet", 0.0);
    RunConfig quick = run;
    quick.epochs = 1;
    quick.max_minibatches = 20;
    CollectingSink sink;
    std::atomic<bool> cancel{false};
    auto fin = ex->execute(1, quick, sink, cancel);
    CHECK_MESSAGE(fin.status == "done", fin.error);
  }
  CHECK(classes == std::set<std::string>{"nano", "xavier-nx", "agx-xavier", "agx-orin"});
}

TEST_CASE("profiling mode: modes walked with cores only going offline; settle rule; one CSV row per mode") {
  using namespace jetsweep;
  using namespace jetsweep::agent;
  // Ordering.
  std::vector<RunConfig> modes(3);
  modes[0].power_mode.cores = 2;
  modes[1].power_mode.cores = 8;
  modes[1].power_mode.cpu_khz = 1000;
  modes[2].power_mode.cores = 8;
  modes[2].power_mode.cpu_khz = 2000;
  auto ordered = order_for_profiling(modes);
  CHECK(ordered[0].power_mode.cpu_khz == 2000);
  CHECK(ordered[1].power_mode.cpu_khz == 1000);
  CHECK(ordered[2].power_mode.cores == 2);

  // Settle rule on hand-made messages: power ramps for 1 s, then holds at 10 W; minibatches of 0.1 s.
  std::vector<proto::Body> msgs;
  proto::MinibatchChunk mb{1, 0, 0, {}, {}, {}};
  for (int i = 0; i < 40; ++i) {
    mb.stall_s.push_back(0.01);
    mb.compute_s.push_back(i == 0 ? 0.49 : 0.09);  // the first minibatch is slow (dropped)
  }
  msgs.push_back(mb);
  proto::SampleChunk sc;
  sc.run_id = 1;
  for (int i = 0; i <= 45; ++i) {
    proto::Sample s;
    s.t_s = i * 0.1;
    s.power_w = i < 10 ? 5.0 + 0.5 * i : 10.0;
    sc.samples.push_back(s);
  }
  msgs.push_back(sc);
  auto p = summarise_mode(msgs, ProfileOptions{40, 5, 3.0});
  REQUIRE_MESSAGE(p.is_ok(), p.status().to_string());
  REQUIRE(p->settled_after_s.has_value());
  CHECK(*p->settled_after_s == doctest::Approx(1.0));
  // Minibatch j (>= 1) starts at 0.5 + 0.1 (j - 1): counted once the start is >= 1.0 s, i.e. j >= 6.
  CHECK(p->counted == 34);
  CHECK(*p->minibatch_ms == doctest::Approx(100.0));
  CHECK(*p->power_mw == doctest::Approx(10000.0));
  // Without power samples every minibatch but the first counts and power is null, not invented.
  auto no_power = summarise_mode({mb}, ProfileOptions{});
  REQUIRE(no_power.is_ok());
  CHECK(no_power->counted == 39);
  CHECK_FALSE(no_power->power_mw.has_value());

  // End to end on a simulated AGX Orin: a generated sample of 6 modes.
  auto campaign = parse_campaign("campaign: p\nmatrix:\n  device: agx-orin\n  model: resnet18\n  dataset: cifar10\n"
                                 "  power_mode: {generate: sample, count: 6, seed: 3}\n",
                                 "p.yaml");
  REQUIRE(campaign.is_ok());
  auto executor = sim_executor("agx-orin", "1", 0.0);
  std::ostringstream csv;
  CHECK(profile_modes(*executor, "agx-orin", campaign->runs, ProfileOptions{40, 5, 3.0}, csv) == 0);
  std::istringstream lines(csv.str());
  std::string line;
  std::getline(lines, line);
  CHECK(line == "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,minibatches,settled_after_s,mode_name");
  int rows = 0;
  int64_t last_cores = 1000;
  while (std::getline(lines, line)) {
    ++rows;
    CHECK(line.rfind("agx-orin,resnet18/cifar10,", 0) == 0);
    const int64_t cores = std::stoll(line.substr(std::string("agx-orin,resnet18/cifar10,").size()));
    CHECK(cores <= last_cores);  // cores only go offline
    last_cores = cores;
  }
  CHECK(rows == 6);
}

TEST_CASE("every run starts from a defined state: a run without a power mode gets the reference state, not the last mode") {
  auto ex = sim_executor("agx-xavier", "ref", 0.0);
  std::atomic<bool> cancel{false};
  auto started = [](const CollectingSink& sink) {
    for (const auto& m : sink.messages)
      if (const auto* s = std::get_if<proto::RunStarted>(&m)) return *s;
    FAIL("no run_started");
    return proto::RunStarted{};
  };
  RunConfig two = lenet(1);
  two.max_minibatches = 20;
  two.power_mode.cores = 2;
  two.power_mode.cpu_khz = 2112000;
  two.pin_clocks = true;
  two.fan_max = true;
  CollectingSink first;
  REQUIRE(ex->execute(1, two, first, cancel).status == "done");
  REQUIRE(std::holds_alternative<proto::RunStarted>(first.messages.front()));   // before any result
  const auto s1 = started(first);
  CHECK_FALSE(s1.reference_state);
  REQUIRE(s1.applied.has_value());
  CHECK(s1.applied->cores_online == 2);
  CHECK(s1.applied->cpu_khz == 2112000);
  CHECK(s1.applied->clocks_pinned);
  CHECK(s1.applied->fan == "max");
  CHECK(s1.applied->mode_name.empty());

  RunConfig none = lenet(1);   // names no power mode, no pinning, no fan
  none.max_minibatches = 20;
  CollectingSink second;
  REQUIRE(ex->execute(2, none, second, cancel).status == "done");
  const auto s2 = started(second);
  CHECK(s2.reference_state);
  REQUIRE(s2.applied.has_value());
  CHECK(s2.applied->mode_name == "MODE_15W");   // JETSON.md: the AGX Xavier's default nvpmodel mode
  CHECK(s2.applied->nvpmodel_id == 2);
  CHECK(s2.applied->cores_online == 4);
  CHECK(s2.applied->cpu_khz == 1190400);
  CHECK_FALSE(s2.applied->clocks_pinned);
  CHECK(s2.applied->fan == "auto");
  CHECK(second.samples().back().cpu_freq_mhz.value_or(0) == doctest::Approx(1190.4));
  CHECK(second.epochs().front().clocks_start->cores_online == 4);
}

TEST_CASE("simulated storage media: --storage names the media a simulated agent offers, with the papers' speeds") {
  ExecutorOptions o;
  o.backend = "sim";
  o.sim_class = "agx-xavier";
  o.sim_instance = "media";
  REQUIRE(o.storage.add("hdd=/srv/hdd").is_ok());
  REQUIRE(o.storage.add("ssd=/srv/ssd").is_ok());
  auto ex = RunExecutor::open(o);
  REQUIRE_MESSAGE(ex.is_ok(), ex.status().to_string());
  std::atomic<bool> cancel{false};
  auto epoch0_stall = [&](const std::string& data) {
    RunConfig c = lenet(1);
    c.drop_caches = true;
    c.data = data;
    c.max_minibatches = 100;
    CollectingSink sink;
    auto fin = ex.value()->execute(1, c, sink, cancel);
    REQUIRE_MESSAGE(fin.status == "done", fin.error);
    const auto& s = std::get<proto::RunStarted>(sink.messages.front());
    CHECK(s.storage_medium == data.substr(1));
    CHECK(s.storage_device == "simulated " + data.substr(1));
    CHECK(s.page_cache_dropped);
    return sink.epochs()[0].stall_s;
  };
  CHECK(epoch0_stall("@hdd") > epoch0_stall("@ssd"));   // 6 MB/s vs 84 MB/s for a cold epoch 0
  RunConfig sd = lenet(1);
  sd.data = "@sd";
  CollectingSink sink;
  auto fin = ex.value()->execute(2, sd, sink, cancel);
  CHECK(fin.status == "failed");
  CHECK(fin.error.find("offers no storage medium 'sd'") != std::string::npos);

  ExecutorOptions bad = o;
  REQUIRE(bad.storage.add("nfs=/srv/nfs").is_ok());
  auto refused = RunExecutor::open(bad);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().message().find("'nfs' has no modelled read speed (modelled: sd, ssd, hdd)") != std::string::npos);
}

namespace {
// scripts/export-torchscript MODEL for SHAPE into the model cache at `cache`; its model name.
std::string exported_into_cache(const std::string& model, const std::string& shape_args, const std::string& cache) {
  const std::string file = (std::filesystem::path(cache).parent_path() / (model + ".pt")).string();
  const std::string command = "/usr/bin/python3 " + std::string(JETSWEEP_SOURCE_DIR) + "/scripts/export-torchscript " +
                              model + " " + shape_args + " -o " + file + " > /dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  auto sha = ModelCache(cache).add(file);
  REQUIRE(sha.is_ok());
  return "torchscript:" + sha.value();
}
}  // namespace

TEST_CASE("a TorchScript model on a simulated board: modelled as the calibrated model scaled by forward MACs") {
  testing::TempDir dir;
  const std::string cache = (dir / "cache").string();
  ExecutorOptions o;
  o.backend = "sim";
  o.sim_class = "agx-xavier";
  o.sim_instance = "a1";
  o.time_scale = 0;
  o.model_dir = cache;
  std::atomic<bool> cancel{false};
  // Each run on a fresh board of the same instance: the same state (cold page cache), so only the model differs.
  auto run = [&](const RunConfig& c, CollectingSink& sink) {
    auto ex = RunExecutor::open(o);
    REQUIRE(ex.is_ok());
    return (*ex)->execute(1, c, sink, cancel);
  };

  // The built-in LeNet-5's architecture exported from Python: the same MACs, so exactly the built-in model's epochs.
  RunConfig own = lenet(2);
  own.model = exported_into_cache("lenet5", "--channels 1 --size 28 --classes 10", cache);
  CollectingSink own_sink, builtin_sink;
  REQUIRE(run(own, own_sink).status == "done");
  REQUIRE(run(lenet(2), builtin_sink).status == "done");
  const auto own_started = own_sink.all<proto::RunStarted>().at(0);
  CHECK(own_started.compute_device ==
        "simulated: TorchScript model of 61706 parameters and 416520 forward MACs per sample, modelled as lenet5 x 1");
  // What it reports it trained: the file's hash and its measured size; no data is read on a simulated board.
  REQUIRE(own_started.workload.has_value());
  CHECK(own_started.workload->model_sha256 == torchscript_sha256(own.model));
  CHECK(own_started.workload->parameters == 61706);
  CHECK(own_started.workload->forward_macs == 416520);
  CHECK(own_started.workload->dataset_fingerprint.empty());
  // A built-in model on a simulated board: nothing measured (unset, not 0), no fingerprint.
  const auto builtin_started = builtin_sink.all<proto::RunStarted>().at(0);
  REQUIRE(builtin_started.workload.has_value());
  CHECK_FALSE(builtin_started.workload->parameters.has_value());
  CHECK(builtin_started.workload->dataset_fingerprint.empty());
  for (size_t e = 0; e < 2; ++e) {
    CHECK(own_sink.epochs()[e].e2e_s == builtin_sink.epochs()[e].e2e_s);
    CHECK(own_sink.epochs()[e].energy_j == builtin_sink.epochs()[e].energy_j);
  }

  // torchvision's ResNet-18 on CIFAR-10 images against the calibrated (CIFAR-stem) ResNet-18: its compute scaled by
  // the ratio of their measured MACs, its stall (the data pipeline's) unchanged.
  RunConfig tv = testing::make_run("resnet18", "cifar10", 16, 4, 1);
  tv.device = "agx-xavier";
  tv.max_minibatches = 30;
  CollectingSink ref_sink, tv_sink;
  REQUIRE(run(tv, ref_sink).status == "done");
  tv.model = exported_into_cache("resnet18", "--channels 3 --size 32 --classes 10", cache);
  auto fin = run(tv, tv_sink);
  REQUIRE_MESSAGE(fin.status == "done", fin.error);
  const auto own_figures = models::measure_torchscript(tv.model, ModelCache(cache).find(torchscript_sha256(tv.model)).value(),
                                                       models::InputSpec::image(3, 32, 32, 10));
  const auto ref_figures = models::measure_model("resnet18", models::InputSpec::image(3, 32, 32, 10));
  REQUIRE(own_figures.is_ok());
  REQUIRE(ref_figures.is_ok());
  const double scale = static_cast<double>(own_figures->forward_macs) / static_cast<double>(ref_figures->forward_macs);
  CHECK(scale < 0.2);   // the ImageNet stem downsamples 32x32 images 4x early: far fewer MACs than the CIFAR stem
  // Per minibatch after the first (which carries the run's start-up): compute scaled, with the same variation.
  auto after_first = [](const CollectingSink& sink, bool compute) {
    double sum = 0;
    for (const auto& c : sink.chunks())
      for (size_t i = 0; i < c.compute_s.size(); ++i)
        if (c.first_index + static_cast<int64_t>(i) > 0) sum += compute ? c.compute_s[i] : c.stall_s[i];
    return sum;
  };
  // (Within 2%: the per-minibatch variation, +-3%, is drawn alike but not identically once the times differ.)
  CHECK(after_first(tv_sink, true) == doctest::Approx(after_first(ref_sink, true) * scale).epsilon(0.02));
  CHECK(tv_sink.all<proto::RunStarted>().at(0).compute_device.find("modelled as resnet18 x ") != std::string::npos);

  // A dataset simulated boards have no shape for, and a model missing from the cache: the run fails saying so.
  RunConfig text = own;
  text.dataset = "text";
  CollectingSink text_sink;
  CHECK(run(text, text_sink).error.find("simulated boards model TorchScript models on mnist, fashion-mnist, cifar10") !=
        std::string::npos);
  RunConfig missing = own;
  missing.model = "torchscript:" + std::string(64, 'e');
  CollectingSink missing_sink;
  CHECK(run(missing, missing_sink).error.find("is not in the model cache") != std::string::npos);
}

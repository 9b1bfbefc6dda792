// CSV corpus reader/writer: columns in any order, extra columns ignored, errors naming file:line and
// column, warm-up epochs kept out of the mode profiles, and a write/read round trip; configuration axes,
// --where / --pool-over and the refusal to pool unlike configurations.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <sstream>

#include "analysis/csv_corpus.hpp"
#include "analysis/synthetic_corpus.hpp"
#include "analysis_fixture.hpp"

using namespace jetsweep;
using namespace jetsweep::analysis;

namespace {
Result<Corpus> parse(const std::string& text) {
  std::istringstream in(text);
  return parse_corpus_csv(in, "c.csv");
}

// The corpus of a CSV text that must parse.
Corpus parsed(const std::string& text) {
  auto c = parse(text);
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  return std::move(c).value();
}

// The message of a CSV text that must not parse.
std::string parse_error(const std::string& text) {
  auto c = parse(text);
  REQUIRE_FALSE(c.is_ok());
  return c.status().message();
}
}  // namespace

TEST_CASE("csv: required columns in any order, extras ignored, empty power allowed") {
  const Corpus c = parsed(
      "power_mw,workload,extra,device,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms\n"
      "30000,resnet,x,agx-orin,12,2201.6,1300.5,3199,150.5\n"
      ",resnet,y,agx-orin,4,1000,500,2133,400\n");
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[0].device == "agx-orin");
  CHECK(c.rows[0].mode == ModeKey{12, 2201.6, 1300.5, 3199});
  CHECK(c.rows[0].minibatch_ms == doctest::Approx(150.5));
  CHECK(*c.rows[0].power_mw == doctest::Approx(30000));
  CHECK_FALSE(c.rows[1].power_mw.has_value());
  CHECK(c.rows[0].where == "c.csv:2");
}

TEST_CASE("csv: errors name the file, line and column") {
  auto missing = parse("device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms\n");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == Code::kInvalidArgument);
  CHECK(missing.status().message().find("c.csv:1: missing column 'power_mw'") != std::string::npos);

  const std::string header = "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw\n";
  CHECK(parse_error(header + "orin,resnet,12,2201.6,1300.5,3199,150,1\norin,resnet,12,fast,1300.5,3199,150,1\n") ==
        "c.csv:3: column 'cpu_mhz': expected a number, got 'fast'");
  CHECK(parse_error(header + "orin,resnet,12,2201.6,1300.5,3199,-5,1\n")
            .find("c.csv:2: column 'minibatch_ms': must be positive") != std::string::npos);
  CHECK(parse_error(header + "orin,resnet,2.5,2201.6,1300.5,3199,5,1\n").find("c.csv:2: column 'cores'") !=
        std::string::npos);
  CHECK(parse_error(header + "orin,resnet,1\n").find("c.csv:2: expected 8 fields, got 3") != std::string::npos);

  CHECK_FALSE(parse("").is_ok());
  CHECK_FALSE(read_corpus_csv("/nonexistent/corpus.csv").is_ok());
}

TEST_CASE("csv: per-epoch rows keep epoch 0 out of the profiles") {
  // One mode of one instance, three epochs: the warm-up (12 ms per minibatch) and two measured ones.
  const Corpus c = parsed(
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,instance,epoch,epoch_s,energy_j,kernel\n"
      "nx,lenet,6,1400,1100,1600,12,9000,nx-1,0,30,270,5.10\n"
      "nx,lenet,6,1400,1100,1600,10,9000,nx-1,1,25,225,5.10\n"
      "nx,lenet,6,1400,1100,1600,10.5,9000,nx-1,2,26,234,5.10\n");
  CHECK(c.rows.size() == 2);
  REQUIRE(c.epochs.size() == 3);
  CHECK(c.epoch_times);
  CHECK(c.epochs[0].epoch == 0);
  CHECK(c.epochs[1].software.at("kernel") == "5.10");
  CHECK(*c.epochs[2].energy == doctest::Approx(234));
}

TEST_CASE("csv: written corpora read back identically") {
  const Corpus c = testing::synthetic_corpus("orin-nano", {"resnet"}, {.noise_pct = 3, .max_modes = 40});
  std::stringstream ss;
  write_corpus_csv(ss, c);
  auto back = parse_corpus_csv(ss, "round.csv");
  REQUIRE(back.is_ok());
  REQUIRE(back->rows.size() == c.rows.size());
  for (size_t i = 0; i < c.rows.size(); ++i) {
    CHECK(back->rows[i].mode == c.rows[i].mode);
    CHECK(back->rows[i].minibatch_ms == doctest::Approx(c.rows[i].minibatch_ms).epsilon(1e-9));
    CHECK(*back->rows[i].power_mw == doctest::Approx(*c.rows[i].power_mw).epsilon(1e-9));
  }
}

TEST_CASE("corpus: workload selection averages instances and names the flag on errors") {
  const Corpus c = parsed(
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,instance\n"
      "nx,lenet,6,1400,1100,1600,10,9000,nx-1\n"
      "nx,lenet,6,1400,1100,1600,12,11000,nx-2\n"
      "agx,lenet,8,2265,1377,2133,5,20000,agx-1\n");
  auto amb = select_workload(c, {"lenet", ""}, "--workload");
  REQUIRE_FALSE(amb.is_ok());
  CHECK(amb.status().message().find("--workload") == 0);
  CHECK(amb.status().message().find("lenet@BOARD") != std::string::npos);
  auto nx = select_workload(c, parse_workload_ref("lenet@nx"), "--workload");
  REQUIRE(nx.is_ok());
  REQUIRE(nx->modes.size() == 1);
  CHECK(nx->modes[0].minibatch_ms == doctest::Approx(11));
  CHECK(*nx->modes[0].power_mw == doctest::Approx(10000));
  auto none = select_workload(c, {"vgg", ""}, "--target");
  REQUIRE_FALSE(none.is_ok());
  CHECK(none.status().message().find("--target: workload 'vgg' not found") == 0);
}

TEST_CASE("csv: configuration axes, simulated rows and partial modes") {
  const Corpus c = parsed(
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,mode,workers,batch_size,pin_clocks,simulated\n"
      "agx,lenet,8,2265.6,1377,2133,10,20000,,2,16,t,true\n"
      "agx,lenet,4,,,,25,,4c/-/-/-,4.0,16,false,false\n"
      "agx,lenet,8,2265.6,1377,2133,9,20000,,,16,,\n");
  REQUIRE(c.rows.size() == 3);
  const auto& r0 = c.rows[0];
  CHECK(r0.simulated);
  CHECK(r0.axes == AxisMap{{"mode", "8c/2265.6/1377/2133"}, {"workers", "2"}, {"batch_size", "16"}, {"pin_clocks", "true"}});
  const auto& r1 = c.rows[1];
  CHECK_FALSE(r1.simulated);
  CHECK(r1.mode.cores == 4);
  CHECK_FALSE(r1.mode.explicit_settings());
  CHECK(r1.axes.at("mode") == "4c/-/-/-");
  CHECK(r1.axes.at("workers") == "4");  // canonical: whole numbers without a fraction
  CHECK(r1.axes.at("pin_clocks") == "false");
  CHECK(c.rows[2].axes.count("workers") == 0);  // empty: not a distinguishing axis for this row
  CHECK(c.epochs[0].simulated);
  CHECK(c.epochs[1].axes == r1.axes);

  // Without a mode label or a mode name, the settings stay required.
  CHECK(parse_error("device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw\nagx,lenet,8,,1377,2133,10,1\n") ==
        "c.csv:2: column 'cpu_mhz': empty value");
  CHECK(parse_error("device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,simulated\n"
                    "agx,lenet,8,1,1,1,10,1,maybe\n")
            .find("c.csv:2: column 'simulated'") == 0);
}

TEST_CASE("csv: per-epoch export keeps every axis, the simulated mark and the repetition") {
  const Corpus c = parsed(
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,instance,epoch,e2e_s,workers,prefetch,"
      "storage,simulated,repetition,run_id\n"
      "agx,lenet5/mnist,8,2265.6,1377,2133,10,20000,x-1,0,14,2,2,ssd,true,0,7\n"
      "agx,lenet5/mnist,8,2265.6,1377,2133,10,20000,x-1,1,10,2,2,ssd,true,1,8\n");
  CHECK(c.epoch_times);  // e2e_s is the per-epoch time
  CHECK(c.epochs[1].repetition == 1);
  CHECK(c.epochs[1].run_id == 8);
  std::stringstream ss;
  write_epochs_csv(ss, c);
  const std::string text = ss.str();
  for (const char* col : {",cores,", ",cpu_mhz,", ",mode_name,", ",pin_clocks,", ",fan,", ",workers,", ",prefetch,",
                          ",batch_size,", ",threads,", ",dataset,", ",storage,", ",repetition,", ",simulated,", ",epoch,",
                          ",warmup,", ",e2e_s,", ",stall_s,", ",compute_s,", ",energy_j,", ",power_w,",
                          ",power_coverage,", ",throttled,", ",t_start_s,", ",t_end_s,", ",start_unix_s,", ",end_unix_s,"})
    CHECK_MESSAGE(text.substr(0, text.find('\n')).find(col) != std::string::npos, col);
  auto back = parse_corpus_csv(ss, "back.csv");
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  REQUIRE(back->epochs.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(back->epochs[i].axes == c.epochs[i].axes);
    CHECK(back->epochs[i].simulated);
    CHECK(back->epochs[i].repetition == c.epochs[i].repetition);
    CHECK(back->epochs[i].time == doctest::Approx(c.epochs[i].time));
    CHECK(back->epochs[i].dataset == "mnist");
  }
  CHECK(back->epochs[0].axes.at("storage") == "ssd");
}

TEST_CASE("corpus: --where selects, --pool-over pools, labels name the axes") {
  CHECK(config_label({{"mode", "8c/2265.6/1377/2133"}, {"pin_clocks", "true"}, {"batch_size", "16"}, {"workers", "4"},
                      {"prefetch", "2"}}) == "8c/2265.6/1377/2133 pin bs16 w4 pf2");
  const std::set<std::string> show = {"mode", "workers"};
  CHECK(config_label({{"mode", "MAXN"}, {"pin_clocks", "false"}, {"batch_size", "16"}, {"workers", "4"}, {"fan", "max"}},
                     &show) == "MAXN fan-max w4");
  CHECK(mode_axis_value({}, "") == "default");
  CHECK(mode_axis_value({}, "15W") == "15W");
  CHECK(mode_axis_value({4, 0, 0, 0}, "") == "4c/-/-/-");

  CHECK_FALSE(parse_where("colour=red").is_ok());
  CHECK(parse_where("colour=red").status().message().find("--where: unknown axis 'colour'") == 0);
  CHECK_FALSE(parse_where("workers").is_ok());
  CHECK_FALSE(parse_where("workers=1,workers=2").is_ok());
  CHECK(parse_where("pin_clocks=yes, simulated=1").value() ==
        std::vector<std::pair<std::string, std::string>>{{"pin_clocks", "true"}, {"simulated", "true"}});
  CHECK_FALSE(parse_pool_over("instance").is_ok());
  CHECK(parse_pool_over("workers,prefetch,workers").value() == std::vector<std::string>{"workers", "prefetch"});

  const std::string csv =
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,workers,batch_size\n"
      "agx,lenet,8,2265.6,1377,2133,10,20000,2,16\n"
      "agx,lenet,4,1190.4,675.75,1331.2,25,10000,2,16\n"
      "agx,lenet,8,2265.6,1377,2133,8,21000,4,16\n"
      "agx,lenet,4,1190.4,675.75,1331.2,20,11000,4,16\n";
  const Corpus c = parsed(csv);
  CHECK(varying_axes(c) == std::set<std::string>{"mode", "workers"});
  // Two worker settings: selection refuses, naming both ways to choose.
  auto refused = select_workload(c, {"lenet", ""}, "--workload");
  REQUIRE_FALSE(refused.is_ok());
  const std::string msg = refused.status().message();
  CHECK(msg.find("--workload: workload 'lenet' on agx was measured in 2 configurations besides the power mode (w2") == 0);
  CHECK(msg.find("--where workers=2") != std::string::npos);
  CHECK(msg.find("--pool-over workers") != std::string::npos);

  Corpus sel = parsed(csv);
  REQUIRE(select_configurations(sel, parse_where("workers=4").value(), {}).is_ok());
  auto w4 = select_workload(sel, {"lenet", ""}, "--workload");
  REQUIRE(w4.is_ok());
  CHECK(w4->config == AxisMap{{"workers", "4"}, {"batch_size", "16"}});
  REQUIRE(w4->modes.size() == 2);
  CHECK(w4->modes[1].minibatch_ms == doctest::Approx(8));

  Corpus pooled = parsed(csv);
  REQUIRE(select_configurations(pooled, {}, {"workers"}).is_ok());
  CHECK(pooled.pooled_over == std::vector<std::string>{"workers"});
  auto all = select_workload(pooled, {"lenet", ""}, "--workload");
  REQUIRE(all.is_ok());
  REQUIRE(all->modes.size() == 2);
  CHECK(all->modes[1].minibatch_ms == doctest::Approx(9));  // the explicit pooled view: mean of 10 and 8

  Corpus none = parsed(csv);
  auto st = select_configurations(none, parse_where("batch_size=32").value(), {});
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message().find("batch_size=32 (values: 16)") != std::string::npos);

  // Simulated and real rows of one workload are never pooled either.
  const Corpus mixed = parsed(
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,simulated\n"
      "agx,lenet,8,2265.6,1377,2133,10,20000,true\n"
      "agx,lenet,8,2265.6,1377,2133,11,20000,false\n");
  auto mixed_sel = select_workload(mixed, {"lenet", ""}, "--workload");
  REQUIRE_FALSE(mixed_sel.is_ok());
  CHECK(mixed_sel.status().message().find("--where simulated=false") != std::string::npos);
}

TEST_CASE("split_record: RFC 4180 quoting, as export --json reads its own CSV back") {
  auto cells = split_record("a,\"b,\"\"c\"\"\",,\"\"", "here");
  REQUIRE(cells.is_ok());
  CHECK(cells.value() == std::vector<std::string>{"a", "b,\"c\"", "", ""});
  auto open = split_record("a,\"b", "file.csv:3");
  REQUIRE_FALSE(open.is_ok());
  CHECK(open.status().message() == "file.csv:3: unterminated quoted field");
}

TEST_CASE("csv: a corpus of mode rows (no epoch column) written per epoch reads back (found by fuzz_csv)") {
  // Rows without an epoch are epoch samples of unknown epoch (-1): written as an empty cell, not "-1",
  // which the reader refuses (fuzz/regressions/csv/epochs-written-as-minus-one).
  const Corpus c = parsed("device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw\n"
                          "orin,resnet,12,2201.6,1300.5,3199,150,1\n");
  REQUIRE(c.epochs.size() == 1);
  CHECK(c.epochs[0].epoch == -1);
  std::ostringstream out;
  write_epochs_csv(out, c);
  const Corpus back = parsed(out.str());
  REQUIRE(back.epochs.size() == 1);
  CHECK(back.epochs[0].epoch == -1);
  CHECK(back.rows.size() == 1);
}

TEST_CASE("csv: counts are whole numbers within range (found by fuzz_csv)") {
  // 4e87 epochs converted to int was undefined behaviour (fuzz/regressions/csv/count-out-of-int-range).
  const std::string header = "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,epochs,run_id\n";
  CHECK(parse_error(header + "orin,resnet,12,2201.6,1300.5,3199,150,1,4e87,1\n") ==
        "c.csv:2: column 'epochs': expected a whole number up to 2147483647, got '4e87'");
  CHECK(parse_error(header + "orin,resnet,12,2201.6,1300.5,3199,150,1,2.5,1\n") ==
        "c.csv:2: column 'epochs': expected a whole number, got '2.5'");
  CHECK(parse_error(header + "orin,resnet,12,2201.6,1300.5,3199,150,1,2,1e300\n") ==
        "c.csv:2: column 'run_id': expected a whole number up to 9e+15, got '1e300'");
  CHECK(parsed(header + "orin,resnet,12,2201.6,1300.5,3199,150,1,2,123456789012\n").epochs.at(0).run_id == 123456789012);
}

TEST_CASE("csv: measured values within physical bounds, so no derived energy overflows (found by fuzz_csv)") {
  // power_mw 1e308 with a 9000 s epoch: the derived energy (power x time) overflowed to inf, which the
  // written corpus then carried as "inf" (fuzz/regressions/csv/energy-overflows-to-inf).
  const std::string header =
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,epoch,epoch_s,energy_j,stall_s\n";
  CHECK(parse_error(header + "nx,lenet,6,1400,1100,1600,10.5,1e308,1,9000,,\n") ==
        "c.csv:2: column 'power_mw': must be at most 10000000, got '1e308'");
  CHECK(parse_error(header + "nx,lenet,6,1400,1100,1600,1e12,5000,1,9000,,\n") ==
        "c.csv:2: column 'minibatch_ms': must be at most 86400000, got '1e12'");
  CHECK(parse_error(header + "nx,lenet,6,1400,1100,1600,10.5,5000,1,3e6,,\n") ==
        "c.csv:2: column 'epoch_s': must be at most 2592000, got '3e6'");
  CHECK(parse_error(header + "nx,lenet,6,1400,1100,1600,10.5,5000,1,9000,1e11,\n") ==
        "c.csv:2: column 'energy_j': must be at most 2.592e+10, got '1e11'");
  CHECK(parse_error(header + "nx,lenet,6,1400,1100,1600,10.5,5000,1,9000,,1e300\n") ==
        "c.csv:2: column 'stall_s': must be at most 2592000, got '1e300'");
  // At the bounds: every derived figure is finite, and the corpus written per epoch reads back.
  const Corpus c = parsed(header + "nx,lenet,6,1400,1100,1600,86400000,10000000,1,2592000,,2592000\n");
  REQUIRE(c.epochs.size() == 1);
  REQUIRE(c.epochs[0].energy.has_value());
  CHECK(std::isfinite(*c.epochs[0].energy));
  CHECK(*c.epochs[0].energy == doctest::Approx(1e4 * 2592000.0));
  std::ostringstream out;
  write_epochs_csv(out, c);
  CHECK(parse(out.str()).is_ok());
}

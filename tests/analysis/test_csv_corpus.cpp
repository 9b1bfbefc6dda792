// CSV corpus reader/writer: columns in any order, extra columns ignored, errors naming file:line and
// column, warm-up epochs kept out of the mode profiles, and a write/read round trip.
#include <doctest/doctest.h>

#include <sstream>

#include "analysis/csv_corpus.hpp"
#include "analysis/synthetic_corpus.hpp"

using namespace jetsweep;
using namespace jetsweep::analysis;

namespace {
Result<Corpus> parse(const std::string& text) {
  std::istringstream in(text);
  return parse_corpus_csv(in, "c.csv");
}
}  // namespace

TEST_CASE("csv: required columns in any order, extras ignored, empty power allowed") {
  auto c = parse(
      "power_mw,workload,extra,device,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms\n"
      "30000,resnet,x,agx-orin,12,2201.6,1300.5,3199,150.5\n"
      ",resnet,y,agx-orin,4,1000,500,2133,400\n");
  REQUIRE(c.is_ok());
  REQUIRE(c->rows.size() == 2);
  CHECK(c->rows[0].device == "agx-orin");
  CHECK(c->rows[0].mode == ModeKey{12, 2201.6, 1300.5, 3199});
  CHECK(c->rows[0].minibatch_ms == doctest::Approx(150.5));
  CHECK(*c->rows[0].power_mw == doctest::Approx(30000));
  CHECK_FALSE(c->rows[1].power_mw.has_value());
  CHECK(c->rows[0].where == "c.csv:2");
}

TEST_CASE("csv: errors name the file, line and column") {
  auto missing = parse("device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms\n");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == Code::kInvalidArgument);
  CHECK(missing.status().message().find("c.csv:1: missing column 'power_mw'") != std::string::npos);

  auto bad_number = parse(
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw\n"
      "orin,resnet,12,2201.6,1300.5,3199,150,1\n"
      "orin,resnet,12,fast,1300.5,3199,150,1\n");
  REQUIRE_FALSE(bad_number.is_ok());
  CHECK(bad_number.status().message() == "c.csv:3: column 'cpu_mhz': expected a number, got 'fast'");

  auto negative = parse(
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw\n"
      "orin,resnet,12,2201.6,1300.5,3199,-5,1\n");
  REQUIRE_FALSE(negative.is_ok());
  CHECK(negative.status().message().find("c.csv:2: column 'minibatch_ms': must be positive") != std::string::npos);

  auto fractional_cores = parse(
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw\n"
      "orin,resnet,2.5,2201.6,1300.5,3199,5,1\n");
  REQUIRE_FALSE(fractional_cores.is_ok());
  CHECK(fractional_cores.status().message().find("c.csv:2: column 'cores'") != std::string::npos);

  auto short_row = parse("device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw\norin,resnet,1\n");
  REQUIRE_FALSE(short_row.is_ok());
  CHECK(short_row.status().message().find("c.csv:2: expected 8 fields, got 3") != std::string::npos);

  CHECK_FALSE(parse("").is_ok());
  CHECK_FALSE(read_corpus_csv("/nonexistent/corpus.csv").is_ok());
}

TEST_CASE("csv: per-epoch rows keep epoch 0 out of the profiles") {
  auto c = parse(
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,instance,epoch,epoch_s,energy_j,kernel\n"
      "nx,lenet,6,1400,1100,1600,12,9000,nx-1,0,30,270,5.10\n"
      "nx,lenet,6,1400,1100,1600,10,9000,nx-1,1,25,225,5.10\n"
      "nx,lenet,6,1400,1100,1600,10.5,9000,nx-1,2,26,234,5.10\n");
  REQUIRE(c.is_ok());
  CHECK(c->rows.size() == 2);
  CHECK(c->epochs.size() == 3);
  CHECK(c->epoch_times);
  CHECK(c->epochs[0].epoch == 0);
  CHECK(c->epochs[1].software.at("kernel") == "5.10");
  CHECK(*c->epochs[2].energy == doctest::Approx(234));
}

TEST_CASE("csv: written corpora read back identically") {
  auto board = synthetic_board("orin-nano").value();
  SyntheticOptions o;
  o.max_modes = 40;
  o.noise_pct = 3;
  Corpus c = generate_corpus(board, {synthetic_workload("resnet").value()}, o);
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
  auto c = parse(
      "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,instance\n"
      "nx,lenet,6,1400,1100,1600,10,9000,nx-1\n"
      "nx,lenet,6,1400,1100,1600,12,11000,nx-2\n"
      "agx,lenet,8,2265,1377,2133,5,20000,agx-1\n");
  REQUIRE(c.is_ok());
  auto amb = select_workload(*c, {"lenet", ""}, "--workload");
  REQUIRE_FALSE(amb.is_ok());
  CHECK(amb.status().message().find("--workload") == 0);
  CHECK(amb.status().message().find("lenet@BOARD") != std::string::npos);
  auto nx = select_workload(*c, parse_workload_ref("lenet@nx"), "--workload");
  REQUIRE(nx.is_ok());
  REQUIRE(nx->modes.size() == 1);
  CHECK(nx->modes[0].minibatch_ms == doctest::Approx(11));
  CHECK(*nx->modes[0].power_mw == doctest::Approx(10000));
  auto none = select_workload(*c, {"vgg", ""}, "--target");
  REQUIRE_FALSE(none.is_ok());
  CHECK(none.status().message().find("--target: workload 'vgg' not found") == 0);
}

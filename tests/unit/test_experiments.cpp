// The campaigns shipped in experiments/ (they must validate as they are), and how a campaign's torchscript:FILE
// names become torchscript:<sha256> (common/model_files.hpp) before it is parsed.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "common/campaign.hpp"
#include "common/model_files.hpp"

using namespace jetsweep;

TEST_CASE("every shipped campaign in experiments/ validates") {
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(JETSWEEP_SOURCE_DIR) + "/experiments")) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    // A campaign naming the user's own model file (torchscript:FILE, exported first: README.md) is checked with a
    // stand-in hash for each such file; everything else in it as it is.
    auto text = read_text_file(e.path().string());
    REQUIRE(text.is_ok());
    auto named = resolve_model_files(text.value(), e.path().string(),
                                     [](const std::string&, const std::string&) -> Result<std::string> { return std::string(64, '0'); });
    REQUIRE(named.is_ok());
    auto c = parse_campaign(named.value(), e.path().string());
    CHECK_MESSAGE(c.is_ok(), c.status().to_string());
  }
  CHECK(files >= 9);
  auto v = load_campaign_file(std::string(JETSWEEP_SOURCE_DIR) + "/experiments/sigmetrics23_variability_15h.yaml");
  REQUIRE(v.is_ok());
  REQUIRE(v->runs.size() == 3);   // one per class, placed on every enrolled board at submission
  CHECK(v->runs[0].device == "agx-xavier/*");
  CHECK(v->runs[0].model == "resnet18");
  CHECK(v->runs[2].device == "nano/*");
  CHECK(v->runs[2].epochs == 670);
  auto t3 = load_campaign_file(std::string(JETSWEEP_SOURCE_DIR) + "/experiments/sigmetrics23_agx_power_modes.yaml");
  REQUIRE(t3.is_ok());
  CHECK(t3->runs.size() == 3 * 14);
}

TEST_CASE("the shipped demo campaign validates") {
  auto c = load_campaign_file(std::string(JETSWEEP_SOURCE_DIR) + "/experiments/demo.yaml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  CHECK(c->runs.size() == 4);
}

TEST_CASE("torchscript:FILE names: each file resolved once, relative to the campaign file, in place") {
  std::map<std::string, int> asked;
  auto resolve = [&](const std::string& path, const std::string& where) -> Result<std::string> {
    ++asked[path];
    if (path == "/camp/missing.pt") return invalid_argument(where + ": no such file");
    return std::string(64, path == "/camp/a.pt" ? 'a' : 'b');
  };
  const std::string yaml =
      "campaign: x\nmatrix:\n  model: [torchscript:a.pt, torchscript:a.pt, torchscript:/abs/b.pt]\n"
      "  other: torchscript:" + std::string(64, 'c') + "\n";
  auto out = resolve_model_files(yaml, "/camp/x.yaml", resolve);
  REQUIRE(out.is_ok());
  CHECK(out.value() == "campaign: x\nmatrix:\n  model: [torchscript:" + std::string(64, 'a') + ", torchscript:" +
                           std::string(64, 'a') + ", torchscript:" + std::string(64, 'b') + "]\n  other: torchscript:" +
                           std::string(64, 'c') + "\n");
  CHECK(asked == std::map<std::string, int>{{"/camp/a.pt", 1}, {"/abs/b.pt", 1}});   // the hash is left alone
  // Comments and longer words are not model names.
  const std::string commented = "# was torchscript:old.pt\nmatrix:\n  model: lenet5  # torchscript:gone.pt\n  note: my_torchscript:x\n";
  CHECK(resolve_model_files(commented, "/camp/z.yaml", resolve).value() == commented);
  auto bad = resolve_model_files("matrix:\n  model: torchscript:missing.pt\n", "/camp/y.yaml", resolve);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "/camp/y.yaml:2:22: no such file");
}

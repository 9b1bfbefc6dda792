// A user's own model through real processes (issue 31): a TorchScript file exported inside the test by
// scripts/export-torchscript (Debian's python3-torch), named in campaigns as torchscript:FILE, uploaded by the real CLI
// once, kept once by the controller in PostgreSQL, fetched once by a real agent over its connection into its model
// cache, fetched again when the cached copy was tampered with, and trained with LibTorch on MNIST-format data; and the
// errors on the way: a file the controller lacks, one over its size limit, a file that is not TorchScript, a forward
// that does not fit a dataset's samples (the CLI's check in a helper process, and the agent's own check).
#include <fstream>

#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;
namespace bj = boost::json;

namespace {

// Exports LeNet-5 with Debian's python3-torch: its SHA-256, and the parameter count Python gives (*parameters).
std::string export_lenet5(const TempDir& dir, int64_t* parameters = nullptr) {
  const std::string file = (dir / "lenet5.pt").string();
  std::string out, err;
  const int rc = run_command("/usr/bin/python3", {std::string(JETSWEEP_SOURCE_DIR) + "/scripts/export-torchscript", "lenet5",
                                                  "--channels", "1", "--size", "28", "--classes", "10", "-o", file},
                             &out, &err);
  REQUIRE_MESSAGE(rc == 0, err);
  const bj::value exported = bj::parse(out);
  if (parameters) *parameters = exported.at("parameters").to_number<int64_t>();
  return exported.at("sha256").as_string().c_str();
}

std::string own_campaign(const std::string& name, const std::string& model, const std::string& data) {
  return "campaign: " + name + "\nmatrix:\n  model: " + model + "\n  dataset: mnist\n  data: " + data +
         "\n  batch_size: [32, 64]\n  workers: 0\n  epochs: 2\n  threads: 1\n  seed: 3\n";
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// `jetsweep submit FILE`: its exit code, with stdout in *out and stderr in *err; `agent_bin` non-empty: run with
// JETSWEEP_AGENT_BIN set to it (through env(1): this multi-threaded process's own environment is left alone).
int submit_with(Fleet& fleet, const std::filesystem::path& file, std::string* out, std::string* err,
                const std::string& agent_bin = {}) {
  std::vector<std::string> args{kBin + "/jetsweep", "--controller", fleet.url(), "submit", "--json", file.string()};
  if (!agent_bin.empty()) args.insert(args.begin(), "JETSWEEP_AGENT_BIN=" + agent_bin);
  return run_command("/usr/bin/env", args, out, err);
}
int submit_expecting_failure(Fleet& fleet, const std::filesystem::path& file, std::string* err,
                             const std::string& agent_bin = {}) {
  std::string out;
  return submit_with(fleet, file, &out, err, agent_bin);
}

}  // namespace

TEST_CASE("an own TorchScript model: uploaded once for two campaigns, fetched once, fetched again when tampered with") {
  TestDatabase db;
  Fleet fleet(db);
  int64_t python_parameters = 0;
  const std::string sha = export_lenet5(fleet.dir(), &python_parameters);
  const std::string model = "torchscript:" + sha;
  const std::string data = (fleet.dir() / "data").string();
  write_idx_dataset(data, 200, true);
  const std::string cache = (fleet.dir() / "model-cache").string();
  fleet.add_agent("own-a", {"--model-dir", cache});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  auto fetches = [&] { return occurrences(fleet.controller().log(), "fetches model file " + sha); };

  int64_t last = 0;
  for (const std::string name : {"own-1", "own-2"}) {
    write_file(fleet.dir() / (name + ".yaml"), own_campaign(name, "torchscript:lenet5.pt", data));
    last = submit(fleet, fleet.dir() / (name + ".yaml"));
    REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(last); }), fleet.logs());
  }
  CHECK(db.count("SELECT count(*) FROM model_files") == 1);   // the same file for two campaigns: stored once
  CHECK(db.count("SELECT count(*) FROM model_files WHERE sha256 = '" + sha + "' AND bytes = " +
                 std::to_string(std::filesystem::file_size(fleet.dir() / "lenet5.pt")) + "") == 1);
  CHECK(fetches() == 1);   // the second campaign's runs found it in the agent's cache
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done' AND config->>'model' = '" + model + "'") == 4);
  CHECK(db.count("SELECT count(*) FROM epochs WHERE loss IS NULL") == 0);
  // The campaign's stored source names the file by its hash: the bytes every board trained.
  CHECK(db.text("SELECT source_yaml FROM campaigns WHERE id = " + std::to_string(last)).find(model) != std::string::npos);
  auto report = bj::parse(fleet.cli({"report", "--json", std::to_string(last)})).as_object();
  for (const auto& r : report.at("runs").as_array()) {
    CHECK(r.at("config").at("model") == model.c_str());
    // What the agent reports it trained: the file's hash, the parameter count Python gives, the MACs of LeNet-5
    // (416,520 per 28x28 sample), and the fingerprint of the data it read.
    const auto& w = r.at("workload");
    CHECK(w.at("model_sha256") == sha.c_str());
    CHECK(w.at("parameters").to_number<int64_t>() == python_parameters);
    CHECK(w.at("forward_macs").to_number<int64_t>() == 416520);
    CHECK(w.at("dataset_fingerprint").as_string().size() == 64);
    CHECK(w.at("dataset_files").to_number<int64_t>() == 2);
  }
  CHECK(db.count("SELECT count(DISTINCT workload->>'dataset_fingerprint') FROM runs") == 1);
  CHECK(db.count("SELECT count(DISTINCT dataset_fingerprint) FROM analysis_runs") == 1);
  CHECK(fleet.cli({"report", std::to_string(last)}).find("DATA:") == std::string::npos);   // the same bytes

  {   // A cached copy altered on the board is refused, deleted and fetched again.
    std::fstream f(cache + "/" + sha + ".pt", std::ios::in | std::ios::out | std::ios::binary);
    REQUIRE(f.good());
    f.seekp(64);
    f.put('\x42');
  }
  write_file(fleet.dir() / "own-3.yaml", own_campaign("own-3", model, data));   // named by its hash this time
  last = submit(fleet, fleet.dir() / "own-3.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(last); }), fleet.logs());
  CHECK(fetches() == 2);
  CHECK(fleet.logs().find("not its name; deleted") != std::string::npos);
  CHECK(db.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(last) + " AND status = 'done'") == 2);
}

TEST_CASE("own-model errors: a model the controller lacks, a file over its limit, a file that is not TorchScript") {
  TestDatabase db;
  Fleet fleet(db, {"--max-model-mb", "1"});
  const std::string data = (fleet.dir() / "data").string();
  write_idx_dataset(data, 64, true);
  std::string err;

  write_file(fleet.dir() / "missing.yaml", own_campaign("missing", "torchscript:" + std::string(64, 'c'), data));
  CHECK(submit_expecting_failure(fleet, fleet.dir() / "missing.yaml", &err) == 2);
  CHECK_MESSAGE(err.find("has not been uploaded to this controller") != std::string::npos, err);

  write_file(fleet.dir() / "nowhere.yaml", own_campaign("nowhere", "torchscript:no_such.pt", data));
  CHECK(submit_expecting_failure(fleet, fleet.dir() / "nowhere.yaml", &err) == 2);
  CHECK_MESSAGE(err.find("nowhere.yaml:3:22: model file '") != std::string::npos, err);

  // A stand-in for the CLI's check that passes every file (the controller's limit is the point here, and below a
  // workstation whose LibTorch accepts what a board's refuses).
  write_file(fleet.dir() / "lenient-agent", "#!/bin/sh\necho '{\"sha256\":\"\",\"input\":null}'\n");
  std::filesystem::permissions(fleet.dir() / "lenient-agent", std::filesystem::perms::owner_all);
  write_file(fleet.dir() / "big.pt", std::string((3 << 20) / 2, 'x'));   // 1.5 MiB > --max-model-mb 1
  write_file(fleet.dir() / "big.yaml", own_campaign("big", "torchscript:big.pt", data));
  const std::string lenient = (fleet.dir() / "lenient-agent").string();
  CHECK(submit_expecting_failure(fleet, fleet.dir() / "big.yaml", &err, lenient) != 0);
  CHECK_MESSAGE(err.find("--max-model-mb") != std::string::npos, err);
  CHECK(db.count("SELECT count(*) FROM model_files WHERE bytes IS NOT NULL") == 0);

  // Not TorchScript: the CLI's check (the agent's LibTorch, in a helper process) refuses it before anything is sent.
  write_file(fleet.dir() / "notes.pt", "these are my notes, not a model\n");
  write_file(fleet.dir() / "notes.yaml", own_campaign("notes", "torchscript:notes.pt", data));
  CHECK(submit_expecting_failure(fleet, fleet.dir() / "notes.yaml", &err) == 2);
  CHECK_MESSAGE(err.find("notes.yaml:3:22: model file '") != std::string::npos, err);
  CHECK_MESSAGE(err.find("is not a TorchScript file") != std::string::npos, err);
  CHECK(db.count("SELECT count(*) FROM model_files") == 1);   // only the refused big.pt's first chunks
  // A model whose forward does not fit a dataset the campaign trains it on: refused naming the dataset and shape.
  export_lenet5(fleet.dir());   // 1x28x28 inputs
  write_file(fleet.dir() / "cifar.yaml", "campaign: cifar\nmatrix:\n  model: torchscript:lenet5.pt\n  dataset: [mnist, "
                                         "cifar10]\n  batch_size: 16\n  epochs: 1\n");
  std::string out;
  CHECK(run_command(kBin + "/jetsweep", {"validate", (fleet.dir() / "cifar.yaml").string()}, &out, &err) == 2);
  CHECK_MESSAGE(err.find("cifar.yaml:3:22: model file '") != std::string::npos, err);
  CHECK_MESSAGE(err.find("on dataset 'cifar10': model torchscript:") != std::string::npos, err);
  CHECK_MESSAGE(err.find("forward fails on the dataset's samples [2, 3, 32, 32]") != std::string::npos, err);

  // A workstation whose check passes (the stand-in) while the board's LibTorch refuses the file: stored (it is only
  // bytes to the controller), then the run fails on the agent, saying why.
  std::string submitted;
  REQUIRE_MESSAGE(submit_with(fleet, fleet.dir() / "notes.yaml", &submitted, &err, lenient) == 0, err);
  const int64_t id = bj::parse(submitted).at("campaign_id").as_int64();
  fleet.add_agent("own-b", {"--model-dir", (fleet.dir() / "cache-b").string()});
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(id); }), fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'failed' AND error LIKE '%is not a TorchScript file%'") == 2);
  CHECK(fleet.controller().running());
}

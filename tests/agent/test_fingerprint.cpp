// Dataset fingerprints (agent/datasets/fingerprint.hpp, issue 31): the documented format (checked against digests
// computed with Python's hashlib), what changes it and what does not, the content-hash cache in memory and on disk,
// and the facts a real training run reports in run_started.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "agent/datasets/fingerprint.hpp"
#include "agent/models/registry.hpp"
#include "agent/run_executor.hpp"
#include "support/collecting_sink.hpp"
#include "support/dataset_gen.hpp"
#include "support/run_checks.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::testing::TempDir;
using jetsweep::testing::write_file;

namespace {
// sha256(b"a\0" b"3\0" sha256(b"abc").hexdigest() b"\n"), and with b"sub/b\0" b"0\0" sha256(b"").hexdigest() b"\n"
// appended: Python's hashlib over the format in fingerprint.hpp.
constexpr const char* kOneFile = "93f2b2ea74607e6059969076acddf61a2da1531ff1d0ad1e1196bb181d5e207e";
constexpr const char* kTwoFiles = "538984534e48b3ddbab097fafa00835847176d023d6508b7afb204640e8f4c67";

void set_mtime(const std::filesystem::path& p, std::filesystem::file_time_type t) { std::filesystem::last_write_time(p, t); }
}  // namespace

TEST_CASE("fingerprint: the documented format, sorted relative paths, sizes and content hashes") {
  TempDir d;
  write_file(d / "tree/a", "abc");
  DatasetFingerprinter fp;
  auto one = fp.fingerprint((d / "tree").string());
  REQUIRE_MESSAGE(one.is_ok(), one.status().to_string());
  CHECK(one->sha256 == kOneFile);
  CHECK(one->files == 1);
  CHECK(one->bytes == 3);
  write_file(d / "tree/sub/b", "");
  auto two = fp.fingerprint((d / "tree").string());
  REQUIRE(two.is_ok());
  CHECK(two->sha256 == kTwoFiles);
  CHECK(two->files == 2);
  // The same bytes elsewhere (another board's path) have the same fingerprint: paths are relative to the root.
  TempDir other;
  write_file(other / "x/sub/b", "");
  write_file(other / "x/a", "abc");
  CHECK(DatasetFingerprinter().fingerprint((other / "x").string())->sha256 == kTwoFiles);
  // A directory linked into the tree is followed, as the dataset reader follows it.
  TempDir linked;
  write_file(linked / "root/a", "abc");
  write_file(linked / "elsewhere/b", "");
  std::filesystem::create_directory_symlink(linked / "elsewhere", linked / "root/sub");
  CHECK(DatasetFingerprinter().fingerprint((linked / "root").string())->sha256 == kTwoFiles);
  // One file as the root: its name and bytes.
  CHECK(DatasetFingerprinter().fingerprint((d / "tree/a").string())->sha256 == kOneFile);
  // Changed bytes, a renamed file, an added file: each changes it.
  write_file(other / "x/a", "abd");
  CHECK(DatasetFingerprinter().fingerprint((other / "x").string())->sha256 != kTwoFiles);
  auto missing = fp.fingerprint((d / "nope").string());
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(missing.status().message().find("/nope: no such file or directory") != std::string::npos);
}

TEST_CASE("fingerprint: content hashes are cached by path, size and mtime, in memory and in the cache file") {
  TempDir d;
  write_file(d / "data/train", std::string(100000, 'x'));
  write_file(d / "data/labels", "0123456789");
  const std::string cache = (d / "cache/dataset-hashes.tsv").string();
  DatasetFingerprinter first(cache);
  const auto a = first.fingerprint((d / "data").string());
  REQUIRE(a.is_ok());
  CHECK(first.files_hashed() == 2);
  REQUIRE(first.fingerprint((d / "data").string()).is_ok());
  CHECK(first.files_hashed() == 2);   // nothing changed: stat only
  // Another process (an agent restarted) reads the cache file: nothing is hashed again.
  DatasetFingerprinter second(cache);
  CHECK(second.fingerprint((d / "data").string())->sha256 == a->sha256);
  CHECK(second.files_hashed() == 0);
  // Rewritten bytes of the same size with a new mtime are hashed again, and the fingerprint follows them.
  const auto before = std::filesystem::last_write_time(d / "data/labels");
  write_file(d / "data/labels", "9876543210");
  set_mtime(d / "data/labels", before + std::chrono::seconds(5));
  const auto changed = second.fingerprint((d / "data").string());
  CHECK(second.files_hashed() == 1);
  CHECK(changed->sha256 != a->sha256);
  // A damaged cache file costs a rehash, never a wrong fingerprint.
  write_file(cache, "garbage\nnot\ta\tcache\n");
  DatasetFingerprinter third(cache);
  CHECK(third.fingerprint((d / "data").string())->sha256 == changed->sha256);
  CHECK(third.files_hashed() == 2);
}

TEST_CASE("run_started: a real training run reports the model's measured size and the data's fingerprint") {
  TempDir data, cache;
  testing::write_idx_dataset(data.str(), 64, false);
  ExecutorOptions options;
  options.backend = "host";
  options.root = "/";
  options.model_dir = cache.str();
  auto ex = RunExecutor::open(options);
  REQUIRE_MESSAGE(ex.is_ok(), ex.status().to_string());
  RunConfig c = testing::make_run("lenet5", "mnist", 16, 0, 1);
  c.data = data.str();
  c.accelerator = "cpu";
  std::atomic<bool> cancel{false};
  testing::CollectingSink sink;
  REQUIRE(ex.value()->execute(1, c, sink, cancel).status == "done");
  const auto& started = std::get<proto::RunStarted>(sink.messages.front());
  REQUIRE(started.workload.has_value());
  const auto figures = models::measure_model("lenet5", models::InputSpec::image(1, 28, 28, 10));
  REQUIRE(figures.is_ok());
  CHECK(started.workload->parameters == figures->parameters);
  CHECK(started.workload->forward_macs == figures->forward_macs);
  CHECK(started.workload->forward_macs == 416520);
  CHECK(started.workload->model_sha256.empty());   // a built-in model
  const auto expected = DatasetFingerprinter().fingerprint(data.str());
  REQUIRE(expected.is_ok());
  CHECK(started.workload->dataset_fingerprint == expected->sha256);
  CHECK(started.workload->dataset_files == 2);
  CHECK(started.workload->dataset_bytes == 64 * 784 + 16 + 64 + 8);   // IDX headers: 16 and 8 bytes
  CHECK(std::filesystem::exists(cache / "dataset-hashes.tsv"));
}

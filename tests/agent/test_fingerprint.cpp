// Dataset fingerprints (agent/datasets/fingerprint.hpp, issue 31): the documented format (checked against digests
// computed with Python's hashlib), what changes it and what does not, the content-hash cache in memory and on disk
// (its key: a file replaced by another of the same size and mtime is hashed again), and the facts a real training run
// reports in run_started.
#include <doctest/doctest.h>

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

std::string fp_of(const std::vector<std::string>& files) {
  auto r = DatasetFingerprinter().fingerprint(files);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  return r->sha256;
}
}  // namespace

TEST_CASE("fingerprint: the documented format over the files a dataset reads, relative to their common directory") {
  TempDir d;
  write_file(d / "tree/a", "abc");
  write_file(d / "tree/sub/b", "");
  write_file(d / "tree/README", "not read by the dataset");
  const std::string a = (d / "tree/a").string(), b = (d / "tree/sub/b").string();
  DatasetFingerprinter fp;
  auto one = fp.fingerprint({a});
  REQUIRE_MESSAGE(one.is_ok(), one.status().to_string());
  CHECK(one->sha256 == kOneFile);
  CHECK(one->files == 1);
  CHECK(one->bytes == 3);
  auto two = fp.fingerprint({b, a, a});   // any order, a file listed twice counts once
  REQUIRE(two.is_ok());
  CHECK(two->sha256 == kTwoFiles);
  CHECK(two->files == 2);
  // The same bytes elsewhere (another board's path, another layout's directory) give the same fingerprint.
  TempDir other;
  write_file(other / "x/cifar-10-batches-bin/sub/b", "");
  write_file(other / "x/cifar-10-batches-bin/a", "abc");
  CHECK(fp_of({(other / "x/cifar-10-batches-bin/a").string(), (other / "x/cifar-10-batches-bin/sub/b").string()}) ==
        kTwoFiles);
  // A changed byte, a renamed file, a file more or fewer: each changes it.
  write_file(other / "x/cifar-10-batches-bin/a", "abd");
  CHECK(fp_of({(other / "x/cifar-10-batches-bin/a").string(), (other / "x/cifar-10-batches-bin/sub/b").string()}) !=
        kTwoFiles);
  write_file(d / "tree/sub/c", "");
  CHECK(fp_of({a, (d / "tree/sub/c").string()}) != kTwoFiles);
  CHECK(fp_of({a, b, (d / "tree/sub/c").string()}) != kTwoFiles);
  CHECK(fp_of({a}) == kOneFile);
  auto missing = fp.fingerprint({(d / "nope").string()});
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == Code::kIoError);
  CHECK(missing.status().message().find("/nope: No such file or directory") != std::string::npos);
  std::atomic<bool> cancel{true};
  CHECK(fp.fingerprint({a}, &cancel).status().code() == Code::kCancelled);
}

TEST_CASE("fingerprint: content hashes are cached by path, inode, size and times, in memory and in the cache file") {
  TempDir d;
  write_file(d / "data/train", std::string(100000, 'x'));
  write_file(d / "data/labels", "0123456789");
  const std::vector<std::string> files{(d / "data/train").string(), (d / "data/labels").string()};
  const std::string cache = (d / "cache/dataset-hashes.tsv").string();
  DatasetFingerprinter first(cache, 0);   // settle 0: the files were written just now
  const auto a = first.fingerprint(files);
  REQUIRE(a.is_ok());
  CHECK(first.files_hashed() == 2);
  REQUIRE(first.fingerprint(files).is_ok());
  CHECK(first.files_hashed() == 2);   // nothing changed: stat only
  // Another process (an agent restarted) reads the cache file: nothing is hashed again.
  DatasetFingerprinter second(cache, 0);
  CHECK(second.fingerprint(files)->sha256 == a->sha256);
  CHECK(second.files_hashed() == 0);
  // A file replaced by another of the same size and mtime (a re-extracted archive, a retargeted copy): another
  // inode and ctime, so it is hashed again and the fingerprint follows the bytes.
  const auto mtime = std::filesystem::last_write_time(d / "data/labels");
  write_file(d / "data/labels.new", "9876543210");
  std::filesystem::last_write_time(d / "data/labels.new", mtime);
  std::filesystem::rename(d / "data/labels.new", d / "data/labels");
  const auto changed = second.fingerprint(files);
  CHECK(second.files_hashed() == 1);
  CHECK(changed->sha256 != a->sha256);
  // A file changed within the settle time is hashed, but not cached.
  DatasetFingerprinter settling(cache + ".settling", int64_t{1} << 62);   // every change counts as recent
  REQUIRE(settling.fingerprint(files).is_ok());
  REQUIRE(settling.fingerprint(files).is_ok());
  CHECK(settling.files_hashed() == 4);
  // A damaged cache file costs a rehash, never a wrong fingerprint.
  write_file(cache, "garbage\nnot\ta\tcache\n" + std::string(64, 'f') + "\t10\t1\t1\t1\t1\t" + files[1] + "\n");
  DatasetFingerprinter third(cache, 0);
  CHECK(third.fingerprint(files)->sha256 == changed->sha256);
  CHECK(third.files_hashed() == 2);
}

TEST_CASE("run_started: a real training run reports the model's measured size and the data's fingerprint") {
  TempDir data, cache;
  testing::write_idx_dataset(data.str(), 64, false);
  write_file(data / "README", "a file next to the dataset that its reader does not read");
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
  const auto expected = DatasetFingerprinter().fingerprint(
      {(data / "train-images-idx3-ubyte").string(), (data / "train-labels-idx1-ubyte").string()});
  REQUIRE(expected.is_ok());
  CHECK(started.workload->dataset_fingerprint == expected->sha256);   // the two IDX files, not the README
  CHECK(started.workload->dataset_files == 2);
  CHECK(started.workload->dataset_bytes == 64 * 784 + 16 + 64 + 8);   // IDX headers: 16 and 8 bytes
}

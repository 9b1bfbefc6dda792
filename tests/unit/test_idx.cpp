#include <doctest/doctest.h>

#include "agent/datasets/idx.hpp"
#include "agent/datasets/image_dataset.hpp"
#include "support/dataset_gen.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::testing::TempDir;

TEST_CASE("IDX files round-trip, plain and gzip") {
  TempDir dir;
  for (bool gz : {false, true}) {
    const std::string p = (dir / (gz ? "a.idx.gz" : "a.idx")).string();
    std::vector<uint8_t> data = {1, 2, 3, 4, 5, 6};
    REQUIRE(idx::write_file(p, {2, 3}, data).is_ok());
    auto a = idx::read_file(p);
    REQUIRE_MESSAGE(a.is_ok(), a.status().to_string());
    CHECK(a->dims == std::vector<int64_t>{2, 3});
    CHECK(a->data == data);
  }
}

TEST_CASE("reading FILE falls back to FILE.gz, as Debian ships the data") {
  TempDir dir;
  REQUIRE(idx::write_file((dir / "x.gz").string(), {1}, {7}).is_ok());
  auto a = idx::read_file((dir / "x").string());
  REQUIRE(a.is_ok());
  CHECK(a->data == std::vector<uint8_t>{7});
}

TEST_CASE("corrupt IDX input gives errors naming the file") {
  CHECK(idx::parse({0, 0, 8}, "f").status().message() == "f: too short for an IDX header (3 bytes)");
  CHECK(idx::parse({0x1f, 0x8b, 8, 1, 0, 0, 0, 1, 5}, "f").status().message().find("bad IDX magic") != std::string::npos);
  CHECK(idx::parse({0, 0, 0x0d, 1, 0, 0, 0, 1, 5}, "f").status().message().find("not supported") != std::string::npos);
  CHECK(idx::parse({0, 0, 8, 1, 0, 0, 0, 3, 5}, "f").status().message() == "f: IDX payload has 1 bytes, header says 3");
  CHECK(idx::read_file("/nonexistent/train").status().code() == Code::kNotFound);
}

TEST_CASE("training set loader checks shapes and labels") {
  TempDir dir;
  testing::write_idx_dataset(dir.str(), 50, true);
  auto d = load_training_set("fashion-mnist", dir.str());
  REQUIRE_MESSAGE(d.is_ok(), d.status().to_string());
  CHECK(d->count == 50);
  CHECK(d->rows == 28);
  CHECK(d->cols == 28);
  CHECK(d->pixels.size() == 50u * 784u);
  CHECK(d->labels[13] == 3);
  CHECK(d->files.size() == 2);

  TempDir bad;
  REQUIRE(idx::write_file((bad / "train-images-idx3-ubyte").string(), {2, 28, 28}, std::vector<uint8_t>(2 * 784)).is_ok());
  REQUIRE(idx::write_file((bad / "train-labels-idx1-ubyte").string(), {3}, {0, 1, 2}).is_ok());
  auto mismatch = load_training_set("mnist", bad.str());
  CHECK(mismatch.status().message().find("2 images but 3 labels") != std::string::npos);
  REQUIRE(idx::write_file((bad / "train-labels-idx1-ubyte").string(), {2}, {0, 12}).is_ok());
  CHECK(load_training_set("mnist", bad.str()).status().message().find("label 12 outside 0-9") != std::string::npos);
  CHECK(load_training_set("cifar10", bad.str()).status().code() == Code::kInvalidArgument);
}

TEST_CASE("the real Fashion-MNIST from Debian loads when installed") {
  auto d = load_training_set("fashion-mnist", "/usr/share/datasets/fashion-mnist");
  REQUIRE_MESSAGE(d.is_ok(), d.status().to_string());
  CHECK(d->count == 60000);
  CHECK(d->rows == 28);
}

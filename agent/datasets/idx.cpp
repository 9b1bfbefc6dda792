#include "agent/datasets/idx.hpp"

#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "agent/datasets/image_dataset.hpp"
#include "common/run_config.hpp"

namespace jetsweep::agent::idx {
namespace fs = std::filesystem;

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<std::vector<uint8_t>> read_all(const std::string& path) {
  std::vector<uint8_t> out;
  if (ends_with(path, ".gz")) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) return io_error(path + ": cannot open");
    gzbuffer(f, 1 << 16);
    std::vector<uint8_t> buf(1 << 16);
    while (true) {
      int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
      if (n < 0) {
        int err = 0;
        std::string msg = gzerror(f, &err);
        gzclose(f);
        return io_error(path + ": gzip error: " + msg);
      }
      if (n == 0) break;
      out.insert(out.end(), buf.begin(), buf.begin() + n);
    }
    gzclose(f);
    return out;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open");
  in.seekg(0, std::ios::end);
  auto size = in.tellg();
  in.seekg(0);
  out.resize(static_cast<size_t>(size));
  if (!in.read(reinterpret_cast<char*>(out.data()), size)) return io_error(path + ": read error");
  return out;
}
}  // namespace

Result<IdxArray> parse(const std::vector<uint8_t>& b, const std::string& where) {
  if (b.size() < 4) return invalid_argument(where + ": too short for an IDX header (" + std::to_string(b.size()) + " bytes)");
  if (b[0] != 0 || b[1] != 0)
    return invalid_argument(where + ": bad IDX magic (first two bytes must be zero; is it still compressed?)");
  IdxArray a;
  a.type_code = b[2];
  if (a.type_code != 0x08) return invalid_argument(where + ": IDX element type 0x" + std::to_string(a.type_code) + " not supported (need 0x08 unsigned byte)");
  int ndims = b[3];
  if (ndims < 1 || ndims > 4) return invalid_argument(where + ": IDX has " + std::to_string(ndims) + " dimensions (1-4 supported)");
  size_t header = 4 + 4 * static_cast<size_t>(ndims);
  if (b.size() < header) return invalid_argument(where + ": truncated IDX header");
  int64_t total = 1;
  for (int i = 0; i < ndims; ++i) {
    const uint8_t* p = b.data() + 4 + 4 * i;
    int64_t d = (int64_t(p[0]) << 24) | (int64_t(p[1]) << 16) | (int64_t(p[2]) << 8) | int64_t(p[3]);
    if (d <= 0) return invalid_argument(where + ": IDX dimension " + std::to_string(i) + " is " + std::to_string(d));
    a.dims.push_back(d);
    total *= d;
    if (total > (int64_t(1) << 34)) return invalid_argument(where + ": IDX payload implausibly large");
  }
  if (b.size() - header != static_cast<size_t>(total))
    return invalid_argument(where + ": IDX payload has " + std::to_string(b.size() - header) + " bytes, header says " +
                            std::to_string(total));
  a.data.assign(b.begin() + static_cast<long>(header), b.end());
  return a;
}

Result<IdxArray> read_file(const std::string& path) {
  std::string actual = path;
  if (!fs::exists(actual) && fs::exists(path + ".gz")) actual = path + ".gz";
  if (!fs::exists(actual)) return not_found(path + ": no such file (nor " + path + ".gz)");
  JS_ASSIGN_OR_RETURN(auto bytes, read_all(actual));
  return parse(bytes, actual);
}

Status write_file(const std::string& path, const std::vector<int64_t>& dims, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> b = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (int64_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>((d >> s) & 0xff));
  b.insert(b.end(), data.begin(), data.end());
  if (ends_with(path, ".gz")) {
    gzFile f = gzopen(path.c_str(), "wb");
    if (!f) return io_error(path + ": cannot create");
    int n = gzwrite(f, b.data(), static_cast<unsigned>(b.size()));
    int rc = gzclose(f);
    if (n != static_cast<int>(b.size()) || rc != Z_OK) return io_error(path + ": gzip write failed");
    return Status::ok();
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) return io_error(path + ": cannot create");
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  if (!out) return io_error(path + ": write failed");
  return Status::ok();
}

}  // namespace jetsweep::agent::idx

namespace jetsweep::agent {
namespace fs = std::filesystem;

Result<ImageDataset> load_training_set(const std::string& dataset, const std::string& root) {
  if (dataset != "fashion-mnist" && dataset != "mnist")
    return invalid_argument("dataset '" + dataset + "' has no reader in this agent");
  if (root.empty()) return invalid_argument("dataset '" + dataset + "': no data path given");
  const std::string images_path = root + "/train-images-idx3-ubyte";
  const std::string labels_path = root + "/train-labels-idx1-ubyte";
  JS_ASSIGN_OR_RETURN(auto images, idx::read_file(images_path));
  JS_ASSIGN_OR_RETURN(auto labels, idx::read_file(labels_path));
  if (images.dims.size() != 3) return invalid_argument(images_path + ": expected 3 dimensions (N, rows, cols)");
  if (labels.dims.size() != 1) return invalid_argument(labels_path + ": expected 1 dimension (N)");
  if (images.dims[0] != labels.dims[0])
    return invalid_argument(root + ": " + std::to_string(images.dims[0]) + " images but " +
                            std::to_string(labels.dims[0]) + " labels");
  for (uint8_t l : labels.data)
    if (l > 9) return invalid_argument(labels_path + ": label " + std::to_string(l) + " outside 0-9");
  ImageDataset d;
  d.name = dataset;
  d.count = images.dims[0];
  d.rows = images.dims[1];
  d.cols = images.dims[2];
  d.classes = 10;
  d.pixels = std::move(images.data);
  d.labels = std::move(labels.data);
  // Training-set statistics as used by the usual torchvision Normalize() for each dataset.
  if (dataset == "fashion-mnist") {
    d.mean = 0.2860f;
    d.std = 0.3530f;
  } else {
    d.mean = 0.1307f;
    d.std = 0.3081f;
  }
  for (const auto& p : {images_path, labels_path})
    d.files.push_back(fs::exists(p) ? p : p + ".gz");
  return d;
}

}  // namespace jetsweep::agent

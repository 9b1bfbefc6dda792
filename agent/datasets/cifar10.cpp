#include "agent/datasets/cifar10.hpp"

#include <filesystem>
#include <fstream>

namespace jetsweep::agent::cifar10 {
namespace fs = std::filesystem;

namespace {
Result<std::vector<uint8_t>> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open");
  std::vector<uint8_t> out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return io_error(path + ": read error");
  return out;
}
}  // namespace

Status parse_batch(const std::vector<uint8_t>& bytes, const std::string& where, ImageDataset& into) {
  if (bytes.empty()) return invalid_argument(where + ": empty CIFAR-10 batch file");
  if (bytes.size() % kRecordBytes != 0)
    return invalid_argument(where + ": " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                            std::to_string(kRecordBytes) + "-byte CIFAR-10 records (truncated or not a binary batch)");
  const int64_t records = static_cast<int64_t>(bytes.size()) / kRecordBytes;
  for (int64_t r = 0; r < records; ++r) {
    const uint8_t* rec = bytes.data() + r * kRecordBytes;
    if (rec[0] > 9)
      return invalid_argument(where + ": record " + std::to_string(r) + " has label " + std::to_string(rec[0]) +
                              " (CIFAR-10 labels are 0-9)");
    into.labels.push_back(rec[0]);
    into.pixels.insert(into.pixels.end(), rec + 1, rec + kRecordBytes);
  }
  into.count += records;
  return Status::ok();
}

Result<ImageDataset> load_training_set(const std::string& root) {
  if (root.empty()) return invalid_argument("dataset 'cifar10': no data path given");
  std::string dir = root;
  if (!fs::exists(dir + "/data_batch_1.bin") && fs::exists(dir + "/cifar-10-batches-bin/data_batch_1.bin"))
    dir += "/cifar-10-batches-bin";
  if (!fs::exists(dir + "/data_batch_1.bin"))
    return not_found(root + "/data_batch_1.bin: no such file (CIFAR-10 binary version expected: data_batch_1.bin .. data_batch_5.bin)");
  ImageDataset d;
  d.name = "cifar10";
  d.channels = 3;
  d.rows = d.cols = kSide;
  d.classes = 10;
  // Training-set statistics as used with torchvision's Normalize() for CIFAR-10.
  d.channel_mean = {0.4914f, 0.4822f, 0.4465f};
  d.channel_std = {0.2470f, 0.2435f, 0.2616f};
  for (int i = 1; i <= 5; ++i) {
    const std::string path = dir + "/data_batch_" + std::to_string(i) + ".bin";
    if (!fs::exists(path)) break;  // a reduced (generated) set may have fewer batch files
    JS_ASSIGN_OR_RETURN(auto bytes, read_bytes(path));
    JS_RETURN_IF_ERROR(parse_batch(bytes, path, d));
    d.files.push_back(path);
  }
  return d;
}

Status write_batch(const std::string& path, const std::vector<uint8_t>& labels, const std::vector<uint8_t>& planes) {
  const size_t image_bytes = static_cast<size_t>(kRecordBytes - 1);
  if (planes.size() != labels.size() * image_bytes)
    return invalid_argument(path + ": " + std::to_string(planes.size()) + " pixel bytes for " + std::to_string(labels.size()) + " images");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return io_error(path + ": cannot create");
  for (size_t i = 0; i < labels.size(); ++i) {
    out.put(static_cast<char>(labels[i]));
    out.write(reinterpret_cast<const char*>(planes.data() + i * image_bytes), static_cast<std::streamsize>(image_bytes));
  }
  out.flush();
  if (!out) return io_error(path + ": write failed");
  return Status::ok();
}

}  // namespace jetsweep::agent::cifar10

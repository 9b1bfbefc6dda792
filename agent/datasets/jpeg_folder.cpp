#include "agent/datasets/jpeg_folder.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/text.hpp"

namespace jetsweep::agent {
namespace fs = std::filesystem;

JpegFolderDataset::JpegFolderDataset(std::string name, std::vector<Entry> entries, int64_t classes,
                                     transforms::HarnessOptions options)
    : name_(std::move(name)), entries_(std::move(entries)), classes_(classes), options_(options) {
  files_.reserve(entries_.size());
  for (const auto& e : entries_) files_.push_back(e.path);
}

namespace {

// The trimmed comma-separated fields of a CSV line without quoting.
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out = split(line, ',');
  for (auto& f : out) f = trim(f);
  return out;
}

bool is_jpeg_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg";
}

}  // namespace

Result<std::unique_ptr<JpegFolderDataset>> JpegFolderDataset::open_gld(const std::string& root, const std::string& name) {
  if (root.empty()) return invalid_argument("dataset '" + name + "': no data path given");
  std::string csv;
  for (const char* candidate : {"/train.csv", "/data_user_dict/gld23k_user_dict_train.csv", "/gld23k_user_dict_train.csv"}) {
    if (fs::exists(root + candidate)) {
      csv = root + candidate;
      break;
    }
  }
  if (csv.empty())
    return not_found(root + "/train.csv: no such file (GLD-23k layout: train.csv with user_id,image_id,class and images/IMAGE_ID.jpg)");
  std::ifstream in(csv);
  if (!in) return io_error(csv + ": cannot open");
  std::string line;
  if (!std::getline(in, line)) return invalid_argument(csv + ": empty file (expected the header user_id,image_id,class)");
  const auto header = split_csv(line);
  if (header != std::vector<std::string>{"user_id", "image_id", "class"})
    return invalid_argument(csv + ":1: header is '" + trim(line) + "', expected 'user_id,image_id,class'");
  std::vector<Entry> entries;
  int64_t max_class = -1;
  int64_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    const auto f = split_csv(line);
    const std::string where = csv + ":" + std::to_string(line_no);
    if (f.size() != 3) return invalid_argument(where + ": expected 3 fields, got " + std::to_string(f.size()));
    if (f[1].empty()) return invalid_argument(where + ": empty image_id");
    const int64_t label = parse_int(f[2]).value_or(-1);
    if (label < 0) return invalid_argument(where + ": class '" + f[2] + "' is not a non-negative integer");
    const std::string path = root + "/images/" + f[1] + ".jpg";
    if (!fs::exists(path)) return not_found(where + ": image " + path + " does not exist");
    max_class = std::max(max_class, label);
    entries.push_back({path, label});
  }
  if (entries.empty()) return invalid_argument(csv + ": no images listed");
  auto d = std::make_unique<JpegFolderDataset>(name, std::move(entries), max_class + 1, transforms::HarnessOptions{});
  d->label_files_ = {csv};
  return d;
}

Result<std::unique_ptr<JpegFolderDataset>> JpegFolderDataset::open_class_folders(const std::string& root,
                                                                                const std::string& name) {
  if (root.empty()) return invalid_argument("dataset '" + name + "': no data path given");
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return not_found(root + ": no such directory (class-per-folder layout: ROOT/CLASS/*.jpg)");
  std::vector<std::string> classes;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory()) classes.push_back(e.path().filename().string());
  if (ec) return io_error(root + ": cannot list: " + ec.message());
  std::sort(classes.begin(), classes.end());
  if (classes.empty()) return invalid_argument(root + ": no class directories (expected ROOT/CLASS/*.jpg)");
  std::vector<Entry> entries;
  for (size_t c = 0; c < classes.size(); ++c) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(root + "/" + classes[c], ec))
      if (e.is_regular_file() && is_jpeg_name(e.path())) files.push_back(e.path().string());
    if (ec) return io_error(root + "/" + classes[c] + ": cannot list: " + ec.message());
    std::sort(files.begin(), files.end());
    for (auto& f : files) entries.push_back({std::move(f), static_cast<int64_t>(c)});
  }
  if (entries.empty()) return invalid_argument(root + ": no .jpg/.jpeg files in the class directories");
  return std::make_unique<JpegFolderDataset>(name, std::move(entries), static_cast<int64_t>(classes.size()),
                                             transforms::HarnessOptions{});
}

Status JpegFolderDataset::fetch(int64_t id, uint64_t augment_seed, Batch& out, int64_t slot) const {
  const Entry& e = entries_[static_cast<size_t>(id)];
  auto img = read_jpeg_file(e.path);
  if (!img) return img.status();
  transforms::Rng rng(augment_seed);
  const int64_t elems = 3 * options_.side * options_.side;
  transforms::harness_transform(img.value(), options_, rng, out.images.data() + slot * elems);
  out.labels[static_cast<size_t>(slot)] = e.label;
  return Status::ok();
}

}  // namespace jetsweep::agent

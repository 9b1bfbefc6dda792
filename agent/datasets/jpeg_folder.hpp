// JPEG image datasets read from disk sample by sample (as torchvision's ImageFolder and the GLD-23k loader
// do, so storage media and the page cache matter), decoded with libjpeg-turbo and transformed with the
// papers' harness pipeline (transforms.hpp) to 3 x 224 x 224. Two layouts:
//   GLD-23k  - ROOT/train.csv (or ROOT/data_user_dict/gld23k_user_dict_train.csv) with the header
//              `user_id,image_id,class`, images at ROOT/images/IMAGE_ID.jpg; classes = max(class) + 1;
//   folders  - ImageNet style ROOT/CLASS/*.jpg|*.jpeg, classes in sorted directory-name order.
// Immutable after opening; fetch() may run on any number of loader threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/datasets/dataset.hpp"
#include "agent/datasets/transforms.hpp"

namespace jetsweep::agent {

class JpegFolderDataset final : public Dataset {
 public:
  struct Entry {
    std::string path;
    int64_t label = 0;
  };
  JpegFolderDataset(std::string name, std::vector<Entry> entries, int64_t classes, transforms::HarnessOptions options);

  // GLD-23k CSV layout. Errors name the CSV file and line, or the missing image.
  static Result<std::unique_ptr<JpegFolderDataset>> open_gld(const std::string& root, const std::string& name = "gld23k");
  // Class-per-folder layout.
  static Result<std::unique_ptr<JpegFolderDataset>> open_class_folders(const std::string& root,
                                                                       const std::string& name = "imagefolder");

  const std::string& name() const override { return name_; }
  int64_t size() const override { return static_cast<int64_t>(entries_.size()); }
  SampleShape shape() const override { return {SampleShape::Kind::kImage, 3, options_.side, options_.side, 0, classes_}; }
  const std::vector<std::string>& files() const override { return files_; }
  std::vector<std::string> label_files() const override { return label_files_; }
  Status fetch(int64_t id, uint64_t augment_seed, Batch& out, int64_t slot) const override;
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::string name_;
  std::vector<Entry> entries_;
  std::vector<std::string> files_;
  std::vector<std::string> label_files_;   // GLD-23k: its CSV
  int64_t classes_;
  transforms::HarnessOptions options_;
};

}  // namespace jetsweep::agent

// A word-level text corpus for next-word prediction (PowerTrain's LSTM workload on WikiText), read as the
// PyTorch word_language_model example reads WikiText: whitespace-separated tokens, "<eos>" appended to
// every line, vocabulary in order of first appearance. The file is ROOT/train.txt or ROOT/wiki.train.tokens
// (or ROOT itself when it is a file). Samples are consecutive non-overlapping windows of seq_len tokens;
// the labels are the same window shifted by one token. Immutable after opening; any thread.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/datasets/dataset.hpp"

namespace jetsweep::agent {

class TextCorpusDataset final : public Dataset {
 public:
  static constexpr int64_t kSeqLen = 35;  // bptt of the PyTorch word_language_model example

  static Result<std::unique_ptr<TextCorpusDataset>> open(const std::string& root, int64_t seq_len = kSeqLen,
                                                         const std::string& name = "text");
  // Tokenises `text` (errors name `where`, with the byte offset of a NUL or the shortfall).
  static Result<std::unique_ptr<TextCorpusDataset>> from_text(const std::string& text, const std::string& where,
                                                              int64_t seq_len, const std::string& name);

  const std::string& name() const override { return name_; }
  int64_t size() const override { return (static_cast<int64_t>(tokens_.size()) - 1) / seq_len_; }
  SampleShape shape() const override {
    return {SampleShape::Kind::kTokens, 0, 0, 0, seq_len_, static_cast<int64_t>(vocabulary_.size())};
  }
  const std::vector<std::string>& files() const override { return files_; }
  Status fetch(int64_t id, uint64_t augment_seed, Batch& out, int64_t slot) const override;

  const std::vector<std::string>& vocabulary() const { return vocabulary_; }
  const std::vector<int64_t>& tokens() const { return tokens_; }

 private:
  std::string name_;
  int64_t seq_len_ = kSeqLen;
  std::vector<std::string> vocabulary_;
  std::vector<int64_t> tokens_;
  std::vector<std::string> files_;
};

}  // namespace jetsweep::agent

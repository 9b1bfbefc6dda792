#include "agent/datasets/text_corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace jetsweep::agent {
namespace fs = std::filesystem;

Result<std::unique_ptr<TextCorpusDataset>> TextCorpusDataset::from_text(const std::string& text, const std::string& where,
                                                                        int64_t seq_len, const std::string& name) {
  if (seq_len < 1) return invalid_argument(where + ": sequence length must be >= 1");
  if (auto nul = text.find('\0'); nul != std::string::npos)
    return invalid_argument(where + ": NUL byte at offset " + std::to_string(nul) + " (not a text corpus)");
  auto d = std::unique_ptr<TextCorpusDataset>(new TextCorpusDataset());
  d->name_ = name;
  d->seq_len_ = seq_len;
  std::unordered_map<std::string, int64_t> ids;
  auto add = [&](const std::string& word) {
    auto [it, inserted] = ids.emplace(word, static_cast<int64_t>(d->vocabulary_.size()));
    if (inserted) d->vocabulary_.push_back(word);
    d->tokens_.push_back(it->second);
  };
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string w;
    bool any = false;
    while (words >> w) {
      add(w);
      any = true;
    }
    if (any) add("<eos>");
  }
  if (static_cast<int64_t>(d->tokens_.size()) < seq_len + 1)
    return invalid_argument(where + ": " + std::to_string(d->tokens_.size()) + " tokens, need at least " +
                            std::to_string(seq_len + 1) + " for one " + std::to_string(seq_len) + "-token sample");
  if (d->vocabulary_.size() < 2) return invalid_argument(where + ": vocabulary of " + std::to_string(d->vocabulary_.size()) + " word(s)");
  return d;
}

Result<std::unique_ptr<TextCorpusDataset>> TextCorpusDataset::open(const std::string& root, int64_t seq_len,
                                                                   const std::string& name) {
  if (root.empty()) return invalid_argument("dataset '" + name + "': no data path given");
  std::string path;
  std::error_code ec;
  if (fs::is_regular_file(root, ec)) {
    path = root;
  } else {
    for (const char* candidate : {"/train.txt", "/wiki.train.tokens"})
      if (fs::exists(root + candidate)) {
        path = root + candidate;
        break;
      }
  }
  if (path.empty()) return not_found(root + "/train.txt: no such file (nor wiki.train.tokens)");
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return io_error(path + ": read error");
  JS_ASSIGN_OR_RETURN(auto d, from_text(text, path, seq_len, name));
  d->files_ = {path};
  return d;
}

Status TextCorpusDataset::fetch(int64_t id, uint64_t, Batch& out, int64_t slot) const {
  const auto first = tokens_.begin() + id * seq_len_;
  std::copy(first, first + seq_len_, out.tokens.begin() + slot * seq_len_);
  std::copy(first + 1, first + 1 + seq_len_, out.labels.begin() + slot * seq_len_);
  return Status::ok();
}

}  // namespace jetsweep::agent

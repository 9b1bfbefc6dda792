#include "common/data_fingerprint.hpp"

#include <map>
#include <set>

namespace jetsweep {

namespace {

constexpr size_t kBoardsNamed = 5;
constexpr size_t kFingerprintDigits = 12;

std::string boards_label(const std::set<std::string>& boards) {
  std::string out;
  size_t named = 0;
  for (const auto& b : boards) {
    if (named == kBoardsNamed) {
      out += " and " + std::to_string(boards.size() - kBoardsNamed) + " more";
      break;
    }
    out += (named++ == 0 ? "" : ", ") + (b.empty() ? std::string("(unassigned)") : b);
  }
  return out;
}

std::string runs_label(int64_t n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); }

}  // namespace

std::vector<std::string> dataset_fingerprint_warnings(const std::vector<DataSeen>& runs) {
  struct Seen {
    std::set<std::string> boards;
    int64_t runs = 0;
  };
  struct PerDataset {
    std::map<std::string, Seen> by_fingerprint;   // "" = none recorded
    int64_t runs = 0;
  };
  std::map<std::string, PerDataset> datasets;
  for (const auto& r : runs) {
    auto& d = datasets[r.dataset];
    auto& seen = d.by_fingerprint[r.fingerprint];
    seen.boards.insert(r.board);
    ++seen.runs;
    ++d.runs;
  }
  std::vector<std::string> out;
  for (const auto& [dataset, d] : datasets) {
    const auto none = d.by_fingerprint.find("");
    const size_t recorded = d.by_fingerprint.size() - (none == d.by_fingerprint.end() ? 0 : 1);
    const std::string name = "dataset '" + dataset + "'";
    if (recorded > 1) {
      std::string line = name + ": its runs trained on different data (" + std::to_string(recorded) + " fingerprints):";
      bool first = true;
      for (const auto& [fingerprint, seen] : d.by_fingerprint) {
        if (fingerprint.empty()) continue;
        line += std::string(first ? " " : "; ") + fingerprint.substr(0, kFingerprintDigits) + " on " +
                boards_label(seen.boards) + " (" + runs_label(seen.runs) + ")";
        first = false;
      }
      out.push_back(line);
    }
    if (recorded > 0 && none != d.by_fingerprint.end())
      out.push_back(name + ": " + std::to_string(none->second.runs) + " of " + runs_label(d.runs) +
                    " recorded no fingerprint (on " + boards_label(none->second.boards) +
                    ": simulated boards or older agents), so the same data is not proven");
  }
  return out;
}

}  // namespace jetsweep

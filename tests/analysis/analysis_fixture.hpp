// What the analysis tests share: synthetic corpora named by board and workloads, and the `analyze` and
// `export` entry points run in-process with their exit code and output. Single-threaded use.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "analysis/analyze_cli.hpp"
#include "analysis/synthetic_corpus.hpp"

namespace jetsweep::testing {

// A synthetic corpus of board class `board` for the named workloads (none named: every synthetic workload).
inline analysis::Corpus synthetic_corpus(const std::string& board, const std::vector<std::string>& workloads,
                                         const analysis::SyntheticOptions& options) {
  std::vector<analysis::SyntheticWorkload> ws;
  for (const auto& name : workloads) ws.push_back(analysis::synthetic_workload(name).value());
  if (workloads.empty()) ws = analysis::synthetic_workloads();
  return analysis::generate_corpus(analysis::synthetic_board(board).value(), ws, options);
}

// One in-process run of `jetsweep analyze` or `jetsweep export`.
struct Run {
  int rc;
  std::string out, err;
};

inline Run analyze(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int rc = analysis::analyze_main(args, out, err);
  return {rc, out.str(), err.str()};
}

inline Run export_corpus(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int rc = analysis::export_main(args, out, err);
  return {rc, out.str(), err.str()};
}

}  // namespace jetsweep::testing

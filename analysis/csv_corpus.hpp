// Reading and writing power-mode corpora as CSV:
//   device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw[,extra columns]
// Stateless functions; any thread.
#pragma once

#include <istream>
#include <ostream>
#include <string>

#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

// The eight required columns, in the order `export` writes them.
extern const char* const kCorpusColumns[8];

// Parses a corpus. Required columns may come in any order; power_mw may be empty (no sensor).
// Optional columns understood: instance, mode_name, epoch (rows with epoch 0 are warm-up and kept
// out of the mode profiles), epoch_s, energy_j, stall_s, compute_s, minibatches, runs, epochs, and the
// software columns kernel, torch_version, compiler, git_sha, l4t, jetpack. Others are ignored.
// Errors are kInvalidArgument "FILE:LINE: column 'NAME': ...".
Result<Corpus> parse_corpus_csv(std::istream& in, const std::string& name);
Result<Corpus> read_corpus_csv(const std::string& path);

// One row per mode record (instances averaged by the source) with extra columns
// instance,runs,epochs,epoch_s,energy_j.
void write_corpus_csv(std::ostream& out, const Corpus& corpus);
// One row per epoch sample (warm-up epochs included, marked by epoch 0) with the per-epoch columns
// and the software columns, so `analyze variability --csv` can read it back.
void write_epochs_csv(std::ostream& out, const Corpus& corpus);

}  // namespace jetsweep::analysis

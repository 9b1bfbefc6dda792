// Reading and writing power-mode corpora as CSV:
//   device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw[,extra columns]
// Stateless functions; any thread.
#pragma once

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

// The eight required columns, in the order `export` writes them.
extern const char* const kCorpusColumns[8];

// Parses a corpus. Required columns may come in any order; power_mw may be empty (no sensor).
// Optional columns understood: instance, mode_name, mode (the mode's label; with it, or with a
// mode_name, mode settings may be empty), epoch (rows with epoch 0 are warm-up and kept out of the
// mode profiles), epoch_s (or e2e_s), energy_j, stall_s, compute_s, minibatches, runs, epochs, run_id,
// repetition, dataset, simulated, the configuration axes pin_clocks, fan, batch_size, workers,
// prefetch, threads, seed, storage, max_minibatches, drop_caches (absent or empty = not a
// distinguishing axis), and the software columns kernel, torch_version, compiler, git_sha, l4t,
// jetpack. Others are ignored. Errors are kInvalidArgument "FILE:LINE: column 'NAME': ...".
Result<Corpus> parse_corpus_csv(std::istream& in, const std::string& name);
Result<Corpus> read_corpus_csv(const std::string& path);
// Splits one CSV record (RFC 4180 quoting: "" inside a quoted cell is one quote; a record never spans
// lines here); an unterminated quote is kInvalidArgument naming `where`.
Result<std::vector<std::string>> split_record(const std::string& line, const std::string& where);

// One row per mode record (per instance and configuration) with extra columns instance, mode,
// mode_name, every configuration axis, dataset, simulated, runs, epochs, epoch_s, energy_j, throttled.
void write_corpus_csv(std::ostream& out, const Corpus& corpus);
// One row per epoch sample (warm-up epochs included: epoch 0, warmup true) with every configuration
// axis, the run's state (storage device, page cache dropped, reference state, simulated), run_id,
// repetition, the per-epoch figures (e2e_s, stall_s, compute_s, minibatches, energy_j, power_w,
// power_coverage, throttled, throttle_reason, paused_before_s), the epoch window (t_start_s/t_end_s on the run's
// timeline, start_unix_s/end_unix_s on the controller's clock) and the software columns, so
// `analyze variability|epochs --csv` can read it back.
void write_epochs_csv(std::ostream& out, const Corpus& corpus);

}  // namespace jetsweep::analysis

// `jetsweep validate` and `submit` check each model file a campaign names before anything is uploaded: the file is
// loaded by the agent's own LibTorch and run on a probe minibatch of each dataset the campaign trains it on, as a
// board does before a run (`jetsweep-agent models --check FILE --dataset NAME`, docs/WORKLOADS.md). The check runs
// in a helper process with a time limit: a model that hangs or crashes LibTorch cannot hang or take down the CLI.
//
// The helper is $JETSWEEP_AGENT_BIN when set (it must run; "none" skips the check, e.g. where the workstation's
// LibTorch differs from the boards'), else the jetsweep-agent next to this executable, else one on PATH; with none,
// the check is skipped with a note (the agent still checks the file before each run). The helper's exit 1 is its
// verdict on the file; any other failure is the helper's (kUnavailable). The limit is 120 s per check
// ($JETSWEEP_MODEL_CHECK_TIMEOUT_S). Calling thread.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/model_upload.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep::cli {

struct ModelCheckOptions {
  std::string agent_binary;   // "" = none found: the check is skipped
  double timeout_s = 120;
};

// The helper and the limit from the environment and this executable's place (see above); kInvalidArgument when
// $JETSWEEP_AGENT_BIN or $JETSWEEP_MODEL_CHECK_TIMEOUT_S is set but unusable.
Result<ModelCheckOptions> model_check_options();

// Checks each file on each dataset `runs` train it on (load only when `runs` is null: the campaign expands on the
// controller). kInvalidArgument naming the file's FILE:LINE:COL, the dataset and the agent's message when it fails;
// kUnavailable when the helper cannot run or runs past the limit. `log` gets one line per check.
Status check_model_files(const std::vector<ModelFileRef>& files, const std::vector<RunConfig>* runs,
                         const ModelCheckOptions& options, std::ostream& log);

}  // namespace jetsweep::cli

#include "cli/model_check.hpp"

#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <variant>

#include "common/json_parse.hpp"
#include "common/process.hpp"
#include "common/text.hpp"

namespace jetsweep::cli {

namespace fs = std::filesystem;

namespace {

constexpr double kDefaultTimeout_s = 120;

bool executable(const std::string& path) {
  std::error_code ec;
  return ::access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path, ec);
}

// A number member of the helper's answer as text ("?" when absent).
std::string member(const boost::json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v ? boost::json::serialize(*v) : "?";
}

// The agent's message without its "jetsweep-agent: " prefix, on one line.
std::string agent_message(const ProcessResult& r) {
  std::string text = trim(r.err.empty() ? r.out : r.err);
  const std::string prefix = "jetsweep-agent: ";
  if (text.rfind(prefix, 0) == 0) text = text.substr(prefix.size());
  for (auto& ch : text)
    if (ch == '\n') ch = ' ';
  if (text.empty()) text = r.signaled ? "killed by signal " + std::to_string(r.exit_code - 128) : "no message";
  return text;
}

}  // namespace

Result<ModelCheckOptions> model_check_options() {
  ModelCheckOptions o;
  o.timeout_s = kDefaultTimeout_s;
  if (const char* t = std::getenv("JETSWEEP_MODEL_CHECK_TIMEOUT_S"); t && *t) {
    char* end = nullptr;
    o.timeout_s = std::strtod(t, &end);
    if (end == t || *end != '\0' || !(o.timeout_s > 0) || o.timeout_s > 86400)
      return invalid_argument(std::string("JETSWEEP_MODEL_CHECK_TIMEOUT_S '") + t + "': expected seconds in (0, 86400]");
  }
  if (const char* bin = std::getenv("JETSWEEP_AGENT_BIN"); bin && *bin) {
    if (std::string(bin) == "none") return o;   // the check skipped on purpose (a workstation's LibTorch differs)
    const auto found = resolve_executable(bin);
    if (const int* err = std::get_if<int>(&found))
      return invalid_argument(std::string("JETSWEEP_AGENT_BIN '") + bin + "' is not an executable file: " +
                              std::strerror(*err));
    o.agent_binary = std::get<std::string>(found);
    return o;
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && executable((self.parent_path() / "jetsweep-agent").string())) {
    o.agent_binary = (self.parent_path() / "jetsweep-agent").string();
    return o;
  }
  if (const auto found = resolve_executable("jetsweep-agent"); std::holds_alternative<std::string>(found))
    o.agent_binary = std::get<std::string>(found);
  return o;
}

Status check_model_files(const std::vector<ModelFileRef>& files, const std::vector<RunConfig>* runs,
                         const ModelCheckOptions& options, std::ostream& log) {
  for (const auto& f : files) {
    if (options.agent_binary.empty()) {
      log << "model file " << f.path << ": not loaded here (no jetsweep-agent beside this jetsweep or on PATH, or "
          << "JETSWEEP_AGENT_BIN=none): each agent checks it before its runs\n";
      continue;
    }
    std::set<std::string> datasets;   // the datasets the campaign trains this file on; "" = load only
    if (runs) {
      for (const auto& r : *runs)
        if (torchscript_sha256(r.model) == f.sha256) datasets.insert(r.dataset);
    }
    if (datasets.empty()) datasets.insert("");
    for (const auto& dataset : datasets) {
      std::vector<std::string> argv{options.agent_binary, "models", "--check", f.path};
      if (!dataset.empty()) argv.insert(argv.end(), {"--dataset", dataset});
      auto ran = run_process(argv, options.timeout_s);
      if (!ran)
        return Status(Code::kUnavailable, f.where + ": model file '" + f.path + "' could not be checked: " +
                                              ran.status().message());
      const std::string on = dataset.empty() ? "" : " on dataset '" + dataset + "'";
      // Exit 1 is the agent's verdict on the file; anything else is the helper failing (an older agent without
      // --check exits 2, a crash is a signal): not the model's fault, and said so.
      if (ran->exit_code == 1 && !ran->signaled)
        return invalid_argument(f.where + ": model file '" + f.path + "'" + on + ": " + agent_message(*ran));
      if (ran->exit_code != 0 || ran->signaled)
        return Status(Code::kUnavailable, f.where + ": model file '" + f.path + "' could not be checked: `" +
                                              command_line(argv) + "` failed (" + agent_message(*ran) +
                                              "); JETSWEEP_AGENT_BIN names another jetsweep-agent, or none to skip the check");
      boost::system::error_code ec;
      const auto answer = json::parse_exact(ran->out, ec);
      const auto* o = !ec ? answer.if_object() : nullptr;
      if (!o || !o->contains("input"))
        return Status(Code::kUnavailable, f.where + ": model file '" + f.path + "': `" + command_line(argv) +
                                              "` answered something other than its JSON: " + trim(ran->out));
      log << "model file " << f.path << ": loads with " << options.agent_binary << "'s LibTorch";
      if (o->at("input").is_string())
        log << "; on " << dataset << " samples (" << o->at("input").as_string().c_str() << ") "
            << member(*o, "parameters") << " parameters, " << member(*o, "forward_macs") << " forward MACs per sample";
      else if (!dataset.empty())
        log << "; " << dataset << "'s sample shape comes from its files: the agent probes it before the run";
      log << "\n";
    }
  }
  return Status::ok();
}

}  // namespace jetsweep::cli

// The CLI's model-file check (cli/model_check.hpp) against stand-in helpers (shell scripts in place of
// jetsweep-agent): what is asked of the helper, its answer read back, its failure named with FILE:LINE:COL and the
// dataset, a helper that hangs killed at the limit, and no helper at all. The real agent's verdicts are checked in
// tests/integration/test_own_model.cpp.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <optional>
#include <sstream>

#include "cli/model_check.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using jetsweep::testing::TempDir;
using jetsweep::testing::write_file;

namespace {
std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  const auto path = dir / name;
  write_file(path, "#!/bin/sh\n" + body);
  ::chmod(path.c_str(), 0755);
  return path.string();
}
// Sets an environment variable for a scope, restoring what was there (a failed REQUIRE leaks nothing).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

RunConfig run_of(const std::string& model, const std::string& dataset) {
  RunConfig r;
  r.model = model;
  r.dataset = dataset;
  return r;
}
}  // namespace

TEST_CASE("model check: each file on each dataset the campaign trains it on, in a helper with a time limit") {
  TempDir dir;
  const std::string sha(64, 'a');
  const std::vector<cli::ModelFileRef> files{{(dir / "m.pt").string(), sha, 10, "c.yaml:4:10"}};
  const std::vector<RunConfig> runs{run_of("torchscript:" + sha, "mnist"), run_of("torchscript:" + sha, "mnist"),
                                    run_of("torchscript:" + sha, "cifar10"), run_of("lenet5", "gld23k")};
  // A helper that logs its arguments and answers as the agent does.
  cli::ModelCheckOptions o;
  o.agent_binary = script(dir, "agent-ok", "echo \"$@\" >> " + (dir / "calls").string() +
                                               "\necho '{\"sha256\":\"x\",\"input\":\"1x28x28, 10 classes\","
                                               "\"parameters\":61706,\"forward_macs\":416520}'\n");
  std::ostringstream log;
  REQUIRE(cli::check_model_files(files, &runs, o, log).is_ok());
  CHECK(testing::read_file(dir / "calls") == "models --check " + files[0].path + " --dataset cifar10\nmodels --check " +
                                                 files[0].path + " --dataset mnist\n");   // once per dataset
  CHECK(log.str().find("on mnist samples (1x28x28, 10 classes) 61706 parameters, 416520 forward MACs per sample") !=
        std::string::npos);
  // The campaign expands on the controller (no runs here): the file is only loaded.
  std::ostringstream load_only;
  REQUIRE(cli::check_model_files(files, nullptr, o, load_only).is_ok());
  CHECK(testing::read_file(dir / "calls").find("models --check " + files[0].path + "\n") != std::string::npos);

  // The agent's refusal, named with the file's place and the dataset.
  o.agent_binary = script(dir, "agent-refuses", "echo \"jetsweep-agent: forward fails on the samples\" >&2\nexit 1\n");
  auto refused = cli::check_model_files(files, &runs, o, log);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.code() == Code::kInvalidArgument);
  CHECK(refused.message() ==
        "c.yaml:4:10: model file '" + files[0].path + "' on dataset 'cifar10': forward fails on the samples");
  // A helper that hangs is killed at the limit; one that answers nonsense is named.
  o.agent_binary = script(dir, "agent-hangs", "exec sleep 60\n");
  o.timeout_s = 0.5;
  auto hung = cli::check_model_files(files, &runs, o, log);
  REQUIRE_FALSE(hung.is_ok());
  CHECK(hung.code() == Code::kUnavailable);
  CHECK(hung.message().find("could not be checked: ") != std::string::npos);
  CHECK(hung.message().find("did not finish within 0.5 s and was killed") != std::string::npos);
  // A helper that fails otherwise than with its verdict (an older agent without --check exits 2): not the model's fault.
  o.agent_binary = script(dir, "agent-old", "echo \"jetsweep-agent: --check: unknown argument\" >&2\nexit 2\n");
  auto old = cli::check_model_files(files, &runs, o, log);
  REQUIRE_FALSE(old.is_ok());
  CHECK(old.code() == Code::kUnavailable);
  CHECK(old.message().find("could not be checked: `" + o.agent_binary + " models --check ") != std::string::npos);
  CHECK(old.message().find("failed (--check: unknown argument)") != std::string::npos);
  o.agent_binary = script(dir, "agent-odd", "echo hello\n");
  o.timeout_s = 30;
  auto odd = cli::check_model_files(files, &runs, o, log);
  REQUIRE_FALSE(odd.is_ok());
  CHECK(odd.message().find("answered something other than its JSON: hello") != std::string::npos);
  // No helper: skipped, saying so.
  o.agent_binary.clear();
  std::ostringstream skipped;
  REQUIRE(cli::check_model_files(files, &runs, o, skipped).is_ok());
  CHECK(skipped.str().find("not loaded here (no jetsweep-agent") != std::string::npos);
}

TEST_CASE("model check options: JETSWEEP_AGENT_BIN and JETSWEEP_MODEL_CHECK_TIMEOUT_S are checked") {
  TempDir dir;
  {
    ScopedEnv bin("JETSWEEP_AGENT_BIN", (dir / "absent").string());
    auto missing = cli::model_check_options();
    REQUIRE_FALSE(missing.is_ok());
    CHECK(missing.status().message() ==
          "JETSWEEP_AGENT_BIN '" + (dir / "absent").string() + "' is not an executable file: No such file or directory");
  }
  {
    testing::write_file(dir / "not-executable", "#!/bin/sh\n");
    ScopedEnv bin("JETSWEEP_AGENT_BIN", (dir / "not-executable").string());
    auto refused = cli::model_check_options();
    REQUIRE_FALSE(refused.is_ok());
    CHECK(refused.status().message().find("is not an executable file: Permission denied") != std::string::npos);
  }
  {
    // A bare name is looked up in PATH, as the helper is started.
    testing::write_file(dir / "jetsweep-agent-x", "#!/bin/sh\nexit 0\n");
    std::filesystem::permissions(dir / "jetsweep-agent-x", std::filesystem::perms::owner_all);
    ScopedEnv path("PATH", dir.path().string());
    ScopedEnv bin("JETSWEEP_AGENT_BIN", "jetsweep-agent-x");
    auto found = cli::model_check_options();
    REQUIRE_MESSAGE(found.is_ok(), found.status().to_string());
    CHECK(found->agent_binary == (dir / "jetsweep-agent-x").string());
  }
  {
    ScopedEnv none("JETSWEEP_AGENT_BIN", "none");   // skipped on purpose
    auto skipped = cli::model_check_options();
    REQUIRE(skipped.is_ok());
    CHECK(skipped->agent_binary.empty());
  }
  const std::string agent = script(dir, "agent", "exit 0\n");
  {
    ScopedEnv bin("JETSWEEP_AGENT_BIN", agent);
    {
      ScopedEnv soon("JETSWEEP_MODEL_CHECK_TIMEOUT_S", "soon");
      CHECK_FALSE(cli::model_check_options().is_ok());
    }
    ScopedEnv limit("JETSWEEP_MODEL_CHECK_TIMEOUT_S", "7.5");
    auto o = cli::model_check_options();
    REQUIRE(o.is_ok());
    CHECK(o->agent_binary == agent);
    CHECK(o->timeout_s == 7.5);
  }
  auto defaults = cli::model_check_options();
  REQUIRE(defaults.is_ok());
  CHECK(defaults->timeout_s == 120);
}

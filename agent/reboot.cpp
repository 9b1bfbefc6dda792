#include "agent/reboot.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "agent/credential_file.hpp"
#include "agent/device/service_control.hpp"
#include "common/json_fields.hpp"
#include "common/json_parse.hpp"
#include "common/log.hpp"

namespace jetsweep::agent {
namespace bj = boost::json;

namespace {
constexpr int kPendingVersion = 1;
// The answer to nvpmodel's "DO YOU WANT TO REBOOT NOW? enter YES/yes to confirm:".
constexpr const char* kConfirm = "YES\n";
constexpr double kCommandTimeout_s = 120;

std::string masks(const char* name, const std::optional<int64_t>& from, const std::optional<int64_t>& to) {
  if (!to) return "";
  return std::string(name) + " " + (from ? std::to_string(*from) : std::string("none")) + " -> " + std::to_string(*to);
}
}  // namespace

std::string pending_reboot_file(const std::string& state_dir) { return state_dir + "/reboot_pending.json"; }

Status save_pending_reboot(const std::string& file, const PendingReboot& pending) {
  bj::object o;
  o["version"] = kPendingVersion;
  o["run_id"] = pending.run_id;
  o["config"] = to_json(pending.config);
  // The announcement as the wire carries it: one codec (common/protocol.cpp) for both.
  o["announced"] = json::parse_exact(proto::encode(proto::Envelope{0, pending.announced}));
  o["commands_started"] = pending.commands_started;
  return write_file_durably(file, bj::serialize(o) + "\n").with_context("recording the pending reboot");
}

Result<std::optional<PendingReboot>> load_pending_reboot(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::optional<PendingReboot>();
    return io_error("cannot read the pending reboot " + file + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  const std::string what = file + " (the pending reboot; remove it to forget the reboot and its run)";
  bj::error_code ec;
  bj::value v = json::parse_exact(text.str(), ec);
  if (ec || !v.is_object()) return invalid_argument(what + ": not a JSON object" + (ec ? ": " + ec.message() : ""));
  json::FieldReader r(v.as_object(), what);
  if (r.integer("version") != kPendingVersion && r.ok()) r.fail("version", "must be " + std::to_string(kPendingVersion));
  PendingReboot p;
  p.run_id = r.integer("run_id");
  p.commands_started = r.boolean("commands_started");
  const bj::object* config = r.object("config");
  const bj::object* announced = r.object("announced");
  if (!r.ok()) return r.status();
  JS_ASSIGN_OR_RETURN(p.config, run_config_from_json(*config, what + " field 'config',"));
  JS_ASSIGN_OR_RETURN(proto::Envelope env, proto::decode(bj::serialize(*announced)));
  const auto* m = std::get_if<proto::RebootPending>(&env.body);
  if (!m || m->run_id != p.run_id)
    return invalid_argument(what + " field 'announced': not a reboot_pending message of run " + std::to_string(p.run_id));
  p.announced = *m;
  return std::optional<PendingReboot>(std::move(p));
}

Status clear_pending_reboot(const std::string& file) {
  if (std::remove(file.c_str()) != 0 && errno != ENOENT)
    return io_error("cannot remove the pending reboot " + file + ": " + std::strerror(errno));
  return Status::ok();
}

std::string describe_mask_change(const proto::RebootPending& r) {
  std::string tpc = masks("TPC_PG_MASK", r.tpc_pg_mask_from, r.tpc_pg_mask_to);
  std::string fbp = masks("FBP_PG_MASK", r.fbp_pg_mask_from, r.fbp_pg_mask_to);
  return tpc + (!tpc.empty() && !fbp.empty() ? ", " : "") + fbp;
}

Status set_mode_and_reboot(const RebootOptions& options, int64_t nvpmodel_id) {
  auto run = [](std::vector<std::string> argv, const std::string& input) -> Status {
    const std::string cmd = device::command_line(argv);
    JS_LOG_INFO << "reboot: running `" << cmd << "`";
    JS_ASSIGN_OR_RETURN(device::ProcessResult r, device::run_process(argv, kCommandTimeout_s, input));
    const std::string output = log::excerpt(r.err + r.out, 600);
    if (r.exit_code != 0)
      return unavailable("`" + cmd + "` exited " + std::to_string(r.exit_code) + (output.empty() ? "" : ": " + output));
    return Status::ok();
  };
  std::vector<std::string> nvpmodel = options.nvpmodel_command;
  nvpmodel.insert(nvpmodel.end(), {"-m", std::to_string(nvpmodel_id)});
  JS_RETURN_IF_ERROR(run(nvpmodel, kConfirm));
  return run(options.reboot_command, "");
}

}  // namespace jetsweep::agent

// nvfancontrol around fan_max on L4T R35+ (issue 11 item 8): stopped before pwm1 is written when it runs,
// started again on restore (also after a crash), never started when the agent did not stop it, never
// touched on R32; systemctl failures are errors naming the command. A fake systemctl script stands in for
// systemd and logs each call with the fan's pwm1 at that moment.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>

#include "agent/device/fs_util.hpp"
#include "agent/device/power_control.hpp"
#include "agent/device/restore_state.hpp"
#include "agent/device/service_control.hpp"
#include "tests/device/device_checks.hpp"

namespace jetsweep::device {
namespace {

using Calls = std::vector<std::string>;

// The pwm-fan's pwm1 (the first of the board's fan channels).
fs::path pwm1(const FakeBoard& fb) {
  auto fan = find_fan(fb.root());
  REQUIRE(fan.has_value());
  REQUIRE_FALSE(fan->legacy);
  REQUIRE(fan->pwm.size() == static_cast<size_t>(fb.spec().fan_pwm_files));
  return fan->pwm.front();
}

std::shared_ptr<ServiceControl> systemctl(const FakeSystemctl& sc) {
  return std::make_shared<SystemctlServiceControl>(sc.path().string());
}

DeviceTarget fan_only() {
  DeviceTarget t;
  t.fan_max = true;
  return t;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::vector<FakeKind> kR35Plus = {FakeKind::kXavierNxR35, FakeKind::kAgxOrinR35, FakeKind::kAgxOrinR36,
                                        FakeKind::kOrinNanoR36};

TEST_CASE("SystemctlServiceControl runs the executable without a shell and reads systemctl's exit codes") {
  FakeSystemctl sc(true);
  SystemctlServiceControl ctl(sc.path().string());
  auto a = ctl.is_active("nvfancontrol");
  REQUIRE_MESSAGE(a.is_ok(), a.status().to_string());
  CHECK(*a);
  REQUIRE(ctl.stop("nvfancontrol").is_ok());
  CHECK_FALSE(sc.active());
  a = ctl.is_active("nvfancontrol");
  REQUIRE(a.is_ok());
  CHECK_FALSE(*a);  // exit 3
  REQUIRE(ctl.start("nvfancontrol").is_ok());
  CHECK(sc.active());
  CHECK(sc.calls() == Calls{"is-active nvfancontrol|-", "stop nvfancontrol|-", "is-active nvfancontrol|-",
                            "start nvfancontrol|-"});

  // Exit 4 (no such unit) is "not active" too.
  sc.fail("is-active", 4, "");
  a = ctl.is_active("nvfancontrol");
  REQUIRE(a.is_ok());
  CHECK_FALSE(*a);

  // systemd not reachable (a container): an error naming the command, its exit code and its stderr.
  sc.fail("is-active", 1, "System has not been booted with systemd as init system (PID 1). Can't operate.\n"
                          "Failed to connect to bus: Host is down\n");
  a = ctl.is_active("nvfancontrol");
  REQUIRE_FALSE(a.is_ok());
  CHECK(a.status().code() == Code::kIoError);
  CHECK_MESSAGE(contains(a.status().message(), "'" + sc.path().string() + " is-active nvfancontrol' exited with status 1: "
                                               "System has not been booted with systemd as init system (PID 1). "
                                               "Can't operate.; Failed to connect to bus: Host is down"),
                a.status().message());

  sc.fail("stop", 5, "Failed to stop nvfancontrol.service: Access denied\n");
  Status s = ctl.stop("nvfancontrol");
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.code() == Code::kIoError);
  CHECK_MESSAGE(s.message() == "'" + sc.path().string() +
                                   " stop nvfancontrol' exited with status 5: Failed to stop nvfancontrol.service: Access denied",
                s.message());
  CHECK(sc.active());  // the failed stop changed nothing

  // An executable that is not there, by path and by name.
  for (const std::string& missing : {std::string("/nonexistent/jetsweep/systemctl"), std::string("jetsweep-no-such-systemctl")}) {
    CAPTURE(missing);
    SystemctlServiceControl none(missing);
    auto r = none.is_active("nvfancontrol");
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == Code::kUnavailable);
    CHECK_MESSAGE(contains(r.status().message(), "cannot run '" + missing + " is-active nvfancontrol'"), r.status().message());
    CHECK_MESSAGE(contains(r.status().message(), "No such file"), r.status().message());
  }
}

TEST_CASE("run_process: exit code, stdout, stderr, signals and the time limit") {
  auto r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 7"}, 30);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  CHECK(r->exit_code == 7);
  CHECK_FALSE(r->signaled);
  CHECK(r->out == "out\n");
  CHECK(r->err == "err\n");
  // stdin is /dev/null: a child that reads it sees end of file at once.
  r = run_process({"/bin/sh", "-c", "cat; echo done"}, 30);
  REQUIRE(r.is_ok());
  CHECK(r->out == "done\n");
  r = run_process({"/bin/sh", "-c", "kill -9 $$"}, 30);
  REQUIRE(r.is_ok());
  CHECK(r->signaled);
  CHECK(r->exit_code == 128 + 9);
  // A limit of 0 s is over before the first read: the child (which would never end) is killed and reaped.
  auto t = run_process({"/bin/sh", "-c", "exec tail -f /dev/null"}, 0);
  REQUIRE_FALSE(t.is_ok());
  CHECK(t.status().code() == Code::kUnavailable);
  CHECK_MESSAGE(contains(t.status().message(), "'/bin/sh -c exec tail -f /dev/null' did not finish within 0 s"),
                t.status().message());
}

TEST_CASE("fan_max on L4T R35+ with nvfancontrol active: stopped before pwm1 is written, started again on restore") {
  for (FakeKind kind : kR35Plus) {
    FakeBoard fb(kind);
    CAPTURE(fb.spec().name);
    const fs::path fan = pwm1(fb);
    FakeSystemctl sc(true, fan);
    auto before = fb.snapshot();
    PowerController ctl(fb.board(), fb.state_dir(), systemctl(sc));

    Status s = ctl.apply(*plan_pin_current(ctl.board(), ApplyOptions{true, true}));
    REQUIRE_MESSAGE(s.is_ok(), s.to_string());
    CHECK(trim(*read_raw(fan)) == "255");
    CHECK_FALSE(sc.active());
    // pwm1 still had its original value when the service was stopped.
    CHECK(sc.calls() == Calls{"is-active nvfancontrol|120", "stop nvfancontrol|120"});
    auto st = load_restore_state(fb.state_dir());
    REQUIRE(st.is_ok());
    CHECK(st->stopped_services == std::vector<std::string>{"nvfancontrol"});

    // A second fan apply before the restore finds it stopped and leaves it so.
    REQUIRE(ctl.apply(fan_only()).is_ok());
    CHECK(sc.calls().size() == 3);
    CHECK(sc.calls().back() == "is-active nvfancontrol|255");

    auto r = ctl.restore();
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    CHECK(*r);
    CHECK(sc.active());
    // Started once, after pwm1 was put back.
    CHECK(sc.calls().size() == 4);
    CHECK(sc.calls().back() == "start nvfancontrol|120");
    CHECK_FALSE(exists_file(restore_state_path(fb.state_dir())));
    CHECK(diff_snapshots(before, fb.snapshot()) == "");

    auto again = ctl.restore();
    REQUIRE(again.is_ok());
    CHECK_FALSE(*again);
    CHECK(sc.calls().size() == 4);
  }
}

TEST_CASE("fan_max on L4T R35+ with nvfancontrol inactive: never stopped, never started") {
  FakeBoard fb(FakeKind::kAgxOrinR35);
  FakeSystemctl sc(false, pwm1(fb));
  auto before = fb.snapshot();
  PowerController ctl(fb.board(), fb.state_dir(), systemctl(sc));
  REQUIRE(ctl.apply(fan_only()).is_ok());
  CHECK(trim(*read_raw(pwm1(fb))) == "255");
  REQUIRE(ctl.restore().is_ok());
  CHECK(sc.calls() == Calls{"is-active nvfancontrol|120"});
  CHECK_FALSE(sc.active());
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
}

TEST_CASE("systemctl is never run on R32 (legacy fan) nor for a run without fan_max") {
  for (FakeKind kind : {FakeKind::kNanoR32, FakeKind::kAgxXavierR32}) {
    FakeBoard fb(kind);
    CAPTURE(fb.spec().name);
    FakeSystemctl sc(true);
    auto before = fb.snapshot();
    PowerController ctl(fb.board(), fb.state_dir(), systemctl(sc));
    REQUIRE(ctl.apply(*plan_pin_current(ctl.board(), ApplyOptions{true, true})).is_ok());
    CHECK(trim(fb.read("/sys/devices/pwm-fan/target_pwm")) == "255");
    REQUIRE(ctl.restore().is_ok());
    CHECK(sc.calls().empty());
    CHECK(sc.active());
    CHECK(diff_snapshots(before, fb.snapshot()) == "");
  }
  FakeBoard fb(FakeKind::kAgxOrinR36);
  FakeSystemctl sc(true);
  PowerController ctl(fb.board(), fb.state_dir(), systemctl(sc));
  REQUIRE(ctl.apply(*plan_pin_current(ctl.board(), ApplyOptions{true, false})).is_ok());
  REQUIRE(ctl.restore().is_ok());
  CHECK(sc.calls().empty());
}

TEST_CASE("the R35 fan layout alone (no L4T release file) is enough to stop nvfancontrol") {
  FakeBoard fb(FakeKind::kAgxOrinR35);
  fb.remove("/etc/nv_tegra_release");
  FakeSystemctl sc(true, pwm1(fb));
  PowerController ctl(fb.board(), fb.state_dir(), systemctl(sc));
  REQUIRE(ctl.board().info.l4t_major() == 0);
  REQUIRE(ctl.apply(fan_only()).is_ok());
  REQUIRE(ctl.restore().is_ok());
  CHECK(sc.calls() == Calls{"is-active nvfancontrol|120", "stop nvfancontrol|120", "start nvfancontrol|120"});
}

TEST_CASE("a failing stop is an error naming the command; restore then starts nothing (it still runs)") {
  FakeBoard fb(FakeKind::kXavierNxR35);
  FakeSystemctl sc(true, pwm1(fb));
  sc.fail("stop", 5, "Failed to stop nvfancontrol.service: Access denied\n");
  auto before = fb.snapshot();
  PowerController ctl(fb.board(), fb.state_dir(), systemctl(sc));
  Status s = ctl.apply(*plan_pin_current(ctl.board(), ApplyOptions{true, true}));
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.code() == Code::kIoError);
  CHECK_MESSAGE(contains(s.message(), "fan_max: stopping nvfancontrol"), s.message());
  CHECK_MESSAGE(contains(s.message(), "'" + sc.path().string() + " stop nvfancontrol' exited with status 5: "
                                      "Failed to stop nvfancontrol.service: Access denied"),
                s.message());
  CHECK(diff_snapshots(before, fb.snapshot()) == "");  // stopped before anything was written
  auto st = load_restore_state(fb.state_dir());
  REQUIRE(st.is_ok());
  CHECK(st->stopped_services.empty());
  REQUIRE(ctl.restore().is_ok());
  CHECK(sc.calls() == Calls{"is-active nvfancontrol|120", "stop nvfancontrol|120", "is-active nvfancontrol|120"});
  CHECK(sc.active());
  CHECK_FALSE(exists_file(restore_state_path(fb.state_dir())));
}

TEST_CASE("systemctl that cannot reach systemd (a container): fan_max fails naming the command, nothing written") {
  FakeBoard fb(FakeKind::kOrinNanoR36);
  FakeSystemctl sc(true);
  sc.fail("is-active", 1, "System has not been booted with systemd as init system (PID 1). Can't operate.\n");
  auto before = fb.snapshot();
  PowerController ctl(fb.board(), fb.state_dir(), systemctl(sc));
  Status s = ctl.apply(*plan_pin_current(ctl.board(), ApplyOptions{true, true}));
  REQUIRE_FALSE(s.is_ok());
  CHECK_MESSAGE(contains(s.message(), "fan_max: cannot tell whether nvfancontrol runs"), s.message());
  CHECK_MESSAGE(contains(s.message(), "is-active nvfancontrol' exited with status 1: System has not been booted"), s.message());
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
  CHECK_FALSE(exists_file(restore_state_path(fb.state_dir())));

  PowerController missing(fb.board(), fb.state_dir(), std::make_shared<SystemctlServiceControl>("/nonexistent/jetsweep/systemctl"));
  Status m = missing.apply(fan_only());
  REQUIRE_FALSE(m.is_ok());
  CHECK(m.code() == Code::kUnavailable);
  CHECK_MESSAGE(contains(m.message(), "cannot run '/nonexistent/jetsweep/systemctl is-active nvfancontrol'"), m.message());
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
}

TEST_CASE("an agent that dies after the stop: the next restore starts nvfancontrol; a failing start keeps the state") {
  FakeBoard fb(FakeKind::kAgxOrinR36);
  const fs::path fan = pwm1(fb);
  FakeSystemctl sc(true, fan);
  auto before = fb.snapshot();
  {
    PowerController ctl(fb.board(), fb.state_dir(), systemctl(sc));
    REQUIRE(ctl.apply(PowerMode{4, 1420800, 612000000, 2133000000}, ApplyOptions{true, true}).is_ok());
  }  // the agent "dies" here: no restore
  CHECK_FALSE(sc.active());
  REQUIRE(contains(*read_raw(restore_state_path(fb.state_dir())), "\nservice\tnvfancontrol\n"));

  SystemctlServiceControl services(sc.path().string());
  sc.fail("start", 1, "Job for nvfancontrol.service failed because the control process exited with error code.\n");
  auto failed = restore_pending(fb.state_dir(), nullptr, &services);
  REQUIRE_FALSE(failed.is_ok());
  CHECK_MESSAGE(contains(failed.status().message(), "starting nvfancontrol again: '" + sc.path().string() +
                                                        " start nvfancontrol' exited with status 1: Job for"),
                failed.status().message());
  CHECK_MESSAGE(contains(failed.status().message(), "0 file(s) and 1 service(s)"), failed.status().message());
  CHECK(exists_file(restore_state_path(fb.state_dir())));
  CHECK(trim(*read_raw(fan)) == "120");  // the files went back all the same

  sc.heal("start");
  auto r = restore_pending(fb.state_dir(), nullptr, &services);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  CHECK(*r);
  CHECK(sc.active());
  CHECK(sc.calls().back() == "start nvfancontrol|120");
  CHECK_FALSE(exists_file(restore_state_path(fb.state_dir())));
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
}

TEST_CASE("restore state file: stopped services round-trip and are recorded once") {
  FakeBoard fb(FakeKind::kAgxOrinR35);
  const fs::path fan = pwm1(fb);
  REQUIRE(record_originals(fb.state_dir(), fb.root(), {{EntryRole::kOther, fan}}).is_ok());
  REQUIRE(record_stopped_service(fb.state_dir(), fb.root(), "nvfancontrol").is_ok());
  REQUIRE(record_stopped_service(fb.state_dir(), fb.root(), "nvfancontrol").is_ok());
  REQUIRE(record_originals(fb.state_dir(), fb.root(), {{EntryRole::kOther, fb.path("/proc/sys/vm/drop_caches")}}).is_ok());
  auto st = load_restore_state(fb.state_dir());
  REQUIRE(st.is_ok());
  CHECK(st->stopped_services == std::vector<std::string>{"nvfancontrol"});
  CHECK(st->entries.size() == 2);
  CHECK(record_stopped_service(fb.state_dir(), fb.state_dir(), "nvfancontrol").code() == Code::kInvalidArgument);
  REQUIRE(forget_stopped_service(fb.state_dir(), "nvfancontrol").is_ok());
  st = load_restore_state(fb.state_dir());
  REQUIRE(st.is_ok());
  CHECK(st->stopped_services.empty());
  CHECK(st->entries.size() == 2);
}

}  // namespace
}  // namespace jetsweep::device

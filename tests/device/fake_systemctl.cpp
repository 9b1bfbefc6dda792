// FakeSystemctl (tests/device/fake_board.hpp): a shell script standing in for systemctl.
#include <fstream>
#include <stdexcept>

#include "tests/device/fake_board.hpp"

namespace jetsweep::device::testing {

FakeSystemctl::FakeSystemctl(bool active, fs::path watch) {
  dir_ = make_temp_dir("systemctl");
  exe_ = dir_ / "systemctl";
  const std::string d = dir_.string(), w = watch.string();
  if (d.find('\'') != std::string::npos || w.find('\'') != std::string::npos)
    throw std::runtime_error("FakeSystemctl: quote in path");
  {
    std::ofstream f(dir_ / "state");
    f << (active ? "active\n" : "inactive\n");
  }
  {
    std::ofstream f(exe_);
    f << "#!/bin/sh\n"
      << "d='" << d << "'\n"
      << "w='" << w << "'\n"
      << "seen=-\n"
      << "if [ -n \"$w\" ] && [ -f \"$w\" ]; then seen=$(tr -d '\\n' < \"$w\"); fi\n"
      << "printf '%s|%s\\n' \"$*\" \"$seen\" >> \"$d/calls.log\"\n"
      << "if [ -f \"$d/fail-$1\" ]; then cat \"$d/fail-$1.stderr\" >&2; exit \"$(cat \"$d/fail-$1\")\"; fi\n"
      << "case \"$1\" in\n"
      << "  is-active) if [ \"$(cat \"$d/state\")\" = active ]; then echo active; exit 0; fi; echo inactive; exit 3 ;;\n"
      << "  stop) echo inactive > \"$d/state\"; exit 0 ;;\n"
      << "  start) echo active > \"$d/state\"; exit 0 ;;\n"
      << "esac\n"
      << "echo \"Unknown command verb $1.\" >&2\n"
      << "exit 1\n";
    if (!f) throw std::runtime_error("FakeSystemctl: cannot write " + exe_.string());
  }
  fs::permissions(exe_, fs::perms::owner_all);
}

FakeSystemctl::~FakeSystemctl() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

bool FakeSystemctl::active() const {
  std::ifstream f(dir_ / "state");
  std::string s;
  std::getline(f, s);
  return s == "active";
}

void FakeSystemctl::fail(const std::string& verb, int exit_code, const std::string& stderr_text) {
  std::ofstream(dir_ / ("fail-" + verb + ".stderr")) << stderr_text;
  std::ofstream(dir_ / ("fail-" + verb)) << exit_code << "\n";
}

void FakeSystemctl::heal(const std::string& verb) {
  fs::remove(dir_ / ("fail-" + verb));
  fs::remove(dir_ / ("fail-" + verb + ".stderr"));
}

std::vector<std::string> FakeSystemctl::calls() const {
  std::vector<std::string> out;
  std::ifstream f(dir_ / "calls.log");
  for (std::string line; std::getline(f, line);) out.push_back(line);
  return out;
}

}  // namespace jetsweep::device::testing

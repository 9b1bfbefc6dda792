// A PostgreSQL tablespace on a tmpfs of its own, which a test can fill to the last byte: the server out of disk where
// the tables are (their inserts fail with disk_full, 53100) while its WAL, elsewhere, carries on. Needs the right to
// mount (root: CI and scripts/test run as root); without it made() is false and refused() says why. Made before the databases that use it and dropped after them: declare it first.
// Single-threaded use.
#pragma once

#include <doctest/doctest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.hpp"
#include "support/test_database.hpp"

namespace jetsweep::testing {

// Writes `path` until its file system is full to the last byte (ENOSPC; the last partial block too).
inline void fill_until_enospc(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  for (const size_t size : {size_t{1} << 20, size_t{4096}, size_t{1}}) {
    const std::string block(size, 'x');
    while (out.write(block.data(), static_cast<std::streamsize>(size)) && out.flush()) {
    }
    out.clear();
  }
}

class SmallTablespace {
 public:
  // `size`: tmpfs's size= option ("4m", "1g").
  explicit SmallTablespace(const std::string& size) : name_("jetsweep_small_" + std::to_string(::getpid())) {
    const std::string data_dir = TestDatabase::admin_text("SHOW data_directory");
    struct stat st {};
    if (::stat(data_dir.c_str(), &st) != 0) {   // a server on another machine: nothing to mount for it here
      refused_ = "stat " + data_dir + ": " + std::strerror(errno);
      return;
    }
    // The server's user owns the file system's root: PostgreSQL takes only a directory it owns.
    const std::string options = "size=" + size + ",mode=0700,uid=" + std::to_string(st.st_uid) + ",gid=" +
                                std::to_string(st.st_gid);
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, options.c_str()) != 0) {
      refused_ = "mount tmpfs on " + dir_.path().string() + ": " + std::strerror(errno);
      return;
    }
    mounted_ = true;
    try {
      // A tablespace of this name left by a killed run of this pid's test would be in the way.
      TestDatabase::admin_exec("DROP TABLESPACE IF EXISTS " + name_);
      TestDatabase::admin_exec("CREATE TABLESPACE " + name_ + " LOCATION '" + dir_.path().string() + "'");
    } catch (const std::exception& e) {
      refused_ = std::string("CREATE TABLESPACE: ") + e.what();
      ::umount2(dir_.path().c_str(), MNT_DETACH);
      mounted_ = false;
    }
  }
  ~SmallTablespace() {
    try {
      TestDatabase::admin_exec("DROP TABLESPACE IF EXISTS " + name_);
    } catch (const std::exception&) {
    }
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  SmallTablespace(const SmallTablespace&) = delete;
  SmallTablespace& operator=(const SmallTablespace&) = delete;

  // Whether it was made; if not (no right to mount), why, and name() is no tablespace.
  bool made() const { return mounted_; }
  const std::string& refused() const { return refused_; }
  const std::string& name() const { return name_; }
  // Fills the file system to the last byte; returns the filler's path (remove it to give the room back).
  std::string fill() const {
    const std::string path = (dir_.path() / "filler").string();
    fill_until_enospc(path);
    return path;
  }

 private:
  std::string name_;
  TempDir dir_;
  bool mounted_ = false;
  std::string refused_;
};

}  // namespace jetsweep::testing

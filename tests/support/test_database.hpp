// A fresh PostgreSQL database per test, made from the admin DSN in JETSWEEP_TEST_DSN (set by scripts/test)
// and dropped afterwards; apply_migrations() gives it the real schema (every sql/NNN_*.sql in numeric
// order, as PgStore::migrate). Shared by the integration, fault and analysis database tests. Single-threaded use.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace jetsweep::testing {

inline std::string admin_dsn() {
  const char* dsn = std::getenv("JETSWEEP_TEST_DSN");
  // Not a skip: these tests must run; scripts/test starts PostgreSQL and sets this.
  REQUIRE_MESSAGE(dsn != nullptr, "JETSWEEP_TEST_DSN is not set: run the tests through scripts/test");
  return dsn;
}

// Owns one database named after the process and a counter; dropped (WITH FORCE) on destruction.
class TestDatabase {
 public:
  // In `tablespace` when given (support/small_tablespace.hpp), else the server's default.
  explicit TestDatabase(const std::string& tablespace = "") {
    static std::atomic<int> counter{0};
    name_ = "jetsweep_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    admin_ = admin_dsn();
    {
      pqxx::connection c(admin_);
      pqxx::nontransaction n(c);
      n.exec("DROP DATABASE IF EXISTS " + name_);
      n.exec("CREATE DATABASE " + name_ + (tablespace.empty() ? "" : " TABLESPACE " + tablespace));
    }
    const auto pos = admin_.find("dbname=");
    REQUIRE(pos != std::string::npos);
    const auto end = admin_.find(' ', pos);
    dsn_ = admin_.substr(0, pos) + "dbname=" + name_ + (end == std::string::npos ? "" : admin_.substr(end));
  }
  ~TestDatabase() {
    try {
      pqxx::connection c(admin_);
      pqxx::nontransaction n(c);
      n.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (const std::exception&) {
    }
  }
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& dsn() const { return dsn_; }
  // On the admin database, outside any test's (the server's settings, tablespaces; no transaction block).
  static std::string admin_text(const std::string& sql) {
    pqxx::connection c(admin_dsn());
    pqxx::nontransaction n(c);
    return n.exec1(sql)[0].c_str();
  }
  static void admin_exec(const std::string& sql) {
    pqxx::connection c(admin_dsn());
    pqxx::nontransaction n(c);
    n.exec(sql);
  }
  int64_t count(const std::string& sql) const {
    pqxx::connection c(dsn_);
    pqxx::work w(c);
    return w.exec1(sql)[0].as<int64_t>();
  }
  // The first column of the one row `sql` returns, as text ("" for NULL).
  std::string text(const std::string& sql) const {
    pqxx::connection c(dsn_);
    pqxx::work w(c);
    return w.exec1(sql)[0].c_str();
  }
  // Runs SQL (any statements) in a transaction of its own.
  void exec(const std::string& sql) const {
    pqxx::connection c(dsn_);
    pqxx::work w(c);
    w.exec(sql);
    w.commit();
  }

  // Every migration sql_dir/NNN_name.sql up to `up_to` (all by default, then sql_dir/views.sql), in numeric order,
  // in one transaction (as PgStore::migrate, without its schema_migrations rows); returns how many were applied.
  size_t apply_migrations(const std::string& sql_dir, int up_to = 999) const {
    std::vector<std::pair<int, std::string>> files;
    for (const auto& entry : std::filesystem::directory_iterator(sql_dir)) {
      const std::string name = entry.path().filename().string();
      if (name.size() < 5 || entry.path().extension() != ".sql" || name[3] != '_' ||
          !std::all_of(name.begin(), name.begin() + 3, [](char ch) { return ch >= '0' && ch <= '9'; }))
        continue;
      if (std::stoi(name.substr(0, 3)) <= up_to) files.emplace_back(std::stoi(name.substr(0, 3)), entry.path().string());
    }
    std::sort(files.begin(), files.end());
    REQUIRE(!files.empty());
    REQUIRE(files.front().first == 1);
    pqxx::connection c(dsn_);
    pqxx::work w(c);
    w.exec("SET client_min_messages TO WARNING");
    for (const auto& [version, path] : files) {
      std::ifstream f(path);
      REQUIRE_MESSAGE(f.good(), "cannot read " << path);
      std::stringstream sql;
      sql << f.rdbuf();
      w.exec(sql.str());
    }
    // The analysis views (sql/views.sql) after the whole schema, as PgStore::migrate applies them.
    if (up_to >= 999) {
      std::ifstream views(sql_dir + "/views.sql");
      REQUIRE_MESSAGE(views.good(), "cannot read " << sql_dir << "/views.sql");
      std::stringstream sql;
      sql << views.rdbuf();
      w.exec(sql.str());
    }
    w.commit();
    return files.size();
  }

 private:
  std::string admin_, name_, dsn_;
};

}  // namespace jetsweep::testing

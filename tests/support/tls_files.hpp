// Test PKI made with the `openssl` command in a temp dir: a CA, a server certificate it signs for localhost and
// 127.0.0.1, and a second, unrelated CA (the "wrong" one). Plus secret files (mode 600). Single-threaded use.
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <string>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace jetsweep::testing {

struct TlsFiles {
  TempDir dir;
  std::string ca, cert, key, wrong_ca;

  TlsFiles() {
    ca = (dir / "ca.pem").string();
    cert = (dir / "server.pem").string();
    key = (dir / "server.key").string();
    wrong_ca = (dir / "wrong-ca.pem").string();
    openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
             "-subj", "/CN=jetsweep test CA", "-keyout", (dir / "ca.key").string(), "-out", ca});
    openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
             "-subj", "/CN=jetsweep wrong CA", "-keyout", (dir / "wrong-ca.key").string(), "-out", wrong_ca});
    openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost",
             "-keyout", key, "-out", (dir / "server.csr").string()});
    write_file(dir / "ext.cnf", "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n");
    openssl({"x509", "-req", "-in", (dir / "server.csr").string(), "-CA", ca, "-CAkey", (dir / "ca.key").string(),
             "-CAcreateserial", "-days", "2", "-extfile", (dir / "ext.cnf").string(), "-out", cert});
  }
  // A file holding `secret` and a newline, readable by its owner only.
  std::string secret_file(const std::string& name, const std::string& secret) const {
    const auto path = dir / name;
    write_file(path, secret + "\n");
    ::chmod(path.c_str(), 0600);
    return path.string();
  }

 private:
  static void openssl(const std::vector<std::string>& args) {
    std::string out, err;
    REQUIRE_MESSAGE(run_command("/usr/bin/openssl", args, &out, &err) == 0, "openssl " << args[0] << ": " << err);
  }
};

}  // namespace jetsweep::testing

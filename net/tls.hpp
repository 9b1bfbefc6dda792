// TLS contexts for the controller (server: certificate chain + key) and its clients (agent, CLI: the CA that
// signed the controller's certificate, else the system's default verify paths), made from files with errors
// naming the file. Pure functions; any thread. The contexts they return are shared by the connections of one
// io_context (Boost.Asio's ssl::context is safe to share once configured).
#pragma once

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <memory>
#include <string>

#include "common/status.hpp"

namespace jetsweep::net {

using TlsContext = boost::asio::ssl::context;

// The controller's context: PEM certificate chain (leaf first) and its PEM private key. Errors: a missing or
// unreadable file, a file that is not PEM of the right kind, a key that does not belong to the certificate.
Result<std::shared_ptr<TlsContext>> make_server_tls_context(const std::string& cert_file, const std::string& key_file);

// A client's context that verifies the peer: against the PEM CA bundle `ca_file`, or, when it is empty, the
// system's default verify paths. Host name checking is per connection (verify_controller_host).
Result<std::shared_ptr<TlsContext>> make_client_tls_context(const std::string& ca_file);

// What a client should say about a failed TLS handshake: the OpenSSL reason and, for a verification failure,
// where the trust came from ("CA file X" or "the system's default CA paths").
std::string describe_tls_failure(const boost::system::error_code& ec, const std::string& ca_file);

// Whether a peer address is loopback (127.0.0.0/8, ::1, or an IPv4-mapped loopback).
bool is_loopback(const boost::asio::ip::address& address);

// Whether `host` (a name or an IP literal) is loopback: "localhost", 127.x.x.x, ::1.
bool is_loopback_host(const std::string& host);

}  // namespace jetsweep::net

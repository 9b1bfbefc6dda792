#include "net/tls.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl/error.hpp>
#include <cstdio>
#include <fstream>

namespace jetsweep::net {
namespace ssl = boost::asio::ssl;

namespace {

// A readable regular file, or an error naming `what` and the path.
Status check_readable(const std::string& what, const std::string& path) {
  if (path.empty()) return invalid_argument(what + ": no file given");
  std::ifstream in(path);
  if (!in) return io_error(what + " " + path + ": cannot be read (missing or not readable)");
  return Status::ok();
}

// The newest OpenSSL error as text (drains the queue), or `fallback`.
std::string openssl_reason(const std::string& fallback) {
  unsigned long last = 0;
  for (unsigned long e; (e = ERR_get_error()) != 0;) last = e;
  if (last == 0) return fallback;
  char buf[256];
  ERR_error_string_n(last, buf, sizeof buf);
  return buf;
}

}  // namespace

Result<std::shared_ptr<TlsContext>> make_server_tls_context(const std::string& cert_file, const std::string& key_file) {
  JS_RETURN_IF_ERROR(check_readable("--tls-cert", cert_file));
  JS_RETURN_IF_ERROR(check_readable("--tls-key", key_file));
  auto ctx = std::make_shared<TlsContext>(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                   ec);
  ERR_clear_error();
  if (ctx->use_certificate_chain_file(cert_file, ec); ec)
    return invalid_argument("--tls-cert " + cert_file + ": not a PEM certificate chain (" +
                            openssl_reason(ec.message()) + ")");
  if (ctx->use_private_key_file(key_file, ssl::context::pem, ec); ec) {
    const std::string reason = openssl_reason(ec.message());
    if (reason.find("values mismatch") != std::string::npos)
      return invalid_argument("--tls-key " + key_file + " does not match the certificate in --tls-cert " + cert_file +
                              " (" + reason + ")");
    return invalid_argument("--tls-key " + key_file + ": not a PEM private key (" + reason + ")");
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    return invalid_argument("--tls-key " + key_file + " does not match the certificate in --tls-cert " + cert_file +
                            " (" + openssl_reason("key values mismatch") + ")");
  return ctx;
}

Result<std::shared_ptr<TlsContext>> make_client_tls_context(const std::string& ca_file) {
  auto ctx = std::make_shared<TlsContext>(ssl::context::tls_client);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  ERR_clear_error();
  if (ca_file.empty()) {
    if (ctx->set_default_verify_paths(ec); ec)
      return io_error("the system's default CA paths cannot be loaded (" + openssl_reason(ec.message()) +
                      "); pass --ca FILE");
  } else {
    JS_RETURN_IF_ERROR(check_readable("--ca", ca_file));
    if (ctx->load_verify_file(ca_file, ec); ec)
      return invalid_argument("--ca " + ca_file + ": not a PEM CA certificate (" + openssl_reason(ec.message()) + ")");
  }
  ctx->set_verify_mode(ssl::verify_peer, ec);
  return ctx;
}

std::string describe_tls_failure(const boost::system::error_code& ec, const std::string& ca_file) {
  std::string text = ec.message();
  if (ec.category() == boost::asio::error::get_ssl_category()) {
    char buf[256];
    ERR_error_string_n(static_cast<unsigned long>(ec.value()), buf, sizeof buf);
    text = buf;
  }
  if (ec == boost::asio::ssl::error::stream_truncated) text = "the peer closed the connection during the handshake";
  const bool verification = text.find("certificate verify failed") != std::string::npos ||
                            text.find("certificate") != std::string::npos;
  if (verification)
    text += ca_file.empty() ? " (trust: the system's default CA paths; pass --ca FILE with the controller's CA)"
                            : " (trust: CA file " + ca_file + ")";
  return text;
}

bool is_loopback(const boost::asio::ip::address& address) {
  if (address.is_loopback()) return true;
  if (address.is_v6() && address.to_v6().is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6()).is_loopback();
  return false;
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  std::string h = host;
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(h, ec);
  return !ec && is_loopback(address);
}

}  // namespace jetsweep::net

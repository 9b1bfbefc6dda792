#include "support/protocol_client.hpp"

namespace jetsweep::testing {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

proto::Register test_register(const std::string& name, const std::string& device_class) {
  proto::Register reg;
  reg.name = name;
  reg.facts.hostname = name + ".test";
  reg.facts.cpus = 8;
  reg.facts.mem_bytes = int64_t{64} << 30;
  reg.facts.backend = "sim";
  reg.facts.device_class = device_class;
  reg.facts.accelerator = "simulated";
  return reg;
}

std::shared_ptr<ProtocolClient> ProtocolClient::create(asio::io_context& ioc) {
  return std::shared_ptr<ProtocolClient>(new ProtocolClient(ioc));
}

ProtocolClient::ProtocolClient(asio::io_context& ioc) : ws_(ioc) {}

void ProtocolClient::connect(uint16_t port, const std::string& secret, const std::string& credential) {
  auto self = shared_from_this();
  const asio::ip::tcp::endpoint endpoint(asio::ip::address_v4::loopback(), port);
  beast::get_lowest_layer(ws_).async_connect(endpoint, [self, secret, credential, port](beast::error_code ec) {
    if (ec) {
      self->closed_ = true;
      return;
    }
    self->ws_.set_option(websocket::stream_base::decorator([secret, credential](websocket::request_type& r) {
      if (!secret.empty()) r.set(beast::http::field::authorization, "Bearer " + secret);
      if (!credential.empty()) r.set(proto::kCredentialHeader, credential);
    }));
    self->ws_.async_handshake("127.0.0.1:" + std::to_string(port), "/agent", [self](beast::error_code ec2) {
      if (ec2) {
        self->closed_ = true;
        return;
      }
      self->connected_ = true;
      self->read_next();
      if (!self->queue_.empty()) self->write_next();
    });
  });
}

uint64_t ProtocolClient::send(proto::Body body) {
  const uint64_t id = proto::needs_ack(body) ? next_id_++ : 0;
  queue_.push_back(proto::encode(proto::Envelope{id, std::move(body)}));
  if (connected_ && queue_.size() == 1) write_next();
  return id;
}

void ProtocolClient::send_raw(std::string frame) {
  queue_.push_back(std::move(frame));
  if (connected_ && queue_.size() == 1) write_next();
}

void ProtocolClient::write_next() {
  if (closed_ || queue_.empty()) return;
  auto self = shared_from_this();
  ws_.text(true);
  ws_.async_write(asio::buffer(queue_.front()), [self](beast::error_code ec, std::size_t) {
    if (ec) {
      self->closed_ = true;
      return;
    }
    self->queue_.pop_front();
    self->write_next();
  });
}

void ProtocolClient::read_next() {
  auto self = shared_from_this();
  ws_.async_read(buffer_, [self](beast::error_code ec, std::size_t) {
    if (ec) {
      self->closed_ = true;
      return;
    }
    auto env = proto::decode(beast::buffers_to_string(self->buffer_.data()));
    self->buffer_.consume(self->buffer_.size());
    if (env) self->received_.push_back(std::move(env).value());
    self->read_next();
  });
}

void ProtocolClient::close() {
  closed_ = true;
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  beast::get_lowest_layer(ws_).socket().close(ignored);
}

bool ProtocolClient::acked(uint64_t id) const {
  for (const auto& env : received_)
    if (const auto* a = std::get_if<proto::Ack>(&env.body); a && a->up_to >= id) return true;
  return false;
}

}  // namespace jetsweep::testing

#include "common/protocol.hpp"

#include <boost/beast/core/detail/base64.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <limits>

#include "common/described_json.hpp"
#include "common/json_direct.hpp"
#include "common/json_fields.hpp"
#include "common/json_parse.hpp"
#include "common/text.hpp"

namespace jetsweep::proto {
namespace bj = boost::json;
namespace beast = boost::beast;
using json::FieldReader;

bool EpochResult::operator==(const EpochResult& o) const { return json::described_equal(*this, o); }

namespace {

template <class T>
struct Tag;
#define JS_PROTO_TAG(T, name) template <> struct Tag<T> { static constexpr const char* kName = name; };
JS_PROTO_TAG(Register, "register")
JS_PROTO_TAG(Registered, "registered")
JS_PROTO_TAG(Heartbeat, "heartbeat")
JS_PROTO_TAG(AssignRun, "assign_run")
JS_PROTO_TAG(MinibatchChunk, "minibatches")
JS_PROTO_TAG(EpochResult, "epoch_result")
JS_PROTO_TAG(SampleChunk, "samples")
JS_PROTO_TAG(RunFinished, "run_finished")
JS_PROTO_TAG(Ack, "ack")
JS_PROTO_TAG(Error, "error")
JS_PROTO_TAG(TimeSync, "time_sync")
JS_PROTO_TAG(TimeSyncReply, "time_sync_reply")
JS_PROTO_TAG(CancelRun, "cancel_run")
JS_PROTO_TAG(RunStarted, "run_started")
JS_PROTO_TAG(RebootPending, "reboot_pending")
JS_PROTO_TAG(FetchModel, "fetch_model")
JS_PROTO_TAG(ModelChunk, "model_chunk")
#undef JS_PROTO_TAG

// ---- decoders ----
constexpr double kUnbounded = std::numeric_limits<double>::infinity();

std::string range_text(double lo, double hi) {
  char buf[96];
  if (hi == kUnbounded) std::snprintf(buf, sizeof buf, "must be >= %.10g", lo);
  else std::snprintf(buf, sizeof buf, "must be between %.10g and %.10g", lo, hi);
  return buf;
}

// Physical bounds: a value outside [lo, hi] (NaN too) is refused, naming the field (and the element).
void within(FieldReader& r, const char* field, double v, double lo, double hi) {
  if (r.ok() && !(v >= lo && v <= hi)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    r.fail(field, std::string(buf) + " is out of bounds: " + range_text(lo, hi));
  }
}
void within(FieldReader& r, const char* field, const std::optional<double>& v, double lo, double hi) {
  if (v) within(r, field, *v, lo, hi);
}
void within(FieldReader& r, const char* field, const std::vector<double>& v, double lo, double hi) {
  for (size_t i = 0; r.ok() && i < v.size(); ++i) {
    if (v[i] >= lo && v[i] <= hi) continue;
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", v[i]);
    r.fail(field, "element " + std::to_string(i) + " (" + buf + ") is out of bounds: " + range_text(lo, hi));
  }
}

}  // namespace

bj::value to_json(const Base64Bytes& b) {
  bj::string text;
  text.resize(beast::detail::base64::encoded_size(b.bytes.size()));
  text.resize(beast::detail::base64::encode(text.data(), b.bytes.data(), b.bytes.size()));
  return text;
}

Status from_json(const bj::value& v, const std::string& where, Base64Bytes& out) {
  out.bytes.clear();
  if (v.is_null()) return Status::ok();
  if (!v.is_string()) return protocol_error(where + ": expected a string, got " + json::kind_name(v));
  const bj::string& b64 = v.get_string();
  // Beast's decoder writes a whole group for a partial one: only text of whole 4-character groups is decoded. It stops
  // at the '=' padding, at most two of which may end the text.
  if (b64.size() % 4 != 0) return protocol_error(where + ": is not base64");
  out.bytes.resize(beast::detail::base64::decoded_size(b64.size()));
  const auto [written, read] = beast::detail::base64::decode(out.bytes.data(), b64.data(), b64.size());
  const std::string_view rest(b64.data() + read, b64.size() - read);
  if (rest.size() > 2 || rest.find_first_not_of('=') != std::string_view::npos) {
    out.bytes.clear();
    return protocol_error(where + ": is not base64");
  }
  out.bytes.resize(written);
  return Status::ok();
}

// ---- the messages' bounds: one validate step per record, run once its fields are read (described_json.hpp) ----
namespace {
void check_credential(FieldReader& r, const std::optional<std::string>& credential) {
  if (r.ok() && credential && !is_credential_text(*credential))
    r.fail("credential", "is not a credential the controller issues (" + std::to_string(kCredentialChars) +
                             " hexadecimal digits)");
}
}  // namespace

void validate(FieldReader& r, const Register& m) {
  if (r.ok()) {
    if (auto bad = agent_name_problem(m.name)) r.fail("name", *bad);
  }
  check_credential(r, m.credential);
}
void validate(FieldReader& r, const Registered& m) {
  if (r.ok() && m.heartbeat_interval_ms <= 0) r.fail("heartbeat_interval_ms", "must be positive");
  check_credential(r, m.credential);
}
void validate(FieldReader& r, const Heartbeat& m) {
  for (auto [field, v] :
       {std::pair{"backlog_messages", &m.backlog_messages}, std::pair{"backlog_bytes", &m.backlog_bytes}})
    if (r.ok() && *v && **v < 0) r.fail(field, "must not be negative");
}
void validate(FieldReader& r, const ModelChunk& m) {
  if (r.ok() && (m.index < 0 || m.chunks < 0 || m.bytes < 0)) r.fail("index", "index, chunks and bytes must be >= 0");
}
void validate(FieldReader& r, const FetchModel& m) {
  if (r.ok() && m.index < 0) r.fail("index", "must be >= 0");
}
void validate(FieldReader& r, const MinibatchChunk& m) {
  if (r.ok() && m.stall_s.size() != m.compute_s.size())
    r.fail("compute_s", "has " + std::to_string(m.compute_s.size()) + " values but stall_s has " +
                            std::to_string(m.stall_s.size()));
  if (r.ok() && !m.copy_s.empty() && m.copy_s.size() != m.stall_s.size())
    r.fail("copy_s", "has " + std::to_string(m.copy_s.size()) + " values but stall_s has " +
                         std::to_string(m.stall_s.size()));
  if (r.ok() && m.stall_s.size() > kMaxMinibatchesPerChunk)
    r.fail("stall_s", "more than " + std::to_string(kMaxMinibatchesPerChunk) + " minibatches in one chunk");
  if (r.ok() && (m.epoch < 0 || m.first_index < 0)) r.fail(m.epoch < 0 ? "epoch" : "first_index", "must be >= 0");
  within(r, "stall_s", m.stall_s, 0, kMaxMinibatchSeconds);
  within(r, "compute_s", m.compute_s, 0, kMaxMinibatchSeconds);
  within(r, "copy_s", m.copy_s, 0, kMaxMinibatchSeconds);
}
void validate(FieldReader& r, const EpochResult& m) {
  if (r.ok() && m.epoch < 0) r.fail("epoch", "must be >= 0");
  if (r.ok() && m.minibatches < 0) r.fail("minibatches", "must be >= 0");
  const std::pair<const char*, std::optional<double>> durations[] = {
      {"e2e_s", m.e2e_s}, {"stall_s", m.stall_s}, {"compute_s", m.compute_s}, {"copy_s", m.copy_s}};
  for (const auto& [key, value] : durations) within(r, key, value, 0, kMaxEpochSeconds);
  for (const auto& bound : kEpochMeasureBounds)
    within(r, json::described_name(bound.measure), m.*bound.measure, bound.lo, bound.hi);
  if (r.ok() && m.t_start_s && m.t_end_s && *m.t_end_s < *m.t_start_s) r.fail("t_end_s", "must not precede t_start_s");
}
void validate(FieldReader& r, const Sample& s) {
  within(r, "t_s", s.t_s, 0, kMaxRunSeconds);
  within(r, "temp_max_c", s.temp_max_c, -60, 200);   // absent (older agents): unknown
  within(r, "power_w", s.power_w, 0, kMaxPowerWatts);
}
void validate(FieldReader& r, const SampleChunk& m) {
  within(r, "t0_unix_s", m.t0_unix_s, 0, kMaxUnixSeconds);
  if (r.ok() && m.samples.size() > kMaxSamplesPerChunk)
    r.fail("samples", "more than " + std::to_string(kMaxSamplesPerChunk) + " samples in one chunk");
}
void validate(FieldReader& r, const BoardState& b) {
  if (r.ok() && (b.cores_online < 0 || b.cpu_khz < 0 || b.gpu_hz < 0 || b.emc_hz < 0))
    r.fail("cores_online", "cores and frequencies must be >= 0");
  if (r.ok() && ((b.tpc_pg_mask && *b.tpc_pg_mask < 0) || (b.fbp_pg_mask && *b.fbp_pg_mask < 0)))
    r.fail(b.tpc_pg_mask && *b.tpc_pg_mask < 0 ? "tpc_pg_mask" : "fbp_pg_mask", "GPU masks must be >= 0");
}
void validate(FieldReader& r, const WorkloadFacts& m) { check_workload_facts(m, r); }
// A boot clock reading needs the boot it counts from; a boot_id has the form of the kernel's.
static void check_boot_stamps(FieldReader& r, const std::string& boot_id,
                              std::initializer_list<std::pair<const char*, const std::optional<double>*>> stamps) {
  if (r.ok() && !boot_id.empty() && !is_boot_id(boot_id))
    r.fail("boot_id", "must be 1.." + std::to_string(kMaxBootIdChars) + " characters of [0-9a-f-]");
  for (const auto& [key, stamp] : stamps) {
    within(r, key, *stamp, 0, kMaxBootSeconds);
    if (r.ok() && *stamp && boot_id.empty()) r.fail(key, "needs boot_id (the boot its clock counts from)");
  }
}
void validate(FieldReader& r, const RunStarted& m) {
  within(r, "t0_unix_s", m.t0_unix_s, 0, kMaxUnixSeconds);
  check_boot_stamps(r, m.boot_id, {{"t0_boot_s", &m.t0_boot_s}});
}
void validate(FieldReader& r, const RunFinished& m) {
  within(r, "wall_s", m.wall_s, 0, kMaxRunSeconds);
  if (r.ok() && m.status != "done" && m.status != "failed" && m.status != "cancelled")
    r.fail("status", "must be 'done', 'failed' or 'cancelled'");
}
void validate(FieldReader& r, const RebootPending& m) {
  const std::pair<const char*, const std::optional<int64_t>*> masks[] = {{"tpc_pg_mask_from", &m.tpc_pg_mask_from},
      {"tpc_pg_mask_to", &m.tpc_pg_mask_to}, {"fbp_pg_mask_from", &m.fbp_pg_mask_from}, {"fbp_pg_mask_to", &m.fbp_pg_mask_to}};
  for (const auto& [key, slot] : masks)
    if (r.ok() && *slot && **slot < 0) r.fail(key, "GPU masks must be >= 0");
  within(r, "expected_back_s", m.expected_back_s, 1, 86400);
  within(r, "requested_unix_s", m.requested_unix_s, 0, kMaxUnixSeconds);
}
void validate(FieldReader& r, const TimeSync& m) { within(r, "t0", m.t0, 0, kMaxUnixSeconds); }
void validate(FieldReader& r, const TimeSyncReply& m) {
  within(r, "t0", m.t0, 0, kMaxUnixSeconds);
  within(r, "t1", m.t1, 0, kMaxUnixSeconds);
  within(r, "t2", m.t2, 0, kMaxUnixSeconds);
  check_boot_stamps(r, m.boot_id, {{"t1_boot", &m.t1_boot}, {"t2_boot", &m.t2_boot}});
  if (r.ok() && m.t1_boot.has_value() != m.t2_boot.has_value()) r.fail("t2_boot", "t1_boot and t2_boot come together");
}

namespace {

// A described message: its members (and its described bases') read by its wire rules, then its validate.
template <class T>
Status read_message(FieldReader& r, T& m) {
  json::read_described(r, m);   // its described bases too
  if constexpr (json::described_detail::HasValidate<T>::value) validate(r, static_cast<const T&>(m));
  return r.status();
}

template <class T>
Result<Body> decode_as(const bj::object& o, const std::string& type) {
  T m;
  FieldReader r(o, "message '" + type + "'");
  static_assert(boost::describe::has_describe_members<T>::value, "every message is described");
  if (Status s = read_message(r, m); !s.is_ok()) return s;
  return Body(std::move(m));
}

// Calls f(static_cast<T*>(nullptr)) for the message type T named `type`; false where no message type has that name.
template <size_t I = 0, class F>
bool with_type_named(std::string_view type, F&& f) {
  if constexpr (I == std::variant_size_v<Body>) {
    return false;
  } else {
    using T = std::variant_alternative_t<I, Body>;
    if (type != Tag<T>::kName) return with_type_named<I + 1>(type, f);
    f(static_cast<T*>(nullptr));
    return true;
  }
}

using Decoder = Result<Body> (*)(const bj::object&, const std::string&);
Decoder decoder_for(std::string_view type) {
  Decoder d = nullptr;
  with_type_named(type, [&](auto* m) { d = &decode_as<std::remove_pointer_t<decltype(m)>>; });
  return d;
}

// The envelope's keys, read beside a message's members by the direct reader.
struct EnvelopeHead {
  std::string type;
  int64_t version = 0;
  int64_t id = 0;
};
BOOST_DESCRIBE_STRUCT(EnvelopeHead, (), (type, version, id))
JS_WIRE_RULES(EnvelopeHead, (&EnvelopeHead::type, &EnvelopeHead::version, &EnvelopeHead::id), ())

// `frame` read as a message T by json::read_direct, or nothing where that reader refuses it or its envelope is not
// one decode() accepts as it is (the tree path then decodes it, or names what is wrong).
template <class T>
std::optional<Envelope> read_direct_as(std::string_view frame) {
  T m;
  EnvelopeHead head;
  if (!json::read_direct(frame, {{json::direct::record_table<T>(), &m},
                                 {json::direct::record_table<EnvelopeHead>(), &head}}))
    return std::nullopt;
  if (head.type != Tag<T>::kName || head.version != kVersion || head.id < 0) return std::nullopt;
  return Envelope{static_cast<uint64_t>(head.id), Body(std::move(m))};
}

using DirectReader = std::optional<Envelope> (*)(std::string_view);

// The direct reader of the message type named `type`, for a type it can read whole.
DirectReader direct_reader_for(std::string_view type) {
  DirectReader d = nullptr;
  with_type_named(type, [&](auto* m) {
    using T = std::remove_pointer_t<decltype(m)>;
    if constexpr (json::direct::kDirectReadable<T>) d = &read_direct_as<T>;
  });
  return d;
}

// The type a frame names when it begins as encode() writes it (`{"type":"NAME",`); empty otherwise.
std::string_view leading_type(std::string_view frame) {
  constexpr std::string_view kOpening = "{\"type\":\"";
  if (frame.substr(0, kOpening.size()) != kOpening) return {};
  const std::string_view rest = frame.substr(kOpening.size());
  const size_t end = rest.find_first_of("\"\\");
  return end == std::string_view::npos || rest[end] != '"' ? std::string_view() : rest.substr(0, end);
}

}  // namespace

std::string_view type_name(const Body& body) {
  return std::visit([](const auto& m) -> std::string_view { return Tag<std::decay_t<decltype(m)>>::kName; }, body);
}

namespace {

constexpr bool same_text(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}
// encode() writes the envelope's keys, then the message's members as text: a member under one of those keys would
// be written twice (a tree kept one). Checked for every message and its described bases while compiling.
template <class T>
constexpr bool clashes_with_envelope() {
  bool clash = false;
  boost::mp11::mp_for_each<
      boost::describe::describe_members<T, boost::describe::mod_public | boost::describe::mod_inherited>>(
      [&](auto m) {
        for (const char* key : {"type", "version", "id"}) clash = clash || same_text(m.name, key);
      });
  return clash;
}
template <class... Ts>
constexpr bool any_clashes(const std::variant<Ts...>*) {
  return (false || ... || clashes_with_envelope<Ts>());
}
static_assert(!any_clashes(static_cast<const Body*>(nullptr)),
              "a message member is named like an envelope key (type, version, id)");

}  // namespace

std::string encode(const Envelope& envelope) {
  // Written as text straight from the message's description (json::append_described: what serialising its tree
  // wrote, byte for byte, at a fraction of the cost: bench_json_decode), a number that is not finite as null (a
  // required field left null is then refused by the decoder, naming it).
  std::string frame = "{\"type\":";
  json::append_string(frame, type_name(envelope.body));
  frame += ",\"version\":";
  json::append_number(frame, int64_t{kVersion});
  frame += ",\"id\":";
  json::append_number(frame, envelope.id);
  bool first = false;
  std::visit([&](const auto& m) { json::append_described(frame, m, first); }, envelope.body);
  frame += '}';
  // Strings are written with their bytes as they are: text that is not UTF-8 (an error naming a Latin-1 file name)
  // would make a frame no parser accepts, resent forever by the agent. Such bytes travel as U+FFFD.
  if (invalid_utf8_at(frame)) frame = utf8_repaired(frame);
  return frame;
}

namespace {
Status oversized(std::string_view frame) {
  return protocol_error("frame of " + std::to_string(frame.size()) + " bytes exceeds the limit of " +
                        std::to_string(kMaxFrameBytes));
}
}  // namespace

Result<Envelope> decode(std::string_view frame) {
  if (frame.size() > kMaxFrameBytes) return oversized(frame);
  // Frames are read straight into their records where the message type allows (the results, every one of them; a
  // third of the controller's CPU in a burst went to the tree path: parse, then look each field up by name).
  // Whatever that reader refuses (anything it would not read exactly as the tree path does) takes the tree path,
  // which names the errors.
  if (std::optional<Envelope> envelope = decode_direct(frame)) return std::move(*envelope);
  return decode_through_tree(frame);
}

std::optional<Envelope> decode_direct(std::string_view frame) {
  if (frame.size() > kMaxFrameBytes) return std::nullopt;
  const DirectReader direct = direct_reader_for(leading_type(frame));
  return direct ? direct(frame) : std::nullopt;
}

Result<Envelope> decode_through_tree(std::string_view frame) {
  if (frame.size() > kMaxFrameBytes) return oversized(frame);
  bj::error_code ec;
  // The parsed tree lives only while the frame is decoded: bump-allocate it, free it in one go.
  bj::monotonic_resource arena;
  // A frame whose strings hold bytes that are not UTF-8 (older agents journaled some) is read with them as U+FFFD;
  // outside a string they stay a syntax error. The repaired text is held to the limit too; the tree stays in `arena`.
  bj::value v = [&] {
    bj::value first = json::parse_exact(frame, ec, &arena);
    if (!ec || !invalid_utf8_at(frame)) return first;
    const std::string repaired = utf8_repaired(frame);
    if (repaired.size() > kMaxFrameBytes) return first;
    ec.clear();
    return json::parse_exact(repaired, ec, &arena);
  }();
  if (ec) return protocol_error("malformed JSON frame: " + ec.message());
  if (!v.is_object()) return protocol_error(std::string("frame is not a JSON object but ") + json::kind_name(v));
  const auto& o = v.get_object();
  FieldReader env(o, "envelope");
  std::string type = env.string("type");
  auto version = env.integer("version");
  auto id = env.integer("id");
  if (!env.ok()) return env.status();
  if (version != kVersion)
    return protocol_error("message '" + type + "': unsupported protocol version " + std::to_string(version) +
                          " (this build speaks " + std::to_string(kVersion) + ")");
  if (id < 0) return protocol_error("message '" + type + "' field 'id': must be >= 0");
  Decoder d = decoder_for(type);
  if (!d) return protocol_error("unknown message type '" + type + "'");
  auto body = d(o, type);
  if (!body) return body.status();
  return Envelope{static_cast<uint64_t>(id), std::move(body).value()};
}

double unix_now_s() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

bool is_boot_id(std::string_view id) {
  return !id.empty() && id.size() <= kMaxBootIdChars && id.find_first_not_of("0123456789abcdef-") == std::string_view::npos;
}

double boot_now_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool needs_ack(const Body& body) {
  return std::holds_alternative<MinibatchChunk>(body) || std::holds_alternative<EpochResult>(body) ||
         std::holds_alternative<RunStarted>(body) || std::holds_alternative<SampleChunk>(body) ||
         std::holds_alternative<RunFinished>(body) || std::holds_alternative<RebootPending>(body);
}

std::optional<int64_t> result_run_id(const Body& body) {
  return std::visit(
      [](const auto& m) -> std::optional<int64_t> {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, MinibatchChunk> || std::is_same_v<T, EpochResult> ||
                      std::is_same_v<T, SampleChunk> || std::is_same_v<T, RunFinished> ||
                      std::is_same_v<T, RunStarted> || std::is_same_v<T, RebootPending>)
          return m.run_id;
        else
          return std::nullopt;
      },
      body);
}

}  // namespace jetsweep::proto

// Issue 12 (hostile input), the parts without a controller: agent names and credentials on the wire, UTF-8
// checks of campaign files, log lines that cannot be forged or flooded, the agent's credential file.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "agent/credential_file.hpp"
#include "common/campaign.hpp"
#include "common/log.hpp"
#include "common/protocol.hpp"
#include "common/text.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;

namespace {

proto::Register named(const std::string& name) {
  proto::Register reg;
  reg.name = name;
  reg.facts.hostname = "h";
  reg.facts.cpus = 4;
  reg.facts.mem_bytes = 1 << 30;
  reg.facts.backend = "host";
  reg.facts.device_class = "host";
  return reg;
}

std::string refusal(const proto::Body& body) {
  auto d = proto::decode(proto::encode(proto::Envelope{1, body}));
  return d ? std::string() : d.status().message();
}

const std::string kCredential(proto::kCredentialChars, 'c');

}  // namespace

TEST_SUITE("hardening") {

TEST_CASE("agent names: letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit") {
  for (const char* ok : {"nx-1", "sim-agx-orin", "Orin_Nano.2", "7", "a-b_c.d"}) CHECK(refusal(named(ok)) == "");
  CHECK(refusal(named(std::string(64, 'a'))) == "");
  CHECK(refusal(named(std::string(65, 'a'))).find("65 characters long; at most 64") != std::string::npos);
  CHECK(refusal(named("")).find("must not be empty") != std::string::npos);
  CHECK(refusal(named("-x")).find("must start with a letter or a digit") != std::string::npos);
  CHECK(refusal(named("nx 1")).find("outside [A-Za-z0-9._-] at position 2") != std::string::npos);
  CHECK(refusal(named("evil\nINFO forged")).find("field 'name'") != std::string::npos);
  CHECK(refusal(named("a/b")) != "");
  CHECK(refusal(named("caf\xc3\xa9")) != "");
}

TEST_CASE("credentials travel in register and registered, and only in the issued form") {
  auto reg = named("nx-1");
  reg.credential = kCredential;
  auto back = proto::decode(proto::encode(proto::Envelope{1, reg}));
  REQUIRE(back.is_ok());
  CHECK(std::get<proto::Register>(back->body).credential == kCredential);
  proto::Registered issued{7, 1000, kCredential};
  auto issued_back = proto::decode(proto::encode(proto::Envelope{2, issued}));
  REQUIRE(issued_back.is_ok());
  CHECK(std::get<proto::Registered>(issued_back->body) == issued);
  CHECK_FALSE(std::get<proto::Registered>(proto::decode(proto::encode(proto::Envelope{3, proto::Registered{7, 1000, {}}}))
                                              ->body)
                  .credential);
  reg.credential = "not-hex";
  CHECK(refusal(reg).find("field 'credential'") != std::string::npos);
  reg.credential = std::string(proto::kCredentialChars, 'C');   // upper case is not what the controller issues
  CHECK(refusal(reg) != "");
}

TEST_CASE("journal_runs must be integers in range (a double cast to int64 was undefined; found by fuzz_protocol)") {
  const std::string head = R"({"type":"register","version":1,"id":1,"name":"nx-1","facts":{"hostname":"h","cpus":4,)"
                           R"("mem_bytes":1,"backend":"host","device_class":"host"},"journal_runs":)";
  auto ok = proto::decode(head + "[8, 9]}");
  REQUIRE(ok.is_ok());
  CHECK(std::get<proto::Register>(ok->body).journal_runs == std::vector<int64_t>{8, 9});
  auto huge = proto::decode(head + "[8, 1e43]}");
  REQUIRE_FALSE(huge.is_ok());
  CHECK(huge.status().message().find("field 'journal_runs'") != std::string::npos);
  CHECK_FALSE(proto::decode(head + "[8.5]}").is_ok());
}

TEST_CASE("invalid_utf8_at finds the first ill-formed byte") {
  CHECK_FALSE(invalid_utf8_at("plain ascii"));
  CHECK_FALSE(invalid_utf8_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK(invalid_utf8_at("caf\xe9") == 3u);            // Latin-1
  CHECK(invalid_utf8_at("ab\xc3") == 2u);             // truncated
  CHECK(invalid_utf8_at("\xc0\xaf") == 0u);           // overlong '/'
  CHECK(invalid_utf8_at("x\xed\xa0\x80") == 1u);      // a UTF-16 surrogate
  CHECK(invalid_utf8_at("\xf4\x90\x80\x80") == 0u);   // above U+10FFFF
  CHECK(invalid_utf8_at("\x80") == 0u);               // a lone continuation byte
  // Past the eight-byte ASCII steps: a bad byte at any position, a good character across a step's edge.
  const std::string ascii(40, 'a');
  for (size_t at = 0; at <= ascii.size(); ++at) {
    CHECK(invalid_utf8_at(ascii.substr(0, at) + "\xe9" + ascii) == at);
    CHECK(invalid_utf8_at(ascii.substr(0, at) + "\xe9") == at);
    CHECK_FALSE(invalid_utf8_at(ascii.substr(0, at) + "\xe2\x82\xac" + ascii.substr(at)));
  }
}

TEST_CASE("utf8_repaired replaces each ill-formed subsequence by one U+FFFD and keeps the rest") {
  const std::string r = "\xEF\xBF\xBD";
  CHECK(utf8_repaired("caf\xc3\xa9 \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xf0\x9f\x98\x80");
  CHECK(utf8_repaired("caf\xe9.bin") == "caf" + r + ".bin");        // Latin-1
  CHECK(utf8_repaired("ab\xc3") == "ab" + r);                        // truncated at the end
  CHECK(utf8_repaired("\xe2\x82x") == r + "x");                      // a maximal subpart: one replacement
  CHECK(utf8_repaired("\xc0\xaf") == r + r);                         // overlong: no byte starts a subpart
  CHECK(utf8_repaired("x\xed\xa0\x80") == "x" + r + r + r);          // a surrogate
  CHECK(utf8_repaired("\xff\xfe") == r + r);
  CHECK_FALSE(invalid_utf8_at(utf8_repaired("\x80\xe9\xf4\x90 ok \xe2\x82")));
}

TEST_CASE("a message whose text is not UTF-8 travels with U+FFFD: the frame is JSON, the result not refused") {
  // A run's error naming a file whose name is Latin-1: before, encode() wrote the byte as it was, the controller
  // refused the frame as malformed JSON and the agent resent the run's end at every reconnect.
  proto::RunFinished end{42, "failed", std::string("cannot open /data/caf\xe9.bin"), 3.5};
  const std::string frame = proto::encode(proto::Envelope{7, end});
  CHECK_FALSE(invalid_utf8_at(frame));
  auto back = proto::decode(frame);
  REQUIRE(back.is_ok());
  CHECK(std::get<proto::RunFinished>(back->body).error == "cannot open /data/caf\xEF\xBF\xBD.bin");
  CHECK(std::get<proto::RunFinished>(back->body).run_id == 42);
  // Frames older agents journaled with the byte as it was are read the same way.
  const std::string old_frame = R"({"type":"run_finished","version":1,"id":7,"run_id":42,"status":"failed",)"
                                "\"error\":\"cannot open /data/caf\xe9.bin\",\"wall_s\":3.5}";
  auto old_back = proto::decode(old_frame);
  REQUIRE(old_back.is_ok());
  CHECK(std::get<proto::RunFinished>(old_back->body).error == "cannot open /data/caf\xEF\xBF\xBD.bin");
  // Outside a string such a byte is still a malformed frame.
  auto outside = proto::decode(R"({"type":"run_finished","version":1,"id":7,"run_id":42)"
                               "\xe9" R"(,"status":"failed","error":"","wall_s":3.5})");
  REQUIRE_FALSE(outside.is_ok());
  CHECK(outside.status().message().find("malformed JSON frame") != std::string::npos);
}

TEST_CASE("a NUL in a message's text reads as U+FFFD, never a NUL that PostgreSQL's text would cut there") {
  const std::string r = "\xEF\xBF\xBD";
  CHECK(nul_replaced(std::string("a\0b\0", 4)) == "a" + r + "b" + r);
  CHECK(nul_replaced("plain") == "plain");
  const std::string frame = R"({"type":"run_finished","version":1,"id":7,"run_id":42,"status":"failed",)"
                            R"("error":"read \u0000 at 12 of /data/x.bin","wall_s":3.5})";
  auto back = proto::decode(frame);
  REQUIRE(back.is_ok());
  CHECK(std::get<proto::RunFinished>(back->body).error == "read " + r + " at 12 of /data/x.bin");
  // Any message's strings, arrays of strings too: a register whose facts a board read with a NUL in them.
  proto::Register sent = named("nano-1");
  sent.facts.hostname = std::string("h\0x", 3);
  sent.facts.storage = {std::string("ssd\0", 4)};
  const std::string reg_frame = proto::encode(proto::Envelope{0, sent});
  CHECK(reg_frame.find("\\u0000") != std::string::npos);   // the wire carries it as JSON allows
  auto reg = proto::decode(reg_frame);
  REQUIRE_MESSAGE(reg.is_ok(), reg.status().to_string());
  const auto& got = std::get<proto::Register>(reg->body);
  CHECK(got.facts.hostname == "h" + r + "x");
  REQUIRE(got.facts.storage.size() == 1);
  CHECK(got.facts.storage[0] == "ssd" + r);
}

TEST_CASE("a campaign or run file that is not UTF-8 is refused at FILE:LINE:COL") {
  auto c = parse_campaign("campaign: ok\nmatrix: {model: lenet5, dataset: mnist, device: host}\n# caf\xe9\n", "c.yaml");
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().message() == "c.yaml:3:6: byte 0xE9 is not valid UTF-8 (campaign and run files are UTF-8 text; "
                                 "tab, LF and CR are their only control characters)");
  auto r = parse_run_spec("model: lenet5\ndataset: mni\xff\n", "r.yaml");
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().rfind("r.yaml:2:13: byte 0xFF", 0) == 0);
  CHECK(parse_campaign("campaign: caf\xc3\xa9\nmatrix: {model: lenet5, dataset: mnist, device: host}\n", "c.yaml").is_ok());
}

TEST_CASE("control_char_at finds the control characters YAML 1.2 leaves out of a document") {
  CHECK_FALSE(control_char_at("tab\there\r\nNEL \xc2\x85 nbsp \xc2\xa0"));
  CHECK(control_char_at(std::string_view("ab\0c", 4)) == 2u);
  CHECK(control_char_at("x\x1b[31m") == 1u);          // ESC
  CHECK(control_char_at("del\x7f") == 3u);
  CHECK(control_char_at("c1 \xc2\x9b") == 3u);        // U+009B, a C1 control
  CHECK(control_char_at("a\tb", false) == 1u);        // one-line values: no tab, LF, CR or NEL
  CHECK(control_char_at("a \xc2\x85", false) == 2u);
}

// fuzz_api found it (fuzz/regressions/api/nul-in-campaign-name-not-json): yaml-cpp reads a NUL in a plain scalar as
// a lone 0xA0 byte, so the campaign's name was not UTF-8 and the estimate's reply was not JSON.
TEST_CASE("a control character in a campaign file, or a name that YAML escapes make non-UTF-8, is refused") {
  const std::string tail = "\nmatrix: {model: lenet5, dataset: mnist, device: host}\n";
  auto nul = parse_campaign(std::string("campaign: si\0_fleet", 19) + tail, "c.yaml");
  REQUIRE_FALSE(nul.is_ok());
  CHECK(nul.status().message().rfind("c.yaml:1:13: control character U+0000 is not allowed", 0) == 0);
  auto esc = parse_campaign("campaign: \"a\x1b[2Jb\"" + tail, "c.yaml");
  REQUIRE_FALSE(esc.is_ok());
  CHECK(esc.status().message().rfind("c.yaml:1:13: control character U+001B", 0) == 0);
  // Escapes are decoded after the text check: "\_" becomes a lone 0xA0, "\0" a NUL, "\t" a tab.
  auto nbsp = parse_campaign("campaign: \"a\\_b\"" + tail, "c.yaml");
  REQUIRE_FALSE(nbsp.is_ok());
  CHECK(nbsp.status().message().find("'campaign' is not UTF-8 text after YAML escapes (byte 0xA0 at offset 1") !=
        std::string::npos);
  for (const char* escaped : {"\"a\\0b\"", "\"a\\tb\"", "\"a\\x07\""}) {
    auto r = parse_campaign(std::string("campaign: ") + escaped + tail, "c.yaml");
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().message().find("'campaign' holds the control character U+00") != std::string::npos);
    CHECK(r.status().message().rfind("c.yaml:1:11:", 0) == 0);
  }
  auto model = parse_run_spec("model: \"le\\0net5\"\ndataset: mnist\n", "r.yaml");
  REQUIRE_FALSE(model.is_ok());
  CHECK(model.status().message().rfind("r.yaml:1:8: 'model' holds the control character U+0000", 0) == 0);
  // A description may span lines; the characters themselves (not the escapes) are fine everywhere.
  auto ok = parse_campaign("campaign: caf\xc3\xa9\xc2\xa0" "fleet\ndescription: |\n  two\n  lines\tand a tab" + tail, "c.yaml");
  REQUIRE(ok.is_ok());
  CHECK(ok.value().description == "two\nlines\tand a tab\n");
}

TEST_CASE("log excerpts are cut, and a RateLimit lets a burst through per window and counts the rest") {
  CHECK(log::excerpt("short") == "short");
  CHECK(log::excerpt(std::string(1000, 'x'), 10) == "xxxxxxxxxx... (990 more bytes)");
  using clock = std::chrono::steady_clock;
  log::RateLimit limit(2, std::chrono::seconds(60));
  const auto t0 = clock::time_point(std::chrono::hours(1));
  int64_t held = -1;
  CHECK(limit.allow(t0, held));
  CHECK(held == 0);
  CHECK(limit.allow(t0 + std::chrono::seconds(1), held));
  CHECK_FALSE(limit.allow(t0 + std::chrono::seconds(2), held));
  CHECK_FALSE(limit.allow(t0 + std::chrono::seconds(59), held));
  CHECK(limit.allow(t0 + std::chrono::seconds(61), held));   // a new window: the line says 2 were held back
  CHECK(held == 2);
  CHECK(limit.allow(t0 + std::chrono::seconds(62), held));
  CHECK(held == 0);
}

TEST_CASE("the agent's credential file: absent means not enrolled; written 0600; garbage is an error naming it") {
  testing::TempDir dir;
  const std::string path = (dir.path() / "credential").string();
  auto none = agent::load_credential(path);
  REQUIRE(none.is_ok());
  CHECK_FALSE(none.value());
  REQUIRE(agent::save_credential(path, kCredential).is_ok());
  auto loaded = agent::load_credential(path);
  REQUIRE(loaded.is_ok());
  CHECK(loaded.value() == kCredential);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  std::ofstream(path) << "garbage\n";
  auto bad = agent::load_credential(path);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find(path + ": does not hold an agent credential") == 0);
}

}  // TEST_SUITE

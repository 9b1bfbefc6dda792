// Wire decode cost (issue 29's ingest path): proto::decode of real result frames, read straight into their records
// (common/json_direct.hpp), against its tree path (json::parse_exact, correctly rounded, then FieldReader: the
// baseline, measured in the same run; how decode read every frame before 2026-12-03), with boost::json::parse and
// json::parse_exact alone for scale. Frames: a 2,048-sample telemetry chunk of an 8-core board and a 4,096-minibatch chunk, values as measured
// (16-17 significant digits), each message as the agent encodes it. Prints a markdown table; then the agent's side:
// proto::encode of the same messages (text written straight from the description) against the same frame built as
// a boost::json tree and serialised (the baseline: how encode wrote it before 2026-12-03), and the UTF-8 check it
// makes of every frame (common/text.hpp).
// Usage: bench_json_decode [ROUNDS]   (default 5; best of the rounds, 50 parses each)
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/described_json.hpp"
#include "common/json_fields.hpp"
#include "common/json_parse.hpp"
#include "common/protocol.hpp"
#include "common/text.hpp"

using namespace jetsweep;
namespace bj = boost::json;

namespace {

template <class F>
double best_seconds(int rounds, int per_round, F f) {
  double best = 1e9;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_round; ++i) f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / per_round);
  }
  return best;
}

struct Frame {
  std::string name;
  proto::Envelope message;
  std::string frame;   // proto::encode(message)
};

std::vector<Frame> frames() {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0, 1);
  proto::SampleChunk samples{7, 1.7e9, {}};
  for (int i = 0; i < 2048; ++i) {
    proto::Sample s{i * 0.05, 100 * u(rng), {}, 1000 + 1000 * u(rng), 2000000, 4096, 5 + 20 * u(rng), std::nullopt};
    for (int c = 0; c < 8; ++c) s.core_util_pct.push_back(100 * u(rng));
    samples.samples.push_back(std::move(s));
  }
  proto::MinibatchChunk minibatches{7, 1, 0, {}, {}, {}};
  for (int i = 0; i < 4096; ++i) {
    minibatches.stall_s.push_back(0.01 * u(rng));
    minibatches.compute_s.push_back(0.1 * u(rng));
  }
  std::vector<Frame> out;
  out.push_back({"samples (2,048 x 8 cores)", {1, std::move(samples)}, ""});
  out.push_back({"minibatches (4,096)", {2, std::move(minibatches)}, ""});
  for (auto& f : out) f.frame = proto::encode(f.message);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::printf("| frame | boost::json::parse | json::parse_exact | proto::decode through the tree (baseline) | "
              "proto::decode (read directly) | ratio |\n");
  std::printf("|---|---|---|---|---|---|\n");
  const std::vector<Frame> all = frames();
  for (const auto& [name, message, frame] : all) {
    bool ok = true;
    const double plain = best_seconds(rounds, 50, [&] {
      bj::monotonic_resource arena;
      bj::error_code ec;
      ok = !bj::parse(frame, ec, &arena).is_null() && ok;
    });
    const double exact = best_seconds(rounds, 50, [&] {
      bj::monotonic_resource arena;
      bj::error_code ec;
      ok = !json::parse_exact(frame, ec, &arena).is_null() && ok;
    });
    const double tree = best_seconds(rounds, 50, [&] { ok = proto::decode_through_tree(frame).is_ok() && ok; });
    const double decode = best_seconds(rounds, 50, [&] { ok = proto::decode(frame).is_ok() && ok; });
    // The direct path must be the one measured, and read what the tree path reads.
    const auto direct = proto::decode_direct(frame);
    const auto through_tree = proto::decode_through_tree(frame);
    if (!ok || !direct || !through_tree.is_ok() || !(*direct == through_tree.value()) || !(*direct == message)) {
      std::fprintf(stderr, "bench_json_decode: a frame did not parse, or its two readings differ\n");
      return 1;
    }
    std::printf("| %s, %zu bytes | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.2f |\n", name.c_str(), frame.size(),
                plain * 1e3, exact * 1e3, tree * 1e3, decode * 1e3, decode / tree);
  }
  std::printf("\n| frame | through a boost::json tree (baseline) | proto::encode | ratio | of which the UTF-8 check | share |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const auto& [name, message, frame] : all) {
    size_t bytes = 0;
    bool utf8 = true, same = true;
    // The baseline: the frame built as a tree and serialised, as proto::encode did before 2026-12-03.
    const double tree = best_seconds(rounds, 50, [&, &message = message, &frame = frame] {
      bj::object o;
      o["type"] = proto::type_name(message.body);
      o["version"] = proto::kVersion;
      o["id"] = message.id;
      std::visit([&](const auto& m) { json::put_described(o, m); }, message.body);
      bj::value v(std::move(o));
      json::null_non_finite(v);
      std::string text = bj::serialize(v);
      if (invalid_utf8_at(text)) text = utf8_repaired(text);
      same = same && text == frame;
    });
    const double encode = best_seconds(rounds, 50, [&, &message = message] { bytes += proto::encode(message).size(); });
    const double check = best_seconds(rounds, 50, [&, &frame = frame] { utf8 = !invalid_utf8_at(frame) && utf8; });
    if (!utf8 || bytes == 0 || !same) {
      std::fprintf(stderr, "bench_json_decode: an encoded frame is not UTF-8 or not its tree's text\n");
      return 1;
    }
    std::printf("| %s | %.3f ms | %.3f ms | %.2f | %.4f ms | %.1f %% |\n", name.c_str(), tree * 1e3, encode * 1e3,
                encode / tree, check * 1e3, 100 * check / encode);
  }
}

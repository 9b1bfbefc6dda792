// The fuzz targets without libFuzzer (tests/CMakeLists.txt, ctest fuzz_replay_TARGET): links one fuzz/fuzz_*.cpp into
// the main build (g++, no sanitizers) and feeds it every file named on the command line or found under a directory
// named there, once each, in sorted order. A failed property aborts as under libFuzzer (fuzz/fuzz_util.hpp). A path
// that does not exist is skipped with a note (git keeps no empty fuzz/regressions/TARGET/, as bench/fuzz allows); an
// input that cannot be read, or no input at all, exits 2. Saved regressions and seed corpora stay checked in every
// build; bench/fuzz keeps the sanitizers and the fuzzing itself.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

// Every regular file under `arg` (or `arg` itself), skipping README.md and hidden files as bench/fuzz does.
bool collect(const fs::path& arg, std::vector<fs::path>& out) {
  std::error_code ec;
  auto take = [&out](const fs::path& p) {
    const std::string name = p.filename().string();
    if (name == "README.md" || name.empty() || name[0] == '.') return;
    out.push_back(p);
  };
  if (fs::is_regular_file(arg, ec)) {
    take(arg);
    return true;
  }
  if (!fs::exists(arg, ec) && !ec) {
    std::fprintf(stderr, "fuzz replay: %s: does not exist, skipped\n", arg.c_str());
    return true;
  }
  if (!fs::is_directory(arg, ec)) {
    std::fprintf(stderr, "fuzz replay: %s: not a file or directory\n", arg.c_str());
    return false;
  }
  for (fs::recursive_directory_iterator it(arg, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) take(it->path());
  }
  if (ec) std::fprintf(stderr, "fuzz replay: %s: %s\n", arg.c_str(), ec.message().c_str());
  return !ec;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    if (!collect(argv[i], inputs)) return 2;
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "fuzz replay: no inputs (usage: %s FILE_OR_DIR...)\n", argc > 0 ? argv[0] : "replay");
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  for (const fs::path& p : inputs) {
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    std::vector<char> bytes(ec ? 0 : size);
    std::ifstream in(p, std::ios::binary);
    if (ec || !in.read(bytes.data(), std::streamsize(bytes.size())) || in.peek() != std::char_traits<char>::eof()) {
      std::fprintf(stderr, "fuzz replay: %s: cannot read\n", p.c_str());
      return 2;
    }
    std::fprintf(stderr, "fuzz replay: %s\n", p.c_str());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::fprintf(stderr, "fuzz replay: %zu inputs, no property failed\n", inputs.size());
  return 0;
}

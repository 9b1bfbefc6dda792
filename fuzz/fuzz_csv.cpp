// libFuzzer target: the CSV corpus reader (analysis/csv_corpus.hpp), which `jetsweep analyze --csv` runs on
// files from anywhere. Properties: a refused file, or a first line split_record refuses, says why; an
// accepted corpus, written back with write_epochs_csv (and, when it has mode rows
// besides warm-up epochs, write_corpus_csv), is read again (what the CLI writes it must read).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "analysis/csv_corpus.hpp"
#include "fuzz/fuzz_util.hpp"

using namespace jetsweep;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::quiet_logs();
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string first_line = text.substr(0, text.find('\n'));
  auto cells = analysis::split_record(first_line, "fuzz.csv:1");
  if (!cells.is_ok()) fuzz::require(!cells.status().message().empty(), "a refused record says why");

  std::istringstream in(text);
  auto corpus = analysis::parse_corpus_csv(in, "fuzz.csv");
  if (!corpus.is_ok()) {
    fuzz::require(!corpus.status().message().empty(), "a refused corpus says why");
    return 0;
  }
  std::ostringstream modes, epochs;
  analysis::write_corpus_csv(modes, corpus.value());
  // Only warm-up epochs (epoch 0): no mode rows, so the written modes file has none to read back.
  if (!corpus.value().rows.empty()) {
    std::istringstream modes_in(modes.str());
    auto again = analysis::parse_corpus_csv(modes_in, "written.csv");
    fuzz::require(again.is_ok(), "a corpus written by write_corpus_csv is read back",
                  again.is_ok() ? "" : again.status().to_string() + "\n" + modes.str());
  }
  analysis::write_epochs_csv(epochs, corpus.value());
  std::istringstream epochs_in(epochs.str());
  auto epochs_again = analysis::parse_corpus_csv(epochs_in, "epochs.csv");
  fuzz::require(epochs_again.is_ok(), "a corpus written by write_epochs_csv is read back",
                epochs_again.is_ok() ? "" : epochs_again.status().to_string() + "\n" + epochs.str());
  return 0;
}

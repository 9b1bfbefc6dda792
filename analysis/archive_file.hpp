// The campaign archive's file (format: analysis/archive.hpp): writing it as a gzip stream with a running SHA-256,
// and walking it line by line with every check of the format. Internal to analysis/archive*.cpp; one object per
// thread.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/archive.hpp"
#include "net/sha256.hpp"

namespace jetsweep::analysis::archive_file {

inline constexpr const char* kFormat = "jetsweep-archive";
inline constexpr int kVersion = kArchiveVersion;

// The header line (JSON, no newline) and its parse; `where` names the file and line in errors.
std::string header_line(const ArchiveHeader& h);
Result<ArchiveHeader> parse_header(const std::string& line, const std::string& where);

// Writes PATH.partial; finish() adds the trailer and renames it to PATH. Destroyed unfinished, it removes the
// partial file, so a failed archive never leaves a half-written PATH.
class Writer {
 public:
  static Result<std::unique_ptr<Writer>> open(const std::string& path);
  ~Writer();
  Status write(std::string_view text);  // appended as is and digested
  Status finish();

 private:
  Writer(std::string path, gzFile file) : path_(std::move(path)), file_(file) {}
  Status put(std::string_view text);
  std::string path_;
  gzFile file_;
  Sha256 sha_;
  bool finished_ = false;
};

// One table section's "@table" line.
struct Section {
  std::string table;
  std::vector<std::string> columns;
};

// What a walk over an archive hands on: the header, then per section its "@table" line, its rows in batches of
// whole COPY lines (each ending in '\n'; `first_line` is the file line of the batch's first), and its end.
class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual Status header(const ArchiveHeader&) { return Status::ok(); }
  virtual Status section(const Section&) { return Status::ok(); }
  virtual Status rows(const std::string& batch, int64_t first_line) { return Status::ok(); }
  virtual Status end_section(const Section&) { return Status::ok(); }
};

// Reads `path` from the first line to the trailer, checking the format (archive.hpp) as it goes, and hands what it
// reads to `visitor`. Returns the header once the trailer's digest matched; a visitor's error stops the walk and is
// returned with the file and line as context.
Result<ArchiveHeader> walk(const std::string& path, Visitor& visitor);

}  // namespace jetsweep::analysis::archive_file

#include "analysis/archive_file.hpp"

#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/json_parse.hpp"

namespace jetsweep::analysis {

const std::vector<std::string>& archive_tables(int version) {
  static const std::vector<std::string> v1 = {"campaigns", "agents", "runs", "epochs", "minibatch_chunks",
                                              "sample_chunks"};
  static const std::vector<std::string> v2 = [] {
    auto t = v1;
    t.insert(t.end(), {"model_files", "model_file_chunks"});
    return t;
  }();
  static const std::vector<std::string> v3 = [] {
    auto t = v2;
    t.push_back("set_aside_results");
    return t;
  }();
  static const std::vector<std::string> v4 = [] {
    auto t = v3;
    t.insert(t.end(), {"adaptive_plans", "adaptive_rounds"});
    return t;
  }();
  return version <= 1 ? v1 : version == 2 ? v2 : version == 3 ? v3 : v4;
}

namespace archive_file {

namespace bj = boost::json;

// ---- header

std::string header_line(const ArchiveHeader& h) {
  bj::object o;
  o["format"] = kFormat;
  o["version"] = h.version;
  o["schema_version"] = h.schema_version;
  o["campaign"] = bj::object{{"id", h.campaign_id}, {"name", h.campaign_name}};
  bj::object counts;
  for (const auto& table : archive_tables(h.version)) counts[table] = h.counts.count(table) ? h.counts.at(table) : 0;
  o["counts"] = std::move(counts);
  o["created_at"] = h.created_at;
  return bj::serialize(o);
}

namespace {

// An integer member of `o` (kInvalidArgument naming it when absent or not an integer).
Result<int64_t> int_member(const bj::object& o, const char* key, const std::string& where) {
  const bj::value* v = o.if_contains(key);
  if (!v || !(v->is_int64() || v->is_uint64()))
    return invalid_argument(where + ": the header's \"" + key + "\" is missing or not an integer");
  return v->is_int64() ? v->get_int64() : static_cast<int64_t>(v->get_uint64());
}

Result<std::string> string_member(const bj::object& o, const char* key, const std::string& where) {
  const bj::value* v = o.if_contains(key);
  if (!v || !v->is_string()) return invalid_argument(where + ": the header's \"" + key + "\" is missing or not a string");
  return std::string(v->get_string());
}

}  // namespace

Result<ArchiveHeader> parse_header(const std::string& line, const std::string& where) {
  boost::system::error_code ec;
  bj::value v = json::parse_exact(line, ec);
  const bj::value* format = !ec && v.is_object() ? v.get_object().if_contains("format") : nullptr;
  if (!format || !format->is_string() || format->get_string() != kFormat)
    return invalid_argument(where + ": not a jetsweep archive (the first line is not its JSON header)");
  const bj::object& o = v.get_object();
  ArchiveHeader h;
  JS_ASSIGN_OR_RETURN(const int64_t version, int_member(o, "version", where));
  if (version < 1 || version > kVersion)
    return invalid_argument(where + ": archive format version " + std::to_string(version) +
                            ", but this jetsweep reads versions 1 to " + std::to_string(kVersion) + " only");
  h.version = static_cast<int>(version);
  JS_ASSIGN_OR_RETURN(const int64_t schema, int_member(o, "schema_version", where));
  h.schema_version = static_cast<int>(schema);
  const bj::value* campaign = o.if_contains("campaign");
  const bj::value* counts = o.if_contains("counts");
  if (!campaign || !campaign->is_object() || !counts || !counts->is_object())
    return invalid_argument(where + ": the header lacks its \"campaign\" or \"counts\" object");
  JS_ASSIGN_OR_RETURN(h.campaign_id, int_member(campaign->get_object(), "id", where));
  JS_ASSIGN_OR_RETURN(h.campaign_name, string_member(campaign->get_object(), "name", where));
  for (const auto& table : archive_tables(h.version)) {
    JS_ASSIGN_OR_RETURN(h.counts[table], int_member(counts->get_object(), table.c_str(), where));
    if (h.counts[table] < 0) return invalid_argument(where + ": negative count for table " + table);
  }
  JS_ASSIGN_OR_RETURN(h.created_at, string_member(o, "created_at", where));
  return h;
}

// ---- Writer

Result<std::unique_ptr<Writer>> Writer::open(const std::string& path) {
  const std::string partial = path + ".partial";
  gzFile f = gzopen(partial.c_str(), "wb3");  // level 3: 2.5x the speed of 6 for 5% more bytes (float text)
  if (!f) return io_error(partial + ": cannot create: " + std::strerror(errno));
  gzbuffer(f, 1 << 18);
  return std::unique_ptr<Writer>(new Writer(path, f));
}

Writer::~Writer() {
  if (finished_) return;
  gzclose(file_);
  std::remove((path_ + ".partial").c_str());
}

Status Writer::put(std::string_view text) {
  if (text.empty()) return Status::ok();
  if (gzwrite(file_, text.data(), static_cast<unsigned>(text.size())) != static_cast<int>(text.size())) {
    int err = 0;
    const char* msg = gzerror(file_, &err);
    return io_error(path_ + ".partial: cannot write: " + (err == Z_ERRNO ? std::strerror(errno) : msg));
  }
  return Status::ok();
}

Status Writer::write(std::string_view text) {
  sha_.update(text);
  return put(text);
}

Status Writer::finish() {
  const std::string digest = sha_.hex_so_far();
  if (digest.empty()) return internal_error(path_ + ": OpenSSL could not compute the archive's SHA-256");
  JS_RETURN_IF_ERROR(put("@end sha256=" + digest + "\n"));
  finished_ = true;
  const int rc = gzclose(file_);  // a full disk shows here at the latest
  const std::string partial = path_ + ".partial";
  if (rc != Z_OK) {
    std::remove(partial.c_str());
    return io_error(partial + ": cannot write: " + (rc == Z_ERRNO ? std::strerror(errno) : "zlib error"));
  }
  if (std::rename(partial.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(partial.c_str());
    return io_error(path_ + ": cannot rename " + partial + " to it: " + why);
  }
  return Status::ok();
}

// ---- reading

namespace {

// The decompressed lines of a file, counted; digests every line it returned before the current one.
class LineReader {
 public:
  explicit LineReader(std::string path) : path_(std::move(path)) {}
  ~LineReader() {
    if (file_) gzclose(file_);
  }
  Status open() {
    file_ = gzopen(path_.c_str(), "rb");
    if (!file_) return io_error(path_ + ": cannot open: " + std::strerror(errno));
    gzbuffer(file_, 1 << 18);
    return Status::ok();
  }
  // The next line without its '\n'; false at the end of the file.
  Result<bool> next(std::string& line);
  std::string where() const { return path_ + ":" + std::to_string(line_no_); }
  int64_t line_no() const { return line_no_; }
  std::string digest_before_current() const { return sha_.hex_so_far(); }

 private:
  Status fill();
  std::string path_;
  gzFile file_ = nullptr;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false, checked_gzip_ = false;
  int64_t line_no_ = 0;
  Sha256 sha_;
  std::string current_;
  bool has_current_ = false;
};

Status LineReader::fill() {
  buf_.erase(0, pos_);
  pos_ = 0;
  char chunk[1 << 16];
  const int n = gzread(file_, chunk, sizeof chunk);
  int err = Z_OK;
  const char* msg = gzerror(file_, &err);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) {
    std::string why = err == Z_ERRNO ? std::strerror(errno) : msg;
    if (why.rfind(path_ + ": ", 0) == 0) why.erase(0, path_.size() + 2);  // zlib names the file too
    const bool truncated = err == Z_BUF_ERROR;
    return invalid_argument(path_ + ":" + std::to_string(line_no_ + 1) + ": " +
                            (truncated ? "the file ends early (truncated?): " : "corrupt compressed data: ") + why);
  }
  if (!checked_gzip_ && n > 0) {
    checked_gzip_ = true;
    if (gzdirect(file_)) return invalid_argument(path_ + ": not a gzip file (a jetsweep archive is gzip-compressed)");
  }
  if (n == 0) eof_ = true;
  buf_.append(chunk, static_cast<size_t>(std::max(n, 0)));
  return Status::ok();
}

Result<bool> LineReader::next(std::string& line) {
  if (has_current_) {
    sha_.update(current_);
    sha_.update("\n");
    has_current_ = false;
  }
  for (;;) {
    const size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos) {
      current_.assign(buf_, pos_, nl - pos_);
      pos_ = nl + 1;
      ++line_no_;
      has_current_ = true;
      line = current_;
      return true;
    }
    if (eof_) {
      if (pos_ < buf_.size())
        return invalid_argument(path_ + ":" + std::to_string(line_no_ + 1) +
                                ": the file ends inside a line (truncated?)");
      if (!checked_gzip_) return invalid_argument(path_ + ": empty file (not a jetsweep archive)");
      return false;
    }
    JS_RETURN_IF_ERROR(fill());
  }
}

// "@table NAME COL1,COL2,...".
Result<Section> parse_table_line(const std::string& line, const std::string& where) {
  const size_t name_end = line.find(' ', 7);
  if (name_end == std::string::npos) return invalid_argument(where + ": '@table' line without columns");
  Section s;
  s.table = line.substr(7, name_end - 7);
  size_t start = name_end + 1;
  while (start <= line.size()) {
    const size_t comma = std::min(line.find(',', start), line.size());
    std::string col = line.substr(start, comma - start);
    if (col.empty() || col.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      return invalid_argument(where + ": table " + s.table + ": bad column name '" + col + "'");
    s.columns.push_back(std::move(col));
    start = comma + 1;
  }
  return s;
}

// The walk's state: which section it is in and how many rows that section had.
struct WalkState {
  ArchiveHeader header;
  size_t next_table = 0;
  bool in_section = false;
  Section section;
  int64_t rows = 0;
  std::string batch;
  int64_t batch_first_line = 0;
};

constexpr size_t kBatchBytes = 1 << 20;

Status flush(WalkState& st, Visitor& v, const std::string& where) {
  if (st.batch.empty()) return Status::ok();
  Status s = v.rows(st.batch, st.batch_first_line);
  st.batch.clear();
  return s.is_ok() ? s : s.with_context(where);
}

// One line inside a section: a row, or "\." ending it.
Status section_line(WalkState& st, Visitor& v, const std::string& line, const LineReader& r) {
  if (line != "\\.") {
    if (st.batch.empty()) st.batch_first_line = r.line_no();
    st.batch.append(line).push_back('\n');
    ++st.rows;
    return st.batch.size() >= kBatchBytes ? flush(st, v, r.where()) : Status::ok();
  }
  JS_RETURN_IF_ERROR(flush(st, v, r.where()));
  const int64_t expected = st.header.counts.at(st.section.table);
  if (st.rows != expected)
    return invalid_argument(r.where() + ": table " + st.section.table + " has " + std::to_string(st.rows) +
                            " rows, the header says " + std::to_string(expected));
  Status s = v.end_section(st.section);
  if (!s.is_ok()) return s.with_context(r.where());
  st.in_section = false;
  ++st.next_table;
  return Status::ok();
}

// The trailer: every table seen and the digest of everything before it matching; nothing after it.
Status trailer_line(WalkState& st, const std::string& line, LineReader& r) {
  const auto& tables = archive_tables(st.header.version);
  if (st.next_table < tables.size())
    return invalid_argument(r.where() + ": the trailer comes before table " + tables[st.next_table]);
  const std::string digest = r.digest_before_current();
  if (digest.empty()) return internal_error(r.where() + ": OpenSSL could not compute the archive's SHA-256");
  const std::string expected = "@end sha256=" + digest;
  if (line != expected)
    return invalid_argument(r.where() + ": digest mismatch: the archive was altered or damaged (" + line.substr(0, 76) +
                            ", the content hashes to " + expected.substr(5) + ")");
  const std::string where = r.where();
  std::string extra;
  JS_ASSIGN_OR_RETURN(const bool more, r.next(extra));
  if (more) return invalid_argument(r.where() + ": text after the trailer at " + where);
  return Status::ok();
}

}  // namespace

Result<ArchiveHeader> walk(const std::string& path, Visitor& visitor) {
  LineReader r(path);
  JS_RETURN_IF_ERROR(r.open());
  WalkState st;
  std::string line;
  JS_ASSIGN_OR_RETURN(const bool first, r.next(line));
  if (!first) return invalid_argument(path + ": empty file (not a jetsweep archive)");
  JS_ASSIGN_OR_RETURN(st.header, parse_header(line, r.where()));
  Status s = visitor.header(st.header);
  if (!s.is_ok()) return s.with_context(path);
  const auto& tables = archive_tables(st.header.version);
  for (;;) {
    JS_ASSIGN_OR_RETURN(const bool more, r.next(line));
    if (!more) {
      const std::string inside = st.in_section ? " inside table " + st.section.table : "";
      return invalid_argument(r.where() + ": the file ends" + inside + " without the trailer (truncated?)");
    }
    if (st.in_section) {
      JS_RETURN_IF_ERROR(section_line(st, visitor, line, r));
    } else if (line.rfind("@table ", 0) == 0) {
      JS_ASSIGN_OR_RETURN(st.section, parse_table_line(line, r.where()));
      if (st.next_table >= tables.size() || st.section.table != tables[st.next_table])
        return invalid_argument(r.where() + ": table " + st.section.table + " where " +
                                (st.next_table < tables.size() ? "table " + tables[st.next_table] : "the trailer") +
                                " belongs");
      s = visitor.section(st.section);
      if (!s.is_ok()) return s.with_context(r.where());
      st.in_section = true;
      st.rows = 0;
    } else if (line.rfind("@end ", 0) == 0) {
      JS_RETURN_IF_ERROR(trailer_line(st, line, r));
      return st.header;
    } else {
      return invalid_argument(r.where() + ": unexpected line (expected '@table' or '@end')");
    }
  }
}

}  // namespace archive_file
}  // namespace jetsweep::analysis

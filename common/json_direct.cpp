// json::read_direct: Boost.JSON's basic_parser with a handler that puts each value into the member the tables of
// common/json_direct.hpp name, refusing (the parse stops, false) whatever the tree path would read differently.
#include "common/json_direct.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include "common/json_parse.hpp"

namespace jetsweep::json {
namespace bj = boost::json;
using direct::Kind;
using direct::RecordTable;
using direct::Target;

namespace {

constexpr std::size_t kMaxTargets = 4;

class DirectHandler {
 public:
  static constexpr std::size_t max_object_size = bj::object::max_size();
  static constexpr std::size_t max_array_size = bj::array::max_size();
  static constexpr std::size_t max_key_size = bj::string::max_size();
  static constexpr std::size_t max_string_size = bj::string::max_size();

  explicit DirectHandler(std::initializer_list<Target> targets) : targets_(targets) {}

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_object_begin(bj::error_code& ec) {
    if (levels_.empty()) {   // the root: the targets
      levels_.push_back(Level{});
      return true;
    }
    if (!next_slot() || !slot_kind_->record) return refuse(ec);
    levels_.push_back(Level{slot_, slot_kind_, 0});
    return true;
  }
  bool on_object_end(std::size_t, bj::error_code& ec) {
    const Level level = levels_.back();
    levels_.pop_back();
    if (level.kind == nullptr) {
      for (std::size_t i = 0; i < targets_.size(); ++i)
        if (!finish(*targets_.begin()[i].table, targets_.begin()[i].record, root_seen_[i])) return refuse(ec);
      return true;
    }
    return finish(*level.kind->record, level.target, level.seen) || refuse(ec);
  }
  bool on_array_begin(bj::error_code& ec) {
    if (levels_.empty() || !next_slot() || !slot_kind_->element) return refuse(ec);
    if (!slot_kind_->assign_doubles) slot_kind_->clear(slot_);
    levels_.push_back(Level{slot_, slot_kind_, 0});
    doubles_.clear();
    return true;
  }
  bool on_array_end(std::size_t, bj::error_code&) {
    const Level level = levels_.back();
    levels_.pop_back();
    if (level.kind->assign_doubles) level.kind->assign_doubles(level.target, doubles_.data(), doubles_.size());
    return true;
  }
  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) {
    key_.append(s.data(), s.size());
    return true;
  }
  bool on_key(bj::string_view s, std::size_t, bj::error_code& ec) {
    const bool found = find_member(joined(key_, s));
    key_.clear();
    return found || refuse(ec);
  }
  bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_string(bj::string_view s, std::size_t, bj::error_code& ec) {
    const bool taken = take(&Kind::take_string, joined(text_, s));
    text_.clear();
    return taken || refuse(ec);
  }
  bool on_number_part(bj::string_view s, bj::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, bj::string_view, bj::error_code& ec) {
    number_.clear();
    return take(&Kind::take_int64, i) || refuse(ec);
  }
  bool on_uint64(std::uint64_t u, bj::string_view, bj::error_code& ec) {
    number_.clear();
    return take(&Kind::take_uint64, u) || refuse(ec);
  }
  bool on_double(double d, bj::string_view s, bj::error_code& ec) {
    const std::string_view text = joined(number_, s);
    const double exact = exact_double(d, text.data(), text.data() + text.size());
    number_.clear();
    return take(&Kind::take_double, exact) || refuse(ec);
  }
  bool on_bool(bool b, bj::error_code& ec) { return take(&Kind::take_bool, b) || refuse(ec); }
  bool on_null(bj::error_code& ec) { return take(&Kind::take_null) || refuse(ec); }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

 private:
  // An object being read (a record, or the root when kind is null), or an array (kind->element set).
  struct Level {
    void* target = nullptr;
    const Kind* kind = nullptr;
    uint64_t seen = 0;   // a record's members read so far, by their index
  };

  // The whole of a key, string or number: its earlier parts (split over writes) in `parts`, its last `last`.
  static std::string_view joined(std::string& parts, bj::string_view last) {
    if (parts.empty()) return {last.data(), last.size()};
    parts.append(last.data(), last.size());
    return parts;
  }
  static bool refuse(bj::error_code& ec) {
    ec = bj::error::syntax;   // any error: the parse stops; the caller reads the text the usual way
    return false;
  }

  // The member named `key` of the object being read becomes the slot of the next value; false if there is none or
  // it was read already.
  bool find_member(std::string_view key) {
    Level& level = levels_.back();
    if (level.kind == nullptr) {
      for (std::size_t t = 0; t < targets_.size(); ++t) {
        const Target& target = targets_.begin()[t];
        if (const int i = index_of(*target.table, key); i >= 0)
          return choose(*target.table, target.record, root_seen_[t], i);
      }
      return false;
    }
    if (!level.kind->record) return false;
    const int i = index_of(*level.kind->record, key);
    return i >= 0 && choose(*level.kind->record, level.target, level.seen, i);
  }
  static int index_of(const RecordTable& table, std::string_view key) {
    for (std::size_t i = 0; i < table.members.size(); ++i)
      if (table.members[i].name == key) return static_cast<int>(i);
    return -1;
  }
  bool choose(const RecordTable& table, void* record, uint64_t& seen, int i) {
    const uint64_t bit = uint64_t{1} << i;
    if (seen & bit) return false;   // a repeated key
    seen |= bit;
    slot_ = table.members[i].get(record);
    slot_kind_ = table.members[i].kind;
    keyed_ = true;
    return true;
  }
  // Where the next value goes: the member just keyed, or a new element of the array being read (a number of a
  // std::vector<double> into the gathered numbers).
  bool next_slot() {
    if (levels_.empty()) return false;   // a document that is not an object
    Level& level = levels_.back();
    if (level.kind == nullptr || level.kind->record) {
      if (!keyed_) return false;
      keyed_ = false;
      return true;
    }
    if (level.kind->assign_doubles) {
      slot_ = &gathered_;
      slot_kind_ = level.kind->element;
      return true;
    }
    slot_ = level.kind->append(level.target);
    slot_kind_ = level.kind->element;
    return true;
  }
  template <class F, class... A>
  bool take(F Kind::*taker, A... v) {
    if (!next_slot()) return false;
    const F f = slot_kind_->*taker;
    if (!f || !f(slot_, v...)) return false;
    if (slot_ == &gathered_) doubles_.push_back(gathered_);
    return true;
  }
  // Each member not read: refused if required, else what the tree path reads for it; then the record's validate.
  static bool finish(const RecordTable& table, void* record, uint64_t seen) {
    for (std::size_t i = 0; i < table.members.size(); ++i) {
      if (seen & (uint64_t{1} << i)) continue;
      const direct::Member& m = table.members[i];
      if (m.required) return false;
      m.reset(m.get(record));
    }
    return !table.validate || table.validate(record);
  }

  std::initializer_list<Target> targets_;
  uint64_t root_seen_[kMaxTargets] = {};
  std::vector<Level> levels_;
  void* slot_ = nullptr;
  const Kind* slot_kind_ = nullptr;
  bool keyed_ = false;          // a key was read and its value not yet
  double gathered_ = 0;
  std::vector<double> doubles_;   // the numbers of the std::vector<double> being read
  std::string key_, text_, number_;   // the parts of a key, string or number split over writes
};

}  // namespace

bool read_direct(std::string_view text, std::initializer_list<Target> targets) {
  if (targets.size() > kMaxTargets) return false;
  boost::system::error_code ec;
  bj::basic_parser<DirectHandler> p(bj::parse_options{}, targets);
  const std::size_t n = p.write_some(false, text.data(), text.size(), ec);
  return !ec && n == text.size() && p.done();
}

}  // namespace jetsweep::json

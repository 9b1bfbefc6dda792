// Private to the PgStore sources (controller/pg_*.cpp): the connection guard and the SQL / field helpers
// they share. Same threading as PgStore: one thread at a time.
#pragma once

#include <pqxx/pqxx>

#include <algorithm>
#include <boost/describe.hpp>
#include <boost/json.hpp>
#include <boost/mp11.hpp>
#include <initializer_list>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "controller/pg_store.hpp"

namespace jetsweep::controller {

template <class Fn>
auto PgStore::guarded(const char* what, Fn&& fn) -> decltype(fn()) {
  if (!connected()) {
    Status s = connect();
    if (!s.is_ok()) return s.with_context(what);
  }
  // The connection is dropped only here, once `fn` has returned or unwound: a transaction inside it refers to the
  // connection until its destructor has run (sql_failure only marks it).
  auto result = [&]() -> decltype(fn()) {
    try {
      return fn();
    } catch (const pqxx::broken_connection& e) {
      drop_connection_ = true;
      return unavailable(std::string(what) + ": connection to PostgreSQL lost: " + e.what());
    } catch (const pqxx::in_doubt_error& e) {
      drop_connection_ = true;
      return unavailable(std::string(what) + ": commit in doubt: " + e.what());
    } catch (const pqxx::transaction_rollback& e) {
      // Deadlock or serialization failure between the dispatch and ingest connections: nothing was written,
      // so the caller retries.
      return unavailable(std::string(what) + ": transaction rolled back: " + e.what());
    } catch (const pqxx::sql_error& e) {
      return sql_failure(what, e);
    } catch (const std::exception& e) {
      if (conn_ && !conn_->is_open()) {   // whatever the exception, the connection went: an outage, retried
        drop_connection_ = true;
        return unavailable(std::string(what) + ": connection to PostgreSQL lost: " + e.what());
      }
      return db_error(std::string(what) + ": " + e.what());
    }
  }();
  if (drop_connection_) {
    drop_connection_ = false;
    conn_.reset();
  }
  return result;
}

namespace pg {

// The ingest statements (pg_ingest.cpp), prepared on every connection PgStore opens (libpqxx prepares each on the
// server at its first use): parsed and planned once per connection instead of once per message.
extern const char* const kIngestRunAccess;         // ($1 run) -> status, campaign, t0 missing, agent, error;
                                                   // FOR SHARE
extern const char* const kIngestMarkRunning;       // ($1 run, $2 agent): assigned -> running
extern const char* const kIngestMinibatchOverlap;  // see pg_ingest.cpp
extern const char* const kIngestSampleOverlap;
extern const char* const kIngestEpoch;
extern const char* const kIngestSetAside;          // a result kept apart (set_aside_results); RETURNING 1 if new
extern const char* const kIngestMinibatchRow;      // a minibatch_chunks row, its arrays binary (pg_chunks.hpp)
extern const char* const kIngestSampleRow;         // a sample_chunks row, its arrays binary (pg_chunks.hpp)
void prepare_ingest_statements(pqxx::connection_base& conn);

// The boards the controller counts as enrolled: agents connected now or seen in the last 24 hours, one per
// physical board (agents sharing a board_id count once: the connected one, else the one seen last). A CTE
// prefix: use as kEnrolledBoardsSql + " SELECT ... FROM enrolled ...".
extern const char* const kEnrolledBoardsSql;

// SET clause that sends a run back to the queue, or declares it lost once it has used its attempts, or
// cancelled when a cancel was requested; `why_param` is the SQL expression of the reason.
std::string requeue_or_lose(int max_attempts, const std::string& why_param);

// PostgreSQL array literals: of strings (each quoted and escaped), of integers.
std::string text_array_literal(const std::vector<std::string>& v);
std::string array_literal(const std::vector<int64_t>& v);

// Nullable columns, read safely (NULL -> nullopt).
std::optional<double> opt_number(const pqxx::field& f);
std::optional<int64_t> opt_integer(const pqxx::field& f);
std::optional<std::string> opt_text(const pqxx::field& f);
std::optional<bool> opt_bool(const pqxx::field& f);
// A jsonb column read as text: its object, nullopt when NULL or not an object.
std::optional<boost::json::object> opt_object(const pqxx::field& f);

// A result row read by column name, never by position: a SELECT's columns can be added or reordered without touching
// its readers, and every query names what it returns (`AS name` on each expression). A name the row lacks throws
// pqxx::argument_error ("Unknown column name"), which PgStore::guarded reports as a kDbError naming the column. The
// nullable getters read NULL as nullopt. A copy of the row (a handle on its result, which it keeps alive).
class Row {
 public:
  explicit Row(const pqxx::row& row) : row_(row) {}
  pqxx::field field(const char* column) const { return row_[column]; }
  bool is_null(const char* column) const { return row_[column].is_null(); }
  int64_t integer(const char* column) const { return row_[column].as<int64_t>(); }
  double number(const char* column) const { return row_[column].as<double>(); }
  bool boolean(const char* column) const { return row_[column].as<bool>(); }
  std::string text(const char* column) const { return row_[column].c_str(); }
  std::optional<double> opt_number(const char* column) const;
  std::optional<int64_t> opt_integer(const char* column) const;
  std::optional<std::string> opt_text(const char* column) const;
  std::optional<bool> opt_bool(const char* column) const;
  std::optional<boost::json::object> opt_object(const char* column) const;
  // The names of its columns, in the SELECT's order.
  std::vector<std::string_view> columns() const;

 private:
  pqxx::row row_;
};

// A JSON array of strings read as text (array_to_json(col)::text); empty when NULL.
std::vector<std::string> json_strings(const pqxx::field& f);

namespace detail {
inline bool named_in(std::initializer_list<std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}
template <class V>
void read_column(const Row& row, const char* column, V& v) {
  if constexpr (std::is_same_v<V, int64_t>) v = row.integer(column);
  else if constexpr (std::is_same_v<V, double>) v = row.number(column);
  else if constexpr (std::is_same_v<V, bool>) v = row.boolean(column);
  else if constexpr (std::is_same_v<V, std::string>) v = row.text(column);
  else if constexpr (std::is_same_v<V, std::optional<int64_t>>) v = row.opt_integer(column);
  else if constexpr (std::is_same_v<V, std::optional<double>>) v = row.opt_number(column);
  else if constexpr (std::is_same_v<V, std::optional<bool>>) v = row.opt_bool(column);
  else if constexpr (std::is_same_v<V, std::optional<std::string>>) v = row.opt_text(column);
  else if constexpr (std::is_same_v<V, std::optional<boost::json::object>>) v = row.opt_object(column);
  else if constexpr (std::is_same_v<V, std::vector<std::string>>) v = json_strings(row.field(column));
  else throw std::logic_error(std::string("no column reader for member '") + column + "'");
}

template <class T>
using ColumnMembers =
    boost::describe::describe_members<T, boost::describe::mod_public | boost::describe::mod_inherited>;
template <class T>
bool is_member(std::string_view name) {
  bool member = false;
  boost::mp11::mp_for_each<ColumnMembers<T>>([&](auto m) { member = member || name == m.name; });
  return member;
}
// read_columns' checks that depend on the SELECT's columns only (the same in every row of a result).
template <class T>
void check_columns(const std::vector<std::string_view>& columns, std::initializer_list<std::string_view> computed,
                   std::initializer_list<std::string_view> also_read) {
  for (const std::string_view name : computed)   // a misspelt name would leave a member unread
    if (!is_member<T>(name))
      throw std::logic_error("'" + std::string(name) + "' is left to the caller but is no member");
  for (const std::string_view name : also_read)
    if (std::find(columns.begin(), columns.end(), name) == columns.end())
      throw std::logic_error("column '" + std::string(name) + "' is said to be read by the caller but is not selected");
  for (const std::string_view column : columns)
    if (!(is_member<T>(column) && !named_in(computed, column)) && !named_in(also_read, column))
      throw std::logic_error("column '" + std::string(column) + "' is read by nothing (a member of the record, or " +
                             "a column its reader names)");
}
template <class T>
void read_members(const Row& row, T& record, std::initializer_list<std::string_view> computed) {
  boost::mp11::mp_for_each<ColumnMembers<T>>([&](auto member) {
    if (!named_in(computed, member.name)) read_column(row, member.name, record.*member.pointer);
  });
}
}  // namespace detail

// A described record (BOOST_DESCRIBE_STRUCT) read from a row whose columns are named after its members (`AS name` in
// the SELECT): each member from the column of its name, by its type (int64_t, double, bool, std::string, an
// std::optional of one of those or of a jsonb object read as text, NULL -> nullopt; a JSON array of strings read as
// text). The members named in `computed` are left to the caller. A member without its column throws
// pqxx::argument_error naming it (as Row's getters do); a column that is neither a member read here nor named in
// `also_read` (read by the caller) throws std::logic_error naming it, as does a name in `computed` that is no member or
// one in `also_read` that is no column: a SELECT and its record cannot drift apart.
// PgStore::guarded reports either as a kDbError naming what it was reading.
template <class T>
void read_columns(const Row& row, T& record, std::initializer_list<std::string_view> computed = {},
                  std::initializer_list<std::string_view> also_read = {}) {
  detail::check_columns<T>(row.columns(), computed, also_read);
  detail::read_members(row, record, computed);
}

// Every row of `result` read as read_columns reads one, its columns checked once (a run's samples: thousands of rows).
template <class T>
std::vector<T> read_rows(const pqxx::result& result, std::initializer_list<std::string_view> computed = {},
                         std::initializer_list<std::string_view> also_read = {}) {
  std::vector<T> out;
  if (result.empty()) return out;
  detail::check_columns<T>(Row(result[0]).columns(), computed, also_read);
  out.reserve(result.size());
  for (const auto& r : result) detail::read_members(Row(r), out.emplace_back(), computed);
  return out;
}

// Every agent's name -> its board class.
std::map<std::string, std::string> agent_classes(pqxx::work& w);

}  // namespace pg
}  // namespace jetsweep::controller

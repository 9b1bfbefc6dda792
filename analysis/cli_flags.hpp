// The flags of one analyze/export command, declared once (name, value name, default, help) and parsed by
// CLI11 (generated --help), kept as the text given so that each command converts and checks its numbers with
// messages naming the flag. Plain values; one parse per thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace CLI {
class App;
}

namespace jetsweep::analysis {

// One flag: a switch when `value_name` is empty, else a flag taking one value.
struct FlagDecl {
  std::string name;        // "--workload"
  std::string value_name;  // "W"; empty for a switch
  std::string help;
  std::string default_text = {};  // shown in --help and returned by Flags::get when the flag is absent
};

// The flags given to one command.
class Flags {
 public:
  Flags() = default;
  Flags(std::map<std::string, std::string> values, std::set<std::string> switches,
        std::map<std::string, std::string> defaults);

  bool has(const std::string& flag) const { return values_.count(flag) > 0; }  // a value flag was given
  bool on(const std::string& flag) const { return switches_.count(flag) > 0; }  // a switch was given
  // The value given, else the declared default, else `fallback`.
  std::string get(const std::string& flag, const std::string& fallback = "") const;
  // The value given as a finite number / integer of at least `min_value` (kInvalidArgument naming the flag), or
  // the declared default (0 without one).
  Result<double> number(const std::string& flag, double min_value) const;
  Result<int64_t> integer(const std::string& flag, int64_t min_value) const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> switches_;
  std::map<std::string, std::string> defaults_;
};

// Declares `flags` on a CLI11 app (or subcommand).
void declare_flags(CLI::App& app, const std::vector<FlagDecl>& flags);
// Parses `args` with `app`, whose extras must be allowed; `command` names the command in messages ("analyze
// pareto"). Returns the flags of `target` (the app itself or its subcommand). kInvalidArgument with the
// message users know ("unknown flag '--x' for 'export'", "--workload: missing value", ...); kCancelled-like
// help requests are reported by `help` = true with ok status and empty flags.
struct ParsedFlags {
  Flags flags;
  bool help = false;
};
Result<ParsedFlags> parse_flags(CLI::App& app, CLI::App& target, const std::vector<std::string>& args,
                                const std::string& command, const std::vector<FlagDecl>& decls);

// The non-empty items of a comma-separated list.
std::vector<std::string> split_list(const std::string& text);

}  // namespace jetsweep::analysis

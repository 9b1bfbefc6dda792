#include "analysis/cli_flags.hpp"

#include <CLI/CLI.hpp>

#include <cmath>

#include "analysis/json_output.hpp"
#include "common/text.hpp"

namespace jetsweep::analysis {

Flags::Flags(std::map<std::string, std::string> values, std::set<std::string> switches,
             std::map<std::string, std::string> defaults)
    : values_(std::move(values)), switches_(std::move(switches)), defaults_(std::move(defaults)) {}

std::string Flags::get(const std::string& flag, const std::string& fallback) const {
  if (auto it = values_.find(flag); it != values_.end()) return it->second;
  if (auto it = defaults_.find(flag); it != defaults_.end()) return it->second;
  return fallback;
}

Result<double> Flags::number(const std::string& flag, double min_value) const {
  const std::string text = get(flag);
  if (!has(flag)) return parse_double(text).value_or(0.0);  // the declared default (may mean "unset": 0)
  const auto v = parse_double(text);
  if (!v || !std::isfinite(*v)) return invalid_argument(flag + ": expected a number, got '" + text + "'");
  if (*v < min_value) return invalid_argument(flag + ": must be at least " + fixed(min_value, 3) + ", got '" + text + "'");
  return *v;
}

Result<int64_t> Flags::integer(const std::string& flag, int64_t min_value) const {
  const std::string text = get(flag);
  if (!has(flag)) return parse_int(text).value_or(0);  // the declared default (may mean "unset": 0)
  const auto v = parse_int(text);
  if (!v) return invalid_argument(flag + ": expected an integer, got '" + text + "'");
  if (*v < min_value)
    return invalid_argument(flag + ": must be at least " + std::to_string(min_value) + ", got '" + text + "'");
  return *v;
}

void declare_flags(CLI::App& app, const std::vector<FlagDecl>& flags) {
  for (const auto& f : flags) {
    if (f.value_name.empty()) {
      app.add_flag(f.name, f.help)->disable_flag_override();
      continue;
    }
    CLI::Option* o = app.add_option(f.name, f.help)->type_name(f.value_name);
    if (!f.default_text.empty()) o->default_str(f.default_text);
  }
}

namespace {

// CLI11's parse errors in the words the hand-written parser used (tests and scripts rely on them).
Status parse_error(const CLI::ParseError& e, const std::string& command) {
  const std::string what = e.what();
  std::string flag = what.substr(0, what.find_first_of(": "));
  if (flag.rfind("-", 0) != 0) flag = "--" + flag;  // a switch's override names it without dashes
  if (e.get_name() == "ArgumentMismatch") {
    if (what.find(" missing") != std::string::npos) return invalid_argument(flag + ": missing value");
    if (what.find("flag override") != std::string::npos) return invalid_argument(flag + ": takes no value");
    return invalid_argument(flag + ": given twice");
  }
  return invalid_argument(command + ": " + what);
}

}  // namespace

Result<ParsedFlags> parse_flags(CLI::App& app, CLI::App& target, const std::vector<std::string>& args,
                                const std::string& command, const std::vector<FlagDecl>& decls) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 consumes from the back
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    return ParsedFlags{{}, true};
  } catch (const CLI::ParseError& e) {
    return parse_error(e, command);
  }
  for (std::string extra : app.remaining(true)) {
    if (extra.rfind("--", 0) != 0)
      return invalid_argument("unexpected argument '" + extra + "' for '" + command + "' (flags start with --)");
    return invalid_argument("unknown flag '" + extra.substr(0, extra.find('=')) + "' for '" + command + "'");
  }
  std::map<std::string, std::string> values, defaults;
  std::set<std::string> switches;
  for (const auto& d : decls) {
    const CLI::Option* o = target.get_option_no_throw(d.name);
    if (!d.default_text.empty()) defaults[d.name] = d.default_text;
    if (!o || o->count() == 0) continue;
    if (d.value_name.empty()) switches.insert(d.name);
    else values[d.name] = o->results().front();
  }
  return ParsedFlags{Flags(std::move(values), std::move(switches), std::move(defaults)), false};
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  for (auto& item : split(text, ','))
    if (!item.empty()) out.push_back(std::move(item));
  return out;
}

}  // namespace jetsweep::analysis

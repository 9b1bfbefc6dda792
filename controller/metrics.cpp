#include "controller/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace jetsweep::controller::metrics {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  if (std::isnan(value)) return;
  const size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  std::lock_guard lock(mu_);
  ++counts_[i];
  sum_ += value;
  ++count_;
}

HistogramSnapshot Histogram::snapshot() const {
  std::lock_guard lock(mu_);
  return HistogramSnapshot{bounds_, counts_, sum_, count_};
}

std::vector<double> latency_buckets_s() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

bool valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || name.substr(0, 2) == "__") return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

namespace {
std::string escape(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quotes) out += "\\\"";
    else out += c;
  }
  return out;
}
}  // namespace

std::string escape_label_value(std::string_view value) { return escape(value, true); }
std::string escape_help(std::string_view help) { return escape(help, false); }

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // Integral values below 2^53 in full (921000000, not 9.21e+08: easier to read), others in the shortest form.
  const auto r = std::abs(value) < 9007199254740992.0 && value == std::trunc(value)
                     ? std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(value))
                     : std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, r.ptr);
}

std::string format_labels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ',';
    out += labels[i].first + "=\"" + escape_label_value(labels[i].second) + "\"";
  }
  return out + "}";
}

Registry::Family* Registry::family(const std::string& name, const std::string& help, const std::string& type,
                                   const Labels& labels) {
  bool ok = valid_metric_name(name);
  for (const auto& [label, value] : labels) ok = ok && valid_label_name(label) && !(type == "histogram" && label == "le");
  auto it = families_.find(name);
  if (ok && it != families_.end() && it->second.type != type) ok = false;
  if (!ok) {
    ++invalid_;
    return nullptr;
  }
  if (it == families_.end()) {
    order_.push_back(name);
    it = families_.emplace(name, Family{help, type, {}}).first;
  }
  return &it->second;
}

void Registry::declare(const std::string& name, const std::string& help, const std::string& type) {
  family(name, help, type, {});
}

void Registry::counter(const std::string& name, const std::string& help, const Labels& labels, double value) {
  if (Family* f = family(name, help, "counter", labels))
    f->lines.push_back(name + format_labels(labels) + " " + format_value(value));
}

void Registry::gauge(const std::string& name, const std::string& help, const Labels& labels, double value) {
  if (Family* f = family(name, help, "gauge", labels))
    f->lines.push_back(name + format_labels(labels) + " " + format_value(value));
}

void Registry::histogram(const std::string& name, const std::string& help, const Labels& labels,
                         const HistogramSnapshot& h) {
  Family* f = family(name, help, "histogram", labels);
  if (!f) return;
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= h.bounds.size(); ++i) {
    cumulative += i < h.counts.size() ? h.counts[i] : 0;
    Labels with_le = labels;
    with_le.emplace_back("le", i < h.bounds.size() ? format_value(h.bounds[i]) : "+Inf");
    f->lines.push_back(name + "_bucket" + format_labels(with_le) + " " + std::to_string(cumulative));
  }
  f->lines.push_back(name + "_sum" + format_labels(labels) + " " + format_value(h.sum));
  f->lines.push_back(name + "_count" + format_labels(labels) + " " + std::to_string(h.count));
}

std::string Registry::text() const {
  std::string out;
  for (const auto& name : order_) {
    const Family& f = families_.at(name);
    out += "# HELP " + name + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + name + " " + f.type + "\n";
    for (const auto& line : f.lines) out += line + "\n";
  }
  return out;
}

}  // namespace jetsweep::controller::metrics

#include "controller/cli/cli.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <ostream>
#include <sstream>

#include "common/board_classes.hpp"
#include "common/campaign.hpp"
#include "common/perf/estimate.hpp"
#include "common/json_fields.hpp"

namespace jetsweep::cli {
namespace bj = boost::json;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

const char* kUsage =
    "usage: jetsweep [--controller http://HOST:PORT] [--token T] COMMAND\n"
    "  validate FILE [--estimate]    expand and check a campaign; prints the run count; --estimate asks the\n"
    "                                controller for its duration from the epoch times measured so far\n"
    "  submit FILE [--dry-run RUNS[:EPOCHS[:MINIBATCHES]]]\n"
    "                                submit a campaign; prints its id. --dry-run submits a smaller copy: at most\n"
    "                                RUNS runs spread over the matrix, EPOCHS epochs, MINIBATCHES per epoch\n"
    "  status [CAMPAIGN] [--json]    progress of one campaign (id or name) or of all\n"
    "  report CAMPAIGN [--json]      per-run, per-epoch results\n"
    "  agents [--json]               the fleet\n"
    "  pause|resume|cancel CAMPAIGN  stop handing out its runs / carry on / cancel it: queued runs are\n"
    "                                cancelled, executing ones stopped (what they measured is kept)\n"
    "  cancel-run RUN_ID [--json]    cancel one run (stopped on its agent if it is executing)\n"
    "  analyze METHOD [...]          variability | pareto | predict | optimize | epochs | synth (docs/ANALYSIS.md)\n"
    "  export [...]                  the per-mode CSV corpus from the database (docs/ANALYSIS.md)\n"
    "The controller defaults to $JETSWEEP_CONTROLLER, else http://127.0.0.1:8420; --token T (default\n"
    "$JETSWEEP_API_TOKEN) is sent as the API token.\n";

Status split_url(const std::string& url, std::string& host, std::string& port) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) return invalid_argument("--controller '" + url + "': must start with http://");
  std::string rest = url.substr(scheme.size());
  rest = rest.substr(0, rest.find('/'));
  auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size())
    return invalid_argument("--controller '" + url + "': expected http://HOST:PORT");
  host = rest.substr(0, colon);
  port = rest.substr(colon + 1);
  return Status::ok();
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// "3 h 25 min", "12 min", "40 s", "2 d 4 h".
std::string format_duration(double s) {
  std::ostringstream o;
  const auto t = static_cast<int64_t>(s + 0.5);
  if (t >= 86400) o << t / 86400 << " d " << (t % 86400) / 3600 << " h";
  else if (t >= 3600) o << t / 3600 << " h " << (t % 3600) / 60 << " min";
  else if (t >= 60) o << t / 60 << " min";
  else o << t << " s";
  return o.str();
}

std::string num(const bj::value& v, int precision = 3) {
  auto d = json::as_number(v);
  if (!d) return "-";
  std::ostringstream ss;
  ss << std::fixed << std::setprecision(precision) << *d;
  return ss.str();
}

std::string str(const bj::object& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) return "-";
  if (it->value().is_string()) return std::string(it->value().get_string());
  return bj::serialize(it->value());
}

int64_t integer(const bj::object& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end()) return 0;
  return json::as_integer(it->value()).value_or(0);
}

}  // namespace

Result<HttpResult> http_request(const std::string& base_url, const std::string& method, const std::string& target,
                                const std::string& body, const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string host, port;
  JS_RETURN_IF_ERROR(split_url(base_url, host, port));
  try {
    boost::asio::io_context ioc;
    tcp::resolver resolver(ioc);
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::seconds(30));
    stream.connect(resolver.resolve(host, port));
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, host + ":" + port);
    req.set(http::field::user_agent, "jetsweep-cli");
    for (const auto& [k, v] : headers) req.set(k, v);
    if (!body.empty()) {
      req.body() = body;
      req.prepare_payload();
    }
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    return HttpResult{static_cast<int>(res.result_int()), res.body()};
  } catch (const boost::system::system_error& e) {
    return unavailable("controller at " + base_url + " not reachable: " + e.code().message());
  }
}

std::string format_status(const bj::object& s, bool progress_bar) {
  std::ostringstream out;
  const int64_t total = integer(s, "epochs_total"), done = integer(s, "epochs_done");
  out << "campaign " << integer(s, "campaign_id") << " (" << str(s, "name") << "): " << integer(s, "runs") << " runs: "
      << integer(s, "done") << " done, " << integer(s, "running") << " running, " << integer(s, "assigned")
      << " assigned, " << integer(s, "queued") << " queued, " << integer(s, "failed") << " failed";
  if (integer(s, "lost") > 0) out << ", " << integer(s, "lost") << " lost";
  if (integer(s, "cancelled") > 0) out << ", " << integer(s, "cancelled") << " cancelled";
  out << "; epochs " << done << "/" << total;
  if (s.contains("state") && s.at("state") != "active") out << " [" << str(s, "state") << "]";
  if (s.contains("paused") && s.at("paused") == true && integer(s, "queued") + integer(s, "running") > 0) {
    out << "; ETA paused";
  } else if (s.contains("eta_s") && s.at("eta_s").is_double() && s.at("eta_s").as_double() > 0) {
    const auto eta = static_cast<int64_t>(s.at("eta_s").as_double());
    out << "; ETA " << eta / 3600 << "h" << std::setw(2) << std::setfill('0') << (eta / 60) % 60 << "m"
        << std::setw(2) << (eta % 60) << "s" << std::setfill(' ');
  }
  if (progress_bar && total > 0) {
    const int width = 30;
    int filled = static_cast<int>(std::lround(width * static_cast<double>(done) / static_cast<double>(total)));
    filled = std::clamp(filled, 0, width);
    out << "  [" << std::string(static_cast<size_t>(filled), '#') << std::string(static_cast<size_t>(width - filled), '.')
        << "] " << (100 * done / total) << "%";
  }
  if (s.contains("unrunnable") && s.at("unrunnable").is_array())
    for (const auto& u : s.at("unrunnable").as_array())
      if (u.is_object()) out << "\n  cannot run: " << str(u.as_object(), "reason");
  return out.str();
}

// "4c/1420.8/921.6/1600" (MHz) with the nvpmodel name, "pin" and "fan=max" from an applied BoardState object.
std::string applied_label(const bj::value& applied) {
  if (!applied.is_object()) return "";
  const auto& a = applied.as_object();
  auto mhz = [&](const char* key, double per_mhz) {
    auto v = a.contains(key) ? json::as_number(a.at(key)) : std::nullopt;
    if (!v || *v <= 0) return std::string("?");
    std::ostringstream s;
    s << *v / per_mhz;
    return s.str();
  };
  auto cores = a.contains("cores_online") ? json::as_integer(a.at("cores_online")) : std::nullopt;
  std::string label = (cores && *cores > 0 ? std::to_string(*cores) : std::string("?")) + "c";
  // A host shows no GPU or EMC clock (and a VM often no cpufreq): only the cores, rather than "?/?/?".
  const std::string clocks = mhz("cpu_khz", 1e3) + "/" + mhz("gpu_hz", 1e6) + "/" + mhz("emc_hz", 1e6);
  if (clocks != "?/?/?") label += "/" + clocks;
  if (a.contains("mode_name") && a.at("mode_name").is_string() && !a.at("mode_name").get_string().empty())
    label += " " + std::string(a.at("mode_name").get_string());
  if (a.contains("clocks_pinned") && a.at("clocks_pinned") == true) label += " pin";
  if (a.contains("fan") && a.at("fan") == "max") label += " fan=max";
  return label;
}

// The requested power mode of a run config that has not reported its applied state yet.
std::string requested_label(const bj::object& cfg) {
  if (!cfg.contains("power_mode") || !cfg.at("power_mode").is_object()) return "(reference)";
  const auto& pm = cfg.at("power_mode").as_object();
  if (pm.contains("name")) return "(" + str(pm, "name") + ")";
  std::string s;
  for (const char* k : {"cores", "cpu_khz", "gpu_hz", "emc_hz"})
    if (pm.contains(k)) s += (s.empty() ? "" : " ") + std::string(k) + "=" + std::to_string(integer(pm, k));
  return "(" + s + ")";
}

// Short labels of the run-config axes that vary across the campaign's runs ("w2 bs16 rep1").
std::string axes_label(const bj::object& cfg, const std::vector<std::string>& varying) {
  std::string s;
  auto add = [&](const std::string& piece) { s += (s.empty() ? "" : " ") + piece; };
  for (const auto& k : varying) {
    if (!cfg.contains(k)) continue;
    const bj::value& v = cfg.at(k);
    const std::string text = v.is_string() ? std::string(v.get_string()) : bj::serialize(v);
    if (k == "workers") add("w" + text);
    else if (k == "batch_size") add("bs" + text);
    else if (k == "prefetch") add("pf" + text);
    else if (k == "threads") add("t" + text);
    else if (k == "repetition") add("rep" + text);
    else if (k == "seed") add("seed" + text);
    else if (k == "data") add(text.rfind('@', 0) == 0 ? text : "data=" + text);
    else if (k == "drop_caches") add(v == true ? "cold" : "warm");
    else if (k == "device") add(text);
    else if (k == "max_minibatches") add("mb<=" + text);
    else if (k == "sample_hz") add(text + "Hz");
  }
  return s;
}

std::string format_report(const bj::object& report) {
  std::ostringstream out;
  const auto& c = report.at("campaign").as_object();
  out << "campaign " << integer(c, "id") << " (" << str(c, "name") << ", from " << str(c, "source_file") << ", "
      << str(c, "created_at") << ")\n";
  const bool power = report.contains("power_sensor") && report.at("power_sensor").is_bool() &&
                     report.at("power_sensor").get_bool();
  if (!power) out << "energy: no power sensor on these agents (energy is null, never estimated)\n";
  if (integer(report, "simulated_runs") > 0)
    out << "SIMULATED: " << integer(report, "simulated_runs")
        << " runs come from simulated boards (modelled times and power, not measurements); marked 'sim'\n";
  out << "\n";
  // The configuration column: the state each run executed in (applied, read back) and every axis that varies
  // across the campaign's runs, so no two differently configured runs look alike.
  std::vector<std::string> varying;
  {
    const auto& runs = report.at("runs").as_array();
    for (const char* k : {"device", "data", "batch_size", "workers", "prefetch", "threads", "seed", "drop_caches",
                          "max_minibatches", "sample_hz", "repetition"}) {
      std::set<std::string> values;
      for (const auto& rv : runs) {
        const auto& cfg = rv.as_object().at("config").as_object();
        values.insert(cfg.contains(k) ? bj::serialize(cfg.at(k)) : "-");
      }
      if (values.size() > 1) varying.push_back(k);
    }
  }
  std::vector<std::string> labels;
  size_t width = 13;
  for (const auto& rv : report.at("runs").as_array()) {
    const auto& r = rv.as_object();
    const auto& cfg = r.at("config").as_object();
    std::string label = r.contains("applied") && r.at("applied").is_object() ? applied_label(r.at("applied")) : requested_label(cfg);
    const std::string axes = axes_label(cfg, varying);
    if (!axes.empty()) label += " " + axes;
    width = std::max(width, label.size() + 1);
    labels.push_back(std::move(label));
  }
  out << std::left << std::setw(6) << "run" << std::setw(8) << "status" << std::setw(15) << "agent" << std::setw(20)
      << "model/dataset" << std::setw(static_cast<int>(width)) << "configuration" << std::right << std::setw(6) << "mb"
      << " | " << std::setw(9) << "e0 e2e" << std::setw(9) << "e0 stall" << std::setw(9)
      << "e0 comp" << std::setw(9) << "e0 J" << " | " << std::setw(9) << "1+ e2e" << std::setw(9) << "1+ stall"
      << std::setw(9) << "1+ comp" << std::setw(9) << "1+ J" << "\n";
  size_t run_index = 0;
  int64_t throttled_epochs = 0;
  std::map<std::string, int64_t> devices;   // what the runs trained on
  for (const auto& rv : report.at("runs").as_array()) {
    const auto& r = rv.as_object();
    const auto& cfg = r.at("config").as_object();
    const std::string& label = labels[run_index++];
    std::string throttle_note;
    if (r.contains("compute_device") && r.at("compute_device").is_string()) ++devices[str(r, "compute_device")];
    const auto& epochs = r.at("epochs").as_array();
    bj::value e0e2e, e0stall, e0comp, e0energy;
    double sum_e2e = 0, sum_stall = 0, sum_comp = 0, sum_energy = 0;
    int later = 0;
    bool energy_ok = true;
    int64_t minibatches = 0;
    for (const auto& ev : epochs) {
      const auto& e = ev.as_object();
      minibatches = integer(e, "minibatches");
      if (e.contains("throttled") && e.at("throttled") == true) {
        ++throttled_epochs;
        if (throttle_note.empty())
          throttle_note = "epoch " + std::to_string(integer(e, "epoch")) + ": " + str(e, "throttle_reason");
      }
      if (integer(e, "epoch") == 0) {
        e0e2e = e.at("e2e_s");
        e0stall = e.at("stall_s");
        e0comp = e.at("compute_s");
        e0energy = e.at("energy_j");
      } else {
        ++later;
        sum_e2e += json::as_number(e.at("e2e_s")).value_or(0);
        sum_stall += json::as_number(e.at("stall_s")).value_or(0);
        sum_comp += json::as_number(e.at("compute_s")).value_or(0);
        auto en = json::as_number(e.at("energy_j"));
        energy_ok &= en.has_value();
        sum_energy += en.value_or(0);
      }
    }
    auto mean = [&](double s) -> bj::value { return later ? bj::value(s / later) : bj::value(nullptr); };
    const bool sim = r.contains("simulated") && r.at("simulated").is_bool() && r.at("simulated").get_bool();
    out << std::left << std::setw(6) << integer(r, "run_id") << std::setw(8) << (sim ? str(r, "status") + "*" : str(r, "status")) << std::setw(15)
        << str(r, "agent").substr(0, 14) << std::setw(20) << (str(cfg, "model") + "/" + str(cfg, "dataset")).substr(0, 19)
        << std::setw(static_cast<int>(width)) << label << std::right << std::setw(6) << minibatches << " | " << std::setw(9)
        << num(e0e2e) << std::setw(9) << num(e0stall) << std::setw(9) << num(e0comp) << std::setw(9) << num(e0energy, 1)
        << " | " << std::setw(9) << num(mean(sum_e2e)) << std::setw(9) << num(mean(sum_stall)) << std::setw(9)
        << num(mean(sum_comp)) << std::setw(9) << (energy_ok ? num(mean(sum_energy), 1) : std::string("-")) << "\n";
    if (!str(r, "error").empty() && str(r, "error") != "-" && str(r, "status") != "done")
      out << "      error: " << str(r, "error") << "\n";
    if (!throttle_note.empty()) out << "      THROTTLED: " << throttle_note << "\n";
  }
  out << "\nconfiguration: the state each run executed in, read back from the board (cores/CPU/GPU/EMC MHz,\n"
         "nvpmodel mode, pin = clocks pinned), then the axes that vary across the campaign; (..) = requested,\n"
         "not started yet\n";
  if (!devices.empty()) {
    out << "trained on:";
    for (const auto& [d, n] : devices) out << " " << d << " (" << n << (n == 1 ? " run)" : " runs)");
    out << "\n";
  }
  if (throttled_epochs > 0)
    out << throttled_epochs << " epochs were throttled (a clock or the cores left the applied state): see THROTTLED\n";
  out << "times in seconds per epoch; e0 = epoch 0, 1+ = mean of epochs 1 and later; J = energy per epoch";
  if (integer(report, "simulated_runs") > 0) out << "; * = simulated";
  out << "\n";
  return out.str();
}

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_tty) {
  std::string controller = std::getenv("JETSWEEP_CONTROLLER") ? std::getenv("JETSWEEP_CONTROLLER") : "http://127.0.0.1:8420";
  std::string token = std::getenv("JETSWEEP_API_TOKEN") ? std::getenv("JETSWEEP_API_TOKEN") : "";
  std::vector<std::string> rest;
  bool as_json = false;
  bool estimate = false;
  std::string dry_run_query;   // "?max_runs=..." from --dry-run
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--controller") {
      if (i + 1 >= args.size()) {
        err << "jetsweep: --controller: missing value\n";
        return 2;
      }
      controller = args[++i];
    } else if (args[i] == "--token") {
      if (i + 1 >= args.size()) {
        err << "jetsweep: --token: missing value\n";
        return 2;
      }
      token = args[++i];
    } else if (args[i] == "--json") {
      as_json = true;
    } else if (args[i] == "--estimate") {
      estimate = true;
    } else if (args[i] == "--dry-run") {
      if (i + 1 >= args.size()) {
        err << "jetsweep: --dry-run needs RUNS[:EPOCHS[:MINIBATCHES]]\n";
        return 2;
      }
      const std::string spec = args[++i];
      const std::string keys[] = {"max_runs", "max_epochs", "max_minibatches"};
      size_t start = 0;
      for (size_t k = 0; k < 3 && start <= spec.size(); ++k) {
        const size_t colon = spec.find(':', start);
        dry_run_query += (dry_run_query.empty() ? "?" : "&") + keys[k] + "=" + spec.substr(start, colon - start);
        if (colon == std::string::npos) break;
        start = colon + 1;
      }
      if (auto caps = parse_dry_run_caps(dry_run_query.substr(1)); !caps) {
        err << "jetsweep: --dry-run '" << spec << "': " << caps.status().message() << "\n";
        return 2;
      }
    } else if (args[i] == "--help" || args[i] == "-h" || args[i] == "help") {
      out << kUsage;
      return 0;
    } else {
      rest.push_back(args[i]);
    }
  }
  if (rest.empty()) {
    err << kUsage;
    return 2;
  }
  const std::string cmd = rest[0];
  auto need_args = [&](size_t n, const char* what) {
    if (rest.size() - 1 < n || rest.size() - 1 > n) {
      err << "jetsweep " << cmd << ": expected " << what << "\n" << kUsage;
      return false;
    }
    return true;
  };
  auto api = [&](const std::string& method, const std::string& target, const std::string& body,
                 const std::vector<std::pair<std::string, std::string>>& headers) -> Result<bj::value> {
    auto all_headers = headers;
    if (!token.empty()) all_headers.emplace_back("Authorization", "Bearer " + token);
    auto r = http_request(controller, method, target, body, all_headers);
    if (!r) return r.status();
    bj::error_code ec;
    auto v = bj::parse(r->body, ec);
    if (ec) return protocol_error("controller answered HTTP " + std::to_string(r->status) + " with a body that is not JSON");
    if (r->status >= 400) {
      std::string msg = v.is_object() && v.as_object().contains("error") ? str(v.as_object(), "error") : r->body;
      return Status(r->status == 404 ? Code::kNotFound
                    : r->status == 400 || r->status == 401 ? Code::kInvalidArgument
                                                           : Code::kInternal,
                    msg);
    }
    return v;
  };
  auto fail = [&](const Status& s) {
    err << "jetsweep " << cmd << ": " << s.message() << "\n";
    return s.code() == Code::kInvalidArgument || s.code() == Code::kNotFound ? 2 : 1;
  };

  // A campaign file: read and checked here first (errors point at FILE:LINE:COL without a round trip),
  // then posted as YAML to `target` when asked.
  std::string campaign_text;
  auto load_campaign_arg = [&]() -> Result<Campaign> {
    JS_ASSIGN_OR_RETURN(campaign_text, read_text_file(rest[1]));
    return parse_campaign(campaign_text, rest[1]);
  };
  auto post_campaign = [&](const std::string& target) {
    return api("POST", target, campaign_text, {{"X-Jetsweep-Source", rest[1]}, {"Content-Type", "application/yaml"}});
  };
  auto report_bad_campaign = [&](const Status& s) {
    if (s.code() != Code::kInvalidArgument) return fail(s);
    err << s.message() << "\n";
    return 2;
  };

  if (cmd == "validate") {
    if (!need_args(1, "FILE")) return 2;
    auto c = load_campaign_arg();
    if (!c) return report_bad_campaign(c.status());
    std::optional<bj::object> est;
    if (estimate) {
      auto r = post_campaign("/api/campaigns/estimate");
      if (!r) return fail(r.status());
      est = r->as_object();
    }
    std::map<std::string, int64_t> per_device;
    int64_t epochs = 0;
    // The papers' board model: training time per device target (a class's runs on one board of it).
    struct Modelled {
      double seconds = 0;
      int64_t runs = 0;
      std::string why_not;   // first reason a run is not modelled
      int64_t not_modelled = 0;
    };
    std::map<std::string, Modelled> modelled;
    sim::RunTimeModel run_time;
    for (const auto& r : c->runs) {
      per_device[r.device]++;
      epochs += r.epochs;
      auto& m = modelled[r.device];
      const std::string cls = device_target_class(r.device);
      Result<double> s = cls.empty() || cls == "host"
                             ? Result<double>(invalid_argument("'" + r.device + "' is not a Jetson board class (the model "
                                                               "covers " + join(board_classes()) + ")"))
                             : run_time.run_seconds(r, cls);
      if (s) {
        m.seconds += s.value();
        ++m.runs;
      } else {
        if (m.not_modelled++ == 0) m.why_not = s.status().message();
      }
    }
    double modelled_wall = 0;
    for (const auto& [d, m] : modelled) modelled_wall = std::max(modelled_wall, m.seconds);
    if (as_json) {
      bj::object o;
      o["campaign"] = c->name;
      o["runs"] = c->runs.size();
      o["epochs"] = epochs;
      bj::object pd;
      for (const auto& [d, n] : per_device) pd[d] = n;
      o["runs_per_device"] = std::move(pd);
      bj::array md;
      for (const auto& [d, m] : modelled) {
        bj::object x;
        x["device"] = d;
        x["runs_modelled"] = m.runs;
        x["training_s"] = m.seconds;
        x["runs_not_modelled"] = m.not_modelled;
        if (m.not_modelled) x["why_not"] = m.why_not;
        md.push_back(std::move(x));
      }
      bj::object mo;
      mo["per_device"] = std::move(md);
      mo["wall_s_one_board_per_device"] = modelled_wall;
      o["modelled"] = std::move(mo);
      if (est) o["estimate"] = *est;
      out << bj::serialize(o) << "\n";
    } else {
      out << rest[1] << ": campaign '" << c->name << "' expands to " << c->runs.size() << " runs (" << epochs
          << " epochs)\n";
      for (const auto& [d, n] : per_device) {
        const auto& m = modelled[d];
        out << "  device " << d << ": " << n << " runs"
            << (is_every_instance(d) ? " per enrolled board (expanded at submission)" : "");
        if (m.runs > 0) out << "; modelled " << format_duration(m.seconds) << " of training on one board";
        if (m.not_modelled > 0) out << "; " << m.not_modelled << " runs not modelled: " << m.why_not;
        out << "\n";
      }
      if (modelled_wall > 0)
        out << "modelled duration with one board per device: " << format_duration(modelled_wall)
            << " (the papers' calibrated board model, docs/SIMULATION.md)\n";
      if (est) {
        out << "estimated duration: " << format_duration(est->at("estimated_wall_s").as_double())
            << " (from the epoch times measured so far)\n";
        for (const auto& tv : est->at("per_device").as_array()) {
          const auto& t = tv.as_object();
          out << "  " << str(t, "device") << ": " << integer(t, "runs") << " runs, "
              << format_duration(t.at("run_seconds").as_double()) << " of training on " << integer(t, "boards")
              << " boards";
          if (integer(t, "runs_without_measurement") > 0)
            out << "; " << integer(t, "runs_without_measurement") << " runs have no measurement to go by";
          out << "\n";
        }
      } else {
        out << "(--estimate: its duration from the epoch times the controller has measured)\n";
      }
    }
    return 0;
  }
  if (cmd == "submit") {
    if (!need_args(1, "FILE")) return 2;
    auto c = load_campaign_arg();
    if (!c) return report_bad_campaign(c.status());
    auto r = post_campaign("/api/campaigns" + dry_run_query);
    if (!r) return fail(r.status());
    if (as_json) out << bj::serialize(r.value()) << "\n";
    else out << "submitted campaign " << integer(r->as_object(), "campaign_id") << " (" << str(r->as_object(), "name")
             << ") with " << integer(r->as_object(), "runs") << " runs\n";
    return 0;
  }
  if (cmd == "status") {
    if (rest.size() > 2) return need_args(1, "[CAMPAIGN]") ? 0 : 2;
    auto r = rest.size() == 2 ? api("GET", "/api/campaigns/" + rest[1], "", {}) : api("GET", "/api/campaigns", "", {});
    if (!r) return fail(r.status());
    if (as_json) {
      out << bj::serialize(r.value()) << "\n";
    } else if (r->is_array()) {
      if (r->as_array().empty()) out << "no campaigns\n";
      for (const auto& s : r->as_array()) out << format_status(s.as_object(), out_is_tty) << "\n";
    } else {
      out << format_status(r->as_object(), out_is_tty) << "\n";
    }
    return 0;
  }
  if (cmd == "report") {
    if (!need_args(1, "CAMPAIGN")) return 2;
    auto r = api("GET", "/api/campaigns/" + rest[1] + "/report", "", {});
    if (!r) return fail(r.status());
    if (as_json) out << bj::serialize(r.value()) << "\n";
    else out << format_report(r->as_object());
    return 0;
  }
  if (cmd == "pause" || cmd == "resume" || cmd == "cancel") {
    if (!need_args(1, "CAMPAIGN")) return 2;
    auto r = api("POST", "/api/campaigns/" + rest[1] + "/" + cmd, "", {});
    if (!r) return fail(r.status());
    if (as_json) out << bj::serialize(r.value()) << "\n";
    else out << format_status(r->as_object(), false) << "\n";
    return 0;
  }
  if (cmd == "cancel-run") {
    if (!need_args(1, "RUN_ID")) return 2;
    auto r = api("POST", "/api/runs/" + rest[1] + "/cancel", "", {});
    if (!r) return fail(r.status());
    if (as_json) {
      out << bj::serialize(r.value()) << "\n";
    } else {
      const auto& o = r->as_object();
      out << "run " << integer(o, "run_id") << " (campaign " << integer(o, "campaign_id") << "): " << str(o, "status")
          << (o.at("stopping").as_bool() ? ", being stopped on " + str(o, "agent") : std::string()) << "\n";
    }
    return 0;
  }
  if (cmd == "agents") {
    if (!need_args(0, "no arguments")) return 2;
    auto r = api("GET", "/api/agents", "", {});
    if (!r) return fail(r.status());
    if (as_json) {
      out << bj::serialize(r.value()) << "\n";
      return 0;
    }
    for (const auto& av : r->as_array()) {
      const auto& a = av.as_object();
      out << integer(a, "agent_id") << "  " << str(a, "name") << "  " << str(a, "device_class") << "  "
          << (a.at("connected").as_bool() ? "connected" : "disconnected") << "  run " << str(a, "current_run") << "  "
          << str(a, "hostname") << ", " << integer(a, "cpus") << " cpus, torch " << str(a, "torch_version") << ", "
          << str(a, "git_sha") << ", trains on " << str(a, "accelerator") << "\n";
      // A board that is not ready for what it was asked (jetsweep-agent doctor on it says more).
      if (a.contains("not_ready") && a.at("not_ready").is_array())
        for (const auto& why : a.at("not_ready").as_array())
          if (why.is_string()) out << "    NOT READY: " << why.get_string().c_str() << "\n";
    }
    return 0;
  }
  err << "jetsweep: unknown command '" << cmd << "'\n" << kUsage;
  return 2;
}

}  // namespace jetsweep::cli

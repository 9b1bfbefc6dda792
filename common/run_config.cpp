#include "common/run_config.hpp"

#include <algorithm>

#include "common/json_fields.hpp"

namespace jetsweep {

const double kDefaultSampleHz = 100.0;

const std::vector<std::string>& known_models() {
  // agent/models/registry.cpp builds each; mobilenet_v3 (the name agent/sim calibrates) = the large variant.
  static const std::vector<std::string> kModels = {"lenet5",   "mobilenet_v3",      "mobilenet_v3_large", "mobilenet_v3_small",
                                                   "resnet18", "resnet18_imagenet", "vgg11",              "lstm"};
  return kModels;
}

bool is_torchscript_model(const std::string& model) { return model.rfind(kTorchScriptPrefix, 0) == 0; }

bool is_sha256_hex(const std::string& text) {
  if (text.size() != 64) return false;
  for (char ch : text)
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  return true;
}

std::string torchscript_sha256(const std::string& model) {
  if (!is_torchscript_model(model)) return "";
  const std::string hex = model.substr(std::char_traits<char>::length(kTorchScriptPrefix));
  return is_sha256_hex(hex) ? hex : "";
}

const std::vector<std::string>& known_datasets() {
  static const std::vector<std::string> kDatasets = {"fashion-mnist", "mnist",       "cifar10",
                                                     "gld23k",        "imagefolder", "text"};
  return kDatasets;
}

std::string default_data_path(const std::string& dataset) {
  if (dataset == "fashion-mnist") return "/usr/share/datasets/fashion-mnist";
  if (dataset == "mnist") return "/usr/share/datasets/mnist";
  // Not packaged by Debian: where docs/WORKLOADS.md tells operators to unpack them.
  if (dataset == "cifar10") return "/usr/share/datasets/cifar10";
  if (dataset == "gld23k") return "/usr/share/datasets/gld23k";
  if (dataset == "imagefolder") return "/usr/share/datasets/imagefolder";
  if (dataset == "text") return "/usr/share/datasets/wikitext-2";
  return "";
}

int64_t known_train_samples(const std::string& dataset) {
  if (dataset == "fashion-mnist" || dataset == "mnist") return 60000;
  if (dataset == "cifar10") return 50000;   // SIGMETRICS'23 Table 2
  if (dataset == "gld23k") return 23080;    // SIGMETRICS'23 Table 2
  return 0;
}

int64_t required_memory_bytes(const RunConfig& c, std::string* why) {
  if (c.min_memory_mb <= 0) return 0;
  if (why) *why = "min_memory_mb: " + std::to_string(c.min_memory_mb);
  return c.min_memory_mb * (int64_t{1} << 20);
}

std::vector<std::string> classes_without_room(const RunConfig& c, std::string* why) {
  if (c.model == "resnet18" || c.model == "resnet18_imagenet") {
    if (why) *why = "SIGMETRICS'23 Table 2: ResNet-18 runs out of memory on the Xavier NX and the Nano";
    return {"xavier-nx", "nano"};
  }
  if (c.model == "mobilenet_v3" || c.model == "mobilenet_v3_large") {
    if (why) *why = "SIGMETRICS'23 Table 2: MobileNet v3 runs out of memory on the Nano";
    return {"nano"};
  }
  return {};
}

boost::json::object to_json(const RunConfig& c) {
  boost::json::object o;
  o["device"] = c.device;
  o["model"] = c.model;
  o["dataset"] = c.dataset;
  o["data"] = c.data;
  o["batch_size"] = c.batch_size;
  o["workers"] = c.workers;
  o["prefetch"] = c.prefetch;
  o["epochs"] = c.epochs;
  o["threads"] = c.threads;
  o["seed"] = c.seed;
  o["repetition"] = c.repetition;
  o["drop_caches"] = c.drop_caches;
  o["sample_hz"] = c.sample_hz;
  o["max_minibatches"] = c.max_minibatches;
  if (c.has_power_mode()) {
    boost::json::object pm;
    if (!c.power_mode_name.empty()) pm["name"] = c.power_mode_name;
    if (c.cores > 0) pm["cores"] = c.cores;
    if (c.cpu_khz > 0) pm["cpu_khz"] = c.cpu_khz;
    if (c.gpu_hz > 0) pm["gpu_hz"] = c.gpu_hz;
    if (c.emc_hz > 0) pm["emc_hz"] = c.emc_hz;
    o["power_mode"] = std::move(pm);
  }
  if (!c.base_mode.empty()) o["base_mode"] = c.base_mode;
  o["pin_clocks"] = c.pin_clocks;
  if (c.fan_max) o["fan_max"] = true;
  if (!c.accelerator.empty()) o["accelerator"] = c.accelerator;
  if (!c.timing.empty()) o["timing"] = c.timing;
  if (c.min_memory_mb > 0) o["min_memory_mb"] = c.min_memory_mb;
  return o;
}

Status from_json(const boost::json::value& v, const std::string& where, RunConfig& out) {
  if (!v.is_object()) return protocol_error(where + ": expected an object, got " + json::kind_name(v));
  JS_ASSIGN_OR_RETURN(out, run_config_from_json(v.get_object(), where + ","));
  return Status::ok();
}

Result<RunConfig> run_config_from_json(const boost::json::object& o, const std::string& where) {
  json::FieldReader r(o, where);
  RunConfig c;
  c.device = r.opt_string("device").value_or(c.device);
  c.model = r.string("model");
  c.dataset = r.string("dataset");
  c.data = r.opt_string("data").value_or("");
  c.batch_size = r.integer("batch_size");
  c.workers = r.integer("workers");
  c.prefetch = r.integer("prefetch");
  c.epochs = r.integer("epochs");
  c.threads = r.opt_integer("threads").value_or(c.threads);
  c.seed = r.opt_integer("seed").value_or(c.seed);
  c.repetition = r.opt_integer("repetition").value_or(0);
  c.drop_caches = r.opt_boolean("drop_caches").value_or(false);
  c.sample_hz = r.opt_number("sample_hz").value_or(c.sample_hz);
  c.max_minibatches = r.opt_integer("max_minibatches").value_or(0);
  c.base_mode = r.opt_string("base_mode").value_or("");
  c.pin_clocks = r.opt_boolean("pin_clocks").value_or(false);
  c.fan_max = r.opt_boolean("fan_max").value_or(false);
  c.accelerator = r.opt_string("accelerator").value_or("");
  c.timing = r.opt_string("timing").value_or("");
  c.min_memory_mb = r.opt_integer("min_memory_mb").value_or(0);
  if (auto it = o.find("power_mode"); it != o.end() && !it->value().is_null()) {
    if (!it->value().is_object()) {
      r.fail("power_mode", std::string("expected an object, got ") + json::kind_name(it->value()));
    } else {
      json::FieldReader pm(it->value().get_object(), where + " field 'power_mode',");
      c.power_mode_name = pm.opt_string("name").value_or("");
      c.cores = pm.opt_integer("cores").value_or(0);
      c.cpu_khz = pm.opt_integer("cpu_khz").value_or(0);
      c.gpu_hz = pm.opt_integer("gpu_hz").value_or(0);
      c.emc_hz = pm.opt_integer("emc_hz").value_or(0);
      if (!pm.ok()) return pm.status();
    }
  }
  if (!r.ok()) return r.status();
  auto problems = check_ranges(c);
  if (!problems.empty()) {
    return protocol_error(where + " field '" + problems.front().key + "': " + problems.front().what);
  }
  return c;
}

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
}
}  // namespace

std::vector<ConfigProblem> check_ranges(const RunConfig& c) {
  std::vector<ConfigProblem> p;
  const auto& models = known_models();
  if (is_torchscript_model(c.model)) {
    if (torchscript_sha256(c.model).empty())
      p.push_back({"model", "'" + c.model + "' must be torchscript:<the SHA-256 of the model file, 64 lowercase hex digits>"});
  } else if (std::find(models.begin(), models.end(), c.model) == models.end())
    p.push_back({"model", "unknown model '" + c.model + "' (known: " + join(models) + ")"});
  const auto& datasets = known_datasets();
  if (std::find(datasets.begin(), datasets.end(), c.dataset) == datasets.end())
    p.push_back({"dataset", "unknown dataset '" + c.dataset + "' (known: " + join(datasets) + ")"});
  if (c.batch_size < 1 || c.batch_size > 65536) p.push_back({"batch_size", "must be between 1 and 65536"});
  if (c.workers < 0 || c.workers > 64) p.push_back({"workers", "must be between 0 and 64"});
  if (c.prefetch < 1 || c.prefetch > 64) p.push_back({"prefetch", "must be between 1 and 64"});
  if (c.epochs < 1 || c.epochs > 100000) p.push_back({"epochs", "must be between 1 and 100000"});
  if (c.threads < 1 || c.threads > 256) p.push_back({"threads", "must be between 1 and 256"});
  if (c.seed < 0) p.push_back({"seed", "must be >= 0"});
  if (c.min_memory_mb < 0 || c.min_memory_mb > 16 * 1024 * 1024) p.push_back({"min_memory_mb", "must be between 0 and 16777216"});
  if (c.repetition < 0) p.push_back({"repetition", "must be >= 0"});
  if (!(c.sample_hz > 0.0 && c.sample_hz <= 1000.0)) p.push_back({"sample_hz", "must be in (0, 1000]"});
  if (c.max_minibatches < 0) p.push_back({"max_minibatches", "must be >= 0"});
  if (c.device.empty()) p.push_back({"device", "must not be empty"});
  if (!c.accelerator.empty() && c.accelerator != "auto" && c.accelerator != "cuda" && c.accelerator != "cpu")
    p.push_back({"accelerator", "must be auto, cuda or cpu, not '" + c.accelerator + "'"});
  if (!c.timing.empty() && c.timing != "paper" && c.timing != "pipelined")
    p.push_back({"timing", "must be paper or pipelined, not '" + c.timing + "'"});
  if (c.cores < 0 || c.cores > 256) p.push_back({"power_mode", "cores must be between 1 and 256"});
  if (c.cpu_khz < 0 || c.gpu_hz < 0 || c.emc_hz < 0) p.push_back({"power_mode", "frequencies must be positive"});
  if (!c.power_mode_name.empty() && (c.cores || c.cpu_khz || c.gpu_hz || c.emc_hz))
    p.push_back({"power_mode", "give either a named mode or explicit settings, not both"});
  if (!c.power_mode_name.empty() && !c.base_mode.empty())
    p.push_back({"base_mode", "applies to runs without a named power mode (a named mode is its own base)"});
  return p;
}

}  // namespace jetsweep

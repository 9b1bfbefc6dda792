#include "common/run_config.hpp"

#include <algorithm>

#include "common/described_json.hpp"
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

boost::json::object to_json(const RunConfig& c) { return json::described_to_json(c); }

Status from_json(const boost::json::value& v, const std::string& where, RunConfig& out) {
  if (!v.is_object()) return protocol_error(where + ": expected an object, got " + json::kind_name(v));
  JS_ASSIGN_OR_RETURN(out, run_config_from_json(v.get_object(), where + ","));
  return Status::ok();
}

Result<RunConfig> run_config_from_json(const boost::json::object& o, const std::string& where) {
  json::FieldReader r(o, where);
  RunConfig c;
  json::read_described(r, c);
  if (r.ok()) validate(r, c);
  if (!r.ok()) return r.status();
  return c;
}

void validate(json::FieldReader& r, const RunConfig& c) {
  auto problems = check_ranges(c);
  if (!problems.empty()) r.fail(problems.front().key.c_str(), problems.front().what);
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
  const PowerModeRequest& pm = c.power_mode;
  if (pm.cores < 0 || pm.cores > 256) p.push_back({"power_mode", "cores must be between 1 and 256"});
  if (pm.cpu_khz < 0 || pm.gpu_hz < 0 || pm.emc_hz < 0) p.push_back({"power_mode", "frequencies must be positive"});
  if (!pm.name.empty() && (pm.cores || pm.cpu_khz || pm.gpu_hz || pm.emc_hz))
    p.push_back({"power_mode", "give either a named mode or explicit settings, not both"});
  if (!c.power_mode.name.empty() && !c.base_mode.empty())
    p.push_back({"base_mode", "applies to runs without a named power mode (a named mode is its own base)"});
  return p;
}

}  // namespace jetsweep

// GPU presets: configs/gpus/<name>.json.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/gpu_presets.h"
#include "core/json_reader.h"

namespace gpubudget {

namespace {

GpuSpec parse_gpu(const std::filesystem::path& path) {
  const nlohmann::json json = detail::parse_json(detail::read_text_file(path.string()), path.string());
  const detail::JsonReader r(json, path.string());
  r.reject_unknown_keys({"schema_version", "name", "device_name", "memory_bytes", "memory_source", "nvidia_smi_mib",
                         "platform", "compute_capability", "nvlink", "memory_estimated", "multiprocessors", "notes"});
  if (r.integer("schema_version", 1, 1) != 1) r.fail("schema_version", "1");
  GpuSpec g;
  g.name = r.string("name");
  g.device_name = r.string("device_name");
  g.memory = Bytes(r.integer("memory_bytes", 1, std::int64_t{1} << 50));
  g.memory_source = r.optional_string("memory_source").value_or("");
  g.nvidia_smi_mib = r.optional_integer("nvidia_smi_mib", 0, std::int64_t{1} << 30).value_or(0);
  const auto platform = r.string("platform");
  if (platform == "cuda") {
    g.platform = Platform::kCuda;
    const auto cc = parse_compute_capability(r.string("compute_capability"));
    if (!cc) r.fail("compute_capability", "\"major.minor\", e.g. \"9.0\" (major 1 to 99, minor 0 to 9)");
    g.compute_capability_major = cc->major;
    g.compute_capability_minor = cc->minor;
  } else if (platform == "rocm") {
    g.platform = Platform::kRocm;
  } else {
    r.fail("platform", "\"cuda\" or \"rocm\"");
  }
  g.nvlink = r.boolean("nvlink", true);
  g.memory_estimated = r.boolean("memory_estimated", false);
  g.multiprocessors = r.optional_integer("multiprocessors", 1, 100000).value_or(0);
  return g;
}

}  // namespace

namespace {

// A GPU name as compared: lower case, without '-', '_', ' ' and '.'.
std::string folded_gpu_name(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == ' ' || c == '.') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

// The preset `name` means when it is no preset's file name: a preset name or an alias of
// configs/gpu-aliases.json, folded; "" when none.
std::string preset_meant(const std::string& name, const ConfigDir& configs, const std::vector<std::string>& presets) {
  const std::string folded = folded_gpu_name(name);
  if (folded.empty()) return "";
  for (const auto& preset : presets) {
    if (folded_gpu_name(preset) == folded) return preset;
  }
  const auto aliases_path = configs.root / "gpu-aliases.json";
  std::error_code ec;
  if (!std::filesystem::exists(aliases_path, ec)) return "";  // a config folder of one's own may have none
  const std::string path = aliases_path.string();
  const nlohmann::json json = detail::parse_json(detail::read_text_file(path), path);
  const detail::JsonReader r(json, path);
  const detail::JsonReader aliases = r.object("aliases");
  for (const auto& [alias, preset] : json.at("aliases").items()) {
    if (folded_gpu_name(alias) != folded) continue;
    const std::string target = aliases.string(alias);
    if (std::find(presets.begin(), presets.end(), target) == presets.end()) {
      throw InputError(fmt::format("{}:/aliases/{}: \"{}\" is no GPU preset", path, alias, target));
    }
    return target;
  }
  return "";
}

// `--gpu FILE`: a name ending in ".json" is a file in the preset format, not a preset's name.
bool names_a_json_file(const std::string& name) {
  constexpr std::string_view kSuffix = ".json";
  if (name.size() <= kSuffix.size()) return false;
  std::string tail = name.substr(name.size() - kSuffix.size());
  std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return tail == kSuffix;
}

}  // namespace

GpuSpec load_gpu_preset(const std::string& name, const ConfigDir& configs) {
  std::error_code ec;
  if (names_a_json_file(name)) {
    // A GPU of one's own, in the preset format (docs/gpus.md).
    if (!std::filesystem::is_regular_file(name, ec)) {
      throw InputError(fmt::format("--gpu {}: no such file (a GPU file is a JSON preset, docs/gpus.md)", name));
    }
    return parse_gpu(name);
  }
  const auto path = configs.root / "gpus" / (name + ".json");
  if (name.find('/') == std::string::npos && std::filesystem::exists(path, ec)) return parse_gpu(path);
  std::vector<std::string> names;
  for (const auto& g : list_gpu_presets(configs)) names.push_back(g.name);
  if (name.find('/') == std::string::npos) {
    if (const std::string meant = preset_meant(name, configs, names); !meant.empty()) {
      return parse_gpu(configs.root / "gpus" / (meant + ".json"));
    }
  }
  throw InputError(fmt::format("--gpu {}: no such preset (known: {}; or give --gpu-memory)", name, fmt::join(names, ", ")));
}

std::vector<GpuSpec> list_gpu_presets(const ConfigDir& configs) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(configs.root / "gpus", ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<GpuSpec> out;
  for (const auto& f : files) out.push_back(parse_gpu(f));
  return out;
}

std::vector<GpuSpec> load_stage_gpus(const std::vector<std::string>& names, std::optional<Bytes> memory,
                                     std::int64_t pipeline_parallel_size, const ConfigDir& configs) {
  std::vector<GpuSpec> gpus;
  if (names.empty()) {
    if (!memory) throw InputError("--gpu: give a GPU preset (see `gpubudget gpus`) or --gpu-memory SIZE");
    gpus.push_back(custom_gpu(*memory));
    return gpus;
  }
  for (const auto& name : names) {
    GpuSpec gpu = load_gpu_preset(name, configs);
    if (memory) {
      gpu.memory = *memory;
      gpu.memory_source = "--gpu-memory";
    }
    gpus.push_back(std::move(gpu));
  }
  if (gpus.size() > 1 && static_cast<std::int64_t>(gpus.size()) != pipeline_parallel_size) {
    throw InputError(fmt::format("--gpu lists {} GPUs: give one, or one per pipeline stage (--pipeline-parallel-size {})",
                                 gpus.size(), pipeline_parallel_size));
  }
  return gpus;
}

std::string gpu_preset_for_device_name(std::string_view device_name, const ConfigDir& configs) {
  const std::string path = (configs.root / "gpu-names.json").string();
  const nlohmann::json json = detail::parse_json(detail::read_text_file(path), path);
  const detail::JsonReader r(json, path);
  r.reject_unknown_keys({"schema_version", "description", "rules"});
  if (r.integer("schema_version", 1, 1) != 1) r.fail("schema_version", "1");
  if (!json.contains("rules") || !json["rules"].is_array()) r.fail("rules", "an array");
  for (std::size_t i = 0; i < json["rules"].size(); ++i) {
    const detail::JsonReader rule(json["rules"][i], path, fmt::format("/rules/{}", i));
    rule.reject_unknown_keys({"contains", "excludes", "preset"});
    const auto texts = rule.string_list("contains");
    if (texts.empty()) rule.fail("contains", "a non-empty array of texts");
    const auto excluded = rule.has("excludes") ? rule.string_list("excludes") : std::vector<std::string>{};
    const auto in_name = [&](const std::string& t) { return device_name.find(t) != std::string_view::npos; };
    if (std::all_of(texts.begin(), texts.end(), in_name) && std::none_of(excluded.begin(), excluded.end(), in_name)) {
      return rule.string("preset");
    }
  }
  return "";
}

std::optional<GpuSpec> find_gpu_preset_by_memory(const ConfigDir& configs, double total_gib) {
  if (!(total_gib > 0)) return std::nullopt;
  // The measured presets within 0.5% (drivers move the total by ~0.1%), nearest first. A preset whose
  // total is estimated from another GPU's (H800 from H100) is never inferred from a total.
  std::vector<std::pair<double, GpuSpec>> near;
  for (GpuSpec& g : list_gpu_presets(configs)) {
    const double distance = std::fabs(to_gib(g.memory) - total_gib);
    if (g.memory_estimated || distance / total_gib > 0.005) continue;
    near.emplace_back(distance, std::move(g));
  }
  if (near.empty()) return std::nullopt;
  std::sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // Two presets about as near (a log prints two decimals): do not guess.
  if (near.size() > 1 && near[1].first - near[0].first < 0.01) return std::nullopt;
  return near.front().second;
}

std::optional<ComputeCapability> parse_compute_capability(std::string_view text) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto digits = [](std::string_view part, int max) -> std::optional<int> {
    if (part.empty() || part.size() > 2 || part.find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
    const int value = std::stoi(std::string(part));
    if (value > max) return std::nullopt;
    return value;
  };
  const auto major = digits(text.substr(0, dot), 99);
  const auto minor = digits(text.substr(dot + 1), 9);
  if (!major || !minor || *major < 1) return std::nullopt;
  return ComputeCapability{*major, *minor};
}

GpuSpec custom_gpu(Bytes memory, std::optional<ComputeCapability> compute_capability) {
  const ComputeCapability cc = compute_capability.value_or(ComputeCapability{9, 0});
  GpuSpec g;
  g.name = "custom";
  g.device_name = "custom";
  g.memory = memory;
  g.platform = Platform::kCuda;
  // Attention backends (and so block sizes) depend on the architecture.
  g.compute_capability_major = cc.major;
  g.compute_capability_minor = cc.minor;
  g.memory_source = compute_capability ? "--gpu-memory"
                                       : "--gpu-memory (compute capability assumed 9.0 for backend choice)";
  return g;
}

}  // namespace gpubudget

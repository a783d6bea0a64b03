// vLLM version profiles: configs/vllm/<version>.json.
#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/load.h"
#include "json_reader.h"
#include "profile_reader.h"

namespace gpubudget {

namespace {

bool parse_version(const std::string& text, std::array<int, 3>& out) {
  const auto parsed = parse_vllm_version(text);
  if (parsed) out = *parsed;
  return parsed.has_value();
}

Bytes gib_field(const detail::JsonReader& r, std::string_view key) {
  return bytes_from_double(r.number(key, 0, 1024) * static_cast<double>(kGiB));
}

}  // namespace

VllmProfile detail::parse_vllm_profile(const std::string& text, const std::string& path) {
  const nlohmann::json json = detail::parse_json(text, path);
  const detail::JsonReader r(json, path);
  r.reject_unknown_keys({"schema_version", "version", "description", "default_gpu_memory_utilization",
                         "charges_cudagraph_memory", "kv_tokens_from_concurrency", "mamba_cache_mode", "messages", "batch_defaults",
                         "attention_backends", "mxfp4_moe_backends", "overheads", "calibration", "sources"});
  if (r.integer("schema_version", 1, 1) != 1) r.fail("schema_version", "1");
  VllmProfile p;
  p.source = path;
  p.version = r.string("version");
  p.description = r.optional_string("description").value_or("");
  p.default_gpu_memory_utilization = r.number("default_gpu_memory_utilization", 0.01, 1.0);
  p.charges_cudagraph_memory = r.boolean("charges_cudagraph_memory", false);
  p.kv_tokens_from_concurrency = r.boolean("kv_tokens_from_concurrency", false);
  if (r.has("mamba_cache_mode")) {
    try {
      p.mamba_cache_mode = parse_mamba_cache_mode(r.string("mamba_cache_mode"), r.path("mamba_cache_mode"));
    } catch (const InputError&) {
      r.fail("mamba_cache_mode", "\"none\" or \"align\"");
    }
  }

  const detail::JsonReader m = r.object("messages");
  m.reject_unknown_keys({"kv_cache_too_small", "estimate_sentence", "no_kv_memory", "gib_format"});
  p.messages.kv_cache_too_small = m.string("kv_cache_too_small");
  p.messages.estimate_sentence = m.string("estimate_sentence");
  p.messages.no_kv_memory = m.string("no_kv_memory");
  const auto gib_format = m.string("gib_format");
  if (gib_format != "fixed2" && gib_format != "format_gib") m.fail("gib_format", "\"fixed2\" or \"format_gib\"");
  p.messages.gib_fixed_two_decimals = gib_format == "fixed2";

  if (!json.contains("batch_defaults")) r.fail("batch_defaults", "an array");
  const auto& batch = json.at("batch_defaults");
  if (!batch.is_array()) r.fail("batch_defaults", "an array");
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const detail::JsonReader b(batch[i], path, fmt::format("/batch_defaults/{}", i));
    b.reject_unknown_keys({"min_memory_gib", "excluded_device_substring", "max_num_batched_tokens", "max_num_seqs",
                           "llm_class_max_num_batched_tokens", "llm_class_max_num_seqs"});
    BatchDefaults defaults{b.number("min_memory_gib", 0, 1e6),
                           b.optional_string("excluded_device_substring").value_or(""),
                           b.integer("max_num_batched_tokens", 1, std::int64_t{1} << 30),
                           b.integer("max_num_seqs", 1, std::int64_t{1} << 20), 0, 0};
    defaults.llm_class_max_num_batched_tokens =
        b.optional_integer("llm_class_max_num_batched_tokens", 1, std::int64_t{1} << 30)
            .value_or(defaults.max_num_batched_tokens);
    defaults.llm_class_max_num_seqs =
        b.optional_integer("llm_class_max_num_seqs", 1, std::int64_t{1} << 20).value_or(defaults.max_num_seqs);
    p.batch_defaults.push_back(defaults);
  }
  if (!json.contains("attention_backends")) r.fail("attention_backends", "an array");
  const auto& backends = json.at("attention_backends");
  if (!backends.is_array()) r.fail("attention_backends", "an array");
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const detail::JsonReader b(backends[i], path, fmt::format("/attention_backends/{}", i));
    b.reject_unknown_keys({"name", "kind", "platform", "compute_capability_majors", "kv_cache_dtypes", "block_size",
                           "quantized_kv_layout", "note"});
    AttentionBackend a;
    a.name = b.string("name");
    const auto kind = b.string("kind");
    if (kind == "mla" || kind == "mla_sparse") a.kind = AttentionKind::kMla;
    else if (kind == "full") a.kind = AttentionKind::kFull;
    else b.fail("kind", "\"mla\", \"mla_sparse\" or \"full\"");
    a.sparse = kind == "mla_sparse";
    a.quantized_kv_layout = b.optional_string("quantized_kv_layout").value_or("");
    const auto platform = b.string("platform");
    if (platform == "cuda") a.platform = Platform::kCuda;
    else if (platform == "rocm") a.platform = Platform::kRocm;
    else b.fail("platform", "\"cuda\" or \"rocm\"");
    for (const auto cc : b.integer_list("compute_capability_majors", 1, 100)) {
      a.compute_capability_majors.push_back(static_cast<int>(cc));
    }
    a.kv_cache_dtypes = b.string_list("kv_cache_dtypes");
    a.block_size = b.integer("block_size", 1, 4096);
    p.attention_backends.push_back(std::move(a));
  }
  if (json.contains("mxfp4_moe_backends")) {
    const auto& mx = json.at("mxfp4_moe_backends");
    if (!mx.is_array()) r.fail("mxfp4_moe_backends", "an array");
    for (std::size_t i = 0; i < mx.size(); ++i) {
      const detail::JsonReader b(mx[i], path, fmt::format("/mxfp4_moe_backends/{}", i));
      b.reject_unknown_keys({"name", "compute_capability_majors", "intermediate_align", "hidden_align"});
      Mxfp4MoeBackend backend;
      backend.name = b.string("name");
      for (const auto cc : b.integer_list("compute_capability_majors", 1, 100)) {
        backend.compute_capability_majors.push_back(static_cast<int>(cc));
      }
      backend.intermediate_align = b.integer("intermediate_align", 1, 4096);
      backend.hidden_align = b.integer("hidden_align", 1, 4096);
      p.mxfp4_moe_backends.push_back(std::move(backend));
    }
  }
  const detail::JsonReader o = r.object("overheads");
  o.reject_unknown_keys({"sampler_bytes_per_logit", "forward_activation_factor", "non_torch_single_gpu_gib",
                         "non_torch_multi_nvlink_gib", "non_torch_multi_pcie_gib", "cudagraph_base_gib",
                         "cudagraph_per_layer_gib", "relative_uncertainty", "fit_notes"});
  p.overheads.sampler_bytes_per_logit = o.number("sampler_bytes_per_logit", 0, 1000);
  p.overheads.forward_activation_factor = o.number("forward_activation_factor", 0, 100);
  p.overheads.non_torch_single_gpu = gib_field(o, "non_torch_single_gpu_gib");
  p.overheads.non_torch_multi_nvlink = gib_field(o, "non_torch_multi_nvlink_gib");
  p.overheads.non_torch_multi_pcie = gib_field(o, "non_torch_multi_pcie_gib");
  p.overheads.cudagraph_base = gib_field(o, "cudagraph_base_gib");
  p.overheads.cudagraph_per_layer = gib_field(o, "cudagraph_per_layer_gib");
  p.overheads.relative_uncertainty = o.number("relative_uncertainty", 0, 10);
  return p;
}

namespace {

VllmProfile parse_profile(const std::filesystem::path& path) {
  return detail::parse_vllm_profile(detail::read_text_file(path.string()), path.string());
}

struct ProfileFile {
  std::array<int, 3> version;
  std::filesystem::path path;
};

std::vector<ProfileFile> profile_files(const ConfigDir& configs) {
  std::vector<ProfileFile> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(configs.root / "vllm", ec)) {
    if (entry.path().extension() != ".json") continue;
    std::array<int, 3> v{};
    if (parse_version(entry.path().stem().string(), v)) files.push_back({v, entry.path()});
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
  return files;
}

}  // namespace

std::optional<VllmVersionNumber> parse_vllm_version(std::string_view text) {
  if (!text.empty() && (text[0] == 'v' || text[0] == 'V')) text.remove_prefix(1);
  VllmVersionNumber out{0, 0, 0};
  std::size_t pos = 0;
  for (std::size_t part = 0; part < 3; ++part) {
    std::size_t end = pos;
    while (end < text.size() && end - pos < 7 && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == pos || end - pos > 6) return part >= 2 ? std::optional(out) : std::nullopt;
    std::from_chars(text.data() + pos, text.data() + end, out[part]);
    if (end >= text.size() || text[end] != '.') {
      return part >= 1 || end == text.size() ? std::optional(out) : std::nullopt;  // "0.15rc1", "0.15", "1"
    }
    pos = end + 1;
  }
  return out;
}

VllmProfile load_vllm_profile(const std::string& version, const ConfigDir& configs) {
  const auto files = profile_files(configs);
  if (files.empty()) {
    throw InputError(fmt::format("{}: no vLLM profiles found", (configs.root / "vllm").string()));
  }
  if (version.empty()) return parse_profile(files.back().path);
  std::array<int, 3> wanted{};
  if (!parse_version(version, wanted)) {
    throw InputError(fmt::format("--vllm-version: expected a version like 0.15 or 0.21.1, got \"{}\"", version));
  }
  const ProfileFile* chosen = nullptr;
  for (const auto& f : files) {
    if (f.version <= wanted) chosen = &f;
  }
  if (chosen == nullptr) {
    throw InputError(fmt::format("--vllm-version {}: older than every modelled vLLM (oldest: {})", version,
                                 files.front().path.stem().string()));
  }
  return parse_profile(chosen->path);
}

VllmProfile load_vllm_profile_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(fmt::format("{}: no such profile file", path));
  return parse_profile(path);
}

std::vector<std::string> list_vllm_profiles(const ConfigDir& configs) {
  std::vector<std::string> out;
  for (const auto& f : profile_files(configs)) out.push_back(f.path.stem().string());
  return out;
}

}  // namespace gpubudget

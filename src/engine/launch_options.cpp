#include "gpubudget/launch_options.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "gpubudget/error.h"
#include "gpubudget/model_spec.h"

namespace gpubudget {

namespace {

constexpr std::int64_t kMaxSpeculativeTokens = 64;

nlohmann::json parse_object(const std::string& flag, const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw ArgumentError(fmt::format("{}: not JSON: {}", flag, text));
  }
  if (!j.is_object()) throw ArgumentError(fmt::format("{}: expected a JSON object, got {}", flag, text));
  return j;
}

std::int64_t integer_key(const std::string& flag, const nlohmann::json& j, const std::string& key, std::int64_t min,
                         std::int64_t max) {
  const auto& v = j.at(key);
  const bool in_range = v.is_number_integer() &&
                        (v.is_number_unsigned() ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(max)
                                                : v.get<std::int64_t>() >= min && v.get<std::int64_t>() <= max) &&
                        v.get<std::int64_t>() >= min;
  if (!in_range) throw ArgumentError(fmt::format("{}: {} must be an integer from {} to {}, got {}", flag, key, min, max, v.dump()));
  return v.get<std::int64_t>();
}

// SpeculativeConfig keys that change nothing vLLM allocates on a GPU (proposal heuristics, acceptance).
bool no_memory_effect_key(const std::string& key) {
  static const char* const kKeys[] = {"prompt_lookup_max", "prompt_lookup_min", "disable_padded_drafter_batch",
                                      "acceptance_method", "posterior_threshold", "posterior_alpha",
                                      "disable_by_batch_size", "speculative_token_tree", "suffix_decoding_max_tree_depth",
                                      "suffix_decoding_max_cached_requests", "suffix_decoding_max_spec_factor",
                                      "suffix_decoding_min_token_prob", "code_revision"};
  return std::any_of(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; });
}

// `revision`: the draft's Hub revision ("revision"), "" for its default branch.
SpeculativeDecoding parse_speculative_config(const std::string& text, std::string& revision) {
  const std::string flag = "--speculative-config";
  const nlohmann::json j = parse_object(flag, text);
  SpeculativeDecoding s;
  if (!j.contains("method") || !j["method"].is_string()) {
    throw ArgumentError(fmt::format("{}: give \"method\" (ngram, ngram_gpu, suffix, mtp, eagle, eagle3, draft_model, "
                                 "medusa); gpubudget does not guess it from the draft's name",
                                 flag));
  }
  std::string method = j["method"].get<std::string>();
  // The per-family names older vLLMs used (deepseek_mtp, qwen3_next_mtp, ...) all mean mtp.
  if (method.size() > 4 && method.substr(method.size() - 4) == "_mtp") method = "mtp";
  s.method = parse_speculative_method(method, flag + " method");
  if (s.method == SpeculativeMethod::kNone) throw ArgumentError(fmt::format("{}: method \"none\" is not vLLM's", flag));
  if (!j.contains("num_speculative_tokens")) {
    throw ArgumentError(fmt::format("{}: give num_speculative_tokens", flag));
  }
  s.num_speculative_tokens = integer_key(flag, j, "num_speculative_tokens", 1, kMaxSpeculativeTokens);
  for (const auto& [key, value] : j.items()) {
    if (key == "method" || key == "num_speculative_tokens") continue;
    if (key == "model") {
      if (!value.is_string()) throw ArgumentError(fmt::format("{}: model must be a string", flag));
      s.draft_model_name = value.get<std::string>();
    } else if (key == "revision") {
      if (!value.is_string()) throw ArgumentError(fmt::format("{}: revision must be a string", flag));
      revision = value.get<std::string>();
    } else if (key == "draft_tensor_parallel_size") {
      s.draft_tensor_parallel_size = integer_key(flag, j, key, 1, 1024);
    } else if (!no_memory_effect_key(key)) {
      throw ArgumentError(fmt::format("{}: key \"{}\" is not modelled (it may change what the drafter allocates); "
                                   "remove it, or check its effect by hand",
                                   flag, key));
    }
  }
  const bool needs_draft = s.method == SpeculativeMethod::kEagle || s.method == SpeculativeMethod::kEagle3 ||
                           s.method == SpeculativeMethod::kDraftModel || s.method == SpeculativeMethod::kMedusa;
  if (needs_draft) {
    if (s.draft_model_name.empty()) {
      throw ArgumentError(fmt::format("{}: method {} needs \"model\", the draft checkpoint", flag, method));
    }
  } else if (!s.draft_model_name.empty() && s.method == SpeculativeMethod::kMtp) {
    // vLLM reads MTP layers from the target's own checkpoint; "model" names it again.
    s.draft_model_name.clear();
  }
  return s;
}

// --mm-processor-kwargs as the Qwen2-VL processor family reads it for its largest image
// (Qwen2VLProcessingInfo._get_vision_info: `size` merged into the processor's, then `max_pixels` over
// size.longest_edge). Returns 0 when the kwargs leave the largest image alone; warns about keys that are
// passed to the processor and not modelled.
std::int64_t largest_image_pixels(const std::string& text, const ModelSpec& model, std::vector<Notice>& warnings) {
  const nlohmann::json j = parse_object("--mm-processor-kwargs", text);
  const auto pixels = [](const nlohmann::json& value, const std::string& key) {
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1 || value.get<std::int64_t>() > (std::int64_t{1} << 40)) {
      throw ArgumentError(fmt::format("--mm-processor-kwargs: {} must be a pixel count from 1 to 2^40, got {}", key,
                                   value.dump()));
    }
    return value.get<std::int64_t>();
  };
  std::int64_t largest = 0;
  std::vector<std::string> unmodelled;
  for (const auto& [key, value] : j.items()) {
    if (key == "max_pixels") {
      largest = pixels(value, key);
    } else if (key == "size" && value.is_object()) {
      for (const auto& [edge, v] : value.items()) {
        if (edge == "longest_edge" && !j.contains("max_pixels")) largest = pixels(v, "size.longest_edge");
        if (edge != "longest_edge" && edge != "shortest_edge") unmodelled.push_back("size." + edge);
      }
    } else if (key != "min_pixels" && key != "fps" && key != "num_frames") {
      // min_pixels does not change the largest image; fps and num_frames sample real videos only.
      unmodelled.push_back(key);
    }
  }
  const bool qwen2_vl_family = model.vision && model.vision->profile.pixels_per_token_side > 0;
  if (!qwen2_vl_family) {
    warnings.push_back({NoticeCode::kOptionNotModelled,
                        "--mm-processor-kwargs: not modelled for this model's processor; the encoder profile keeps "
                        "the processor's defaults"});
    return 0;
  }
  if (!unmodelled.empty()) {
    warnings.push_back({NoticeCode::kOptionNotModelled,
                        fmt::format("--mm-processor-kwargs {}: not modelled; the encoder profile may differ",
                                    fmt::join(unmodelled, ", "))});
  }
  const std::int64_t side = model.vision->profile.pixels_per_token_side;
  if (largest > 0 && largest < side * side) {
    throw ArgumentError(fmt::format("--mm-processor-kwargs: max_pixels {} is below one merged token ({} x {} pixels)",
                                 largest, side, side));
  }
  return largest;
}

}  // namespace

std::string launch_options_for_vllm(const LaunchOptions& f) {
  std::string line;
  const auto add = [&line](const std::string& flag, const std::string& value) { line += " " + flag + " " + value; };
  const auto quoted = [](const std::string& json) {
    std::string out = "'";
    for (const char c : json) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  };
  if (!f.speculative_config.empty()) add("--speculative-config", quoted(f.speculative_config));
  if (f.enable_lora) {
    line += " --enable-lora";
    add("--max-loras", std::to_string(f.max_loras));
    add("--max-lora-rank", std::to_string(f.max_lora_rank));
    if (f.lora_dtype != "auto") add("--lora-dtype", f.lora_dtype);
    if (f.fully_sharded_loras) line += " --fully-sharded-loras";
    for (std::size_t i = 0; i < f.lora_target_modules.size(); ++i) {
      line += (i == 0 ? " --lora-target-modules " : " ") + f.lora_target_modules[i];
    }
  }
  if (!f.quantization.empty()) add("--quantization", f.quantization);
  if (f.cpu_offload_gb > 0) add("--cpu-offload-gb", fmt::format("{}", f.cpu_offload_gb));
  if (f.offload_group_size != 0) add("--offload-group-size", std::to_string(f.offload_group_size));
  if (f.offload_num_in_group != 1) add("--offload-num-in-group", std::to_string(f.offload_num_in_group));
  if (f.offload_prefetch_step != 1) add("--offload-prefetch-step", std::to_string(f.offload_prefetch_step));
  if (!f.limit_mm_per_prompt.empty()) add("--limit-mm-per-prompt", quoted(f.limit_mm_per_prompt));
  if (!f.mm_processor_kwargs.empty()) add("--mm-processor-kwargs", quoted(f.mm_processor_kwargs));
  if (f.language_model_only) line += " --language-model-only";
  if (f.mm_encoder_tp_mode != "weights") add("--mm-encoder-tp-mode", f.mm_encoder_tp_mode);
  if (!f.attention_backend.empty()) add("--attention-backend", f.attention_backend);
  if (!f.all2all_backend.empty()) add("--all2all-backend", f.all2all_backend);
  if (f.optimization_level != -1) line += fmt::format(" -O{}", f.optimization_level);
  if (!f.compilation_config.empty()) add("--compilation-config", quoted(f.compilation_config));
  if (!f.cudagraph_capture_sizes.empty()) {
    line += " --cudagraph-capture-sizes";
    for (const auto size : f.cudagraph_capture_sizes) line += fmt::format(" {}", size);
  }
  if (f.max_cudagraph_capture_size != 0) add("--max-cudagraph-capture-size", std::to_string(f.max_cudagraph_capture_size));
  return line;
}

namespace {

// A capture size from --compilation-config: a JSON integer within 1..2^20 (cuda_graph_choice checks the
// range; a float or a number past int64 is refused here).
std::int64_t json_count(const nlohmann::json& value, std::string_view key) {
  if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<std::uint64_t>() > (1u << 20))) {
    throw ArgumentError(fmt::format("--compilation-config: {} takes integers from 1 to {}; got {}", key, 1 << 20,
                                 value.dump()));
  }
  return value.get<std::int64_t>();
}

}  // namespace

void apply_launch_options(const LaunchOptions& f, const ModelSpec& model, const ModelLoader& load_draft,
                          std::vector<Notice>& warnings, Deployment& d) {
  if (!f.speculative_config.empty()) {
    std::string revision;
    d.speculative = parse_speculative_config(f.speculative_config, revision);
    // The methods with a checkpoint of their own (parse_speculative_config has required "model").
    if (!d.speculative.draft_model_name.empty()) {
      const std::string& name = d.speculative.draft_model_name;
      if (!load_draft) {
        throw InputError(fmt::format("--speculative-config: the draft model {} would have to be read, and no "
                                     "loader was given",
                                     name));
      }
      d.speculative.draft_model = std::make_shared<const ModelSpec>(load_draft(revision.empty() ? name : name + "@" + revision));
    }
  }
  d.lora.enabled = f.enable_lora;
  d.lora.max_loras = f.max_loras;
  d.lora.max_lora_rank = f.max_lora_rank;
  d.lora.dtype = parse_model_dtype_choice(f.lora_dtype, "--lora-dtype");
  if (d.lora.dtype == ModelDtypeChoice::kFloat32) {
    throw ArgumentError("--lora-dtype float32: vLLM accepts auto, float16 or bfloat16");
  }
  d.lora.fully_sharded = f.fully_sharded_loras;
  d.lora.target_modules = f.lora_target_modules;
  if (!f.enable_lora && (f.max_loras != 1 || f.max_lora_rank != 16 || f.fully_sharded_loras ||
                         !f.lora_target_modules.empty() || f.lora_dtype != "auto")) {
    warnings.push_back(
        {NoticeCode::kLoraOptionsWithoutLora, "LoRA sizes without --enable-lora: vLLM allocates no adapter slots"});
  }
  if (!f.quantization.empty()) d.quantization = parse_online_quantization(f.quantization, "--quantization");
  if (!(f.cpu_offload_gb >= 0 && f.cpu_offload_gb <= 1 << 20)) {
    throw ArgumentError(fmt::format("--cpu-offload-gb {}: expected from 0 to 1048576", f.cpu_offload_gb));
  }
  d.cpu_offload_gb = f.cpu_offload_gb;
  d.offload_group_size = f.offload_group_size;
  d.offload_num_in_group = f.offload_num_in_group;
  d.offload_prefetch_step = f.offload_prefetch_step;
  d.language_model_only = f.language_model_only;
  if (!f.limit_mm_per_prompt.empty()) {
    const nlohmann::json j = parse_object("--limit-mm-per-prompt", f.limit_mm_per_prompt);
    std::vector<std::string> zero;
    for (const auto& [modality, value] : j.items()) {
      // vLLM takes a count, or (0.11+) an object with "count" and dummy sizes.
      const nlohmann::json& count = value.is_object() && value.contains("count") ? value["count"] : value;
      if (!count.is_number_integer() || count.get<std::int64_t>() < 0) {
        throw ArgumentError(fmt::format("--limit-mm-per-prompt: {} must be a count >= 0, got {}", modality, value.dump()));
      }
      if (count.get<std::int64_t>() == 0) zero.push_back(modality);
    }
    d.disabled_modalities = zero;
    // vLLM skips the tower only when every modality it serves is 0 (a missing one counts as 999).
    if (model.vision) {
      const auto& served = model.vision->modalities;
      const bool all_zero = std::all_of(served.begin(), served.end(), [&](const std::string& m) {
        return std::find(zero.begin(), zero.end(), m) != zero.end();
      });
      if (all_zero) d.language_model_only = true;
    }
  }
  if (!f.mm_processor_kwargs.empty()) d.mm_max_pixels = largest_image_pixels(f.mm_processor_kwargs, model, warnings);
  d.mm_encoder_tp_mode = parse_encoder_tp_mode(f.mm_encoder_tp_mode);
  d.attention_backend = f.attention_backend;
  if (!f.all2all_backend.empty()) d.all2all_backend = parse_all2all_backend(f.all2all_backend);
  if (f.optimization_level != -1) {
    if (f.optimization_level < 0 || f.optimization_level > 3) {
      throw ArgumentError(fmt::format("--optimization-level {}: expected 0, 1, 2 or 3", f.optimization_level));
    }
    d.optimization_level = f.optimization_level;
  }
  if (!f.cudagraph_capture_sizes.empty()) d.cudagraph_capture_sizes = f.cudagraph_capture_sizes;
  if (f.max_cudagraph_capture_size != 0) d.max_cudagraph_capture_size = f.max_cudagraph_capture_size;
  if (!f.compilation_config.empty()) {
    const nlohmann::json j = parse_object("--compilation-config", f.compilation_config);
    for (const auto& [key, value] : j.items()) {
      if (key == "cudagraph_mode") {
        // CUDAGraphMode by name (vllm/config/compilation.py), case-insensitively as vLLM's validator.
        std::string mode = value.is_string() ? value.get<std::string>() : "";
        std::transform(mode.begin(), mode.end(), mode.begin(), [](unsigned char c) { return std::toupper(c); });
        static const char* const kModes[] = {"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"};
        if (std::none_of(std::begin(kModes), std::end(kModes), [&](const char* m) { return mode == m; })) {
          throw ArgumentError(fmt::format("--compilation-config: cudagraph_mode must be one of NONE, PIECEWISE, FULL, "
                                       "FULL_DECODE_ONLY, FULL_AND_PIECEWISE; got {}",
                                       value.dump()));
        }
        d.cudagraph_mode = mode;
      } else if (key == "cudagraph_capture_sizes") {
        // EngineArgs.create_engine_config: the flag and the compilation-config key are mutually exclusive.
        if (!f.cudagraph_capture_sizes.empty()) {
          throw ArgumentError("--cudagraph-capture-sizes and --compilation-config cudagraph_capture_sizes are mutually "
                           "exclusive (vLLM raises ValueError)");
        }
        if (!value.is_array()) {
          throw ArgumentError(fmt::format("--compilation-config: cudagraph_capture_sizes must be a list of integers; got {}",
                                       value.dump()));
        }
        for (const auto& size : value) d.cudagraph_capture_sizes.push_back(json_count(size, "cudagraph_capture_sizes"));
      } else if (key == "max_cudagraph_capture_size") {
        if (f.max_cudagraph_capture_size != 0) {
          throw ArgumentError("--max-cudagraph-capture-size and --compilation-config max_cudagraph_capture_size are "
                           "mutually exclusive (vLLM raises ValueError)");
        }
        d.max_cudagraph_capture_size = json_count(value, "max_cudagraph_capture_size");
      } else {
        warnings.push_back(
            {NoticeCode::kOptionNotModelled,
             fmt::format(
                 "--compilation-config {}: not modelled; the CUDA-graph and activation estimates are without it",
                 key)});
      }
    }
  }
}

}  // namespace gpubudget

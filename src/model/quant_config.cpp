// Quantization declarations: config.json `quantization_config` or ModelOpt `hf_quant_config.json`.
// vLLM: transformers_utils/config.py (_normalize_quantization_config), config/cache.py
// (resolve_kv_cache_dtype_string), model_executor/layers/quantization/{fp8,modelopt}.py.
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/parse_context.h"

namespace gpubudget::detail {

QuantFormat ParseContext::unquantized() const {
  QuantFormat f;
  f.kind = QuantKind::kUnquantized;
  f.dtype = dtype;
  return f;
}

QuantFormat ParseContext::unquantized_float32() const {
  QuantFormat f = unquantized();
  f.dtype = Dtype::kFloat32;
  return f;
}

namespace {

// A checkpoint module name from the first "layers." / "mtp" / "lm_head" / "embed_tokens" on, so
// that "model.language_model.layers.3.mlp" and "language_model.model.layers.3.mlp" compare equal.
std::string_view canonical_module(std::string_view name) {
  for (const std::string_view anchor : {"layers.", "mtp.", "lm_head", "embed_tokens"}) {
    const auto at = name.find(anchor);
    if (at != std::string_view::npos && (at == 0 || name[at - 1] == '.')) return name.substr(at);
  }
  return name;
}

// MIXED_PRECISION: the listed format of a module, when every shard is listed with the same one;
// FusedMoE blocks are listed whole ("...mlp.experts") or per expert ("...mlp.experts.0.gate_proj").
std::optional<QuantFormat> listed_format(const CheckpointQuantization& q, const std::vector<std::string>& shards,
                                         bool prefix_match) {
  std::optional<QuantFormat> found;
  for (const auto& shard : shards) {
    const auto want = canonical_module(shard);
    std::optional<QuantFormat> mine;
    for (const auto& [module, format] : q.per_module) {
      const auto have = canonical_module(module);
      if (have == want || (prefix_match && have.size() > want.size() && have.substr(0, want.size()) == want &&
                           have[want.size()] == '.')) {
        mine = format;
        break;
      }
    }
    if (!mine || (found && !(*found == *mine))) return std::nullopt;
    found = mine;
  }
  return found;
}

}  // namespace

QuantFormat ParseContext::format_for(const std::vector<std::string>& shard_names) const {
  if (quantization.method.empty() || quantization.experts_only) return unquantized();
  if (quantization.per_module.empty()) {
    // Excluded only when every shard is; one buffer holds each shard's checkpoint name in turn.
    if (excluded.empty() || shard_names.empty()) return quantization.format;
    std::string full;
    for (const auto& n : shard_names) {
      full.assign(checkpoint_prefix).append(n);
      if (!excluded.matches(full)) return quantization.format;
    }
    return unquantized();
  }
  std::vector<std::string> full;
  full.reserve(shard_names.size());
  for (const auto& n : shard_names) full.push_back(checkpoint_prefix + n);
  if (excluded.excludes_all(full)) return unquantized();
  if (!quantization.per_module.empty()) return listed_format(quantization, full, false).value_or(unquantized());
  return quantization.format;
}

QuantFormat ParseContext::format_for(std::string_view module_prefix,
                                     std::initializer_list<std::string_view> shard_suffixes) const {
  if (quantization.method.empty() || quantization.experts_only) return unquantized();
  if (quantization.per_module.empty()) {
    if (excluded.empty() || shard_suffixes.size() == 0) return quantization.format;
    // Each shard's checkpoint name in turn, in one buffer: prefix, module prefix, suffix.
    std::string full;
    full.reserve(checkpoint_prefix.size() + module_prefix.size() + 32);
    full.append(checkpoint_prefix).append(module_prefix);
    const std::size_t stem = full.size();
    for (const std::string_view suffix : shard_suffixes) {
      full.resize(stem);
      full.append(suffix);
      if (!excluded.matches(full)) return quantization.format;
    }
    return unquantized();
  }
  std::vector<std::string> names;
  names.reserve(shard_suffixes.size());
  for (const std::string_view suffix : shard_suffixes) names.push_back(cat(module_prefix, suffix));
  return format_for(names);
}

QuantFormat ParseContext::expert_format_for(const std::string& name) const {
  if (!quantization.per_module.empty()) {
    if (excluded.matches(checkpoint_prefix + name)) return unquantized();
    return listed_format(quantization, {checkpoint_prefix + name}, true).value_or(unquantized());
  }
  if (quantization.experts_only) {
    if (excluded.matches(checkpoint_prefix + name)) return unquantized();
    return quantization.format;
  }
  return format_for({name});
}

namespace {

// ModelOpt's KV declaration: "FP8" or {type: float, num_bits: 8} → fp8_e4m3 (vLLM
// get_kv_cache_quant_algo_string); anything else leaves `auto` alone.
// get_kv_cache_quant_algo_string: the first of kv_cache_scheme / kv_cache_quant_algo; a dict is fp8
// when {dynamic: false, num_bits: 8, type: float}, nvfp4 when {num_bits: 4, type: float}; a string is
// lower-cased. Returns "" without a declaration; an unrecognised one comes back as its text, which
// vLLM warns about and treats as `auto`.
std::string modelopt_kv_algo(const JsonReader& block, std::string& declaration) {
  for (const char* key : {"kv_cache_scheme", "kv_cache_quant_algo"}) {
    if (!block.has(key)) continue;
    const auto& v = block.value()[key];
    if (v.is_string()) {
      auto s = v.get<std::string>();
      if (s.empty()) continue;  // `or` in vLLM skips empty values
      declaration = std::string(key) + " " + s;
      for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return s;
    }
    if (v.is_object()) {
      if (v.empty()) continue;
      const JsonReader scheme = block.object(key);
      const auto type = scheme.optional_string("type").value_or("");
      const auto bits = scheme.optional_integer("num_bits", 1, 64).value_or(0);
      const bool static_scales = v.contains("dynamic") && v["dynamic"].is_boolean() && !v["dynamic"].get<bool>();
      declaration = fmt::format("{} {{type: {}, num_bits: {}}}", key, type, bits);
      if (type == "float" && bits == 8 && static_scales) return "fp8";
      if (type == "float" && bits == 4) return "nvfp4";
      return v.dump();
    }
  }
  return "";
}

// One ModelOpt algorithm → format: NVFP4 (W4A4) and W4A16_NVFP4 store the same tensors but the
// input scale; FP8 is per-tensor with a static input scale.
QuantFormat modelopt_format(const JsonReader& block, const std::string& algo_key, Dtype dtype) {
  const auto algo = block.string(algo_key);
  QuantFormat f;
  f.dtype = dtype;
  if (algo == "FP8") {
    f.kind = QuantKind::kFp8Tensor;
    f.static_input_scale = true;
    return f;
  }
  if (algo == "NVFP4" || algo == "W4A16_NVFP4") {
    f.kind = QuantKind::kNvfp4;
    f.group_size = block.optional_integer("group_size", 1, 1024).value_or(16);
    if (f.group_size != 16) {
      throw InputError(fmt::format("{}: NVFP4 group_size must be 16, got {}", block.path("group_size"), f.group_size));
    }
    return f;
  }
  throw InputError(fmt::format("{}: ModelOpt quant_algo \"{}\" is not supported yet (supported: NVFP4, W4A16_NVFP4, "
                               "FP8, MIXED_PRECISION)",
                               block.path(algo_key), algo));
}

CheckpointQuantization parse_modelopt(const JsonReader& block, const std::string& algo_key_owner_desc, Dtype dtype) {
  CheckpointQuantization q;
  const auto algo = block.string("quant_algo");
  if (algo == "MIXED_PRECISION") {
    // Every quantized module is listed with its own algorithm; unlisted modules stay unquantized.
    q.method = "modelopt_mixed";
    const JsonReader layers = block.object("quantized_layers");
    for (const auto& [module, _] : layers.value().items()) {
      q.per_module.emplace_back(module, modelopt_format(layers.object(module), "quant_algo", dtype));
    }
    if (q.per_module.empty()) layers.fail("", "at least one quantized layer");
    q.format = q.per_module.front().second;
  } else {
    q.format = modelopt_format(block, "quant_algo", dtype);
    q.method = q.format.kind == QuantKind::kFp8Tensor ? "modelopt" : "modelopt_fp4";
  }
  q.excluded_modules = block.string_list("exclude_modules");
  for (auto& p : block.string_list("ignore")) q.excluded_modules.push_back(std::move(p));
  q.kv_cache_algo = modelopt_kv_algo(block, q.kv_cache_declaration);
  if (!q.kv_cache_algo.empty()) {
    q.kv_cache_scheme = CheckpointKvScheme::kModelOpt;
    q.kv_cache_declaration = std::filesystem::path(block.file()).filename().string() + " " + q.kv_cache_declaration;
  }
  q.source = algo_key_owner_desc;
  return q;
}

// One compressed-tensors scheme (a config group's `weights` and `input_activations`) → format.
// vLLM: compressed_tensors.py _get_scheme_from_parts.
QuantFormat compressed_tensors_format(const JsonReader& group, const std::string& format_name, Dtype dtype) {
  const JsonReader w = group.object("weights");
  const auto type = w.string("type");
  const auto bits = w.integer("num_bits", 1, 64);
  const auto strategy = w.optional_string("strategy").value_or(type == "float" && bits == 4 ? "tensor_group" : "");
  const bool has_input = group.has("input_activations") && !group.value()["input_activations"].is_null();
  const bool static_input = has_input && !group.object("input_activations").boolean("dynamic", false);
  if (w.has("actorder") && !w.value()["actorder"].is_null() && w.value()["actorder"] != false) {
    throw InputError(fmt::format("{}: activation-order compressed-tensors checkpoints are not supported yet",
                                 w.path("actorder")));
  }
  QuantFormat f;
  f.dtype = dtype;
  if (type == "float" && bits == 4) {  // nvfp4-pack-quantized: packed e2m1, fp8 scales per 16, fp32 globals
    f.kind = QuantKind::kNvfp4;
    f.group_size = w.optional_integer("group_size", 1, 1024).value_or(16);
    if (f.group_size != 16) w.fail("group_size", "16 (NVFP4)");
    return f;
  }
  if (type == "float" && bits == 8) {
    if (strategy == "tensor") {
      f.kind = QuantKind::kFp8Tensor;
    } else if (strategy == "channel") {
      f.kind = QuantKind::kChannel8;
    } else if (strategy == "block") {
      const auto block = w.integer_list("block_structure", 1, 4096);
      if (block.size() != 2) w.fail("block_structure", "[block_n, block_k]");
      f.kind = QuantKind::kFp8Block;
      f.block_n = block[0];
      f.block_k = block[1];
      return f;
    } else {
      w.fail("strategy", "\"tensor\", \"channel\" or \"block\" for 8-bit floats");
    }
    f.static_input_scale = static_input;
    return f;
  }
  if (type != "int") w.fail("type", "\"int\" or \"float\"");
  if (has_input) {
    // W8A8 INT8: 8-bit weights with activations quantized too.
    if (bits != 8) w.fail("num_bits", "8 for weight-and-activation integer schemes");
    if (strategy == "channel") {
      f.kind = QuantKind::kChannel8;
    } else if (strategy == "tensor") {
      f.kind = QuantKind::kFp8Tensor;  // same bytes: one byte per weight and a scalar scale
    } else {
      w.fail("strategy", "\"channel\" or \"tensor\" for W8A8");
    }
    f.integer = true;
    f.static_input_scale = static_input;
    return f;
  }
  if (format_name != "pack-quantized") {
    throw InputError(fmt::format("{}: weight-only integer schemes are read in format \"pack-quantized\", got \"{}\"",
                                 group.path("weights"), format_name));
  }
  f.kind = QuantKind::kIntPacked;
  f.bits = bits;
  if (bits != 4 && bits != 8) w.fail("num_bits", "4 or 8");
  if (strategy == "group") {
    f.group_size = w.integer("group_size", 1, 1 << 20);
  } else if (strategy == "channel") {
    f.group_size = 0;
  } else {
    w.fail("strategy", "\"group\" or \"channel\"");
  }
  f.symmetric = w.boolean("symmetric", true);
  return f;
}

// compressed-tensors (llm-compressor). A group targeting "Linear" sets the default format; groups
// targeting named modules (literal or `re:`) list per-module formats. The KV declaration is resolved
// as the checkpoint states it; what vLLM makes of it depends on the version (resolve_kv_cache_dtype).
CheckpointQuantization parse_compressed_tensors(const JsonReader& qc, Dtype dtype) {
  CheckpointQuantization q;
  q.method = "compressed-tensors";
  q.source = qc.path("quant_method");
  if (qc.has("kv_cache_scheme") && !qc.value()["kv_cache_scheme"].is_null()) {
    const JsonReader kv = qc.object("kv_cache_scheme");
    const auto type = kv.optional_string("type").value_or("");
    const auto bits = kv.optional_integer("num_bits", 1, 64).value_or(0);
    if (type != "float" || bits != 8) {
      kv.fail("type", "an 8-bit float kv_cache_scheme (the only one vLLM maps to an fp8 KV cache)");
    }
    q.kv_cache_scheme = CheckpointKvScheme::kCompressedTensors;
    q.kv_cache_declaration = "kv_cache_scheme {type: float, num_bits: 8}";
  }
  const auto format_name = qc.optional_string("format").value_or("");
  const JsonReader groups = qc.object("config_groups");
  if (groups.value().empty()) groups.fail("", "at least one config group");
  bool has_default = false;
  for (const auto& [group_name, _] : groups.value().items()) {
    const JsonReader group = groups.object(group_name);
    const QuantFormat f = compressed_tensors_format(group, format_name, dtype);
    const auto targets = group.string_list("targets");
    if (targets.empty()) group.fail("targets", "a non-empty list of module names or \"Linear\"");
    for (const auto& target : targets) {
      if (target == "Linear") {
        if (has_default && !(q.format == f)) group.fail("targets", "one \"Linear\" group (several disagree)");
        q.format = f;
        has_default = true;
      } else if (target.rfind("re:", 0) == 0) {
        throw InputError(fmt::format("{}: regular-expression targets are not supported yet, got \"{}\"",
                                     group.path("targets"), target));
      } else {
        q.per_module.emplace_back(target, f);
      }
    }
  }
  if (has_default && !q.per_module.empty()) {
    throw InputError(fmt::format("{}: mixing a \"Linear\" group with module-targeted groups is not supported yet",
                                 qc.path("config_groups")));
  }
  if (!has_default) q.format = q.per_module.front().second;
  q.excluded_modules = qc.string_list("ignore");
  return q;
}

// AutoGPTQ / GPTQModel: `bits`, `group_size` (-1: per channel), `desc_act`, `sym`.
CheckpointQuantization parse_gptq(const JsonReader& qc, Dtype dtype) {
  CheckpointQuantization q;
  q.method = "gptq";
  q.source = qc.path("quant_method");
  q.format.kind = QuantKind::kGptq;
  q.format.dtype = dtype;
  q.format.bits = qc.integer("bits", 2, 8);
  if (q.format.bits != 4 && q.format.bits != 8) qc.fail("bits", "4 or 8");
  const auto group = qc.optional_integer("group_size", -1, 1 << 20).value_or(128);
  if (group == 0) qc.fail("group_size", "-1 or a positive group size");
  q.format.group_size = group < 0 ? 0 : group;
  q.format.act_order = qc.boolean("desc_act", false);
  q.format.symmetric = qc.boolean("sym", true);
  q.excluded_modules = qc.string_list("modules_to_not_convert");
  return q;
}

// AutoAWQ: `bits` (`w_bit`), `group_size` (`q_group_size`), `zero_point`, `modules_to_not_convert`.
CheckpointQuantization parse_awq(const JsonReader& qc, Dtype dtype) {
  CheckpointQuantization q;
  q.method = "awq";
  q.source = qc.path("quant_method");
  q.format.kind = QuantKind::kAwq;
  q.format.dtype = dtype;
  q.format.bits = qc.has("bits") ? qc.integer("bits", 4, 4) : qc.optional_integer("w_bit", 4, 4).value_or(4);
  q.format.group_size = qc.has("group_size") ? qc.integer("group_size", 1, 1 << 20)
                                             : qc.optional_integer("q_group_size", 1, 1 << 20).value_or(128);
  if (!qc.boolean("zero_point", true)) qc.fail("zero_point", "true (vLLM's AWQ kernels need zero points)");
  q.format.symmetric = false;
  q.excluded_modules = qc.string_list("modules_to_not_convert");
  return q;
}

}  // namespace

CheckpointQuantization parse_quantization(const JsonReader& root, const JsonReader* text,
                                          const JsonReader* hf_quant_config, Dtype dtype) {
  std::optional<JsonReader> qc = root.optional_object("quantization_config");
  if (!qc && text != nullptr) qc = text->optional_object("quantization_config");

  if (qc) {
    const auto method = qc->optional_string("quant_method").value_or("");
    if (method == "fp8") {
      CheckpointQuantization q;
      q.method = "fp8";
      q.source = qc->path("quant_method");
      q.format.dtype = dtype;
      const auto block = qc->integer_list("weight_block_size", 1, 4096);
      if (block.empty()) {
        // Per-tensor FP8 (Fp8Config without weight_block_size).
        q.format.kind = QuantKind::kFp8Tensor;
        q.format.static_input_scale = qc->optional_string("activation_scheme").value_or("dynamic") == "static";
      } else {
        if (block.size() != 2) qc->fail("weight_block_size", "[block_n, block_k]");
        q.format.kind = QuantKind::kFp8Block;
        q.format.block_n = block[0];
        q.format.block_k = block[1];
      }
      q.excluded_modules = qc->string_list("modules_to_not_convert");
      for (auto& p : qc->string_list("ignored_layers")) q.excluded_modules.push_back(std::move(p));
      return q;
    }
    if (method == "modelopt" || method == "modelopt_fp4") {
      if (qc->has("quantization")) return parse_modelopt(qc->object("quantization"), qc->path("quantization"), dtype);
      return parse_modelopt(*qc, qc->path("quant_method"), dtype);
    }
    if (method == "compressed-tensors") return parse_compressed_tensors(*qc, dtype);
    if (method == "gptq") return parse_gptq(*qc, dtype);
    if (method == "awq") return parse_awq(*qc, dtype);
    if (method == "mxfp4") {
      // gpt-oss: Mxfp4Config quantizes FusedMoE experts only; every Linear stays unquantized.
      CheckpointQuantization q;
      q.method = "mxfp4";
      q.source = qc->path("quant_method");
      q.format.kind = QuantKind::kMxfp4;
      q.experts_only = true;
      q.excluded_modules = qc->string_list("modules_to_not_convert");
      return q;
    }
    throw InputError(fmt::format("{}: quantization method \"{}\" is not supported yet (supported: fp8, modelopt, "
                                 "compressed-tensors, mxfp4, gptq, awq)",
                                 qc->path("quant_method"), method));
  }

  if (hf_quant_config != nullptr) {
    const auto producer = hf_quant_config->optional_object("producer");
    const auto name = producer ? producer->optional_string("name").value_or("") : "";
    if (name != "modelopt") {
      hf_quant_config->fail("producer", "{\"name\": \"modelopt\", ...}");
    }
    return parse_modelopt(hf_quant_config->object("quantization"), hf_quant_config->path("quantization"), dtype);
  }
  return {};
}

}  // namespace gpubudget::detail

// Quantization declarations: config.json `quantization_config` or ModelOpt `hf_quant_config.json`.
// vLLM: transformers_utils/config.py (_normalize_quantization_config), config/cache.py
// (resolve_kv_cache_dtype_string), model_executor/layers/quantization/{fp8,modelopt}.py.
#include <filesystem>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "parse_context.h"

namespace gpubudget::detail {

QuantFormat ParseContext::unquantized() const {
  QuantFormat f;
  f.kind = QuantKind::kUnquantized;
  f.dtype = dtype;
  return f;
}

QuantFormat ParseContext::format_for(const std::vector<std::string>& shard_names) const {
  if (quantization.method.empty() || quantization.experts_only) return unquantized();
  std::vector<std::string> full;
  full.reserve(shard_names.size());
  for (const auto& n : shard_names) full.push_back(checkpoint_prefix + n);
  if (is_excluded(quantization.excluded_modules, full)) return unquantized();
  return quantization.format;
}

QuantFormat ParseContext::expert_format_for(const std::string& name) const {
  if (quantization.experts_only) {
    if (is_excluded(quantization.excluded_modules, {checkpoint_prefix + name})) return unquantized();
    return quantization.format;
  }
  return format_for({name});
}

namespace {

// ModelOpt's KV declaration: "FP8" or {type: float, num_bits: 8} → fp8_e4m3 (vLLM
// get_kv_cache_quant_algo_string); anything else leaves `auto` alone.
std::string modelopt_kv_dtype(const JsonReader& block, std::string& declaration) {
  for (const char* key : {"kv_cache_scheme", "kv_cache_quant_algo"}) {
    if (!block.has(key)) continue;
    const auto& v = block.value()[key];
    if (v.is_string()) {
      const auto s = v.get<std::string>();
      declaration = std::string(key) + " " + s;
      if (s == "FP8" || s == "fp8") return "fp8_e4m3";
      return "";
    }
    if (v.is_object()) {
      const JsonReader scheme = block.object(key);
      const auto type = scheme.optional_string("type").value_or("");
      const auto bits = scheme.optional_integer("num_bits", 1, 64).value_or(0);
      declaration = fmt::format("{} {{type: {}, num_bits: {}}}", key, type, bits);
      if (type == "float" && bits == 8) return "fp8_e4m3";
      return "";
    }
  }
  return "";
}

CheckpointQuantization parse_modelopt(const JsonReader& block, const std::string& algo_key_owner_desc) {
  CheckpointQuantization q;
  const auto algo = block.string("quant_algo");
  if (algo != "NVFP4") {
    throw InputError(fmt::format(
        "{}: ModelOpt quant_algo \"{}\" is not supported yet (supported: NVFP4)", block.path("quant_algo"), algo));
  }
  q.method = "modelopt_fp4";
  q.format.kind = QuantKind::kNvfp4;
  q.format.group_size = block.optional_integer("group_size", 1, 1024).value_or(16);
  if (q.format.group_size != 16) {
    throw InputError(fmt::format("{}: NVFP4 group_size must be 16, got {}", block.path("group_size"),
                                 q.format.group_size));
  }
  q.excluded_modules = block.string_list("exclude_modules");
  for (auto& p : block.string_list("ignore")) q.excluded_modules.push_back(std::move(p));
  q.kv_cache_dtype = modelopt_kv_dtype(block, q.kv_cache_declaration);
  q.kv_cache_declaration = std::filesystem::path(block.file()).filename().string() + " " + q.kv_cache_declaration;
  q.source = algo_key_owner_desc;
  return q;
}

// compressed-tensors (llm-compressor): weight-only integer `pack-quantized` groups are modelled.
// The KV declaration is resolved the way vLLM does it: Attention.__init__ turns `auto` into `fp8`
// when `kv_cache_scheme` is set.
CheckpointQuantization parse_compressed_tensors(const JsonReader& qc, Dtype dtype) {
  CheckpointQuantization q;
  q.method = "compressed-tensors";
  q.source = qc.path("quant_method");
  if (qc.has("kv_cache_scheme")) {
    const JsonReader kv = qc.object("kv_cache_scheme");
    const auto type = kv.optional_string("type").value_or("");
    const auto bits = kv.optional_integer("num_bits", 1, 64).value_or(0);
    if (type != "float" || bits != 8) {
      kv.fail("type", "an 8-bit float kv_cache_scheme (the only one vLLM maps to an fp8 KV cache)");
    }
    q.kv_cache_dtype = "fp8";
    q.kv_cache_declaration = "kv_cache_scheme {type: float, num_bits: 8}";
  }
  const auto format = qc.optional_string("format").value_or("");
  if (format != "pack-quantized") {
    throw InputError(fmt::format("{}: compressed-tensors format \"{}\" is not supported yet (supported: pack-quantized)",
                                 qc.path("format"), format));
  }
  const JsonReader groups = qc.object("config_groups");
  if (groups.value().size() != 1) {
    throw InputError(fmt::format("{}: only one config group is supported yet, got {}", qc.path("config_groups"),
                                 groups.value().size()));
  }
  const std::string group_name = groups.value().begin().key();
  const JsonReader group = groups.object(group_name);
  const auto targets = group.string_list("targets");
  if (targets != std::vector<std::string>{"Linear"}) group.fail("targets", "[\"Linear\"]");
  if (group.has("input_activations")) {
    throw InputError(fmt::format("{}: weight-and-activation schemes (W8A8, FP8 dynamic) are not supported yet",
                                 group.path("input_activations")));
  }
  const JsonReader w = group.object("weights");
  if (w.string("type") != "int") w.fail("type", "\"int\"");
  q.format.kind = QuantKind::kIntPacked;
  q.format.dtype = dtype;
  q.format.bits = w.integer("num_bits", 4, 8);
  if (q.format.bits != 4 && q.format.bits != 8) w.fail("num_bits", "4 or 8");
  const auto strategy = w.string("strategy");
  if (strategy == "group") {
    q.format.group_size = w.integer("group_size", 1, 1 << 20);
  } else if (strategy == "channel") {
    q.format.group_size = 0;
  } else {
    w.fail("strategy", "\"group\" or \"channel\"");
  }
  q.format.symmetric = w.boolean("symmetric", true);
  if (w.has("actorder") && w.value()["actorder"] != false) {
    throw InputError(fmt::format("{}: activation-order (desc_act) checkpoints are not supported yet", w.path("actorder")));
  }
  q.excluded_modules = qc.string_list("ignore");
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
      const auto block = qc->integer_list("weight_block_size", 1, 4096);
      if (block.size() != 2) {
        throw InputError(fmt::format(
            "{}: per-tensor FP8 (no weight_block_size) is not supported yet; expected [block_n, block_k]",
            qc->path("weight_block_size")));
      }
      q.format.kind = QuantKind::kFp8Block;
      q.format.block_n = block[0];
      q.format.block_k = block[1];
      q.excluded_modules = qc->string_list("modules_to_not_convert");
      for (auto& p : qc->string_list("ignored_layers")) q.excluded_modules.push_back(std::move(p));
      return q;
    }
    if (method == "modelopt" || method == "modelopt_fp4") {
      if (qc->has("quantization")) return parse_modelopt(qc->object("quantization"), qc->path("quantization"));
      return parse_modelopt(*qc, qc->path("quant_method"));
    }
    if (method == "compressed-tensors") return parse_compressed_tensors(*qc, dtype);
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
    throw InputError(fmt::format("{}: quantization method \"{}\" is not supported yet (supported: fp8 with "
                                 "weight_block_size, modelopt NVFP4)",
                                 qc->path("quant_method"), method));
  }

  if (hf_quant_config != nullptr) {
    const auto producer = hf_quant_config->optional_object("producer");
    const auto name = producer ? producer->optional_string("name").value_or("") : "";
    if (name != "modelopt") {
      hf_quant_config->fail("producer", "{\"name\": \"modelopt\", ...}");
    }
    return parse_modelopt(hf_quant_config->object("quantization"), hf_quant_config->path("quantization"));
  }
  return {};
}

}  // namespace gpubudget::detail

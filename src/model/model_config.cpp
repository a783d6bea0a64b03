// config.json → ModelSpec: resolves `text_config` nesting, the quantization declaration, the
// derived maximum length, and hands the language model to its family parser.
#include <filesystem>
#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/model_config.h"
#include "model/families.h"
#include "model/generic.h"
#include "model/parse_context.h"

namespace gpubudget {

namespace detail {

namespace {

void check_model_size_impl(const ModelSpec& model) {
  double elements = static_cast<double>(model.vocab_size) * static_cast<double>(model.hidden_size) * 2.0;
  for (const auto& layer : model.layers) {
    for (const auto& l : layer.linears) {
      double out = 0;
      for (auto o : l.output_sizes) out += static_cast<double>(o);
      elements += out * static_cast<double>(l.input_size);
    }
    for (const auto& e : layer.experts) {
      elements += 3.0 * static_cast<double>(e.num_experts) * static_cast<double>(e.intermediate_size) *
                  static_cast<double>(e.hidden_size);
    }
  }
  // 10^15 parameters is ~1000x the largest model served today and keeps bytes far below 2^63.
  if (elements > 1e15) {
    throw InputError(fmt::format("{}: the config describes {:.3g} parameters; refusing an absurd model size",
                                 model.source, elements));
  }
}

}  // namespace

void check_model_size(const ModelSpec& model) { check_model_size_impl(model); }

}  // namespace detail

namespace {

// Never silently wrong: a key of `config` no parser read and that is not known to leave memory alone
// is named in ModelSpec::unmodelled_config_keys (as `prefix` + key).
void note_unread_keys(const detail::JsonReader& config, std::string_view prefix, ModelSpec& model) {
  for (const auto& key : config.unread_keys()) {
    if (!detail::is_without_memory_effect(model.family, key, config.value()[key])) {
      model.unmodelled_config_keys.push_back(std::string(prefix) + key);
    }
  }
}

ModelSpec parse_config(const std::string& config_json, const std::string& hf_quant_config_json,
                       const std::string& source, const CheckpointHeaders* headers) {
  using detail::JsonReader;
  const nlohmann::json root_json = detail::parse_json(config_json, source);
  if (!root_json.is_object()) {
    throw InputError(fmt::format("{}: expected a JSON object at the top level", source));
  }
  JsonReader root(root_json, source);
  root.track_reads();  // every key a parser asks about; the rest is checked below

  ModelSpec model;
  model.source = source;
  if (!root.has("text_config") && root.optional_string("model_type") == "medusa") {
    model.model_type = "medusa";
    detail::parse_medusa(config_json, root, model);
    note_unread_keys(root, "", model);
    return model;
  }
  const auto architectures = root.string_list("architectures");
  if (architectures.empty()) root.fail("architectures", "a non-empty array of strings");
  model.architecture = architectures.front();

  const bool nested = root.has("text_config");
  const JsonReader text = nested ? root.object("text_config") : root;
  model.model_type = text.optional_string("model_type").value_or("");
  const detail::FamilyMatch match = detail::family_for_model_type(model.model_type);
  const bool generic = match.family == nullptr && headers != nullptr && detail::generic_path_allowed(model.model_type);
  if (match.family == nullptr && !generic) {
    const bool allowed = detail::generic_path_allowed(model.model_type);
    throw detail::UnknownArchitectureError(
        fmt::format("{}: unsupported architecture {} (model_type \"{}\"): {}{}", text.path("model_type"),
                    model.architecture, model.model_type, detail::closest_family_hint(model.model_type),
                    allowed ? "; with the checkpoint's safetensors files (a model folder, the Hugging Face cache or a "
                              "Hub id) gpubudget sizes it from their headers, labelled generic"
                            : ""),
        allowed);
  }
  const auto& registered = generic ? std::span<const std::string_view>() : match.family->architectures;
  if (!generic && std::find(registered.begin(), registered.end(), model.architecture) == registered.end()) {
    throw InputError(fmt::format("{}: unknown architecture \"{}\" (model_type \"{}\"): vLLM selects the implementation "
                                 "by this name and registers no such model for the {} family; gpubudget will not guess "
                                 "from model_type",
                                 root.path("architectures"), model.architecture, model.model_type, match.family->name));
  }

  // Unquantized weight dtype: `dtype` (transformers >= 4.56) or `torch_dtype`; bf16 if absent.
  std::string dtype_key = text.has("dtype") ? "dtype" : text.has("torch_dtype") ? "torch_dtype" : "";
  const JsonReader* dtype_owner = &text;
  if (dtype_key.empty()) {
    dtype_key = root.has("dtype") ? "dtype" : root.has("torch_dtype") ? "torch_dtype" : "";
    dtype_owner = &root;
  }
  if (!dtype_key.empty()) {
    const auto name = dtype_owner->string(dtype_key);
    const auto dtype = parse_torch_dtype(name);
    if (!dtype) dtype_owner->fail(dtype_key, "\"bfloat16\", \"float16\" or \"float32\"");
    model.dtype = *dtype;
  }

  std::optional<nlohmann::json> hf_quant_json;
  std::optional<JsonReader> hf_quant;
  const std::string hf_quant_source =
      (std::filesystem::path(source).parent_path() / "hf_quant_config.json").string();
  if (!hf_quant_config_json.empty()) {
    hf_quant_json = detail::parse_json(hf_quant_config_json, hf_quant_source);
    hf_quant.emplace(*hf_quant_json, hf_quant_source);
  }

  detail::ParseContext context{root, text, nested ? "language_model." : "", model.dtype, {}, {}};
  context.quantization =
      detail::parse_quantization(root, nested ? &text : nullptr, hf_quant ? &*hf_quant : nullptr, model.dtype);
  try {
    // transformers 5 names a wrapper's language model "model.language_model.*"; vLLM's multimodal
    // models map that prefix to their "language_model.model.*" modules (hf_to_vllm_mapper) before
    // matching the checkpoint's exclusions, so each such pattern is matched in both spellings.
    std::vector<std::string> patterns = context.quantization.excluded_modules;
    constexpr std::string_view kHfPrefix = "model.language_model.";
    for (const auto& pattern : context.quantization.excluded_modules) {
      if (nested && pattern.starts_with(kHfPrefix)) {
        patterns.push_back("language_model.model." + pattern.substr(kHfPrefix.size()));
      }
    }
    context.excluded = ModuleNamePatterns(patterns);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", context.quantization.source, e.what()));
  }
  model.quantization = context.quantization;

  // The vocabulary: the wrapper's own value when present (Kimi-K2.5 reads the top level).
  // Gemma3TextConfig's default vocabulary is 262,208 (its published configs omit it).
  if (nested && root.has("vocab_size")) {
    model.vocab_size = root.integer("vocab_size", 1, detail::kMaxVocab);
  } else if (model.model_type == "gemma3_text") {
    model.vocab_size = text.optional_integer("vocab_size", 1, detail::kMaxVocab).value_or(262208);
  } else {
    model.vocab_size = text.integer("vocab_size", 1, detail::kMaxVocab);
  }
  model.tie_word_embeddings = root.boolean("tie_word_embeddings", text.boolean("tie_word_embeddings", false));
  if (nested && !text.has("model_type")) {
    text.fail("model_type", "the language model's model_type");
  }

  if (generic) {
    model.family = "generic";
    detail::parse_generic(context, *headers, model);
  } else {
    model.family = std::string(match.family->name);
    match.family->parse(context, model);
  }
  if (!generic && match.family->reads_eagle_head) detail::parse_eagle_head(root, model);

  // The LM head stays unquantized: vLLM's fp8 and ModelOpt configs do not quantize ParallelLMHead,
  // and Kimi-K2.5 builds it without a quant config at all.
  model.lm_head_format = context.unquantized();

  if (root.has("vision_config")) {
    detail::parse_vision(root, model);
  } else if (model.architecture.find("ForConditionalGeneration") != std::string::npos) {
    throw InputError(fmt::format("{}: {} is a multimodal wrapper but the config has no vision_config, so its vision "
                                 "tower cannot be sized (an incomplete config?)",
                                 source, model.architecture));
  }

  detail::derive_max_model_len(text, model, generic ? 0 : match.model_type->default_max_position);
  detail::check_model_size(model);
  note_unread_keys(root, "", model);
  if (nested) note_unread_keys(text, "text_config.", model);
  return model;
}

}  // namespace

ModelSpec parse_model_config(const std::string& config_json, const std::string& hf_quant_config_json,
                             const std::string& source) {
  return parse_config(config_json, hf_quant_config_json, source, nullptr);
}

ModelSpec parse_model_config(const std::string& config_json, const std::string& hf_quant_config_json,
                             const std::string& source, const CheckpointHeaders& headers) {
  return parse_config(config_json, hf_quant_config_json, source, &headers);
}

}  // namespace gpubudget

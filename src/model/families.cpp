// The family table (families.h). Architectures are vLLM's registry names
// (vllm/model_executor/models/registry.py): vLLM picks the implementation by that name, so a name it
// does not register for the model type does not start, and gpubudget refuses it rather than guess.
#include "model/families.h"

#include <array>

#include <fmt/format.h>

#include "gpubudget/model_config.h"

namespace gpubudget::detail {

namespace {

constexpr ModelType kDeepseekTypes[] = {{"deepseek_v2"}, {"deepseek_v3"}, {"kimi_k2"}, {"deepseek_v32"}, {"glm_moe_dsa"},
                                        {"glm4_moe_lite"}};
constexpr std::string_view kDeepseekArchitectures[] = {
    "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM",
    "Glm4MoeLiteForCausalLM",
    "KimiK25ForConditionalGeneration", "KimiVLForConditionalGeneration",
    // The EAGLE-3 head on MLA (deepseek_eagle3.py; eagle_head.cpp).
    "Eagle3DeepseekV2ForCausalLM", "Eagle3DeepseekV3ForCausalLM"};

// Gemma3TextConfig's max_position_embeddings is 131,072 (its published configs omit it).
constexpr ModelType kLlamaTypes[] = {
    {"llama"},     {"mistral"},           {"qwen2"},        {"qwen3"},     {"phi3"},      {"granite"},
    {"gemma"},     {"gemma2"},            {"gemma3_text", 131072},          {"qwen2_moe"}, {"qwen3_moe"},
    {"mixtral"},   {"minimax_m2"},        {"qwen3_vl_text"}, {"qwen3_vl_moe_text"}, {"cohere"},    {"cohere2"},
    {"olmo2"},     {"olmo3"},             {"exaone4"},       {"ministral3"}, {"qwen2_vl"},  {"qwen2_5_vl"}, {"mimo"},
    {"seed_oss"},  {"hunyuan_v1_dense"}, {"hunyuan_v1_moe"}, {"phimoe"}, {"ernie4_5"}, {"ernie4_5_moe"}};
constexpr std::string_view kLlamaArchitectures[] = {
    "LlamaForCausalLM",   "LLaMAForCausalLM",     "MistralForCausalLM",    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",   "Phi3ForCausalLM",      "GraniteForCausalLM",    "GemmaForCausalLM",
    "Gemma2ForCausalLM",  "Gemma3ForCausalLM",    "Gemma3ForConditionalGeneration", "Qwen2MoeForCausalLM",
    "Qwen3MoeForCausalLM", "MixtralForCausalLM",  "MiniMaxM2ForCausalLM",  "Qwen3VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration",         "Mistral3ForConditionalGeneration", "CohereForCausalLM",
    "Cohere2ForCausalLM", "Olmo2ForCausalLM",     "Olmo3ForCausalLM",      "Exaone4ForCausalLM",
    "Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration", "MiMoForCausalLM",
    "SeedOssForCausalLM", "HunYuanDenseV1ForCausalLM", "HunYuanMoEV1ForCausalLM", "PhiMoEForCausalLM",
    "Ernie4_5ForCausalLM", "Ernie4_5_MoeForCausalLM",
    // EAGLE draft heads (speculative-decoding models of vLLM's registry; eagle_head.cpp).
    "EagleLlamaForCausalLM", "Eagle3LlamaForCausalLM", "LlamaForCausalLMEagle3", "PeagleLlamaForCausalLM",
    "PEagleDraftModel", "Eagle3MiniMaxM2ForCausalLM", "Eagle3Qwen2_5vlForCausalLM", "Eagle3Qwen3vlForCausalLM"};

constexpr ModelType kLlama4Types[] = {{"llama4_text"}};
constexpr std::string_view kLlama4Architectures[] = {"Llama4ForCausalLM", "Llama4ForConditionalGeneration"};

constexpr ModelType kGptOssTypes[] = {{"gpt_oss"}};
constexpr std::string_view kGptOssArchitectures[] = {"GptOssForCausalLM"};

constexpr ModelType kQwen3NextTypes[] = {{"qwen3_next"}, {"qwen3_5_text"}, {"qwen3_5_moe_text"}};
constexpr std::string_view kQwen3NextArchitectures[] = {
    "Qwen3NextForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration"};

constexpr ModelType kNemotronHTypes[] = {{"nemotron_h"}};
constexpr std::string_view kNemotronHArchitectures[] = {"NemotronHForCausalLM"};

constexpr ModelType kGlm4MoeTypes[] = {{"glm4_moe"}};
constexpr std::string_view kGlm4MoeArchitectures[] = {"Glm4MoeForCausalLM"};

// JambaConfig's max_position_embeddings is 262,144 (Jamba-v0.1's config predates the key).
constexpr ModelType kJambaTypes[] = {{"jamba", 262144}};
constexpr std::string_view kJambaArchitectures[] = {"JambaForCausalLM"};

constexpr ModelType kNemotronNasTypes[] = {{"nemotron-nas"}};
constexpr std::string_view kNemotronNasArchitectures[] = {"DeciLMForCausalLM"};

constexpr ModelType kGemma4Types[] = {{"gemma4_text"}};
constexpr std::string_view kGemma4Architectures[] = {"Gemma4ForConditionalGeneration", "Gemma4ForCausalLM"};

constexpr ModelType kGraniteHybridTypes[] = {{"granitemoehybrid"}};
constexpr std::string_view kGraniteHybridArchitectures[] = {"GraniteMoeHybridForCausalLM"};

// FalconH1Config's max_position_embeddings is 8192 when a config omits it.
constexpr ModelType kFalconH1Types[] = {{"falcon_h1", 8192}};
constexpr std::string_view kFalconH1Architectures[] = {"FalconH1ForCausalLM"};

// DeepseekV4Config's max_position_embeddings is 1,048,576.
constexpr ModelType kDeepseekV4Types[] = {{"deepseek_v4", 1048576}};
constexpr std::string_view kDeepseekV4Architectures[] = {"DeepseekV4ForCausalLM"};

constexpr ModelType kStep3p5Types[] = {{"step3p5"}};
constexpr std::string_view kStep3p5Architectures[] = {"Step3p5ForCausalLM"};

constexpr ModelType kKimiLinearTypes[] = {{"kimi_linear"}};
constexpr std::string_view kKimiLinearArchitectures[] = {"KimiLinearForCausalLM"};

const std::array kFamilies = {
    Family{"deepseek_v2", kDeepseekTypes, kDeepseekArchitectures, parse_deepseek_v2},
    Family{"llama", kLlamaTypes, kLlamaArchitectures, parse_llama},
    Family{"llama4", kLlama4Types, kLlama4Architectures, parse_llama4},
    Family{"gpt_oss", kGptOssTypes, kGptOssArchitectures, parse_gpt_oss},
    Family{"qwen3_next", kQwen3NextTypes, kQwen3NextArchitectures, parse_qwen3_next},
    Family{"nemotron_h", kNemotronHTypes, kNemotronHArchitectures, parse_nemotron_h},
    Family{"kimi_linear", kKimiLinearTypes, kKimiLinearArchitectures, parse_kimi_linear},
    Family{"glm4_moe", kGlm4MoeTypes, kGlm4MoeArchitectures, parse_glm4_moe},
    Family{"jamba", kJambaTypes, kJambaArchitectures, parse_jamba},
    Family{"nemotron_nas", kNemotronNasTypes, kNemotronNasArchitectures, parse_nemotron_nas},
    Family{"gemma4", kGemma4Types, kGemma4Architectures, parse_gemma4},
    Family{"granitemoehybrid", kGraniteHybridTypes, kGraniteHybridArchitectures, parse_granite_hybrid},
    Family{"falcon_h1", kFalconH1Types, kFalconH1Architectures, parse_falcon_h1},
    Family{"deepseek_v4", kDeepseekV4Types, kDeepseekV4Architectures, parse_deepseek_v4},
    Family{"step3p5", kStep3p5Types, kStep3p5Architectures, parse_step3p5},
};

}  // namespace

std::span<const Family> families() { return kFamilies; }

FamilyMatch family_for_model_type(std::string_view model_type) {
  for (const Family& family : kFamilies) {
    for (const ModelType& type : family.model_types) {
      if (type.name == model_type) return {&family, &type};
    }
  }
  return {};
}

namespace {

struct Hint {
  std::string_view prefix;
  std::string_view text;
};

// Model types known to need more than the generic path: each is refused with its reason.
constexpr Hint kHints[] = {
    // Architectures no modelled vLLM serves: an answer, not a gap in gpubudget.
    {"mllama", "Llama 3.2 Vision (MllamaForConditionalGeneration) has no implementation in vLLM 0.11 or later: "
               "vLLM removed its encoder-decoder support in #24907 (2025-09-15); gpubudget models 0.11 and later"},
    {"step3p7", "vLLM (its main branch of 2026-05) registers no Step-3.7 architecture (it has Step3TextForCausalLM "
                "and Step3p5ForCausalLM); not modelled"},
    {"minimax_m3", "vLLM (its main branch of 2026-05) registers no MiniMax-M3 architecture (it has MiniMax-M2 and "
                   "MiniMax-Text-01); not modelled"},
};

const Hint* hint_for(std::string_view model_type) {
  for (const auto& hint : kHints) {
    if (model_type.substr(0, hint.prefix.size()) == hint.prefix) return &hint;
  }
  return nullptr;
}

}  // namespace

bool generic_path_allowed(std::string_view model_type) { return hint_for(model_type) == nullptr; }

}  // namespace gpubudget::detail

namespace gpubudget {

std::vector<FamilyInfo> list_families() {
  std::vector<FamilyInfo> out;
  for (const detail::Family& family : detail::families()) {
    FamilyInfo info;
    info.name = std::string(family.name);
    for (const auto& type : family.model_types) info.model_types.emplace_back(type.name);
    for (const auto& arch : family.architectures) info.architectures.emplace_back(arch);
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace gpubudget

namespace gpubudget::detail {

std::string closest_family_hint(std::string_view model_type) {
  if (const Hint* hint = hint_for(model_type)) return std::string(hint->text);
  std::string types;
  for (const Family& family : kFamilies) {
    for (const ModelType& type : family.model_types) types += fmt::format("{}{}", types.empty() ? "" : ", ", type.name);
  }
  return "supported model types: " + types;
}

}  // namespace gpubudget::detail

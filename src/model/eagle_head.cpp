// EAGLE draft heads (llama_eagle.py EagleLlamaForCausalLM, llama_eagle3.py Eagle3LlamaForCausalLM,
// deepseek_eagle3.py Eagle3DeepseekV2ForCausalLM): a Llama or DeepSeek decoder config (parsed by the llama
// or deepseek_v2 family) with keys of its own. They matter only when the head is given as
// --speculative-config model (drafters.cpp). What its checkpoint stores is read with the model's folder
// (locate_model.cpp).
#include <algorithm>
#include <array>
#include <string_view>

#include "model/parse_context.h"

namespace gpubudget::detail {

namespace {

// vLLM's registry (_SPECULATIVE_DECODING_MODELS) names that map to the two Llama EAGLE heads
// (llama_eagle.EagleLlamaForCausalLM, llama_eagle3.Eagle3LlamaForCausalLM) and to the DeepSeek one
// (deepseek_eagle3.Eagle3DeepseekV2ForCausalLM).
constexpr std::array<std::string_view, 10> kDraftOnlyArchitectures = {
    "EagleLlamaForCausalLM",      "Eagle3LlamaForCausalLM",      "LlamaForCausalLMEagle3",
    "PeagleLlamaForCausalLM",     "PEagleDraftModel",            "Eagle3MiniMaxM2ForCausalLM",
    "Eagle3Qwen2_5vlForCausalLM", "Eagle3Qwen3vlForCausalLM",    "Eagle3DeepseekV2ForCausalLM",
    "Eagle3DeepseekV3ForCausalLM"};

bool draft_only_architecture(std::string_view architecture) {
  return std::find(kDraftOnlyArchitectures.begin(), kDraftOnlyArchitectures.end(), architecture) !=
         kDraftOnlyArchitectures.end();
}

}  // namespace

bool declares_eagle_head(const JsonReader& root, std::string_view architecture) {
  static constexpr std::string_view kEagleKeys[] = {"draft_vocab_size", "target_hidden_size", "norm_before_fc",
                                                    "norm_before_residual", "eagle_config"};
  return draft_only_architecture(architecture) ||
         std::any_of(std::begin(kEagleKeys), std::end(kEagleKeys), [&](std::string_view k) { return root.has(k); });
}

void parse_eagle_head(const JsonReader& root, ModelSpec& model) {
  if (!declares_eagle_head(root, model.architecture)) return;
  EagleHeadConfig head;
  head.draft_only_architecture = draft_only_architecture(model.architecture);
  head.draft_vocab_size = root.optional_integer("draft_vocab_size", 1, kMaxVocab).value_or(0);
  head.target_hidden_size = root.optional_integer("target_hidden_size", 1, kMaxHidden).value_or(0);
  head.norm_before_fc = root.boolean("norm_before_fc", false);
  (void)root.boolean("norm_before_residual", false);  // where the residual is taken: no memory effect
  if (const auto eagle = root.optional_object("eagle_config")) {
    head.use_aux_hidden_state = eagle->boolean("use_aux_hidden_state", true);
    (void)eagle->integer_list("eagle_aux_hidden_state_layer_ids", 0, kMaxLayers);  // which target layers feed fc
  }
  model.eagle_head = head;
}

}  // namespace gpubudget::detail

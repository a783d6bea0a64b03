// EAGLE draft heads (llama_eagle.py EagleLlamaForCausalLM, llama_eagle3.py Eagle3LlamaForCausalLM): a
// Llama decoder config (model_type llama, parsed by the llama family) with keys of its own. They matter
// only when the head is given as --speculative-config model (drafters.cpp). What its checkpoint stores
// is read with the model's folder (locate_model.cpp).
#include <algorithm>
#include <array>
#include <string_view>

#include "parse_context.h"

namespace gpubudget::detail {

namespace {

// vLLM's registry (_SPECULATIVE_DECODING_MODELS) names that map to the two Llama EAGLE heads
// (llama_eagle.EagleLlamaForCausalLM, llama_eagle3.Eagle3LlamaForCausalLM).
constexpr std::array<std::string_view, 8> kDraftOnlyArchitectures = {
    "EagleLlamaForCausalLM",      "Eagle3LlamaForCausalLM",     "LlamaForCausalLMEagle3",
    "PeagleLlamaForCausalLM",     "PEagleDraftModel",           "Eagle3MiniMaxM2ForCausalLM",
    "Eagle3Qwen2_5vlForCausalLM", "Eagle3Qwen3vlForCausalLM"};

}  // namespace

void parse_eagle_head(const JsonReader& root, ModelSpec& model) {
  const bool draft_only = std::find(kDraftOnlyArchitectures.begin(), kDraftOnlyArchitectures.end(),
                                    model.architecture) != kDraftOnlyArchitectures.end();
  static constexpr std::string_view kEagleKeys[] = {"draft_vocab_size", "target_hidden_size", "norm_before_fc",
                                                    "norm_before_residual", "eagle_config"};
  const bool eagle_keys =
      std::any_of(std::begin(kEagleKeys), std::end(kEagleKeys), [&](std::string_view k) { return root.has(k); });
  if (!draft_only && !eagle_keys) return;
  EagleHeadConfig head;
  head.draft_only_architecture = draft_only;
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

// The reviewed lists of config.json keys without effect on what vLLM allocates (parse_context.h,
// is_without_memory_effect). A key on neither list and unread by the family parser is reported
// (ModelSpec::unmodelled_config_keys): every new key is a decision, made here, with its reason.
#include <algorithm>
#include <string_view>

#include "model/families.h"
#include "model/parse_context.h"

namespace gpubudget::detail {

namespace {

struct ReviewedKey {
  std::string_view key;
  std::string_view reason;
};

// Keys no family's memory depends on (vLLM sizes no tensor, cache or buffer by them).
constexpr ReviewedKey kAnyFamily[] = {
    // transformers metadata and loading switches
    {"_attn_implementation", "attention kernel choice of transformers"},
    {"_name_or_path", "where the config came from"},
    {"architectures", "read at the top level; a nested copy is metadata"},
    {"auto_map", "remote-code class names"},
    {"cache_implementation", "transformers' generation cache"},
    {"dtype", "read from the language model's config when it has one"},
    {"model_type", "read from the language model's config when it has one"},
    {"torch_dtype", "read from the language model's config when it has one"},
    {"transformers_version", "metadata"},
    {"use_bfloat16", "transformers' legacy flag; the dtype is read from torch_dtype / dtype"},
    {"use_cache", "transformers' generation cache"},
    {"use_mamba_kernels", "kernel choice of transformers"},
    {"torchscript", "transformers export flag"},
    {"return_dict", "transformers output format"},
    {"output_attentions", "transformers output format"},
    {"output_hidden_states", "transformers output format"},
    {"output_scores", "transformers output format"},
    {"return_dict_in_generate", "transformers output format"},
    {"pruned_heads", "transformers' pruning record (vLLM builds every head)"},
    {"tie_encoder_decoder", "encoder-decoder models only"},
    {"is_decoder", "transformers metadata"},
    {"is_encoder_decoder", "transformers metadata"},
    {"add_cross_attention", "transformers metadata (encoder-decoder)"},
    {"cross_attention_hidden_size", "transformers metadata (encoder-decoder)"},
    {"chunk_size_feed_forward", "transformers' chunked feed-forward at inference"},
    {"tf_legacy_loss", "training loss"},
    {"problem_type", "task head metadata"},
    {"finetuning_task", "task head metadata"},
    {"id2label", "task head metadata"},
    {"label2id", "task head metadata"},
    {"task_specific_params", "task head metadata"},
    {"prefix", "tokenizer prefix"},
    {"tokenizer_class", "tokenizer"},
    // token ids and multimodal placeholders
    {"bos_token_id", "token id"},
    {"eos_token_id", "token id"},
    {"pad_token_id", "token id"},
    {"sep_token_id", "token id"},
    {"decoder_start_token_id", "token id"},
    {"forced_bos_token_id", "token id"},
    {"forced_eos_token_id", "token id"},
    {"image_token_id", "placeholder token id"},
    {"image_token_index", "placeholder token id"},
    {"video_token_id", "placeholder token id"},
    {"vision_token_id", "placeholder token id"},
    {"vision_start_token_id", "placeholder token id"},
    {"vision_end_token_id", "placeholder token id"},
    {"boi_token_index", "placeholder token id"},
    {"eoi_token_index", "placeholder token id"},
    {"media_placeholder_token_id", "placeholder token id"},
    {"audio_token_id", "placeholder token id"},
    {"boa_token_id", "placeholder token id"},
    {"boi_token_id", "placeholder token id"},
    {"eoa_token_id", "placeholder token id"},
    {"eoa_token_index", "placeholder token id"},
    {"eoi_token_id", "placeholder token id"},
    {"video_placeholder", "placeholder text"},
    {"ignore_index", "training loss label"},
    // generation defaults
    {"bad_words_ids", "generation default"},
    {"begin_suppress_tokens", "generation default"},
    {"suppress_tokens", "generation default"},
    {"diversity_penalty", "generation default"},
    {"do_sample", "generation default"},
    {"early_stopping", "generation default"},
    {"encoder_no_repeat_ngram_size", "generation default"},
    {"exponential_decay_length_penalty", "generation default"},
    {"length_penalty", "generation default"},
    {"max_length", "generation default (vLLM's length is max_position_embeddings / --max-model-len)"},
    {"min_length", "generation default"},
    {"no_repeat_ngram_size", "generation default"},
    {"num_beam_groups", "generation default"},
    {"num_beams", "generation default"},
    {"num_return_sequences", "generation default"},
    {"remove_invalid_values", "generation default"},
    {"repetition_penalty", "generation default"},
    {"temperature", "generation default"},
    {"top_k", "generation default"},
    {"top_p", "generation default"},
    {"typical_p", "generation default"},
    {"num_logits_to_keep", "logits computed per step"},
    // training and initialisation
    {"attention_dropout", "training"},
    {"hidden_dropout", "training"},
    {"embd_pdrop", "training"},
    {"resid_pdrop", "training"},
    {"initializer_range", "initialisation"},
    {"rescale_prenorm_residual", "initialisation"},
    {"time_step_floor", "Mamba initialisation"},
    {"time_step_max", "Mamba initialisation"},
    {"time_step_min", "Mamba initialisation"},
    {"time_step_limit", "Mamba dt clamp at run time"},
    {"time_step_rank", "Mamba initialisation"},
    {"pretraining_tp", "tensor-parallel degree of pre-training (transformers splits matmuls, vLLM does not)"},
    {"output_router_logits", "training loss"},
    {"router_aux_loss_coef", "training loss"},
    {"router_jitter_noise", "training noise"},
    {"aux_loss_alpha", "training loss"},
    {"seq_aux", "training loss"},
    // numerics and kernels: no tensor is sized by them
    {"rms_norm_eps", "norm epsilon"},
    {"layer_norm_epsilon", "norm epsilon"},
    {"layer_norm_eps", "norm epsilon"},
    {"logit_scale", "logits multiplier (Command-R)"},
    {"norm_eps", "norm epsilon"},
    {"hidden_act", "activation function (the family fixes which projections exist)"},
    {"hidden_activation", "activation function (the family fixes which projections exist)"},
    {"mamba_hidden_act", "activation function"},
    {"mlp_hidden_act", "activation function (the family fixes which projections exist)"},
    {"projector_hidden_act", "activation function"},
    {"swiglu_limit", "activation clamp"},
    {"attn_logit_softcapping", "logit soft-capping"},
    {"final_logit_softcapping", "logit soft-capping"},
    {"query_pre_attn_scalar", "attention scale"},
    {"residual_in_fp32", "residual precision at run time"},
    {"rope_theta", "RoPE base: the cos/sin cache's size does not depend on it"},
    {"rope_local_base_freq", "RoPE base of local layers"},
    {"rope_interleave", "RoPE layout"},
    {"indexer_rope_interleave", "RoPE layout of the sparse-attention indexer"},
    {"initial_context_length", "YaRN parameter (the cache follows max_position_embeddings)"},
    {"original_max_position_embeddings", "RoPE scaling parameter (the cache follows max_position_embeddings)"},
    // expert routing: which experts run, not which exist
    {"norm_topk_prob", "routing"},
    {"topk_group", "routing"},
    {"n_group", "routing"},
    {"num_expert_group", "routing"},
    {"use_grouped_topk", "routing"},
    {"scoring_func", "routing"},
    {"routed_scaling_factor", "routing"},
    {"moe_renormalize", "routing"},
    {"moe_router_activation_func", "routing"},
    {"ep_size", "expert parallelism of training (vLLM's is --enable-expert-parallel)"},
    {"index_topk", "tokens the sparse-attention indexer selects (compute, not memory)"},
};

// Keys of the parsers outside the family table (medusa.cpp) that their vLLM implementation does not read,
// with the value that makes it so ("" = any value). A family's own are in its registration
// (Family::reviewed_keys).
struct FamilyKey {
  std::string_view family;
  std::string_view key;
  std::string_view value;  // the JSON text the value must dump to, "" = any
  std::string_view reason;
};

constexpr FamilyKey kByFamily[] = {
    {"medusa", "max_paths", "", "MedusaConfig's tree-search setting: vLLM proposes top-1 tokens only"},
    {"medusa", "topk", "", "MedusaConfig's tree-search setting: vLLM proposes top-1 tokens only"},
    {"medusa", "base_model_name_or_path", "", "the target the heads were trained on: metadata"},
};

}  // namespace

namespace {

// A token id by name and value: a key ending in `_id`, `_ids`, `_token_index` whose value is an integer
// or a list of integers (`eod_token_id`, `pad_id`, `im_start_id`, `mask_init_id`: the tokenizer's, which
// no layer is sized by). A size-like key never has such a name.
bool is_token_id(std::string_view key, const nlohmann::json& value) {
  const bool named = key.ends_with("_id") || key.ends_with("_ids") || key.ends_with("_token_index");
  const auto integer = [](const nlohmann::json& v) { return v.is_number_integer(); };
  const bool integers = integer(value) || (value.is_array() && !value.empty() && std::all_of(value.begin(), value.end(), integer));
  return named && integers;
}

}  // namespace

bool is_without_memory_effect(std::string_view family, std::string_view key, const nlohmann::json& value) {
  if (is_token_id(key, value)) return true;
  if (std::any_of(std::begin(kAnyFamily), std::end(kAnyFamily), [&](const ReviewedKey& k) { return k.key == key; })) {
    return true;
  }
  const auto matches = [&](std::string_view k, std::string_view v) { return k == key && (v.empty() || value.dump() == v); };
  for (const Family* f : families()) {
    if (f->name != family) continue;
    for (const auto& k : f->reviewed_keys) {
      if (matches(k.key, k.value)) return true;
    }
  }
  return std::any_of(std::begin(kByFamily), std::end(kByFamily),
                     [&](const FamilyKey& k) { return k.family == family && matches(k.key, k.value); });
}

}  // namespace gpubudget::detail

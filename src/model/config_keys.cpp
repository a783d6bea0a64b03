// The reviewed lists of config.json keys without effect on what vLLM allocates (parse_context.h,
// is_without_memory_effect). A key on neither list and unread by the family parser is reported
// (ModelSpec::unmodelled_config_keys): every new key is a decision, made here, with its reason.
#include <algorithm>
#include <string_view>

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

// Keys a family's vLLM implementation does not read (or reads to a structure the parser builds
// anyway), with the value that makes it so ("" = any value).
struct FamilyKey {
  std::string_view family;
  std::string_view key;
  std::string_view value;  // the JSON text the value must dump to, "" = any
  std::string_view reason;
};

constexpr FamilyKey kByFamily[] = {
    {"deepseek_v2", "attention_bias", "", "vLLM's MLA projections have no bias"},
    {"deepseek_v4", "attention_bias", "false", "no projection of DeepSeek-V4 has a bias"},
    {"deepseek_v4", "hc_eps", "", "hyper-connection numerics (Sinkhorn epsilon)"},
    {"deepseek_v4", "hc_sinkhorn_iters", "", "hyper-connection numerics (Sinkhorn iterations)"},
    {"step3p5", "use_qk_norm", "true", "vLLM builds q_norm and k_norm in every layer"},
    {"step3p5", "moe_layer_offset", "", "vLLM places MoE layers by moe_layers_enum, read"},
    {"step3p5", "moe_every_n_layer", "", "vLLM places MoE layers by moe_layers_enum, read"},
    {"step3p5", "norm_expert_weight", "", "expert weight normalisation (routing)"},
    {"step3p5", "moe_router_activation", "", "router activation (routing)"},
    {"step3p5", "moe_router_scaling_factor", "", "routed scaling (routing)"},
    {"step3p5", "sink", "false", "no attention sinks"},
    {"step3p5", "use_rope_layers", "", "which layers apply RoPE (the cache is built either way)"},
    {"step3p5", "swiglu_limits", "", "activation clamp (numerics)"},
    {"step3p5", "swiglu_limits_shared", "", "activation clamp of the shared expert (numerics)"},
    {"step3p5", "zero_centered", "true", "GemmaRMSNorm: same weight shape"},
    {"deepseek_v2", "mlp_bias", "false", "DeepSeek MLPs without bias"},
    {"deepseek_v2", "num_key_value_heads", "", "MLA: one latent KV per token, no KV heads"},
    {"deepseek_v2", "head_dim", "", "MLA sizes heads by qk_nope_head_dim + qk_rope_head_dim and v_head_dim"},
    {"deepseek_v2", "qk_head_dim", "", "qk_nope_head_dim + qk_rope_head_dim, read separately"},
    {"deepseek_v2", "partial_rotary_factor", "1.0", "MLA rotates qk_rope_head_dim, read"},
    {"llama", "max_window_layers", "", "used by vLLM only with use_sliding_window, which the parser reads"},
    {"llama", "qkv_bias", "", "not read by vLLM's Qwen3-MoE (its biases follow attention_bias)"},
    {"llama", "input_jitter_noise", "", "PhiMoE's training-time input noise"},
    {"llama", "attention_out_bias", "false", "Seed-OSS: o_proj without bias, as seed_oss.py builds it"},
    {"llama", "use_qk_norm", "true", "the family builds q/k norms whatever the key says"},
    {"falcon_h1", "attention_bias", "false", "falcon_h1.py builds q/k/v and o without bias"},
    {"falcon_h1", "mlp_bias", "false", "falcon_h1.py builds the MLP without bias"},
    {"falcon_h1", "projectors_bias", "false", "falcon_h1.py builds no projector bias"},
    {"falcon_h1", "mamba_expand", "", "used only when mamba_d_ssm is absent, which the parser then reads"},
    {"granitemoehybrid", "attention_multiplier", "", "muP scale of the attention scores: no tensor"},
    {"granitemoehybrid", "embedding_multiplier", "", "muP scale of the embeddings: no tensor"},
    {"granitemoehybrid", "logits_scaling", "", "muP scale of the logits: no tensor"},
    {"granitemoehybrid", "residual_multiplier", "", "muP scale of the residual stream: no tensor"},
    {"gemma4", "use_bidirectional_attention", "", "image tokens attend both ways: a mask, no tensor"},
    {"gemma4", "vocab_size_per_layer_input", "", "the per-layer embeddings' vocabulary, used only with hidden_size_per_layer_input > 0 (refused)"},
    {"gemma4", "expert_intermediate_size", "null", "no experts"},
    {"gemma4", "moe_intermediate_size", "null", "no experts (enable_moe_block false)"},
    {"gemma4", "num_experts", "null", "no experts (enable_moe_block false)"},
    {"gemma4", "top_k_experts", "null", "no experts (enable_moe_block false)"},
    {"llama4", "use_qk_norm", "", "an L2 norm without weights (llama4.py: RMSNorm(has_weight=False))"},
    {"llama", "sliding_window_size", "", "Gemma 2's alias of sliding_window, which the parser reads"},
    {"llama", "sliding_window_pattern", "\"LLLG\"", "EXAONE 4's pattern, shipped with the layer_types the parser reads"},
    {"llama", "vision_feature_layer", "-1", "every vision layer is kept (vLLM drops the layers after another one)"},
    {"llama", "use_routing_bias", "true", "MiniMax-M2's score-correction bias, which the parser adds"},
    {"llama", "qk_norm_type", "\"per_layer\"", "MiniMax-M2's q/k norms over all heads, which the parser builds"},
    {"llama", "use_mtp", "", "MTP modules are loaded only with speculative decoding"},
    {"llama", "num_mtp_modules", "", "MTP modules are loaded only with speculative decoding"},
    {"llama", "mtp_transformer_layers", "", "MTP modules are loaded only with speculative decoding"},
    {"gpt_oss", "attention_bias", "true", "the parser builds gpt-oss's q/k/v/o biases"},
    {"gpt_oss", "experts_per_token", "", "alias of num_experts_per_tok"},
    {"qwen3_next", "use_sliding_window", "false", "no sliding window"},
    {"qwen3_next", "attention_bias", "false", "no attention bias"},
    {"qwen3_next", "attn_output_gate", "true", "the parser builds the gated query projection"},
    {"qwen3_next", "full_attention_interval", "", "the layer types are read from layer_types"},
    {"qwen3_next", "mtp_use_dedicated_embeddings", "", "MTP layers are loaded only with speculative decoding"},
    {"qwen3_next", "output_gate_type", "\"swish\"", "the gate's activation"},
    {"nemotron_h", "attention_bias", "false", "no attention bias"},
    {"nemotron_h", "sliding_window", "null", "no sliding window"},
    {"nemotron_h", "n_shared_experts", "1", "one shared expert of moe_shared_expert_intermediate_size"},
    {"nemotron_h", "partial_rotary_factor", "1.0", "full rotary width"},
    {"nemotron_h", "expand", "", "the Mamba width is mamba_num_heads x mamba_head_dim, read"},
    {"nemotron_h", "mtp_layers_block_type", "", "MTP layers are loaded only with speculative decoding"},
    {"nemotron_h", "moe_shared_expert_overlap", "", "whether the shared expert runs overlapped (compute)"},
    {"kimi_linear", "num_nextn_predict_layers", "0", "no MTP layer"},
    {"llama", "use_mrope", "false", "MiMo: plain RoPE"},
    {"jamba", "n_ctx", "", "transformers' context default (the length is max_position_embeddings / --max-model-len)"},
    {"jamba", "calc_logits_for_entire_prompt", "", "logits computed (compute)"},
    {"kimi_linear", "head_dim", "", "MLA layers are sized by the MLA keys, KDA layers by linear_attn_config"},
    {"kimi_linear", "num_key_value_heads", "", "MLA layers are sized by the MLA keys, KDA layers by linear_attn_config"},
    {"deepseek_v2", "use_unified_vision_chunk", "", "Kimi-K2.5's video chunking in the processor"},
    {"kimi_linear", "mla_use_nope", "", "whether MLA layers apply RoPE (compute)"},
    {"medusa", "max_paths", "", "MedusaConfig's tree-search setting: vLLM proposes top-1 tokens only"},
    {"medusa", "topk", "", "MedusaConfig's tree-search setting: vLLM proposes top-1 tokens only"},
    {"medusa", "base_model_name_or_path", "", "the target the heads were trained on: metadata"},
};

}  // namespace

bool is_without_memory_effect(std::string_view family, std::string_view key, const nlohmann::json& value) {
  if (std::any_of(std::begin(kAnyFamily), std::end(kAnyFamily), [&](const ReviewedKey& k) { return k.key == key; })) {
    return true;
  }
  return std::any_of(std::begin(kByFamily), std::end(kByFamily), [&](const FamilyKey& k) {
    return k.family == family && k.key == key && (k.value.empty() || value.dump() == k.value);
  });
}

}  // namespace gpubudget::detail

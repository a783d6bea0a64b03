// Building blocks the family parsers share: a gated MLP, a FusedMoE block, a GQA attention block.
#pragma once

#include <optional>
#include <string>

#include "model/parse_context.h"

namespace gpubudget::detail {

// gate_up_proj [2I, H] (column) and down_proj [H, I] (row); checkpoint shards gate/up/down_proj.
void add_gated_mlp(const ParseContext& c, LayerSpec& layer, const std::string& prefix, std::int64_t hidden,
                   std::int64_t intermediate, Component component, bool bias = false);

// A FusedMoE block of `experts` experts named `name` (gated unless said otherwise).
void add_experts(const ParseContext& c, LayerSpec& layer, const std::string& name, std::int64_t experts,
                 std::int64_t intermediate, std::int64_t hidden, bool gated = true);

// Full attention: qkv_proj (QKV-parallel) and o_proj (row). `query_heads` may exceed the attention
// heads when the query projection also yields an output gate (Qwen3-Next: 2·n).
void add_gqa_attention(const ParseContext& c, LayerSpec& layer, const std::string& prefix, std::int64_t hidden,
                       std::int64_t query_heads, std::int64_t attention_heads, std::int64_t kv_heads,
                       std::int64_t head_dim, bool qkv_bias = false, bool o_bias = false);

// vLLM's MambaMixer2 (layers/mamba/mamba_mixer2.py) under `prefix` ("...mixer."): in_proj [z, x, B, C,
// dt] = [2·inner + 2·G·S + heads, H], conv1d [inner + 2·G·S, kernel] (+ bias; never quantized), A
// (float32 in vLLM, the checkpoint's A_log in the model dtype), D and dt_bias per head, the gated
// RMS norm [inner] when `rms_norm`, out_proj [H, inner]. Sets the layer's Mamba2 state.
struct Mamba2Geometry {
  std::int64_t heads = 0, head_dim = 0, groups = 0, state = 0, conv_kernel = 0;
  std::int64_t inner = 0;  // heads × head_dim unless the config says otherwise (Falcon-H1 mamba_d_ssm)
  bool conv_bias = true, proj_bias = false, rms_norm = true;
  std::optional<Dtype> ssm_dtype;  // the config's SSM cache dtype, when it names one
};
void add_mamba2_mixer(const ParseContext& c, LayerSpec& layer, const std::string& prefix, std::int64_t hidden,
                      const Mamba2Geometry& g);
// The `mamba_*` keys Granite 4.0 H and Falcon-H1 share (mamba_n_heads, mamba_d_head, mamba_n_groups,
// mamba_d_state, mamba_d_conv, mamba_conv_bias, mamba_proj_bias; inner = mamba_expand x hidden, or
// mamba_d_ssm when `reads_d_ssm` and the config gives it) and the model's SSM chunk (mamba_chunk_size,
// default 256).
Mamba2Geometry read_mamba2_geometry(const JsonReader& config, std::int64_t hidden, bool reads_d_ssm, ModelSpec& model);

// A torch dtype named by config field `key` ("float32", "bfloat16", ...), or `fallback` when absent.
Dtype dtype_field(const JsonReader& config, const std::string& key, Dtype fallback);
// The same, nullopt when the key is absent.
std::optional<Dtype> optional_dtype_field(const JsonReader& config, const std::string& key);

// The KV geometry of a standard attention layer (full, sliding window or chunked local).
AttentionSpec standard_attention(AttentionKind kind, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim,
                                 std::int64_t window = 0);

// input_layernorm and post_attention_layernorm of width `hidden`.
void add_layer_norms(LayerSpec& layer, const std::string& prefix, std::int64_t hidden, Dtype dtype);

}  // namespace gpubudget::detail

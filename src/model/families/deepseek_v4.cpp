// DeepSeek-V4 (vLLM vllm/models/deepseek_v4/nvidia/model.py, attention.py, compressor.py, sparse_swa.py;
// docs/methodology.md §DeepSeek-V4). Every layer keeps a 128-token sliding window of 584-byte entries; layer
// i also compresses every `compress_ratios[i]` tokens (4 or 128) into one entry of an MLA cache, with a
// compressor whose state is cached per request, and the ratio-4 layers add a lightning indexer with its
// own key cache and compressor. Weights are FP8 with e8m0 block scales, routed experts MXFP4; hyper-
// connections keep `hc_mult` residual streams with float32 mixing tensors. The MTP layer is the draft
// model of speculative decoding only (load_weights skips `mtp.`).
#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

namespace {

// FlashMLA's cache entry (flashmla_sparse.py): 448 fp8 NoPE values, 64 bf16 RoPE values, 7 ue8m0 scales
// and one pad byte; real_page_size_bytes uses it whatever --kv-cache-dtype says.
constexpr std::int64_t kEntryBytes = 584;
constexpr std::int64_t kPageAlignment = 576;  // "FlashMLA requires 576B alignment"
constexpr std::int64_t kSwaBlockSize = 64;    // DeepseekV4SWACache
constexpr std::int64_t kIndexerHeadDim = 128;  // per compressed entry of the indexer key cache

ReplicatedTensor tensor(std::string name, Component component, std::int64_t elements, Dtype dtype) {
  return ReplicatedTensor{std::move(name), component, elements, dtype};
}

// A cache of one `entry_bytes` entry per `ratio` tokens, kept for the whole sequence (MLAAttentionSpec
// with compress_ratio, block size the cache's) or within `window` tokens (SlidingWindowMLASpec of
// `block_size` tokens per block).
AttentionSpec compressed_cache(std::int64_t heads, std::int64_t entry_bytes, std::int64_t ratio, std::int64_t window,
                               std::int64_t block_size) {
  AttentionSpec a;
  a.kind = window > 0 ? AttentionKind::kSlidingWindow : AttentionKind::kMla;
  a.num_attention_heads = heads;
  a.num_key_value_heads = 1;
  a.head_dim = 0;
  a.window = window;
  a.fixed_token_bytes = Bytes(entry_bytes);
  a.compress_ratio = ratio;
  a.page_alignment = kPageAlignment;
  a.block_size = block_size;
  a.mla_window = window > 0;
  return a;
}

// The compressor of a ratio-`r` cache of `dim`-wide entries (compressor.py): `coff` = 2 for ratio 4 (two
// overlapping windows), else 1. Weights replicated: ape fp32 [r, coff·dim], the fused bf16 wkv ⊕ wgate
// [2·coff·dim, H] (no quant config), norm [dim]. Its state cache: fp32 kv and score of 2·coff·dim values
// per token, a window of coff·r tokens in blocks of 4 (ratio 4) or 8.
void add_compressor(const ParseContext& c, LayerSpec& layer, const std::string& p, std::int64_t r, std::int64_t dim,
                    std::int64_t H, std::int64_t heads) {
  const std::int64_t coff = r == 4 ? 2 : 1;
  layer.replicated.push_back(tensor(cat(p, "ape"), Component::kAttention, r * coff * dim, Dtype::kFloat32));
  layer.linears.push_back(make_linear(cat(p, "fused_wkv_wgate"), Component::kAttention, Parallelism::kReplicated,
                                      {coff * dim, coff * dim}, H, c.unquantized()));
  layer.replicated.push_back(tensor(cat(p, "norm"), Component::kAttention, dim, c.dtype));
  layer.extra_kv.push_back(compressed_cache(heads, 2 * coff * dim * 4, 1, coff * r, r == 4 ? 4 : 8));
}

}  // namespace

void parse_deepseek_v4(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  const CommonHparams hp = read_common_hparams(t, {std::nullopt, std::nullopt, std::nullopt, true, false, std::nullopt});
  const std::int64_t H = hp.hidden_size, n = hp.num_attention_heads, L = hp.num_hidden_layers, d = hp.head_dim;
  if (hp.num_key_value_heads != 1) t.fail("num_key_value_heads", "1 (one latent KV per token)");
  const auto q_lora = t.integer("q_lora_rank", 1, kMaxHidden);
  const auto o_lora = t.integer("o_lora_rank", 1, kMaxHidden);
  const auto o_groups = t.integer("o_groups", 1, kMaxHeads);
  const auto rope = t.integer("qk_rope_head_dim", 1, kMaxHidden);
  if (n % o_groups != 0) t.fail("o_groups", fmt::format("a divisor of num_attention_heads {}", n));
  const auto E = t.integer("n_routed_experts", 1, kMaxExperts);
  const auto shared = t.optional_integer("n_shared_experts", 0, kMaxExperts).value_or(0);
  const auto moe_I = t.integer("moe_intermediate_size", 1, kMaxIntermediate);
  const auto topk = t.integer("num_experts_per_tok", 1, kMaxExperts);
  const auto hash_layers = t.optional_integer("num_hash_layers", 0, kMaxLayers).value_or(0);
  const bool noaux = t.optional_string("topk_method").value_or("") == "noaux_tc";
  const auto index_heads = t.integer("index_n_heads", 1, kMaxHeads);
  const auto index_dim = t.integer("index_head_dim", 1, kMaxHidden);
  const auto index_topk = t.integer("index_topk", 1, kMaxHidden);
  const auto hc = t.integer("hc_mult", 1, 64);
  const auto window = t.integer("sliding_window", 1, std::int64_t{1} << 32);
  const auto V = t.integer("vocab_size", 1, kMaxVocab);
  const auto ratios = t.integer_list("compress_ratios", 0, 1 << 20);
  if (static_cast<std::int64_t>(ratios.size()) < L) {
    t.fail("compress_ratios", fmt::format("at least num_hidden_layers ({}) entries", L));
  }
  for (const auto r : ratios) {
    if (r > 1 && r != 4 && r != 128) t.fail("compress_ratios", "entries 0, 1, 4 or 128 (the ratios vLLM builds)");
  }
  if (index_dim != kIndexerHeadDim) t.fail("index_head_dim", "128 (the indexer cache's 132-byte entries)");
  if (d != 512 || rope != 64) t.fail("head_dim", "512 with qk_rope_head_dim 64 (FlashMLA's 584-byte entries)");
  const auto expert_dtype = t.optional_string("expert_dtype").value_or("");
  if (expert_dtype != "fp4") {
    t.fail("expert_dtype", "\"fp4\" (MXFP4 routed experts; other DeepSeek-V4 checkpoints are not modelled)");
  }
  if (c.quantization.method != "fp8" || c.quantization.format.kind != QuantKind::kFp8Block ||
      c.quantization.format.block_n != 128 || c.quantization.format.block_k != 128) {
    throw InputError(fmt::format("{}: DeepSeek-V4 is modelled for its own checkpoint format only (quant_method fp8 "
                                 "with weight_block_size [128, 128]); got {}",
                                 t.path("quantization_config"),
                                 c.quantization.method.empty() ? "no quantization" : c.quantization.method));
  }
  model.hidden_size = H;
  model.vocab_size = V;
  model.num_experts_per_token = topk;
  model.skipped_mtp_layers = t.optional_integer("num_nextn_predict_layers", 0, kMaxLayers).value_or(0);
  model.sparse_attention = true;
  model.forced_attention_backend = "DEEPSEEK_V4_FLASHMLA_SPARSE";
  model.embedding_name = "embed";
  model.overheads_caveat = "no DeepSeek-V4 startup log is among the observations; the activation peak adds the "
                           "sparse-attention workspace vLLM reserves (from its source) to the fitted terms, and "
                           "post-load re-layouts of FP8 scales and MXFP4 experts (external kernels) are not counted";

  // DeepseekV4FP8Config.is_scale_e8m0 (expert_dtype fp4): block scales of one e8m0 byte, on disk and in
  // vLLM; routed experts MXFP4 (Mxfp4MoEMethod, no bias).
  QuantFormat fp8 = c.quantization.format;
  fp8.scale_bytes = 1;
  QuantFormat mxfp4;
  mxfp4.kind = QuantKind::kMxfp4;
  const Dtype dt = c.dtype;
  const QuantFormat plain = c.unquantized();
  const std::int64_t mix = (2 + hc) * hc;  // hyper-connection mixing rows
  const std::int64_t shared_I = shared * moe_I;

  // Layers [L, L + MTP) are the checkpoint's next-n predictors (ratio 1: a sliding window only).
  for (std::int64_t i = 0; i < L + model.skipped_mtp_layers; ++i) {
    const bool mtp = i >= L;
    const std::int64_t r = mtp ? 1 : std::max<std::int64_t>(1, ratios[static_cast<std::size_t>(i)]);
    LayerSpec layer;
    layer.index = i;
    layer.is_moe = true;
    // The sliding-window cache of every layer (DeepseekV4SWACache): 64-token blocks, 128-token window.
    layer.attention = compressed_cache(n, kEntryBytes, 1, window, kSwaBlockSize);
    const std::string p = mtp ? fmt::format("mtp.{}.", i - L) : fmt::format("layers.{}.", i);
    const std::string a = cat(p, "attn.");
    // attn_sink: fp32 per local head, padded to at least 64 for FlashMLA.
    ReplicatedTensor sink = tensor(cat(a, "attn_sink"), Component::kAttention, n, Dtype::kFloat32);
    sink.split_min_per_rank = 64;
    layer.replicated.push_back(sink);
    // wq_a ⊕ wkv fused and replicated (disable_tp); wq_b column-parallel; wo_a a column-parallel grouped
    // projection [o_groups·o_lora, n·d / o_groups]; wo_b row-parallel.
    layer.linears.push_back(make_linear(cat(a, "fused_wqa_wkv"), Component::kAttention, Parallelism::kReplicated,
                                        {q_lora, d}, H, fp8));
    layer.replicated.push_back(tensor(cat(a, "q_norm"), Component::kAttention, q_lora, dt));
    layer.replicated.push_back(tensor(cat(a, "kv_norm"), Component::kAttention, d, dt));
    layer.linears.push_back(
        make_linear(cat(a, "wq_b"), Component::kAttention, Parallelism::kColumn, {n * d}, q_lora, fp8));
    LinearModule wo_a = make_linear(cat(a, "wo_a"), Component::kAttention, Parallelism::kColumn,
                                    {o_groups * o_lora}, n * d / o_groups, fp8);
    wo_a.output_groups = o_groups;
    layer.linears.push_back(wo_a);
    layer.linears.push_back(
        make_linear(cat(a, "wo_b"), Component::kAttention, Parallelism::kRow, {H}, o_groups * o_lora, fp8));
    if (r > 1) {
      // The compressed MLA cache (DeepseekV4MLAAttention.get_kv_cache_spec): one entry per r tokens.
      layer.extra_kv.push_back(compressed_cache(n, kEntryBytes, r, 0, 0));
      add_compressor(c, layer, cat(a, "compressor."), r, d, H, n);
    }
    if (r == 4) {
      // The lightning indexer (replicated): wq_b FP8, weights_proj bf16, its own compressor of
      // index_head_dim entries; its key cache holds 128 fp8 values and one fp32 scale per entry.
      const std::string x = cat(a, "indexer.");
      layer.linears.push_back(make_linear(cat(x, "wq_b"), Component::kAttention, Parallelism::kReplicated,
                                          {index_heads * index_dim}, q_lora, fp8));
      layer.linears.push_back(make_linear(cat(x, "weights_proj"), Component::kAttention, Parallelism::kReplicated,
                                          {index_heads}, H, plain));
      layer.extra_kv.push_back(compressed_cache(n, index_dim + index_dim / 128 * 4, r, 0, 0));
      add_compressor(c, layer, cat(x, "compressor."), r, index_dim, H, n);
    }
    layer.replicated.push_back(tensor(cat(p, "attn_norm"), Component::kNorms, H, dt));
    layer.replicated.push_back(tensor(cat(p, "ffn_norm"), Component::kNorms, H, dt));
    // Hyper-connections: fn [mix, hc·H], base [mix], scale [3] in fp32, for attention and FFN.
    for (const std::string_view part : {"hc_attn_", "hc_ffn_"}) {
      const std::string h = cat(p, part);
      layer.replicated.push_back(tensor(cat(h, "fn"), Component::kNorms, mix * hc * H, Dtype::kFloat32));
      layer.replicated.push_back(tensor(cat(h, "base"), Component::kNorms, mix, Dtype::kFloat32));
      layer.replicated.push_back(tensor(cat(h, "scale"), Component::kNorms, 3, Dtype::kFloat32));
    }
    const std::string f = cat(p, "ffn.");
    // Router: a bf16 gate without quantization; hash layers route by a token → experts table (int32 in
    // vLLM, int64 on disk), the others add the fp32 correction bias of noaux_tc.
    layer.linears.push_back(make_linear(cat(f, "gate"), Component::kRouter, Parallelism::kReplicated, {E}, H, plain));
    if (!mtp && i < hash_layers) {
      ReplicatedTensor table = tensor(cat(f, "gate.tid2eid"), Component::kRouter, V * topk, Dtype::kInt32);
      table.checkpoint_dtype = Dtype::kInt64;
      layer.replicated.push_back(table);
    } else if (noaux) {
      layer.replicated.push_back(tensor(cat(f, "gate.bias"), Component::kRouter, E, Dtype::kFloat32));
    }
    if (shared_I > 0) {
      layer.linears.push_back(make_linear(cat(f, "shared_experts.w13"), Component::kSharedExperts,
                                          Parallelism::kColumn, {shared_I, shared_I}, H, fp8));
      layer.linears.push_back(make_linear(cat(f, "shared_experts.w2"), Component::kSharedExperts, Parallelism::kRow,
                                          {H}, shared_I, fp8));
    }
    ExpertsModule experts;
    experts.name = cat(f, "experts");
    experts.num_experts = E;
    experts.intermediate_size = moe_I;
    experts.hidden_size = H;
    experts.format = mxfp4;
    layer.experts.push_back(experts);
    (mtp ? model.mtp_layers : model.layers).push_back(std::move(layer));
  }
  model.final_norms.push_back(tensor("norm", Component::kNorms, H, dt));
  model.final_norms.push_back(tensor("hc_head_fn", Component::kNorms, hc * hc * H, Dtype::kFloat32));
  model.final_norms.push_back(tensor("hc_head_base", Component::kNorms, hc, Dtype::kFloat32));
  model.final_norms.push_back(tensor("hc_head_scale", Component::kNorms, 1, Dtype::kFloat32));
  for (std::int64_t i = 0; i < model.skipped_mtp_layers; ++i) {
    // The MTP block's own tensors (mtp.py): e_proj and h_proj FP8 [H, H], enorm, hnorm, its head norm and
    // hyper-connection head; it shares the target's embedding and head.
    const std::string p = fmt::format("mtp.{}.", i);
    for (const std::string_view proj : {"e_proj", "h_proj"}) {
      model.mtp_linears.push_back(make_linear(cat(p, proj), Component::kAttention, Parallelism::kReplicated, {H}, H, fp8));
    }
    for (const std::string_view norm : {"enorm", "hnorm", "norm"}) {
      model.mtp_tensors.push_back(tensor(cat(p, norm), Component::kNorms, H, dt));
    }
    model.mtp_tensors.push_back(tensor(cat(p, "hc_head_fn"), Component::kNorms, hc * hc * H, Dtype::kFloat32));
    model.mtp_tensors.push_back(tensor(cat(p, "hc_head_base"), Component::kNorms, hc, Dtype::kFloat32));
    model.mtp_tensors.push_back(tensor(cat(p, "hc_head_scale"), Component::kNorms, 1, Dtype::kFloat32));
  }
  // RoPE: get_rope shares one fp32 deepseek_yarn cache per theta, [original_max · factor, rope]; the
  // compressed layers use compress_rope_theta, the others rope_theta.
  const bool plain_layers = std::any_of(model.layers.begin(), model.layers.end(),
                                        [](const LayerSpec& l) { return l.extra_kv.empty(); });
  const bool compressed_layers = std::any_of(model.layers.begin(), model.layers.end(),
                                             [](const LayerSpec& l) { return !l.extra_kv.empty(); });
  (void)t.integer("compress_rope_theta", 1, std::int64_t{1} << 40);
  const std::size_t before = model.buffers.size();
  add_rotary_caches(t, model, rope, Dtype::kFloat32, 0);
  if (model.buffers.size() > before && plain_layers && compressed_layers) {
    ReplicatedTensor second = model.buffers.back();
    second.name = "rotary_emb(compress_rope_theta).cos_sin_cache";
    model.buffers.push_back(second);
  }
  // Allocated with the model, max_num_batched_tokens rows each: the indexers' shared top-k indices
  // (int32 [B, index_topk]) and the residual streams kept for an MTP draft (model dtype [B, hc·H], on
  // the last stage even without speculative decoding).
  model.batched_token_buffers.push_back(tensor("topk_indices_buffer", Component::kBuffers, index_topk, Dtype::kInt32));
  model.batched_token_buffers.push_back(tensor("_mtp_hidden_buffer", Component::kBuffers, hc * H, dt));
  // The profile run's reservations in the shared workspace (no attention metadata: worst cases from L and
  // B), of which the workspace keeps the largest: the ratio-4 layers' prefill gather, bf16 [4 requests,
  // cdiv(L, 4) + 128 + B, head_dim] (attention.py), and the indexer's key gather of 40·L/4 entries of
  // 128 fp8 values + an fp32 scale, plus 1 MiB for the top-k (sparse_attn_indexer.py); beside them the
  // indexer allocates and frees VLLM_SPARSE_INDEXER_MAX_LOGITS_MB (512 MiB) of logits.
  if (compressed_layers) {
    constexpr std::int64_t kPrefillRequests = 4;
    const std::int64_t gather_row = kPrefillRequests * d * element_bytes(dt);
    model.profile_workspace.push_back({"prefill KV gather", gather_row, 4, gather_row, Bytes(gather_row * window)});
    const bool indexed = std::any_of(ratios.begin(), ratios.begin() + L, [](std::int64_t r) { return r == 4; });
    if (indexed) {
      model.profile_workspace.push_back(
          {"indexer key gather", 10 * (index_dim + index_dim / 128 * 4), 1, 0, Bytes(std::int64_t{1} << 20)});
      model.profile_workspace_transient = Bytes(std::int64_t{512} << 20);
    }
  }
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
// DeepseekV4Config's max_position_embeddings is 1,048,576.
constexpr ModelType kModelTypes[] = {{"deepseek_v4", 1048576}};
constexpr std::string_view kArchitectures[] = {"DeepseekV4ForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"attention_bias", "false", "no projection of DeepSeek-V4 has a bias"},
    {"hc_eps", "", "hyper-connection numerics (Sinkhorn epsilon)"},
    {"hc_sinkhorn_iters", "", "hyper-connection numerics (Sinkhorn iterations)"},
};

}  // namespace

const Family& family_deepseek_v4() {
  static constexpr Family kFamily{.name = "deepseek_v4",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_deepseek_v4};
  return kFamily;
}

}  // namespace gpubudget::detail

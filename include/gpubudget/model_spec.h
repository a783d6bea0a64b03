// ModelSpec: everything the memory maths needs to know about a model, resolved once at parse time.
//
// Family parsers (src/hf/*.cpp) turn a Hugging Face config into this per-layer, per-module
// description, so that weights, KV cache and overhead maths never switch on architecture names.
// Sizes are element counts of the *whole* model (before tensor parallelism); sharding is applied by
// the maths from each module's Parallelism.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/dtype.h"
#include "gpubudget/quantization.h"

namespace gpubudget {

// Which part of the model a tensor belongs to, for the per-GPU breakdown.
enum class Component {
  kEmbedding,
  kAttention,
  kDenseMlp,
  kRoutedExperts,
  kSharedExperts,
  kRouter,
  kNorms,
  kLmHead,
  kVision,
  kExtraCopies,  // tensors vLLM creates beyond the checkpoint (e.g. MLA absorbed bf16 matrices)
  kDraft,        // speculative decoding's drafter (MTP layers, an EAGLE or draft model)
  kLora,         // LoRA adapter slots (--enable-lora): stacked A and B buffers per adapted module
  kBuffers,      // persistent runtime buffers allocated with the model (rotary cos/sin caches)
};

// The component's name in reports and JSON ("routed_experts", "lm_head", ...); static storage.
std::string_view component_name(Component c);

// How vLLM shards a linear layer over the tensor-parallel group (docs/methodology.md §Sharding).
enum class Parallelism {
  kColumn,      // outputs split: [N/tp, K]; bias split
  kRow,         // inputs split: [N, K/tp]; bias replicated
  kReplicated,  // full copy on every rank
  kQkv,         // QKVParallelLinear: q heads split, KV heads split or replicated when tp > kv heads
};

// One linear layer (possibly several checkpoint matrices fused along the output dimension).
struct LinearModule {
  std::string name;                         // vLLM module prefix, for explanations
  Component component = Component::kAttention;
  Parallelism parallelism = Parallelism::kReplicated;
  std::vector<std::int64_t> output_sizes;   // fused shards' output features (whole model)
  std::int64_t input_size = 0;              // input features (whole model)
  bool has_bias = false;
  QuantFormat format;                       // as vLLM holds it
  // How the checkpoint stores each output shard, when it differs from `format` (DeepSeek-V3.2's
  // indexer wk is fp8 on disk and dequantized to bf16 by vLLM). Empty: `format` for every shard.
  std::vector<QuantFormat> checkpoint_formats;
  // Mamba2 in_proj / conv1d (MambaMixer2): output_sizes hold the B and C sections of `mamba_groups`
  // groups of `mamba_group_rows` (d_state) rows each. When TP does not divide the groups (vLLM then
  // allows one group only) every rank holds the whole group (mamba_utils extra_groups_for_head_shards).
  std::int64_t mamba_groups = 0;
  std::int64_t mamba_group_rows = 0;
  // A grouped projection (DeepSeek-V4's wo_a, run as a batched matmul over o_groups): each rank holds
  // whole groups, so TP must divide this count. 0: not grouped.
  std::int64_t output_groups = 0;
  // kQkv only: heads and head size; output_sizes are then q, k, v = heads * head_dim.
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
};

// A FusedMoE block: `num_experts` experts of gate+up [2I, H] and down [H, I] (non-gated experts,
// e.g. Nemotron-H's squared-ReLU MLPs: up [I, H] and down [H, I]).
struct ExpertsModule {
  std::string name;
  std::int64_t num_experts = 0;
  std::int64_t intermediate_size = 0;  // I, per expert
  std::int64_t hidden_size = 0;        // H
  QuantFormat format;
  bool gated = true;
  bool has_bias = false;  // w13 and w2 biases (gpt-oss's MXFP4 experts)
};

// A tensor that is stored whole on every rank that holds its layer (norms, biases, tables).
struct ReplicatedTensor {
  std::string name;
  Component component = Component::kNorms;
  std::int64_t elements = 0;
  Dtype dtype = Dtype::kBFloat16;
  // When the checkpoint stores it in another dtype (DeepSeek-V4's tid2eid: int64 on disk, int32 in vLLM).
  std::optional<Dtype> checkpoint_dtype = std::nullopt;
  // > 0: not replicated but split over TP by heads, each rank's slice padded to at least this many
  // elements (DeepSeek-V4's attn_sink: max(heads / tp, 64) for FlashMLA).
  std::int64_t split_min_per_rank = 0;
};

enum class AttentionKind {
  kFull,           // standard (GQA/MHA) attention: K and V of num_key_value_heads x head_dim
  kMla,            // DeepSeek multi-head latent attention: one latent "head" of kv_lora_rank + qk_rope_head_dim
  kSlidingWindow,  // full-attention geometry, but only the last `window` tokens are kept
  kChunkedLocal,   // full-attention geometry, attention within chunks of `window` tokens (Llama 4)
  kMamba,          // recurrent state of fixed size per request (Gated DeltaNet, Mamba2): `state`
  kNone,           // no attention and no cache (Nemotron-H's MLP-only and MoE-only layers)
};

// Which of vLLM's MambaStateDtypeCalculator rules sets a mixer's state dtypes
// (model_executor/layers/mamba/mamba_utils.py).
enum class MambaMixer {
  kMamba2,         // mamba2_state_dtype: conv = --mamba-cache-dtype, SSM = --mamba-ssm-cache-dtype or conv
  kGatedDeltaNet,  // gated_delta_net_state_dtype: as Mamba2 from vLLM 0.17; before, both follow conv
  kKda,            // kda_state_dtype: conv = --mamba-cache-dtype, recurrent state always float32
};

// The per-request state of a linear-attention / Mamba layer (vLLM MambaSpec), whole model (before TP):
// a convolution state of `conv_channels` × `conv_width` and a temporal (SSM) state of
// `ssm_heads` × `ssm_head_elements`; channels and heads are split over TP. The dtypes are resolved with
// the deployment and the vLLM version (mamba_state.h).
struct MambaState {
  std::int64_t conv_channels = 0;
  std::int64_t conv_width = 0;           // conv kernel − 1
  std::int64_t ssm_heads = 0;
  std::int64_t ssm_head_elements = 0;    // e.g. head_k_dim × head_v_dim
  MambaMixer mixer = MambaMixer::kMamba2;
  // The SSM state dtype the config names (Nemotron-H `mamba_ssm_cache_dtype`, Qwen3.5
  // `mamba_ssm_dtype`), when it does; the vLLM version decides whether it is used.
  std::optional<Dtype> config_ssm_dtype;
  // Mamba2: conv_channels include B and C of `groups` groups of `group_state` channels; a TP that does
  // not divide the groups gives every rank the whole (single) group, as for in_proj.
  std::int64_t groups = 0;
  std::int64_t group_state = 0;
};

// What one decoder layer's attention stores in the KV cache.
struct AttentionSpec {
  AttentionKind kind = AttentionKind::kFull;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_key_value_heads = 0;  // kFull: total KV heads (before TP)
  std::int64_t head_dim = 0;             // kFull: K head size; kMla: kv_lora_rank + qk_rope_head_dim
  std::int64_t head_dim_v = 0;           // kFull: V head size (= head_dim for every model so far)
  std::int64_t window = 0;               // kSlidingWindow: window W; kChunkedLocal: chunk size
  // > 0: bytes per token of this cache whatever --kv-cache-dtype says (DeepSeek-V3.2's indexer keys:
  // uint8 values plus fp32 scales, 132 B); with compress_ratio > 1, bytes per stored entry.
  Bytes fixed_token_bytes;
  // DeepSeek-V4's caches (vLLM MLAAttentionSpec / SlidingWindowMLASpec with model_version
  // "deepseek_v4"): one entry of fixed_token_bytes per `compress_ratio` tokens; each page rounded up
  // to `page_alignment` bytes (FlashMLA's 576); `block_size` tokens per block when > 0, whatever the
  // cache's block size (the SWA cache's 64, the compressor states' 4 and 8). `mla_window`: a sliding
  // window cache in MLA format (SlidingWindowMLASpec), grouped apart from other sliding windows.
  std::int64_t compress_ratio = 1;
  std::int64_t page_alignment = 0;
  std::int64_t block_size = 0;
  bool mla_window = false;
  MambaState state;                      // kMamba only
};

struct LayerSpec {
  std::int64_t index = 0;
  AttentionSpec attention;
  // Further KV caches the layer registers with vLLM (DeepSeek-V3.2's indexer), each its own KV layer.
  std::vector<AttentionSpec> extra_kv;
  // A recurrent mixer run beside the attention (Falcon-H1: attention and Mamba2 in every layer), kind
  // kMamba; vLLM registers it as a KV layer of its own.
  std::optional<AttentionSpec> parallel_state;
  bool is_moe = false;
  std::vector<LinearModule> linears;
  std::vector<ExpertsModule> experts;
  std::vector<ReplicatedTensor> replicated;
};

// What vLLM's profile run pushes through the vision encoder (GPUModelRunner.profile_run, multimodal
// branch): items of the largest size the model's processor produces, as many as the encoder budget
// max(max_num_batched_tokens, tokens of one item) holds. Sizes are elements, not bytes.
struct EncoderProfileShape {
  std::int64_t hidden = 0;                // ViT width d
  std::int64_t mlp_intermediate = 0;      // ViT MLP width I (unsharded)
  bool gated_mlp = false;                 // gate + up projections (SwiGLU) instead of a single fc1
  std::int64_t values_per_patch = 0;      // pixel values per patch: channels x temporal x patch^2
  std::int64_t patches_per_token = 1;     // ViT patches merged into one language-model token
  std::int64_t max_tokens_per_item = 0;   // language-model tokens of the largest image
  std::int64_t output_width = 0;          // elements per token the encoder hands to the language model
  std::string max_item_source;            // where max_tokens_per_item comes from (for --explain)
  bool replicated = false;                // the tower is whole on every rank (Gemma 4): nothing split by TP
  // The Qwen2-VL processor family (qwen2_vl.py Qwen2VLProcessingInfo): the largest image is the
  // processor's max_pixels factored into rows x columns of merged tokens of this many pixels a side
  // (patch x spatial merge; 0: max_tokens_per_item is fixed), and the dummy video is that image over
  // as many frames as fit the engine's max_model_len, at most video_max_frames (0: no such video).
  std::int64_t pixels_per_token_side = 0;
  std::int64_t video_max_frames = 0;      // _MAX_FRAMES_PER_VIDEO
  std::int64_t temporal_patch = 1;        // frames per temporal patch (Conv3d depth)
  bool image_profiled = true;             // false: --limit-mm-per-prompt gives images 0
};

// Language-model tokens of the Qwen2-VL processor family's largest image for `max_pixels`
// (get_image_size_with_most_features): max_pixels / side^2 merged tokens, lowered until the closest
// factor pair has an aspect ratio of at most 200.
std::int64_t qwen2_vl_largest_image_tokens(std::int64_t max_pixels, std::int64_t pixels_per_token_side);

// A buffer the profile run reserves from vLLM's shared workspace (vllm/v1/worker/workspace.py: one
// buffer, as large as the largest request), sized from the engine's max_model_len L and
// max_num_batched_tokens B: per_length_entry · cdiv(L, length_divisor) + per_batched_token · B + fixed.
struct WorkspaceReservation {
  std::string name;
  std::int64_t per_length_entry = 0;
  std::int64_t length_divisor = 1;
  std::int64_t per_batched_token = 0;
  Bytes fixed;
  [[nodiscard]] Bytes bytes(std::int64_t max_model_len, std::int64_t max_num_batched_tokens) const;
};

// Weights outside the decoder layers.
struct VisionTower {
  std::vector<LinearModule> linears;         // TP-sharded ViT linears and projector
  std::vector<ReplicatedTensor> replicated;  // norms, patch embedding, position table, biases
  EncoderProfileShape profile;               // for the activation estimate
  // The vLLM model class sets supports_encoder_tp_data: --mm-encoder-tp-mode data keeps the whole tower
  // on every TP rank. Without it vLLM warns and keeps the weights split.
  bool supports_encoder_tp_data = false;
  // The modalities the tower serves ("image", "video", "audio"): --limit-mm-per-prompt must give 0 for
  // every one of them for vLLM to leave the tower out.
  std::vector<std::string> modalities = {"image"};
};

// What an EAGLE draft head's config says beyond its Llama decoder layers (llama_eagle.py,
// llama_eagle3.py), read when the config is one (an Eagle architecture or EAGLE-3's keys), and what its
// checkpoint holds when its safetensors headers were at hand.
struct EagleHeadConfig {
  std::int64_t draft_vocab_size = 0;     // draft_vocab_size: rows of EAGLE-3's own head (0: vocab_size)
  std::int64_t target_hidden_size = 0;   // target_hidden_size: EAGLE-3's fc takes 3x this (0: hidden_size)
  bool norm_before_fc = false;           // EAGLE-3: an RMSNorm over fc's input
  bool use_aux_hidden_state = true;      // eagle_config.use_aux_hidden_state: EAGLE-3's fc exists
  bool draft_only_architecture = false;  // Eagle3LlamaForCausalLM ...: vLLM serves it only as a draft
  // From the checkpoint's tensor names; nullopt when no headers were read (a config-only folder).
  std::optional<bool> stores_embedding;  // some tensor name holds "embed_tokens"
  std::optional<bool> stores_lm_head;    // some tensor name holds "lm_head"
};

// A Medusa draft's config (vllm/transformers_utils/configs/medusa.py MedusaConfig; medusa.py Medusa):
// per head a ResidualBlock of `layers_per_head` nn.Linear(hidden, hidden), whole on every rank, and a
// ParallelLMHead of vocab_size rows (one of truncated_vocab_size rows shared by every head with
// original_lm_head). vLLM builds num_speculative_tokens heads whatever the checkpoint holds
// (MedusaConfig.num_lookahead_tokens sets num_heads).
struct MedusaHeads {
  std::int64_t checkpoint_heads = 0;      // num_heads (any key with "num" and "heads"), default 5
  std::int64_t layers_per_head = 1;       // num_hidden_layers (any key with "num" and "layers"), default 1
  std::int64_t truncated_vocab_size = 0;  // truncated_vocab_size, default vocab_size
  bool original_lm_head = false;          // original_lm_head: one head shared by every block
  bool fc_bias = false;                   // medusa_fc_bias: the block linears have a bias
};

// Speculative decoding's drafter as a deployment loads it (model_as_served), on the last pipeline
// stage: its weights are their own row of the breakdown (Component::kDraft) and its attention layers
// take KV from the same pool as the target's.
struct Drafter {
  std::string method;   // "mtp", "eagle3", ... (deployment.h speculative_method_name)
  std::string source;   // the draft checkpoint, or the target's own for MTP
  // Decoder layers, numbered after the target's (vLLM names the first draft layer model.layers.{L}).
  std::vector<LayerSpec> layers;
  std::vector<LinearModule> linears;      // eh_proj, fc ... (whole model, sharded by their Parallelism)
  std::vector<ReplicatedTensor> tensors;  // norms, vocabulary maps
  // Vocabulary tables split over TP like the target's (VocabParallelEmbedding / ParallelLMHead):
  // `elements` = rows x hidden, rows padded to 64 and split. Tables the drafter takes from the target
  // are not here.
  std::vector<ReplicatedTensor> vocab_tables;
  // Checkpoint tensors vLLM loads and then replaces with the target's (shared embedding and head):
  // counted in the checkpoint, never on a GPU.
  std::vector<ReplicatedTensor> shared_with_target;
  bool in_target_checkpoint = false;  // MTP: the layers are stored in the target's safetensors
  std::int64_t hidden_size = 0;       // the drafter's width (vocab_tables' rows are elements / this)
  // What the budget assumes about the draft checkpoint that its config does not say (fit() warns).
  std::vector<std::string> assumptions;
};

// The layer's recurrent state, if it has one: its attention when that is kMamba, else its parallel_state.
inline const AttentionSpec* recurrent_state(const LayerSpec& layer) {
  if (layer.attention.kind == AttentionKind::kMamba) return &layer.attention;
  return layer.parallel_state ? &*layer.parallel_state : nullptr;
}

struct ModelSpec {
  std::string source;        // file or directory the model was read from
  std::string architecture;  // config.json `architectures[0]`
  std::string model_type;    // language model `model_type`
  std::string family;        // parser that produced the spec ("deepseek_v2", "llama")
  // Facts of vLLM's model class that the maths reads, set by the family parser from its model file, so
  // that no computation tests an architecture's name:
  // - the MoE router is built with the model's quant_config (Qwen3-MoE's gate since #25455), so online
  //   quantization converts it; every other router is built with quant_config=None and keeps its dtype;
  bool router_takes_quant_config = false;
  // - the MXFP4 MoE layers pick their backend from gpt-oss's priority list (VllmProfile::mxfp4_moe_backends
  //   entries with for_gpt_oss), not every other model's.
  bool mxfp4_backends_of_gpt_oss = false;
  Dtype dtype = Dtype::kBFloat16;  // unquantized weight dtype (`torch_dtype` / `dtype`)
  std::int64_t hidden_size = 0;
  std::int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  std::string embedding_name = "model.embed_tokens";  // checkpoint module of the token embedding
  QuantFormat lm_head_format;
  bool lm_head_bias = false;  // a bias of vocab rows, split with the head (PhiMoE)
  std::vector<LayerSpec> layers;  // decoder layers only; MTP / next-n layers are not loaded by vLLM
  std::int64_t skipped_mtp_layers = 0;
  // Keys of config.json (and its text_config, as "text_config.KEY") that the family parser did not read
  // and that are not on the reviewed list of keys without effect on memory (src/model/config_keys.cpp):
  // each one may change what vLLM allocates, so fit() warns about it (`--strict` refuses).
  std::vector<std::string> unmodelled_config_keys;
  // Family "generic" only (an architecture no parser knows, sized from its safetensors headers): what
  // was assumed, each a sentence for the report's warnings. fit() widens the length range for it.
  std::vector<std::string> generic_assumptions;
  // Tied embeddings whose checkpoint still stores lm_head.weight (vLLM skips it when loading): counted
  // in checkpoint_bytes, never on a GPU.
  bool checkpoint_stores_tied_head = false;
  // The checkpoint's MTP / next-n layers and their extra tensors (embedding and head copies, eh_proj,
  // norms): counted in checkpoint_bytes, never in what vLLM holds without speculative decoding.
  std::vector<LayerSpec> mtp_layers;
  std::vector<LinearModule> mtp_linears;
  std::vector<ReplicatedTensor> mtp_tensors;
  std::optional<VisionTower> vision;
  // Set when the config is an EAGLE draft head's (parsed as its Llama decoder).
  std::optional<EagleHeadConfig> eagle_head;
  // Set by model_as_served for speculative decoding; the checkpoint itself has none.
  std::optional<Drafter> drafter;
  // Draft tokens per step when the served model does speculative decoding, whatever the method (ngram and
  // suffix have no Drafter); 0 without. Set by model_as_served.
  std::int64_t num_speculative_tokens = 0;
  std::vector<ReplicatedTensor> final_norms;  // on the last pipeline stage
  std::vector<ReplicatedTensor> buffers;      // on every stage (one shared rotary cache per RoPE setting)
  // Buffers allocated with the model whose first dimension is max_num_batched_tokens (DeepSeek-V4's
  // topk_indices_buffer and _mtp_hidden_buffer): `elements` per batched token. fit() adds them to the
  // weights as runtime buffers.
  std::vector<ReplicatedTensor> batched_token_buffers;
  // Sparse attention's profile-run reservations (DeepSeek-V4's prefill gather and indexer), of which
  // the workspace holds the largest, and a buffer allocated and freed beside it (the indexer's logits
  // dummy, VLLM_SPARSE_INDEXER_MAX_LOGITS_MB): part of the activation peak (overheads.h).
  std::vector<WorkspaceReservation> profile_workspace;
  Bytes profile_workspace_transient;
  // Why the overhead coefficients may not fit this family ("" when they were fitted on models like it):
  // fit() warns with it and estimate_overheads() widens the uncertainty (kUncalibratedOverheadFactor).
  std::string overheads_caveat;
  CheckpointQuantization quantization;
  // vLLM's derived maximum length and the key it came from (docs/methodology.md §max_model_len).
  std::int64_t derived_max_model_len = 0;
  std::string derived_max_model_len_source;
  // DeepSeek sparse attention (V3.2, GLM-5): an indexer picks the keys; vLLM uses sparse MLA backends.
  bool sparse_attention = false;
  // The attention backend the model's config hook forces when the user names none (Gemma 4's head
  // dims: TRITON_ATTN, vllm/model_executor/models/config.py Gemma4Config); "" for vLLM's usual choice.
  std::string forced_attention_backend;
  // For the activation estimate: MoE top-k (0 for dense models).
  std::int64_t num_experts_per_token = 0;
  // MLA models: qk_nope_head_dim (vLLM 0.17 picks FlashInfer-MLA on Blackwell only for 128).
  std::int64_t mla_qk_nope_head_dim = 0;
  // MLA models whose vLLM model file builds multi-head attention instead when VLLM_MLA_DISABLE=1
  // (deepseek_v2.py / glm4_moe_lite.py DeepseekV2Attention): its K and V head size is
  // qk_nope_head_dim + qk_rope_head_dim. 0: the model file has no such path.
  std::int64_t mla_disabled_head_dim = 0;
  // Set when the config is a Medusa draft's (model_type "medusa"): vLLM serves it only as a draft.
  std::optional<MedusaHeads> medusa;
  // Mamba2 models: the SSM chunk size (`chunk_size` / `mamba_chunk_size`), the base of the block size
  // in mamba_cache_mode `all`; 0 when the config has none.
  std::int64_t mamba_chunk_size = 0;
};

// The attention mix in one word, for reports: "mla", "gqa", "mha", "mqa", with "+sliding",
// "+chunked" or "+indexer" when some layers differ ("gqa+sliding").
std::string attention_mix(const ModelSpec& model);
// Whether a decoder layer of `model` is multi-head latent attention (DeepSeek's MLA).
bool has_mla_attention(const ModelSpec& model);

// Renames the layer's modules (linears, experts, replicated tensors) whose name starts with `from` to
// start with `to` instead ("model.layers.0." -> "model.layers.32."); other names are kept.
void rename_layer_modules(LayerSpec& layer, std::string_view from, std::string_view to);

// The model as vLLM builds it with --dtype `dtype`: every unquantized tensor stored in the model's
// dtype is stored in `dtype` instead (fp32 extras such as router biases keep their own dtype).
ModelSpec with_dtype(const ModelSpec& model, Dtype dtype);

}  // namespace gpubudget

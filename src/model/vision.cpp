// Vision towers and projectors of multimodal wrappers, always unquantized (vLLM never quantizes
// `vision_tower` / `vision_model` modules). ViT linears are TP-sharded as vLLM builds them (default
// --mm-encoder-tp-mode weights); small tables and projector pieces noted below are replicated.
//   MoonViT + patch merger  (Kimi-K2.5:      models/kimi_k25{,_vit}.py)
//   SigLIP + Gemma 3 proj.  (Gemma 3:        models/siglip.py, gemma3_mm.py)
//   Pixtral + Mistral3 proj.(Mistral-Small-3: models/pixtral.py, mistral3.py)
//   MoonViT + KimiVL proj.  (Kimi-VL:        models/moonvit.py, kimi_vl.py)
//   Llama 4 ViT + adapter   (Llama 4:        models/mllama4.py)
//   Qwen2-VL / Qwen2.5-VL ViT + patch merger (models/qwen2_vl.py, qwen2_5_vl.py)
#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/parse_context.h"

namespace gpubudget::detail {

namespace {

class TowerBuilder {
 public:
  explicit TowerBuilder(Dtype dtype) { plain_.dtype = dtype; }

  void linear(std::string name, Parallelism par, std::int64_t out, std::int64_t in, bool bias) {
    tower_.linears.push_back(make_linear(std::move(name), Component::kVision, par, {out}, in, plain_, bias));
  }
  // Fused q/k/v of a ViT with `heads` heads of `head_dim` (heads split over TP).
  void qkv(std::string name, std::int64_t heads, std::int64_t head_dim, std::int64_t in, bool bias) {
    LinearModule m = make_linear(std::move(name), Component::kVision, Parallelism::kQkv,
                                 {heads * head_dim, heads * head_dim, heads * head_dim}, in, plain_, bias);
    m.num_heads = heads;
    m.num_kv_heads = heads;
    m.head_dim = head_dim;
    tower_.linears.push_back(m);
  }
  void tensor(std::string name, std::int64_t elements) {
    tower_.replicated.push_back({std::move(name), Component::kVision, elements, plain_.dtype});
  }
  // Checkpoint names of one pre-norm ViT block's modules (every linear biased, LayerNorms with bias).
  struct VitNames {
    const char* qkv;
    const char* out;
    const char* fc1;
    const char* fc2;
    const char* norm1;
    const char* norm2;
  };
  // A ViT block of width h, `heads` heads and MLP width I: QKV and fc1 column-parallel, out and fc2
  // row-parallel, the two LayerNorms (weight + bias) replicated.
  void vit_block(const std::string& p, const VitNames& n, std::int64_t heads, std::int64_t h, std::int64_t I) {
    qkv(p + n.qkv, heads, h / heads, h, true);
    linear(p + n.out, Parallelism::kRow, h, h, true);
    linear(p + n.fc1, Parallelism::kColumn, I, h, true);
    linear(p + n.fc2, Parallelism::kRow, h, I, true);
    tensor(p + n.norm1, 2 * h);
    tensor(p + n.norm2, 2 * h);
  }
  void encoder(EncoderProfileShape shape) { tower_.profile = std::move(shape); }
  VisionTower take() { return std::move(tower_); }

 private:
  QuantFormat plain_;
  VisionTower tower_;
};

// The fields every fixed-resolution ViT config (SigLIP, Llama 4) states, with their names there.
struct VitGeometry {
  std::int64_t hidden, intermediate, layers, heads, patch, image, channels;
};

VitGeometry read_vit_geometry(const JsonReader& v) {
  return {v.integer("hidden_size", 1, kMaxHidden),      v.integer("intermediate_size", 1, kMaxIntermediate),
          v.integer("num_hidden_layers", 1, kMaxLayers), v.integer("num_attention_heads", 1, kMaxHeads),
          v.integer("patch_size", 1, 1024),             v.integer("image_size", 1, 1 << 16),
          v.optional_integer("num_channels", 1, 16).value_or(3)};
}

// Largest image of each processor, in ViT patches or language-model tokens. These are processor
// settings (preprocessor_config.json), not config.json fields; the values are the published defaults
// and are documented in docs/methodology.md §Multimodal encoder profiling.
constexpr std::int64_t kKimiK25PatchLimit = 16384;      // media_proc_cfg.in_patch_limit
constexpr std::int64_t kKimiVlPatchLimit = 4096;        // MoonViT image processor in_token_limit (patches)
constexpr std::int64_t kQwen3VlMaxPixels = 16777216;    // image processor size.longest_edge
constexpr std::int64_t kLlama4MaxTiles = 16;            // Llama4ImageProcessor max_patches (+1 global tile)
constexpr std::int64_t kGemma3TokensPerImage = 256;     // mm_tokens_per_image when the config omits it
constexpr std::int64_t kQwen2VlMaxPixels = 12845056;    // Qwen2-VL image processor max_pixels
constexpr std::int64_t kQwen2VlMaxFramesPerVideo = 14;  // qwen2_vl.py _MAX_FRAMES_PER_VIDEO

// MoonViT as Kimi-K2.5 (`vt_*` keys, `mm_projector.proj.{0,2}`) and Kimi-VL (plain keys,
// `multi_modal_projector.linear_{1,2}`) configure it; both projectors are ReplicatedLinear.
struct MoonVitKeys {
  const char* hidden;
  const char* intermediate;
  const char* layers;
  const char* projector_prefix;
  const char* projector_first;
  const char* projector_second;
  std::int64_t patch_limit;        // largest image of the processor, in patches
  const char* patch_limit_source;
};
constexpr MoonVitKeys kKimiK25Keys{"vt_hidden_size", "vt_intermediate_size", "vt_num_hidden_layers",
                                   "mm_projector.", "proj.0", "proj.2",
                                   kKimiK25PatchLimit, "in_patch_limit 16384 patches (Kimi-K2.5 media processor)"};
constexpr MoonVitKeys kKimiVlKeys{"hidden_size", "intermediate_size", "num_hidden_layers",
                                  "multi_modal_projector.", "linear_1", "linear_2",
                                  kKimiVlPatchLimit, "in_token_limit 4096 patches (Kimi-VL image processor)"};

void moonvit(const JsonReader& v, const MoonVitKeys& keys, Dtype dt, ModelSpec& model) {
  const auto h = v.integer(keys.hidden, 1, kMaxHidden);
  const auto I = v.integer(keys.intermediate, 1, kMaxIntermediate);
  const auto L = v.integer(keys.layers, 1, kMaxLayers);
  const auto patch = v.integer("patch_size", 1, 1024);
  const auto pos_h = v.integer("init_pos_emb_height", 1, 4096);
  const auto pos_w = v.integer("init_pos_emb_width", 1, 4096);
  const auto mm_hidden = v.optional_integer("mm_hidden_size", 1, kMaxHidden).value_or(h);
  const auto text_hidden = v.optional_integer("text_hidden_size", 1, kMaxHidden).value_or(model.hidden_size);
  const auto merge = v.integer_list("merge_kernel_size", 1, 64);
  if (merge.size() != 2) v.fail("merge_kernel_size", "[height, width]");
  const auto merged = mm_hidden * merge[0] * merge[1];
  TowerBuilder b(dt);
  for (std::int64_t i = 0; i < L; ++i) {
    const std::string p = fmt::format("vision_tower.encoder.blocks.{}.", i);
    b.linear(p + "wqkv", Parallelism::kColumn, 3 * h, h, true);
    b.linear(p + "wo", Parallelism::kRow, h, h, true);
    b.linear(p + "mlp.fc0", Parallelism::kColumn, I, h, true);
    b.linear(p + "mlp.fc1", Parallelism::kRow, h, I, true);
    b.tensor(p + "norm0", 2 * h);
    b.tensor(p + "norm1", 2 * h);
  }
  b.tensor("vision_tower.encoder.final_layernorm", 2 * h);
  b.tensor("vision_tower.patch_embed.pos_emb", pos_h * pos_w * h);
  b.tensor("vision_tower.patch_embed.proj", h * 3 * patch * patch + h);
  const std::string proj = keys.projector_prefix;
  b.tensor(proj + "pre_norm", 2 * mm_hidden);
  b.linear(proj + keys.projector_first, Parallelism::kReplicated, merged, merged, true);
  b.linear(proj + keys.projector_second, Parallelism::kReplicated, text_hidden, merged, true);
  const auto per_token = merge[0] * merge[1];
  b.encoder({h, I, false, 3 * patch * patch, per_token, keys.patch_limit / per_token, text_hidden,
             keys.patch_limit_source});
  model.vision = b.take();
  model.vision->modalities = {"image", "video"};
  model.vision->supports_encoder_tp_data = true;  // the vLLM class sets supports_encoder_tp_data
}

// Llama 4 vision model + projector (models/mllama4.py): unfold patch embedding (column-parallel,
// gathered), class token and learned positions for (image/patch)^2 + 1 patches, pre/post
// LayerNorms, ViT layers with biased q/k/v/o and fc1/fc2, the pixel-shuffle adapter MLP (input
// `intermediate_size`, i.e. hidden / ratio^2) and `multi_modal_projector.linear_1`
// (column-parallel, gathered, no bias). The vision rotary table is computed, not loaded.
void llama4_vision(const JsonReader& v, Dtype dt, ModelSpec& model) {
  const VitGeometry g = read_vit_geometry(v);
  const auto [h, I, L, heads, patch, image, channels] = g;
  const auto projector_in = v.integer("projector_input_dim", 1, kMaxHidden);
  const auto projector_out = v.integer("projector_output_dim", 1, kMaxHidden);
  const auto vision_out = v.integer("vision_output_dim", 1, kMaxHidden);
  const bool adapter_bias = v.boolean("multi_modal_projector_bias", false);
  if (h % heads != 0) v.fail("num_attention_heads", fmt::format("a divisor of hidden_size {}", h));
  TowerBuilder b(dt);
  b.linear("vision_model.patch_embedding.linear", Parallelism::kColumn, h, channels * patch * patch, false);
  b.tensor("vision_model.class_embedding", h);
  b.tensor("vision_model.positional_embedding_vlm", ((image / patch) * (image / patch) + 1) * h);
  b.tensor("vision_model.layernorm_pre", 2 * h);
  b.tensor("vision_model.layernorm_post", 2 * h);
  for (std::int64_t i = 0; i < L; ++i) {
    b.vit_block(fmt::format("vision_model.model.layers.{}.", i),
                {"self_attn.qkv_proj", "self_attn.o_proj", "mlp.fc1", "mlp.fc2", "input_layernorm",
                 "post_attention_layernorm"},
                heads, h, I);
  }
  b.linear("vision_model.vision_adapter.mlp.fc1", Parallelism::kColumn, projector_in, I, adapter_bias);
  b.linear("vision_model.vision_adapter.mlp.fc2", Parallelism::kRow, projector_out, projector_in, adapter_bias);
  b.linear("multi_modal_projector.linear_1", Parallelism::kColumn, model.hidden_size, vision_out, false);
  // Per tile (image/patch)^2 patches; pixel shuffle by 0.5 merges 4 patches into one token.
  const auto tile_tokens = (image / patch) * (image / patch) / 4;
  b.encoder({h, I, false, channels * patch * patch, 4, (kLlama4MaxTiles + 1) * tile_tokens, model.hidden_size,
             "16 tiles + 1 global tile of image_size^2 (Llama 4 image processor max_patches)"});
  model.vision = b.take();
  model.vision->supports_encoder_tp_data = true;  // the vLLM class sets supports_encoder_tp_data
}

void siglip_gemma3(const JsonReader& root, const JsonReader& v, Dtype dt, ModelSpec& model) {
  const VitGeometry g = read_vit_geometry(v);
  const auto [h, I, L, heads, patch, image, channels] = g;
  if (v.boolean("vision_use_head", false)) v.fail("vision_use_head", "false (the pooling head is not modelled)");
  TowerBuilder b(dt);
  for (std::int64_t i = 0; i < L; ++i) {
    b.vit_block(fmt::format("vision_tower.vision_model.encoder.layers.{}.", i),
                {"self_attn.qkv_proj", "self_attn.out_proj", "mlp.fc1", "mlp.fc2", "layer_norm1", "layer_norm2"},
                heads, h, I);
  }
  const auto positions = (image / patch) * (image / patch);
  b.tensor("vision_tower.vision_model.embeddings.patch_embedding", h * channels * patch * patch + h);
  b.tensor("vision_tower.vision_model.embeddings.position_embedding", positions * h);
  b.tensor("vision_tower.vision_model.post_layernorm", 2 * h);
  // Gemma3MultiModalProjector: a [vision hidden, text hidden] matrix and an RMS norm.
  b.tensor("multi_modal_projector.mm_input_projection_weight", h * model.hidden_size);
  b.tensor("multi_modal_projector.mm_soft_emb_norm", h);
  const auto tokens = root.optional_integer("mm_tokens_per_image", 1, positions).value_or(kGemma3TokensPerImage);
  if (positions % tokens != 0) root.fail("mm_tokens_per_image", fmt::format("a divisor of the {} patches", positions));
  b.encoder({h, I, false, channels * patch * patch, positions / tokens, tokens, model.hidden_size,
             "one image_size^2 crop (pan-and-scan off, the default)"});
  model.vision = b.take();
}

// Gemma 4's vision tower (gemma4_mm.py): transformers' Gemma4VisionModel built by AutoModel, not
// sharded: every rank holds it whole. A patch embedder [h, 3 p^2], a position table [2, positions, h],
// std_bias / std_scale [h] (standardize), and per layer q/k/v/o [h, h], gate/up [I, h], down [h, I],
// four norms [h] and q/k norms [head_dim]; then embed_vision's projection [H, h] (replicated, no
// quant config; its norm has no weight).
void gemma4_vision(const JsonReader& root, const JsonReader& v, Dtype dt, ModelSpec& model) {
  const std::int64_t h = v.integer("hidden_size", 1, kMaxHidden);
  const std::int64_t I = v.integer("intermediate_size", 1, kMaxIntermediate);
  const std::int64_t L = v.integer("num_hidden_layers", 1, kMaxLayers);
  const std::int64_t heads = v.integer("num_attention_heads", 1, kMaxHeads);
  const std::int64_t head_dim = v.optional_integer("head_dim", 1, kMaxHidden).value_or(h / heads);
  const std::int64_t patch = v.integer("patch_size", 1, 1024);
  const std::int64_t positions = v.integer("position_embedding_size", 1, std::int64_t{1} << 24);
  const std::int64_t pooling = v.optional_integer("pooling_kernel_size", 1, 64).value_or(1);
  const bool standardize = v.boolean("standardize", false);
  const std::int64_t per_layer = 4 * h * h + 3 * h * I + 4 * h + 2 * head_dim;
  TowerBuilder b(dt);
  b.tensor("model.vision_tower.", 3 * patch * patch * h + 2 * positions * h + (standardize ? 2 * h : 0) + L * per_layer);
  b.tensor("model.embed_vision.embedding_projection", h * model.hidden_size);
  const std::int64_t tokens = root.optional_integer("vision_soft_tokens_per_image", 1, 1 << 20)
                                  .value_or(v.optional_integer("default_output_length", 1, 1 << 20).value_or(280));
  b.encoder({h, I, true, 3 * patch * patch, pooling * pooling, tokens, model.hidden_size,
             "vision_soft_tokens_per_image of the default image budget", /*replicated=*/true});
  model.vision = b.take();
  model.vision->modalities = {"image", "audio", "video"};
}

void pixtral_mistral3(const JsonReader& root, const JsonReader& v, Dtype dt, ModelSpec& model) {
  const auto h = v.integer("hidden_size", 1, kMaxHidden);
  const auto I = v.integer("intermediate_size", 1, kMaxIntermediate);
  const auto L = v.integer("num_hidden_layers", 1, kMaxLayers);
  const auto heads = v.integer("num_attention_heads", 1, kMaxHeads);
  const auto head_dim = v.optional_integer("head_dim", 1, kMaxHidden).value_or(h / heads);
  const auto patch = v.integer("patch_size", 1, 1024);
  const auto channels = v.optional_integer("num_channels", 1, 16).value_or(3);
  const auto merge = root.optional_integer("spatial_merge_size", 1, 64).value_or(2);
  const bool projector_bias = root.boolean("multimodal_projector_bias", false);
  TowerBuilder b(dt);
  for (std::int64_t i = 0; i < L; ++i) {
    const std::string p = fmt::format("vision_tower.transformer.layers.{}.", i);
    b.qkv(p + "attention.qkv_proj", heads, head_dim, h, false);
    b.linear(p + "attention.o_proj", Parallelism::kRow, h, heads * head_dim, false);
    b.linear(p + "feed_forward.gate_up_proj", Parallelism::kColumn, 2 * I, h, false);
    b.linear(p + "feed_forward.down_proj", Parallelism::kRow, h, I, false);
    b.tensor(p + "attention_norm", h);
    b.tensor(p + "ffn_norm", h);
  }
  b.tensor("vision_tower.patch_conv", h * channels * patch * patch);
  b.tensor("vision_tower.ln_pre", h);
  // Mistral3MultiModalProjector: RMS norm, patch merger, two linears to the text width.
  b.tensor("multi_modal_projector.norm", h);
  b.linear("multi_modal_projector.patch_merger.merging_layer", Parallelism::kReplicated, h, h * merge * merge, false);
  b.linear("multi_modal_projector.linear_1", Parallelism::kColumn, model.hidden_size, h, projector_bias);
  b.linear("multi_modal_projector.linear_2", Parallelism::kRow, model.hidden_size, model.hidden_size, projector_bias);
  const auto image = v.integer("image_size", 1, 1 << 16);
  const auto side = image / patch / merge;
  b.encoder({h, I, true, channels * patch * patch, merge * merge, side * side, model.hidden_size,
             "one image_size^2 image (Pixtral longest edge)"});
  model.vision = b.take();
}

// Qwen3-VL ViT (Qwen3-VL, Qwen3.5, Qwen3.6): Conv3d patch embedding, learned positions, `depth`
// blocks, a patch merger to the text width and one extra "deepstack" merger per listed layer.
void qwen3_vl(const JsonReader& v, Dtype dt, ModelSpec& model) {
  const auto h = v.integer("hidden_size", 1, kMaxHidden);
  const auto I = v.integer("intermediate_size", 1, kMaxIntermediate);
  const auto L = v.integer("depth", 1, kMaxLayers);
  const auto heads = v.integer("num_heads", 1, kMaxHeads);
  const auto patch = v.integer("patch_size", 1, 1024);
  const auto temporal = v.optional_integer("temporal_patch_size", 1, 64).value_or(2);
  const auto channels = v.optional_integer("in_channels", 1, 16).value_or(3);
  const auto positions = v.integer("num_position_embeddings", 1, 1 << 24);
  const auto out = v.integer("out_hidden_size", 1, kMaxHidden);
  const auto merge = v.optional_integer("spatial_merge_size", 1, 64).value_or(2);
  const auto deepstack = v.integer_list("deepstack_visual_indexes", 0, kMaxLayers);
  const std::int64_t merged = h * merge * merge;
  TowerBuilder b(dt);
  b.tensor("visual.patch_embed.proj", h * channels * temporal * patch * patch + h);
  b.tensor("visual.pos_embed", positions * h);
  for (std::int64_t i = 0; i < L; ++i) {
    b.vit_block(fmt::format("visual.blocks.{}.", i),
                {"attn.qkv", "attn.proj", "mlp.linear_fc1", "mlp.linear_fc2", "norm1", "norm2"}, heads, h, I);
  }
  auto merger = [&](const std::string& p, std::int64_t norm_width) {
    b.tensor(p + "norm", 2 * norm_width);
    b.linear(p + "linear_fc1", Parallelism::kColumn, merged, merged, true);
    b.linear(p + "linear_fc2", Parallelism::kRow, out, merged, true);
  };
  merger("visual.merger.", h);
  for (std::size_t k = 0; k < deepstack.size(); ++k) merger(fmt::format("visual.deepstack_merger_list.{}.", k), merged);
  const auto token_side = patch * merge;
  b.encoder({h, I, false, channels * temporal * patch * patch, merge * merge,
             kQwen3VlMaxPixels / (token_side * token_side), out * (1 + static_cast<std::int64_t>(deepstack.size())),
             "16,777,216 pixels (Qwen3-VL image processor longest_edge)"});
  model.vision = b.take();
  model.vision->modalities = {"image", "video"};
  model.vision->supports_encoder_tp_data = true;  // the vLLM class sets supports_encoder_tp_data
}

// Qwen2-VL and Qwen2.5-VL ViTs (qwen2_vl.py, qwen2_5_vl.py): a Conv3d patch embedding without bias,
// `depth` blocks and a patch merger (ln_q over the ViT width, then mlp.0 [4h, 4h] and mlp.2
// [out, 4h], biased). Qwen2.5-VL: RMSNorms (weight only) and a gated SiLU MLP of intermediate_size
// with biases; its width is `hidden_size` and its output `out_hidden_size`. Qwen2-VL: LayerNorms
// (weight + bias) and a QuickGELU fc1/fc2 MLP of embed_dim x mlp_ratio; its width is `embed_dim` and its
// output the config's `hidden_size`. Column-parallel weights and biases are split over TP, row-parallel
// weights split and their biases whole, norms and the patch embedding whole (default
// --mm-encoder-tp-mode weights). Window attention (Qwen2.5-VL) adds no weights.
void qwen2_vl(const JsonReader& v, bool v2_5, Dtype dt, ModelSpec& model) {
  const auto h = v2_5 ? v.integer("hidden_size", 1, kMaxHidden) : v.integer("embed_dim", 1, kMaxHidden);
  const auto out = v2_5 ? v.integer("out_hidden_size", 1, kMaxHidden) : v.integer("hidden_size", 1, kMaxHidden);
  const auto I = v2_5 ? v.integer("intermediate_size", 1, kMaxIntermediate)
                      : h * v.optional_integer("mlp_ratio", 1, 64).value_or(4);
  const auto L = v.integer("depth", 1, kMaxLayers);
  const auto heads = v.integer("num_heads", 1, kMaxHeads);
  const auto patch = v.optional_integer("patch_size", 1, 1024).value_or(14);
  const auto temporal = v.optional_integer("temporal_patch_size", 1, 64).value_or(2);
  const auto channels = v.optional_integer("in_chans", 1, 16).value_or(v.optional_integer("in_channels", 1, 16).value_or(3));
  const auto merge = v.optional_integer("spatial_merge_size", 1, 64).value_or(2);
  (void)v.has("fullatt_block_indexes");  // window attention: which blocks attend globally (compute only)
  (void)v.has("window_size");
  const std::int64_t merged = h * merge * merge;
  const std::int64_t norm = v2_5 ? h : 2 * h;  // RMSNorm weight, or LayerNorm weight + bias
  TowerBuilder b(dt);
  b.tensor("visual.patch_embed.proj", h * channels * temporal * patch * patch);
  for (std::int64_t i = 0; i < L; ++i) {
    const std::string p = fmt::format("visual.blocks.{}.", i);
    b.qkv(p + "attn.qkv", heads, h / heads, h, true);
    b.linear(p + "attn.proj", Parallelism::kRow, h, h, true);
    if (v2_5) {
      b.linear(p + "mlp.gate_proj", Parallelism::kColumn, I, h, true);
      b.linear(p + "mlp.up_proj", Parallelism::kColumn, I, h, true);
      b.linear(p + "mlp.down_proj", Parallelism::kRow, h, I, true);
    } else {
      b.linear(p + "mlp.fc1", Parallelism::kColumn, I, h, true);
      b.linear(p + "mlp.fc2", Parallelism::kRow, h, I, true);
    }
    b.tensor(p + "norm1", norm);
    b.tensor(p + "norm2", norm);
  }
  b.tensor("visual.merger.ln_q", norm);
  b.linear("visual.merger.mlp.0", Parallelism::kColumn, merged, merged, true);
  b.linear("visual.merger.mlp.2", Parallelism::kRow, out, merged, true);
  const auto token_side = patch * merge;
  b.encoder({h, I, v2_5, channels * temporal * patch * patch, merge * merge,
             qwen2_vl_largest_image_tokens(kQwen2VlMaxPixels, token_side), out,
             "12,845,056 pixels (Qwen2-VL image processor max_pixels)"});
  model.vision = b.take();
  model.vision->profile.pixels_per_token_side = token_side;
  model.vision->profile.video_max_frames = kQwen2VlMaxFramesPerVideo;
  model.vision->profile.temporal_patch = temporal;
  model.vision->modalities = {"image", "video"};
  model.vision->supports_encoder_tp_data = true;  // the vLLM class sets supports_encoder_tp_data
}

}  // namespace

}  // namespace gpubudget::detail

namespace gpubudget {

std::int64_t qwen2_vl_largest_image_tokens(std::int64_t max_pixels, std::int64_t pixels_per_token_side) {
  const std::int64_t most = max_pixels / (pixels_per_token_side * pixels_per_token_side);
  for (std::int64_t tokens = most; tokens > 1; --tokens) {
    std::int64_t rows = 1;  // closest_factor_pair: the largest divisor not above the square root
    for (std::int64_t d = 1; d * d <= tokens; ++d) {
      if (tokens % d == 0) rows = d;
    }
    if (tokens / rows <= 200 * rows) return tokens;
  }
  return std::max<std::int64_t>(most, 1);
}

}  // namespace gpubudget

namespace gpubudget::detail {

void parse_vision(const JsonReader& root, ModelSpec& model) {
  const JsonReader v = root.object("vision_config");
  if (model.architecture == "KimiK25ForConditionalGeneration") return moonvit(v, kKimiK25Keys, model.dtype, model);
  const auto type = v.optional_string("model_type").value_or("");
  if (type == "moonvit" && model.architecture == "KimiVLForConditionalGeneration") {
    return moonvit(v, kKimiVlKeys, model.dtype, model);
  }
  if (type == "llama4_vision_model") return llama4_vision(v, model.dtype, model);
  if (model.model_type == "qwen2_5_vl" || model.model_type == "qwen2_vl") {
    return qwen2_vl(v, model.model_type == "qwen2_5_vl", model.dtype, model);
  }
  if (type == "siglip_vision_model" && model.model_type == "gemma3_text") return siglip_gemma3(root, v, model.dtype, model);
  if (type == "gemma4_vision" && model.model_type == "gemma4_text") return gemma4_vision(root, v, model.dtype, model);
  if (type == "pixtral" && root.optional_string("model_type").value_or("") == "mistral3") {
    return pixtral_mistral3(root, v, model.dtype, model);
  }
  if (type == "qwen3_vl" || type == "qwen3_vl_moe" || type == "qwen3_5" || type == "qwen3_5_moe" ||
      type == "qwen3_5_vision" || type == "qwen3_5_moe_vision") {
    return qwen3_vl(v, model.dtype, model);
  }
  throw InputError(fmt::format("{}: the vision tower of {} (vision model_type \"{}\") is not modelled yet; its weights "
                               "would be missing from the budget (modelled: Kimi-K2.5 and Kimi-VL MoonViT, Gemma 3 "
                               "SigLIP, Mistral 3 Pixtral, Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Llama 4)",
                               v.path("model_type"), model.architecture, type));
}

}  // namespace gpubudget::detail

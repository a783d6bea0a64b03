// Kimi-K2.5's MoonViT vision tower and patch-merger projector (vLLM models/kimi_k25{,_vit}.py).
// Always unquantized. ViT linears are TP-sharded (default --mm-encoder-tp-mode weights); the
// projector is counted as replicated.
#include <fmt/format.h>

#include "gpubudget/error.h"
#include "parse_context.h"

namespace gpubudget::detail {

void parse_kimi_vision(const JsonReader& v, Dtype dt, ModelSpec& model) {
  const auto h = v.integer("vt_hidden_size", 1, kMaxHidden);
  const auto I = v.integer("vt_intermediate_size", 1, kMaxIntermediate);
  const auto L = v.integer("vt_num_hidden_layers", 1, kMaxLayers);
  const auto heads = v.integer("vt_num_attention_heads", 1, kMaxHeads);
  const auto patch = v.integer("patch_size", 1, 1024);
  const auto pos_h = v.integer("init_pos_emb_height", 1, 4096);
  const auto pos_w = v.integer("init_pos_emb_width", 1, 4096);
  const auto mm_hidden = v.optional_integer("mm_hidden_size", 1, kMaxHidden).value_or(h);
  const auto text_hidden = v.optional_integer("text_hidden_size", 1, kMaxHidden).value_or(model.hidden_size);
  const auto merge = v.integer_list("merge_kernel_size", 1, 64);
  if (merge.size() != 2) v.fail("merge_kernel_size", "[height, width]");
  const auto merged = mm_hidden * merge[0] * merge[1];

  QuantFormat plain;
  plain.dtype = dt;
  VisionTower tower;
  auto add_linear = [&](std::string name, Parallelism par, std::int64_t out, std::int64_t in) {
    tower.linears.push_back(make_linear(std::move(name), Component::kVision, par, {out}, in, plain, true));
  };
  auto add_tensor = [&](std::string name, std::int64_t elements) {
    tower.replicated.push_back({std::move(name), Component::kVision, elements, dt});
  };
  for (std::int64_t i = 0; i < L; ++i) {
    const std::string b = fmt::format("vision_tower.encoder.blocks.{}.", i);
    add_linear(b + "wqkv", Parallelism::kColumn, 3 * h, h);
    add_linear(b + "wo", Parallelism::kRow, h, h);
    add_linear(b + "mlp.fc0", Parallelism::kColumn, I, h);
    add_linear(b + "mlp.fc1", Parallelism::kRow, h, I);
    add_tensor(b + "norm0", 2 * h);
    add_tensor(b + "norm1", 2 * h);
  }
  add_tensor("vision_tower.encoder.final_layernorm", 2 * h);
  add_tensor("vision_tower.patch_embed.pos_emb", pos_h * pos_w * h);
  add_tensor("vision_tower.patch_embed.proj", h * 3 * patch * patch + h);
  add_tensor("mm_projector.pre_norm", 2 * mm_hidden);
  add_linear("mm_projector.proj.0", Parallelism::kReplicated, merged, merged);
  add_linear("mm_projector.proj.2", Parallelism::kReplicated, text_hidden, merged);
  (void)heads;
  model.vision = std::move(tower);
}

}  // namespace gpubudget::detail

// ModelSpec → weight units (docs/methodology.md §Weights). Byte formulas live in weights.cpp.
#include "gpubudget/weight_units.h"

#include <algorithm>

#include "gpubudget/weights.h"
#include "memory/weight_unit_totals.h"

namespace gpubudget {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The checkpoint names of a (possibly fused) linear module: vLLM's packed_modules_mapping in reverse,
// plus the fused name itself for checkpoints that store it fused (Qwen3-Next in_proj_qkvz).
std::vector<std::string> checkpoint_names_of(const LinearModule& m) {
  struct Fusion {
    std::string_view fused;
    std::vector<std::string_view> shards;
  };
  static const Fusion kFusions[] = {
      {"qkv_proj", {"q_proj", "k_proj", "v_proj"}},
      {"gate_up_proj", {"gate_proj", "up_proj"}},
      {"fused_qkv_a_proj", {"q_a_proj", "kv_a_proj_with_mqa"}},
      {"in_proj_qkvz", {"in_proj_qkv", "in_proj_z"}},
      {"in_proj_ba", {"in_proj_b", "in_proj_a"}},
      {"fused_wqa_wkv", {"wq_a", "wkv"}},        // DeepSeek-V4
      {"fused_wkv_wgate", {"wkv", "wgate"}},     // DeepSeek-V4 compressors
      {"shared_experts.w13", {"shared_experts.w1", "shared_experts.w3"}},
  };
  const std::string canonical = canonical_module_name(m.name);
  std::vector<std::string> names;
  for (const auto& f : kFusions) {
    if (ends_with(canonical, f.fused) && f.shards.size() == m.output_sizes.size()) {
      const std::string base = canonical.substr(0, canonical.size() - f.fused.size());
      for (const auto shard : f.shards) names.push_back(base + std::string(shard));
    }
  }
  names.push_back(canonical);
  return names;
}

std::int64_t linear_parameters(const LinearModule& m) {
  std::int64_t outputs = 0;
  for (const std::int64_t rows : m.output_sizes) outputs += rows;
  return outputs * m.input_size + (m.has_bias ? outputs : 0);
}

std::int64_t experts_parameters(const ExpertsModule& e) {
  const std::int64_t I = e.intermediate_size;
  const std::int64_t H = e.hidden_size;
  const std::int64_t per_expert = (e.gated ? 2 : 1) * I * H + H * I + (e.has_bias ? (e.gated ? 2 : 1) * I + H : 0);
  return e.num_experts * per_expert;
}

// Enumerates the units once. With `with_names` false (the totals fit() needs on every call) it only
// sums bytes: no unit, name or checkpoint-name string is built.
struct UnitBuilder {
  UnitBuilder(const ParallelLayout& l, bool names_wanted, bool checkpoint_wanted = true, bool per_gpu_wanted = true)
      : layout(l), with_names(names_wanted), with_checkpoint(checkpoint_wanted), with_per_gpu(per_gpu_wanted) {}
  const ParallelLayout& layout;
  bool with_names = true;
  bool with_checkpoint = true;  // false: checkpoint bytes are left 0 (fit() needs only the per-GPU sums)
  bool with_per_gpu = true;     // false: per-GPU bytes are left 0 (checkpoint_bytes() needs no layout)
  std::vector<WeightUnit> units;
  detail::WeightUnitTotals totals;
  WeightUnit scratch;  // what add() returns when units are not kept

  // `parameters`: the unit's weight elements in the checkpoint (quantized weights counted unpacked,
  // scales not counted; 0 for runtime-only units).
  WeightUnit& add(const std::string& name, std::vector<std::string> checkpoint_names, Component component,
                  std::int64_t layer, Bytes checkpoint, Bytes per_gpu, std::int64_t parameters) {
    totals.per_gpu[static_cast<std::size_t>(component)] += per_gpu;
    totals.checkpoint += checkpoint;
    if (checkpoint.count() > 0) totals.checkpoint_parameters += parameters;
    if (!with_names) return scratch;
    WeightUnit u;
    u.name = name;
    u.checkpoint_names = std::move(checkpoint_names);
    u.component = component;
    u.layer = layer;
    u.checkpoint = checkpoint;
    u.per_gpu = per_gpu;
    units.push_back(std::move(u));
    return units.back();
  }
  std::vector<std::string> names(const std::string& checkpoint_name) const {
    return with_names ? std::vector<std::string>{checkpoint_name} : std::vector<std::string>{};
  }

  // A name ending in '.' stands for every checkpoint tensor under it (a tower counted whole).
  WeightUnit& tensor(const ReplicatedTensor& t, std::int64_t layer, bool on_gpu) {
    const Bytes stored(t.elements * element_bytes(t.checkpoint_dtype.value_or(t.dtype)));
    const std::int64_t local =
        t.split_min_per_rank > 0 ? std::max(t.elements / layout.tp, t.split_min_per_rank) : t.elements;
    const Bytes bytes(local * element_bytes(t.dtype));
    WeightUnit& u = add(t.name, with_names ? names(canonical_module_name(t.name)) : std::vector<std::string>{},
                        t.component, layer, stored, on_gpu ? bytes : Bytes(0), t.elements);
    u.prefix_match = !t.name.empty() && t.name.back() == '.';
    return u;
  }

  WeightUnit& linear(const LinearModule& m, std::int64_t layer, bool on_gpu) {
    const bool extra = m.component == Component::kExtraCopies;
    WeightUnit& u = add(m.name, extra || !with_names ? std::vector<std::string>{} : checkpoint_names_of(m),
                        m.component, layer, extra || !with_checkpoint ? Bytes(0) : checkpoint_linear_bytes(m),
                        on_gpu && with_per_gpu ? linear_bytes(m, layout) : Bytes(0), linear_parameters(m));
    u.runtime_only = extra;
    return u;
  }

  void decoder_layer(const LayerSpec& l, bool on_gpu, bool checkpoint_only) {
    const std::size_t first = units.size();
    for (const auto& m : l.linears) {
      if (checkpoint_only && m.component == Component::kExtraCopies) continue;
      linear(m, l.index, on_gpu);
    }
    for (const auto& e : l.experts) {
      WeightUnit& u = add(e.name, with_names ? names(canonical_module_name(e.name) + ".") : std::vector<std::string>{},
                          Component::kRoutedExperts, l.index,
                          with_checkpoint ? checkpoint_experts_bytes(e) : Bytes(0),
                          on_gpu && with_per_gpu ? experts_bytes(e, layout) : Bytes(0), experts_parameters(e));
      u.prefix_match = true;
    }
    for (const auto& t : l.replicated) tensor(t, l.index, on_gpu);
    for (std::size_t i = first; i < units.size(); ++i) units[i].checkpoint_only = checkpoint_only;
  }
};

void enumerate_units(const ModelSpec& model, const ParallelLayout& layout, UnitBuilder& b);

// The drafter (ModelSpec::drafter), on the last pipeline stage, as one Component::kDraft row: its units
// keep their names; checkpoint bytes count only for MTP layers stored in the target's checkpoint.
void drafter_units(const Drafter& d, std::int64_t hidden, const ParallelLayout& layout, UnitBuilder& b) {
  const bool on_gpu = layout.is_last_stage();
  const std::size_t first = b.units.size();
  const detail::WeightUnitTotals before = b.totals;
  for (const auto& layer : d.layers) b.decoder_layer(layer, on_gpu, false);
  for (const auto& m : d.linears) b.linear(m, -1, on_gpu);
  for (const auto& t : d.tensors) b.tensor(t, -1, on_gpu);
  for (const auto& t : d.vocab_tables) {
    const std::int64_t width = d.hidden_size > 0 ? d.hidden_size : hidden;
    const std::int64_t rows = t.elements / width;
    const Bytes local(round_up(rows, 64) / layout.tp * width * element_bytes(t.dtype));
    b.add(t.name, b.names(canonical_module_name(t.name)), t.component, -1, Bytes(t.elements * element_bytes(t.dtype)),
          on_gpu ? local : Bytes(0), t.elements);
  }
  for (const auto& t : d.shared_with_target) b.tensor(t, -1, false).checkpoint_only = true;
  // Re-file what was added under kDraft, and drop checkpoint bytes of a separate draft checkpoint.
  Bytes added;
  for (std::size_t c = 0; c < kComponentCount; ++c) {
    added += b.totals.per_gpu[c] - before.per_gpu[c];
    b.totals.per_gpu[c] = before.per_gpu[c];
  }
  b.totals.per_gpu[static_cast<std::size_t>(Component::kDraft)] += added;
  if (!d.in_target_checkpoint) {
    b.totals.checkpoint = before.checkpoint;
    b.totals.checkpoint_parameters = before.checkpoint_parameters;
  }
  for (std::size_t i = first; i < b.units.size(); ++i) {
    b.units[i].component = Component::kDraft;
    if (!d.in_target_checkpoint) {
      b.units[i].checkpoint = Bytes(0);
      b.units[i].runtime_only = true;
    }
  }
}

}  // namespace

std::vector<WeightUnit> weight_units(const ModelSpec& model, const ParallelLayout& layout) {
  UnitBuilder b(layout, true);
  enumerate_units(model, layout, b);
  return std::move(b.units);
}

detail::WeightUnitTotals detail::weight_unit_totals(const ModelSpec& model, const ParallelLayout& layout, WeightSums sums) {
  UnitBuilder b(layout, false, sums != detail::WeightSums::kPerGpu, sums != detail::WeightSums::kCheckpoint);
  enumerate_units(model, layout, b);
  return b.totals;
}

namespace {

void enumerate_units(const ModelSpec& model, const ParallelLayout& layout, UnitBuilder& b) {
  // Vocabulary padded to 64 (DEFAULT_VOCAB_PADDING_SIZE), then split over TP.
  const std::int64_t vocab_local = round_up(model.vocab_size, 64) / layout.tp;
  const std::int64_t table = model.vocab_size * model.hidden_size;
  b.add(model.embedding_name, b.names(canonical_module_name(model.embedding_name)), Component::kEmbedding, -1, Bytes(table * element_bytes(model.dtype)),
        Bytes(layout.is_first_stage() ? vocab_local * model.hidden_size * element_bytes(model.dtype) : 0), table);
  for (const auto& layer : model.layers) {
    b.decoder_layer(layer, layer.index >= layout.first_layer && layer.index < layout.end_layer, false);
  }
  for (const auto& layer : model.mtp_layers) b.decoder_layer(layer, false, true);
  for (const auto& m : model.mtp_linears) b.linear(m, -1, false).checkpoint_only = true;
  for (const auto& t : model.mtp_tensors) b.tensor(t, -1, false).checkpoint_only = true;
  for (const auto& t : model.final_norms) b.tensor(t, -1, layout.is_last_stage());
  // A tied head reuses the embedding, except on a separate last stage, which builds its own.
  const std::int64_t head_columns = model.hidden_size + (model.lm_head_bias ? 1 : 0);  // the bias: one per row
  const Bytes head_local(vocab_local * head_columns * element_bytes(model.lm_head_format.dtype));
  const bool head_on_gpu = layout.is_last_stage() && (!model.tie_word_embeddings || layout.pp > 1);
  if (!model.tie_word_embeddings || head_on_gpu) {
    WeightUnit& head = b.add("lm_head", model.tie_word_embeddings ? std::vector<std::string>{} : b.names("lm_head"),
                             Component::kLmHead, -1,
                             Bytes(model.tie_word_embeddings
                                       ? 0
                                       : model.vocab_size * head_columns * element_bytes(model.lm_head_format.dtype)),
                             head_on_gpu ? head_local : Bytes(0), model.vocab_size * head_columns);
    head.runtime_only = model.tie_word_embeddings;
  }
  if (model.tie_word_embeddings && model.checkpoint_stores_tied_head) {
    // vLLM's loaders skip lm_head.weight of a tied model; the file still holds it.
    b.add("lm_head (stored, tied)", b.names("lm_head"), Component::kLmHead, -1,
          Bytes(table * element_bytes(model.lm_head_format.dtype)), Bytes(0), table)
        .checkpoint_only = true;
  }
  if (model.vision) {
    for (const auto& m : model.vision->linears) b.linear(m, -1, true);
    for (const auto& t : model.vision->replicated) b.tensor(t, -1, true);
  }
  if (model.drafter) drafter_units(*model.drafter, model.hidden_size, layout, b);
  for (const auto& t : model.buffers) {
    const Bytes bytes(t.elements * element_bytes(t.dtype));
    WeightUnit& u = b.add(t.name, {}, t.component, -1, Bytes(0), bytes, 0);
    u.runtime_only = true;
  }
}

}  // namespace

}  // namespace gpubudget

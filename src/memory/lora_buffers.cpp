// LoRA adapter slots (lora_buffers.h). Shapes from vllm/lora/layers (main, 2026-05):
//  - column-parallel (one slice per fused output, QKV: q, k, v): lora_a [L, 1, R, K] per slice, lora_b
//    [L, 1, N_slice / tp, R] (KV slices: max(1, kv_heads / tp) heads); --fully-sharded-loras splits R
//    of lora_a by tp (column_parallel_linear.py, base_linear.py);
//  - row-parallel: lora_a [L, 1, R, K / tp], lora_b [L, 1, N, R], N split by tp when fully sharded;
//  - replicated: lora_a [L, 1, R, K], lora_b [L, 1, N, R];
//  - FusedMoE (fused_moe.py): w1 and w3 lora_a [L, E_local, R, H], lora_b [L, E_local, I_local, R];
//    w2 lora_a [L, E_local, R, I_local], lora_b [L, E_local, H, R];
//  - embed_tokens (VocabParallelEmbeddingWithLoRA): lora_a [L, V, R], lora_b [L, 1, H, R]; the logits
//    processor: lora_a [L, 1, R, H], lora_b [L, 1, V, R], plus an int64 map of the padded vocabulary
//    when tp > 1;
//  - Punica (punica_base.py, punica_gpu.py): int64 token indices 3 x T and 2 x T, request indices 3 x S,
//    and two kernel metadata sets of int32 2 x T plus small per-adapter arrays.
// Not modelled: --enable-tower-connector-lora (vision tower slots), 3-D MoE LoRA's fused w13.
#include "gpubudget/lora_buffers.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpubudget/error.h"

namespace gpubudget {

namespace {

// --lora-target-modules names module suffixes; a fused module (qkv_proj, gate_up_proj) counts as targeted
// when any of its checkpoint shards is named, so that a list of unfused names never leaves it out.
bool targeted(const std::string& module, const LoraAdapters& lora) {
  if (lora.target_modules.empty()) return true;
  const auto dot = module.rfind('.');
  const std::string suffix = dot == std::string::npos ? module : module.substr(dot + 1);
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kShards = {
      {"qkv_proj", {"q_proj", "k_proj", "v_proj"}}, {"gate_up_proj", {"gate_proj", "up_proj"}}};
  const auto named = [&](const std::string& name) {
    return std::find(lora.target_modules.begin(), lora.target_modules.end(), name) != lora.target_modules.end();
  };
  if (named(suffix)) return true;
  for (const auto& [fused, shards] : kShards) {
    if (suffix == fused && std::any_of(shards.begin(), shards.end(), named)) return true;
  }
  return false;
}

// Elements of one linear module's A and B stacks for one adapter slot.
std::int64_t linear_slot_elements(const LinearModule& m, std::int64_t tp, std::int64_t R, bool fully_sharded) {
  const std::int64_t K = m.input_size;
  std::int64_t N = 0;
  for (const auto o : m.output_sizes) N += o;
  switch (m.parallelism) {
    case Parallelism::kColumn: {
      const std::int64_t a = static_cast<std::int64_t>(m.output_sizes.size()) * (fully_sharded ? R / tp : R) * K;
      return a + N / tp * R;
    }
    case Parallelism::kQkv: {
      const std::int64_t q = m.num_heads / tp * m.head_dim;
      const std::int64_t kv = std::max<std::int64_t>(1, m.num_kv_heads / tp) * m.head_dim;
      return 3 * (fully_sharded ? R / tp : R) * K + (q + 2 * kv) * R;
    }
    case Parallelism::kRow: return R * (K / tp) + (fully_sharded ? N / tp : N) * R;
    case Parallelism::kReplicated: return static_cast<std::int64_t>(m.output_sizes.size()) * R * K + N * R;
  }
  return 0;
}

}  // namespace

LoraBuffers lora_buffers(const ModelSpec& model, const ParallelLayout& layout, const LoraAdapters& lora,
                         const LoraRules& rules, std::int64_t max_num_batched_tokens, std::int64_t max_num_seqs) {
  LoraBuffers out;
  if (!lora.enabled) return out;
  static constexpr std::int64_t kRanks[] = {1, 8, 16, 32, 64, 128, 256, 320, 512};  // MaxLoRARanks
  const std::int64_t R = lora.max_lora_rank;
  if (std::find(std::begin(kRanks), std::end(kRanks), R) == std::end(kRanks)) {
    throw InputError(fmt::format("--max-lora-rank {}: vLLM accepts 1, 8, 16, 32, 64, 128, 256, 320 or 512", R));
  }
  if (lora.max_loras < 1 || lora.max_loras > 4096) {
    throw InputError(fmt::format("--max-loras {}: expected from 1 to 4096", lora.max_loras));
  }
  const std::int64_t tp = layout.tp;
  if (lora.fully_sharded && R % tp != 0) {
    throw InputError(fmt::format("--fully-sharded-loras: --max-lora-rank {} is not divisible by "
                                 "--tensor-parallel-size {} (vLLM splits the rank over TP)",
                                 R, tp));
  }
  const Dtype dtype = lora.dtype == ModelDtypeChoice::kFloat16    ? Dtype::kFloat16
                      : lora.dtype == ModelDtypeChoice::kBFloat16 ? Dtype::kBFloat16
                      : lora.dtype == ModelDtypeChoice::kFloat32  ? Dtype::kFloat32
                                                                  : model.dtype;
  const std::int64_t b = element_bytes(dtype);
  const std::int64_t L = lora.max_loras;
  std::int64_t linear = 0;
  for (std::int64_t i = layout.first_layer; i < layout.end_layer; ++i) {
    const LayerSpec& layer = model.layers[static_cast<std::size_t>(i)];
    for (const auto& m : layer.linears) {
      if (m.component == Component::kExtraCopies || !targeted(m.name, lora)) continue;
      linear += linear_slot_elements(m, tp, R, lora.fully_sharded);
    }
    for (const auto& e : layer.experts) {
      if (!targeted(e.name, lora) && !targeted(e.name + ".experts", lora)) continue;
      const std::int64_t physical = e.num_experts + layout.redundant_experts;
      const std::int64_t local_experts = layout.moe_ep > 1 ? cdiv(physical, layout.moe_ep) : e.num_experts;
      const std::int64_t I = e.intermediate_size / layout.moe_tp;
      const std::int64_t H = e.hidden_size;
      const std::int64_t gates = e.gated ? 2 : 1;
      const std::int64_t w13 = gates * ((lora.fully_sharded ? R / tp : R) * H + I * R);
      const std::int64_t w2 = R * I + (lora.fully_sharded ? H / tp : H) * R;
      linear += local_experts * (w13 + w2);
    }
  }
  out.linear = Bytes(linear * L * b);

  const bool embeddings = std::find(rules.embedding_architectures.begin(), rules.embedding_architectures.end(),
                                    model.architecture) != rules.embedding_architectures.end();
  if (embeddings) {
    const std::int64_t V = model.vocab_size;
    const std::int64_t H = model.hidden_size;
    std::int64_t elements = 0;
    if (layout.is_first_stage() && targeted("embed_tokens", lora)) elements += L * R * (V + H);
    std::int64_t map = 0;
    if (layout.is_last_stage() && targeted("lm_head", lora)) {
      if (V > rules.max_lm_head_vocab) {
        throw InputError(fmt::format("--enable-lora: vocab_size {} of {} is above the {} LoRA's logits processor "
                                     "accepts (LogitsProcessorWithLoRA)",
                                     V, model.source, rules.max_lm_head_vocab));
      }
      elements += L * R * (H + V);
      if (tp > 1) map = round_up(V, 64) * 8;  // sharded_to_full_mapping, int64
    }
    out.embeddings = Bytes(elements * b + map);
  }
  const std::int64_t T = max_num_batched_tokens;
  const std::int64_t S = max_num_seqs;
  // Two kernel metadata sets (prefill and decode): int32 [2, T] plus int32 arrays of L + 1, L + 1, L + 2.
  out.punica = Bytes((3 + 2) * T * 8 + 3 * S * 8 + 2 * (2 * T * 4 + (2 * (L + 1) + (L + 2)) * 4));
  return out;
}

}  // namespace gpubudget

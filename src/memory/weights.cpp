// Exact per-GPU weight bytes (docs/methodology.md §Weights).
#include "gpubudget/weights.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>

#include <fmt/format.h>

#include "gpubudget/served_model.h"
#include "gpubudget/weight_units.h"
#include "memory/weight_unit_totals.h"

namespace gpubudget {

namespace {

// compressed-tensors WNA16 (CompressedTensorsWNA16.create_weights; Marlin repacking keeps the sizes):
// weight_packed int32 [n, k·bits/32], weight_scale 16-bit [n, cdiv(k, g)], the weight_shape record
// (`shape_bytes`: int64 [2] for a linear layer, fp32 [2] per expert for FusedMoE), and for asymmetric
// schemes weight_zero_point int32 [cdiv(n, 32/bits), cdiv(k, g)].
std::int64_t int_packed_bytes(const QuantFormat& format, std::int64_t n, std::int64_t k, std::int64_t shape_bytes) {
  const std::int64_t groups = format.group_size > 0 ? cdiv(k, format.group_size) : 1;
  std::int64_t bytes = n * k * format.bits / 8 + n * groups * element_bytes(format.dtype) + shape_bytes;
  if (!format.symmetric) bytes += cdiv(n, 32 / format.bits) * groups * 4;
  return bytes;
}

// Groups of `group_size` inputs over `k` (one group when group_size is 0: per output channel).
std::int64_t groups_of(const QuantFormat& f, std::int64_t k) { return f.group_size > 0 ? cdiv(k, f.group_size) : 1; }

// bitsandbytes' quantize_4bit(compress_statistics=True, quant_type="nf4") of `elements` weights, as vLLM
// keeps it after _dequantize_dq (bitsandbytes_loader.py, vLLM 0.9.2+, #19742): the packed uint8 weight
// (bitsandbytes ops.py: (n + 1) // 2 bytes), the absmax rebuilt in fp32, one per block of 64, and the
// fp32 NF4 code table of 16 entries. The nested absmax, its code and offset are freed.
std::int64_t bnb_nf4_bytes(std::int64_t elements) { return cdiv(elements, 2) + 4 * cdiv(elements, 64) + 16 * 4; }

// Bytes of a local [n, k] matrix in `format`, as vLLM holds it after process_weights_after_loading.
// `k_unsplit` is the input size before a row-parallel split (== k otherwise): GPTQ with act-order
// keeps every group's scales on every rank.
std::int64_t matrix_bytes(const QuantFormat& format, std::int64_t n, std::int64_t k, std::int64_t k_unsplit) {
  switch (format.kind) {
    case QuantKind::kUnquantized:
      return n * k * element_bytes(format.dtype);
    case QuantKind::kFp8Block:
      // fp8 weight + weight_scale_inv [cdiv(n, bn), cdiv(k, bk)] (create_fp8_scale_parameter): fp32, or
      // e8m0 (1 byte) where the config says so (DeepSeek-V4).
      return n * k + format.scale_bytes * cdiv(n, format.block_n) * cdiv(k, format.block_k);
    case QuantKind::kNvfp4:
      // Two e2m1 values per byte; fp8 block scales swizzled to [round_up(n,128), round_up(k/16,4)]
      // (swizzle_blockscale); fp32 input_scale, weight_scale_2, alpha, input_scale_inv.
      return n * k / 2 + round_up(n, 128) * round_up(k / format.group_size, 4) + 16;
    case QuantKind::kIntPacked:
      return int_packed_bytes(format, n, k, 16);
    case QuantKind::kMxfp4:
      return n * k / 2 + n * cdiv(k, 32);  // not used for linear layers by vLLM; kept for completeness
    case QuantKind::kFp8Tensor:
      // fp8 weight; the fused shards' scales are requantized to their maximum, one fp32 scalar
      // (requantize_with_max_scale); a static input scale is reduced the same way.
      return n * k + 4 + (format.static_input_scale ? 4 : 0);
    case QuantKind::kChannel8:
      // 8-bit weight, fp32 weight_scale [n, 1] (ChannelQuantScaleParameter), optional input scale.
      return n * k + 4 * n + (format.static_input_scale ? 4 : 0);
    case QuantKind::kGptq: {
      // gptq_marlin: repacked weight (same bytes), scales [groups, n] in the model dtype; zero points
      // only when asymmetric; with act-order g_idx and g_idx_sort_indices int32 [k] each, and scales
      // for the unsplit input (marlin_repeat_scales_on_all_ranks) on row-parallel layers.
      const std::int64_t groups = groups_of(format, format.act_order ? k_unsplit : k);
      std::int64_t bytes = n * k * format.bits / 8 + groups * n * element_bytes(format.dtype);
      if (!format.symmetric) bytes += groups * cdiv(n * format.bits, 32) * 4;
      if (format.act_order) bytes += 2 * 4 * k;
      return bytes;
    }
    case QuantKind::kAwq: {
      // awq_marlin: repacked weight, scales [groups, n], zero points [groups, n·bits/32] int32.
      const std::int64_t groups = groups_of(format, k);
      return n * k * format.bits / 8 + groups * n * element_bytes(format.dtype) + groups * cdiv(n * format.bits, 32) * 4;
    }
    case QuantKind::kBnbNf4:
      // One quantization state for the matrix; linear_bytes gives each on-disk shard its own.
      return bnb_nf4_bytes(n * k);
  }
  return 0;
}

}  // namespace

std::int64_t local_shard_rows(const LinearModule& m, std::int64_t tp, std::size_t shard) {
  switch (m.parallelism) {
    case Parallelism::kColumn: return m.output_sizes[shard] / tp;
    case Parallelism::kQkv:
      return (shard == 0 ? m.num_heads / tp : (m.num_kv_heads >= tp ? m.num_kv_heads / tp : 1)) * m.head_dim;
    case Parallelism::kRow:
    case Parallelism::kReplicated: break;
  }
  return m.output_sizes[shard];
}

Bytes linear_bytes(const LinearModule& m, const ParallelLayout& layout) {
  const std::int64_t tp = layout.tp;
  std::int64_t local_out = 0;   // rows of the local weight
  std::int64_t full_out = 0;    // rows of the whole weight (bias of row-parallel / replicated)
  std::int64_t local_in = m.input_size;
  for (const auto o : m.output_sizes) full_out += o;
  switch (m.parallelism) {
    case Parallelism::kColumn:
      local_out = full_out / tp;
      if (m.mamba_groups > 0 && m.mamba_groups % tp != 0) {
        // One group, whole on every rank: B and C (2 x d_state rows) are not split.
        local_out = (full_out - 2 * m.mamba_groups * m.mamba_group_rows) / tp + 2 * m.mamba_groups * m.mamba_group_rows;
      }
      break;
    case Parallelism::kRow:
      local_out = full_out;
      local_in = m.input_size / tp;
      break;
    case Parallelism::kReplicated:
      local_out = full_out;
      break;
    case Parallelism::kQkv: {
      // Query heads split; KV heads split, or one replicated head per rank when tp > KV heads.
      const std::int64_t kv_local = m.num_kv_heads >= tp ? m.num_kv_heads / tp : 1;
      local_out = (m.num_heads / tp + 2 * kv_local) * m.head_dim;
      break;
    }
  }
  std::int64_t bytes = 0;
  if (m.format.kind == QuantKind::kBnbNf4) {
    // _unquantized_generator quantizes each rank's slice of every on-disk weight separately: a state
    // per shard (q, k, v; gate, up), each with its own rounding and code table.
    for (std::size_t i = 0; i < m.output_sizes.size(); ++i) {
      bytes += matrix_bytes(m.format, local_shard_rows(m, tp, i), local_in, m.input_size);
    }
  } else {
    bytes = matrix_bytes(m.format, local_out, local_in, m.input_size);
  }
  if (m.has_bias) {
    const std::int64_t bias_rows = m.parallelism == Parallelism::kRow || m.parallelism == Parallelism::kReplicated
                                       ? full_out
                                       : local_out;
    bytes += bias_rows * element_bytes(m.format.dtype);  // biases stay in the model dtype
  }
  return Bytes(bytes);
}

Bytes experts_bytes(const ExpertsModule& e, const ParallelLayout& layout) {
  // Local experts: all of them sharded over moe_tp, or ceil((E + redundant) / ep) whole experts with EP
  // (determine_expert_map gives the first ranks the remainder).
  const std::int64_t local_experts =
      layout.moe_ep > 1 ? cdiv(e.num_experts + layout.redundant_experts, layout.moe_ep) : e.num_experts;
  const std::int64_t I = e.intermediate_size / layout.moe_tp;
  const std::int64_t H = e.hidden_size;
  // w13 holds gate and up ([2I, H]) for gated experts, up alone ([I, H]) otherwise; w2 is [H, I].
  const std::int64_t gates = e.gated ? 2 : 1;
  std::int64_t per_expert = 0;
  switch (e.format.kind) {
    case QuantKind::kUnquantized:
      per_expert = (gates + 1) * I * H * element_bytes(e.format.dtype);
      break;
    case QuantKind::kFp8Block:
      // w13_weight_scale_inv [gates·cdiv(I, bn), cdiv(H, bk)], w2_weight_scale_inv [cdiv(H, bn), cdiv(I, bk)].
      per_expert = (gates + 1) * I * H +
                   e.format.scale_bytes * (gates * cdiv(I, e.format.block_n) * cdiv(H, e.format.block_k) +
                                           cdiv(H, e.format.block_n) * cdiv(I, e.format.block_k));
      break;
    case QuantKind::kNvfp4:
      // ModelOptNvFp4FusedMoE: 4-bit weights, fp8 scales swizzle-padded to 128 rows x 4 columns;
      // fp32 per expert: w13/w2 weight_scale_2, input scales, g1/g2 alphas.
      per_expert = gates * I * H / 2 + round_up(gates * I, 128) * round_up(H / 16, 4) + H * I / 2 +
                   round_up(H, 128) * round_up(I / 16, 4) + 24;
      break;
    case QuantKind::kMxfp4: {
      // Mxfp4MoEMethod: sizes padded per backend, then w13 [2I, H/2] u8 + scales [2I, H/32] u8 (+ bias
      // [2I]), w2 [H, I/2] + scales [H, I/32] (+ bias [H]). The Triton backend swizzles values and scales
      // into padded tiles and keeps the checkpoint-shaped scales too (docs/methodology.md §MXFP4).
      const Mxfp4Packing& x = layout.mxfp4;
      const std::int64_t Ip = round_up(I, x.intermediate_align);
      const std::int64_t Hp = round_up(H, x.hidden_align);
      const std::int64_t n13 = gates * Ip;
      const std::int64_t values =
          round_up(n13, x.value_row_align) * round_up(Hp / 2, x.value_k_align) +
          round_up(Hp, x.value_row_align) * round_up(Ip / 2, x.value_k_align);
      const std::int64_t plain_scales = n13 * cdiv(Hp, 32) + Hp * cdiv(Ip, 32);
      const std::int64_t scales =
          round_up(n13, x.scale_row_align) * round_up(cdiv(Hp, 32), x.scale_k_align) +
          round_up(Hp, x.scale_row_align) * round_up(cdiv(Ip, 32), x.scale_k_align) +
          (x.keeps_checkpoint_scales ? plain_scales : 0);
      per_expert = values + scales + (e.has_bias ? (n13 + Hp) * x.bias_bytes : 0);
      break;
    }
    case QuantKind::kIntPacked:
      // w13 and w2, each with its scales and an fp32 [2] weight_shape record per expert.
      per_expert = int_packed_bytes(e.format, gates * I, H, 8) + int_packed_bytes(e.format, H, I, 8);
      break;
    case QuantKind::kBnbNf4:
      // Each expert's gate, up and down quantized separately (BitsAndBytesMoEMethod, vLLM 0.10+, #20061);
      // _fuse_moe_quant_states joins their absmax into one state for w13 and one for w2, so two code
      // tables per layer (added below).
      per_expert = gates * (bnb_nf4_bytes(I * H) - 64) + bnb_nf4_bytes(H * I) - 64;
      break;
    case QuantKind::kFp8Tensor:
    case QuantKind::kChannel8:
    case QuantKind::kGptq:
    case QuantKind::kAwq:
      // Per expert, w13 [gates·I, H] and w2 [H, I] with their own scales (Fp8MoEMethod,
      // CompressedTensorsW8A8Fp8MoEMethod, GPTQMarlinMoEMethod with load_full_w2, AWQMarlinMoEMethod).
      per_expert = matrix_bytes(e.format, gates * I, H, H) + matrix_bytes(e.format, H, I, e.intermediate_size);
      break;
  }
  return Bytes(local_experts * per_expert + (e.format.kind == QuantKind::kBnbNf4 ? 2 * 64 : 0));
}

WeightsBreakdown weights_per_gpu(const ModelSpec& model, const ParallelLayout& layout) {
  check_servable_alone(model);
  const auto sums = detail::weight_unit_totals(model, layout, detail::WeightSums::kPerGpu).per_gpu;
  WeightsBreakdown out;
  for (std::size_t c = 0; c < kComponentCount; ++c) {
    if (sums[c].count() == 0) continue;
    out.components.push_back({static_cast<Component>(c), sums[c]});
    out.total += sums[c];
  }
  return out;
}

void add_to_component(WeightsBreakdown& weights, Component component, Bytes bytes) {
  if (bytes.count() == 0) return;
  auto it = std::find_if(weights.components.begin(), weights.components.end(),
                         [&](const ComponentBytes& c) { return c.component >= component; });
  if (it == weights.components.end() || it->component != component) {
    weights.components.insert(it, {component, bytes});
  } else {
    it->bytes += bytes;
  }
  weights.total += bytes;
}

void add_batched_token_buffers(WeightsBreakdown& weights, const ModelSpec& model, std::int64_t max_num_batched_tokens) {
  Bytes added;
  for (const auto& t : model.batched_token_buffers) {
    added += Bytes(detail::checked_mul(max_num_batched_tokens, t.elements * element_bytes(t.dtype)));
  }
  add_to_component(weights, Component::kBuffers, added);
}

Bytes cpu_offloaded_bytes(const ModelSpec& model, const ParallelLayout& layout, Bytes budget) {
  Bytes offloaded;
  if (budget.count() <= 0) return offloaded;
  for (const auto& unit : weight_units(model, layout)) {
    if (offloaded >= budget) break;
    if (unit.layer < layout.first_layer || unit.layer >= layout.end_layer || unit.component == Component::kDraft) {
      continue;
    }
    offloaded += unit.per_gpu;
  }
  return offloaded;
}

PrefetchOffload prefetch_offload(const ModelSpec& model, const ParallelLayout& layout, std::int64_t group,
                                 std::int64_t in_group, std::int64_t prefetch_step) {
  PrefetchOffload out;
  if (group <= 0) return out;
  std::map<std::string, Bytes> slot;  // module name within its layer -> largest bytes
  for (const auto& unit : weight_units(model, layout)) {
    if (unit.layer < layout.first_layer || unit.layer >= layout.end_layer || unit.component == Component::kDraft ||
        unit.per_gpu.count() == 0) {
      continue;
    }
    const std::int64_t index = unit.layer - layout.first_layer;  // counted from 0 on each pipeline stage
    if (index % group < group - in_group) continue;
    out.offloaded += unit.per_gpu;
    // "model.layers.7.mlp.experts" -> "mlp.experts"
    const std::string marker = fmt::format("layers.{}.", unit.layer);
    const auto at = unit.name.find(marker);
    const std::string key = at == std::string::npos ? unit.name : unit.name.substr(at + marker.size());
    Bytes& largest = slot[key];
    largest = std::max(largest, unit.per_gpu);
  }
  const std::int64_t total_layers = layout.end_layer - layout.first_layer;
  out.layers = in_group * (total_layers / group) + std::max<std::int64_t>(0, total_layers % group - (group - in_group));
  Bytes one_of_each;
  for (const auto& [key, bytes] : slot) one_of_each += bytes;
  if (out.layers > 0) out.buffers = Bytes(detail::checked_mul(one_of_each.count(), prefetch_step));
  return out;
}

namespace {

// One matrix [n, k] as a checkpoint stores it.
std::int64_t checkpoint_matrix_bytes(const QuantFormat& f, std::int64_t n, std::int64_t k) {
  switch (f.kind) {
    case QuantKind::kUnquantized: return n * k * element_bytes(f.dtype);
    case QuantKind::kFp8Block: return n * k + f.scale_bytes * cdiv(n, f.block_n) * cdiv(k, f.block_k);
    // packed weight, fp8 scales [n, k/16], fp32 weight_scale_2 and input_scale.
    case QuantKind::kNvfp4: return n * k / 2 + n * (k / f.group_size) + 8;
    // packed weight, 16-bit scales, int32 [2] weight_shape (+ zero points).
    case QuantKind::kIntPacked: {
      const std::int64_t groups = f.group_size > 0 ? cdiv(k, f.group_size) : 1;
      std::int64_t bytes = n * k * f.bits / 8 + n * groups * element_bytes(f.dtype) + 8;
      if (!f.symmetric) bytes += cdiv(n, 32 / f.bits) * groups * 4;
      return bytes;
    }
    // e2m1 blocks [n, k/32, 16] and e8m0 scales [n, k/32].
    case QuantKind::kMxfp4: return n * k / 2 + n * cdiv(k, 32);
    // fp8 weight, fp32 weight_scale (+ input_scale) per shard.
    case QuantKind::kFp8Tensor: return n * k + 4 + (f.static_input_scale ? 4 : 0);
    // 8-bit weight, weight_scale [n, 1] in the model dtype (+ fp32 input_scale).
    case QuantKind::kChannel8: return n * k + n * element_bytes(f.dtype) + (f.static_input_scale ? 4 : 0);
    // qweight, qzeros (always written), scales [groups, n], g_idx int32 [k] (always written).
    case QuantKind::kGptq: {
      const std::int64_t groups = groups_of(f, k);
      return n * k * f.bits / 8 + groups * cdiv(n * f.bits, 32) * 4 + groups * n * element_bytes(f.dtype) + 4 * k;
    }
    case QuantKind::kAwq: return matrix_bytes(f, n, k, k);
    case QuantKind::kBnbNf4: return matrix_bytes(f, n, k, k);  // vLLM quantizes online; no checkpoint holds it
  }
  return 0;
}

}  // namespace

Bytes checkpoint_linear_bytes(const LinearModule& m) {
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < m.output_sizes.size(); ++i) {
    const QuantFormat& f = i < m.checkpoint_formats.size() ? m.checkpoint_formats[i] : m.format;
    bytes += checkpoint_matrix_bytes(f, m.output_sizes[i], m.input_size);
    if (m.has_bias) bytes += m.output_sizes[i] * element_bytes(f.dtype);
  }
  return Bytes(bytes);
}

Bytes checkpoint_experts_bytes(const ExpertsModule& e) {
  const std::int64_t I = e.intermediate_size;
  const std::int64_t H = e.hidden_size;
  if (e.has_bias) {
    // gpt-oss stores gate_up fused with bf16 biases.
    return Bytes(e.num_experts * (checkpoint_matrix_bytes(e.format, 2 * I, H) + 2 * I * 2 +
                                  checkpoint_matrix_bytes(e.format, H, I) + H * 2));
  }
  // gate [I, H] (gated experts only), up [I, H], down [H, I] per expert.
  return Bytes(e.num_experts * ((e.gated ? 2 : 1) * checkpoint_matrix_bytes(e.format, I, H) +
                                checkpoint_matrix_bytes(e.format, H, I)));
}

Bytes checkpoint_bytes(const ModelSpec& model) {
  // Per-GPU bytes do not matter here; any layout will do.
  ParallelLayout layout;
  layout.end_layer = static_cast<std::int64_t>(model.layers.size());
  return detail::weight_unit_totals(model, layout, detail::WeightSums::kCheckpoint).checkpoint;
}

std::int64_t checkpoint_parameters(const ModelSpec& model) {
  ParallelLayout layout;
  layout.end_layer = static_cast<std::int64_t>(model.layers.size());
  return detail::weight_unit_totals(model, layout, detail::WeightSums::kCheckpoint).checkpoint_parameters;
}

std::string_view component_name(Component c) {
  switch (c) {
    case Component::kEmbedding: return "embedding";
    case Component::kAttention: return "attention";
    case Component::kDenseMlp: return "dense_mlp";
    case Component::kRoutedExperts: return "routed_experts";
    case Component::kSharedExperts: return "shared_experts";
    case Component::kRouter: return "router";
    case Component::kNorms: return "norms";
    case Component::kLmHead: return "lm_head";
    case Component::kVision: return "vision";
    case Component::kExtraCopies: return "extra_copies";
    case Component::kDraft: return "draft_model";
    case Component::kLora: return "lora_adapters";
    case Component::kBuffers: return "runtime_buffers";
  }
  return "?";
}

}  // namespace gpubudget

// Parallel layout and the divisibility rules vLLM enforces when it builds the model
// (vllm/distributed/utils.py::get_pp_indices, layers/linear.py, layers/fused_moe/config.py).
#include "gpubudget/parallel_layout.h"

#include <fmt/format.h>

#include "gpubudget/bytes.h"
#include "gpubudget/error.h"
#include "gpubudget/limits.h"

namespace gpubudget {

void pipeline_stage_layers(std::int64_t num_layers, std::int64_t pp, std::int64_t pp_rank,
                           std::int64_t& first, std::int64_t& end) {
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(pp), num_layers / pp);
  const std::int64_t remainder = num_layers % pp;
  for (std::int64_t i = 2; i < remainder + 2; ++i) sizes[static_cast<std::size_t>(pp - i)] += 1;
  first = 0;
  for (std::int64_t r = 0; r < pp_rank; ++r) first += sizes[static_cast<std::size_t>(r)];
  end = first + sizes[static_cast<std::size_t>(pp_rank)];
}

namespace {

[[noreturn]] void reject(const ModelSpec& model, const std::string& what) {
  throw InputError(fmt::format("{}: {}", model.source, what));
}

// Group-quantized integer weights (AWQ, GPTQ, compressed-tensors WNA16) keep one scale per `group_size`
// inputs, so a row-parallel rank must hold whole groups. vLLM's refusal differs by method:
// - AWQ: AWQ-Marlin's check_marlin_supports_layer fails, AWQMarlinConfig falls back to AWQLinearMethod,
//   whose create_weights raises "The input size is not aligned ..." (awq.py, awq_marlin.py);
// - GPTQ / compressed-tensors WNA16: MarlinLinearKernel.can_implement fails with verify_marlin_supports_shape's
//   reason (utils/marlin_utils.py) and CompressedTensorsWNA16.create_weights asserts
//   input_size_per_partition % group_size == 0 when the scales are partitioned.
// AWQ also packs 8 outputs per int32: a column rank must hold whole packs.
void check_group_alignment(const ModelSpec& model, const LinearModule& m, std::int64_t tp) {
  const QuantFormat& f = m.format;
  const bool grouped = f.kind == QuantKind::kAwq || f.kind == QuantKind::kGptq || f.kind == QuantKind::kIntPacked;
  if (!grouped || tp == 1) return;
  if (m.parallelism == Parallelism::kRow && f.group_size > 0 && f.group_size < m.input_size &&
      (m.input_size / tp) % f.group_size != 0) {
    const std::int64_t per_rank = m.input_size / tp;
    if (f.kind == QuantKind::kAwq) {
      reject(model, fmt::format("{}: {} inputs per rank at --tensor-parallel-size {} are not a multiple of the AWQ "
                                "group size {}; vLLM raises \"The input size is not aligned with the quantized weight "
                                "shape. This can be caused by too large tensor parallel size.\"",
                                m.name, per_rank, tp, f.group_size));
    }
    reject(model, fmt::format("{}: {} inputs per rank at --tensor-parallel-size {} are not a multiple of the "
                              "quantization group size {}; vLLM finds no kernel for the layer (Marlin: \"Weight "
                              "input_size_per_partition = {} is not divisible by group_size = {}\")",
                              m.name, per_rank, tp, f.group_size, per_rank, f.group_size));
  }
  if (f.kind == QuantKind::kAwq && m.parallelism == Parallelism::kColumn) {
    std::int64_t per_rank = 0;
    for (const auto out : m.output_sizes) per_rank += out / tp;
    if (per_rank % 8 != 0) {
      reject(model, fmt::format("{}: {} outputs per rank at --tensor-parallel-size {} are not a multiple of AWQ's 8 "
                                "packed 4-bit values; vLLM raises \"The output size is not aligned with the quantized "
                                "weight shape. This can be caused by too large tensor parallel size.\"",
                                m.name, per_rank, tp));
    }
  }
}

void check_linear(const ModelSpec& model, const LinearModule& m, std::int64_t tp) {
  check_group_alignment(model, m, tp);
  if (m.mamba_groups > 1 && m.mamba_groups % tp != 0) {
    reject(model, fmt::format("{}: {} Mamba2 groups and --tensor-parallel-size {}: vLLM's MambaMixer2 requires TP to "
                              "divide the groups unless there is one (\"If tensor parallel world size does not divide "
                              "num_groups, then num_groups must equal 1.\")",
                              m.name, m.mamba_groups, tp));
  }
  if (m.output_groups > 0 && m.output_groups % tp != 0) {
    reject(model, fmt::format("{}: its {} output groups are projected whole per rank (n_local_groups = o_groups // tp); "
                              "--tensor-parallel-size {} does not divide them, leaving a rank with a fraction of a "
                              "group, which vLLM's grouped projection cannot run",
                              m.name, m.output_groups, tp));
  }
  switch (m.parallelism) {
    case Parallelism::kColumn:
      for (const auto out : m.output_sizes) {
        if (out % tp != 0) {
          reject(model, fmt::format("{} has {} outputs, not divisible by --tensor-parallel-size {}", m.name, out, tp));
        }
        if (m.format.kind == QuantKind::kFp8Block && m.output_sizes.size() == 1 && (out / tp) % m.format.block_n != 0) {
          reject(model, fmt::format("{}: {} outputs per rank at --tensor-parallel-size {} are not a multiple of the "
                                    "FP8 block size {} (vLLM validate_fp8_block_shape)",
                                    m.name, out / tp, tp, m.format.block_n));
        }
      }
      break;
    case Parallelism::kRow:
      if (m.input_size % tp != 0) {
        reject(model, fmt::format("{} has {} inputs, not divisible by --tensor-parallel-size {}", m.name,
                                  m.input_size, tp));
      }
      if (m.format.kind == QuantKind::kFp8Block && (m.input_size / tp) % m.format.block_k != 0) {
        reject(model, fmt::format("{}: {} inputs per rank at --tensor-parallel-size {} are not a multiple of the "
                                  "FP8 block size {} (vLLM validate_fp8_block_shape)",
                                  m.name, m.input_size / tp, tp, m.format.block_k));
      }
      break;
    case Parallelism::kQkv:
      if (m.num_heads % tp != 0) {
        reject(model, fmt::format("num_attention_heads {} is not divisible by --tensor-parallel-size {}",
                                  m.num_heads, tp));
      }
      if (m.num_kv_heads % tp != 0 && tp % m.num_kv_heads != 0) {
        reject(model, fmt::format("num_key_value_heads {} and --tensor-parallel-size {}: one must divide the other "
                                  "(vLLM replicates KV heads only when tp is a multiple of them)",
                                  m.num_kv_heads, tp));
      }
      break;
    case Parallelism::kReplicated: break;
  }
}

// Decode context parallelism over standard (GQA / MQA / MHA) attention splits the KV heads' tokens
// among the ranks that would otherwise hold the same head: ModelConfig.verify_with_parallel_config
// (vllm/config/model.py, from v0.11.1, #24864) asserts, for a model that does not use MLA,
//   tp > total_num_kv_heads,  dcp <= tp // total_num_kv_heads,  (num_heads // total_num_kv_heads) % dcp == 0.
// MLA models are exempt (their latent KV is one head replicated on every rank); with VLLM_MLA_DISABLE
// the served model's layers are standard attention and the checks apply to them.
void check_gqa_decode_context_parallel(const ModelSpec& model, const ParallelLayout& layout) {
  for (const auto& layer : model.layers) {
    const AttentionSpec& a = layer.attention;
    if (layer.parallel_state || a.kind != AttentionKind::kFull || a.num_key_value_heads < 1) continue;
    const std::int64_t kv_heads = a.num_key_value_heads;
    if (layout.tp <= kv_heads) {
      reject(model, fmt::format("--decode-context-parallel-size {} with GQA/MQA attention needs --tensor-parallel-size "
                                "above the {} KV heads, got {} (vLLM: \"tensor parallel size {} must be greater than "
                                "total num kv heads {} when enable decode context parallel for GQA/MQA\")",
                                layout.dcp, kv_heads, layout.tp, layout.tp, kv_heads));
    }
    if (layout.dcp > layout.tp / kv_heads) {
      reject(model, fmt::format("--decode-context-parallel-size {}: at most --tensor-parallel-size {} // {} KV heads "
                                "= {} for GQA/MQA attention (each KV head is split over the ranks that replicate it)",
                                layout.dcp, layout.tp, kv_heads, layout.tp / kv_heads));
    }
    const std::int64_t queries_per_kv = a.num_attention_heads / kv_heads;
    if (queries_per_kv % layout.dcp != 0) {
      reject(model, fmt::format("--decode-context-parallel-size {} must divide the {} query heads per KV head "
                                "(vLLM asserts it for GQA)",
                                layout.dcp, queries_per_kv));
    }
    return;  // vLLM checks the model's one total_num_kv_heads: the first standard layer stands for it
  }
}

}  // namespace

ParallelLayout make_parallel_layout(const ModelSpec& model, const Deployment& d, std::int64_t pp_rank) {
  check_deployment_limits(d);
  const auto num_layers = static_cast<std::int64_t>(model.layers.size());
  if (d.pipeline_parallel_size > num_layers) {
    reject(model, fmt::format("--pipeline-parallel-size {} exceeds the {} decoder layers",
                              d.pipeline_parallel_size, num_layers));
  }
  ParallelLayout layout;
  layout.tp = d.tensor_parallel_size;
  layout.pp = d.pipeline_parallel_size;
  layout.pp_rank = pp_rank;
  layout.dcp = d.decode_context_parallel_size;
  if (d.pp_layer_partition.empty()) {
    pipeline_stage_layers(num_layers, layout.pp, pp_rank, layout.first_layer, layout.end_layer);
  } else {
    // VLLM_PP_LAYER_PARTITION: vLLM requires one entry per stage, summing to the layer count.
    const auto& part = d.pp_layer_partition;
    std::int64_t sum = 0;
    for (const auto n : part) {
      if (n < 1) reject(model, fmt::format("--pp-layer-partition: every stage needs at least one layer, got {}", n));
      sum += n;
    }
    if (static_cast<std::int64_t>(part.size()) != layout.pp || sum != num_layers) {
      reject(model, fmt::format("--pp-layer-partition (VLLM_PP_LAYER_PARTITION) has {} entries summing to {}; vLLM "
                                "requires --pipeline-parallel-size {} entries summing to the {} decoder layers",
                                part.size(), sum, layout.pp, num_layers));
    }
    layout.first_layer = 0;
    for (std::int64_t r = 0; r < pp_rank; ++r) layout.first_layer += part[static_cast<std::size_t>(r)];
    layout.end_layer = layout.first_layer + part[static_cast<std::size_t>(pp_rank)];
  }

  const std::int64_t moe_world = d.tensor_parallel_size * d.data_parallel_size;
  const bool use_ep = d.enable_expert_parallel && moe_world > 1;
  layout.moe_tp = use_ep ? 1 : moe_world;
  layout.moe_ep = use_ep ? moe_world : 1;
  if (d.num_redundant_experts > 0 && !use_ep) {
    reject(model, fmt::format("--num-redundant-experts {} needs --enable-expert-parallel over more than one rank "
                              "(EPLB places redundant experts across the expert-parallel group)",
                              d.num_redundant_experts));
  }
  layout.redundant_experts = d.num_redundant_experts;

  if (layout.dcp > 1) {
    if (layout.tp % layout.dcp != 0) {
      reject(model, fmt::format("--decode-context-parallel-size {} must divide --tensor-parallel-size {}",
                                layout.dcp, layout.tp));
    }
    // Sliding-window and chunked-local KV specs assert dcp == 1; recurrent states cannot be split.
    for (const auto& layer : model.layers) {
      const auto kind = layer.parallel_state ? AttentionKind::kMamba : layer.attention.kind;
      if (kind == AttentionKind::kSlidingWindow || kind == AttentionKind::kChunkedLocal || kind == AttentionKind::kMamba) {
        reject(model, fmt::format("--decode-context-parallel-size {}: layer {} has {} attention, which vLLM does not "
                                  "split by decode context parallelism (it asserts dcp == 1)",
                                  layout.dcp, layer.index,
                                  kind == AttentionKind::kMamba ? "recurrent (Mamba / linear)"
                                  : kind == AttentionKind::kSlidingWindow ? "sliding-window" : "chunked-local"));
      }
    }
    check_gqa_decode_context_parallel(model, layout);
  }
  for (const auto& layer : model.layers) {
    if (layer.attention.num_attention_heads % layout.tp != 0) {
      reject(model, fmt::format("num_attention_heads {} is not divisible by --tensor-parallel-size {}",
                                layer.attention.num_attention_heads, layout.tp));
    }
    for (const auto& m : layer.linears) check_linear(model, m, layout.tp);
    for (const auto& e : layer.experts) {
      if (e.intermediate_size % layout.moe_tp != 0) {
        reject(model, fmt::format("{}: moe_intermediate_size {} is not divisible by the expert tensor-parallel size "
                                  "{} (tp x dp without --enable-expert-parallel)",
                                  e.name, e.intermediate_size, layout.moe_tp));
      }
      const auto local_I = e.intermediate_size / layout.moe_tp;
      if (e.format.kind == QuantKind::kFp8Block && local_I % e.format.block_n != 0) {
        reject(model, fmt::format("{}: {} intermediate features per rank are not a multiple of the FP8 block size {} "
                                  "(vLLM rejects this; try --enable-expert-parallel)",
                                  e.name, local_I, e.format.block_n));
      }
      if (e.format.kind == QuantKind::kNvfp4 && (local_I % 16 != 0 || e.hidden_size % 16 != 0)) {
        reject(model, fmt::format("{}: NVFP4 needs multiples of 16; {} intermediate features per rank", e.name, local_I));
      }
    }
  }
  if (model.vision) {
    for (const auto& m : model.vision->linears) check_linear(model, m, layout.tp);
  }
  const std::int64_t padded_vocab = round_up(model.vocab_size, 64);
  if (padded_vocab % layout.tp != 0) {
    reject(model, fmt::format("vocab_size {} padded to {} is not divisible by --tensor-parallel-size {}",
                              model.vocab_size, padded_vocab, layout.tp));
  }
  return layout;
}

}  // namespace gpubudget

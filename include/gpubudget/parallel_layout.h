// ParallelLayout: how one GPU worker's share of the model is decided by TP/PP/DP/EP.
#pragma once

#include <cstdint>

#include "gpubudget/deployment.h"
#include "gpubudget/model_spec.h"

namespace gpubudget {

// How an MXFP4 MoE backend holds each rank's experts (Mxfp4MoEMethod.create_weights and
// process_weights_after_loading): sizes padded, and for the Triton backend the weights and scales
// swizzled into padded tiles, the checkpoint-shaped scales kept beside them and the biases in fp32.
struct Mxfp4Packing {
  std::int64_t intermediate_align = 1;  // each rank's expert intermediate size rounded up to this
  std::int64_t hidden_align = 1;        // the hidden size rounded up to this
  // Swizzled layouts (triton_kernels HopperMXValueLayout / HopperMXScaleLayout): rows (output features)
  // and K bytes of the values, rows and K groups of the scales, rounded up to these; 1 = not swizzled.
  std::int64_t value_row_align = 1;
  std::int64_t value_k_align = 1;
  std::int64_t scale_row_align = 1;
  std::int64_t scale_k_align = 1;
  bool keeps_checkpoint_scales = false;  // the uint8 scale parameters stay registered beside the swizzled copy
  std::int64_t bias_bytes = 2;           // bytes per bias element (bf16, or fp32 on Triton)
  bool operator==(const Mxfp4Packing&) const = default;
};

struct ParallelLayout {
  std::int64_t tp = 1;              // attention / dense tensor-parallel group size
  std::int64_t pp = 1;              // pipeline stages
  std::int64_t pp_rank = 0;         // this worker's stage
  std::int64_t first_layer = 0;     // [first_layer, end_layer) decoder layers on this stage
  std::int64_t end_layer = 0;
  std::int64_t moe_tp = 1;          // experts' intermediate split (tp*dp without EP, 1 with EP)
  std::int64_t moe_ep = 1;          // experts spread over this many ranks (1 without EP)
  std::int64_t redundant_experts = 0;  // EPLB extra physical experts (with EP only)
  std::int64_t dcp = 1;             // decode context parallel size
  // The MXFP4 MoE backend's packing (no padding by default). Set from the vLLM profile for the GPU.
  Mxfp4Packing mxfp4;

  [[nodiscard]] bool is_first_stage() const { return pp_rank == 0; }
  bool operator==(const ParallelLayout&) const = default;
  [[nodiscard]] bool is_last_stage() const { return pp_rank == pp - 1; }
};

// vLLM's get_pp_indices: num_layers / pp per stage, the remainder one each to stages -2, -3, ...
// (never the last). Returns [first, end) of `pp_rank`. Requires 1 <= pp <= num_layers.
void pipeline_stage_layers(std::int64_t num_layers, std::int64_t pp, std::int64_t pp_rank,
                           std::int64_t& first, std::int64_t& end);

// Builds the layout of stage `pp_rank` and checks that vLLM would accept the combination
// (heads divisible by TP, KV heads divisible by or dividing TP, vocab, MoE intermediate, ...).
// Throws InputError naming the flag, the config field and both values otherwise.
ParallelLayout make_parallel_layout(const ModelSpec& model, const Deployment& deployment,
                                    std::int64_t pp_rank);

}  // namespace gpubudget

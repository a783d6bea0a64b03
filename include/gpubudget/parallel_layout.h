// ParallelLayout: how one GPU worker's share of the model is decided by TP/PP/DP/EP.
#pragma once

#include <cstdint>

#include "gpubudget/deployment.h"
#include "gpubudget/model_spec.h"

namespace gpubudget {

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
  // MXFP4 MoE backends pad each rank's expert intermediate and hidden sizes up to these multiples
  // (Mxfp4MoEMethod.create_weights); 1 = no padding. Set from the vLLM profile for the GPU.
  std::int64_t mxfp4_intermediate_align = 1;
  std::int64_t mxfp4_hidden_align = 1;

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

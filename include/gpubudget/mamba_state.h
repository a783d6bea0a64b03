// The recurrent state of hybrid models' Mamba / linear-attention layers: its dtypes and bytes per
// request, and the attention block size vLLM raises so that one attention page holds one state.
//
// Mirrors model_executor/layers/mamba/mamba_utils.py (MambaStateDtypeCalculator),
// model_executor/models/config.py (per-model SSM dtype defaults, HybridAttentionMambaModelConfig) and
// platforms/interface.py (Platform._align_hybrid_block_size); docs/methodology.md §Hybrid models.
#pragma once

#include <cstdint>
#include <string>

#include "gpubudget/bytes.h"
#include "gpubudget/deployment.h"
#include "gpubudget/dtype.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget {

// The dtypes of one mixer's convolution and temporal (SSM) states.
struct MambaStateDtypes {
  Dtype conv = Dtype::kBFloat16;
  Dtype ssm = Dtype::kBFloat16;
  std::string ssm_reason;  // where the SSM dtype came from, for explanations
};

// --mamba-cache-dtype / --mamba-ssm-cache-dtype resolved for `state` of `model` (whose dtype is the
// one vLLM builds, after --dtype). `auto` is the model dtype; for the architectures of
// `rules.ssm_dtype_defaults` an `auto` SSM dtype is the config's, else the rule's fallback.
// Throws InputError when the version does not accept a given value.
MambaStateDtypes resolve_mamba_state_dtypes(const ModelSpec& model, const MambaState& state, const Deployment& deployment,
                                            const HybridRules& rules);

// MambaSpec.page_size_bytes before padding: this rank's convolution and SSM states,
//   conv_channels/tp · conv_width · conv dtype + ssm_heads/tp · ssm_head_elements · ssm dtype.
Bytes mamba_state_bytes(const MambaState& state, std::int64_t tp, const MambaStateDtypes& dtypes);

// What the block alignment needs to know besides the two sizes.
struct HybridAlignmentInputs {
  std::int64_t block_size = 16;        // --block-size, or the backend's preferred size
  bool user_block_size = false;        // --block-size was given
  std::int64_t min_kernel_block = 16;  // the backend's smallest kernel block ("kernel" alignment)
  bool mla = false;                    // the attention layers are MLA
  bool blackwell_head_256 = false;     // SM100 GPU, head size 256, FlashInfer (the 0.11.1-0.17 unit of 32)
  MambaCacheMode mode = MambaCacheMode::kNone;
  std::int64_t user_mamba_block_size = 0;  // --mamba-block-size (0: not given)
  std::int64_t mamba_chunk_size = 0;       // the model's, base of `all` mode blocks
};

struct HybridAlignment {
  std::int64_t unit = 16;              // the step the block grows in
  std::int64_t block_size = 16;        // attention block size after alignment
  std::int64_t mamba_block_size = 0;   // tokens per cached state (`all` and `align`); 0 in `none`
};

// The attention block size that makes one attention page (block x `attention_token_bytes`) hold one
// state of `state_bytes`:
//   unit K  = "fixed": alignment_unit (alignment_unit_mla for MLA, alignment_unit_blackwell_head_256
//             where it applies);
//             "kernel": max(the backend's smallest kernel block, block size)
//   none / align:  A = K · cdiv(M, K · pt)
//   all:           c = lcm(--mamba-block-size or chunk size, K);  A = c · cdiv(cdiv(M, pt), c)
//   block = A when block < A (or, "fixed", when --block-size was not given); kept otherwise.
HybridAlignment align_hybrid_block_size(Bytes state_bytes, Bytes attention_token_bytes, const HybridAlignmentInputs& in,
                                        const HybridRules& rules);

}  // namespace gpubudget

// LoRA adapter slots (--enable-lora): the GPU buffers vLLM preallocates for max_loras adapters of
// max_lora_rank on every adapted module (vllm/lora/layers/*.py create_lora_weights), and the Punica
// wrapper's index buffers. All are allocated inside vLLM's weight measurement ("Model loading took")
// and never freed, so they come out of the KV cache byte for byte (docs/methodology.md §LoRA).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/deployment.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/parallel_layout.h"
#include "gpubudget/vllm_profile.h"  // LoraRules

namespace gpubudget {

struct LoraBuffers {
  Bytes linear;      // A and B stacks of the adapted linear layers and FusedMoE blocks on the worker
  Bytes embeddings;  // embed_tokens and lm_head adapter slots (whole on every rank)
  Bytes punica;      // the Punica wrapper's token and request index buffers
  [[nodiscard]] Bytes total() const { return linear + embeddings + punica; }
};

// The buffers on the worker of `layout` (its pipeline stage's layers) for `lora`, with the scheduler
// budget T = max_num_batched_tokens and S = max_num_seqs. Throws InputError naming the flag when vLLM
// refuses the settings (a rank it does not accept, a rank the TP size does not divide with
// --fully-sharded-loras, a vocabulary above the logits processor's limit).
LoraBuffers lora_buffers(const ModelSpec& model, const ParallelLayout& layout, const LoraAdapters& lora,
                         const LoraRules& rules, std::int64_t max_num_batched_tokens, std::int64_t max_num_seqs);

}  // namespace gpubudget

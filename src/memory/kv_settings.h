// The engine's KV-cache decisions for a deployment under one vLLM profile, made once before the
// per-stage budgets (fit.cpp): the KV dtype, the attention backend and block size, the hybrid model's
// prefix caching, mamba_cache_mode, state dtypes and block alignment, the hybrid manager switch and
// the skipped layers (docs/methodology.md §KV cache, §Hybrid models).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpubudget/deployment.h"
#include "gpubudget/gpu_spec.h"
#include "gpubudget/kv_cache.h"
#include "gpubudget/mamba_state.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/notice.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget::detail {

struct KvDecisions {
  KvCacheSettings settings;             // all but max_num_batched_tokens
  const AttentionBackend* backend = nullptr;  // nullptr when the profile lists none for the model's kind
  bool hybrid = false;                  // the model has Mamba / linear-attention layers
  bool prefix_caching = true;           // resolved --enable-prefix-caching (what hybrid memory follows)
  MambaCacheMode mamba_cache_mode = MambaCacheMode::kNone;
  MambaStateDtypes mamba_dtypes;
  std::vector<Bytes> mamba_state_bytes;  // per decoder layer, unpadded (0 for other layers)
  Bytes mamba_state;                     // the largest of them
  Bytes attention_token_bytes;           // pt of the hybrid alignment
  HybridAlignment alignment;
  std::string start_blocker;             // why vLLM would not start ("" when it would)
  std::vector<Notice> warnings;
  std::vector<Notice> notes;  // how settings were resolved, for --explain
};

// Throws InputError for values this vLLM refuses at argument parsing (an unknown --kv-cache-dtype or
// --block-size for the version, --mamba-block-size without prefix caching, ...). Refusals that happen
// while the engine starts are returned as `start_blocker`.
KvDecisions decide_kv_cache(const ModelSpec& model, const GpuSpec& gpu, const Deployment& deployment,
                            const VllmProfile& profile, std::int64_t max_num_batched_tokens);

}  // namespace gpubudget::detail

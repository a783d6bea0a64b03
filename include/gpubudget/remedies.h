// What to change when the judged length does not fit: each candidate change re-evaluated with fit().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpubudget/fit.h"

namespace gpubudget {

struct Remedy {
  std::string change;               // "FP8 KV cache", "decode context parallel 8" ...
  std::vector<std::string> flags;   // the vLLM flags that make the change
  std::int64_t max_model_len = 0;   // largest length that fits with the change
  bool reaches_target = false;      // max_model_len >= the judged length
  std::string caveat;               // why it may not be usable ("" when none)
  bool blocked = false;             // vLLM would not start with it (e.g. no attention backend for the KV dtype)
};

// Candidates, re-evaluated one at a time on top of `deployment`: an FP8 KV cache (with the
// attention-backend caveat when no backend of that vLLM accepts it on the GPU), a higher
// --gpu-memory-utilization (0.95), decode context parallelism (each size dividing TP), a smaller
// --max-num-batched-tokens, --enforce-eager (when CUDA graphs are charged), twice the GPUs (TP or
// PP doubled) and the length that fits as is. Ordered best first: reaching the target without a
// caveat, then with a soft one, then by the largest length; changes vLLM would not start with come
// last, before the length that fits as is. Candidates vLLM would reject outright are left out.
// `base` is fit(model, stage_gpus, deployment, profile). `memo`, when given, must be a FitMemo of
// `model` (e.g. the one `base` was computed with): candidates reuse and add to its layouts and weights.
// Does not throw; empty when the judged length already fits.
std::vector<Remedy> find_remedies(const ModelSpec& model, const std::vector<GpuSpec>& stage_gpus,
                                  const Deployment& deployment, const VllmProfile& profile, const FitResult& base,
                                  FitMemo* memo = nullptr);

}  // namespace gpubudget

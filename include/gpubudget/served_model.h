// The model as a deployment makes vLLM build it: --dtype, online --quantization, the vision tower
// left out (--limit-mm-per-prompt 0 / --language-model-only) or replicated (--mm-encoder-tp-mode data),
// and speculative decoding's drafter attached (docs/methodology.md §Launch options).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpubudget/deployment.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/vllm_profile.h"  // SpeculativeRules

namespace gpubudget {

// InputError when `model` is not servable on its own: an EAGLE draft head (ModelSpec::eagle_head), which
// vLLM builds only as --speculative-config's draft.
void check_servable_alone(const ModelSpec& model);

// The model as vLLM builds it with --dtype (`auto` keeps the checkpoint's). Does not throw.
ModelSpec model_for_dtype(const ModelSpec& checkpoint, ModelDtypeChoice dtype);

// True when model_as_served would return something other than the checkpoint itself.
bool deployment_rebuilds_model(const Deployment& deployment);

// `checkpoint` as vLLM builds it for `deployment`. Throws InputError naming the flag when vLLM would
// refuse the combination (an online method on a checkpoint quantized otherwise, MTP on a checkpoint
// without next-n layers, a draft of another vocabulary ...).
// `rules` are the vLLM version's (VllmProfile::speculative).
ModelSpec model_as_served(const ModelSpec& checkpoint, const Deployment& deployment,
                          const SpeculativeRules& rules = {});

}  // namespace gpubudget

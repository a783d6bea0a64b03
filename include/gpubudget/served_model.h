// The model as a deployment makes vLLM build it: --dtype, online --quantization, the vision tower
// left out (--limit-mm-per-prompt 0 / --language-model-only) or replicated (--mm-encoder-tp-mode data),
// and speculative decoding's drafter attached (docs/methodology.md §Launch options).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpubudget/deployment.h"
#include "gpubudget/model_spec.h"

namespace gpubudget {

// What a vLLM version does with speculative decoding's drafter (configs/vllm/*.json `speculative`).
struct SpeculativeRules {
  // MTP layers' shared_head.head replaced by the target's lm_head (0.17+, #34385); before, each keeps its
  // own vocabulary-split copy.
  bool mtp_shares_head = true;
  // The profile run with speculative decoding (GPUModelRunner._dummy_run / _dummy_sampler_run):
  // methods whose drafter runs its dummy pass on the T profiled tokens (use_eagle(); draft_model from 0.15);
  // the others (medusa, ngram, suffix) load weights but run nothing there.
  std::vector<std::string> profiled_drafters = {"eagle", "eagle3", "mtp"};
  // The rejection sampler's dummy run on R = min(T, S) requests of one draft token each holds, at its
  // peak, R x vocab x (logit_copies x logit bytes + fp32_bytes) bytes: the dummy logits and bonus
  // logits in the logits dtype, and fp32 copies, probabilities and their inverse.
  std::int64_t rejection_logit_copies = 3;
  std::int64_t rejection_fp32_bytes = 24;
};

}  // namespace gpubudget

namespace gpubudget {

// InputError when `model` is not servable on its own: an EAGLE draft head (ModelSpec::eagle_head), which
// vLLM builds only as --speculative-config's draft.
void check_servable_alone(const ModelSpec& model);

// True when model_as_served would return something other than the checkpoint itself.
bool deployment_rebuilds_model(const Deployment& deployment);

// `checkpoint` as vLLM builds it for `deployment`. Throws InputError naming the flag when vLLM would
// refuse the combination (an online method on a checkpoint quantized otherwise, MTP on a checkpoint
// without next-n layers, a draft of another vocabulary ...).
// `rules` are the vLLM version's (VllmProfile::speculative).
ModelSpec model_as_served(const ModelSpec& checkpoint, const Deployment& deployment,
                          const SpeculativeRules& rules = {});

}  // namespace gpubudget

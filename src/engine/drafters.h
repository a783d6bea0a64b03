// Speculative decoding's drafters as vLLM builds them beside the target (served_model.cpp;
// docs/methodology.md §3.3 Launch options): MTP layers from the target's own checkpoint, an EAGLE head,
// Medusa heads or a separate draft model.
#pragma once

#include "gpubudget/deployment.h"
#include "gpubudget/model_spec.h"

namespace gpubudget::detail {

// method mtp: the target's next-n layers (moved out of `target`, which keeps none). `shares_head`: the
// vLLM version replaces each layer's shared_head.head with the target's lm_head (0.17+).
Drafter mtp_drafter(ModelSpec& target, std::int64_t pipeline_stages, bool shares_head);

// method eagle / eagle3: `head` is the draft head's config as read (a Llama decoder with
// ModelSpec::eagle_head), `target` the model as served.
Drafter eagle_drafter(const ModelSpec& target, const ModelSpec& head, const Deployment& deployment);

// method medusa: `heads` is a Medusa draft's config (ModelSpec::medusa); vLLM builds
// num_speculative_tokens heads of it beside `target`.
Drafter medusa_drafter(const ModelSpec& target, const ModelSpec& heads, const Deployment& deployment);

// method draft_model: `draft` is a whole model of the target's vocabulary, run at the target's TP.
Drafter separate_draft_model(const ModelSpec& target, const ModelSpec& draft, const Deployment& deployment);

}  // namespace gpubudget::detail

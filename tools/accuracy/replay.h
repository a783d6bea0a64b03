// Replays real vLLM startups (tests/data/observations/vllm-runs.jsonl) through gpubudget.
// Used by the accuracy report (tools/accuracy) and by the tests that hold gpubudget to the logs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpubudget/load.h"

namespace gpubudget::accuracy {

struct ReplayRow {
  std::string id;
  std::string model;         // as logged
  std::string config;        // bundled config used ("" if none)
  bool kv_only = false;      // weights not comparable (different weight format)
  std::string gpu;           // preset used
  std::string vllm_version;  // as logged
  std::string profile;       // profile used
  std::int64_t tp = 1;
  std::string status;        // "ok" or why the row was not replayed
  std::string note;          // a caveat on a replayed row
  // Deterministic: tokens from the logged available KV memory.
  std::optional<std::int64_t> logged_tokens, predicted_tokens;
  // Estimated: tokens from the whole predicted budget (rows that log tokens but not the memory).
  std::optional<std::int64_t> predicted_tokens_unaided;
  // Weights against "Model loading took".
  std::optional<double> logged_weights_gib, predicted_weights_gib;
  // Estimated: the whole budget without the log's help.
  std::optional<double> logged_available_gib, predicted_available_gib;
  std::optional<double> logged_activation_gib, predicted_activation_gib;
  std::optional<double> logged_non_torch_gib, predicted_non_torch_gib;
  std::optional<double> logged_cudagraph_gib;
  // The overhead model's inputs for this row (what `calibrate` fits coefficients on): sampler and
  // forward activation bytes per unit coefficient, decoder layers on the binding worker, and the
  // non-torch class ("single", "nvlink", "pcie").
  double sampler_basis_bytes = 0, forward_basis_bytes = 0;
  // The multimodal encoder pass and the outputs it leaves cached (physics, not fitted).
  double encoder_pass_bytes = 0, encoder_cached_bytes = 0;
  std::int64_t worker_layers = 0;
  std::string non_torch_class;
  bool enforce_eager = false;
  std::string vllm_version_used;  // the version the row ran (logged or inferred), "" if unknown
  // vLLM's "estimated maximum model length" from its not-enough-KV error, without the log's help.
  std::optional<std::int64_t> logged_estimated_len, predicted_estimated_len;
};

// `observations`: the JSONL file; `aliases`: model_aliases.json beside it ("" = none).
std::vector<ReplayRow> replay_observations(const std::string& observations, const std::string& aliases,
                                           const ConfigDir& configs);

// The report as Markdown.
std::string accuracy_markdown(const std::vector<ReplayRow>& rows);

}  // namespace gpubudget::accuracy

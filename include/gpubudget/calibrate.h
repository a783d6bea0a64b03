// Calibration: real vLLM startups replayed through gpubudget, and a vLLM profile's overhead
// coefficients fitted to them (`gpubudget calibrate`, the accuracy report, the tests that hold
// gpubudget to the logs). Built as gpubudget::calibrate (GPUBUDGET_BUILD_CALIBRATION; needs Eigen).
//
// Observations are JSONL rows of real startups (tests/data/observations/README.md: one per log, every
// figure copied from it, with its source). Each row is replayed with the bundled config of its model
// and the profile of its vLLM version.
//
// The fit (calibrate_profile): the profile names the vLLM versions whose logs feed it ("calibration": {"min_version",
// "max_version"}, half-open; optional "min_relative_uncertainty", e.g. when the coefficients are
// carried to a newer vLLM than the logs). From the replayed rows of those versions it fits, by least squares:
//  - activation peak = max(sampler_bytes_per_logit x sampler basis, forward_activation_factor x
//    forward basis): each row is assigned to the term that dominates, then each coefficient is a
//    one-parameter least-squares fit through the origin; repeated until the assignment is stable.
//    The multimodal encoder terms are physics, not fitted: cached encoder outputs are taken off the
//    logged peak first, and rows whose peak is the encoder pass are left out;
//  - non-torch memory: the mean per class (one GPU; several on NVLink; several on PCIe);
//  - CUDA-graph memory = base + per_layer x layers on the worker (two-parameter least squares);
//  - relative_uncertainty: the swing of the KV budget, as a fraction of the estimated overheads, that
//    holds 90% of the rows out of sample. Each model's rows are predicted with coefficients fitted
//    without that model (leave one model out), and each row gives |logged - predicted| / predicted
//    overheads: of the available KV memory where it is logged, else of activation + non-torch. The
//    split-conformal quantile of those n misses (the ceil((n + 1) x 0.9)-th smallest), rounded up to
//    0.05, at least the profile's floor (default 0.1). Rows of the
//    profile's versions that log the available KV memory but no overhead term count here too, and, for
//    the profile whose versions have no upper end, rows of an unknown vLLM version (fit's default is
//    the newest profile).
// CUDA graphs with a negative fitted slope fall back to the mean (graph memory does not shrink with
// layers).
// A term without rows keeps the profile's coefficient. Output: the profile JSON with `overheads`
// replaced and a `fit_notes` summary, formatted deterministically (the shipped profiles are this
// output, byte for byte).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpubudget/load.h"

namespace gpubudget {

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
  std::optional<double> logged_cudagraph_gib, predicted_cudagraph_gib;
  bool cudagraph_charged = false;  // the profile takes the graph estimate off the budget
  // The predicted available KV memory moved by the uncertainty (FitResult::kv_budget_swing).
  std::optional<double> predicted_available_low_gib, predicted_available_high_gib;
  OverheadModel coefficients;  // the profile's overhead coefficients the row was replayed with
  // The overhead model's inputs for this row (what `calibrate` fits coefficients on): sampler and
  // forward activation bytes per unit coefficient, decoder layers on the binding worker, and the
  // non-torch class ("single", "nvlink", "pcie").
  double sampler_basis_bytes = 0, forward_basis_bytes = 0;
  // The multimodal encoder pass and the outputs it leaves cached (physics, not fitted).
  double encoder_pass_bytes = 0, encoder_cached_bytes = 0;
  std::int64_t worker_layers = 0;
  // worker_layers x the CUDA graphs beyond each mode's first / kReferenceExtraCudaGraphs: what the
  // per-layer graph coefficient multiplies.
  double graph_layers = 0;
  std::string non_torch_class;
  bool enforce_eager = false;
  std::string vllm_version_used;  // the version the row ran (logged or inferred), "" if unknown
  // vLLM's "estimated maximum model length" from its not-enough-KV error, without the log's help.
  std::optional<std::int64_t> logged_estimated_len, predicted_estimated_len;
};

// Replays every row of `observations` (a JSONL file); `aliases`: model_aliases.json beside it ("" =
// none), naming the bundled config of each logged model id. Rows that cannot be replayed keep a
// `status` saying why. Throws InputError for an unreadable file or a malformed row, naming the row.
std::vector<ReplayRow> replay_observations(const std::string& observations, const std::string& aliases,
                                           const ConfigDir& configs);
// The same on the file's text; `source` names it in messages ("obs.jsonl" → "obs.jsonl:12: ...").
std::vector<ReplayRow> replay_observation_text(const std::string& text, const std::string& source,
                                               const std::string& aliases, const ConfigDir& configs);

struct TermFit {
  std::string term;
  std::size_t rows = 0;
  double rmse_gib = 0;  // root-mean-square residual of the fitted term
};

// The model a row ran, for grouping rows by model: its bundled config, else the logged id.
std::string replayed_model(const ReplayRow& row);

struct Calibration {
  std::string profile_json;    // the calibrated profile, ready to write
  // Its "overheads" alone ({"overheads": {...}}), as the shipped profiles keep them apart from the
  // hand-written rules (configs/vllm/coefficients/); "" when the profile inherits its base's unchanged.
  std::string coefficients_json;
  std::vector<TermFit> terms;  // per-term fit quality
  std::vector<std::string> row_ids;
};

// `profile_json`: the profile file's text. Throws InputError when it is not a profile with a
// `calibration` block (its own or, through "extends", its base's). The calibrated profile keeps the
// file's own keys and its "extends", with "overheads" set when they differ from the inherited ones;
// `base_profiles` is where a base not beside the file is looked for (the bundled configs/vllm).
Calibration calibrate_profile(const std::vector<ReplayRow>& rows, const std::string& profile_json,
                              const std::string& profile_path, const std::string& base_profiles = "");

}  // namespace gpubudget

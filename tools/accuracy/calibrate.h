// Fitting a vLLM profile's overhead coefficients to real startups (`gpubudget calibrate`).
//
// The profile names the vLLM versions whose logs feed it ("calibration": {"min_version",
// "max_version"}, half-open; optional "min_relative_uncertainty", e.g. when the coefficients are
// carried to a newer vLLM than the logs). From the replayed rows of those versions it fits, by least squares:
//  - activation peak = max(sampler_bytes_per_logit x sampler basis, forward_activation_factor x
//    forward basis): each row is assigned to the term that dominates, then each coefficient is a
//    one-parameter least-squares fit through the origin; repeated until the assignment is stable.
//    The multimodal encoder terms are physics, not fitted: cached encoder outputs are taken off the
//    logged peak first, and rows whose peak is the encoder pass are left out;
//  - non-torch memory: the mean per class (one GPU; several on NVLink; several on PCIe);
//  - CUDA-graph memory = base + per_layer x layers on the worker (two-parameter least squares);
//  - relative_uncertainty: the 90th percentile of |logged - fitted| / fitted for activation +
//    non-torch, rounded up to 0.05, at least the profile's floor (default 0.1).
// CUDA graphs with a negative fitted slope fall back to the mean (graph memory does not shrink with
// layers).
// A term without rows keeps the profile's coefficient. Output: the profile JSON with `overheads`
// replaced and a `fit_notes` summary, formatted deterministically (the shipped profiles are this
// output, byte for byte).
#pragma once

#include <string>
#include <vector>

#include "replay.h"

namespace gpubudget::accuracy {

struct TermFit {
  std::string term;
  std::size_t rows = 0;
  double rmse_gib = 0;  // root-mean-square residual of the fitted term
};

struct Calibration {
  std::string profile_json;    // the calibrated profile, ready to write
  std::vector<TermFit> terms;  // per-term fit quality
  std::vector<std::string> row_ids;
};

// `profile_json`: the profile file's text. Throws InputError when it is not a profile with a
// `calibration` block.
Calibration calibrate_profile(const std::vector<ReplayRow>& rows, const std::string& profile_json,
                              const std::string& profile_path);

}  // namespace gpubudget::accuracy

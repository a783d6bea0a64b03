// `gpubudget weights`: the per-GPU weight breakdown by component, layer or tensor, and, when the model
// folder holds safetensors files, the figure derived from their headers next to the config's.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "hub_flags.h"
#include "gpubudget/deployment.h"
#include "gpubudget/load.h"
#include "cli_errors.h"

namespace gpubudget::cli {

struct WeightsOptions {
  std::string model;
  bool strict = false;  // a config key no parser models is exit 3, not a warning
  HubFlags hub;  // where MODEL is looked for beyond paths and bundled ids
  std::string gpu;           // preset: sets the MXFP4 padding of its backend; optional
  std::string vllm_version;  // "" = newest modelled
  std::string by = "component";
  std::string dtype = "auto";
  Deployment deployment;
  bool json = false;
  bool no_headers = false;   // do not read safetensors headers even when present
  std::size_t width = 80;    // columns of the text report (0: no wrapping)
};

// Returns 0. Throws InputError / UsageError.
int run_weights(const WeightsOptions& options, const ConfigDir& configs, std::ostream& out, std::ostream& err);

}  // namespace gpubudget::cli

// `gpubudget fit`: options as given on the command line, and the command itself.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "gpubudget/deployment.h"
#include "gpubudget/load.h"

namespace gpubudget::cli {

struct FitOptions {
  std::string model;
  std::string gpu;            // --gpu preset name
  std::string gpu_memory;     // --gpu-memory, overrides the preset's total
  std::string vllm_version;   // "" = newest modelled
  std::string max_model_len = "auto";
  std::string kv_cache_memory_bytes;
  std::string max_num_batched_tokens;
  Deployment deployment;
  bool json = false;
  bool explain = false;
};

// Returns the exit status (0 fits, 1 does not fit). Throws InputError / UsageError.
int run_fit(const FitOptions& options, const ConfigDir& configs, std::ostream& out, std::ostream& err);

}  // namespace gpubudget::cli

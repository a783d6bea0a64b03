// `gpubudget sweep MODEL`: comma lists for --gpu, -tp, -pp, -dcp, --kv-cache-dtype,
// --gpu-memory-utilization and --max-num-seqs; one row per combination as a table, CSV, JSON or an
// SVG chart.
#pragma once

#include <ostream>
#include <string>

#include "hub_flags.h"
#include "launch_flags.h"
#include "gpubudget/deployment.h"
#include "gpubudget/load.h"
#include "cli_errors.h"

namespace gpubudget::cli {

struct SweepOptions {
  std::string model;
  HubFlags hub;  // where MODEL is looked for beyond paths and bundled ids
  std::string gpus;
  std::string layouts;  // --layout "h200:4,h100:8": (GPU, TP) pairs instead of gpus x tp
  std::string tp = "1", pp = "1", dcp = "1";
  std::string kv_cache_dtypes = "auto";
  std::string utilizations;  // "" = the version's default
  std::string max_num_seqs;  // "" = vLLM's default
  std::string max_model_len;  // the concurrency column's request length; "" = the model's maximum
  std::string target_len_deprecated;  // the same, by its old flag --target-len
  std::string format = "table";
  std::string vllm_version;
  std::string max_num_batched_tokens;
  std::string dtype = "auto";
  LaunchOptions launch;        // speculative decoding, LoRA, ... (not swept)
  Deployment deployment;     // the settings that are not swept
};

// Returns 0. Throws InputError / UsageError.
int run_sweep_command(const SweepOptions& options, const ConfigDir& configs, std::ostream& out, std::ostream& err);

}  // namespace gpubudget::cli

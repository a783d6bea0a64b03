// `gpubudget plan MODEL --max-model-len L --concurrency C [--gpu a,b,...]`: per GPU preset, the
// smallest TP x PP deployment that holds C concurrent requests of L tokens, cheapest first.
#pragma once

#include <ostream>
#include <string>

#include "hub_flags.h"
#include "gpubudget/deployment.h"
#include "gpubudget/load.h"
#include "cli_errors.h"

namespace gpubudget::cli {

struct PlanOptions {
  std::string model;
  HubFlags hub;  // where MODEL is looked for beyond paths and bundled ids
  std::string gpus;  // "" = every preset
  std::string max_model_len;  // "" or auto: the model's maximum
  std::int64_t concurrency = 1;
  std::string vllm_version;
  std::int64_t max_pipeline = 8;
  std::int64_t gpus_per_node = 8;  // TP within a node, PP stages of whole nodes (plan.h)
  std::string dtype = "auto";
  std::string kv_cache_dtype = "auto";
  Deployment deployment;  // utilization ...
  std::size_t width = 80;  // columns of the text (0: no wrapping); --width, or the terminal's
  bool json = false;
};

// Returns 0 when at least one GPU has an answer, 1 otherwise. Throws InputError / UsageError.
int run_plan(const PlanOptions& options, const ConfigDir& configs, std::ostream& out, std::ostream& err);

}  // namespace gpubudget::cli

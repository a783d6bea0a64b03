// `gpubudget diagnose LOG [--model M] [--gpu G] [--vllm-version V] [--json] [--emit-observation F]`:
// what went wrong in a vLLM startup log, and what to launch instead.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "hub_flags.h"
#include "gpubudget/load.h"

namespace gpubudget::cli {

struct DiagnoseOptions {
  std::string log;  // a file, or "-" for standard input
  std::string model;
  HubFlags hub;  // where MODEL is looked for beyond paths and bundled ids
  std::string gpu;
  std::string vllm_version;
  std::string kv_cache_dtype;
  std::string emit_observation;  // "" = none, "-" = stdout
  bool json = false;
  std::size_t width = 80;  // columns of the text report (0: no wrapping)
};

// Returns 0 (a diagnosis was made, whatever the log shows). Throws InputError for an unreadable
// log, an unknown model or GPU.
int run_diagnose(const DiagnoseOptions& options, const ConfigDir& configs, std::ostream& out, std::ostream& err);

}  // namespace gpubudget::cli

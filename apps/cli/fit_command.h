// `gpubudget fit`: options as given on the command line, and the command itself.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "hub_flags.h"
#include "launch_flags.h"
#include "gpubudget/vllm_args.h"
#include "gpubudget/deployment.h"
#include "gpubudget/fit.h"
#include "gpubudget/gpu_detect.h"
#include "gpubudget/load.h"
#include "cli_errors.h"

namespace gpubudget::cli {

struct FitOptions {
  std::string model;
  HubFlags hub;  // where MODEL is looked for beyond paths and bundled ids
  std::string gpu;            // --gpu preset name, or one per pipeline stage: "rtx-5070-ti,rtx-5090"
  std::string gpu_memory;     // --gpu-memory, overrides the preset's total
  std::string compute_capability;  // --compute-capability "major.minor" of a --gpu-memory GPU ("" = 9.0 assumed)
  std::string vllm_version;   // "" = newest modelled
  std::string profile_file;   // --profile: a profile file instead of --vllm-version
  std::vector<Notice> pasted_command_warnings;  // of `fit -- vllm serve …` (printed when it was read)
  VllmArguments vllm;  // the vLLM launch arguments, as given (resolved by the library: vllm_args.h)
  bool json = false;
  bool explain = false;
  bool vllm_args = false;  // print the `vllm serve` line to launch with, instead of the report
  double safety_margin_percent = 5.0;  // --safety-margin: the --vllm-args length below the edge (launch_command.h)
  bool strict = false;     // a config key no parser models is exit 3, not a warning
  std::size_t width = 80;  // columns of the text report (0: no wrapping); --width, or the terminal's
};

// The deployment, GPUs and vLLM profile the options describe; notes go to `held`'s stream, warnings to `held`.
struct ResolvedFit {
  ModelSpec model;
  std::vector<GpuSpec> gpus;  // one, or one per pipeline stage
  Deployment deployment;
  VllmProfile profile;
  std::vector<DetectedGpu> detected;  // --gpu auto: what nvidia-smi reported
};
class CapturedWarnings;
ResolvedFit resolve_fit_options(const FitOptions& options, const ConfigDir& configs, CapturedWarnings& held);

// Returns the exit status (0 fits, 1 does not fit; with --vllm-args 0 when it printed a launch line,
// 1 when no length fits). Throws InputError / UsageError.
int run_fit(const FitOptions& options, const ConfigDir& configs, std::ostream& out, std::ostream& err);

}  // namespace gpubudget::cli

// vLLM's launch line as the library reads it: the engine arguments (and the VLLM_* environment
// variables that change GPU memory) as a launch script, a scheduler or a pasted `vllm serve …` line
// gives them, turned into a Deployment.
//
// One table of the arguments (vllm_arguments()) drives every front end: the C ABI's and Python's
// "vllm_args", a pasted line, and the parity test that holds the CLI's own flags to the same
// Deployment (docs/api.md §vllm_args, docs/development.md §Adding an engine argument).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpubudget/deployment.h"
#include "gpubudget/engine_args.h"
#include "gpubudget/launch_options.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/vllm_command.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget {

// The launch arguments as given, in vLLM's spellings: strings where vLLM parses text ("auto", "128k",
// JSON), the Deployment's own fields where the value is a plain count or switch. Defaults are vLLM's
// (a flag not given).
struct VllmArguments {
  // Set directly: the parallel layout, --gpu-memory-utilization, --max-num-seqs, --block-size,
  // --enforce-eager, --skip-mm-profiling, --mamba-block-size, --num-gpu-blocks-override,
  // --kv-cache-dtype-skip-layers.
  Deployment deployment;
  std::string dtype = "auto";           // --dtype
  std::string kv_cache_dtype = "auto";  // --kv-cache-dtype
  std::string entry_point = "serve";    // serve | llm (gpubudget's: how vLLM is started)
  std::string mamba_cache_mode;         // --mamba-cache-mode ("" = the version's default)
  std::string mamba_cache_dtype = "auto";
  std::string mamba_ssm_cache_dtype = "auto";
  std::string max_model_len;            // --max-model-len: N, 128k, auto or -1 ("" = the model's maximum)
  std::string kv_cache_memory_bytes;    // --kv-cache-memory-bytes
  std::string max_num_batched_tokens;   // --max-num-batched-tokens
  std::string pp_layer_partition;       // "16,15": layers per stage (VLLM_PP_LAYER_PARTITION)
  std::vector<std::string> vllm_env;    // VLLM_*=VALUE assignments that change memory
  std::string kv_transfer_config;       // --kv-transfer-config JSON: its kv_connector matters
  std::string kv_offloading_size;       // --kv-offloading-size GiB (all ranks): a KV offloading connector
  std::string kv_offloading_backend;    // --kv-offloading-backend native | lmcache ("" = native)
  // Paired vLLM switches (--X / --no-X): neither given = the version's default.
  bool enable_prefix_caching = false;
  bool no_enable_prefix_caching = false;
  bool disable_hybrid_kv_cache_manager = false;
  bool no_disable_hybrid_kv_cache_manager = false;
  LaunchOptions launch;  // speculative decoding, LoRA, online quantization, offload, the tower, backends, -O
};

// The environment variables resolve_vllm_arguments reads: modelled_vllm_env_vars() (vllm_command.h).

// `arguments` as vLLM turns them into its configuration for `model`: the Deployment, and in `profile`
// what the environment changes of the version's behaviour (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS).
// `load_draft` reads a draft checkpoint --speculative-config names. What is read with a caveat is
// appended to `warnings` (sentences without a "warning: " prefix). Throws ArgumentError for a value of
// the wrong syntax or contradicting flags, InputError for a value wrong for the model.
Deployment resolve_vllm_arguments(const VllmArguments& arguments, const ModelSpec& model, VllmProfile& profile,
                                  const ModelLoader& load_draft, std::vector<Notice>& warnings);

// One engine argument the parser reads: its long name (vLLM's, with dashes), whether it takes a value,
// the fields of VllmArguments / Deployment it sets (Deployment's member names: the parity test checks
// that every member is reached), and how.
struct VllmArgument {
  std::string_view flag;
  bool takes_value = true;
  std::string_view deployment_fields;  // space-separated Deployment members it sets
  void (*apply)(std::string_view flag, const std::string& value, VllmArguments& arguments) = nullptr;
};
std::span<const VllmArgument> vllm_arguments();

// A launch line read: the model it names (`vllm serve MODEL` or --model; "" when none), the Hub
// revision and download folder it gives, the arguments, and what the line holds beyond them.
struct VllmLaunchLine {
  std::string model;
  std::string revision;      // --revision ("" = the model's default branch)
  std::string download_dir;  // --download-dir ("" = the default Hugging Face cache)
  VllmArguments arguments;
  // The engine arguments read: the modelled VLLM_* assignments first (VAR=VALUE), then the flags by their
  // long names with one value each (lists comma-joined, JSON merged). Given back to parse_vllm_args they
  // read the same.
  std::vector<std::string> flags;
  std::vector<Notice> notes;         // flags or variables read with a caveat, or unknown (one sentence each)
  std::vector<std::string> ignored;  // vLLM flags and variables with no effect on GPU memory
};

// Reads `words`: leading NAME=VALUE environment assignments, then `vllm serve MODEL …`,
// `python -m vllm.entrypoints.openai.api_server …`, or the engine arguments alone
// ("--tensor-parallel-size", "8", ...). vLLM's spellings are taken: short aliases (-tp, -O3), `_` for
// `-`, --flag=value, dotted -cc.KEY / -sc.KEY, list flags of several words. Flags the table does not read
// follow `engine_args` (configs/vllm-engine-args.json): ignored, or a note. Throws ArgumentError naming
// the word for a value of the wrong syntax.
VllmLaunchLine parse_vllm_args(const std::vector<std::string>& words, const EngineArgs& engine_args);

// The deployment a launch line describes for `model` (resolve_vllm_arguments, drafts read by
// `load_draft`, `profile` changed as the environment changes it), with the line's notes and then the
// resolution's warnings.
struct LaunchDeployment {
  Deployment deployment;
  std::vector<Notice> warnings;
};
LaunchDeployment deployment_from_launch_line(const VllmLaunchLine& line, const ModelSpec& model, VllmProfile& profile,
                                             const ModelLoader& load_draft);

// A command line split into words as a POSIX shell does for a plain command: blanks separate words,
// single quotes keep everything, double quotes keep all but \" \\ \$ \`, a backslash escapes the next
// character, and a backslash-newline joins lines. ArgumentError for an unclosed quote, or for shell syntax
// a launch line cannot hold ($(...), `...`, ;, |, &, <, >).
std::vector<std::string> split_command_line(std::string_view line);

}  // namespace gpubudget

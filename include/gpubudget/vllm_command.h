// A pasted `vllm serve` command line (or `python -m vllm.entrypoints.openai.api_server ...`) turned
// into gpubudget flags: `gpubudget fit --gpu h200 -- vllm serve MODEL --tensor-parallel-size 8 ...`.
#pragma once

#include <string>
#include <vector>
#include "gpubudget/engine_args.h"
#include "gpubudget/notice.h"

namespace gpubudget {

struct VllmCommand {
  std::vector<std::string> flags;    // gpubudget arguments: MODEL first, then --flag value ...
  std::vector<std::string> ignored;  // vLLM flags that do not change the memory budget as modelled
  std::vector<Notice> notes;         // flags or variables read with a caveat, one sentence each
};

// `tokens` is everything after `--`. Leading NAME=VALUE words are environment assignments; the
// VLLM_* ones gpubudget models (modelled_vllm_env_vars) become --vllm-env. Throws ArgumentError when the words are not a vLLM server command.
// Every other flag follows `engine_args` (configs/vllm-engine-args.json): ignored when it has no effect on
// GPU memory, a note when it changes memory in a way not modelled or is not one of vLLM's flags.
// With `bare_flags`, the words may also be the engine arguments alone (no server command, no model:
// flags[0] is then "").
VllmCommand translate_vllm_command(const std::vector<std::string>& tokens, const EngineArgs& engine_args,
                                   bool bare_flags = false);

// Whether the parser turns `flag` (a long name) into gpubudget's own flag: the list's "read" entries.
bool vllm_command_reads(const std::string& flag);

// The environment variables `--vllm-env` reads (and a pasted line passes on to it), in the order the
// usage error lists them.
const std::vector<std::string>& modelled_vllm_env_vars();

}  // namespace gpubudget

// vLLM's engine arguments as configs/vllm-engine-args.json classifies them: every flag `vllm serve`
// accepts (vLLM's main branch of 2026-05), with what gpubudget does with it. The pasted-line parser
// (vllm_command.h) follows it: a flag is read, ignored (no effect on GPU memory) or warned about.
#pragma once

#include <string>
#include <vector>

#include "gpubudget/config_dir.h"

namespace gpubudget {

enum class EngineFlagStatus {
  kRead,               // the pasted-line parser turns it into gpubudget's own flag
  kNoGpuMemoryEffect,  // nothing vLLM allocates on a GPU depends on it
  kNotModelled,        // it can change GPU memory; gpubudget does not model it (warned)
};

struct EngineFlag {
  std::string flag;                  // "--tensor-parallel-size"
  std::vector<std::string> aliases;  // "-tp", "--no-enforce-eager", ...
  bool takes_value = true;
  EngineFlagStatus status = EngineFlagStatus::kNotModelled;
  std::string effect;                // why it is classified so (with vLLM source lines)
};

struct EngineArgs {
  std::string vllm_commit;
  std::vector<EngineFlag> flags;
  // The entry whose flag or alias is `name` (long names with dashes), or nullptr.
  [[nodiscard]] const EngineFlag* find(const std::string& name) const;
};

// Reads `configs`/vllm-engine-args.json; throws InputError naming the file and field when it is malformed.
EngineArgs load_engine_args(const ConfigDir& configs);

}  // namespace gpubudget

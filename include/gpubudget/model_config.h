// config.json (and hf_quant_config.json) parsed into a ModelSpec by the family parsers.
//
// Every parser throws InputError naming the file, the JSON path and the offending value.
#pragma once

#include <string>
#include <vector>

#include "gpubudget/model_spec.h"
#include "gpubudget/safetensors.h"

namespace gpubudget {

// The architecture families gpubudget parses, in the order tried: each parser's name, the language-model
// `model_type`s it reads and the config.json `architectures` vLLM registers for them. The generic path
// (family "generic", any other type, sized from safetensors headers) is not among them.
struct FamilyInfo {
  std::string name;
  std::vector<std::string> model_types;
  std::vector<std::string> architectures;
};
std::vector<FamilyInfo> list_families();

// Parses an already-read config.json (plus an optional hf_quant_config.json text, "" if absent).
// `source` names the file in error messages.
ModelSpec parse_model_config(const std::string& config_json, const std::string& hf_quant_config_json,
                             const std::string& source);
// The same with the checkpoint's safetensors headers at hand: an architecture no family parser knows
// is then sized from them (family "generic", ModelSpec::generic_assumptions; docs/methodology.md
// §Generic) unless it is one gpubudget knows the generic layout gets wrong.
ModelSpec parse_model_config(const std::string& config_json, const std::string& hf_quant_config_json,
                             const std::string& source, const CheckpointHeaders& headers);

}  // namespace gpubudget

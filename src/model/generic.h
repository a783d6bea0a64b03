// The generic path: a ModelSpec sized from the checkpoint's safetensors headers, for an architecture
// no family parser knows (generic.cpp explains what vLLM's Transformers backend does with it).
#pragma once

#include "gpubudget/error.h"
#include "gpubudget/safetensors.h"
#include "model/parse_context.h"

namespace gpubudget::detail {

// parse_model_config's refusal of a model_type no family knows; `generic_allowed` says whether the
// checkpoint's headers, when found, may size it instead (load_model retries with them).
class UnknownArchitectureError : public InputError {
 public:
  UnknownArchitectureError(const std::string& message, bool generic_allowed)
      : InputError(message), generic_allowed_(generic_allowed) {}
  [[nodiscard]] bool generic_allowed() const { return generic_allowed_; }

 private:
  bool generic_allowed_;
};

// Fills `model` (family "generic") from the headers and the standard attention keys of `c.text`;
// every assumption made is appended to ModelSpec::generic_assumptions. Throws InputError naming the
// file and tensor when the checkpoint does not fit the generic layout (quantized, multimodal, two
// layer stacks, a layer count differing from num_hidden_layers, experts of no recognizable shape).
void parse_generic(const ParseContext& c, const CheckpointHeaders& headers, ModelSpec& model);

}  // namespace gpubudget::detail

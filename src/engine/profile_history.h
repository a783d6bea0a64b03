// When a behaviour arrived in vLLM, read from the shipped profiles rather than written in prose: the
// messages that say "this vLLM has no X (it arrived in vLLM 0.15)" take the version from the data.
#pragma once

#include <functional>
#include <string>

#include "gpubudget/vllm_profile.h"

namespace gpubudget::detail {

// The oldest profile beside `profile.source` (the same configs/vllm directory) newer than `profile` for
// which `holds` is true: its version ("0.15"), or "" when none is, or when `profile` was not loaded from
// a directory of profiles. Reads every newer profile: for error and explanation paths, not a hot one.
std::string first_version_where(const VllmProfile& profile, const std::function<bool(const VllmProfile&)>& holds);

// "it arrived in vLLM 0.15", or "no vLLM release gpubudget models has it" when no newer profile does.
std::string arrival_phrase(const VllmProfile& profile, const std::function<bool(const VllmProfile&)>& holds);

}  // namespace gpubudget::detail

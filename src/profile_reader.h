// A vLLM profile's text → VllmProfile (vllm_profiles.cpp), for the loaders and for calibration, which
// checks both the profile it starts from and the one it writes.
#pragma once

#include <string>

#include "gpubudget/vllm_profile.h"

namespace gpubudget::detail {

// Throws InputError naming the file, the JSON pointer and the value when the text is not a profile.
VllmProfile parse_vllm_profile(const std::string& text, const std::string& path);

}  // namespace gpubudget::detail

// A vLLM profile's text → VllmProfile (vllm_profiles.cpp), for the loaders and for calibration, which
// checks both the profile it starts from and the one it writes.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gpubudget/vllm_profile.h"

namespace gpubudget::detail {

// Throws InputError naming the file, the JSON pointer and the value when the text is not a profile.
// A profile may extend another of its directory ("extends": "0.13"): it is that profile with its own
// keys merged over it (RFC 7386 JSON Merge Patch).
// A base is looked for beside the file, then in `base_profiles` (when not empty). A file's fitted
// overhead coefficients may live apart from its hand-written rules, in coefficients_path_of(path); they
// are then its "overheads" (and the file itself must have none).
VllmProfile parse_vllm_profile(const std::string& text, const std::string& path, const std::string& base_profiles = "");
// The profile document with its "extends" chain applied (no "extends" left); throws InputError.
nlohmann::json resolve_profile_json(const std::string& text, const std::string& path,
                                    const std::string& base_profiles = "");
// Where the generated coefficients of the profile file `path` live: coefficients/<file name> beside it.
std::string coefficients_path_of(const std::string& path);

}  // namespace gpubudget::detail

// vLLM version profiles (configs/vllm/*.json, docs/vllm-versions.md) by version or by path.
//
// Every loader throws InputError naming the file, the JSON path and the offending value.
#pragma once

#include <string>
#include <vector>

#include "gpubudget/config_dir.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget {

// The profile for vLLM `version` ("0.15", "0.15.1"): the newest profile whose version is ≤ it; for a
// version older than every profile the oldest, for a source build ("0.0.0+local") the newest, and
// VllmProfile::version_note says so whenever the profile is not that release's own (pre-releases and
// nightlies included). Empty `version` = the newest profile. InputError for text that is no version.
VllmProfile load_vllm_profile(const std::string& version, const ConfigDir& configs);
// A profile file given by path (`fit --profile`, e.g. the output of `gpubudget calibrate`). A profile
// that extends another ("extends": "0.16") finds it beside itself, else among `configs`' profiles.
VllmProfile load_vllm_profile_file(const std::string& path);
VllmProfile load_vllm_profile_file(const std::string& path, const ConfigDir& configs);
// The versions of the profiles in `<root>/vllm`, oldest first ("0.11", "0.13", ...).
std::vector<std::string> list_vllm_profiles(const ConfigDir& configs);

}  // namespace gpubudget

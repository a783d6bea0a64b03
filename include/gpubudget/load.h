// Loading models, GPU presets and vLLM version profiles from disk: every loader's header in one include.
//
// Every loader throws InputError naming the file, the JSON path and the offending value.
#pragma once

#include "gpubudget/config_dir.h"       // ConfigDir, find_config_dir, list_bundled_models
#include "gpubudget/gpu_presets.h"      // load_gpu_preset, list_gpu_presets, custom_gpu ...
#include "gpubudget/hub.h"              // load_model, locate_model
#include "gpubudget/model_config.h"     // parse_model_config, list_families
#include "gpubudget/profile_loading.h"  // load_vllm_profile, list_vllm_profiles

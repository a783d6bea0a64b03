# The library's sources, in two lists: the portable ones, and those with a native dependency (simdjson,
# libcurl, RE2, threads) that the WebAssembly build (web/CMakeLists.txt) replaces with the stand-ins in
# platform/ (each says what it refuses).
set(gpubudget_portable_sources
  checkpoint/safetensors_common.cpp
  core/argument_values.cpp
  core/bytes.cpp
  core/config_dir.cpp
  core/deployment.cpp
  core/dtype.cpp
  core/json_reader.cpp
  core/limits.cpp
  core/notice.cpp
  diagnose/diagnosis.cpp
  documents/catalog_documents.cpp
  documents/diagnosis_document.cpp
  documents/fit_document.cpp
  documents/plan_document.cpp
  documents/sweep_document.cpp
  documents/weights_document.cpp
  engine/drafters.cpp
  engine/engine_args.cpp
  engine/launch_options.cpp
  engine/parallel_layout.cpp
  engine/served_model.cpp
  engine/vllm_args.cpp
  engine/vllm_command.cpp
  engine/vllm_profiles.cpp
  engine/profile_history.cpp
  gpu/gpu_detect.cpp
  gpu/gpu_presets.cpp
  hub/cache_layout.cpp
  hub/locate_model.cpp
  hub/model_reference.cpp
  log/log_lines.cpp
  log/log_text.cpp
  log/log_wordings.cpp
  log/vllm_log.cpp
  memory/all2all_buffers.cpp
  memory/cuda_graph_choice.cpp
  memory/header_weights.cpp
  memory/kv_cache.cpp
  memory/kv_settings.cpp
  memory/lora_buffers.cpp
  memory/mamba_state.cpp
  memory/overheads.cpp
  memory/weight_units.cpp
  memory/weights.cpp
  model/blocks.cpp
  model/config_keys.cpp
  model/eagle_head.cpp
  model/families.cpp
  model/generic.cpp
  model/hparams.cpp
  model/max_model_len.cpp
  model/medusa.cpp
  model/model_config.cpp
  model/model_dtype.cpp
  model/quant_config.cpp
  model/quantization.cpp
  model/rotary.cpp
  model/vision.cpp
  solve/fit.cpp
  solve/launch_command.cpp
  solve/plan.cpp
  solve/remedies.cpp
  solve/sweep.cpp
  solve/vllm_text.cpp
  solve/weights_report.cpp)
set(gpubudget_native_sources
  checkpoint/safetensors.cpp
  hub/http_client.cpp
  hub/hub_fetch.cpp
  platform/module_name_regex_re2.cpp)
set(gpubudget_web_sources
  platform/hub_fetch_unavailable.cpp
  platform/module_name_regex_std.cpp
  platform/safetensors_unavailable.cpp)

# The model families: every file of model/families/ is one (model/families.h), listed for the family table
# in model/family_list.inc under the build's generated/ folder, so that adding a family is adding its file.
file(GLOB gpubudget_family_sources RELATIVE ${CMAKE_CURRENT_LIST_DIR} CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_LIST_DIR}/model/families/*.cpp)
list(SORT gpubudget_family_sources)
list(APPEND gpubudget_portable_sources ${gpubudget_family_sources})
set(gpubudget_family_list "// Written by src/sources.cmake from the files of src/model/families/: one family each.\n")
foreach(family_source IN LISTS gpubudget_family_sources)
  get_filename_component(family_stem ${family_source} NAME_WE)
  string(APPEND gpubudget_family_list "GPUBUDGET_FAMILY(${family_stem})\n")
endforeach()
set(gpubudget_generated_dir ${CMAKE_BINARY_DIR}/generated)
file(CONFIGURE OUTPUT ${gpubudget_generated_dir}/model/family_list.inc CONTENT "${gpubudget_family_list}" @ONLY)

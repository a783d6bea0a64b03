// What went wrong in a vLLM startup, from its log: the cause, the numbers, the largest length that
// fits, what to launch instead and, given the model, gpubudget's prediction beside each logged figure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpubudget/deployment.h"
#include "gpubudget/gpu_spec.h"
#include "gpubudget/hub.h"
#include "gpubudget/load.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/notice.h"
#include "gpubudget/remedies.h"
#include "gpubudget/vllm_log.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget {

// What the caller knows beyond the log (`diagnose --model/--gpu/--vllm-version/--kv-cache-dtype`).
struct DiagnosisContext {
  const ModelSpec* model = nullptr;    // the model the log ran; nullptr: diagnose from the log alone
  std::string model_name;              // how the user named it (an id or a path), for the observation row
  std::optional<GpuSpec> gpu;          // nullopt: inferred from the log's total capacity when a preset matches
  std::optional<VllmProfile> profile;  // nullopt: no prediction (no model)
  std::optional<KvCacheDtypeChoice> kv_cache_dtype;  // overrides the log's
};

// One logged figure beside gpubudget's prediction (GiB, or tokens for counts).
struct FigureComparison {
  std::string figure;
  std::string unit;  // "GiB" or "tokens"
  std::optional<double> logged, predicted;
  std::string basis;  // how the prediction was made
};

struct Diagnosis {
  // One of kv_cache_too_small, no_kv_memory, startup_free_memory, cuda_oom, none (started), unknown.
  std::string root_cause;
  std::string sentence;  // the cause in one sentence, with the numbers
  std::optional<std::int64_t> max_model_len;  // the length the log ran with
  std::optional<double> needed_gib, available_gib;  // KV cache one request needs / what was left, per GPU
  bool needed_predicted = false, available_predicted = false;  // not in the log: gpubudget's figure
  std::optional<std::int64_t> fitting_max_model_len;  // largest length that fits
  std::string fitting_basis;                          // where that length comes from
  std::vector<std::string> remedies;                  // flag changes, best first
  std::vector<Remedy> model_remedies;                 // the what-if engine's, with --model
  std::vector<FigureComparison> comparison;           // with --model
  std::optional<Deployment> deployment;               // the settings read back from the log (with --model)
  std::string gpu;                                    // preset used for predictions ("" none)
  std::vector<Notice> notes;
};

// Never throws on what the log says: settings the model cannot run with (a TP the heads do not divide)
// become a note and the diagnosis continues from the log alone. `context.model` must outlive the call.
Diagnosis diagnose_log(const VllmLogFacts& facts, const DiagnosisContext& context);

// What the user names beside the log (`diagnose --model/--gpu/--vllm-version/--kv-cache-dtype`);
// empty strings are unset.
struct DiagnoseSettings {
  std::string model;         // an id or a path; "": the log's, when found without the network, else the log alone
  std::string gpu;           // a preset; "": the one whose total matches the log's, if exactly one does
  std::string vllm_version;  // "": the log's version (no prediction when it is older than every release answered)
  std::optional<KvCacheDtypeChoice> kv_cache_dtype;
  std::optional<HubOptions> hub;  // where `model` is looked for beyond paths and bundled ids (hub.h)
};

// A diagnosis with what it was made from. `context.model` points to `*model` (shared, so that the
// struct can be moved and copied).
struct LogDiagnosis {
  VllmLogFacts facts;
  std::shared_ptr<const ModelSpec> model;
  DiagnosisContext context;
  Diagnosis diagnosis;
};

// Loads what `settings` names and diagnoses `facts`, as `gpubudget diagnose` does. Throws InputError
// for an unknown model, GPU or version (a log's own version older than every profile is not an error).
LogDiagnosis diagnose_with_settings(VllmLogFacts facts, const DiagnoseSettings& settings, const ConfigDir& configs);

// The log's figures as one row of tests/data/observations/vllm-runs.jsonl (one JSON object, no
// newline), so `gpubudget calibrate` can learn from a fleet's own logs.
std::string observation_row(const VllmLogFacts& facts, const Diagnosis& diagnosis, const DiagnosisContext& context);

}  // namespace gpubudget

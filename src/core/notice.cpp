// The codes' names: the switch names every code (-Wswitch under -Werror holds it complete).
#include "gpubudget/notice.h"

#include <algorithm>

namespace gpubudget {

std::string_view notice_code_name(NoticeCode code) {
  switch (code) {
    case NoticeCode::kProfileNearest:
      return "profile_nearest";
    case NoticeCode::kGenericEstimate:
      return "generic_estimate";
    case NoticeCode::kOverheadsUncalibrated:
      return "overheads_uncalibrated";
    case NoticeCode::kConfigKeyNotModelled:
      return "config_key_not_modelled";
    case NoticeCode::kSpeculativeDecodingEstimate:
      return "speculative_decoding_estimate";
    case NoticeCode::kHeadersUnreadable:
      return "headers_unreadable";
    case NoticeCode::kHeadersDiffer:
      return "headers_differ";
    case NoticeCode::kKvDtypeForcedByCheckpoint:
      return "kv_dtype_forced_by_checkpoint";
    case NoticeCode::kKvDtypeDeclarationUnknown:
      return "kv_dtype_declaration_unknown";
    case NoticeCode::kBlockSizeReplaced:
      return "block_size_replaced";
    case NoticeCode::kBlockSizeUnverified:
      return "block_size_unverified";
    case NoticeCode::kPrefixCachingDisabled:
      return "prefix_caching_disabled";
    case NoticeCode::kMambaCacheModeChanged:
      return "mamba_cache_mode_changed";
    case NoticeCode::kMlaDisabled:
      return "mla_disabled";
    case NoticeCode::kCudaGraphsNotModelled:
      return "cuda_graphs_not_modelled";
    case NoticeCode::kCudaGraphsExtrapolated:
      return "cuda_graphs_extrapolated";
    case NoticeCode::kCpuOffloadIgnored:
      return "cpu_offload_ignored";
    case NoticeCode::kLoraCudaGraphsNotCounted:
      return "lora_cuda_graphs_not_counted";
    case NoticeCode::kLoraOptionsWithoutLora:
      return "lora_options_without_lora";
    case NoticeCode::kKvOffloadingPartial:
      return "kv_offloading_partial";
    case NoticeCode::kAll2allBackendRemoved:
      return "all2all_backend_removed";
    case NoticeCode::kAll2allMemoryNotCounted:
      return "all2all_memory_not_counted";
    case NoticeCode::kAll2allActivationNotModelled:
      return "all2all_activation_not_modelled";
    case NoticeCode::kAll2allNotModelled:
      return "all2all_not_modelled";
    case NoticeCode::kAll2allGranularityAssumed:
      return "all2all_granularity_assumed";
    case NoticeCode::kPipelineStagesDiffer:
      return "pipeline_stages_differ";
    case NoticeCode::kWouldNotStart:
      return "would_not_start";
    case NoticeCode::kOptionNotModelled:
      return "option_not_modelled";
    case NoticeCode::kFlagNotModelled:
      return "flag_not_modelled";
    case NoticeCode::kFlagUnknown:
      return "flag_unknown";
    case NoticeCode::kEnvVarNotModelled:
      return "env_var_not_modelled";
    case NoticeCode::kEnvVarRemoved:
      return "env_var_removed";
    case NoticeCode::kModelNamedTwice:
      return "model_named_twice";
    case NoticeCode::kGpuMemoryInUse:
      return "gpu_memory_in_use";
    case NoticeCode::kGpuAutoMixed:
      return "gpu_auto_mixed";
    case NoticeCode::kGpuAutoTooFew:
      return "gpu_auto_too_few";
    case NoticeCode::kHybridKvManagerOff:
      return "hybrid_kv_manager_off";
    case NoticeCode::kMambaCacheModeDefault:
      return "mamba_cache_mode_default";
    case NoticeCode::kMambaOptionsIgnored:
      return "mamba_options_ignored";
    case NoticeCode::kAll2allBuffers:
      return "all2all_buffers";
    case NoticeCode::kAll2allNoManager:
      return "all2all_no_manager";
    case NoticeCode::kAll2allDisablesCudaGraphs:
      return "all2all_disables_cuda_graphs";
    case NoticeCode::kPrefetchOffloaderSlots:
      return "prefetch_offloader_slots";
    case NoticeCode::kModelFromLog:
      return "model_from_log";
    case NoticeCode::kNoPrediction:
      return "no_prediction";
    case NoticeCode::kKvDtypeFromLog:
      return "kv_dtype_from_log";
    case NoticeCode::kLogFiguresDisagree:
      return "log_figures_disagree";
    case NoticeCode::kRemedyNotSuggested:
      return "remedy_not_suggested";
    case NoticeCode::kLogLinesCut:
      return "log_lines_cut";
    case NoticeCode::kLogWorkers:
      return "log_workers";
    case NoticeCode::kLogFiguresIgnored:
      return "log_figures_ignored";
  }
  return "";
}

std::vector<std::string> notice_texts(const std::vector<Notice>& notices) {
  std::vector<std::string> out;
  out.reserve(notices.size());
  for (const auto& n : notices) out.push_back(n.text);
  return out;
}

std::vector<std::string> notice_code_names(const std::vector<Notice>& notices) {
  std::vector<std::string> out;
  out.reserve(notices.size());
  for (const auto& n : notices) out.emplace_back(notice_code_name(n.code));
  return out;
}

void add_unique(std::vector<Notice>& notices, Notice notice) {
  const auto same_text = [&](const Notice& n) { return n.text == notice.text; };
  if (std::none_of(notices.begin(), notices.end(), same_text)) notices.push_back(std::move(notice));
}

}  // namespace gpubudget

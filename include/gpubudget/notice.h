// Warnings and notes with a stable code beside their sentence, so that a tool reads what happened
// without matching English: the JSON documents carry `warning_codes` / `note_codes` beside
// `warnings` / `notes` (same order, same length), Python's warnings and notes are strings with `.code`.
// docs/warnings.md says what each code means; a code, once released, keeps its name and meaning (a
// changed meaning is a new code), while the sentence may be reworded at any time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpubudget {

enum class NoticeCode : std::uint8_t {
  // The profile, the model and its estimates.
  kProfileNearest,               // no profile of that vLLM release: the nearest one is used
  kGenericEstimate,              // an unmodelled architecture sized from its safetensors headers
  kOverheadsUncalibrated,        // no startup log of this architecture calibrates its overheads
  kConfigKeyNotModelled,         // a config key no parser reads, not known to be without effect
  kSpeculativeDecodingEstimate,  // how the drafter is counted, and what is assumed of it
  kHeadersUnreadable,            // the safetensors headers could not be read to check the weights
  kHeadersDiffer,                // the headers' weights differ from the config's
  // The KV cache.
  kKvDtypeForcedByCheckpoint,  // the checkpoint's KV scheme overrides --kv-cache-dtype
  kKvDtypeDeclarationUnknown,  // vLLM does not know the checkpoint's KV declaration
  kBlockSizeReplaced,          // the attention backend replaces --block-size
  kBlockSizeUnverified,        // a hybrid block with a forced backend block size
  kPrefixCachingDisabled,      // vLLM turns prefix caching off for this model
  kMambaCacheModeChanged,      // vLLM changes the Mamba cache mode asked for
  kMlaDisabled,                // VLLM_MLA_DISABLE=1
  // CUDA graphs, offload, LoRA, all-to-all.
  kCudaGraphsNotModelled,         // a setting's effect on the CUDA graphs is not modelled
  kCudaGraphsExtrapolated,        // a custom capture, extrapolated from default captures
  kCpuOffloadIgnored,             // --cpu-offload-gb ignored under the prefetch offloader
  kLoraCudaGraphsNotCounted,      // LoRA's own CUDA graph captures are not counted
  kLoraOptionsWithoutLora,        // LoRA sizes given without --enable-lora
  kKvOffloadingPartial,           // a KV offloading backend's buffers are not all counted
  kAll2allBackendRemoved,         // the --all2all-backend is removed from this vLLM
  kAll2allMemoryNotCounted,       // an all-to-all backend's heap or state is not counted
  kAll2allActivationNotModelled,  // the all-to-all's larger MoE activation is not modelled
  kAll2allNotModelled,            // the all-to-all's buffers cannot be sized here
  kAll2allGranularityAssumed,     // an assumed allocation granularity of the all-to-all workspace
  kPipelineStagesDiffer,          // pipeline stages on GPUs of different generations
  kWouldNotStart,                 // vLLM would refuse to start (FitResult::start_blocker)
  // The launch line and the machine.
  kOptionNotModelled,  // a launch option's key is not modelled
  kFlagNotModelled,    // a vLLM flag that changes memory in a way not modelled
  kFlagUnknown,        // not one of vLLM's engine arguments
  kEnvVarNotModelled,  // a VLLM_* variable that changes memory in a way not modelled
  kEnvVarRemoved,      // a VLLM_* variable this vLLM no longer reads
  kModelNamedTwice,    // `vllm serve A --model B`
  kGpuMemoryInUse,     // --gpu auto: memory already in use on the GPU
  kGpuAutoMixed,       // --gpu auto: the machine's GPUs differ
  kGpuAutoTooFew,      // --gpu auto: fewer GPUs than the deployment needs
  // Notes: how settings were resolved (for --explain).
  kHybridKvManagerOff,         // the hybrid KV cache manager is off
  kMambaCacheModeDefault,      // the Mamba cache mode vLLM picks by default
  kMambaOptionsIgnored,        // Mamba options on a model without Mamba layers
  kAll2allBuffers,             // what the all-to-all buffers count
  kAll2allNoManager,           // no all-to-all manager without data parallelism
  kAll2allDisablesCudaGraphs,  // the all-to-all backend turns CUDA graphs off
  kPrefetchOffloaderSlots,     // the prefetch offloader's GPU slots against the unrequested memory
  // Notes of `diagnose`.
  kModelFromLog,        // the model is the one the log names
  kNoPrediction,        // no prediction to compare the log with, and why
  kKvDtypeFromLog,      // the log's KV dtype differs from the checkpoint's declaration
  kLogFiguresDisagree,  // the log's figures and the prediction cannot both hold
  kRemedyNotSuggested,  // a remedy left out, and why
  kLogLinesCut,         // overlong log lines were cut
  kLogWorkers,          // several workers logged
  kLogFiguresIgnored,   // implausible figures in the log were ignored
};

// The code's stable name ("kv_dtype_forced_by_checkpoint"); "" for a value that names no code.
std::string_view notice_code_name(NoticeCode code);

// A warning or a note: its code and one English sentence (without a "warning: " prefix).
struct Notice {
  NoticeCode code{};
  std::string text;
  friend bool operator==(const Notice&, const Notice&) = default;
};

// The sentences, and the codes' names, in order (the JSON documents' parallel arrays).
std::vector<std::string> notice_texts(const std::vector<Notice>& notices);
std::vector<std::string> notice_code_names(const std::vector<Notice>& notices);

// Appends `notice` unless one with the same text is there already.
void add_unique(std::vector<Notice>& notices, Notice notice);

}  // namespace gpubudget

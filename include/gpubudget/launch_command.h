// The launch line a fit answers with (`fit --vllm-args`): the --max-model-len to launch with, the length
// that fits kept a margin below the edge gpubudget computes (that edge rests on estimated overheads:
// activation peak, non-torch memory, CUDA graphs, which real startups scatter around), and the
// `vllm serve` command with it.
#pragma once

#include <cstdint>
#include <string>

#include "gpubudget/deployment.h"
#include "gpubudget/fit.h"
#include "gpubudget/vllm_args.h"

namespace gpubudget {

// The default --safety-margin, in percent of the length.
inline constexpr double kDefaultSafetyMarginPercent = 5.0;
inline constexpr double kMaxSafetyMarginPercent = 50.0;

struct LaunchLength {
  std::int64_t max_model_len = 0;  // 0: nothing fits, so no launch line is printed
  std::string note;                // why the length is below the judged one ("" when it is not)
};

// Contract, for a fit result `r` and a margin in percent (0 to kMaxSafetyMarginPercent):
// - nothing fits (r.max_model_len == 0) or vLLM would not start: 0, with the reason in `note`;
// - the judged length fits with its KV need at most (100 - margin)% of the binding worker's KV budget:
//   the judged length, unchanged;
// - otherwise (the judged length does not fit, or only within the margin): the length that fits
//   (r.max_model_len), lowered by the margin and rounded down to a multiple of 256 tokens (16 below
//   4,096), never below one block; `note` names the edge and the margin. A margin of 0 gives the edge.
LaunchLength launch_length(const FitResult& r, double margin_percent);

// The `vllm serve` command that launches `d` (what the launch line gave as `given`: its JSON values and
// launch options as written) for `model` with `max_model_len` and the fit's utilization: the layout, the
// KV and scheduler settings, the launch options, and the VLLM_* variables before it. JSON values are
// single-quoted for a POSIX shell.
std::string vllm_serve_command(const std::string& model, const VllmArguments& given, const Deployment& d,
                               const FitResult& r, std::int64_t max_model_len);
// What the command cannot say about `d`, one sentence ("" when nothing): a deployment of the offline LLM
// class (--entry-point llm) takes the same settings as keyword arguments, and under `vllm serve` gets the
// server's scheduler defaults instead.
std::string vllm_serve_caveat(const Deployment& d);

}  // namespace gpubudget

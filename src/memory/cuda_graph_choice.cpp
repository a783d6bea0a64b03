#include "memory/cuda_graph_choice.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"

namespace gpubudget::detail {

namespace {

constexpr std::int64_t kMaxCaptureSize = std::int64_t{1} << 20;
constexpr std::size_t kMaxCaptureSizes = 4096;

void check_size(std::int64_t size, std::string_view flag) {
  if (size < 1 || size > kMaxCaptureSize) {
    throw InputError(fmt::format("{}: {} is outside 1..{} tokens", flag, size, kMaxCaptureSize));
  }
}

// VllmConfig._set_cudagraph_sizes: the sizes captured (ascending), before the speculative rounding.
std::vector<std::int64_t> capture_sizes(const Deployment& d, const CudaGraphRules& rules, const SchedulerLimits& limits,
                                        std::int64_t decode_query_len) {
  const std::int64_t tokens = limits.max_num_batched_tokens;
  std::vector<std::int64_t> sizes;
  if (!d.cudagraph_capture_sizes.empty()) {
    if (d.cudagraph_capture_sizes.size() > kMaxCaptureSizes) {
      throw InputError(fmt::format("--cudagraph-capture-sizes: {} sizes, more than {}", d.cudagraph_capture_sizes.size(),
                                   kMaxCaptureSizes));
    }
    for (const auto s : d.cudagraph_capture_sizes) check_size(s, "--cudagraph-capture-sizes");
    // Deduplicated, sorted, and only the sizes up to max_num_batched_tokens kept.
    for (const auto s : d.cudagraph_capture_sizes) {
      if (s <= tokens) sizes.push_back(s);
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    if (d.max_cudagraph_capture_size && (sizes.empty() || *d.max_cudagraph_capture_size != sizes.back())) {
      throw InputError(fmt::format("--max-cudagraph-capture-size {}: vLLM requires it to equal the largest of "
                                   "--cudagraph-capture-sizes up to max_num_batched_tokens ({}): \"customized "
                                   "max_cudagraph_capture_size should be consistent with the max value of "
                                   "cudagraph_capture_sizes\"",
                                   *d.max_cudagraph_capture_size, sizes.empty() ? std::int64_t{0} : sizes.back()));
    }
    return sizes;
  }
  std::int64_t largest = 0;
  if (d.max_cudagraph_capture_size) {
    check_size(*d.max_cudagraph_capture_size, "--max-cudagraph-capture-size");
    largest = *d.max_cudagraph_capture_size;
  } else {
    const std::int64_t q = rules.max_size_counts_speculative_tokens ? decode_query_len : 1;
    largest = std::min<std::int64_t>(2 * limits.max_num_seqs * q, 512);
  }
  largest = std::min(largest, tokens);
  // [1, 2, 4] + range(8, 256, 8) + range(256, largest + 1, stride): a largest size off the grid is
  // truncated to the grid ("Truncating max_cudagraph_capture_size").
  for (const std::int64_t s : {1, 2, 4}) {
    if (s <= largest) sizes.push_back(s);
  }
  for (std::int64_t s = 8; s <= largest && s < 256; s += 8) sizes.push_back(s);
  for (std::int64_t s = 256; s <= largest; s += rules.stride_above_256) sizes.push_back(s);
  if (rules.captures_max_num_batched_tokens && tokens <= largest && !sizes.empty() && sizes.back() != tokens &&
      !std::binary_search(sizes.begin(), sizes.end(), tokens)) {
    sizes.push_back(tokens);
    std::sort(sizes.begin(), sizes.end());
  }
  return sizes;
}

}  // namespace

std::int64_t CudaGraphChoice::extra_graphs() const {
  return std::max<std::int64_t>(piecewise_graphs - 1, 0) + std::max<std::int64_t>(full_graphs - 1, 0);
}

CudaGraphChoice cuda_graph_choice(const Deployment& d, const VllmProfile& profile, const SchedulerLimits& limits,
                                  std::int64_t num_speculative_tokens) {
  CudaGraphChoice out;
  // VllmConfig.__post_init__: enforce_eager sets cudagraph_mode NONE whatever else was asked.
  if (d.enforce_eager) {
    out.captured = false;
    return out;
  }
  std::string mode = d.cudagraph_mode;  // an explicit -cc value wins over the level's default
  if (d.optimization_level && !profile.optimization_levels) {
    out.caveat =
        Notice{NoticeCode::kCudaGraphsNotModelled,
               fmt::format("-O{}: vLLM {} reads -O as the torch.compile level, whose effect on CUDA graphs is not "
                           "modelled; the graph estimate is the default capture's",
                           *d.optimization_level, profile.version)};
  } else if (d.optimization_level && mode.empty()) {
    // OPTIMIZATION_LEVEL_00: mode NONE, cudagraph_mode NONE; _01: PIECEWISE; _02 / _03: FULL_AND_PIECEWISE.
    mode = *d.optimization_level == 0 ? "NONE" : *d.optimization_level == 1 ? "PIECEWISE" : "";
  }
  if (mode.empty()) mode = "FULL_AND_PIECEWISE";
  if (mode == "NONE") {
    out.captured = false;
    return out;
  }
  const std::int64_t q = 1 + num_speculative_tokens;  // uniform_decode_query_len
  out.capture_sizes = capture_sizes(d, profile.cuda_graphs, limits, q);
  const bool full_decode = mode != "PIECEWISE";
  if (full_decode && q > 1 && !out.capture_sizes.empty()) {
    // adjust_cudagraph_sizes_for_spec_decode: every size rounded up to a multiple of q, those past the
    // largest dropped; [q] when none is left.
    const std::int64_t largest = out.capture_sizes.back();
    std::vector<std::int64_t> rounded;
    for (const auto s : out.capture_sizes) {
      const std::int64_t r = (s + q - 1) / q * q;
      if (r <= largest) rounded.push_back(r);
    }
    rounded.erase(std::unique(rounded.begin(), rounded.end()), rounded.end());
    out.capture_sizes = rounded.empty() ? std::vector<std::int64_t>{q} : rounded;
  }
  const auto count = static_cast<std::int64_t>(out.capture_sizes.size());
  // profile_cudagraph_memory's counts: PIECEWISE one graph per size; FULL decode graphs for the sizes
  // of q to q x S tokens (uniform decode batches); FULL mode one full graph per size.
  const auto decode_sizes = static_cast<std::int64_t>(std::count_if(
      out.capture_sizes.begin(), out.capture_sizes.end(),
      [&](std::int64_t s) { return s >= q && s <= q * limits.max_num_seqs; }));
  if (mode == "PIECEWISE") {
    out.piecewise_graphs = count;
  } else if (mode == "FULL") {
    out.full_graphs = count;
  } else if (mode == "FULL_DECODE_ONLY") {
    out.full_graphs = decode_sizes;
  } else {
    out.piecewise_graphs = count;
    out.full_graphs = decode_sizes;
  }
  const bool customised = !d.cudagraph_capture_sizes.empty() || d.max_cudagraph_capture_size ||
                          mode != "FULL_AND_PIECEWISE";
  if (!out.caveat && customised) {
    out.caveat =
        Notice{NoticeCode::kCudaGraphsExtrapolated,
               fmt::format("CUDA graphs: {} piecewise and {} full captures ({}); the graph estimate's per-layer part "
                           "is scaled by the graphs beyond each mode's first ({} against {} calibrated), as vLLM "
                           "extrapolates its own estimate, but its first-capture / per-graph split is fitted on "
                           "default captures only",
                           out.piecewise_graphs, out.full_graphs, mode, out.extra_graphs(), kReferenceExtraCudaGraphs)};
  }
  return out;
}

}  // namespace gpubudget::detail

#include "all2all_buffers.h"

#include <algorithm>
#include <array>
#include <climits>

#include <fmt/format.h>

namespace gpubudget::detail {

namespace {

constexpr std::int64_t kMiB = 1 << 20;
// deep_ep.cpp Buffer::Buffer: the NVLink buffer carries barrier signals and peer pointers for
// NUM_MAX_NVL_PEERS (8) ranks after its data (8 x int, 8 x pointer, 8 x pointer), and a 32 MiB
// workspace (NUM_WORKSPACE_BYTES) is allocated beside it.
constexpr std::int64_t kNvlPeers = 8;
constexpr std::int64_t kNvlTrailerBytes = kNvlPeers * (4 + 8 + 8);
constexpr std::int64_t kWorkspaceBytes = 32 * kMiB;
// DeepEPLLPrepareAndFinalize.SUPPORTED_HIDDEN_SIZES: a token is dispatched at the next one up.
constexpr std::array<std::int64_t, 8> kLowLatencyHiddenSizes = {2048, 2560, 3072, 4096, 5120, 6144, 7168, 8192};

std::int64_t align_up(std::int64_t value, std::int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

const ExpertsModule* first_experts(const ModelSpec& model) {
  for (const auto& layer : model.layers) {
    if (!layer.experts.empty()) return &layer.experts.front();
  }
  return nullptr;
}

}  // namespace

bool uses_batched_dp_moe(const Deployment& d) {
  return (d.all2all_backend == All2AllBackend::kDeepEpLowLatency || d.all2all_backend == All2AllBackend::kNixlEp) &&
         d.enable_expert_parallel && d.data_parallel_size > 1;
}

std::int64_t deepep_low_latency_rdma_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts) {
  const std::int64_t scales = hidden / 128;
  // A dispatch message: an int4 header and the bf16 token (or the fp8 token and its fp32 scales); a
  // combine message: the bf16 token and a bf16x2 min/max per 128 channels.
  const std::int64_t dispatch_message = 16 + std::max(hidden * 2, hidden + scales * 4);
  const std::int64_t combine_message = scales * 4 + hidden * 2;
  const std::int64_t send = std::max(tokens * dispatch_message, experts * tokens * combine_message);
  const std::int64_t receive = std::max(experts * tokens * dispatch_message, experts * tokens * combine_message);
  const std::int64_t signalling = align_up(experts * 4, 128);
  const std::int64_t total = 2 * send + 2 * receive + 2 * signalling;
  // get_low_latency_rdma_size_hint: ((bytes + NUM_BUFFER_ALIGNMENT_BYTES) / 128) * 128.
  return (total + 128) / 128 * 128;
}

All2AllBuffers all2all_buffers(const ModelSpec& model, const Deployment& d, const VllmProfile& profile,
                               const SchedulerLimits& limits) {
  All2AllBuffers out;
  const std::string name(all2all_backend_name(d.all2all_backend));
  if (d.data_parallel_size <= 1) {
    if (d.all2all_backend != All2AllBackend::kAllgatherReducescatter) {
      out.notes.push_back(fmt::format("--all2all-backend {}: no all-to-all manager without data parallelism (DP 1)", name));
    }
    return out;
  }
  // MoRI's symmetric heap is created with the manager, before vLLM's first memory snapshot.
  if (d.all2all_backend == All2AllBackend::kMori) {
    out.warnings.push_back("--all2all-backend mori: its 4 GiB symmetric heap is allocated before vLLM's memory "
                           "snapshot, outside --gpu-memory-utilization, and is not modelled");
    return out;
  }
  const ExpertsModule* experts = first_experts(model);
  if (experts == nullptr || !d.enable_expert_parallel) return out;
  const std::int64_t world = d.tensor_parallel_size * d.data_parallel_size;
  const std::int64_t nvl = d.deepep_buffer_size_mb * kMiB;
  switch (d.all2all_backend) {
    case All2AllBackend::kAllgatherReducescatter:
    case All2AllBackend::kNaive:
      out.warnings.push_back(fmt::format(
          "--all2all-backend {}: no buffers of its own, but every rank's MoE layers run on the tokens of all {} DP "
          "ranks gathered; that larger MoE activation is not modelled",
          name == "naive" ? "naive (allgather_reducescatter)" : name, d.data_parallel_size));
      return out;
    case All2AllBackend::kPplx:
    case All2AllBackend::kFlashInferTwoSided:
    case All2AllBackend::kFlashInferOneSided:
    case All2AllBackend::kNixlEp:
      out.warnings.push_back(fmt::format("--all2all-backend {}: its communication buffers are not modelled", name));
      return out;
    case All2AllBackend::kMori:
      return out;
    case All2AllBackend::kDeepEpHighThroughput: {
      out.non_torch = Bytes(nvl + kNvlTrailerBytes + kWorkspaceBytes);
      out.notes.push_back(fmt::format("DeepEP high-throughput: NVLink buffer {} MiB (VLLM_DEEPEP_BUFFER_SIZE_MB) + "
                                      "32 MiB workspace, non-torch",
                                      d.deepep_buffer_size_mb));
      if (world > kNvlPeers) {
        out.non_torch += Bytes(nvl);
        out.warnings.push_back(fmt::format(
            "DeepEP high-throughput over {} GPUs (more than one node of 8 assumed): its {} MiB NVSHMEM RDMA buffer is "
            "counted, NVSHMEM's own state is not",
            world, d.deepep_buffer_size_mb));
      }
      out.disables_cuda_graphs = profile.all2all.deepep_high_throughput_disables_cuda_graphs;
      if (out.disables_cuda_graphs) {
        out.notes.push_back("DeepEP high-throughput with DP > 1: vLLM turns CUDA graphs off (cudagraph_mode NONE)");
      }
      out.warnings.push_back("DeepEP high-throughput: the received tokens of a dispatch depend on the routing; the "
                             "profile run's activation is modelled as without expert parallelism");
      return out;
    }
    case All2AllBackend::kDeepEpLowLatency: {
      const auto hidden = std::find_if(kLowLatencyHiddenSizes.begin(), kLowLatencyHiddenSizes.end(),
                                       [&](std::int64_t h) { return h >= experts->hidden_size; });
      if (hidden == kLowLatencyHiddenSizes.end()) {
        out.start_blocker = fmt::format("DeepEP low-latency: hidden size {} is greater than the maximum supported "
                                        "hidden size 8192 (DeepEPLLPrepareAndFinalize)",
                                        experts->hidden_size);
        return out;
      }
      const std::int64_t tokens =
          profile.all2all.dispatch_tokens_are_batched_tokens ? limits.max_num_batched_tokens : profile.all2all.moe_dp_chunk_size;
      const std::int64_t global_experts = experts->num_experts + d.num_redundant_experts;
      const std::int64_t rdma = deepep_low_latency_rdma_bytes(tokens, *hidden, global_experts);
      if (rdma / 16 >= INT_MAX) {
        out.start_blocker = fmt::format(
            "DeepEP low-latency: {} tokens per dispatch of hidden {} over {} experts need a {} B RDMA buffer, beyond "
            "DeepEP's limit (num_rdma_bytes / sizeof(int4) < INT_MAX); lower --max-num-batched-tokens",
            tokens, *hidden, global_experts, rdma);
        return out;
      }
      if (nvl > INT_MAX) {
        out.start_blocker = fmt::format("DeepEP low-latency: VLLM_DEEPEP_BUFFER_SIZE_MB {} exceeds DeepEP's limit of "
                                        "2047 with an RDMA buffer (num_nvl_bytes <= INT_MAX)",
                                        d.deepep_buffer_size_mb);
        return out;
      }
      out.non_torch = Bytes(nvl + kNvlTrailerBytes + kWorkspaceBytes + rdma);
      out.notes.push_back(fmt::format(
          "DeepEP low-latency: RDMA buffer {} B ({} tokens per dispatch, hidden {}, {} experts) + NVLink buffer {} MiB + "
          "32 MiB workspace, non-torch",
          rdma, tokens, *hidden, global_experts, d.deepep_buffer_size_mb));
      out.warnings.push_back("DeepEP low-latency: NVSHMEM maps its heap in 512 MiB chunks and keeps state of its own, "
                             "which is not counted; the batched experts' receive tensors are not in the activation "
                             "estimate");
      return out;
    }
  }
  return out;
}

}  // namespace gpubudget::detail

#include "memory/all2all_buffers.h"

#include <algorithm>
#include <array>
#include <climits>
#include <optional>

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

// MnnvlMemory rounds each allocation up to cuMemGetAllocationGranularity(RECOMMENDED), a driver value:
// 2 MiB is assumed.
constexpr std::int64_t kMnnvlGranularity = 2 * kMiB;
constexpr const char* kMnnvlGranularityAssumption =
    "FlashInfer all-to-all: its MNNVL allocations are taken as rounded up to 2 MiB (the driver's "
    "recommended granularity is read at run time)";

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

std::int64_t low_latency_layout_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts,
                                      std::int64_t signal_bytes_per_expert) {
  const std::int64_t scales = hidden / 128;
  // A dispatch message: an int4 header and the bf16 token (or the fp8 token and its fp32 scales); a
  // combine message: the bf16 token and a bf16x2 min/max per 128 channels.
  const std::int64_t dispatch_message = 16 + std::max(hidden * 2, hidden + scales * 4);
  const std::int64_t combine_message = scales * 4 + hidden * 2;
  const std::int64_t send = std::max(tokens * dispatch_message, experts * tokens * combine_message);
  const std::int64_t receive = std::max(experts * tokens * dispatch_message, experts * tokens * combine_message);
  const std::int64_t signalling = align_up(experts * signal_bytes_per_expert, 128);
  const std::int64_t total = 2 * send + 2 * receive + 2 * signalling;
  // get_low_latency_rdma_size_hint: ((bytes + NUM_BUFFER_ALIGNMENT_BYTES) / 128) * 128.
  return (total + 128) / 128 * 128;
}

std::int64_t flashinfer_one_sided_bytes(std::int64_t ep, std::int64_t tokens, std::int64_t dispatch_bytes,
                                       std::int64_t combine_bytes) {
  // calculateOffsets (csrc/trtllm_moe_alltoall.cu): flag, token counter, send and receive counters; dispatch
  // and combine completion flags; top-k target ranks and send indices for kMaxTopK = 22.
  constexpr std::int64_t kMaxTopK = 22;
  const std::int64_t aux = align_up(8 + 8 * ep, 128) + 2 * align_up(4 * ep, 128) + 2 * align_up(tokens * kMaxTopK * 4, 128);
  const std::int64_t per_rank = align_up(aux, 128) + align_up(ep * tokens * dispatch_bytes, 128) +
                                align_up(ep * tokens * combine_bytes, 128);
  return align_up(per_rank, kMnnvlGranularity);
}

std::int64_t flashinfer_two_sided_bytes(std::int64_t ep, std::int64_t multiprocessors) {
  // trtllm_alltoall.cuh: 2 * ceil(ep / 8) blocks per channel, max(SMs / 2 / that, 1) channels, each channel to
  // each rank a 2 MiB receive FIFO (8 x 256 KiB) and 256 B of connection state; the prepare workspace is a
  // 1 MiB FIFO and 256 B of metadata per rank.
  const std::int64_t blocks_per_channel = (ep + 7) / 8 * 2;
  const std::int64_t channels = std::max<std::int64_t>(multiprocessors / 2 / blocks_per_channel, 1);
  const std::int64_t comm = (2 * kMiB + 256) * ep * channels;
  const std::int64_t prepare = (kMiB + 256) * ep;
  return align_up(comm, kMnnvlGranularity) + align_up(prepare, kMnnvlGranularity);
}

std::int64_t deepep_low_latency_rdma_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts) {
  return low_latency_layout_bytes(tokens, hidden, experts, 4);
}

std::int64_t nixl_ep_buffer_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts) {
  return low_latency_layout_bytes(tokens, hidden, experts, 8);
}

std::int64_t pplx_intranode_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts, std::int64_t world,
                                  std::int64_t dispatch_bytes) {
  const std::int64_t local = (experts + world - 1) / world;
  const std::int64_t header = 16 + align_up(4 * local, 16);
  const std::int64_t buffer = std::max(header + tokens * local * align_up(dispatch_bytes + 4, 16),
                                       header + tokens * local * align_up(4 * hidden, 16));
  return world * buffer + 6 * local * tokens * world * 4;
}

std::int64_t pplx_internode_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts, std::int64_t world,
                                  std::int64_t tp, std::int64_t dispatch_bytes) {
  const std::int64_t local = (experts + world - 1) / world;
  const std::int64_t groups = (world + tp - 1) / tp;
  const std::int64_t per_token = align_up(dispatch_bytes + 4, 16);
  return tokens * per_token + local * groups * tokens * per_token + local * groups * tokens * hidden * 4 +
         tokens * experts * hidden * 4;
}

std::optional<std::int64_t> pplx_dispatch_bytes(const ExpertsModule& experts) {
  const std::int64_t h = experts.hidden_size;
  const QuantFormat& f = experts.format;
  switch (f.kind) {
    case QuantKind::kUnquantized:
      return align_up(h * element_bytes(f.dtype), 16);
    case QuantKind::kFp8Block:
      if (f.block_k <= 0) return std::nullopt;
      return align_up(h, 16) + align_up((h + f.block_k - 1) / f.block_k * 4, 16);
    case QuantKind::kFp8Tensor:
    case QuantKind::kChannel8:  // 8-bit tokens with a per-token fp32 scale
      return align_up(h, 16) + align_up(4, 16);
    default:
      return std::nullopt;
  }
}

All2AllBuffers all2all_buffers(const ModelSpec& model, const Deployment& d, const GpuSpec& gpu,
                               const VllmProfile& profile, const SchedulerLimits& limits) {
  All2AllBuffers out;
  const std::string name(all2all_backend_name(d.all2all_backend));
  const auto listed = [&](const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  if (listed(profile.all2all.unknown_backends)) {
    out.start_blocker = fmt::format("vLLM {} has no --all2all-backend {} (it came in a later release)",
                                    profile.version, name);
    return out;
  }
  if (listed(profile.all2all.fallback_backends)) {
    out.warnings.push_back({NoticeCode::kAll2allBackendRemoved,
                            fmt::format("--all2all-backend {}: removed from vLLM {}, which falls back to "
                                        "allgather_reducescatter",
                                        name, profile.version)});
    Deployment fallback = d;
    fallback.all2all_backend = All2AllBackend::kAllgatherReducescatter;
    All2AllBuffers rest = all2all_buffers(model, fallback, gpu, profile, limits);
    rest.warnings.insert(rest.warnings.begin(), out.warnings.front());
    return rest;
  }
  if (d.data_parallel_size <= 1) {
    if (d.all2all_backend != All2AllBackend::kAllgatherReducescatter) {
      out.notes.push_back(
          {NoticeCode::kAll2allNoManager,
           fmt::format("--all2all-backend {}: no all-to-all manager without data parallelism (DP 1)", name)});
    }
    return out;
  }
  // MoRI's symmetric heap is created with the manager, before vLLM's first memory snapshot.
  if (d.all2all_backend == All2AllBackend::kMori) {
    // mori shmem init (src/shmem/init.cpp): one static heap of MORI_SHMEM_HEAP_SIZE per GPU, 4 GiB by default
    // from mori 1.1.0 (2 GiB before), made in init_device before vLLM's first snapshot: the profiled budget
    // and the KV figures do not include it, and vLLM refuses to start when free memory is below the request.
    out.warnings.push_back({NoticeCode::kAll2allMemoryNotCounted,
                            "--all2all-backend mori: its symmetric heap (MORI_SHMEM_HEAP_SIZE: 4 GiB by default "
                            "from mori 1.1.0, 2 GiB before) is allocated before vLLM's memory snapshot, so the KV "
                            "figures are without it; with the CUDA context it must fit in the memory "
                            "--gpu-memory-utilization leaves unrequested, or vLLM refuses to start (not checked)"});
    return out;
  }
  const ExpertsModule* experts = first_experts(model);
  if (experts == nullptr || !d.enable_expert_parallel) return out;
  const std::int64_t world = d.tensor_parallel_size * d.data_parallel_size;
  const std::int64_t nvl = d.deepep_buffer_size_mb * kMiB;
  // Every formula below multiplies at most ranks (or experts sized for VLLM_NIXL_EP_MAX_NUM_RANKS), tokens
  // and a message of a few hidden widths; past 2^60 bytes (a million times any GPU) the product is not
  // computed, so that no setting within the input limits overflows 64-bit arithmetic.
  const double tokens_bound = static_cast<double>(std::max(limits.max_num_batched_tokens, profile.all2all.moe_dp_chunk_size));
  const double bound = static_cast<double>(std::max(world, experts->num_experts + d.num_redundant_experts)) *
                       static_cast<double>(std::max<std::int64_t>(d.nixl_ep_max_num_ranks, 1)) * tokens_bound *
                       static_cast<double>(experts->hidden_size) * 64.0;
  const bool has_buffers = d.all2all_backend != All2AllBackend::kAllgatherReducescatter &&
                           d.all2all_backend != All2AllBackend::kNaive && d.all2all_backend != All2AllBackend::kMori;
  if (has_buffers && bound > 0x1p60) {
    out.start_blocker = fmt::format("--all2all-backend {}: {} tokens per dispatch of hidden {} over {} ranks ask for "
                                    "all-to-all buffers beyond 2^60 bytes; lower --max-num-batched-tokens",
                                    name, static_cast<std::int64_t>(tokens_bound), experts->hidden_size, world);
    return out;
  }
  switch (d.all2all_backend) {
    case All2AllBackend::kAllgatherReducescatter:
    case All2AllBackend::kNaive:
      out.warnings.push_back(
          {NoticeCode::kAll2allActivationNotModelled,
           fmt::format("--all2all-backend {}: no buffers of its own, but every rank's MoE layers run on the tokens of "
                       "all {} DP "
                       "ranks gathered; that larger MoE activation is not modelled",
                       name == "naive" ? "naive (allgather_reducescatter)" : name, d.data_parallel_size)});
      return out;
    case All2AllBackend::kFlashInferTwoSided: {
      // MnnvlMoe (FlashInfer trtllm_alltoall): created lazily at the first dispatch, in the profile run.
      if (gpu.multiprocessors <= 0) {
        out.warnings.push_back({NoticeCode::kAll2allNotModelled,
                                fmt::format("--all2all-backend {}: its workspace depends on the GPU's multiprocessor "
                                            "count, which the {} preset does not give; not modelled",
                                            name, gpu.name)});
        return out;
      }
      out.non_torch = Bytes(flashinfer_two_sided_bytes(world, gpu.multiprocessors));
      out.notes.push_back({NoticeCode::kAll2allBuffers,
                           fmt::format("FlashInfer two-sided all-to-all: {} B of FIFO workspaces ({} ranks, {} "
                                       "multiprocessors), non-torch",
                                       out.non_torch.count(), world, gpu.multiprocessors)});
      out.warnings.push_back({NoticeCode::kAll2allGranularityAssumed, kMnnvlGranularityAssumption});
      return out;
    }
    case All2AllBackend::kFlashInferOneSided: {
      const std::int64_t tokens =
          profile.all2all.dispatch_tokens_are_batched_tokens ? limits.max_num_batched_tokens : profile.all2all.moe_dp_chunk_size;
      const QuantFormat& f = experts->format;
      const std::string format = f.kind == QuantKind::kNvfp4 ? "nvfp4" : f.kind == QuantKind::kUnquantized ? "bf16" : "";
      const auto& accepted = profile.all2all.one_sided_dispatch_formats;
      if (format.empty() || std::find(accepted.begin(), accepted.end(), format) == accepted.end()) {
        if (f.kind == QuantKind::kMxfp4) {
          out.warnings.push_back(
              {NoticeCode::kAll2allNotModelled,
               fmt::format("--all2all-backend {}: the dispatch of MXFP4 experts is not modelled", name)});
          return out;
        }
        out.start_blocker = fmt::format("--all2all-backend {} in vLLM {} dispatches only {} tokens, not the tokens of "
                                        "{} experts (vLLM raises NotImplementedError)",
                                        name, profile.version, fmt::join(accepted, " / "), describe(f));
        return out;
      }
      const std::int64_t h = experts->hidden_size;
      const std::int64_t top_k = model.num_experts_per_token;
      // all2all.py: the token (nvfp4: packed halves and an fp8 scale per 16), then top-k int32 expert ids
      // and top-k fp32 weights; the combine returns bf16 tokens.
      const std::int64_t dispatch = (format == "nvfp4" ? h / 2 + h / 16 : 2 * h) + 8 * top_k;
      out.non_torch = Bytes(flashinfer_one_sided_bytes(world, tokens, dispatch, 2 * h));
      out.notes.push_back({NoticeCode::kAll2allBuffers,
                           fmt::format("FlashInfer one-sided all-to-all: {} B workspace ({} ranks, {} tokens, {} B "
                                       "dispatched and {} B combined per token), non-torch",
                                       out.non_torch.count(), world, tokens, dispatch, 2 * h)});
      out.warnings.push_back({NoticeCode::kAll2allGranularityAssumed, kMnnvlGranularityAssumption});
      return out;
    }
    case All2AllBackend::kPplx: {
      // PPLXPrepareAndFinalize: moe.max_num_tokens (VLLM_MOE_DP_CHUNK_SIZE) tokens per rank; vLLM passes the
      // TP size as pplx's dp_size; the intranode kernels cudaMalloc their buffers, the internode ones take
      // them from NVSHMEM; both after vLLM's first snapshot, so non-torch memory.
      const std::int64_t tokens = profile.all2all.moe_dp_chunk_size;
      const std::int64_t global_experts = experts->num_experts + d.num_redundant_experts;
      if (world <= kNvlPeers) {
        // The combine buffer (fp32 tokens) is the larger of the two for every dispatch format.
        const std::int64_t dispatch = pplx_dispatch_bytes(*experts).value_or(2 * experts->hidden_size);
        out.non_torch = Bytes(pplx_intranode_bytes(tokens, experts->hidden_size, global_experts, world, dispatch));
        out.notes.push_back({NoticeCode::kAll2allBuffers,
                             fmt::format("pplx intranode: {} B of dispatch / combine buffers ({} tokens per rank, "
                                         "hidden {}, {} experts over {} ranks, one buffer per peer), non-torch",
                                         out.non_torch.count(), tokens, experts->hidden_size, global_experts, world)});
        return out;
      }
      const auto dispatch = pplx_dispatch_bytes(*experts);
      if (!dispatch) {
        out.warnings.push_back({NoticeCode::kAll2allNotModelled,
                                fmt::format("--all2all-backend pplx across nodes: the dispatch format of {} experts is "
                                            "not modelled, nor are its buffers",
                                            describe(experts->format))});
        return out;
      }
      out.non_torch = Bytes(pplx_internode_bytes(tokens, experts->hidden_size, global_experts, world,
                                                 d.tensor_parallel_size, *dispatch));
      out.notes.push_back(
          {NoticeCode::kAll2allBuffers,
           fmt::format("pplx internode: {} B of NVSHMEM dispatch / combine buffers ({} tokens per rank, "
                       "{} B per dispatched token, hidden {}, {} experts over {} ranks), non-torch",
                       out.non_torch.count(), tokens, *dispatch, experts->hidden_size, global_experts, world)});
      out.warnings.push_back({NoticeCode::kAll2allMemoryNotCounted,
                              fmt::format("pplx over {} GPUs (more than one node of 8 assumed): NVSHMEM's own heap, "
                                          "reserved at nvshmem_init before vLLM's first snapshot, is not counted",
                                          world)});
      return out;
    }
    case All2AllBackend::kNixlEp: {
      // NixlEPAll2AllManager sizes its buffer for VLLM_NIXL_EP_MAX_NUM_RANKS ranks of this rank's expert
      // count (elastic EP), with DeepEP's low-latency layout and 8 B of signalling per expert.
      const std::int64_t tokens =
          profile.all2all.dispatch_tokens_are_batched_tokens ? limits.max_num_batched_tokens : profile.all2all.moe_dp_chunk_size;
      const std::int64_t global_experts = experts->num_experts + d.num_redundant_experts;
      const std::int64_t local_experts = (global_experts + world - 1) / world;
      const std::int64_t sized_experts = d.nixl_ep_max_num_ranks * local_experts;
      const std::int64_t buffer = nixl_ep_buffer_bytes(tokens, experts->hidden_size, sized_experts);
      out.non_torch = Bytes(buffer + kWorkspaceBytes);
      out.notes.push_back(
          {NoticeCode::kAll2allBuffers,
           fmt::format("NIXL EP: buffer {} B ({} tokens per dispatch, hidden {}, {} experts: "
                       "VLLM_NIXL_EP_MAX_NUM_RANKS {} x {} local) + 32 MiB workspace, non-torch",
                       buffer, tokens, experts->hidden_size, sized_experts, d.nixl_ep_max_num_ranks, local_experts)});
      out.warnings.push_back({NoticeCode::kAll2allMemoryNotCounted,
                              "NIXL EP: its mask and synchronisation buffers (a few KiB) are not counted"});
      return out;
    }
    case All2AllBackend::kMori:
      return out;
    case All2AllBackend::kDeepEpHighThroughput: {
      out.non_torch = Bytes(nvl + kNvlTrailerBytes + kWorkspaceBytes);
      out.notes.push_back({NoticeCode::kAll2allBuffers,
                           fmt::format("DeepEP high-throughput: NVLink buffer {} MiB (VLLM_DEEPEP_BUFFER_SIZE_MB) + "
                                       "32 MiB workspace, non-torch",
                                       d.deepep_buffer_size_mb)});
      if (world > kNvlPeers) {
        out.non_torch += Bytes(nvl);
        out.warnings.push_back(
            {NoticeCode::kAll2allMemoryNotCounted, fmt::format("DeepEP high-throughput over {} GPUs (more than one "
                                                               "node of 8 assumed): its {} MiB NVSHMEM RDMA buffer is "
                                                               "counted, NVSHMEM's own state is not",
                                                               world, d.deepep_buffer_size_mb)});
      }
      out.disables_cuda_graphs = profile.all2all.deepep_high_throughput_disables_cuda_graphs;
      if (out.disables_cuda_graphs) {
        out.notes.push_back({NoticeCode::kAll2allDisablesCudaGraphs,
                             "DeepEP high-throughput with DP > 1: vLLM turns CUDA graphs off (cudagraph_mode NONE)"});
      }
      out.warnings.push_back({NoticeCode::kAll2allActivationNotModelled,
                              "DeepEP high-throughput: the received tokens of a dispatch depend on the routing; the "
                              "profile run's activation is modelled as without expert parallelism"});
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
      out.notes.push_back(
          {NoticeCode::kAll2allBuffers, fmt::format("DeepEP low-latency: RDMA buffer {} B ({} tokens per dispatch, "
                                                    "hidden {}, {} experts) + NVLink buffer {} MiB + "
                                                    "32 MiB workspace, non-torch",
                                                    rdma, tokens, *hidden, global_experts, d.deepep_buffer_size_mb)});
      out.warnings.push_back({NoticeCode::kAll2allMemoryNotCounted,
                              "DeepEP low-latency: NVSHMEM maps its heap in 512 MiB chunks and keeps state of its own, "
                              "which is not counted; the batched experts' receive tensors are not in the activation "
                              "estimate"});
      return out;
    }
  }
  return out;
}

}  // namespace gpubudget::detail

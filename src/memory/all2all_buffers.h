// GPU memory of the expert-parallel all-to-all backends (--all2all-backend), as vLLM sets them up
// (vllm/distributed/device_communicators/all2all.py) and as its memory profiling sees them
// (docs/methodology.md §5.2). The backend's manager exists only with DP > 1
// (base_device_communicator.py: use_ep = data_parallel_size > 1) and allocates for MoE layers under
// --enable-expert-parallel (FusedMoEConfig.use_all2all_kernels); its buffers are created while the
// model loads or in prepare_communication_buffer_for_model, outside PyTorch's allocator, so vLLM counts
// them as non-torch memory and takes them off the KV budget.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpubudget/deployment.h"
#include "gpubudget/gpu_spec.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/notice.h"
#include "gpubudget/overheads.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget::detail {

struct All2AllBuffers {
  Bytes non_torch;                    // per GPU, in vLLM's non-torch increase
  bool disables_cuda_graphs = false;  // vLLM sets cudagraph_mode NONE
  std::string start_blocker;          // why vLLM (DeepEP) refuses to start; "" when it starts
  std::vector<Notice> notes;          // what was counted (for --explain)
  std::vector<Notice> warnings;       // what is not modelled
};

// True when vLLM 0.20+ gives this deployment the batched DP MoE scheduler default
// (ParallelConfig.use_batched_dp_moe: deepep_low_latency or nixl_ep, expert parallel, DP > 1).
bool uses_batched_dp_moe(const Deployment& deployment);

// DeepEP's Buffer.get_low_latency_rdma_size_hint (csrc/config.hpp LowLatencyLayout, DeepEP 73b6ea4,
// the commit vLLM installs): two send, two receive and two signalling buffers for `tokens` dispatched
// per rank, each message a bf16 token of `hidden` plus its scales; bytes.
std::int64_t deepep_low_latency_rdma_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts);

// NIXL EP's buffer (nixl examples/device/ep csrc/config.hpp EPLayout): DeepEP's low-latency layout with
// 8 B of signalling per expert instead of 4; bytes.
std::int64_t nixl_ep_buffer_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts);

// FlashInfer's MoE all-to-all workspaces per GPU (flashinfer v0.6.11.post2, the release vLLM pins), each
// MNNVL allocation rounded up to 2 MiB. One-sided (MoeAlltoAll, moe_a2a_get_workspace_size_per_rank):
// auxiliary counters and indices, then `ep` x `tokens` dispatch and combine payloads; the GPU holds its
// own rank's slice. Two-sided (MnnvlMoe): receive FIFOs per channel and rank, channels from the GPU's
// multiprocessors, and the prepare FIFO per rank.
std::int64_t flashinfer_one_sided_bytes(std::int64_t ep, std::int64_t tokens, std::int64_t dispatch_bytes,
                                       std::int64_t combine_bytes);
std::int64_t flashinfer_two_sided_bytes(std::int64_t ep, std::int64_t multiprocessors);

// pplx-kernels' buffers per GPU (csrc/all_to_all/intranode.cpp and internode.cpp at 12cecfd, the commit
// vLLM installs) for `tokens` per rank, `experts` over `world` ranks and `dispatch_bytes` per dispatched
// token (hidden and scale bytes, each rounded up to 16). Intranode: one cudaMalloc'd buffer per peer of
// max(dispatch, fp32 combine) messages, plus six int32 tracking arrays; internode: NVSHMEM send / receive
// buffers, where pplx's "dp_size" is vLLM's TP size (`tp`).
std::int64_t pplx_intranode_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts, std::int64_t world,
                                  std::int64_t dispatch_bytes);
std::int64_t pplx_internode_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts, std::int64_t world,
                                  std::int64_t tp, std::int64_t dispatch_bytes);
// pplx_hidden_dim_scale_bytes: bf16 / fp16 tokens whole; fp8 tokens with fp32 scales per 128-block or per
// token. Other expert formats: nullopt (not modelled).
std::optional<std::int64_t> pplx_dispatch_bytes(const ExpertsModule& experts);

All2AllBuffers all2all_buffers(const ModelSpec& model, const Deployment& deployment, const GpuSpec& gpu,
                               const VllmProfile& profile, const SchedulerLimits& limits);

}  // namespace gpubudget::detail

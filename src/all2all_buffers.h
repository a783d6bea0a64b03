// GPU memory of the expert-parallel all-to-all backends (--all2all-backend), as vLLM sets them up
// (vllm/distributed/device_communicators/all2all.py) and as its memory profiling sees them
// (docs/methodology.md §5.2). The backend's manager exists only with DP > 1
// (base_device_communicator.py: use_ep = data_parallel_size > 1) and allocates for MoE layers under
// --enable-expert-parallel (FusedMoEConfig.use_all2all_kernels); its buffers are created while the
// model loads or in prepare_communication_buffer_for_model, outside PyTorch's allocator, so vLLM counts
// them as non-torch memory and takes them off the KV budget.
#pragma once

#include <string>
#include <vector>

#include "gpubudget/deployment.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/overheads.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget::detail {

struct All2AllBuffers {
  Bytes non_torch;                    // per GPU, in vLLM's non-torch increase
  bool disables_cuda_graphs = false;  // vLLM sets cudagraph_mode NONE
  std::string start_blocker;          // why vLLM (DeepEP) refuses to start; "" when it starts
  std::vector<std::string> notes;     // what was counted (for --explain)
  std::vector<std::string> warnings;  // what is not modelled
};

// True when vLLM 0.20+ gives this deployment the batched DP MoE scheduler default
// (ParallelConfig.use_batched_dp_moe: deepep_low_latency or nixl_ep, expert parallel, DP > 1).
bool uses_batched_dp_moe(const Deployment& deployment);

// DeepEP's Buffer.get_low_latency_rdma_size_hint (csrc/config.hpp LowLatencyLayout, DeepEP 73b6ea4,
// the commit vLLM installs): two send, two receive and two signalling buffers for `tokens` dispatched
// per rank, each message a bf16 token of `hidden` plus its scales; bytes.
std::int64_t deepep_low_latency_rdma_bytes(std::int64_t tokens, std::int64_t hidden, std::int64_t experts);

All2AllBuffers all2all_buffers(const ModelSpec& model, const Deployment& deployment, const VllmProfile& profile,
                               const SchedulerLimits& limits);

}  // namespace gpubudget::detail

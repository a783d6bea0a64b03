// Weights per GPU: exact bytes of every tensor vLLM holds on one worker after loading.
//
// Integer arithmetic from each module's local shard shape and QuantFormat
// (docs/methodology.md §Weights). Mirrors vLLM's "Model loading took X GiB" up to the small
// residual of runtime buffers that the checkpoint does not describe.
#pragma once

#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/parallel_layout.h"

namespace gpubudget {

struct ComponentBytes {
  Component component;
  Bytes bytes;
};

struct WeightsBreakdown {
  Bytes total;  // what the GPU holds: the components less cpu_offloaded
  std::vector<ComponentBytes> components;  // in Component order, zero entries omitted
  Bytes cpu_offloaded;  // --cpu-offload-gb or the prefetch offloader: weights kept in pinned CPU memory instead
  // The prefetch offloader's GPU slots (PrefetchOffload::buffers): allocated after vLLM measures the
  // weights and before it profiles, so no figure of vLLM's budget holds them (through 0.22). Not in total.
  Bytes prefetch_buffers;
};

// Output rows of fused shard `shard` (q, k, v; gate, up) of `module` held by one of `tp` ranks: split
// for column-parallel layers (query heads, and KV heads or one replicated head, for QKV), whole otherwise.
std::int64_t local_shard_rows(const LinearModule& module, std::int64_t tp, std::size_t shard);

// Bytes of one linear layer's local shard (weight, scales, bias) on a worker of `layout`.
Bytes linear_bytes(const LinearModule& module, const ParallelLayout& layout);
// Bytes of one FusedMoE block's local experts on a worker of `layout`.
Bytes experts_bytes(const ExpertsModule& module, const ParallelLayout& layout);

// Checkpoint bytes of one linear module (every unfused shard with its scales and bias) and of one
// FusedMoE block (all experts), in the checkpoint's own layout.
Bytes checkpoint_linear_bytes(const LinearModule& module);
Bytes checkpoint_experts_bytes(const ExpertsModule& module);

// Every tensor the checkpoint stores, all ranks together (TP=1): decoder layers, MTP / next-n layers
// with their extras, embeddings, an untied head, vision; in the checkpoint's own layout (one tensor
// per unfused shard, unpadded scales); without vLLM's runtime buffers and extra copies.
// Safetensors header bytes are not included.
Bytes checkpoint_bytes(const ModelSpec& model);
// The parameters of those tensors: weight elements, quantized weights counted unpacked (an int4
// [N, K] weight is N x K), quantization scales not counted; what a model card's "8B" rounds.
std::int64_t checkpoint_parameters(const ModelSpec& model);

// Everything the worker holds. Does not throw (the layout was validated by make_parallel_layout).
WeightsBreakdown weights_per_gpu(const ModelSpec& model, const ParallelLayout& layout);

// Adds the model's buffers sized by max_num_batched_tokens (ModelSpec::batched_token_buffers) to
// `weights` as runtime buffers: what vLLM allocates with the model for this scheduler budget.
void add_batched_token_buffers(WeightsBreakdown& weights, const ModelSpec& model, std::int64_t max_num_batched_tokens);

// Adds `bytes` to `component` of `weights` (and to the total), keeping the components in order.
void add_to_component(WeightsBreakdown& weights, Component component, Bytes bytes);

// --cpu-offload-gb (UVA offloader, vllm/model_executor/offloader/uva.py): the decoder layers' weights
// on this worker are moved to pinned CPU memory in layer order while the moved bytes are below
// `budget`, so the last module moved can overshoot it. vLLM moves parameter by parameter; this moves
// whole modules (weight, scales and bias together), so it can differ from vLLM by one module's scales.
// Embeddings, the head, norms outside the layers and the drafter stay on the GPU.
Bytes cpu_offloaded_bytes(const ModelSpec& model, const ParallelLayout& layout, Bytes budget);

// The prefetch offloader (vllm/model_executor/offloader/prefetch.py, vLLM 0.17+, #29941) with group size
// `group` (G), `in_group` (N) and `prefetch_step` (P): the decoder layers of this worker whose index
// within the worker i satisfies i mod G >= G - N move to pinned CPU memory when built, so vLLM's
// "Model loading took" is without them; its StaticBufferPool then allocates P GPU copies of every
// distinct parameter of the offloaded layers (one slot per layer in flight). Parameters are told apart
// here by module name within the layer: a module of the same name and different size in two offloaded
// layers (dense and MoE MLPs share none) takes the larger. The drafter's layers are not offloaded.
struct PrefetchOffload {
  std::int64_t layers = 0;  // offloaded decoder layers on the worker
  Bytes offloaded;          // their bytes, in CPU memory
  Bytes buffers;            // P x the distinct modules' bytes, on the GPU (0 without offloaded layers)
};
PrefetchOffload prefetch_offload(const ModelSpec& model, const ParallelLayout& layout, std::int64_t group,
                                 std::int64_t in_group, std::int64_t prefetch_step);

}  // namespace gpubudget

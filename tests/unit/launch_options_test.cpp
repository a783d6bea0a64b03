// Launch options beyond the layout (issue: the real launch line): LoRA slots, online fp8, the vision
// tower left out or replicated, --cpu-offload-gb, the GPU n-gram proposer, a forced attention backend.
// Every expected figure is worked by hand below from vLLM's shapes (main, 2026-05; the file and
// function named at each test).
#include <algorithm>
#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "gpubudget/lora_buffers.h"
#include "gpubudget/remedies.h"
#include "gpubudget/served_model.h"
#include "gpubudget/weights.h"
#include "fixtures/safetensors_writer.h"
#include "test_support.h"

namespace gpubudget {
namespace {

using test::component;

VllmProfile newest() { return load_vllm_profile("", test::configs()); }

// Qwen3-32B on one H100 at 32,768 tokens: the deployment the launch-option tests vary.
struct Qwen3_32bOnH100 {
  ModelSpec m;
  GpuSpec h100;
  Deployment d;
};
Qwen3_32bOnH100 qwen3_32b_on_h100() {
  Qwen3_32bOnH100 out{test::bundled("Qwen/Qwen3-32B"), load_gpu_preset("h100", test::configs()), Deployment{}};
  out.d.max_model_len = 32768;
  return out;
}

LoraAdapters lora(std::int64_t slots, std::int64_t rank, bool fully_sharded = false) {
  LoraAdapters l;
  l.enabled = true;
  l.max_loras = slots;
  l.max_lora_rank = rank;
  l.fully_sharded = fully_sharded;
  return l;
}

// Qwen3-32B (H 5120, I 25600, 64 heads x 128 = 8192, 8 KV heads = 1024, vocab 151,936, 64 layers), bf16,
// 4 slots of rank 64 at TP 1 (vllm/lora/layers/column_parallel_linear.py, row_parallel_linear.py):
//   qkv_proj     lora_a 3 x 4·64·5120 = 3,932,160   lora_b 4·64·(8192 + 1024 + 1024) = 2,621,440
//   o_proj       lora_a 4·64·8192 = 2,097,152        lora_b 4·5120·64 = 1,310,720
//   gate_up_proj lora_a 2 x 4·64·5120 = 2,621,440   lora_b 2 x 4·25600·64 = 13,107,200
//   down_proj    lora_a 4·64·25600 = 6,553,600       lora_b 4·5120·64 = 1,310,720
//   = 33,554,432 elements = 67,108,864 B per layer, x 64 = 4,294,967,296 B.
// Qwen3ForCausalLM lists embed_tokens and lm_head in embedding_modules (0.16+): the embedding's lora_a
// [4, 151936, 64] and lora_b [4, 1, 5120, 64], the logits processor's lora_a [4, 1, 64, 5120] and lora_b
// [4, 1, 151936, 64]: 2 x 4·64·(151936 + 5120) x 2 B = 160,825,344 B.
// Punica (punica_base.py, punica_gpu.py) at T 8192, S 1024: int64 3T + 2T + 3S = 352,256 B, and two
// kernel metadata sets of int32 [2, T] with int32 arrays of L+1, L+1, L+2: 2 x (65,536 + 64) = 131,200 B.
TEST(Lora, Qwen3_32bFourSlotsOfRank64) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-32B");
  const LoraBuffers b = lora_buffers(m, test::layout_for(m, 1), lora(4, 64), newest().lora, 8192, 1024);
  EXPECT_EQ(b.linear.count(), 4'294'967'296LL);
  EXPECT_EQ(b.embeddings.count(), 160'825'344LL);
  EXPECT_EQ(b.punica.count(), 352'256LL + 131'200LL);
  // vLLM 0.15: Qwen3 had no embedding_modules, so only the linear layers are adapted.
  EXPECT_EQ(lora_buffers(m, test::layout_for(m, 1), lora(4, 64), load_vllm_profile("0.15", test::configs()).lora, 8192,
                         1024)
                .embeddings.count(),
            0);
}

// --lora-target-modules: only the named modules get slots (o_proj: 6,815,744 B per layer from the table
// above); an unfused name adapts its fused module (q_proj: qkv_proj's 13,107,200 B per layer).
TEST(Lora, TargetModules) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-32B");
  LoraAdapters only = lora(4, 64);
  only.target_modules = {"o_proj"};
  LoraBuffers b = lora_buffers(m, test::layout_for(m, 1), only, newest().lora, 8192, 1024);
  EXPECT_EQ(b.linear.count(), 64LL * 6'815'744);
  EXPECT_EQ(b.embeddings.count(), 0);
  only.target_modules = {"q_proj"};
  b = lora_buffers(m, test::layout_for(m, 1), only, newest().lora, 8192, 1024);
  EXPECT_EQ(b.linear.count(), 64LL * 13'107'200);
}

// The same at TP 4 with --fully-sharded-loras: column-parallel lora_a splits the rank (16), row-parallel
// lora_b splits the output (1280):
//   qkv 3 x 4·16·5120 + 4·64·(2048 + 256 + 256) = 983,040 + 655,360
//   o   4·64·2048 + 4·1280·64 = 524,288 + 327,680
//   gate_up 2 x 4·16·5120 + 2 x 4·6400·64 = 655,360 + 3,276,800
//   down 4·64·6400 + 4·1280·64 = 1,638,400 + 327,680
//   = 8,388,608 elements = 16,777,216 B per layer, x 64 = 1 GiB exactly.
// The embedding and head slots are whole on every rank, and TP > 1 adds the logits processor's int64
// map of the padded vocabulary (151,936 x 8 B).
TEST(Lora, FullyShardedAtTp4) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-32B");
  const LoraBuffers b = lora_buffers(m, test::layout_for(m, 4), lora(4, 64, true), newest().lora, 8192, 1024);
  EXPECT_EQ(b.linear.count(), 1LL << 30);
  EXPECT_EQ(b.embeddings.count(), 160'825'344LL + 151'936LL * 8);
  test::expect_input_error(
      [&] { (void)lora_buffers(m, test::layout_for(m, 8), lora(4, 1, true), newest().lora, 8192, 1024); },
      "not divisible by --tensor-parallel-size 8");
  test::expect_input_error(
      [&] { (void)lora_buffers(m, test::layout_for(m, 1), lora(4, 24), newest().lora, 8192, 1024); },
      "--max-lora-rank 24");
}

// fit() charges the slots to the weights (they are allocated inside vLLM's weight measurement) and the
// KV cache shrinks by exactly as much.
TEST(Lora, ComesOutOfTheKvCache) {
  auto [m, h100, d] = qwen3_32b_on_h100();
  const FitResult plain = fit(m, h100, d, newest());
  d.lora = lora(4, 64);
  const FitResult adapted = fit(m, h100, d, newest());
  const Bytes slots = component(adapted.binding_worker().weights, Component::kLora);
  EXPECT_EQ(slots.count(), 4'294'967'296LL + 160'825'344LL + 352'256LL + 131'200LL);
  EXPECT_EQ((plain.binding_worker().kv_cache - adapted.binding_worker().kv_cache).count(), slots.count());
}

// --quantization fp8 on bf16 Llama-3.1-70B at TP 4 (Fp8OnlineLinearMethod: fp8 e4m3 weight, one fp32
// scale per module, no input scale; embeddings, head and norms stay bf16). Per layer and rank:
//   qkv (2048 + 2 x 256) x 8192 = 20,971,520; o 8192 x 2048 = 16,777,216; gate_up 2 x 7168 x 8192 =
//   117,440,512; down 8192 x 7168 = 58,720,256: 213,909,504 B + 4 scales of 4 B, x 80 = 17,112,761,600 B.
// Embedding and head 128,256 / 4 x 8192 x 2 B = 525,336,576 B each; 161 norms of 8192 x 2 B = 2,637,824 B;
// the rotary cache 131,072 x 128 x 2 B = 33,554,432 B. Total 18,199,627,008 B. (vLLM's caching
// allocator rounds each 4-byte scale up to 512 B: 162,560 B more, which gpubudget does not count for
// any tensor.)
TEST(OnlineQuantization, Llama70bFp8AtTp4) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-70B");
  Deployment d;
  d.tensor_parallel_size = 4;
  d.quantization = OnlineQuantization::kFp8;
  const ModelSpec served = model_as_served(m, d);
  EXPECT_EQ(weights_per_gpu(served, make_parallel_layout(served, d, 0)).total.count(), 18'199'627'008LL);
  // A checkpoint quantized otherwise is refused as vLLM refuses it.
  test::expect_input_error([&] { (void)model_as_served(test::bundled("nvidia/Qwen3-32B-NVFP4"), d); },
                           "does not match the quantization method");
}

// --quantization bitsandbytes on bf16 Llama-3.1-8B at TP 1 (bitsandbytes_loader.py _unquantized_generator:
// quantize_4bit(compress_statistics=True, quant_type="nf4") per on-disk weight, then _dequantize_dq keeps
// the packed uint8 weight, an fp32 absmax per 64 weights and the 16-entry fp32 code): n weights take
// ceil(n/2) + 4 ceil(n/64) + 64 B. Per layer:
//   q 4096 x 4096 = 16,777,216: 8,388,608 + 1,048,576 + 64 = 9,437,248; k and v 1024 x 4096 = 4,194,304:
//   2,097,152 + 262,144 + 64 = 2,359,360 each; o 9,437,248: attention 23,593,216 B, x 32 = 754,982,912 B.
//   gate, up, down 14336 x 4096 = 58,720,256: 29,360,128 + 3,670,016 + 64 = 33,030,208 each: 99,090,624 B,
//   x 32 = 3,170,899,968 B.
// Embedding and head stay bf16. The forward pass rebuilds one shard at a time in bf16 (matmul_4bit): the
// largest, gate or up, is 14336 x 4096 x 2 = 117,440,512 B beside the activations.
TEST(OnlineQuantization, Llama8bBitsAndBytes) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-8B");
  Deployment d;
  d.quantization = OnlineQuantization::kBitsAndBytes;
  d.max_model_len = 8192;
  const ModelSpec served = model_as_served(m, d);
  const WeightsBreakdown w = weights_per_gpu(served, make_parallel_layout(served, d, 0));
  EXPECT_EQ(component(w, Component::kAttention).count(), 754'982'912LL);
  EXPECT_EQ(component(w, Component::kDenseMlp).count(), 3'170'899'968LL);
  EXPECT_EQ(component(w, Component::kEmbedding).count(), 128'256LL * 4096 * 2);
  const FitResult r = fit(m, load_gpu_preset("h100", test::configs()), d, newest());
  EXPECT_EQ(r.binding_worker().overheads.dequantized_weights.count(), 117'440'512LL);
  // TP 2 splits before quantizing: the column-parallel gate is 7168 x 4096 per rank,
  // 14,680,064 + 1,835,008 + 64 = 16,515,136 B.
  d.tensor_parallel_size = 2;
  const ModelSpec tp2 = model_as_served(m, d);
  const WeightsBreakdown w2 = weights_per_gpu(tp2, make_parallel_layout(tp2, d, 0));
  EXPECT_EQ(component(w2, Component::kDenseMlp).count(), 32LL * 3 * 16'515'136);
}

// bitsandbytes on Qwen3-30B-A3B (48 layers, 128 experts of I 768, H 2048): each expert's gate, up and down
// (768 x 2048 = 1,572,864 weights) quantized alone, 786,432 + 98,304 = 884,736 B without the code, and two
// fused code tables per layer (_fuse_moe_quant_states): 128 x 3 x 884,736 + 128 = 339,738,752 B per layer.
// Qwen3-MoE's gate takes the quant_config (#25455): 128 x 2048 = 262,144 weights, 131,072 + 16,384 + 64 =
// 147,520 B. BitsAndBytesMoEMethod rebuilds a layer's w13 and w2 in bf16 before the experts run:
// 128 x 3 x 768 x 2048 x 2 = 1,207,959,552 B.
TEST(OnlineQuantization, Qwen3MoeBitsAndBytes) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-30B-A3B");
  Deployment d;
  d.quantization = OnlineQuantization::kBitsAndBytes;
  d.max_model_len = 8192;
  const ModelSpec served = model_as_served(m, d);
  const WeightsBreakdown w = weights_per_gpu(served, make_parallel_layout(served, d, 0));
  EXPECT_EQ(component(w, Component::kRoutedExperts).count(), 48LL * 339'738'752);
  EXPECT_EQ(component(w, Component::kRouter).count(), 48LL * 147'520);
  const FitResult r = fit(m, load_gpu_preset("h100", test::configs()), d, newest());
  EXPECT_EQ(r.binding_worker().overheads.dequantized_weights.count(), 1'207'959'552LL);
}

// Online fp8 leaves a router built with quant_config=None in bf16 (Mixtral: ReplicatedLinear(...,
// quant_config=None)): 32 layers x 8 x 4096 x 2 B = 2,097,152 B; Qwen3-MoE's gate becomes fp8 with one
// fp32 scale: 48 x (128 x 2048 + 4) = 12,583,104 B.
TEST(OnlineQuantization, RoutersKeepTheirDtypeUnlessBuiltWithTheQuantConfig) {
  Deployment d;
  d.quantization = OnlineQuantization::kFp8;
  const ModelSpec mixtral = model_as_served(test::bundled("mistralai/Mixtral-8x7B-v0.1"), d);
  EXPECT_EQ(component(weights_per_gpu(mixtral, make_parallel_layout(mixtral, d, 0)), Component::kRouter).count(),
            2'097'152LL);
  const ModelSpec qwen = model_as_served(test::bundled("Qwen/Qwen3-30B-A3B"), d);
  EXPECT_EQ(component(weights_per_gpu(qwen, make_parallel_layout(qwen, d, 0)), Component::kRouter).count(),
            12'583'104LL);
}

// The prefetch offloader (offloader/prefetch.py, vLLM 0.17+) on bf16 Llama-3.1-8B at TP 1 with
// --offload-group-size 8 --offload-num-in-group 2 --offload-prefetch-step 2: layers i with i mod 8 >= 6
// (6, 7, 14, 15, 22, 23, 30, 31) live in CPU memory. A layer holds qkv 6144 x 4096 x 2 = 50,331,648,
// o 33,554,432, gate_up 234,881,024, down 117,440,512 and two norms 16,384: 436,224,000 B. Offloaded
// 8 x 436,224,000 = 3,489,792,000 B; the StaticBufferPool holds 2 slots of one layer: 872,448,000 B,
// allocated after the weights are measured, so outside vLLM's budget.
TEST(PrefetchOffload, Llama8bGroupsOf8) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-8B");
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  Deployment d;
  d.max_model_len = 8192;
  const FitResult resident = fit(m, h100, d, newest());
  d.offload_group_size = 8;
  d.offload_num_in_group = 2;
  d.offload_prefetch_step = 2;
  const FitResult r = fit(m, h100, d, newest());
  const WorkerBudget& w = r.binding_worker();
  EXPECT_EQ(w.weights.cpu_offloaded.count(), 3'489'792'000LL);
  EXPECT_EQ((resident.binding_worker().weights.total - w.weights.total).count(), 3'489'792'000LL);
  EXPECT_EQ(w.weights.prefetch_buffers.count(), 872'448'000LL);
  EXPECT_TRUE(r.vllm_would_start);
  // vLLM budgets the KV cache without the slots: exactly the offloaded bytes more than resident.
  EXPECT_EQ((w.kv_cache - resident.binding_worker().kv_cache).count(), 3'489'792'000LL);
  // 20 slots (8.7 GB) do not fit in the 10% of 80 GiB left unrequested: the KV allocation fails.
  d.offload_prefetch_step = 20;
  EXPECT_FALSE(fit(m, h100, d, newest()).vllm_would_start);
  // Before 0.17 there is no prefetch offloader; N > G is refused as OffloadConfig refuses it.
  d.offload_prefetch_step = 2;
  test::expect_input_error([&] { (void)fit(m, h100, d, load_vllm_profile("0.16", test::configs())); },
                           "no prefetch offloader");
  d.offload_num_in_group = 9;
  test::expect_input_error([&] { (void)fit(m, h100, d, newest()); }, "--offload-num-in-group");
}

// --cpu-offload-gb 10 on bf16 Llama-3.1-70B at TP 4 (offloader/uva.py: decoder-layer parameters in order
// while the moved bytes are below 10 GiB). A layer holds qkv 41,943,040 + o 33,554,432 + gate_up
// 234,881,024 + down 117,440,512 + two norms 32,768 = 427,851,776 B; 25 layers are 10,696,294,400 B, and
// layer 25's qkv_proj takes it to 10,738,237,440 B, 819,200 B past the budget, where it stops.
TEST(CpuOffload, Llama70bTenGiBAtTp4) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-70B");
  Deployment d;
  d.tensor_parallel_size = 4;
  d.max_model_len = 8192;
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  const FitResult resident = fit(m, h100, d, newest());
  d.cpu_offload_gb = 10;
  const FitResult offloaded = fit(m, h100, d, newest());
  EXPECT_EQ(offloaded.binding_worker().weights.cpu_offloaded.count(), 10'738'237'440LL);
  EXPECT_EQ((resident.binding_worker().weights.total - offloaded.binding_worker().weights.total).count(),
            10'738'237'440LL);
}

// --limit-mm-per-prompt with image and video 0 (or --language-model-only): vLLM builds no vision tower
// (_mark_tower_model) and profiles no encoder; the weights lose exactly the vision row.
TEST(Multimodal, LanguageModelOnlyDropsTheTower) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-VL-30B-A3B-Instruct");
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  Deployment d;
  d.max_model_len = 32768;
  const FitResult with_tower = fit(m, h100, d, newest());
  d.language_model_only = true;
  const FitResult text_only = fit(m, h100, d, newest());
  const Bytes vision = component(with_tower.binding_worker().weights, Component::kVision);
  EXPECT_GT(vision.count(), 0);
  EXPECT_EQ(component(text_only.binding_worker().weights, Component::kVision).count(), 0);
  EXPECT_EQ((with_tower.binding_worker().weights.total - text_only.binding_worker().weights.total).count(),
            vision.count());
  EXPECT_GT(with_tower.binding_worker().overheads.encoder.items, 0);
  EXPECT_EQ(text_only.binding_worker().overheads.encoder.items, 0);
}

// --mm-encoder-tp-mode data (Qwen3-VL sets supports_encoder_tp_data): every rank holds the whole tower,
// so its bytes at TP 4 equal its bytes at TP 1.
TEST(Multimodal, EncoderDataParallelReplicatesTheTower) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-VL-30B-A3B-Instruct");
  Deployment d;
  d.mm_encoder_tp_mode = EncoderTpMode::kData;
  const Bytes whole = component(weights_per_gpu(m, test::layout_for(m, 1)), Component::kVision);
  d.tensor_parallel_size = 4;
  const ModelSpec served = model_as_served(m, d);
  EXPECT_EQ(component(weights_per_gpu(served, make_parallel_layout(served, d, 0)), Component::kVision).count(),
            whole.count());
  EXPECT_LT(component(weights_per_gpu(m, test::layout_for(m, 4)), Component::kVision).count(), whole.count());
}

// method ngram_gpu: GPUModelRunner.__init__ allocates token_ids_gpu_tensor, int32 [max_num_seqs,
// max_model_len], and num_tokens_no_spec_gpu, int32 [max_num_seqs]; ngram and suffix run on the CPU.
TEST(Speculative, NgramOnTheGpuAddsATokenTable) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-8B-Instruct");
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  Deployment d;
  d.max_model_len = 32768;
  d.max_num_seqs = 256;
  const FitResult plain = fit(m, h100, d, newest());
  d.speculative.method = SpeculativeMethod::kNgram;
  d.speculative.num_speculative_tokens = 4;
  EXPECT_EQ(fit(m, h100, d, newest()).binding_worker().weights.total, plain.binding_worker().weights.total);
  d.speculative.method = SpeculativeMethod::kNgramGpu;
  const FitResult gpu = fit(m, h100, d, newest());
  EXPECT_EQ(component(gpu.binding_worker().weights, Component::kDraft).count(), 256LL * 32768 * 4 + 256 * 4);
}

// --attention-backend: a backend the profile does not know is refused; one that does not run on the GPU
// stops vLLM ("Selected backend ... is not valid for this configuration").
TEST(AttentionBackend, ForcedBackendIsChecked) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-8B-Instruct");
  Deployment d;
  d.attention_backend = "NO_SUCH_BACKEND";
  test::expect_input_error([&] { (void)fit(m, load_gpu_preset("h100", test::configs()), d, newest()); },
                           "--attention-backend NO_SUCH_BACKEND");
  // An MLA backend for a standard-attention model.
  d.attention_backend = "FLASHMLA";
  const FitResult r = fit(m, load_gpu_preset("h100", test::configs()), d, newest());
  EXPECT_FALSE(r.vllm_would_start);
  EXPECT_NE(r.start_blocker.find("Selected backend FLASHMLA is not valid"), std::string::npos) << r.start_blocker;
  // FlashInfer is vLLM's first choice on a B200 (SM 10); on an H100 the profile does not list it, so
  // gpubudget does not judge it rather than call it invalid.
  d.attention_backend = "FLASHINFER";
  const FitResult flashinfer = fit(m, load_gpu_preset("b200", test::configs()), d, newest());
  EXPECT_TRUE(flashinfer.vllm_would_start);
  EXPECT_EQ(flashinfer.attention_backend, "FLASHINFER");
  test::expect_input_error([&] { (void)fit(m, load_gpu_preset("h100", test::configs()), d, newest()); },
                           "is not modelled");
  // TRITON_ATTN runs everywhere: forcing it on an H100 picks it over FLASH_ATTN.
  d.attention_backend = "TRITON_ATTN";
  EXPECT_EQ(fit(m, load_gpu_preset("h100", test::configs()), d, newest()).attention_backend, "TRITON_ATTN");
}


// --speculative-config '{"method": "mtp", "num_speculative_tokens": 1}' on DeepSeek-V3 at TP 8
// (deepseek_mtp.py; H 7168, FP8 blocks of 128 x 128 with fp32 scales). The next-n layer 61 on each rank:
//   fused_qkv_a_proj (1536 + 576) x 7168 + 17 x 56 scales = 15,142,624; q_a / kv_a norms 3,072 + 1,024;
//   q_b_proj 3072 x 1536 + 24 x 12 scales = 4,719,744; kv_b_proj 4096 x 512 + 32 x 4 scales = 2,097,664
//   and its bf16 W_UK_T / W_UV copy 16 x 256 x 512 x 2 = 4,194,304; o_proj 7168 x 2048 + 56 x 16 scales =
//   14,683,648; two layer norms 28,672: attention 40,870,752 B;
//   router 256 x 7168 bf16 + fp32 bias 256 = 3,671,040 B;
//   256 experts of w13 [512, 7168] and w2 [7168, 256] fp8 with 4 x 56 and 56 x 2 scales = 1,409,630,208 B;
//   shared expert gate_up 512 x 7168 + 4 x 56 scales, down 7168 x 256 + 56 x 2 scales = 5,506,368 B;
//   enorm, hnorm, shared_head.norm 3 x 7168 x 2 and eh_proj [7168, 14336] bf16 (nn.Linear) = 205,563,904 B.
// The embedding and shared_head.head are the target's (EagleProposer._maybe_share_embeddings /
// _maybe_share_lm_head): 1,665,242,272 B in all. Its attention is one more MLA KV layer of 576 x 2 B per
// token in the same group, so the need for any length grows by exactly 62/61.
TEST(Speculative, DeepSeekV3MtpAtTp8) {
  const ModelSpec m = test::bundled("deepseek-ai/DeepSeek-V3");
  const GpuSpec h200 = load_gpu_preset("h200", test::configs());
  Deployment d;
  d.tensor_parallel_size = 8;
  d.max_model_len = 65536;
  const FitResult plain = fit(m, h200, d, newest());
  d.speculative.method = SpeculativeMethod::kMtp;
  d.speculative.num_speculative_tokens = 1;
  const FitResult mtp = fit(m, h200, d, newest());
  EXPECT_EQ(component(mtp.binding_worker().weights, Component::kDraft).count(), 1'665'242'272LL);
  EXPECT_EQ((mtp.binding_worker().weights.total - plain.binding_worker().weights.total).count(), 1'665'242'272LL);
  EXPECT_EQ(mtp.binding_worker().kv.layers.size(), 62U);
  EXPECT_EQ(mtp.binding_worker().kv.layers.back().token_bytes.count(), 576 * 2);
  EXPECT_EQ(mtp.needed.count() * 61, plain.needed.count() * 62);
  // The checkpoint is the same checkpoint.
  EXPECT_EQ(checkpoint_bytes(model_as_served(m, d)), checkpoint_bytes(m));
}

// With two pipeline stages the drafter sits on the last one and keeps an embedding of its own
// (_maybe_share_embeddings shares only with a single stage): 129,280 / 4 x 7168 x 2 B at TP 4.
TEST(Speculative, MtpOnTheLastStageOnly) {
  const ModelSpec m = test::bundled("deepseek-ai/DeepSeek-V3");
  Deployment d;
  d.tensor_parallel_size = 4;
  d.pipeline_parallel_size = 2;
  d.speculative.method = SpeculativeMethod::kMtp;
  d.speculative.num_speculative_tokens = 2;
  const ModelSpec served = model_as_served(m, d);
  EXPECT_EQ(component(weights_per_gpu(served, make_parallel_layout(served, d, 0)), Component::kDraft).count(), 0);
  Deployment single = d;
  single.pipeline_parallel_size = 1;
  const ModelSpec shared = model_as_served(m, single);
  const Bytes last = component(weights_per_gpu(served, make_parallel_layout(served, d, 1)), Component::kDraft);
  const Bytes one_stage = component(weights_per_gpu(shared, make_parallel_layout(shared, single, 0)), Component::kDraft);
  EXPECT_EQ((last - one_stage).count(), 129'280LL / 4 * 7168 * 2);
  // Before vLLM 0.17 (#34385) the layer's shared_head.head stayed the draft's own: 129,280 / 4 x 7168 x 2 B.
  const ModelSpec own_head = model_as_served(m, single, load_vllm_profile("0.16", test::configs()).speculative);
  EXPECT_EQ((component(weights_per_gpu(own_head, make_parallel_layout(own_head, single, 0)), Component::kDraft) -
             one_stage)
                .count(),
            129'280LL / 4 * 7168 * 2);
  // A model without next-n layers has nothing to draft with.
  test::expect_input_error([&] { (void)model_as_served(test::bundled("Qwen/Qwen3-32B"), d); },
                           "has no MTP / next-n layers");
}

// Hybrid models: every draft token holds one more recurrent-state page per request
// (MambaSpec.num_speculative_blocks = num_speculative_tokens, any method). Qwen3-Next has 36 linear-
// attention layers beside 12 full ones, grouped twelve to a group: three more state pages per layer
// with 3 draft tokens, 3 x 36 pages in all.
TEST(Speculative, HybridModelsHoldAStatePagePerDraftToken) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-Next-80B-A3B-Instruct");
  const GpuSpec h200 = load_gpu_preset("h200", test::configs());
  Deployment d;
  d.tensor_parallel_size = 4;
  d.max_model_len = 65536;
  const FitResult plain = fit(m, h200, d, newest());
  d.speculative.method = SpeculativeMethod::kNgram;
  d.speculative.num_speculative_tokens = 3;
  const FitResult drafted = fit(m, h200, d, newest());
  Bytes page;
  for (const auto& l : drafted.binding_worker().kv.layers) {
    if (l.kind == AttentionKind::kMamba) page = l.state_bytes;
  }
  ASSERT_GT(page.count(), 0);
  EXPECT_EQ((drafted.needed - plain.needed).count(), 3 * 36 * page.count());
}

// EAGLE-3 head yuhuili/EAGLE3-LLaMA3.1-Instruct-8B on Llama-3.1-8B-Instruct (llama_eagle3.py; H 4096,
// 32 heads and 8 KV heads of 128, I 14336, draft vocabulary 32,000; the head in the target's bf16):
//   qkv_proj    [4096 + 1024 + 1024, 2H = 8192]  (layer 0 reads [embeds, hidden])   50,331,648
//   o_proj      [4096, 4096]                                                        16,777,216
//   gate_up     [2 x 14336, 4096], down [4096, 14336]                              176,160,768
//   lm_head     [32000, 4096] (ParallelLMHead; 32,000 is a multiple of 64)         131,072,000
//   = 374,341,632 elements split over TP; replicated: fc [4096, 3 x 4096] 50,331,648, the
//   input, post-attention, hidden and final norms 4 x 4096 = 16,384 (all x 2 B), draft_id_to_target_id
//   int64 [32000] = 256,000 B, and the head's own rotary cache (2048 positions x 128, base 10,000, unlike
//   the target's 131,072-position llama3 cache): 262,144 x 2 B.
//   TP 1: 748,683,264 + 100,663,296 + 32,768 + 256,000 + 524,288 = 850,159,616 B
//   TP 8: 748,683,264 / 8 + 101,476,352 = 195,061,760 B
// The embedding is the target's (the checkpoint holds none: has_own_embed_tokens stays False). Its
// layer is model.layers.32, a full-attention layer like the target's: 33 layers of 8 KV heads x 128 x 2
// x 2 B = 4096 B per token at TP 1 (512 at TP 8).
TEST(Speculative, Eagle3HeadForLlama31_8b) {
  const ModelSpec target = test::bundled("meta-llama/Llama-3.1-8B-Instruct");
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  Deployment d;
  const FitResult plain = fit(target, h100, d, newest());
  d.speculative.method = SpeculativeMethod::kEagle3;
  d.speculative.num_speculative_tokens = 3;
  d.speculative.draft_model = std::make_shared<const ModelSpec>(test::bundled("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"));
  const FitResult tp1 = fit(target, h100, d, newest());
  EXPECT_EQ(component(tp1.binding_worker().weights, Component::kDraft).count(), 850'159'616LL);
  EXPECT_EQ((tp1.binding_worker().weights.total - plain.binding_worker().weights.total).count(), 850'159'616LL);
  ASSERT_EQ(tp1.binding_worker().kv.layers.size(), 33U);
  EXPECT_EQ(tp1.binding_worker().kv.layers.back().index, 32);
  EXPECT_EQ(tp1.needed.count() * 32, plain.needed.count() * 33);
  EXPECT_EQ(tp1.binding_worker().kv.bytes_per_token().count(), 33 * 4096);
  const auto said = [](const FitResult& r, const std::string& text) {
    return std::any_of(r.warnings.begin(), r.warnings.end(), [&](const Notice& w) {
      return w.code == NoticeCode::kSpeculativeDecodingEstimate && w.text.find(text) != std::string::npos;
    });
  };
  EXPECT_TRUE(said(tp1, "taken to hold no embed_tokens")) << "the embedding assumption is labelled";
  d.tensor_parallel_size = 8;
  const FitResult tp8 = fit(target, h100, d, newest());
  EXPECT_EQ(component(tp8.binding_worker().weights, Component::kDraft).count(), 195'061'760LL);
  EXPECT_EQ(tp8.binding_worker().kv.bytes_per_token().count(), 33 * 512);
  // The head is not quantized by --quantization (get_draft_quant_config reads the draft's own config).
  d.quantization = OnlineQuantization::kFp8;
  EXPECT_EQ(component(fit(target, h100, d, newest()).binding_worker().weights, Component::kDraft).count(),
            195'061'760LL);
  // draft_tensor_parallel_size: 1 is accepted and changes nothing (the global TP group shards the head);
  // any other size but the target's is vLLM's ValueError.
  d.quantization = OnlineQuantization::kNone;
  d.speculative.draft_tensor_parallel_size = 1;
  const FitResult draft_tp1 = fit(target, h100, d, newest());
  EXPECT_EQ(component(draft_tp1.binding_worker().weights, Component::kDraft).count(), 195'061'760LL);
  EXPECT_TRUE(said(draft_tp1, "global TP group"));
  d.speculative.draft_tensor_parallel_size = 2;
  test::expect_input_error([&] { (void)fit(target, h100, d, newest()); }, "cannot be other value than 1");
}

// The profile run with speculative decoding (GPUModelRunner, vLLM 0.22 / main 2026-05): _dummy_sampler_run
// runs the rejection sampler on R = min(T, S) requests of one draft token each, whatever
// num_speculative_tokens is; its peak (sample_recovered_tokens) holds logits [2R, V] and bonus logits
// [R, V] in the logits dtype, and fp32 [R, V] raw logprobs, target logits, their clone, probabilities, q
// and inv_q: R x V x (3 x 2 + 24) B. Llama-3.1-8B on an H100 (T 8192, S 1024): 1024 x 128,256 x 30 =
// 3,940,024,320 B, above the fitted sampler (15.3 x 1024 x 128,256 = 2,009,412,403 B), so it is the peak.
// _dummy_run then runs the EAGLE-3 head's dummy pass on the T tokens with the target's output and three
// auxiliary hidden states referenced: 1.45 x 8192 x (2 x 14,336 + 14,336) x 2 + 4 x 8192 x 4096 x 2 =
// 1,021,732,454 + 268,435,456 = 1,290,167,910 B; with S 8 the samplers are small and that pass is the peak.
TEST(Speculative, ProfileRunHoldsTheRejectionSamplerAndTheDrafterPass) {
  const ModelSpec target = test::bundled("meta-llama/Llama-3.1-8B-Instruct");
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  const VllmProfile v022 = load_vllm_profile("0.22", test::configs());
  Deployment d;
  const FitResult plain = fit(target, h100, d, v022);
  ASSERT_EQ(plain.scheduler.max_num_batched_tokens, 8192);
  ASSERT_EQ(plain.scheduler.max_num_seqs, 1024);
  EXPECT_EQ(plain.binding_worker().overheads.activation_peak.count(), 2'009'412'403LL);
  d.speculative.method = SpeculativeMethod::kEagle3;
  d.speculative.num_speculative_tokens = 3;
  d.speculative.draft_model = std::make_shared<const ModelSpec>(test::bundled("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"));
  const OverheadEstimate eagle3 = fit(target, h100, d, v022).binding_worker().overheads;
  EXPECT_EQ(eagle3.rejection_sampler.count(), 3'940'024'320LL);
  EXPECT_EQ(eagle3.drafter_pass.count(), 1'290'167'910LL);
  EXPECT_EQ(eagle3.activation_peak.count(), 3'940'024'320LL);
  // num_speculative_tokens does not change the profiled peak (the dummy passes run one after another).
  d.speculative.num_speculative_tokens = 1;
  EXPECT_EQ(fit(target, h100, d, v022).binding_worker().overheads.activation_peak, eagle3.activation_peak);
  d.max_num_seqs = 8;
  EXPECT_EQ(fit(target, h100, d, v022).binding_worker().overheads.activation_peak.count(), 1'290'167'910LL);
  // n-gram proposals run no drafter pass, but the rejection sampler's dummy run all the same.
  Deployment ngram;
  ngram.speculative.method = SpeculativeMethod::kNgram;
  ngram.speculative.num_speculative_tokens = 3;
  const OverheadEstimate n = fit(target, h100, ngram, v022).binding_worker().overheads;
  EXPECT_EQ(n.drafter_pass.count(), 0);
  EXPECT_EQ(n.activation_peak.count(), 3'940'024'320LL);
  // vLLM 0.11 (@ 96ebcaa3a): R x V x (2 x 2 + 8) = 1,576,009,728 B, below its fitted sampler (37.1 B per
  // logit), which stays the peak.
  const VllmProfile v011 = load_vllm_profile("0.11", test::configs());
  const OverheadEstimate old = fit(target, h100, ngram, v011).binding_worker().overheads;
  EXPECT_EQ(old.rejection_sampler.count(), 1'576'009'728LL);
  EXPECT_EQ(old.activation_peak, fit(target, h100, Deployment{}, v011).binding_worker().overheads.activation_peak);
}

// A head whose checkpoint was read: one that stores embed_tokens keeps them (counted, and said to be
// shared only if identical to the target's: 128,256 x 4096 x 2 B at TP 1); one without lm_head takes
// the target's. The embedding is kept on a second pipeline stage whatever the checkpoint holds.
TEST(Speculative, EagleHeadCheckpointDecidesWhatIsShared) {
  namespace fs = std::filesystem;
  const ModelSpec target = test::bundled("meta-llama/Llama-3.1-8B-Instruct");
  const fs::path dir = fs::temp_directory_path() / ("gpubudget-eagle-head-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(fs::path(test::configs().root) / "models/yuhuili__EAGLE3-LLaMA3.1-Instruct-8B/config.json",
                dir / "config.json", fs::copy_options::overwrite_existing);
  test::write_safetensors(dir / "model.safetensors", {{"model.embed_tokens.weight", "F16", {4}}, {"fc.weight", "F16", {4}}});
  Deployment d;
  d.speculative.method = SpeculativeMethod::kEagle3;
  d.speculative.num_speculative_tokens = 2;
  d.speculative.draft_model = std::make_shared<const ModelSpec>(load_model(dir.string(), test::configs()));
  ASSERT_TRUE(d.speculative.draft_model->eagle_head);
  EXPECT_EQ(d.speculative.draft_model->eagle_head->stores_embedding, true);
  EXPECT_EQ(d.speculative.draft_model->eagle_head->stores_lm_head, false);
  const ModelSpec served = model_as_served(target, d);
  // 850,159,616 B with its own embedding [128256, 4096] and without its own head [32000, 4096].
  EXPECT_EQ(component(weights_per_gpu(served, make_parallel_layout(served, d, 0)), Component::kDraft).count(),
            850'159'616LL + 128'256LL * 4096 * 2 - 32'000LL * 4096 * 2);
  fs::remove_all(dir);
}

// The EAGLE-3 MLA head for Kimi-K2.5 (tests/data/configs/kimi-k2.5-eagle3-mla: TorchSpec's
// kimi_k25_eagle3_mla.json) beside nvidia/Kimi-K2.5-NVFP4 at TP 8, as deepseek_eagle3.py builds it
// (DeepseekV2Eagle3DecoderLayer; H 7168, 64 heads, q_lora 1536, kv_lora 512, nope 128, rope 64, v 128,
// dense I 18432, vocabulary and draft vocabulary 163,840; the head in the target's bf16):
//   split over TP 8: q_b_proj [64 x 192, 1536] / 8 = 2,359,296; kv_b_proj [64 x 256, 512] / 8 =
//   1,048,576; o_proj [7168, 64 x 128] / 8 = 7,340,032; gate_up [2 x 18432, 7168] / 8 = 33,030,144;
//   down [7168, 18432] / 8 = 16,515,072; lm_head [163840, 7168] / 8 = 146,800,640: 207,093,760 elements;
//   replicated: fused_qkv_a_proj [1536 + 576, 2H = 14336] (layer 0 reads [embeds, hidden]) 30,277,632,
//   fc [7168, 3 x 7168] 154,140,672, q_a_layernorm 1536, kv_a_layernorm 512, input, post-attention,
//   hidden and final norms 4 x 7168: 184,449,024 elements;
//   (207,093,760 + 184,449,024) x 2 B = 783,085,568 B, draft_id_to_target_id int64 [163840] 1,310,720 B,
//   and its own deepseek_yarn cache of 4096 x 64 positions x 64 fp32 = 67,108,864 B: 851,505,152 B.
// No MoE although the target is one, no next-n layer; the embedding is the target's (config only). Its
// one layer is an MLA KV layer of 576 x 2 B like the target's 61: the need grows by exactly 62/61.
TEST(Speculative, Eagle3MlaHeadForKimiK25) {
  const ModelSpec target = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  const ModelSpec head = load_model(test::data_dir() + "/configs/kimi-k2.5-eagle3-mla", test::configs());
  ASSERT_TRUE(head.eagle_head);
  EXPECT_TRUE(head.eagle_head->draft_only_architecture);
  ASSERT_EQ(head.layers.size(), 1U);
  EXPECT_FALSE(head.layers[0].is_moe);
  EXPECT_TRUE(head.mtp_layers.empty());
  EXPECT_TRUE(head.unmodelled_config_keys.empty());
  const GpuSpec gpu = load_gpu_preset("rtx-pro-6000", test::configs());
  Deployment d;
  d.tensor_parallel_size = 8;
  d.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
  d.max_model_len = 65536;
  const FitResult plain = fit(target, gpu, d, newest());
  d.speculative.method = SpeculativeMethod::kEagle3;
  d.speculative.num_speculative_tokens = 3;
  d.speculative.draft_model = std::make_shared<const ModelSpec>(head);
  const FitResult drafted = fit(target, gpu, d, newest());
  EXPECT_EQ(component(drafted.binding_worker().weights, Component::kDraft).count(), 851'505'152LL);
  EXPECT_EQ((drafted.binding_worker().weights.total - plain.binding_worker().weights.total).count(), 851'505'152LL);
  ASSERT_EQ(drafted.binding_worker().kv.layers.size(), 62U);
  EXPECT_EQ(drafted.binding_worker().kv.layers.back().index, 61);
  EXPECT_EQ(drafted.binding_worker().kv.layers.back().token_bytes.count(), 576 * 2);
  EXPECT_EQ(drafted.needed.count() * 61, plain.needed.count() * 62);
  const auto said = [&](const std::string& text) {
    return std::any_of(drafted.warnings.begin(), drafted.warnings.end(), [&](const Notice& w) {
      return w.code == NoticeCode::kSpeculativeDecodingEstimate && w.text.find(text) != std::string::npos;
    });
  };
  EXPECT_TRUE(said("rotary cache is counted as its own (67108864 B"));
  EXPECT_TRUE(said("taken to hold no embed_tokens"));
  // EAGLE-1 has no DeepSeek head; a whole DeepSeek model is no head; an MLA head needs an MLA target.
  d.speculative.method = SpeculativeMethod::kEagle;
  test::expect_input_error([&] { (void)fit(target, gpu, d, newest()); }, "give method eagle3");
  d.speculative.method = SpeculativeMethod::kEagle3;
  d.speculative.draft_model = std::make_shared<const ModelSpec>(test::bundled("deepseek-ai/DeepSeek-V3"));
  test::expect_input_error([&] { (void)fit(target, gpu, d, newest()); }, "a whole DeepSeek model");
  d.speculative.draft_model = std::make_shared<const ModelSpec>(head);
  test::expect_input_error(
      [&] { (void)fit(test::bundled("meta-llama/Llama-3.1-8B-Instruct"), gpu, d, newest()); }, "without MLA layers");
  // Served as a model of its own it is refused like the Llama heads.
  test::expect_input_error([&] { (void)fit(head, gpu, Deployment{}, newest()); }, "a draft-only architecture");
}

// method draft_model: Qwen/Qwen3-0.6B drafting for Qwen/Qwen3-8B (draft_model.py: a whole model, its own
// embedding, no sharing). Per draft layer (H 1024, 16 heads and 8 KV heads of 128, I 3072):
//   qkv [4096, 1024] 4,194,304 + o [1024, 2048] 2,097,152 + q/k norms 256 + gate_up [6144, 1024]
//   6,291,456 + down [1024, 3072] 3,145,728 + 2 norms 2048 = 15,730,944 elements, x 28 layers
//   = 440,466,432; the tied embedding [151936, 1024] = 155,582,464; the final norm 1024.
//   = 596,049,920 elements x 2 B = 1,192,099,840 B at TP 1. Its rotary cache (40,960 x 128, base 1e6)
//   is the target's (get_rope shares one per setting).
// Its 28 layers have the target's KV shape (8 x 128): one group of 36 + 28 layers of 4096 B per token.
TEST(Speculative, DraftModelQwen3_06bForQwen3_8b) {
  const ModelSpec target = test::bundled("Qwen/Qwen3-8B");
  Deployment d;
  d.speculative.method = SpeculativeMethod::kDraftModel;
  d.speculative.num_speculative_tokens = 3;
  d.speculative.draft_model = std::make_shared<const ModelSpec>(test::bundled("Qwen/Qwen3-0.6B"));
  const FitResult r = fit(target, load_gpu_preset("h100", test::configs()), d, newest());
  EXPECT_EQ(component(r.binding_worker().weights, Component::kDraft).count(), 1'192'099'840LL);
  EXPECT_EQ(r.binding_worker().kv.bytes_per_token().count(), (36 + 28) * 4096);
  EXPECT_EQ(r.binding_worker().kv.layers.size(), 64U);
  // vLLM's refusals: another vocabulary, another draft TP, and what is not modelled.
  test::expect_input_error([&] { (void)model_as_served(test::bundled("meta-llama/Llama-3.1-8B"), d); },
                           "should have the same vocabulary size");
  Deployment tp = d;
  tp.tensor_parallel_size = 2;
  tp.speculative.draft_tensor_parallel_size = 1;
  test::expect_input_error([&] { (void)model_as_served(target, tp); }, "must be the same");
  Deployment pp = d;
  pp.pipeline_parallel_size = 2;
  test::expect_input_error([&] { (void)model_as_served(target, pp); }, "--pipeline-parallel-size > 1 is not modelled");
  // An EAGLE head is no draft_model, a Qwen3 model no EAGLE head, and Medusa is refused.
  Deployment head = d;
  head.speculative.draft_model = std::make_shared<const ModelSpec>(test::bundled("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"));
  test::expect_input_error([&] { (void)model_as_served(test::bundled("meta-llama/Llama-3.1-8B-Instruct"), head); },
                           "an EAGLE head as a draft_model");
  Deployment eagle = d;
  eagle.speculative.method = SpeculativeMethod::kEagle3;
  test::expect_input_error([&] { (void)model_as_served(target, eagle); }, "the EAGLE heads modelled are vLLM's Llama");
  Deployment medusa = d;
  medusa.speculative.method = SpeculativeMethod::kMedusa;
  test::expect_input_error([&] { (void)model_as_served(target, medusa); }, "is not a Medusa draft");
}

// method medusa (medusa.py Medusa, MedusaConfig): heads for Llama-3.1-8B (H 4096, vocab 128,256, bf16)
// in the format vLLM reads (model_type "medusa"; medusa_num_heads and medusa_num_layers are renamed
// num_heads and num_hidden_layers), 3 speculative tokens at TP 2. MedusaConfig.num_lookahead_tokens
// makes num_heads 3, whatever the checkpoint's 5. Per rank:
//   3 ResidualBlocks of one nn.Linear(4096, 4096) with bias, whole: 3 x (4096 x 4096 + 4096) x 2 B =
//   100,687,872 B;
//   3 ParallelLMHead of 128,256 rows (a multiple of 64) split over 2: 3 x 64,128 x 4096 x 2 B =
//   1,576,009,728 B;
// = 1,676,697,600 B. No attention: the KV cache per token is the target's.
// With original_lm_head and truncated_vocab_size 32,000 one head of 32,000 / 2 rows is shared:
//   100,687,872 + 16,000 x 4096 x 2 = 231,759,872 B.
TEST(Speculative, MedusaHeadsForLlama31_8b) {
  const std::string config = R"({"model_type": "medusa", "architectures": ["MedusaModel"], "hidden_size": 4096,
    "vocab_size": 128256, "medusa_num_heads": 5, "medusa_num_layers": 1, "medusa_fc_bias": true,
    "max_paths": 64, "topk": 10, "torch_dtype": "bfloat16"})";
  const ModelSpec heads = parse_model_config(config, "", "medusa/config.json");
  ASSERT_TRUE(heads.medusa);
  EXPECT_EQ(heads.medusa->checkpoint_heads, 5);
  EXPECT_TRUE(heads.unmodelled_config_keys.empty());
  const ModelSpec target = test::bundled("meta-llama/Llama-3.1-8B-Instruct");
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  Deployment d;
  d.tensor_parallel_size = 2;
  d.max_model_len = 32768;
  const FitResult plain = fit(target, h100, d, newest());
  d.speculative.method = SpeculativeMethod::kMedusa;
  d.speculative.num_speculative_tokens = 3;
  d.speculative.draft_model = std::make_shared<const ModelSpec>(heads);
  const FitResult drafted = fit(target, h100, d, newest());
  EXPECT_EQ(component(drafted.binding_worker().weights, Component::kDraft).count(), 1'676'697'600LL);
  EXPECT_EQ((drafted.binding_worker().weights.total - plain.binding_worker().weights.total).count(), 1'676'697'600LL);
  EXPECT_EQ(drafted.binding_worker().kv.bytes_per_token(), plain.binding_worker().kv.bytes_per_token());
  EXPECT_TRUE(std::any_of(drafted.warnings.begin(), drafted.warnings.end(), [](const Notice& w) {
    return w.code == NoticeCode::kSpeculativeDecodingEstimate &&
           w.text.find("vLLM builds 3 Medusa heads (num_speculative_tokens), the checkpoint has 5") !=
               std::string::npos;
  }));

  const std::string shared_head = R"({"model_type": "medusa", "hidden_size": 4096, "vocab_size": 128256,
    "num_heads": 3, "num_hidden_layers": 1, "medusa_fc_bias": true, "original_lm_head": true,
    "truncated_vocab_size": 32000})";
  d.speculative.draft_model = std::make_shared<const ModelSpec>(parse_model_config(shared_head, "", "m/config.json"));
  const FitResult one_head = fit(target, h100, d, newest());
  EXPECT_EQ(component(one_head.binding_worker().weights, Component::kDraft).count(), 231'759'872LL);

  // The heads read the target's hidden states; a Medusa config is no model of its own.
  test::expect_input_error([&] { (void)model_as_served(test::bundled("meta-llama/Llama-3.1-70B"), d); },
                           "has hidden_size 4096, the target 8192");
  test::expect_input_error([&] { (void)fit(heads, h100, Deployment{}, newest()); }, "a Medusa draft");
  Deployment as_draft_model = d;
  as_draft_model.speculative.method = SpeculativeMethod::kDraftModel;
  test::expect_input_error([&] { (void)model_as_served(target, as_draft_model); }, "give method medusa");
}

// VLLM_MLA_DISABLE=1 on DeepSeek-V3 at TP 8 (ModelConfig.use_mla false; deepseek_v2.py
// DeepseekV2Attention): each of the 61 layers caches K and V for its 128 / 8 = 16 local heads of
// qk_nope 128 + qk_rope 64 = 192 elements, 2 x 16 x 192 x 2 B = 12,288 B per token (MLA: 576 x 2 =
// 1,152). The weights lose only MLAAttention's bf16 W_UK_T / W_UV copies of the fp8 kv_b_proj:
// 61 x 16 x (128 + 128) x 512 x 2 B = 255,852,544 B. With MTP the next-n layer is built the same way.
TEST(MlaDisabled, DeepSeekV3RunsMultiHeadAttention) {
  const ModelSpec m = test::bundled("deepseek-ai/DeepSeek-V3");
  const GpuSpec h200 = load_gpu_preset("h200", test::configs());
  Deployment d;
  d.tensor_parallel_size = 8;
  d.max_model_len = 65536;  // fits with MLA, not as multi-head attention (12,288 x 61 B a token)
  const FitResult mla = fit(m, h200, d, newest());
  d.mla_disabled = true;
  const FitResult mha = fit(m, h200, d, newest());
  ASSERT_EQ(mha.binding_worker().kv.layers.size(), 61U);
  for (const auto& layer : mha.binding_worker().kv.layers) EXPECT_EQ(layer.token_bytes.count(), 12'288);
  EXPECT_EQ(mla.binding_worker().kv.bytes_per_token().count(), 61 * 1'152);
  EXPECT_EQ((mla.binding_worker().weights.total - mha.binding_worker().weights.total).count(), 255'852'544LL);
  // Keeping MLA is the remedy, and reaches what the MLA budget reaches.
  const auto remedies = find_remedies(m, {h200}, d, newest(), mha);
  EXPECT_TRUE(std::any_of(remedies.begin(), remedies.end(), [&](const Remedy& r) {
    return r.change == "MLA kept (unset VLLM_MLA_DISABLE)" && r.reaches_target && r.max_model_len == 65536;
  }));
  EXPECT_TRUE(mla.kv_fits);
  EXPECT_FALSE(mha.kv_fits);
  d.speculative.method = SpeculativeMethod::kMtp;
  d.speculative.num_speculative_tokens = 1;
  const FitResult mtp = fit(m, h200, d, newest());
  EXPECT_EQ(mtp.binding_worker().kv.bytes_per_token().count(), 62 * 12'288);
  // Sparse attention has no such path modelled; a model without MLA is unchanged.
  test::expect_input_error([&] { (void)model_as_served(test::bundled("deepseek-ai/DeepSeek-V3.2"), d); },
                           "has no multi-head attention path");
  Deployment llama;
  llama.mla_disabled = true;
  const ModelSpec l = test::bundled("meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(fit(l, h200, llama, newest()).needed, fit(l, h200, Deployment{}, newest()).needed);
}

// An EAGLE head is refused as a model of its own (vLLM builds it only beside a target).
TEST(Speculative, DraftOnlyArchitectureIsNoTarget) {
  const std::string config = R"({"architectures": ["Eagle3LlamaForCausalLM"], "model_type": "llama",
    "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
    "num_hidden_layers": 1, "vocab_size": 128256, "draft_vocab_size": 32000, "max_position_embeddings": 2048,
    "torch_dtype": "float16"})";
  const ModelSpec head = parse_model_config(config, "", "eagle3/config.json");
  ASSERT_TRUE(head.eagle_head);
  EXPECT_TRUE(head.eagle_head->draft_only_architecture);
  EXPECT_EQ(head.eagle_head->draft_vocab_size, 32000);
  EXPECT_TRUE(head.unmodelled_config_keys.empty());
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  test::expect_input_error([&] { (void)fit(head, h100, Deployment{}, newest()); }, "a draft-only architecture");
  // Every registry name vLLM maps to Eagle3LlamaForCausalLM (registry.py _SPECULATIVE_DECODING_MODELS) is one.
  for (const std::string arch : {"Eagle3Qwen3vlForCausalLM", "Eagle3Qwen2_5vlForCausalLM", "Eagle3MiniMaxM2ForCausalLM",
                                 "PEagleDraftModel"}) {
    std::string renamed = config;
    renamed.replace(renamed.find("Eagle3LlamaForCausalLM"), std::string("Eagle3LlamaForCausalLM").size(), arch);
    const ModelSpec named = parse_model_config(renamed, "", "eagle3/config.json");
    ASSERT_TRUE(named.eagle_head) << arch;
    EXPECT_TRUE(named.eagle_head->draft_only_architecture) << arch;
  }
  // The published head says LlamaForCausalLM; its EAGLE keys mark it as a head all the same.
  test::expect_input_error(
      [&] { (void)fit(test::bundled("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"), h100, Deployment{}, newest()); },
      "its config has EAGLE keys");
}

// CUDA graphs (vllm/config/vllm.py): -O0 is OPTIMIZATION_LEVEL_00 (no compile, cudagraph_mode NONE)
// from 0.13 (#26847), the budget of --enforce-eager; an explicit cudagraph_mode wins over the level's;
// before 0.13 -O was the compile level (warned, graphs kept).
TEST(CudaGraphs, OptimizationLevelAndCudagraphMode) {
  const auto [m, h100, d] = qwen3_32b_on_h100();
  const FitResult graphs = fit(m, h100, d, newest());
  ASSERT_GT(graphs.binding_worker().overheads.cudagraph.count(), 0);
  Deployment eager = d;
  eager.enforce_eager = true;
  const FitResult none = fit(m, h100, eager, newest());
  EXPECT_EQ(none.binding_worker().overheads.cudagraph.count(), 0);
  const auto same_budget = [&](const Deployment& x, const FitResult& as, const VllmProfile& p) {
    const FitResult r = fit(m, h100, x, p);
    return r.binding_worker().kv_cache == as.binding_worker().kv_cache &&
           r.binding_worker().overheads.cudagraph == as.binding_worker().overheads.cudagraph;
  };
  const auto warned = [&](const Deployment& x, const VllmProfile& p, const std::string& text) {
    const FitResult r = fit(m, h100, x, p);
    return std::any_of(r.warnings.begin(), r.warnings.end(),
                       [&](const Notice& w) { return w.text.find(text) != std::string::npos; });
  };
  Deployment o0 = d;
  o0.optimization_level = 0;
  EXPECT_TRUE(same_budget(o0, none, newest()));
  Deployment cc_none = d;
  cc_none.cudagraph_mode = "NONE";
  EXPECT_TRUE(same_budget(cc_none, none, newest()));
  Deployment o0_piecewise = o0;  // explicit -cc wins over -O0
  o0_piecewise.cudagraph_mode = "PIECEWISE";
  // PIECEWISE alone: the 51 piecewise graphs and no full ones, 50 extra graphs of the calibrated 100.
  const VllmProfile p = newest();
  const FitResult piecewise = fit(m, h100, o0_piecewise, p);
  EXPECT_EQ(piecewise.cuda_graphs_piecewise, 51);
  EXPECT_EQ(piecewise.cuda_graphs_full, 0);
  EXPECT_EQ(piecewise.binding_worker().overheads.cudagraph.count(),
            (p.overheads.cudagraph_base + p.overheads.cudagraph_per_layer * 64 * 50 / 100).count());
  EXPECT_TRUE(warned(o0_piecewise, newest(), "CUDA graphs: 51 piecewise and 0 full captures (PIECEWISE)"));
  Deployment o1 = d;
  o1.optimization_level = 1;
  EXPECT_TRUE(warned(o1, newest(), "51 piecewise and 0 full captures (PIECEWISE)"));
  Deployment o3 = d;
  o3.optimization_level = 3;
  EXPECT_TRUE(same_budget(o3, graphs, newest()));
  EXPECT_FALSE(warned(o3, newest(), "CUDA graph"));
  // vLLM 0.11.1: -O0 is compilation level 0; its graphs are not modelled, so they are kept and said so.
  const VllmProfile old = load_vllm_profile("0.11.1", test::configs());
  const FitResult old_graphs = fit(m, h100, d, old);
  EXPECT_TRUE(same_budget(o0, old_graphs, old));
  EXPECT_TRUE(warned(o0, old, "reads -O as the torch.compile level"));
}

// The remedies consider the new levers: fewer LoRA slots, a lower rank, fewer CUDA graphs, no drafter.
TEST(Remedies, LaunchOptionLevers) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-32B");
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  Deployment d;
  d.lora = lora(8, 64);  // 8.3 GiB of slots: nothing left for the KV cache on an 80 GiB H100
  const FitResult r = fit(m, h100, d, newest());
  ASSERT_FALSE(r.fits);
  bool slots = false, rank = false, graphs = false;
  for (const auto& remedy : find_remedies(m, {h100}, d, newest(), r)) {
    slots = slots || (remedy.change == "4 LoRA slots" && remedy.flags == std::vector<std::string>{"--max-loras", "4"});
    rank = rank || remedy.change == "LoRA rank 32";
    // 0.22 charges the graphs: capturing up to 64 tokens (11 + 11 graphs, 20 extra against 100) is a lever.
    graphs = graphs || (remedy.change == "CUDA graphs up to 64 tokens" &&
                        remedy.flags == std::vector<std::string>{"--max-cudagraph-capture-size", "64"});
  }
  EXPECT_TRUE(slots && rank && graphs);
  const ModelSpec v3 = test::bundled("deepseek-ai/DeepSeek-V3");
  Deployment mtp;
  mtp.tensor_parallel_size = 8;
  mtp.speculative.method = SpeculativeMethod::kMtp;
  mtp.speculative.num_speculative_tokens = 1;
  mtp.gpu_memory_utilization = 0.69;  // the drafter's 1.55 GiB decide whether the full length fits
  const GpuSpec h200 = load_gpu_preset("h200", test::configs());
  const FitResult drafted = fit(v3, h200, mtp, newest());
  ASSERT_FALSE(drafted.fits);
  bool no_draft = false;
  for (const auto& remedy : find_remedies(v3, {h200}, mtp, newest(), drafted)) {
    no_draft = no_draft || (remedy.change == "no speculative decoding (drop --speculative-config)" && remedy.flags.empty());
  }
  EXPECT_TRUE(no_draft);
}

}  // namespace
}  // namespace gpubudget

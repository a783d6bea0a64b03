// Per-GPU weights against hand-derived byte counts and real checkpoints / vLLM logs.
#include "gpubudget/weights.h"

#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "test_support.h"

namespace gpubudget {
namespace {

using test::layout_for;

using test::component;

TEST(Weights, Llama31_8BIsItsParameterCountTimesTwo) {
  // Llama-3.1-8B has 8,030,261,248 parameters, all bf16, vocab 128256 already a multiple of 64.
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-8B");
  const WeightsBreakdown w = weights_per_gpu(m, layout_for(m, 1));
  // Plus one shared rotary cos/sin cache: 131072 positions x 128 rotary dims x 2 bytes (bf16).
  EXPECT_EQ(component(w, Component::kBuffers).count(), 131072LL * 128 * 2);
  EXPECT_EQ((w.total - component(w, Component::kBuffers)).count(), 8'030'261'248LL * 2);
  // source.json: the checkpoint's files hold 16,060,556,376 bytes; the rest is safetensors headers.
  const std::int64_t files = 16'060'556'376LL;
  const std::int64_t tensors = (w.total - component(w, Component::kBuffers)).count();
  EXPECT_GT(files - tensors, 0);
  EXPECT_LT(files - tensors, 1 << 20);
}

TEST(Weights, Llama31_70BAtTp8ReplicatesOneKvHeadPerRank) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-70B");
  const WeightsBreakdown w = weights_per_gpu(m, layout_for(m, 8));
  // Per layer per rank, bf16: qkv (64/8 + 2*1)*128 x 8192, o 8192 x 8192/8, gate_up 2*28672/8 x 8192,
  // down 8192 x 28672/8, two norms of 8192. Embedding and untied head 128256/8 x 8192; final norm.
  const std::int64_t layer = 2 * ((8 + 2) * 128 * 8192 + 8192 * 1024 + 7168 * 8192 + 8192 * 3584 + 2 * 8192);
  const std::int64_t rotary_cache = 131072LL * 128 * 2;
  const std::int64_t expected = 80 * layer + 2 * (2 * 16032 * 8192) + 2 * 8192 + rotary_cache;
  EXPECT_EQ(w.total.count(), expected);
}

TEST(Weights, Gemma3RotaryCachesMatchVllmModelLoading) {
  // vLLM 0.19 "Model loading took 8.58 GiB" for gemma-3-4b-it on H100 (tests/data observation vo-058):
  // the checkpoint's ~8.01 GiB plus two rotary caches of head_dim 256 in bf16, the global one
  // stretched by rope_scaling linear x8: (131072 x 8 + 131072) x 256 x 2 bytes.
  const ModelSpec m = test::bundled("google/gemma-3-4b-it");
  const WeightsBreakdown w = weights_per_gpu(m, layout_for(m, 1));
  EXPECT_EQ(component(w, Component::kBuffers).count(), (131072LL * 8 + 131072) * 256 * 2);
  EXPECT_NEAR(to_gib(w.total), 8.58, 8.58 * 0.005);
}

TEST(Weights, KimiK25VisionTowerMatchesTheCheckpointTensorTable) {
  // Element counts from moonshotai/Kimi-K2.5 tensor_table.md (bf16), all ranks together. The NVFP4
  // checkpoint has the same vision_config and leaves vision_tower* / mm_projector* unquantized.
  const std::int64_t block = 4304LL * 1152 + 4304 + 1152LL * 4304 + 1152 + 4 * 1152 + 1152LL * 1152 + 1152 +
                             3456LL * 1152 + 3456;
  const std::int64_t tower = 27 * block + 2 * 1152 + 64LL * 64 * 1152 + 1152 + 1152LL * 3 * 14 * 14;
  const std::int64_t projector = 2 * 1152 + 4608LL * 4608 + 4608 + 7168LL * 4608 + 7168;
  const ModelSpec m = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  ASSERT_TRUE(m.vision.has_value());
  EXPECT_EQ(component(weights_per_gpu(m, layout_for(m, 1)), Component::kVision).count(), 2 * (tower + projector));
}

TEST(Weights, Llama4ScoutCheckpointAndVisionTowerToTheTensor) {
  // Element counts of the Llama 4 vision model as transformers prints them for Llama-4-Scout-17B-16E
  // (tests/data/configs/README.md): ViT layer = biased q, k, v, o of 1408 x 1408, fc1 5632 x 1408 + 5632,
  // fc2 1408 x 5632 + 1408, two LayerNorms; class token 1408, positions (336/14)^2 + 1 = 577 x 1408,
  // unfold patch linear 1408 x 588, pre/post LayerNorms, pixel-shuffle adapter fc1 4096 x 5632 and fc2
  // 4096 x 4096, projector 5120 x 4096.
  const std::int64_t vit_layer = 4 * (1408LL * 1408 + 1408) + 5632LL * 1408 + 5632 + 1408LL * 5632 + 1408 + 4 * 1408;
  const std::int64_t vision = 34 * vit_layer + 1408 + 577LL * 1408 + 1408LL * 588 + 4 * 1408 + 4096LL * 5632 +
                              4096LL * 4096 + 5120LL * 4096;
  const ModelSpec m = load_model(test::data_dir() + "/configs/llama4-scout-base/config.json", test::configs());
  ASSERT_TRUE(m.vision.has_value());
  EXPECT_EQ(component(weights_per_gpu(m, layout_for(m, 1)), Component::kVision).count(), 2 * vision);
  // The whole bf16 checkpoint: 217,283,738,720 bytes of weight files (bundled source.json of the
  // Instruct model, same architecture), which include each file's safetensors header; the tensors alone
  // must be a little less, by no more than 50 headers of a few KiB.
  const std::int64_t files = 217'283'738'720LL;
  const std::int64_t tensors = checkpoint_bytes(m).count();
  EXPECT_LT(tensors, files);
  EXPECT_GT(tensors, files - 50 * 8192);
}

TEST(Weights, Llama4VisionShardsLikeVllmAtTp8) {
  // TP8: QKV and fc1 split by output (176 of 1408 per head group, 704 of 5632), o and fc2 by input with
  // a full bias; the unfold linear, adapter fc1 and projector are column-parallel (gathered output, but
  // sharded weights), adapter fc2 row-parallel; class token, positions and LayerNorms replicated.
  const std::int64_t vit_layer = 3 * 176LL * 1408 + 3 * 176 + 1408LL * 176 + 1408 + 704LL * 1408 + 704 +
                                 1408LL * 704 + 1408 + 4 * 1408;
  const std::int64_t vision = 34 * vit_layer + 176LL * 588 + 1408 + 577LL * 1408 + 4 * 1408 + 512LL * 5632 +
                              4096LL * 512 + 640LL * 4096;
  const ModelSpec m = load_model(test::data_dir() + "/configs/llama4-scout-base/config.json", test::configs());
  EXPECT_EQ(component(weights_per_gpu(m, layout_for(m, 8)), Component::kVision).count(), 2 * vision);
}

TEST(Weights, KimiVlMoonVitAndReplicatedProjector) {
  // Kimi-VL's MoonViT has the Kimi-K2.5 block layout under plain config keys; its projector is
  // multi_modal_projector.{pre_norm, linear_1, linear_2}, ReplicatedLinear: the same on every rank.
  const std::int64_t block = 4304LL * 1152 + 4304 + 1152LL * 4304 + 1152 + 4 * 1152 + 1152LL * 1152 + 1152 +
                             3456LL * 1152 + 3456;
  const std::int64_t tower = 27 * block + 2 * 1152 + 64LL * 64 * 1152 + 1152 + 1152LL * 3 * 14 * 14;
  const std::int64_t projector = 2 * 1152 + 4608LL * 4608 + 4608 + 2048LL * 4608 + 2048;
  const ModelSpec m = load_model(test::data_dir() + "/configs/kimi-vl-a3b/config.json", test::configs());
  ASSERT_TRUE(m.vision.has_value());
  EXPECT_EQ(component(weights_per_gpu(m, layout_for(m, 1)), Component::kVision).count(), 2 * (tower + projector));
  // TP2: the ViT halves its sharded matrices (biases of row-parallel wo and fc1 stay whole), the
  // projector does not shrink.
  const std::int64_t block_tp2 = 2152LL * 1152 + 2152 + 1152LL * 2152 + 1152 + 4 * 1152 + 1152LL * 576 + 1152 +
                                 1728LL * 1152 + 1728;
  const std::int64_t tower_tp2 = 27 * block_tp2 + 2 * 1152 + 64LL * 64 * 1152 + 1152 + 1152LL * 3 * 14 * 14;
  EXPECT_EQ(component(weights_per_gpu(m, layout_for(m, 2)), Component::kVision).count(),
            2 * (tower_tp2 + projector));
}

TEST(Weights, KimiK25Nvfp4RoutedExpertsAtTp8) {
  const ModelSpec m = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  const WeightsBreakdown w = weights_per_gpu(m, layout_for(m, 8));
  // 60 MoE layers x 384 experts, I/8 = 256: w13 [512, 7168] 4-bit + fp8 scales [512, 7168/16];
  // w2 [7168, 256] 4-bit + scales [7168, 16]; 24 bytes of fp32 per-expert scalars.
  const std::int64_t per_expert = 512LL * 7168 / 2 + 512LL * 448 + 7168LL * 256 / 2 + 7168LL * 16 + 24;
  EXPECT_EQ(component(w, Component::kRoutedExperts).count(), 60 * 384 * per_expert);
  // The whole GPU: the brief's ~70 GiB; issue acceptance 69.5-72.5 GiB.
  EXPECT_GT(to_gib(w.total), 69.5);
  EXPECT_LT(to_gib(w.total), 72.5);
  // Attention is excluded from NVFP4 (bf16): fused_qkv_a replicated [2112, 7168], q_b [1536, 1536],
  // kv_b [2048, 512], o [7168, 1024], two small norms.
  const std::int64_t attention_layer = 2 * (2112LL * 7168 + 1536LL * 1536 + 2048LL * 512 + 7168LL * 1024 + 1536 + 512);
  EXPECT_EQ(component(w, Component::kAttention).count(), 61 * attention_layer);
}

TEST(Weights, KimiK25Int4AtTp1IsTheCheckpointToTheByte) {
  // source.json: the tensor table of moonshotai/Kimi-K2.5 sums to 595,148,192,736 bytes. The checkpoint
  // stores a weight_shape record (int32 [2]) for each of gate, up and down of every expert; vLLM fuses
  // gate and up into w13 and keeps two records (fp32 [2]): 60 layers x 384 experts x 8 bytes fewer.
  const ModelSpec m = test::bundled("moonshotai/Kimi-K2.5");
  const WeightsBreakdown w = weights_per_gpu(m, layout_for(m, 1));
  EXPECT_EQ((w.total - component(w, Component::kBuffers)).count(), 595'148'192'736LL - 60 * 384 * 8);
  // DeepSeek's YaRN cache, fp32: original 4096 x factor 64 positions x qk_rope_head_dim 64 x 4 bytes.
  EXPECT_EQ(component(w, Component::kBuffers).count(), 4096LL * 64 * 64 * 4);
}

TEST(Weights, KimiInt4Tp8MatchesVllmModelLoading) {
  // vLLM "Model loading took 71.16 GiB" for Kimi-K2.6 INT4 (the K2.5 architecture) at TP8 on H200,
  // as quoted in the reference weights notes.
  const ModelSpec m = test::bundled("moonshotai/Kimi-K2.5");
  EXPECT_NEAR(to_gib(weights_per_gpu(m, layout_for(m, 8)).total), 71.16, 71.16 * 0.005);
}

TEST(Weights, DeepSeekV3Fp8Tp8MatchesVllmModelLoading) {
  // vLLM 0.11.2 "Model loading took 79.739 GiB" for DeepSeek-R1-0528 (same architecture) at TP8.
  const ModelSpec m = test::bundled("deepseek-ai/DeepSeek-V3");
  const WeightsBreakdown w = weights_per_gpu(m, layout_for(m, 8));
  EXPECT_NEAR(to_gib(w.total), 79.739, 79.739 * 0.015);
  // The bf16 W_UK_T/W_UV copy of the quantized kv_b_proj: 61 layers x (128/8 heads x 256) x 512 x 2 B.
  EXPECT_EQ(component(w, Component::kExtraCopies).count(), 61LL * 16 * 256 * 512 * 2);
}

// DeepseekV2Model of a config with index_topk (V3.2, GLM-5) allocates the indexers' top-k buffer, int32
// [max_num_batched_tokens, 2048], with the model: 4096 more batched tokens are 4096 x 2048 x 4 B more.
TEST(Weights, SparseIndexerTopkBufferGrowsWithTheBatchedTokens) {
  const auto weights_at = [](std::int64_t batched) {
    Deployment d;
    d.tensor_parallel_size = 8;
    d.max_num_batched_tokens = batched;
    return fit(test::bundled("deepseek-ai/DeepSeek-V3.2"), load_gpu_preset("h200", test::configs()), d,
               load_vllm_profile("", test::configs()))
        .binding_worker()
        .weights.total;
  };
  EXPECT_EQ(weights_at(8192) - weights_at(4096), Bytes(4096LL * 2048 * 4));
}

TEST(Weights, NeverIncreaseWithTensorParallelism) {
  for (const char* id : {"meta-llama/Llama-3.1-70B", "deepseek-ai/DeepSeek-V3", "nvidia/Kimi-K2.5-NVFP4"}) {
    const ModelSpec m = test::bundled(id);
    Bytes previous = weights_per_gpu(m, layout_for(m, 1)).total;
    for (std::int64_t tp : {2, 4, 8}) {
      const Bytes current = weights_per_gpu(m, layout_for(m, tp)).total;
      EXPECT_LE(current, previous) << id << " tp " << tp;
      previous = current;
    }
  }
}

TEST(ParallelLayout, PipelineRemainderNeverLandsOnTheLastStage) {
  std::int64_t first = 0, end = 0;
  // 32 layers over 3 stages: 10 each, remainder 2 to stages -2 and -3 → [11, 11, 10].
  pipeline_stage_layers(32, 3, 0, first, end);
  EXPECT_EQ(end - first, 11);
  pipeline_stage_layers(32, 3, 1, first, end);
  EXPECT_EQ(first, 11);
  EXPECT_EQ(end - first, 11);
  pipeline_stage_layers(32, 3, 2, first, end);
  EXPECT_EQ(first, 22);
  EXPECT_EQ(end, 32);
}

TEST(ParallelLayout, RejectsTpThatDoesNotDivideHeads) {
  const ModelSpec m = test::bundled("nvidia/Kimi-K2.5-NVFP4");  // 64 heads
  Deployment d;
  d.tensor_parallel_size = 3;
  try {
    make_parallel_layout(m, d, 0);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("num_attention_heads 64 is not divisible by --tensor-parallel-size 3"),
              std::string::npos)
        << e.what();
  }
}

TEST(ParallelLayout, RejectsFp8BlockShardsSmallerThanTheBlock) {
  // DeepSeek-V3 at TP32: 2048 / 32 = 64 expert features per rank, below the 128 FP8 block; vLLM's
  // validate_fp8_block_shape refuses it. TP16 (128 per rank) is accepted.
  const ModelSpec m = test::bundled("deepseek-ai/DeepSeek-V3");
  Deployment d;
  d.tensor_parallel_size = 32;
  test::expect_input_error([&] { (void)(make_parallel_layout(m, d, 0)); }, "at --tensor-parallel-size 32 are not a multiple of the FP8 block size 128");
  d.tensor_parallel_size = 16;
  EXPECT_NO_THROW(make_parallel_layout(m, d, 0));
}

}  // namespace
}  // namespace gpubudget

namespace gpubudget {
namespace {

// Nemotron-3 Ultra's latent MoE (tests/data/configs/nemotron-3-ultra-bf16: the real config, its
// quantization config left out). vLLM's NemotronHMoE (nemotron_h.py since fcd5306f6): with
// moe_latent_size ℓ the routed experts are FusedMoE of width ℓ, w13 [E, I, ℓ] (relu2, not gated) and
// w2 [E, ℓ, I], between fc1_latent_proj [ℓ, H] and fc2_latent_proj [H, ℓ], both ReplicatedLinear; the
// router [E, H] (float32) and the shared expert (up [I_sh, H] column, down [H, I_sh] row) stay at H.
// E 512, I 5120, ℓ 2048, H 8192, I_sh 10240, bf16.
// One decoder layer's weights on a worker of `layout`.
Bytes layer_bytes(const LayerSpec& layer, const ParallelLayout& layout) {
  Bytes total;
  for (const auto& l : layer.linears) total += linear_bytes(l, layout);
  for (const auto& e : layer.experts) total += experts_bytes(e, layout);
  for (const auto& r : layer.replicated) total += Bytes(r.elements * element_bytes(r.dtype));
  return total;
}

TEST(LatentMoe, NemotronUltraExpertsWorkAtTheLatentWidth) {
  const ModelSpec m = load_model(test::data_dir() + "/configs/nemotron-3-ultra-bf16", test::configs());
  ASSERT_EQ(m.layers.size(), 108u);  // layers_block_type: 48 mamba, 48 moe, 12 attention
  const LayerSpec& moe = m.layers[1];
  const std::int64_t E = 512, I = 5120, l = 2048, H = 8192, I_sh = 10240;
  const std::int64_t experts = 2 * (E * I * l + E * l * I);  // bf16
  const std::int64_t latent_projections = 2 * (l * H + H * l);
  const std::int64_t shared = 2 * (I_sh * H + H * I_sh);
  const std::int64_t router = 4 * E * H + 4 * E;  // float32 weight and e_score_correction_bias
  const std::int64_t norm = 2 * H;
  // The whole layer at TP 1: 21,894,285,312 bytes (at the hidden width it would be 4x the experts).
  EXPECT_EQ(layer_bytes(moe, test::layout_for(m, 1)).count(), experts + latent_projections + shared + router + norm);
  // TP 8: experts and the shared expert split 8 ways, the latent projections and the router whole.
  EXPECT_EQ(layer_bytes(moe, test::layout_for(m, 8)).count(),
            experts / 8 + latent_projections + shared / 8 + router + norm);
  // NVIDIA states 1,121 GB for the bf16 checkpoint, its MTP layer included; vLLM loads no MTP weights
  // (nemotron_h.py skips `mtp.*`): one attention and one latent-MoE layer with its own norms, 11,215,609,856
  // parameters by the same shapes, 2 bytes each. The checkpoint stores the router in bf16 (the
  // 402,653,184 bytes of difference are vLLM's float32 copy).
  const double stored = static_cast<double>(checkpoint_bytes(m).count()) + 2.0 * 11'215'609'856 - 48.0 * 2 * E * H;
  EXPECT_NEAR(stored / 1.121e12, 1.0, 0.005);
  EXPECT_EQ(m.skipped_mtp_layers, 1);
}

}  // namespace
}  // namespace gpubudget

namespace gpubudget {
namespace {

// Qwen2.5-VL-7B-Instruct (qwen2_5_vl.py): the checkpoint's published total_size is 16,584,333,312 bytes
// (8,292,166,656 bf16 parameters: language model 7,615,616,512, ViT and merger 676,550,144). Per GPU,
// column-parallel weights and biases split, row-parallel weights split and their biases whole, norms and
// the Conv3d patch embedding whole; the MRoPE cos/sin cache holds 4 x 128,000 positions x 128 (mrope.py
// cache_max_position_num) in bf16 = 131,072,000 bytes on every GPU.
TEST(Qwen25Vl, WeightsPerGpuAndTheMropeCache) {
  const ModelSpec m = test::bundled("Qwen/Qwen2.5-VL-7B-Instruct");
  EXPECT_EQ(checkpoint_bytes(m).count(), 16'584'333'312LL);
  const std::int64_t rope = 4LL * 128000 * 128 * 2;
  EXPECT_EQ(component(weights_per_gpu(m, test::layout_for(m, 1)), Component::kBuffers).count(), rope);
  // Hand sums of the shards at TP 2 and 4 (each side of the tensor-parallel split counted per tensor).
  EXPECT_EQ(weights_per_gpu(m, test::layout_for(m, 2)).total.count(), 8'294'044'928LL + rope);
  EXPECT_EQ(weights_per_gpu(m, test::layout_for(m, 4)).total.count(), 4'148'900'736LL + rope);
}

// Qwen3-VL's MRoPE cache is four times the positions too: 4 x 262,144 x 128 x 2 bytes.
TEST(Qwen3Vl, TheMropeCacheHoldsFourTimesThePositions) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-VL-30B-A3B-Instruct");
  EXPECT_EQ(component(weights_per_gpu(m, test::layout_for(m, 1)), Component::kBuffers).count(), 4LL * 262144 * 128 * 2);
}

}  // namespace
}  // namespace gpubudget

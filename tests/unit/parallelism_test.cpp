// Pipeline, data, expert and decode-context parallelism as vLLM shards, heterogeneous pipelines, and
// the remedies offered when a length does not fit.
#include <cmath>

#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/remedies.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

using test::component;

FitResult run(const std::string& model, const std::string& gpu, const Deployment& d, const std::string& version = "") {
  return fit(test::bundled(model), load_gpu_preset(gpu, test::configs()), d, load_vllm_profile(version, test::configs()));
}

TEST(Pipeline, DeepSeekV3Tp8Pp2StagesFollowGetPpIndices) {
  // 61 layers over 2 stages: 30 each, the remainder layer to stage -2 (never the last): [0,31) and
  // [31,61). The embedding lives on stage 0, the LM head and final norm on stage 1. The weights notes
  // predict 38.53 GiB and 41.00 GiB per GPU.
  Deployment d;
  d.tensor_parallel_size = 8;
  d.pipeline_parallel_size = 2;
  const FitResult r = run("deepseek-ai/DeepSeek-V3", "h100", d);
  ASSERT_EQ(r.workers.size(), 2u);
  EXPECT_EQ(r.workers[0].first_layer, 0);
  EXPECT_EQ(r.workers[0].end_layer, 31);
  EXPECT_EQ(r.workers[1].first_layer, 31);
  EXPECT_EQ(r.workers[1].end_layer, 61);
  EXPECT_GT(component(r.workers[0].weights, Component::kEmbedding).count(), 0);
  EXPECT_EQ(component(r.workers[0].weights, Component::kLmHead).count(), 0);
  EXPECT_EQ(component(r.workers[1].weights, Component::kEmbedding).count(), 0);
  // 129280 padded to 129280 (a multiple of 64) / 8 x 7168 x 2 bytes.
  EXPECT_EQ(component(r.workers[1].weights, Component::kLmHead).count(), 129280LL / 8 * 7168 * 2);
  EXPECT_NEAR(to_gib(r.workers[0].weights.total), 38.53, 38.53 * 0.005);
  EXPECT_NEAR(to_gib(r.workers[1].weights.total), 41.00, 41.00 * 0.005);
  // The heavier stage has less room for KV: it binds.
  EXPECT_EQ(r.binding_worker().pp_rank, 1);
}

TEST(Pipeline, LayerPartitionOverridesTheEvenSplit) {
  Deployment d;
  d.tensor_parallel_size = 8;
  d.pipeline_parallel_size = 2;
  d.pp_layer_partition = {33, 28};
  const FitResult r = run("deepseek-ai/DeepSeek-V3", "h100", d);
  EXPECT_EQ(r.workers[0].end_layer, 33);
  EXPECT_EQ(r.workers[1].first_layer, 33);
  d.pp_layer_partition = {30, 30};
  try {
    run("deepseek-ai/DeepSeek-V3", "h100", d);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has 2 entries summing to 60"), std::string::npos) << e.what();
  }
}

TEST(Pipeline, HeterogeneousStagesEachUseTheirOwnGpu) {
  // Llama-3.1-8B over a 24 GiB and a 32 GiB card: each stage's budget is its own GPU's total x 0.92.
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-8B");
  Deployment d;
  d.pipeline_parallel_size = 2;
  const auto small = load_gpu_preset("rtx-4090", test::configs());
  const auto big = load_gpu_preset("rtx-5090", test::configs());
  const FitResult r = fit(m, std::vector<GpuSpec>{small, big}, d, load_vllm_profile("", test::configs()));
  EXPECT_EQ(r.workers[0].gpu, "rtx-4090");
  EXPECT_EQ(r.workers[1].gpu, "rtx-5090");
  EXPECT_EQ(r.workers[0].requested.count(),
            static_cast<std::int64_t>(std::ceil(static_cast<double>(small.memory.count()) * 0.92)));
  EXPECT_EQ(r.workers[1].requested.count(),
            static_cast<std::int64_t>(std::ceil(static_cast<double>(big.memory.count()) * 0.92)));
  test::expect_input_error([&] { (void)(fit(m, std::vector<GpuSpec>{small, big, big}, d, load_vllm_profile("", test::configs()))); }, "--gpu: 3 GPU presets for --pipeline-parallel-size 2");
}

TEST(ExpertParallel, RedundantExpertsAddWholeExpertsPerRank) {
  // DeepSeek-V3 TP8 + EP: 256 experts over 8 ranks = 32 each; with 32 redundant, ceil(288/8) = 36.
  const ModelSpec m = test::bundled("deepseek-ai/DeepSeek-V3");
  Deployment d;
  d.tensor_parallel_size = 8;
  d.enable_expert_parallel = true;
  const Bytes base = component(weights_per_gpu(m, make_parallel_layout(m, d, 0)), Component::kRoutedExperts);
  d.num_redundant_experts = 32;
  const Bytes more = component(weights_per_gpu(m, make_parallel_layout(m, d, 0)), Component::kRoutedExperts);
  EXPECT_EQ(more.count() * 32, base.count() * 36);
  d.enable_expert_parallel = false;
  test::expect_input_error([&] { (void)(make_parallel_layout(m, d, 0)); }, "--num-redundant-experts 32 needs --enable-expert-parallel");
}

TEST(DecodeContextParallel, DividesThePerRankKvNeedOfKimi) {
  Deployment d;
  d.tensor_parallel_size = 8;
  d.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
  const FitResult one = run("nvidia/Kimi-K2.5-NVFP4", "rtx-pro-6000", d);
  d.decode_context_parallel_size = 8;
  const FitResult eight = run("nvidia/Kimi-K2.5-NVFP4", "rtx-pro-6000", d);
  EXPECT_EQ(one.judged_max_model_len, 262144);
  EXPECT_EQ(one.needed.count(), 8 * eight.needed.count());
  EXPECT_FALSE(one.fits);
  EXPECT_TRUE(eight.fits);
}

TEST(DecodeContextParallel, ImpossibleCombinationsSayWhy) {
  Deployment d;
  d.tensor_parallel_size = 8;
  d.decode_context_parallel_size = 3;
  test::expect_input_error([&] { (void)(run("nvidia/Kimi-K2.5-NVFP4", "rtx-pro-6000", d)); }, "--decode-context-parallel-size 3 must divide --tensor-parallel-size 8");
  // gpt-oss has sliding-window layers: vLLM asserts dcp == 1 for them.
  d.tensor_parallel_size = 2;
  d.decode_context_parallel_size = 2;
  try {
    run("openai/gpt-oss-20b", "h100", d);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sliding-window"), std::string::npos) << e.what();
  }
}


TEST(DecodeContextParallel, GqaNeedsTensorParallelBeyondTheKvHeads) {
  // Llama-3.1-8B: 32 query heads, 8 KV heads. vllm/config/model.py (verify_with_parallel_config, from
  // 0.11.1) asserts tp > 8, dcp <= tp // 8 and (32 // 8) % dcp == 0 for a model without MLA.
  auto refusal = [](std::int64_t tp, std::int64_t dcp) {
    Deployment d;
    d.tensor_parallel_size = tp;
    d.decode_context_parallel_size = dcp;
    try {
      run("meta-llama/Llama-3.1-8B-Instruct", "h100", d);
      return std::string();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_NE(refusal(8, 2).find("tensor parallel size 8 must be greater than total num kv heads 8"), std::string::npos)
      << refusal(8, 2);
  EXPECT_NE(refusal(4, 2).find("above the 8 KV heads, got 4"), std::string::npos) << refusal(4, 2);
  EXPECT_EQ(refusal(16, 2), "");  // 16 // 8 = 2 ranks per KV head; 4 query heads per KV head split in 2
  EXPECT_NE(refusal(16, 4).find("at most --tensor-parallel-size 16 // 8 KV heads = 2"), std::string::npos)
      << refusal(16, 4);
  EXPECT_EQ(refusal(32, 4), "");  // 32 // 8 = 4 >= 4, and 4 % 4 == 0
  // Each rank of a DCP group keeps cdiv(M, dcp) tokens of its KV head: at TP 16 the 8 heads are held
  // twice without DCP (tp / 8 = 2 copies) and once with DCP 2, so the per-rank need halves.
  Deployment plain;
  plain.tensor_parallel_size = 16;
  Deployment split = plain;
  split.decode_context_parallel_size = 2;
  const FitResult a = run("meta-llama/Llama-3.1-8B-Instruct", "h100", plain);
  const FitResult b = run("meta-llama/Llama-3.1-8B-Instruct", "h100", split);
  EXPECT_EQ(a.needed.count(), 2 * b.needed.count());
}
TEST(EntryPoint, TheOfflineLlmClassBatchesMoreTokens) {
  // EngineArgs.get_batch_defaults: on a >= 70 GiB GPU that is not an A100, `vllm serve` defaults to
  // 8192 batched tokens and the LLM class to 16384 (1024 sequences each); on an A100, 2048 and 8192.
  Deployment d;
  const FitResult serve = run("meta-llama/Llama-3.1-8B", "h100", d);
  d.entry_point = EntryPoint::kLlm;
  const FitResult llm = run("meta-llama/Llama-3.1-8B", "h100", d);
  EXPECT_EQ(serve.scheduler.max_num_batched_tokens, 8192);
  EXPECT_EQ(llm.scheduler.max_num_batched_tokens, 16384);
  EXPECT_EQ(llm.scheduler.max_num_seqs, 1024);
  const FitResult a100 = run("meta-llama/Llama-3.1-8B", "a100-80gb", d);
  EXPECT_EQ(a100.scheduler.max_num_batched_tokens, 8192);
  EXPECT_EQ(a100.scheduler.max_num_seqs, 256);
  test::expect_input_error([&] { (void)(parse_entry_point("python")); }, "--entry-point: unsupported value \"python\" (expected serve, llm)");
}

TEST(Uncertainty, TheLengthRangeComesFromTheOverheadsErrorBar) {
  Deployment d;
  d.tensor_parallel_size = 8;
  d.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
  d.gpu_memory_utilization = 0.9;
  const FitResult r = run("nvidia/Kimi-K2.5-NVFP4", "rtx-pro-6000", d, "0.17");
  EXPECT_LT(r.max_model_len_low, r.max_model_len);
  EXPECT_GT(r.max_model_len_high, r.max_model_len);
  // The low end is the largest length for the KV budget less uncertainty x overheads (70,272 B/token
  // in blocks of 64 tokens: MLA on SM120).
  const auto& o = r.binding_worker().overheads;
  const double swing = static_cast<double>(o.activation_peak.count() + o.non_torch.count() +
                                           (o.cudagraph_charged ? o.cudagraph.count() : 0)) *
                       o.relative_uncertainty;
  const Bytes low_budget = r.binding_worker().kv_cache - Bytes(static_cast<std::int64_t>(swing));
  EXPECT_EQ(r.max_model_len_low, largest_fitting_length(r.binding_worker().kv, low_budget, 262144));
  EXPECT_EQ(r.kv_budget_swing, Bytes(static_cast<std::int64_t>(swing)));
  // A fixed KV budget has no overhead uncertainty.
  d.kv_cache_memory = gib(10);
  const FitResult fixed = run("nvidia/Kimi-K2.5-NVFP4", "rtx-pro-6000", d, "0.17");
  EXPECT_EQ(fixed.max_model_len_low, fixed.max_model_len);
  EXPECT_EQ(fixed.max_model_len_high, fixed.max_model_len);
  EXPECT_EQ(fixed.kv_budget_swing, Bytes(0));
}

TEST(Remedies, IncidentAtBf16OffersFp8WithTheSm120CaveatDcpAndTheLengthThatFits) {
  Deployment d;
  d.tensor_parallel_size = 8;
  d.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
  d.gpu_memory_utilization = 0.9;
  const ModelSpec m = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  const std::vector<GpuSpec> gpus{load_gpu_preset("rtx-pro-6000", test::configs())};
  const auto profile = load_vllm_profile("0.15", test::configs());
  const FitResult base = fit(m, gpus, d, profile);
  ASSERT_FALSE(base.fits);
  const auto remedies = find_remedies(m, gpus, d, profile, base);
  auto find = [&](const std::string& prefix) -> const Remedy* {
    for (const auto& r : remedies) {
      if (r.change.rfind(prefix, 0) == 0) return &r;
    }
    return nullptr;
  };
  const Remedy* fp8 = find("FP8 KV cache");
  ASSERT_NE(fp8, nullptr);
  EXPECT_TRUE(fp8->reaches_target);
  EXPECT_TRUE(fp8->blocked);
  EXPECT_NE(fp8->caveat.find("compute capability 12.0"), std::string::npos) << fp8->caveat;
  const Remedy* dcp = find("decode context parallel 2");
  ASSERT_NE(dcp, nullptr);
  EXPECT_TRUE(dcp->reaches_target);
  const Remedy& as_is = remedies.back();
  EXPECT_EQ(as_is.max_model_len, base.max_model_len);
  EXPECT_EQ(as_is.flags, (std::vector<std::string>{"--max-model-len", std::to_string(base.max_model_len)}));
  // Best first: the first remedy reaches 262,144 and vLLM would start with it.
  EXPECT_TRUE(remedies.front().reaches_target);
  EXPECT_FALSE(remedies.front().blocked);
}

}  // namespace
}  // namespace gpubudget

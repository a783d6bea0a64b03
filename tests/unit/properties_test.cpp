// Invariants of the physics over random valid configs (fixed seeds): the largest length never
// shrinks when there is more memory, a higher utilization, more tensor parallelism (multi-GPU, KV
// bound), more decode context parallelism or a narrower KV dtype; it equals a brute-force scan; per-GPU
// weights never grow with TP; and fits(N) holds exactly for N <= max_model_len.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

struct RandomModel {
  std::string json;
  std::int64_t heads = 0, kv_heads = 0;
};

// A Llama-, Mistral-(sliding window) or Qwen3-MoE-shaped config with random but valid geometry.
RandomModel random_config(std::mt19937_64& rng, std::int64_t max_positions) {
  auto pick = [&rng](std::initializer_list<std::int64_t> values) {
    return *(values.begin() + static_cast<std::ptrdiff_t>(rng() % values.size()));
  };
  RandomModel m;
  m.heads = pick({8, 16, 32, 64});
  m.kv_heads = m.heads / pick({1, 2, 4, 8});
  const std::int64_t head_dim = pick({64, 128});
  const std::int64_t hidden = m.heads * head_dim;
  const std::int64_t layers = 1 + static_cast<std::int64_t>(rng() % 48);
  const std::int64_t vocab = 1000 + static_cast<std::int64_t>(rng() % 200000);
  const std::int64_t intermediate = hidden * pick({2, 3, 4});
  const int kind = static_cast<int>(rng() % 3);
  if (kind == 2) {
    m.json = fmt::format(
        R"({{"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": {}, "head_dim": {},
        "intermediate_size": {}, "moe_intermediate_size": {}, "num_experts": {}, "num_experts_per_tok": 2,
        "max_position_embeddings": {}, "num_attention_heads": {}, "num_hidden_layers": {}, "num_key_value_heads": {},
        "torch_dtype": "bfloat16", "vocab_size": {}, "tie_word_embeddings": false}})",
        hidden, head_dim, intermediate, intermediate / 4, pick({4, 8, 16}), max_positions, m.heads, layers, m.kv_heads,
        vocab);
  } else {
    const std::string window =
        kind == 1 ? fmt::format(R"("sliding_window": {}, )", pick({256, 1024, 4096})) : std::string("");
    m.json = fmt::format(
        R"({{"architectures": ["{}"], "model_type": "{}", {}"hidden_size": {}, "head_dim": {}, "intermediate_size": {},
        "max_position_embeddings": {}, "num_attention_heads": {}, "num_hidden_layers": {}, "num_key_value_heads": {},
        "torch_dtype": "bfloat16", "vocab_size": {}, "tie_word_embeddings": false}})",
        kind == 1 ? "MistralForCausalLM" : "LlamaForCausalLM", kind == 1 ? "mistral" : "llama", window, hidden,
        head_dim, intermediate, max_positions, m.heads, layers, m.kv_heads, vocab);
  }
  return m;
}

const VllmProfile& profile() {
  static const VllmProfile p = load_vllm_profile("0.19", test::configs());
  return p;
}

GpuSpec gpu_of(std::int64_t gib) {
  GpuSpec g = load_gpu_preset("h100", test::configs());
  g.name = "custom";
  g.memory = Bytes(gib << 30);
  return g;
}

std::int64_t largest(const ModelSpec& m, const GpuSpec& gpu, const Deployment& d) {
  return fit(m, gpu, d, profile()).max_model_len;
}

constexpr int kConfigs = 40;

TEST(Properties, LargestLengthNeverShrinksWithMoreMemoryOrUtilization) {
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < kConfigs; ++i) {
    const RandomModel r = random_config(rng, 131072);
    const ModelSpec m = parse_model_config(r.json, "", "random");
    Deployment d;
    d.gpu_memory_utilization = 0.8;
    std::int64_t previous = 0;
    for (const std::int64_t gib : {24, 40, 48, 80, 96, 141, 192}) {
      const std::int64_t now = largest(m, gpu_of(gib), d);
      EXPECT_GE(now, previous) << r.json << " at " << gib << " GiB";
      previous = now;
    }
    previous = 0;
    for (const double u : {0.5, 0.7, 0.8, 0.9, 0.95}) {
      d.gpu_memory_utilization = u;
      const std::int64_t now = largest(m, gpu_of(48), d);
      EXPECT_GE(now, previous) << r.json << " at utilization " << u;
      previous = now;
    }
  }
}

TEST(Properties, LargestLengthNeverShrinksWithTensorOrContextParallelism) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < kConfigs; ++i) {
    const RandomModel r = random_config(rng, 131072);
    const ModelSpec m = parse_model_config(r.json, "", "random");
    // From TP 2 on, the non-torch class (several NVLink GPUs) is the same; TP must divide the heads.
    std::int64_t previous = 0;
    for (std::int64_t tp = 2; tp <= 8 && r.heads % tp == 0; tp *= 2) {
      Deployment d;
      d.tensor_parallel_size = tp;
      const std::int64_t now = largest(m, gpu_of(24), d);
      EXPECT_GE(now, previous) << r.json << " at TP " << tp;
      previous = now;
    }
    if (r.heads % 8 != 0 || m.layers.front().attention.kind != AttentionKind::kFull) continue;  // DCP: full attention only
    previous = 0;
    for (const std::int64_t dcp : {1, 2, 4, 8}) {
      Deployment d;
      d.tensor_parallel_size = 8;
      d.decode_context_parallel_size = dcp;
      try {
        const std::int64_t now = largest(m, gpu_of(24), d);
        EXPECT_GE(now, previous) << r.json << " at DCP " << dcp;
        previous = now;
      } catch (const InputError&) {
        // vLLM refuses some DCP sizes (e.g. above the KV heads' replication); nothing to compare.
      }
    }
  }
}

TEST(Properties, NarrowerKvDtypeNeverShortensTheLength) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < kConfigs; ++i) {
    const RandomModel r = random_config(rng, 131072);
    const ModelSpec m = parse_model_config(r.json, "", "random");
    Deployment wide, narrow;
    wide.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
    narrow.kv_cache_dtype = KvCacheDtypeChoice::kFp8;
    EXPECT_GE(largest(m, gpu_of(40), narrow), largest(m, gpu_of(40), wide)) << r.json;
  }
}

TEST(Properties, PerGpuWeightsNeverGrowWithTensorParallelism) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < kConfigs; ++i) {
    const RandomModel r = random_config(rng, 8192);
    const ModelSpec m = parse_model_config(r.json, "", "random");
    Bytes previous(std::numeric_limits<std::int64_t>::max());
    for (std::int64_t tp = 1; tp <= 8 && r.heads % tp == 0; tp *= 2) {
      const Bytes now = weights_per_gpu(m, test::layout_for(m, tp)).total;
      EXPECT_LE(now, previous) << r.json << " at TP " << tp;
      previous = now;
    }
  }
}

// vLLM's binary search against a scan of every length, on a KV budget fixed with
// --kv-cache-memory-bytes, for models whose maximum is small enough to scan.
TEST(Properties, LargestLengthEqualsABruteForceScan) {
  std::mt19937_64 rng(5);
  int interior = 0;
  for (int i = 0; i < 12; ++i) {
    const std::int64_t max_positions = 256 + static_cast<std::int64_t>(rng() % 1793);
    const RandomModel r = random_config(rng, max_positions);
    const ModelSpec m = parse_model_config(r.json, "", "random");
    Deployment d;
    const Bytes full = fit(m, gpu_of(80), d, profile()).needed;  // one request of the model's maximum
    d.kv_cache_memory = Bytes(static_cast<std::int64_t>(static_cast<double>(full.count()) *
                                                        std::uniform_real_distribution<double>(0.05, 1.2)(rng)));
    const std::int64_t answer = fit(m, gpu_of(80), d, profile()).max_model_len;
    std::int64_t scanned = 0;
    for (std::int64_t n = 1; n <= max_positions; ++n) {
      Deployment at = d;
      at.max_model_len = n;
      if (fit(m, gpu_of(80), at, profile()).fits) scanned = n;
    }
    EXPECT_EQ(answer, scanned) << r.json;
    if (answer > 0 && answer < max_positions) ++interior;
  }
  EXPECT_GE(interior, 6);  // the scan is not only checking the trivial ends
}

TEST(Properties, FitsExactlyUpToTheLargestLength) {
  std::mt19937_64 rng(11);
  int limited = 0;
  for (int i = 0; i < kConfigs; ++i) {
    const RandomModel r = random_config(rng, 131072);
    const ModelSpec m = parse_model_config(r.json, "", "random");
    Deployment d;
    const Bytes full = fit(m, gpu_of(80), d, profile()).needed;
    d.kv_cache_memory = Bytes(static_cast<std::int64_t>(static_cast<double>(full.count()) *
                                                        std::uniform_real_distribution<double>(0.02, 0.9)(rng)));
    const std::int64_t answer = largest(m, gpu_of(24), d);
    if (answer > 0 && answer < 131072) ++limited;
    for (int k = 0; k < 6; ++k) {
      const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 131072);
      Deployment at = d;
      at.max_model_len = n;
      EXPECT_EQ(fit(m, gpu_of(24), at, profile()).fits, n <= answer) << r.json << " N=" << n;
    }
  }
  EXPECT_GE(limited, kConfigs / 2);  // enough configs where memory, not the model, sets the length
}

}  // namespace
}  // namespace gpubudget

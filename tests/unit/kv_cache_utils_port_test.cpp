// The memory-accounting cases of vLLM's own tests/v1/core/test_kv_cache_utils.py, at vLLM commit
// eaba533a5e3853c730318c8b5960de4d159a82ed, run on gpubudget's KV layout. Each test names the vLLM test
// function and its lines; every expected value is the one vLLM asserts (or, where marked, one derived
// from that file's formulas by hand). The helpers' defaults are vLLM's: new_kv_cache_spec() is a
// full-attention spec of block 16, 2 KV heads of 64, float32 — a page of P = 16·2·(64+64)·4 = 16384 B;
// new_sliding_window_spec() the same with sliding_window 1 (the same page); ModelConfig(max_model_len=16).
//
// vLLM's cases give layers by name and per-worker dicts; here a layer is a decoder layer of a synthetic
// model and a worker is a pipeline stage (VLLM_PP_LAYER_PARTITION), which is how the layers of one model
// come apart over workers in vLLM.
#include <gtest/gtest.h>

#include "test_support.h"
#include "gpubudget/error.h"
#include "gpubudget/kv_cache.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/parallel_layout.h"

namespace gpubudget {
namespace {

constexpr std::int64_t P = 16384;  // new_kv_cache_spec() page size, bytes

struct Layer {
  AttentionKind kind = AttentionKind::kFull;
  std::int64_t heads = 2;
  std::int64_t head_dim = 64;
  std::int64_t window = 0;
};
Layer full(std::int64_t head_dim = 64, std::int64_t heads = 2) { return {AttentionKind::kFull, heads, head_dim, 0}; }
Layer sliding(std::int64_t window = 1, std::int64_t head_dim = 64, std::int64_t heads = 2) {
  return {AttentionKind::kSlidingWindow, heads, head_dim, window};
}

ModelSpec model_of(const std::vector<Layer>& layers) {
  ModelSpec m;
  m.source = "test_kv_cache_utils";
  m.architecture = "TestForCausalLM";
  m.dtype = Dtype::kFloat32;
  m.derived_max_model_len = 1 << 20;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    LayerSpec l;
    l.index = static_cast<std::int64_t>(i);
    l.attention.kind = layers[i].kind;
    l.attention.num_attention_heads = layers[i].heads;
    l.attention.num_key_value_heads = layers[i].heads;
    l.attention.head_dim = layers[i].head_dim;
    l.attention.head_dim_v = layers[i].head_dim;
    l.attention.window = layers[i].window;
    m.layers.push_back(l);
  }
  return m;
}

struct Case {
  std::vector<Layer> layers;
  std::vector<std::int64_t> stages = {};  // layers per worker (pipeline partition); {} = one worker
  std::string dtype = "float32";
  std::int64_t max_num_batched_tokens = 2048;
  bool hybrid_manager = true;
};

KvCacheLayout worker(const Case& c, std::int64_t rank = 0) {
  const ModelSpec m = model_of(c.layers);
  Deployment d;
  if (!c.stages.empty()) {
    d.pipeline_parallel_size = static_cast<std::int64_t>(c.stages.size());
    d.pp_layer_partition = c.stages;
  }
  KvCacheSettings s;
  s.dtype = kv_cache_dtype_named(c.dtype, "test");
  s.block_size = 16;
  s.max_num_batched_tokens = c.max_num_batched_tokens;
  s.need = KvNeedRule::kWorkerGroups;  // _max_memory_usage_bytes_from_groups over the worker's groups
  s.hybrid_group_ratio = 1.5;
  s.hybrid_manager = c.hybrid_manager;
  return make_kv_cache_layout(m, make_parallel_layout(m, d, rank), s);
}

// vLLM's num_blocks is the minimum over workers (get_kv_cache_configs).
std::int64_t min_blocks(const Case& c, Bytes available) {
  std::int64_t n = worker(c, 0).num_blocks(available);
  for (std::int64_t r = 1; r < static_cast<std::int64_t>(c.stages.size()); ++r) {
    n = std::min(n, worker(c, r).num_blocks(available));
  }
  return n;
}

// test_get_kv_cache_configs_multiple_workers (lines 697-1046).
TEST(VllmKvCacheUtils, MultipleWorkersBasicAndTp) {
  // a, b: two full layers per worker, avail 2·10·P → 10 blocks; the needed 2·P for 16 tokens.
  const Case c{{full(), full()}};
  EXPECT_EQ(worker(c).num_blocks(Bytes(P * 2 * 10)), 10);
  EXPECT_EQ(worker(c).num_blocks(Bytes(P * 2 * 20)), 20);  // b's second worker, before the minimum of 10
  EXPECT_EQ(worker(c).needed(16).count(), 2 * P);
}

TEST(VllmKvCacheUtils, MultipleWorkersPipelineProjectsTheGlobalGroup) {
  // c: w0 {layer1}, w1 {layer2, layer3}, avail 2·10·P each: w0 would hold 20 blocks, w1 10; min 10.
  const Case c{{full(), full(), full()}, {1, 2}};
  EXPECT_EQ(worker(c, 0).num_blocks(Bytes(P * 2 * 10)), 20);
  EXPECT_EQ(worker(c, 1).num_blocks(Bytes(P * 2 * 10)), 10);
  EXPECT_EQ(min_blocks(c, Bytes(P * 2 * 10)), 10);
  EXPECT_EQ(worker(c, 0).needed(16).count(), 1 * P);
  EXPECT_EQ(worker(c, 1).needed(16).count(), 2 * P);
}

TEST(VllmKvCacheUtils, MultipleWorkersHybridPipelineCountsTheEmptyProjectedGroup) {
  // e: w0 {layer1: F, layer2: F}, w1 {layer3: SW, layer4: SW}. Global groups [F: 2], [SW: 2], group size 2;
  // each worker keeps the other's group empty. 10 blocks; needed gs·P·(1 + 2) = 6P on both workers
  // (the sliding layer's need for 16 tokens is cdiv(min(0 + T, 16), 16) + 1 = 2 pages).
  const Case c{{full(), full(), sliding(), sliding()}, {2, 2}};
  for (std::int64_t rank : {0, 1}) {
    const KvCacheLayout w = worker(c, rank);
    EXPECT_EQ(w.num_blocks(Bytes(P * 2 * 10)), 10) << rank;
    EXPECT_EQ(w.needed(16).count(), 6 * P) << rank;
    EXPECT_EQ(w.num_groups(), 2) << rank;
  }
}

TEST(VllmKvCacheUtils, MultipleWorkersSimilarGroupSizesSplitTheLargerBucket) {
  // f: w0 {F, SW, SW}, w1 {F, SW, SW}. Buckets F: 2, SW: 4; 4 < 1.5·2 fails → group size 2, SW splits in
  // two groups [layer2, layer5], [layer3, layer6]. Projected group size 1: avail 10·P → 10 blocks;
  // needed 1·P·(1 + 2 + 2) = 5P.
  const Case c{{full(), sliding(), sliding(), full(), sliding(), sliding()}, {3, 3}};
  for (std::int64_t rank : {0, 1}) {
    const KvCacheLayout w = worker(c, rank);
    EXPECT_EQ(w.num_blocks(Bytes(P * 10)), 10) << rank;
    EXPECT_EQ(w.needed(16).count(), 5 * P) << rank;
    EXPECT_EQ(w.num_groups(), 3) << rank;
  }
}

// test_get_kv_cache_config_one_worker (lines 1322-1611); avail in units of mem_per_block_per_layer = P.
TEST(VllmKvCacheUtils, OneWorkerUniformSpecs) {
  EXPECT_EQ(worker({{full(), full()}}).num_blocks(Bytes(P * 2 * 32)), 32);        // a
  EXPECT_EQ(worker({{sliding(), sliding()}}).num_blocks(Bytes(P * 2 * 32)), 32);  // b
  EXPECT_EQ(worker({{sliding(), sliding()}}).needed(16).count(), 4 * P);          // b: 2 layers x 2 pages
}

TEST(VllmKvCacheUtils, OneWorkerHybridManagerOffMakesSlidingLayersFull) {
  // c: disable_hybrid_kv_cache_manager: layer2 becomes FullAttentionSpec(sliding_window=1), one group of 2.
  Case c{{full(), sliding()}};
  c.hybrid_manager = false;
  const KvCacheLayout w = worker(c);
  EXPECT_EQ(w.num_blocks(Bytes(P * 2 * 32)), 32);
  EXPECT_EQ(w.num_groups(), 1);
  EXPECT_EQ(w.needed(16).count(), 2 * P);  // full-attention need: 1 page per layer
}

TEST(VllmKvCacheUtils, OneWorkerHybridGroupings) {
  // d: F + SW: group size 1, one tensor shared by both groups → 64 blocks; needed 1·P·(1 + 2) = 3P.
  EXPECT_EQ(worker({{full(), sliding()}}).num_blocks(Bytes(P * 2 * 32)), 64);
  EXPECT_EQ(worker({{full(), sliding()}}).needed(16).count(), 3 * P);
  // e: 2 F + 4 SW: group size 2 → 32 blocks; groups [F 2], [SW l3 l5], [SW l4 l6]; needed 2·P·5 = 10P.
  const Case e{{full(), full(), sliding(), sliding(), sliding(), sliding()}};
  EXPECT_EQ(worker(e).num_blocks(Bytes(P * 2 * 32)), 32);
  EXPECT_EQ(worker(e).num_groups(), 3);
  EXPECT_EQ(worker(e).needed(16).count(), 10 * P);
  // f: 3 F + 7 SW: 7 < 4.5 fails → group size 3, SW in cdiv(7, 3) = 3 groups; avail 3·32·P → 32; 21P.
  std::vector<Layer> f_layers = {full(), full(), full()};
  for (int i = 0; i < 7; ++i) f_layers.push_back(sliding());
  EXPECT_EQ(worker({f_layers}).num_blocks(Bytes(P * 3 * 32)), 32);
  EXPECT_EQ(worker({f_layers}).num_groups(), 4);
  EXPECT_EQ(worker({f_layers}).needed(16).count(), 21 * P);
  // g: 6 F + 5 SW: 6 < 7.5 → group size = max = 6, SW padded to 6; avail 6·32·P → 32; needed 6·P·3 = 18P.
  std::vector<Layer> g_layers(6, full());
  for (int i = 0; i < 5; ++i) g_layers.push_back(sliding());
  EXPECT_EQ(worker({g_layers}).num_blocks(Bytes(P * 6 * 32)), 32);
  EXPECT_EQ(worker({g_layers}).num_groups(), 2);
  EXPECT_EQ(worker({g_layers}).needed(16).count(), 18 * P);
}

TEST(VllmKvCacheUtils, OneWorkerUniformTypeSumsThePages) {
  // h: F(head 128) page 2P + F(head 64) page P: UniformTypeKVCacheSpecs, blocks avail // 3P.
  const KvCacheLayout w = worker({{full(128), full(64)}});
  EXPECT_EQ(w.grouping, KvGrouping::kUniformType);
  EXPECT_EQ(w.block_bytes().count(), 3 * P);
  EXPECT_EQ(w.num_blocks(Bytes(P * 3 * 32)), 32);
  EXPECT_EQ(w.needed(16).count(), 3 * P);
}

TEST(VllmKvCacheUtils, OneWorkerPagesUnifyByScalingTheBlockSize) {
  // i: F(head 64) page P + SW(head 32) page P/2: the sliding layer's block doubles to 32 → one page P;
  // avail 32·P → 32 blocks; needed 1·P·(1 + (cdiv(16, 32) + 1)) = 3P.
  const KvCacheLayout w = worker({{full(64), sliding(1, 32)}});
  EXPECT_EQ(w.num_blocks(Bytes(P * 32)), 32);
  EXPECT_EQ(w.page_bytes.count(), P);
  EXPECT_EQ(w.needed(16).count(), 3 * P);
  // j: SW(head 96) page 1.5·P does not divide: NotImplementedError in unify_kv_cache_spec_page_size.
  test::expect_input_error([&] { (void)(worker({{full(64), sliding(1, 96)}})); }, "KV page sizes 16384 and 24576 bytes cannot be unified");
}

// test_estimate_max_model_len (lines 1145-1185): 32 layers of FullAttentionSpec(16, 32 heads, 128,
// float16), 8 GiB: page 262144, cdiv(L, 16) ≤ 1024 → 16384; an upper bound of 16383 caps it.
TEST(VllmKvCacheUtils, EstimateMaxModelLen) {
  const KvCacheLayout w = worker({std::vector<Layer>(32, full(128, 32)), {}, "float16"});
  const Bytes eight_gib(std::int64_t{8} << 30);
  EXPECT_EQ(largest_fitting_length(w, eight_gib, 16385), 16384);
  EXPECT_EQ(largest_fitting_length(w, eight_gib, 16383), 16383);
}

// test_get_max_concurrency_for_kv_cache_config (lines 1188-1262): max_model_len 16384, mnbt 1024.
// Full: 1024 blocks per request; sliding 1024: cdiv(min(1023 + 1024, 16384), 16) + 1 = 129.
TEST(VllmKvCacheUtils, MaxConcurrency) {
  const std::int64_t M = 16384;
  const KvCacheLayout f = worker({std::vector<Layer>(32, full(128, 32)), {}, "float16", 1024});
  EXPECT_EQ(f.blocks_per_request(M), 1024);
  EXPECT_DOUBLE_EQ(1536.0 / static_cast<double>(f.blocks_per_request(M)), 1.5);
  const KvCacheLayout s = worker({std::vector<Layer>(32, sliding(1024, 128, 32)), {}, "float16", 1024});
  EXPECT_EQ(s.blocks_per_request(M), 129);
  EXPECT_DOUBLE_EQ(387.0 / static_cast<double>(s.blocks_per_request(M)), 3.0);
  std::vector<Layer> both(32, full(128, 32));
  for (int i = 0; i < 32; ++i) both.push_back(sliding(1024, 128, 32));
  const KvCacheLayout h = worker({both, {}, "float16", 1024});
  EXPECT_EQ(h.blocks_per_request(M), 1024 + 129);
  EXPECT_DOUBLE_EQ(3459.0 / static_cast<double>(h.blocks_per_request(M)), 3.0);
}

// test_auto_fit_max_model_len (lines 1832-1867): two full layers, max_model_len 1024 with
// original_max_model_len -1. With 2·1024·P the length stays 1024; with 2·32·P it drops below 1024 —
// exactly 512 by the file's formulas (needed 2·P·cdiv(L, 16) ≤ 64·P), a derived, not asserted, figure.
TEST(VllmKvCacheUtils, AutoFitMaxModelLen) {
  const KvCacheLayout w = worker({{full(), full()}});
  EXPECT_EQ(largest_fitting_length(w, Bytes(P * 2 * 1024), 1024), 1024);
  const std::int64_t limited = largest_fitting_length(w, Bytes(P * 2 * 32), 1024);
  EXPECT_GT(limited, 0);
  EXPECT_LT(limited, 1024);
  EXPECT_EQ(limited, 512);
}

// test_get_kv_cache_configs_attention_free (lines 1614-1624): no KV layers, no groups: nothing to check.
TEST(VllmKvCacheUtils, AttentionFreeHasNoGroups) {
  ModelSpec m = model_of({full()});
  m.layers.front().attention.kind = AttentionKind::kNone;
  KvCacheSettings s;
  s.dtype = kv_cache_dtype_named("float32", "test");
  const KvCacheLayout w = make_kv_cache_layout(m, make_parallel_layout(m, Deployment{}, 0), s);
  EXPECT_EQ(w.grouping, KvGrouping::kEmpty);
  EXPECT_EQ(w.needed(16).count(), 0);
}

// test_unify_hybrid_kv_cache_specs (lines 1889-1953), case 4: sliding and chunked layers without a full
// one cannot become one type: ValueError.
TEST(VllmKvCacheUtils, HybridManagerOffWithoutFullAttentionIsRefused) {
  Case c{{sliding(1024), {AttentionKind::kChunkedLocal, 2, 64, 512}}};
  c.hybrid_manager = false;
  test::expect_input_error([&] { (void)(worker(c)); }, "failed to convert the KV cache specs to one unified type");
  // Case 3: with a full layer both convert to full attention, one spec for all three layers.
  Case ok{{full(), sliding(1024), {AttentionKind::kChunkedLocal, 2, 64, 512}}};
  ok.hybrid_manager = false;
  EXPECT_EQ(worker(ok).num_groups(), 1);
}

}  // namespace
}  // namespace gpubudget

// The gpubudget executable's global operator new/delete (apps/cli/heap_hooks.cpp), linked into this
// test program as into the release CLI: which blocks the slab heap serves, and whole commands run on it
// (the incident's fit, and a checkpoint header scan whose worker threads allocate concurrently).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "fixtures/safetensors_writer.h"
#include "gpubudget/safetensors.h"
#include "heap_hooks.h"

namespace gpubudget::cli {
namespace {

TEST(HeapHooks, SmallBlocksComeFromTheSlabHeapLargeOnesFromMalloc) {
  const auto small = std::make_unique<char[]>(100);
  const auto largest = std::make_unique<char[]>(SlabHeap::kLargestBlockBytes);
  const auto large = std::make_unique<char[]>(SlabHeap::kLargestBlockBytes + 1);
  EXPECT_TRUE(executable_heap().owns(small.get()));
  EXPECT_TRUE(executable_heap().owns(largest.get()));
  EXPECT_FALSE(executable_heap().owns(large.get()));
  const std::string name(40, 'x');  // beyond the short-string buffer: a heap block
  EXPECT_TRUE(executable_heap().owns(name.data()));
}

TEST(HeapHooks, OverAlignedObjectsKeepTheirAlignment) {
  struct alignas(64) CacheLine {
    std::int64_t values[8];
  };
  const auto line = std::make_unique<CacheLine>();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(line.get()) % 64, 0u);
  EXPECT_FALSE(executable_heap().owns(line.get()));
  const auto lines = std::make_unique<CacheLine[]>(3);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(lines.get()) % 64, 0u);
}

TEST(HeapHooks, TheIncidentRunsOnTheSlabHeap) {
  std::ostringstream out, err;
  const int code = run_cli({"fit", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8", "--kv-cache-dtype",
                            "bfloat16", "--gpu-memory-utilization", "0.9", "--vllm-version", "0.15", "--json"},
                           out, err, GPUBUDGET_TEST_SOURCE_DIR "/build/x");
  EXPECT_EQ(code, 1) << err.str();
  // docs/methodology.md §7, by hand: 8,346 blocks of 16 tokens.
  EXPECT_NE(out.str().find("\"max_model_len\": 133536"), std::string::npos) << out.str();
  EXPECT_GT(executable_heap().slabs_in_use(), 0u);
}

TEST(HeapHooks, ConcurrentHeaderScanReadsEveryTensor) {
  const auto dir = test::fresh_fixture_dir("heap-hooks");
  std::vector<test::FixtureTensor> tensors;
  std::int64_t bytes = 0;
  for (int i = 0; i < 1600; ++i) {
    tensors.push_back({"model.layers." + std::to_string(i / 8) + ".mlp.w" + std::to_string(i % 8) + ".weight", "BF16",
                       {4, 1 + i % 5}});
    bytes += 4 * (1 + i % 5) * 2;
  }
  test::write_sharded_checkpoint(dir, tensors, 8);
  const auto headers = read_checkpoint_headers(dir.string());
  ASSERT_TRUE(headers.has_value());
  EXPECT_EQ(headers->files.size(), 8u);
  EXPECT_EQ(headers->tensor_count(), 1600);
  EXPECT_EQ(headers->tensor_bytes(), bytes);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpubudget::cli

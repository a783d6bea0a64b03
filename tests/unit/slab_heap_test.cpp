// The executable's small-object allocator (apps/cli/slab_heap.h), tested as a plain object: size
// classes against their definition, blocks that never overlap, reuse, exhaustion and threads.
#include "slab_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace gpubudget::cli {
namespace {

TEST(SlabHeapClasses, AreSixteenByteStepsThenFourPerPowerOfTwo) {
  // By hand from the definition: 16-byte steps to 128, then (2^k, 2^(k+1)] in four steps of 2^(k-2).
  EXPECT_EQ(SlabHeap::class_bytes(SlabHeap::class_of(0)), 16u);
  EXPECT_EQ(SlabHeap::class_bytes(SlabHeap::class_of(1)), 16u);
  EXPECT_EQ(SlabHeap::class_bytes(SlabHeap::class_of(17)), 32u);
  EXPECT_EQ(SlabHeap::class_bytes(SlabHeap::class_of(128)), 128u);
  EXPECT_EQ(SlabHeap::class_bytes(SlabHeap::class_of(129)), 160u);
  EXPECT_EQ(SlabHeap::class_bytes(SlabHeap::class_of(161)), 192u);
  EXPECT_EQ(SlabHeap::class_bytes(SlabHeap::class_of(256)), 256u);
  EXPECT_EQ(SlabHeap::class_bytes(SlabHeap::class_of(257)), 320u);
  EXPECT_EQ(SlabHeap::class_bytes(SlabHeap::class_of(9531)), 10240u);  // a 9,530-byte config.json + NUL
  EXPECT_EQ(SlabHeap::class_of(SlabHeap::kLargestBlockBytes), SlabHeap::kClassCount - 1);
  EXPECT_EQ(SlabHeap::class_bytes(SlabHeap::kClassCount - 1), SlabHeap::kLargestBlockBytes);
}

TEST(SlabHeapClasses, EverySizeGetsTheSmallestClassThatHoldsIt) {
  for (std::size_t bytes = 1; bytes <= SlabHeap::kLargestBlockBytes; ++bytes) {
    const std::size_t index = SlabHeap::class_of(bytes);
    ASSERT_LT(index, SlabHeap::kClassCount) << bytes;
    const std::size_t size = SlabHeap::class_bytes(index);
    ASSERT_GE(size, bytes);
    ASSERT_EQ(size % SlabHeap::kBlockAlignment, 0u) << size;
    if (index > 0) {
      ASSERT_LT(SlabHeap::class_bytes(index - 1), bytes) << bytes;
    }
    if (bytes > 128) {
      ASSERT_LE(size * 4, bytes * 5) << bytes;  // at most 25 % unused
    }
  }
}

TEST(SlabHeap, BlocksAreAlignedDisjointAndKeepTheirContents) {
  SlabHeap heap(std::size_t{16} << 20);
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> size(0, SlabHeap::kLargestBlockBytes);
  struct Block {
    unsigned char* at;
    std::size_t bytes;
  };
  std::vector<Block> blocks;
  for (int i = 0; i < 600; ++i) {
    const std::size_t bytes = i % 3 == 0 ? size(rng) : size(rng) % 200;
    auto* at = static_cast<unsigned char*>(heap.allocate(bytes));
    ASSERT_NE(at, nullptr);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(at) % SlabHeap::kBlockAlignment, 0u);
    ASSERT_TRUE(heap.owns(at));
    ASSERT_GE(heap.block_bytes(at), bytes);
    std::memset(at, i & 0xff, bytes);
    blocks.push_back({at, bytes});
  }
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    for (std::size_t b = 0; b < blocks[i].bytes; ++b) ASSERT_EQ(blocks[i].at[b], i & 0xff) << i;
  }
  std::sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return a.at < b.at; });
  for (std::size_t i = 1; i < blocks.size(); ++i) {
    ASSERT_LE(blocks[i - 1].at + heap.block_bytes(blocks[i - 1].at), blocks[i].at);
  }
}

TEST(SlabHeap, AFreedBlockIsTheNextOneOfItsClass) {
  SlabHeap heap(std::size_t{1} << 20);
  void* a = heap.allocate(40);
  void* b = heap.allocate(48);  // same 48-byte class
  heap.deallocate(a);
  EXPECT_EQ(heap.allocate(33), a);
  void* c = heap.allocate(48);
  EXPECT_NE(c, a);
  EXPECT_NE(c, b);
  EXPECT_EQ(heap.slabs_in_use(), 1u);
  void* other = heap.allocate(64);  // another class takes its own slab
  EXPECT_EQ(heap.slabs_in_use(), 2u);
  EXPECT_EQ(heap.block_bytes(other), 64u);
}

TEST(SlabHeap, RefusesLargeRequestsAndForeignPointers) {
  SlabHeap heap(std::size_t{1} << 20);
  EXPECT_EQ(heap.allocate(SlabHeap::kLargestBlockBytes + 1), nullptr);
  int on_stack = 0;
  std::vector<int> elsewhere(4);
  EXPECT_FALSE(heap.owns(&on_stack));
  EXPECT_FALSE(heap.owns(elsewhere.data()));
  EXPECT_FALSE(heap.owns(nullptr));
}

TEST(SlabHeap, ReturnsNullWhenEverySlabIsTaken) {
  SlabHeap heap(2 * SlabHeap::kSlabBytes);  // two slabs of 16-byte blocks
  const std::size_t blocks = 2 * SlabHeap::kSlabBytes / 16;
  for (std::size_t i = 0; i < blocks; ++i) ASSERT_NE(heap.allocate(16), nullptr) << i;
  EXPECT_EQ(heap.allocate(16), nullptr);
  EXPECT_EQ(heap.allocate(1000), nullptr);  // no slab left for another class either
  EXPECT_EQ(heap.slabs_in_use(), 2u);
}

TEST(SlabHeap, ThreadsAllocatingAndFreeingNeverShareABlock) {
  SlabHeap heap(std::size_t{64} << 20);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<std::pair<unsigned char*, std::size_t>> live;
      for (int i = 0; i < 20000; ++i) {
        if (!live.empty() && rng() % 2 == 0) {
          const auto [at, bytes] = live.back();
          live.pop_back();
          for (std::size_t b = 0; b < bytes; ++b) failures[t] += at[b] != static_cast<unsigned char>(t + 1);
          heap.deallocate(at);
        } else {
          const std::size_t bytes = 1 + rng() % 300;
          auto* at = static_cast<unsigned char*>(heap.allocate(bytes));
          if (at == nullptr) {
            ++failures[t];
            continue;
          }
          std::memset(at, t + 1, bytes);
          live.emplace_back(at, bytes);
        }
      }
      for (const auto& [at, bytes] : live) heap.deallocate(at);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace gpubudget::cli

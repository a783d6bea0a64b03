#include "slab_heap.h"

#include <sys/mman.h>

#include <thread>

namespace gpubudget::cli {

namespace {

constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

}  // namespace

void SlabHeap::SpinLock::lock_contended() noexcept {
  int spins = 0;
  do {
    while (locked_.load(std::memory_order_relaxed)) {
      if (++spins > 64) {
        std::this_thread::yield();
      } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  } while (locked_.exchange(true, std::memory_order_acquire));
}

SlabHeap::SlabHeap(std::size_t capacity_bytes) noexcept {
  for (std::size_t i = 0; i < kClassCount; ++i) classes_[i].block_bytes = class_bytes(i);
  const std::size_t slabs = (capacity_bytes < kMaxCapacityBytes ? capacity_bytes : kMaxCapacityBytes) / kSlabBytes;
  if (slabs == 0) return;
  // Over-reserve by one huge page so that the slabs can start on a 2 MiB boundary.
  const std::size_t bytes = slabs * kSlabBytes + kHugePageBytes;
  void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) return;
  mapping_ = mapping;
  mapping_bytes_ = bytes;
  base_ = (reinterpret_cast<std::uintptr_t>(mapping) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  slab_count_ = slabs;
#ifdef MADV_HUGEPAGE
  // Advice only: without transparent huge pages the region is ordinary memory.
  (void)madvise(reinterpret_cast<void*>(base_), slabs * kSlabBytes, MADV_HUGEPAGE);
#endif
}

SlabHeap::~SlabHeap() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

bool SlabHeap::take_slab(std::size_t index) noexcept {
  if (slabs_used_ == slab_count_) return false;
  SizeClass& sc = classes_[index];
  slab_class_[slabs_used_] = static_cast<std::uint8_t>(index);
  sc.next = reinterpret_cast<char*>(base_ + slabs_used_ * kSlabBytes);
  // Not every class size divides the slab: the blocks end where the last whole one ends.
  sc.end = sc.next + kSlabBytes / sc.block_bytes * sc.block_bytes;
  ++slabs_used_;
  return true;
}

std::size_t SlabHeap::block_bytes(const void* block) const noexcept {
  const std::size_t slab = (reinterpret_cast<std::uintptr_t>(block) - base_) / kSlabBytes;
  const Guard guard(lock_);
  return class_bytes(slab_class_[slab]);
}

std::size_t SlabHeap::slabs_in_use() const noexcept {
  const Guard guard(lock_);
  return slabs_used_;
}

}  // namespace gpubudget::cli

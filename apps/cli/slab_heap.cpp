#include "slab_heap.h"

#include <sys/mman.h>

#include <bit>
#include <mutex>
#include <thread>

namespace gpubudget::cli {

namespace {

constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
constexpr std::size_t kStepClasses = 8;        // 16, 32, ..., 128 B
constexpr std::size_t kStepBytes = 16;
constexpr std::size_t kClassesPerOctave = 4;   // (2^k, 2^(k+1)] in four equal steps
constexpr unsigned kFirstOctave = 7;           // (128, 256]

// class_of() for requests up to kTableBytes, by 16-byte granule, and class_bytes() for every class.
constexpr std::size_t kTableBytes = 1024;

constexpr std::size_t compute_class_of(std::size_t bytes) {
  if (bytes <= kStepClasses * kStepBytes) return bytes == 0 ? 0 : (bytes - 1) / kStepBytes;
  const auto octave = static_cast<unsigned>(std::bit_width(bytes - 1) - 1);  // bytes in (2^octave, 2^(octave+1)]
  const std::size_t step = std::size_t{1} << (octave - 2);
  const std::size_t within = (bytes - (std::size_t{1} << octave) - 1) / step;  // 0..3
  return kStepClasses + (octave - kFirstOctave) * kClassesPerOctave + within;
}

constexpr std::size_t compute_class_bytes(std::size_t index) {
  if (index < kStepClasses) return (index + 1) * kStepBytes;
  const std::size_t octave = kFirstOctave + (index - kStepClasses) / kClassesPerOctave;
  const std::size_t within = (index - kStepClasses) % kClassesPerOctave;
  return (std::size_t{1} << octave) + (within + 1) * (std::size_t{1} << (octave - 2));
}

// Classes are multiples of 16 bytes, so one entry per granule is exact.
constexpr auto kClassByGranule = [] {
  std::array<std::uint8_t, kTableBytes / kStepBytes + 1> table{};
  for (std::size_t granule = 0; granule < table.size(); ++granule) {
    table[granule] = static_cast<std::uint8_t>(compute_class_of(granule * kStepBytes));
  }
  return table;
}();

constexpr auto kClassBytes = [] {
  std::array<std::uint32_t, SlabHeap::kClassCount> table{};
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<std::uint32_t>(compute_class_bytes(i));
  return table;
}();

static_assert(SlabHeap::kClassCount ==
              kStepClasses + kClassesPerOctave * (std::bit_width(SlabHeap::kLargestBlockBytes) - 1 - kFirstOctave));

}  // namespace

std::size_t SlabHeap::class_of(std::size_t bytes) {
  return bytes <= kTableBytes ? kClassByGranule[(bytes + kStepBytes - 1) / kStepBytes] : compute_class_of(bytes);
}

std::size_t SlabHeap::class_bytes(std::size_t index) { return kClassBytes[index]; }

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

void* SlabHeap::allocate(std::size_t bytes) noexcept {
  if (bytes > kLargestBlockBytes) return nullptr;
  const std::size_t index = class_of(bytes);
  const std::size_t size = class_bytes(index);
  const std::lock_guard guard(lock_);
  SizeClass& sc = classes_[index];
  if (sc.free != nullptr) {
    FreeBlock* block = sc.free;
    sc.free = block->next;
    return block;
  }
  if (static_cast<std::size_t>(sc.end - sc.next) < size) {
    if (slabs_used_ == slab_count_) return nullptr;
    slab_class_[slabs_used_] = static_cast<std::uint8_t>(index);
    sc.next = reinterpret_cast<char*>(base_ + slabs_used_ * kSlabBytes);
    sc.end = sc.next + kSlabBytes;
    ++slabs_used_;
  }
  void* block = sc.next;
  sc.next += size;
  return block;
}

void SlabHeap::deallocate(void* block) noexcept {
  const std::size_t slab = (reinterpret_cast<std::uintptr_t>(block) - base_) / kSlabBytes;
  const std::lock_guard guard(lock_);
  SizeClass& sc = classes_[slab_class_[slab]];
  auto* node = static_cast<FreeBlock*>(block);
  node->next = sc.free;
  sc.free = node;
}

std::size_t SlabHeap::block_bytes(const void* block) const noexcept {
  const std::size_t slab = (reinterpret_cast<std::uintptr_t>(block) - base_) / kSlabBytes;
  const std::lock_guard guard(lock_);
  return class_bytes(slab_class_[slab]);
}

std::size_t SlabHeap::slabs_in_use() const noexcept {
  const std::lock_guard guard(lock_);
  return slabs_used_;
}

}  // namespace gpubudget::cli

// SlabHeap: the gpubudget executable's allocator for small objects (apps/cli/heap_hooks.cpp routes the
// global operator new/delete through it; the library itself never depends on it).
//
// Why: a `gpubudget fit` process lives ~3 ms and makes ~11,000 small allocations (names, JSON nodes,
// per-layer modules) totalling ~1.1 MB. On a virtual machine each fresh 4 KiB page costs ~10 µs to
// fault in, and glibc's malloc/free were a third of the process's instructions. SlabHeap serves sizes
// up to 16 KiB from one reserved, 2 MiB-aligned region advised for transparent huge pages (one fault
// per 2 MiB where the kernel grants a huge page, else ordinary 4 KiB faults), with a free list per size
// class: an allocation or a free is a few dozen instructions under an uncontended lock.
//
// Layout: the region is cut into 16 KiB slabs; each slab, once taken, holds blocks of one size class
// for the rest of the process (memory freed in one class is reused only by that class). Classes are
// 16-byte steps up to 128 B, then four per power of two up to 16 KiB (waste ≤ 25 %); every block is
// 16-byte aligned. Requests above 16 KiB, or when the region is exhausted, return nullptr: the caller
// falls back to malloc.
//
// Thread safety: every member function may be called from any thread. One spin lock guards the free
// lists: its critical sections are a few instructions, and a waiter yields its time slice after a
// short spin, so a preempted holder does not stall the others for long. While the process has a single
// thread (glibc's __libc_single_threaded) the lock is skipped, as glibc's malloc skips its own.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>  // glibc >= 2.32: __libc_single_threaded
#define GPUBUDGET_HAVE_SINGLE_THREADED 1
#endif

namespace gpubudget::cli {

class SlabHeap {
 public:
  static constexpr std::size_t kSlabBytes = 16 * 1024;
  static constexpr std::size_t kLargestBlockBytes = 16 * 1024;
  static constexpr std::size_t kClassCount = 36;  // 8 steps of 16 B, then 7 octaves x 4
  static constexpr std::size_t kMaxCapacityBytes = std::size_t{256} << 20;  // address space, not memory
  static constexpr std::size_t kBlockAlignment = 16;

  // The size class of a request of `bytes` (0 counts as 1), for bytes ≤ kLargestBlockBytes.
  static constexpr std::size_t class_of(std::size_t bytes) {
    if (bytes <= kStepClasses * kStepBytes) return bytes == 0 ? 0 : (bytes - 1) / kStepBytes;
    const auto octave = static_cast<std::size_t>(std::bit_width(bytes - 1) - 1);  // (2^octave, 2^(octave+1)]
    const std::size_t step = std::size_t{1} << (octave - 2);
    const std::size_t within = (bytes - (std::size_t{1} << octave) - 1) / step;  // 0..3
    return kStepClasses + (octave - kFirstOctave) * kClassesPerOctave + within;
  }
  // The block size of class `index` (< kClassCount), in bytes.
  static constexpr std::size_t class_bytes(std::size_t index) {
    if (index < kStepClasses) return (index + 1) * kStepBytes;
    const std::size_t octave = kFirstOctave + (index - kStepClasses) / kClassesPerOctave;
    const std::size_t within = (index - kStepClasses) % kClassesPerOctave;
    return (std::size_t{1} << octave) + (within + 1) * (std::size_t{1} << (octave - 2));
  }

  // Reserves `capacity_bytes` (rounded down to whole slabs, at most kMaxCapacityBytes) of address space;
  // pages are committed when first touched. If the reservation fails the heap is empty and every
  // allocate() returns nullptr.
  explicit SlabHeap(std::size_t capacity_bytes) noexcept;
  ~SlabHeap();
  SlabHeap(const SlabHeap&) = delete;
  SlabHeap& operator=(const SlabHeap&) = delete;

  // A 16-byte-aligned block of at least `bytes`, or nullptr (too large, or no slab left for its class).
  [[nodiscard]] void* allocate(std::size_t bytes) noexcept;
  // Returns a block from allocate() to its class's free list. REQUIRES: owns(block).
  void deallocate(void* block) noexcept {
    const std::size_t slab = (reinterpret_cast<std::uintptr_t>(block) - base_) / kSlabBytes;
    const Guard guard(lock_);
    SizeClass& sc = classes_[slab_class_[slab]];
    auto* node = static_cast<FreeBlock*>(block);
    node->next = sc.free;
    sc.free = node;
  }
  // True when `pointer` lies in this heap's region (then it came from allocate()).
  [[nodiscard]] bool owns(const void* pointer) const noexcept {
    const auto address = reinterpret_cast<std::uintptr_t>(pointer);
    return address - base_ < slab_count_ * kSlabBytes;  // unsigned: below base_ wraps to a large value
  }
  // The usable size of a block from allocate(): its class's size.
  [[nodiscard]] std::size_t block_bytes(const void* block) const noexcept;
  // Slabs taken so far (each kSlabBytes of address space), for tests.
  [[nodiscard]] std::size_t slabs_in_use() const noexcept;

 private:
  static constexpr std::size_t kStepClasses = 8;  // 16, 32, ..., 128 B
  static constexpr std::size_t kStepBytes = 16;
  static constexpr std::size_t kClassesPerOctave = 4;  // (2^k, 2^(k+1)] in four equal steps
  static constexpr std::size_t kFirstOctave = 7;       // (128, 256]
  static constexpr std::size_t kTableBytes = 1024;     // class_of by kSlabClassByGranule up to here
  static_assert(kClassCount ==
                kStepClasses + kClassesPerOctave * (std::bit_width(kLargestBlockBytes) - 1 - kFirstOctave));

  struct FreeBlock {
    FreeBlock* next;
  };
  struct SizeClass {
    FreeBlock* free = nullptr;  // blocks returned by deallocate()
    char* next = nullptr;       // never-used blocks of the current slab: [next, end)
    char* end = nullptr;
    std::size_t block_bytes = 0;
  };

  // A test-and-test-and-set spin lock.
  class SpinLock {
   public:
    void lock() noexcept {
      if (locked_.exchange(true, std::memory_order_acquire)) lock_contended();
    }
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

   private:
    void lock_contended() noexcept;
    std::atomic<bool> locked_{false};
  };

  // Holds the lock for a scope, unless the process has one thread.
  class Guard {
   public:
    explicit Guard(SpinLock& lock) noexcept : lock_(single_threaded() ? nullptr : &lock) {
      if (lock_ != nullptr) lock_->lock();
    }
    ~Guard() {
      if (lock_ != nullptr) lock_->unlock();
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    static bool single_threaded() noexcept {
#ifdef GPUBUDGET_HAVE_SINGLE_THREADED
      return __libc_single_threaded != 0;
#else
      return false;
#endif
    }
    SpinLock* lock_;
  };

  // Gives class `index` a fresh slab (the current one is used up); false when none is left.
  // REQUIRES: the lock is held.
  bool take_slab(std::size_t index) noexcept;

  mutable SpinLock lock_;
  void* mapping_ = nullptr;  // what mmap returned (unmapped by the destructor)
  std::size_t mapping_bytes_ = 0;
  std::uintptr_t base_ = 0;  // first slab, 2 MiB-aligned
  std::size_t slab_count_ = 0;
  std::size_t slabs_used_ = 0;
  std::array<SizeClass, kClassCount> classes_{};
  std::array<std::uint8_t, kMaxCapacityBytes / kSlabBytes> slab_class_{};  // class of each taken slab
};

// SlabHeap::class_of() of every multiple of 16 bytes up to 1 KiB: classes are multiples of 16, so a
// request's class is its 16-byte granule's.
inline constexpr auto kSlabClassByGranule = [] {
  std::array<std::uint8_t, 1024 / 16 + 1> table{};
  for (std::size_t granule = 0; granule < table.size(); ++granule) {
    table[granule] = static_cast<std::uint8_t>(SlabHeap::class_of(granule * 16));
  }
  return table;
}();
static_assert(SlabHeap::class_bytes(SlabHeap::kClassCount - 1) <= SlabHeap::kSlabBytes);

inline void* SlabHeap::allocate(std::size_t bytes) noexcept {
  if (bytes > kLargestBlockBytes) return nullptr;
  const std::size_t index =
      bytes <= kTableBytes ? kSlabClassByGranule[(bytes + kStepBytes - 1) / kStepBytes] : class_of(bytes);
  const Guard guard(lock_);
  SizeClass& sc = classes_[index];
  if (FreeBlock* block = sc.free) {
    sc.free = block->next;
    return block;
  }
  if (sc.next == sc.end && !take_slab(index)) return nullptr;
  void* block = sc.next;
  sc.next += sc.block_bytes;
  return block;
}

}  // namespace gpubudget::cli

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
// short spin, so a preempted holder does not stall the others for long.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <atomic>

namespace gpubudget::cli {

class SlabHeap {
 public:
  static constexpr std::size_t kSlabBytes = 16 * 1024;
  static constexpr std::size_t kLargestBlockBytes = 16 * 1024;
  static constexpr std::size_t kClassCount = 36;          // 8 steps of 16 B, then 7 octaves x 4
  static constexpr std::size_t kMaxCapacityBytes = std::size_t{256} << 20;  // address space, not memory
  static constexpr std::size_t kBlockAlignment = 16;

  // The size class of a request of `bytes` (0 counts as 1), for bytes ≤ kLargestBlockBytes.
  static std::size_t class_of(std::size_t bytes);
  // The block size of class `index` (< kClassCount), in bytes.
  static std::size_t class_bytes(std::size_t index);

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
  void deallocate(void* block) noexcept;
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
  struct FreeBlock {
    FreeBlock* next;
  };
  struct SizeClass {
    FreeBlock* free = nullptr;  // blocks returned by deallocate()
    char* next = nullptr;       // never-used blocks of the current slab: [next, end)
    char* end = nullptr;
  };

  // A test-and-test-and-set spin lock (BasicLockable, for std::lock_guard).
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

  mutable SpinLock lock_;
  void* mapping_ = nullptr;         // what mmap returned (unmapped by the destructor)
  std::size_t mapping_bytes_ = 0;
  std::uintptr_t base_ = 0;         // first slab, 2 MiB-aligned
  std::size_t slab_count_ = 0;
  std::size_t slabs_used_ = 0;
  std::array<SizeClass, kClassCount> classes_{};
  std::array<std::uint8_t, kMaxCapacityBytes / kSlabBytes> slab_class_{};  // class of each taken slab
};

}  // namespace gpubudget::cli

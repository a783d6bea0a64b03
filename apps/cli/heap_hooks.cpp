// The gpubudget executable's global operator new and delete (replaceable allocation functions,
// [new.delete]): blocks up to 16 KiB come from a SlabHeap (slab_heap.h says why), everything else
// and everything after the heap's region is used up from malloc. Linked only into the executable,
// and only when GPUBUDGET_CLI_HEAP is ON (the release preset); never into the library, the C ABI or a
// sanitizer build, whose allocators must see every block.
#include <cstdlib>
#include <new>

#include "heap_hooks.h"

namespace {

using gpubudget::cli::SlabHeap;

// Constructed on the first allocation, which static initialisers make before main starts a thread,
// and never destroyed: blocks are still freed by destructors that run after main returns.
alignas(SlabHeap) unsigned char heap_storage[sizeof(SlabHeap)];
SlabHeap* heap_instance = nullptr;

SlabHeap& heap() {
  if (heap_instance == nullptr) [[unlikely]] {
    heap_instance = new (heap_storage) SlabHeap(SlabHeap::kMaxCapacityBytes);
  }
  return *heap_instance;
}

}  // namespace

const gpubudget::cli::SlabHeap& gpubudget::cli::executable_heap() { return heap(); }

namespace {

void* allocate(std::size_t bytes) {
  if (void* block = heap().allocate(bytes)) return block;
  if (void* block = std::malloc(bytes == 0 ? 1 : bytes)) return block;
  throw std::bad_alloc();
}

void* allocate_aligned(std::size_t bytes, std::align_val_t alignment) {
  const auto align = static_cast<std::size_t>(alignment);
  if (align <= SlabHeap::kBlockAlignment) return allocate(bytes);
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = (bytes + align - 1) / align * align;
  if (void* block = std::aligned_alloc(align, rounded == 0 ? align : rounded)) return block;
  throw std::bad_alloc();
}

void release(void* block) noexcept {
  if (block == nullptr) return;
  SlabHeap& h = heap();
  if (h.owns(block)) {
    h.deallocate(block);
  } else {
    std::free(block);
  }
}

}  // namespace

void* operator new(std::size_t bytes) { return allocate(bytes); }
void* operator new[](std::size_t bytes) { return allocate(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return allocate(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, const std::nothrow_t& tag) noexcept { return operator new(bytes, tag); }
void* operator new(std::size_t bytes, std::align_val_t alignment) { return allocate_aligned(bytes, alignment); }
void* operator new[](std::size_t bytes, std::align_val_t alignment) { return allocate_aligned(bytes, alignment); }
void* operator new(std::size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return allocate_aligned(bytes, alignment);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, std::align_val_t alignment, const std::nothrow_t& tag) noexcept {
  return operator new(bytes, alignment, tag);
}

void operator delete(void* block) noexcept { release(block); }
void operator delete[](void* block) noexcept { release(block); }
void operator delete(void* block, std::size_t) noexcept { release(block); }
void operator delete[](void* block, std::size_t) noexcept { release(block); }
void operator delete(void* block, const std::nothrow_t&) noexcept { release(block); }
void operator delete[](void* block, const std::nothrow_t&) noexcept { release(block); }
void operator delete(void* block, std::align_val_t) noexcept { release(block); }
void operator delete[](void* block, std::align_val_t) noexcept { release(block); }
void operator delete(void* block, std::size_t, std::align_val_t) noexcept { release(block); }
void operator delete[](void* block, std::size_t, std::align_val_t) noexcept { release(block); }
void operator delete(void* block, std::align_val_t, const std::nothrow_t&) noexcept { release(block); }
void operator delete[](void* block, std::align_val_t, const std::nothrow_t&) noexcept { release(block); }

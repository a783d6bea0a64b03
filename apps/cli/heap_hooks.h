// The executable's heap behind the global operator new (heap_hooks.cpp), for tests that link it.
#pragma once

#include "slab_heap.h"

namespace gpubudget::cli {

const SlabHeap& executable_heap();

}  // namespace gpubudget::cli

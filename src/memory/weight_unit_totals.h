// The sums weights_per_gpu() and checkpoint_bytes() need, over the same enumeration as
// weight_units() but without building names (internal to weights.cpp and weight_units.cpp).
#pragma once

#include <array>

#include "gpubudget/weight_units.h"

namespace gpubudget::detail {

struct WeightUnitTotals {
  std::array<Bytes, kComponentCount> per_gpu{};  // indexed by Component
  Bytes checkpoint;
  std::int64_t checkpoint_parameters = 0;  // weight elements of the checkpoint's units (scales not counted)
};
// Which sums to compute (the other is left 0): both, per GPU only (fit), checkpoint only.
enum class WeightSums { kBoth, kPerGpu, kCheckpoint };
WeightUnitTotals weight_unit_totals(const ModelSpec& model, const ParallelLayout& layout,
                                    WeightSums sums = WeightSums::kBoth);

}  // namespace gpubudget::detail

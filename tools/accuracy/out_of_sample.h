// Out-of-sample accuracy: every observation row predicted by overhead coefficients fitted without the
// rows of its own group (its model, or its GPU kind), as a user's deployment that nobody calibrated on.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpubudget/calibrate.h"

namespace gpubudget {

// Which group a row belongs to ("Qwen/Qwen3-8B", "h100").
using RowGroup = std::function<std::string(const ReplayRow&)>;

// The model a row ran (its bundled config, else the logged id) and its GPU preset.
std::string model_group(const ReplayRow& row);
std::string gpu_group(const ReplayRow& row);

// For each group of the replayed rows (`in_sample`, from `observations` and `aliases` with `configs`):
// every profile of `configs` recalibrated (calibrate_profile, in version order, each on its
// recalibrated base) on the rows outside the group, then the group's rows replayed with those profiles.
// Returns the group's rows so predicted, for every group, in the order of `in_sample`; a row whose
// profile had no training rows left for a term fitted in sample (the shipped coefficient would be the
// group's own fit) gets a status saying so instead. Scratch profiles are written under the system's
// temporary directory and removed.
std::vector<ReplayRow> leave_one_group_out(const std::vector<ReplayRow>& in_sample, const std::string& observations,
                                           const std::string& aliases, const ConfigDir& configs,
                                           const RowGroup& group);

}  // namespace gpubudget

// The accuracy report (docs/accuracy.md) as Markdown, from replayed observations.
#pragma once

#include <string>
#include <vector>

#include "gpubudget/calibrate.h"

namespace gpubudget {

std::string accuracy_markdown(const std::vector<ReplayRow>& rows);

}  // namespace gpubudget

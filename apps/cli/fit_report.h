// The human-readable `fit` report: the budget, the KV cache, the largest length, the verdict and the
// remedies (the JSON document is the library's fit_json).
#pragma once

#include <ostream>
#include <vector>

#include "gpubudget/json_documents.h"

namespace gpubudget::cli {

// `explanations` (explain_fit) are printed after the report when not empty (`--explain`).
void write_fit_text(const FitQuery& query, const FitResult& result, const std::vector<Remedy>& remedies,
                    const std::vector<Explanation>& explanations, std::ostream& out);

}  // namespace gpubudget::cli

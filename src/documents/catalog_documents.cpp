// gpus_json and models_json (json_documents.h): what gpubudget knows, as `gpus --json` and
// `models --json` list it.
#include <fmt/format.h>

#include "documents/document_text.h"
#include "gpubudget/json_documents.h"

namespace gpubudget {

using detail::Document;

std::string gpus_json(const std::vector<GpuSpec>& presets) {
  Document array = Document::array();
  for (const auto& g : presets) {
    array.push_back({{"name", g.name},
                     {"device_name", g.device_name},
                     {"memory_bytes", g.memory.count()},
                     {"nvidia_smi_mib", g.nvidia_smi_mib},
                     {"memory_estimated", g.memory_estimated},
                     {"compute_capability", g.platform == Platform::kCuda ? fmt::format("{}.{}", g.compute_capability_major,
                                                                                        g.compute_capability_minor)
                                                                          : std::string("rocm")}});
  }
  return detail::document_text(array);
}

std::string models_json(const std::vector<std::string>& ids) { return detail::document_text(Document(ids)); }

}  // namespace gpubudget

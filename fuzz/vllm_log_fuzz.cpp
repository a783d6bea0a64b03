// Fuzzes the vLLM log reader, the diagnosis made from its facts alone, and the diagnosis with a model,
// where the log's settings (TP, lengths, batch sizes, dtypes) are fed into fit() and the remedies.
#include <sstream>
#include <string>

#include "fuzz_target.h"
#include "gpubudget/diagnosis.h"
#include "gpubudget/error.h"
#include "gpubudget/vllm_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpubudget::VllmLogWordings wordings =
      gpubudget::load_vllm_log_wordings(gpubudget::ConfigDir{GPUBUDGET_FUZZ_CONFIG_DIR});
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  const gpubudget::VllmLogFacts facts = gpubudget::read_vllm_log(in, "fuzz.log", wordings);
  const gpubudget::Diagnosis d = gpubudget::diagnose_log(facts, {});
  (void)gpubudget::observation_row(facts, d, {});
  try {
    static const gpubudget::ConfigDir configs{GPUBUDGET_FUZZ_CONFIG_DIR};
    const auto with_model = gpubudget::diagnose_with_settings(facts, {"meta-llama/Llama-3.1-8B", "h100", "", {}, {}}, configs);
    (void)gpubudget::observation_row(with_model.facts, with_model.diagnosis, with_model.context);
  } catch (const gpubudget::InputError&) {
  }
  return 0;
}

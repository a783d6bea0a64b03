// Fuzzes the vLLM log reader and the diagnosis made from its facts alone.
#include <sstream>
#include <string>

#include "fuzz_target.h"
#include "gpubudget/diagnosis.h"
#include "gpubudget/vllm_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpubudget::VllmLogWordings wordings =
      gpubudget::load_vllm_log_wordings(gpubudget::ConfigDir{GPUBUDGET_FUZZ_CONFIG_DIR});
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  const gpubudget::VllmLogFacts facts = gpubudget::read_vllm_log(in, "fuzz.log", wordings);
  const gpubudget::Diagnosis d = gpubudget::diagnose_log(facts, {});
  (void)gpubudget::observation_row(facts, d, {});
  return 0;
}

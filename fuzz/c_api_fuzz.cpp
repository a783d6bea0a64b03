// Fuzzes the C ABI as a caller in another language would use it: input = a request text. Every
// request is answered with a status and a JSON document; nothing escapes, nothing crashes.
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_target.h"
#include "gpubudget/gpubudget.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The request as the caller's NUL-terminated string, with the bundled configs unless it names others.
  std::string request(reinterpret_cast<const char*>(data), size);
  if (request.find("config_dir") == std::string::npos && !request.empty() && request.front() == '{' &&
      request.size() > 1) {
    request.insert(1, "\"config_dir\": \"" GPUBUDGET_FUZZ_CONFIG_DIR "\", ");
  }
  char* out = nullptr;
  const int status = gpubudget_run_json(request.c_str(), &out);
  if (out == nullptr) std::abort();
  if (status < 0 || status > 4 || status == 2) std::abort();
  if (!nlohmann::json::accept(out)) std::abort();  // always a JSON document
  gpubudget_free(out);
  return 0;
}

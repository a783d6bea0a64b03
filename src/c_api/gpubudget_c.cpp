// The C ABI (include/gpubudget/gpubudget.h): the request is parsed here and answered by
// c_requests.cpp; no exception leaves this file.
#include "gpubudget/gpubudget.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>

#include <nlohmann/json.hpp>

#include "c_api/c_requests.h"
#include "gpubudget/version.h"

namespace {

// The longest request accepted (real ones are a few hundred bytes) and its deepest nesting.
constexpr std::size_t kMaxRequestBytes = std::size_t{1} << 20;
constexpr int kMaxRequestDepth = 16;

char* copy_out(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

// This shared library's own path, so configs are found beside an installed library
// (<prefix>/lib/../share/gpubudget/configs) as the CLI finds them beside its executable.
std::filesystem::path library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&gpubudget_run_json), &info) != 0 && info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return {};
}

gpubudget::c_api::Answer run(const char* request_json) {
  using gpubudget::c_api::error_document;
  if (request_json == nullptr) return {3, error_document("request_json is NULL", 3)};
  const std::size_t length = strnlen(request_json, kMaxRequestBytes + 1);
  if (length > kMaxRequestBytes) {
    return {3, error_document("request is longer than " + std::to_string(kMaxRequestBytes) + " bytes", 3)};
  }
  // Parsed with a depth limit: the callback refuses a value nested deeper than kMaxRequestDepth.
  const auto depth_limit = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxRequestDepth) throw std::length_error("nested deeper than " + std::to_string(kMaxRequestDepth));
    return true;
  };
  nlohmann::json request;
  try {
    request = nlohmann::json::parse(request_json, request_json + length, depth_limit);
  } catch (const nlohmann::json::exception& e) {
    return {3, error_document(std::string("request is not JSON: ") + e.what(), 3)};
  } catch (const std::length_error& e) {
    return {3, error_document(std::string("request is ") + e.what(), 3)};
  }
  return gpubudget::c_api::answer_request(request, library_path());
}

}  // namespace

extern "C" const char* gpubudget_version(void) { return gpubudget::kVersion; }

extern "C" int gpubudget_run_json(const char* request_json, char** out_json) {
  gpubudget::c_api::Answer answer{4, ""};
  try {
    answer = run(request_json);
  } catch (const std::bad_alloc&) {
    answer = {4, R"({"error": "out of memory", "status": 4})"};
  } catch (...) {
    answer = {4, R"({"error": "internal error", "status": 4})"};
  }
  if (out_json != nullptr) *out_json = copy_out(answer.document);
  return answer.status;
}

extern "C" void gpubudget_free(char* text) { std::free(text); }

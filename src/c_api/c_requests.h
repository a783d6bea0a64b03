// The C ABI's operations (include/gpubudget/gpubudget.h): one JSON request object in, one JSON
// document out, each operation answered by the library's own calls (docs/api.md, "C ABI").
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "gpubudget/deployment.h"
#include "gpubudget/model_spec.h"

namespace gpubudget::c_api {

struct Answer {
  int status = 0;        // 0 computed (fits), 1 computed (does not fit / nothing found), 3 bad input, 4 internal
  std::string document;  // the operation's JSON document, or {"error": ..., "status": ...}
};

// Answers `request`, a parsed JSON value (any type: a malformed request is status 3). `library`
// locates the bundled configs when the request names no "config_dir". With `model` (not null), the
// operations that size a model (fit, weights, sweep, plan) use it, and the request must not name one.
// Throws nothing but std::bad_alloc.
Answer answer_request(const nlohmann::json& request, const std::filesystem::path& library,
                      const ModelSpec* model = nullptr);

// A deployment from its fields named as vLLM names its arguments (the request's "deployment", docs/api.md);
// absent or null fields keep Deployment's defaults. InputError names `origin` and the field.
Deployment read_deployment_fields(const nlohmann::json& fields, const std::string& origin);

// {"error": message, "status": status}, with invalid UTF-8 replaced.
std::string error_document(const std::string& message, int status);

}  // namespace gpubudget::c_api

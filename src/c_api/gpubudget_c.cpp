// The C ABI (include/gpubudget/gpubudget.h): requests become CLI arguments for run_cli, its `--json`
// output is returned as is. Every exception is caught here.
#include "gpubudget/gpubudget.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "gpubudget/version.h"

namespace {

char* copy_out(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

std::string error_json(const std::string& message, int status) {
  return nlohmann::json{{"error", message}, {"status", status}}.dump(-1, ' ', false,
                                                                     nlohmann::json::error_handler_t::replace);
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

int run(const char* request_json, std::string& response) {
  if (request_json == nullptr) {
    response = error_json("request_json is NULL", 2);
    return 2;
  }
  nlohmann::json request;
  try {
    request = nlohmann::json::parse(request_json);
  } catch (const nlohmann::json::exception& e) {
    response = error_json(std::string("request is not JSON: ") + e.what(), 2);
    return 2;
  }
  if (!request.is_object() || !request.contains("command") || !request["command"].is_string()) {
    response = error_json("request must be an object with a string \"command\"", 2);
    return 2;
  }
  std::vector<std::string> args;
  if (request.contains("config_dir")) {
    if (!request["config_dir"].is_string()) {
      response = error_json("\"config_dir\" must be a string", 2);
      return 2;
    }
    args = {"--config-dir", request["config_dir"].get<std::string>()};
  }
  const std::string command = request["command"].get<std::string>();
  args.push_back(command);
  if (request.contains("args")) {
    if (!request["args"].is_array()) {
      response = error_json("\"args\" must be an array of strings", 2);
      return 2;
    }
    for (const auto& a : request["args"]) {
      if (!a.is_string()) {
        response = error_json("\"args\" must be an array of strings", 2);
        return 2;
      }
      args.push_back(a.get<std::string>());
    }
  }
  if (command != "calibrate" && command != "version" && command != "models") args.push_back("--json");
  std::ostringstream out, err;
  const int status = gpubudget::cli::run_cli(args, out, err, library_path());
  if (status >= 2) {
    std::string message = err.str();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    response = error_json(message, status);
  } else {
    response = out.str();
  }
  return status;
}

}  // namespace

extern "C" const char* gpubudget_version(void) { return gpubudget::kVersion; }

extern "C" int gpubudget_run_json(const char* request_json, char** out_json) {
  std::string response;
  int status = 4;
  try {
    status = run(request_json, response);
  } catch (const std::exception& e) {
    response = error_json(std::string("internal error: ") + e.what(), 4);
    status = 4;
  } catch (...) {
    response = error_json("internal error", 4);
    status = 4;
  }
  if (out_json != nullptr) *out_json = copy_out(response);
  return status;
}

extern "C" void gpubudget_free(char* text) { std::free(text); }

// Starts tests/hub/fake_hub.py (a Hugging Face Hub stand-in on 127.0.0.1) for one test and stops it
// when the test ends.
#pragma once

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "hub/http_client.h"

extern char** environ;

namespace gpubudget::test {

class FakeHub {
 public:
  // Serves the repositories under `root` (ROOT/ORG/NAME/...), each request delayed by `latency_ms`.
  explicit FakeHub(const std::filesystem::path& root, double latency_ms = 0, const std::string& token = "") {
    port_file_ = root.string() + ".ports";
    std::filesystem::remove(port_file_);
    std::vector<std::string> args = {GPUBUDGET_TEST_PYTHON, std::string(GPUBUDGET_TEST_SOURCE_DIR) + "/tests/hub/fake_hub.py",
                                     "--root", root.string(), "--port-file", port_file_,
                                     "--latency-ms", std::to_string(latency_ms)};
    if (!token.empty()) {
      args.push_back("--token");
      args.push_back(token);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
    for (int i = 0; i < 200 && pid_ > 0; ++i) {  // up to 10 s for the server to listen
      std::ifstream in(port_file_);
      if (in >> hub_port_ >> cdn_port_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("the fake Hub did not start (python3 tests/hub/fake_hub.py)");
  }
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;
  ~FakeHub() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(hub_port_); }

  // The requests both servers saw: {"server": "hub"|"cdn", "path", "authorization": bool, "range"}.
  [[nodiscard]] nlohmann::json requests() const {
    detail::HttpClient http("", "", std::chrono::milliseconds(10000));
    const auto r = http.fetch_all({{url() + "/__requests", std::nullopt, 0, 1 << 28}}).front();
    return nlohmann::json::parse(r.body);
  }

 private:
  pid_t pid_ = -1;
  std::string port_file_;
  int hub_port_ = 0;
  int cdn_port_ = 0;
};

}  // namespace gpubudget::test

// Version profiles and GPU presets are data; these tests pin the selection rules and the strictness.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "test_support.h"

namespace gpubudget {
namespace {

TEST(Profiles, NewestProfileNotNewerThanTheRequestedVersion) {
  EXPECT_EQ(load_vllm_profile("0.12.3", test::configs()).version, "0.11.1");
  EXPECT_EQ(load_vllm_profile("0.15", test::configs()).version, "0.15");
  EXPECT_EQ(load_vllm_profile("0.16.1", test::configs()).version, "0.16");
  EXPECT_EQ(load_vllm_profile("0.17", test::configs()).version, "0.17");
  EXPECT_EQ(load_vllm_profile("v0.21.0", test::configs()).version, "0.21");
  EXPECT_EQ(load_vllm_profile("", test::configs()).version, "0.22");
  EXPECT_THROW(load_vllm_profile("0.10", test::configs()), InputError);
  EXPECT_THROW(load_vllm_profile("latest", test::configs()), InputError);
}

TEST(Profiles, UtilizationDefaultChangesAt021) {
  EXPECT_DOUBLE_EQ(load_vllm_profile("0.20", test::configs()).default_gpu_memory_utilization, 0.9);
  EXPECT_DOUBLE_EQ(load_vllm_profile("0.21", test::configs()).default_gpu_memory_utilization, 0.92);
}

TEST(Profiles, VllmGibFormatting) {
  // format_gib: round(x, 2) without trailing zeros; before vLLM #28051: "%.2f".
  const Bytes b(static_cast<std::int64_t>(12.2 * 1073741824.0));
  EXPECT_EQ(format_vllm_gib(b, false), "12.2");
  EXPECT_EQ(format_vllm_gib(b, true), "12.20");
  EXPECT_EQ(format_vllm_gib(Bytes(18'421'383'168LL), false), "17.16");
  EXPECT_EQ(format_vllm_gib(gib(12), false), "12.0");
}

TEST(GpuPresets, VisibleTotalsAreWhatVllmLogs) {
  // The issue's list of CUDA-visible totals, GiB to two decimals.
  const std::pair<const char*, double> expected[] = {
      {"rtx-pro-6000", 94.97}, {"h100", 79.19},    {"h200", 139.81},     {"b200", 178.35}, {"a100-80gb", 79.25},
      {"a100-40gb", 39.38},    {"l40s", 44.39},    {"rtx-4090", 23.53}, {"rtx-5090", 31.36}, {"mi300x", 191.98}};
  for (const auto& [name, gib_total] : expected) {
    EXPECT_NEAR(to_gib(load_gpu_preset(name, test::configs()).memory), gib_total, 0.005) << name;
  }
}

TEST(GpuPresets, UnknownNameListsTheKnownOnes) {
  try {
    load_gpu_preset("h1000", test::configs());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--gpu h1000: no such preset (known: a100-40gb"), std::string::npos)
        << e.what();
  }
}

TEST(GpuPresets, UnknownKeysAreRejected) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gpubudget_profiles_test";
  fs::create_directories(dir / "gpus");
  std::ofstream(dir / "gpus" / "typo.json")
      << R"({"schema_version":1,"name":"typo","device_name":"x","memory_bytes":1024,"platform":"cuda",
            "compute_capability":"9.0","memroy_bytes":5})";
  try {
    load_gpu_preset("typo", ConfigDir{dir});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/memroy_bytes: unknown key"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpubudget

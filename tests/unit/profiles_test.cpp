// Version profiles and GPU presets are data; these tests pin the selection rules and the strictness.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "solve/vllm_text.h"
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
  // 0.10 is answered with the oldest profile (and a note: fit_test.cpp); before 0.10 is refused.
  EXPECT_EQ(load_vllm_profile("0.10", test::configs()).version, "0.11");
  test::expect_input_error([&] { (void)(load_vllm_profile("0.9.2", test::configs())); }, "--vllm-version 0.9.2: older than 0.10");
  test::expect_input_error([&] { (void)(load_vllm_profile("latest", test::configs())); }, "--vllm-version: expected a version like 0.15 or 0.21.1, got \"latest\"");
}

// #38284 (2026-04-21) raised the default to 0.92 and charged the CUDA-graph estimate; a stock v0.20.0
// startup log already charges it, so the change is in 0.20 (docs/differences.md).
TEST(Profiles, UtilizationDefaultChangesAt020) {
  EXPECT_DOUBLE_EQ(load_vllm_profile("0.19", test::configs()).default_gpu_memory_utilization, 0.9);
  EXPECT_FALSE(load_vllm_profile("0.19", test::configs()).charges_cudagraph_memory);
  EXPECT_DOUBLE_EQ(load_vllm_profile("0.20", test::configs()).default_gpu_memory_utilization, 0.92);
  EXPECT_TRUE(load_vllm_profile("0.20", test::configs()).charges_cudagraph_memory);
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

// Device names exactly as nvidia-smi, torch and vLLM logs print them (docs/gpus.md cites each source);
// one name is often part of another (GB200 / B200, H200 / H20, A100 / A10, L40S / L4).
TEST(GpuPresets, DeviceNamesMapToTheirPresets) {
  const std::pair<const char*, const char*> kNames[] = {
      {"NVIDIA H100 80GB HBM3", "h100"},
      {"NVIDIA H200", "h200"},
      {"NVIDIA H20", "h20"},
      {"NVIDIA H800", "h800"},
      {"NVIDIA GB200", "gb200"},
      {"NVIDIA B200", "b200"},
      {"NVIDIA GB300", "gb300"},
      {"NVIDIA B300 SXM6 AC", "b300"},
      {"NVIDIA GB10", "dgx-spark"},
      {"NVIDIA A100-SXM4-40GB", "a100-40gb"},
      {"NVIDIA A100-SXM4-80GB", "a100-80gb"},
      {"NVIDIA A10G", "a10g"},
      {"NVIDIA A10", "a10"},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"},
      {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-ws"},
      {"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "rtx-pro-6000-max-q"},
      {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
      {"NVIDIA RTX A6000", "rtx-a6000"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA L20", "l20"},
      {"NVIDIA L4", "l4"},
      {"Tesla T4", "t4"},
      {"AMD Instinct MI325X", "mi325x"},
      {"AMD Instinct MI355X", "mi355x"},
  };
  for (const auto& [device, preset] : kNames) {
    EXPECT_EQ(gpu_preset_for_device_name(device, test::configs()), preset) << device;
    EXPECT_EQ(load_gpu_preset(preset, test::configs()).device_name, device) << preset;
  }
  EXPECT_EQ(gpu_preset_for_device_name("NVIDIA L40", test::configs()), "");  // no preset, not the L4's
  EXPECT_EQ(gpu_preset_for_device_name("NVIDIA RTX A1000", test::configs()), "");
}

// A log's two-decimal total names the measured preset nearest it; an estimated preset (H800 from the
// H100, the RTX PRO 6000 Workstation from the Server Edition) is never inferred from a total.
TEST(GpuPresets, TotalsFromLogsPickTheNearestMeasuredPreset) {
  const auto by_total = [](double gib) {
    const auto g = find_gpu_preset_by_memory(test::configs(), gib);
    return g ? g->name : std::string("none");
  };
  EXPECT_EQ(by_total(79.19), "h100");
  EXPECT_EQ(by_total(94.97), "rtx-pro-6000");
  EXPECT_EQ(by_total(22.03), "l4");
  EXPECT_EQ(by_total(22.06), "a10g");
  EXPECT_EQ(by_total(184.31), "gb200");
  EXPECT_EQ(by_total(121.69), "dgx-spark");
  EXPECT_EQ(by_total(95.00), "none");  // H20 (95.005 GiB) and the Max-Q (95.01): too close to tell
  EXPECT_EQ(by_total(95.01), "none");
  EXPECT_EQ(by_total(60.0), "none");
  // Each preset's total in bytes is its source's figure: GiB to the nearest MiB, or exact bytes.
  EXPECT_EQ(load_gpu_preset("h20", test::configs()).memory.count(), std::int64_t{97285} << 20);
  EXPECT_EQ(load_gpu_preset("rtx-pro-6000-max-q", test::configs()).memory.count(), 102014189568);
  EXPECT_EQ(load_gpu_preset("gb200", test::configs()).memory.count(), std::int64_t{188733} << 20);  // 184.31 GiB
  EXPECT_TRUE(load_gpu_preset("h800", test::configs()).memory_estimated);
  EXPECT_FALSE(load_gpu_preset("h100", test::configs()).memory_estimated);
}

TEST(GpuPresets, UnknownNameListsTheKnownOnes) {
  try {
    load_gpu_preset("h1000", test::configs());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--gpu h1000: no such preset (known: a10, a100-40gb"), std::string::npos)
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

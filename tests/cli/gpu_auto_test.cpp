// `fit --gpu auto` and the nvidia-smi reader, with a stand-in nvidia-smi on PATH.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "fixtures/safetensors_writer.h"
#include "gpubudget/gpu_detect.h"
#include "test_support.h"

namespace gpubudget {
namespace {

namespace fs = std::filesystem;

// Puts a script named nvidia-smi that prints `output` and exits with `status` first on PATH.
class FakeNvidiaSmi {
 public:
  FakeNvidiaSmi(const std::string& output, int status = 0) {
    dir_ = test::fresh_fixture_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(dir_ / "output.txt") << output;
    std::ofstream script(dir_ / "nvidia-smi");
    script << "#!/bin/sh\n"
           << "[ \"$1\" = \"--query-gpu=name,memory.total,memory.used,compute_cap\" ] || exit 9\n"
           << "cat \"" << (dir_ / "output.txt").string() << "\"\nexit " << status << "\n";
    script.close();
    fs::permissions(dir_ / "nvidia-smi", fs::perms::owner_all);
    old_path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
    ::setenv("PATH", (dir_.string() + ":" + old_path_).c_str(), 1);
    ::unsetenv("CUDA_VISIBLE_DEVICES");
  }
  FakeNvidiaSmi(const FakeNvidiaSmi&) = delete;
  FakeNvidiaSmi& operator=(const FakeNvidiaSmi&) = delete;
  ~FakeNvidiaSmi() {
    ::setenv("PATH", old_path_.c_str(), 1);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

 private:
  fs::path dir_;
  std::string old_path_;
};

using test::CliRun;
CliRun run(std::vector<std::string> args) { return test::run_cli(std::move(args)); }

TEST(NvidiaSmi, CsvWithAndWithoutHeaderAndUnits) {
  const auto gpus = parse_nvidia_smi_csv(
      "name, memory.total [MiB], memory.used [MiB], compute_cap\n"
      "NVIDIA H100 80GB HBM3, 81559 MiB, 1 MiB, 9.0\n"
      "NVIDIA GB10, [N/A], [N/A], 12.1\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpus[0].total_mib, 81559);
  EXPECT_EQ(gpus[0].used_mib, 1);
  EXPECT_EQ(gpus[0].compute_capability->major, 9);
  EXPECT_FALSE(gpus[1].total_mib.has_value());
  EXPECT_EQ(gpus[1].compute_capability->minor, 1);
  test::expect_input_error([] { (void)parse_nvidia_smi_csv("NVIDIA H100, 81559\n"); }, "line 1");
  test::expect_input_error([] { (void)parse_nvidia_smi_csv("NVIDIA H100, lots, 0, 9.0\n"); }, "\"lots\" is not a MiB count");
}

TEST(GpuAuto, AnIdleH100IsTheH100Preset) {
  const FakeNvidiaSmi smi("NVIDIA H100 80GB HBM3, 81559, 4, 9.0\nNVIDIA H100 80GB HBM3, 81559, 4, 9.0\n");
  const CliRun automatic = run({"fit", "Qwen/Qwen3-8B", "--gpu", "auto", "-tp", "2", "--json"});
  const CliRun named = run({"fit", "Qwen/Qwen3-8B", "--gpu", "h100", "-tp", "2", "--json"});
  ASSERT_EQ(automatic.code, 0) << automatic.err;
  EXPECT_EQ(automatic.out, named.out);
  EXPECT_NE(automatic.err.find("--gpu auto: 2 GPU(s); budgeting for GPU 0, NVIDIA H100 80GB HBM3 (h100: 79.19 GiB"),
            std::string::npos)
      << automatic.err;
  EXPECT_EQ(automatic.err.find("warning"), std::string::npos) << automatic.err;
}

TEST(GpuAuto, MemoryInUseThatWouldFailVllmsStartupCheckIsWarned) {
  // 79.19 GiB x 0.9 = 71.27 GiB must be free; 10,000 MiB in use leaves 69.43 GiB.
  const FakeNvidiaSmi smi("NVIDIA H100 80GB HBM3, 81559, 10000, 9.0\n");
  const CliRun r = run({"fit", "Qwen/Qwen3-8B", "--gpu", "auto", "--gpu-memory-utilization", "0.9"});
  EXPECT_NE(r.err.find("warning: GPU 0 already has 9.77 GiB in use: vLLM's startup check needs 71.27 GiB free"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("lower the utilization to 0.87"), std::string::npos) << r.err;  // (79.19 - 9.77) / 79.19
  const CliRun lower = run({"fit", "Qwen/Qwen3-8B", "--gpu", "auto", "--gpu-memory-utilization", "0.87"});
  EXPECT_EQ(lower.err.find("already has"), std::string::npos) << lower.err;
}

TEST(GpuAuto, AnUnknownGpuIsEstimatedFromNvidiaSmiAndSaysSo) {
  const FakeNvidiaSmi smi("NVIDIA Future GPU, 100000, 0, 11.0\n");
  const CliRun r = run({"fit", "Qwen/Qwen3-8B", "--gpu", "auto", "--json"});
  ASSERT_LE(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("estimated"), std::string::npos) << r.err;
  const auto gpu = gpu_for_detected(parse_nvidia_smi_csv("NVIDIA Future GPU, 100000, 0, 11.0\n")[0], test::configs());
  EXPECT_EQ(gpu.memory.count(), std::int64_t{99000} << 20);  // 1% below nvidia-smi's 100000 MiB
  EXPECT_TRUE(gpu.memory_estimated);
  EXPECT_EQ(gpu.compute_capability_major, 11);
  // A preset's card with ECC switched off: the total moves with nvidia-smi's (49140 - 46068 MiB).
  const auto l20 = gpu_for_detected(parse_nvidia_smi_csv("NVIDIA L20, 49140, 0, 8.9\n")[0], test::configs());
  EXPECT_EQ(l20.memory.count(), load_gpu_preset("l20", test::configs()).memory.count() + (std::int64_t{3072} << 20));
}

TEST(GpuAuto, NoNvidiaSmiOrAFailingOneIsExitThree) {
  {
    const std::string old = std::getenv("PATH");
    ::setenv("PATH", "/nonexistent", 1);
    const CliRun r = run({"fit", "Qwen/Qwen3-8B", "--gpu", "auto"});
    ::setenv("PATH", old.c_str(), 1);
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("--gpu auto: nvidia-smi is not on PATH"), std::string::npos) << r.err;
  }
  const FakeNvidiaSmi smi(
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
      "driver is installed and running.\n",
      9);
  const CliRun r = run({"fit", "Qwen/Qwen3-8B", "--gpu", "auto"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("nvidia-smi failed (exit 9): NVIDIA-SMI has failed because it couldn't communicate"),
            std::string::npos)
      << r.err;
}

TEST(GpuAuto, CudaVisibleDevicesPicksTheGpus) {
  const FakeNvidiaSmi smi("NVIDIA H100 80GB HBM3, 81559, 40000, 9.0\nNVIDIA H100 80GB HBM3, 81559, 0, 9.0\n");
  ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  const auto gpus = detect_nvidia_gpus();
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].used_mib, 0);
  EXPECT_EQ(gpus[0].index, 0);
}

}  // namespace
}  // namespace gpubudget

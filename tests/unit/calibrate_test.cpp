// `calibrate` produces the shipped profiles from the shipped observations, byte for byte, and a
// calibrated profile is usable by fit.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpubudget/calibrate.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "test_support.h"

namespace gpubudget {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<ReplayRow> rows() {
  return replay_observations(test::data_dir() + "/observations/vllm-runs.jsonl",
                                       test::data_dir() + "/observations/model_aliases.json", test::configs());
}

TEST(Calibrate, ReproducesEveryShippedProfileByteForByte) {
  const auto replayed = rows();
  int profiles = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::configs().root / "vllm")) {
    if (entry.path().extension() != ".json") continue;
    ++profiles;
    const std::string shipped = read(entry.path());
    const auto c = calibrate_profile(replayed, shipped, entry.path().string());
    EXPECT_EQ(c.profile_json, shipped) << entry.path() << ": rerun scripts/calibrate-profiles.sh";
  }
  EXPECT_GE(profiles, 5);
}

TEST(Calibrate, FitsTheSamplerCoefficientFromTheLoggedPeaks) {
  // vLLM 0.17-0.20: the logged torch peaks of the H100 rows whose sampler dominates are 1024 rows of
  // fp32 logits and their top-k/top-p workspace, about 15 bytes per logit element.
  const auto path = test::configs().root / "vllm" / "0.17.json";  // its base 0.16 is found beside it
  const auto c = calibrate_profile(rows(), read(path), path.string());
  const auto j = nlohmann::json::parse(c.profile_json);
  EXPECT_NEAR(j["overheads"]["sampler_bytes_per_logit"].get<double>(), 15.0, 0.6);
  EXPECT_GE(c.row_ids.size(), 30u);
  ASSERT_EQ(c.terms.size(), 3u);
  EXPECT_LT(c.terms[0].rmse_gib, 0.5);  // activation peak
}

TEST(Calibrate, AProfileWithoutACalibrationBlockIsRefused) {
  test::expect_input_error([&] { (void)(calibrate_profile({}, R"({"overheads": {}})", "p.json")); }, "p.json:/schema_version");
  test::expect_input_error([&] { (void)(calibrate_profile({}, "{", "p.json")); }, "p.json: malformed JSON");
}

TEST(Calibrate, FitAcceptsAProfileFile) {
  const auto profile = load_vllm_profile_file((test::configs().root / "vllm" / "0.17.json").string());
  EXPECT_EQ(profile.version, "0.17");
  test::expect_input_error([&] { (void)(load_vllm_profile_file("/nonexistent/profile.json")); }, "/nonexistent/profile.json: no such profile file");
}

}  // namespace
}  // namespace gpubudget

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

// The shipped coefficients (configs/vllm/coefficients/) are calibrate's output on the shipped
// observations, and a profile without such a file is one whose fit reproduces its base's.
TEST(Calibrate, ReproducesEveryShippedProfileByteForByte) {
  const auto replayed = rows();
  int profiles = 0, calibrated = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::configs().root / "vllm")) {
    if (entry.path().extension() != ".json") continue;
    ++profiles;
    const auto c = calibrate_profile(replayed, read(entry.path()), entry.path().string());
    const auto coefficients = entry.path().parent_path() / "coefficients" / entry.path().filename();
    const std::string shipped = std::filesystem::exists(coefficients) ? read(coefficients) : "";
    calibrated += !shipped.empty();
    EXPECT_EQ(c.coefficients_json, shipped) << entry.path() << ": rerun scripts/calibrate-profiles.sh";
    // The hand-written rules carry no coefficients of their own.
    EXPECT_FALSE(nlohmann::json::parse(read(entry.path())).contains("overheads")) << entry.path();
  }
  EXPECT_GE(profiles, 5);
  EXPECT_GE(calibrated, 3);  // 0.11, 0.17 and 0.21 are fitted on their own versions' logs
}

TEST(Calibrate, TheCalibratedProfileCarriesItsCoefficientsAndLoads) {
  // calibrate -o writes one file: the profile's rules with the fitted "overheads" in it.
  const auto path = test::configs().root / "vllm" / "0.21.json";
  const auto c = calibrate_profile(rows(), read(path), path.string());
  const auto j = nlohmann::json::parse(c.profile_json);
  EXPECT_EQ(j["extends"], "0.20");
  EXPECT_EQ(j["overheads"], nlohmann::json::parse(c.coefficients_json)["overheads"]);
}

TEST(Calibrate, AProfileAndItsCoefficientsFileMayNotBothHoldOverheads) {
  const auto dir = std::filesystem::temp_directory_path() / "gpubudget-coefficients-test";
  std::filesystem::create_directories(dir / "coefficients");
  const auto root = test::configs().root / "vllm" / "0.11.json";
  auto doc = nlohmann::json::parse(read(root));
  doc["overheads"] = nlohmann::json::parse(read(root.parent_path() / "coefficients" / "0.11.json"))["overheads"];
  std::ofstream(dir / "0.11.json") << doc.dump();
  std::ofstream(dir / "coefficients" / "0.11.json") << read(root.parent_path() / "coefficients" / "0.11.json");
  test::expect_input_error([&] { (void)load_vllm_profile_file((dir / "0.11.json").string()); },
                           "0.11.json:/overheads: expected absent: ");
  std::filesystem::remove_all(dir);
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

// Warnings and notes carry a stable code (notice.h): every code has one name, docs/warnings.md lists
// exactly the codes there are, and the documents put each code beside its sentence.
#include "gpubudget/notice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "gpubudget/engine_args.h"
#include "gpubudget/fit.h"
#include "gpubudget/gpu_presets.h"
#include "gpubudget/json_documents.h"
#include "gpubudget/profile_loading.h"
#include "gpubudget/vllm_args.h"
#include "test_support.h"

namespace gpubudget {
namespace {

// The codes in enumeration order: NoticeCode is contiguous from 0, and notice_code_name is "" past the
// last one.
std::vector<std::string> all_code_names() {
  std::vector<std::string> names;
  for (int i = 0; i < 256; ++i) {
    const std::string_view name = notice_code_name(static_cast<NoticeCode>(i));
    if (name.empty()) break;
    names.emplace_back(name);
  }
  return names;
}

bool is_snake_case(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }) &&
         s.front() != '_' && s.back() != '_';
}

TEST(Notice, EveryCodeHasOneSnakeCaseName) {
  const auto names = all_code_names();
  EXPECT_GE(names.size(), 40U);
  const std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size()) << "two codes share a name";
  for (const auto& n : names) EXPECT_TRUE(is_snake_case(n)) << n;
  EXPECT_EQ(notice_code_name(NoticeCode::kWouldNotStart), "would_not_start");
  EXPECT_EQ(notice_code_name(NoticeCode::kKvDtypeForcedByCheckpoint), "kv_dtype_forced_by_checkpoint");
}

TEST(Notice, DocsListEveryCode) {
  std::ifstream in(std::string(GPUBUDGET_TEST_SOURCE_DIR) + "/docs/warnings.md");
  ASSERT_TRUE(in) << "docs/warnings.md";
  std::set<std::string> documented;
  for (std::string line; std::getline(in, line);) {
    // A table row: "| `code` | warning | ... |".
    if (line.rfind("| `", 0) != 0) continue;
    const auto end = line.find('`', 3);
    ASSERT_NE(end, std::string::npos) << line;
    const std::string code = line.substr(3, end - 3);
    EXPECT_TRUE(documented.insert(code).second) << code << " is listed twice";
  }
  const auto names = all_code_names();
  for (const auto& n : names) EXPECT_TRUE(documented.count(n)) << n << " is not in docs/warnings.md";
  for (const auto& d : documented) {
    EXPECT_NE(std::find(names.begin(), names.end(), d), names.end()) << d << " is documented but no code";
  }
}

TEST(Notice, AddUniqueKeepsTheFirstOfOneSentence) {
  std::vector<Notice> notices{{NoticeCode::kFlagUnknown, "a"}};
  add_unique(notices, {NoticeCode::kFlagNotModelled, "a"});
  add_unique(notices, {NoticeCode::kFlagNotModelled, "b"});
  ASSERT_EQ(notices.size(), 2U);
  EXPECT_EQ(notices[0].code, NoticeCode::kFlagUnknown);
  EXPECT_EQ(notice_code_names(notices), (std::vector<std::string>{"flag_unknown", "flag_not_modelled"}));
  EXPECT_EQ(notice_texts(notices), (std::vector<std::string>{"a", "b"}));
}

// The incident (Kimi-K2.5-NVFP4, TP 8, RTX PRO 6000): on vLLM 0.15 no MLA backend takes the
// checkpoint's FP8 KV cache on that GPU (vLLM would not start); on "0.12", a release without a profile
// of its own, the 0.11.1 profile is used, which says so.
TEST(Notice, TheFitDocumentPutsEachCodeBesideItsSentence) {
  const ModelSpec model = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  const std::vector<GpuSpec> gpus{load_gpu_preset("rtx-pro-6000", test::configs())};
  Deployment d;
  d.tensor_parallel_size = 8;
  const auto document = [&](const std::string& version) {
    const VllmProfile profile = load_vllm_profile(version, test::configs());
    const FitResult r = fit(model, gpus, d, profile);
    auto j = nlohmann::json::parse(fit_json({model, gpus, d, profile, version}, r, {}));
    EXPECT_EQ(j["warnings"].size(), j["warning_codes"].size());
    EXPECT_EQ(j["notes"].size(), j["note_codes"].size());
    return j;
  };
  const auto code_of = [](const nlohmann::json& j, const std::string& prefix) -> std::string {
    for (std::size_t i = 0; i < j["warnings"].size(); ++i) {
      if (j["warnings"][i].get<std::string>().rfind(prefix, 0) == 0) return j["warning_codes"][i];
    }
    return "(no such warning)";
  };
  const auto v15 = document("0.15");
  ASSERT_FALSE(v15["vllm_would_start"].get<bool>());
  EXPECT_EQ(code_of(v15, v15["start_blocker"]), "would_not_start") << v15["warnings"].dump();
  const auto v12 = document("0.12");
  EXPECT_EQ(code_of(v12, "no profile for vLLM 0.12"), "profile_nearest") << v12["warnings"].dump();
}

// A launch line's notes: a flag vLLM does not have, one it has whose memory effect is not modelled.
TEST(Notice, LaunchLineNotesSayWhichKind) {
  const VllmLaunchLine line =
      parse_vllm_args({"vllm", "serve", "m", "--frobnicate", "--enable-eplb"}, load_engine_args(test::configs()));
  ASSERT_EQ(line.notes.size(), 2U);
  EXPECT_EQ(line.notes[0].code, NoticeCode::kFlagUnknown) << line.notes[0].text;
  EXPECT_EQ(line.notes[1].code, NoticeCode::kFlagNotModelled) << line.notes[1].text;
}

}  // namespace
}  // namespace gpubudget

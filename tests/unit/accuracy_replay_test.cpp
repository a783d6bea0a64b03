// Every real vLLM startup in tests/data/observations whose model gpubudget supports is replayed.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "accuracy_report.h"
#include "out_of_sample.h"

#include "test_support.h"

namespace gpubudget {
namespace {

std::vector<ReplayRow> replay() {
  return replay_observations(test::data_dir() + "/observations/vllm-runs.jsonl",
                                       test::data_dir() + "/observations/model_aliases.json", test::configs());
}

TEST(AccuracyReplay, KvTokensFromLoggedMemoryWithinOnePercent) {
  int compared = 0;
  for (const auto& r : replay()) {
    if (!r.predicted_tokens || !r.logged_tokens) continue;
    ++compared;
    const double error = std::fabs(static_cast<double>(*r.predicted_tokens - *r.logged_tokens)) /
                         static_cast<double>(*r.logged_tokens);
    EXPECT_LT(error, 0.01) << r.id << " " << r.model << ": logged " << *r.logged_tokens << ", predicted "
                           << *r.predicted_tokens;
  }
  EXPECT_GE(compared, 40);
}

TEST(AccuracyReplay, WeightsWithinTwoPercentOfModelLoadingMedianUnderHalfAPercent) {
  std::vector<double> errors;
  for (const auto& r : replay()) {
    if (!r.predicted_weights_gib || !r.logged_weights_gib) continue;
    errors.push_back(std::fabs(*r.predicted_weights_gib - *r.logged_weights_gib) / *r.logged_weights_gib);
    EXPECT_NEAR(*r.predicted_weights_gib, *r.logged_weights_gib, *r.logged_weights_gib * 0.02) << r.id << " " << r.model;
  }
  ASSERT_GE(errors.size(), 50u);
  std::sort(errors.begin(), errors.end());
  EXPECT_LT(errors[errors.size() / 2], 0.005);
}

TEST(AccuracyReplay, KimiOnRtxPro6000TokensFromTheWholeBudgetWithinEightPercent) {
  // vo-022 / vo-023: Kimi-K2.5 INT4, 8x RTX PRO 6000, util 0.93, fp8 KV, DCP 1 and 8: ~449,600 and
  // ~3,621,504 tokens, predicted with no help from the log (weights, overheads and KV all estimated).
  int compared = 0;
  for (const auto& r : replay()) {
    if (r.id != "vo-022" && r.id != "vo-023") continue;
    ASSERT_TRUE(r.predicted_tokens_unaided.has_value()) << r.id << ": " << r.status;
    EXPECT_NEAR(static_cast<double>(*r.predicted_tokens_unaided), static_cast<double>(*r.logged_tokens),
                0.08 * static_cast<double>(*r.logged_tokens))
        << r.id;
    ++compared;
  }
  EXPECT_EQ(compared, 2);
}

TEST(AccuracyReplay, AvailableKvMedianUnderFiveAndP90UnderTwelvePercent) {
  std::vector<double> errors;
  for (const auto& r : replay()) {
    if (r.predicted_available_gib && r.logged_available_gib && *r.logged_available_gib > 0) {
      errors.push_back(std::fabs(*r.predicted_available_gib - *r.logged_available_gib) / *r.logged_available_gib);
    }
  }
  ASSERT_GE(errors.size(), 40u);
  std::sort(errors.begin(), errors.end());
  EXPECT_LT(errors[errors.size() / 2], 0.05);
  EXPECT_LT(errors[static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(errors.size()))) - 1], 0.12);
}

// Leave one model out: each model's rows predicted by coefficients fitted without them. A held-out row
// is the same row (id, logged figures) with another prediction of the estimated terms only.
TEST(AccuracyReplay, OutOfSamplePredictionsHoldTheDeterministicFiguresAndRefitTheOverheads) {
  const auto rows = replay();
  const std::string observations = test::data_dir() + "/observations/vllm-runs.jsonl";
  const std::string aliases = test::data_dir() + "/observations/model_aliases.json";
  const auto by_model = leave_one_group_out(rows, observations, aliases, test::configs(), model_group);
  std::size_t ok = 0, changed = 0;
  for (const auto& r : rows) ok += r.status == "ok" ? 1 : 0;
  ASSERT_EQ(by_model.size(), ok);
  std::size_t i = 0;
  for (const auto& r : rows) {
    if (r.status != "ok") continue;
    const ReplayRow& held = by_model[i++];
    ASSERT_EQ(held.id, r.id);
    EXPECT_EQ(held.predicted_tokens, r.predicted_tokens) << r.id;  // from logged memory: no fit involved
    EXPECT_EQ(held.predicted_weights_gib, r.predicted_weights_gib) << r.id;
    if (held.predicted_available_gib != r.predicted_available_gib) ++changed;
  }
  EXPECT_GT(changed, ok / 4) << "held-out coefficients should move most estimated rows";
}

// The predicted available KV memory -/+ FitResult::kv_budget_swing holds at least 90% of the logged
// `Available KV cache memory` figures when every model's rows are predicted without that model (its
// coefficients and its uncertainty refitted), and the swing is the overheads x their uncertainty.
TEST(AccuracyReplay, TheRangeHoldsNinetyPercentOfLoggedAvailableMemoryOutOfSample) {
  const auto rows = replay();
  const auto by_model = leave_one_group_out(rows, test::data_dir() + "/observations/vllm-runs.jsonl",
                                            test::data_dir() + "/observations/model_aliases.json", test::configs(),
                                            model_group);
  int compared = 0, inside = 0;
  for (const auto& r : by_model) {
    if (r.status != "ok" || !r.logged_available_gib || !r.predicted_available_low_gib) continue;
    ++compared;
    // The binding worker's budget -/+ its swing; with pipeline stages, the span of every stage's.
    EXPECT_LT(*r.predicted_available_low_gib, *r.predicted_available_gib) << r.id;
    EXPECT_GT(*r.predicted_available_high_gib, *r.predicted_available_gib) << r.id;
    if (*r.predicted_available_low_gib <= *r.logged_available_gib && *r.logged_available_gib <= *r.predicted_available_high_gib) {
      ++inside;
    }
  }
  ASSERT_GE(compared, 40);
  EXPECT_GE(inside, 0.9 * compared) << inside << " of " << compared << " rows inside the range";
}

TEST(AccuracyReplay, TheCommittedReportIsCurrent) {
  std::ifstream in(std::string(GPUBUDGET_TEST_SOURCE_DIR) + "/docs/accuracy.md");
  std::stringstream committed;
  committed << in.rdbuf();
  const auto rows = replay();
  const std::string observations = test::data_dir() + "/observations/vllm-runs.jsonl";
  const std::string aliases = test::data_dir() + "/observations/model_aliases.json";
  EXPECT_EQ(committed.str(),
            accuracy_markdown(rows, leave_one_group_out(rows, observations, aliases, test::configs(), model_group),
                              leave_one_group_out(rows, observations, aliases, test::configs(), gpu_group)))
      << "docs/accuracy.md is stale: regenerate it with gpubudget_accuracy > docs/accuracy.md";
}

}  // namespace
}  // namespace gpubudget

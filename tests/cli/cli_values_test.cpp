#include "test_support.h"
#include "gpubudget/argument_values.h"

#include <gtest/gtest.h>

#include "cli_errors.h"
#include "gpubudget/error.h"

namespace gpubudget::cli {
namespace {

TEST(HumanInt, VllmSuffixes) {
  EXPECT_EQ(parse_human_int("f", "131072"), 131072);
  EXPECT_EQ(parse_human_int("f", "128k"), 128000);
  EXPECT_EQ(parse_human_int("f", "128K"), 131072);
  EXPECT_EQ(parse_human_int("f", "1.5k"), 1500);
  EXPECT_EQ(parse_human_int("f", "2M"), 2 * 1048576);
  EXPECT_EQ(parse_human_int("f", "1g"), 1000000000);
  test::expect_argument_error([&] { (void)(parse_human_int("f", "1.5K")); }, "f: invalid value \"1.5K\" (expected no decimals with a binary suffix)");
  test::expect_argument_error([&] { (void)(parse_human_int("f", "abc")); }, "f: invalid value \"abc\"");
  test::expect_argument_error([&] { (void)(parse_human_int("f", "")); }, "f: invalid value \"\"");
}

TEST(MaxModelLen, AutoAndMinusOne) {
  EXPECT_FALSE(parse_max_model_len("").length.has_value());
  EXPECT_FALSE(parse_max_model_len("").auto_fit);
  EXPECT_TRUE(parse_max_model_len("auto").auto_fit);
  EXPECT_TRUE(parse_max_model_len("-1").auto_fit);
  EXPECT_FALSE(parse_max_model_len("-1").length.has_value());
  EXPECT_EQ(parse_max_model_len("128k").length, 128000);
  test::expect_argument_error([&] { (void)(parse_max_model_len("0")); }, "--max-model-len: invalid value \"0\"");
}

TEST(MemorySize, BinaryAndDecimalUnitsAreDistinct) {
  EXPECT_EQ(parse_memory_size("f", "96GiB"), 96LL * 1073741824);
  EXPECT_EQ(parse_memory_size("f", "80GB"), 80'000'000'000LL);
  EXPECT_EQ(parse_memory_size("f", "97887MiB"), 97887LL * 1048576);
  EXPECT_EQ(parse_memory_size("f", "1000"), 1000);
  test::expect_argument_error([&] { (void)(parse_memory_size("f", "96 potatoes")); }, "f: invalid value \"96 potatoes\"");
}

TEST(ShortFlags, VllmMultiLetterShortFormsExpand) {
  const auto args = expand_vllm_short_flags({"-tp", "8", "-pp=2", "-dcp", "8", "-dp", "1", "-x"});
  EXPECT_EQ(args[0], "--tensor-parallel-size");
  EXPECT_EQ(args[2], "--pipeline-parallel-size=2");
  EXPECT_EQ(args[3], "--decode-context-parallel-size");
  EXPECT_EQ(args[5], "--data-parallel-size");
  EXPECT_EQ(args[7], "-x");
}

}  // namespace
}  // namespace gpubudget::cli

#include "gpubudget/bytes.h"

#include <gtest/gtest.h>

namespace gpubudget {
namespace {

TEST(Bytes, ArithmeticIsExactAndSigned) {
  EXPECT_EQ((gib(1) - gib(2)).count(), -1073741824);
  EXPECT_EQ((mib(3) * 2).count(), 6 * 1048576);
  EXPECT_LT(Bytes(-1), Bytes(0));
  EXPECT_DOUBLE_EQ(to_gib(gib(17)), 17.0);
}

TEST(Bytes, CeilingDivisionAndRounding) {
  EXPECT_EQ(cdiv(262144, 16), 16384);
  EXPECT_EQ(cdiv(262145, 16), 16385);
  EXPECT_EQ(cdiv(0, 16), 0);
  EXPECT_EQ(round_up(129280, 64), 129280);
  EXPECT_EQ(round_up(151655, 64), 151680);
}

}  // namespace
}  // namespace gpubudget

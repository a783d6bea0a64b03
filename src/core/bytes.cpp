// bytes_from_double (bytes.h).
#include "gpubudget/bytes.h"

#include <cmath>

namespace gpubudget {

Bytes bytes_from_double(double bytes) {
  // 2^63 is exactly representable; anything at or beyond it (or not a number) does not fit.
  constexpr double kLimit = 9223372036854775808.0;
  if (!std::isfinite(bytes) || bytes >= kLimit || bytes < -kLimit) detail::throw_byte_overflow();
  return Bytes(static_cast<std::int64_t>(bytes));
}

}  // namespace gpubudget

// Bytes: a signed count of bytes, the one unit every memory figure in gpubudget is kept in.
//
// Signed so that `budget - used` can visibly go negative (vLLM's "No available memory for the cache
// blocks" case). Arithmetic is exact integer arithmetic, and checked: a sum, difference or product that
// would leave 64 bits throws InputError (inputs beyond limits.h's bounds are refused before they get
// here; the check is the net under them). Conversion to GiB happens only for display.
#pragma once

#include <compare>
#include <cstdint>

#include "gpubudget/error.h"

namespace gpubudget {

namespace detail {
[[noreturn]] inline void throw_byte_overflow() {
  throw InputError("a memory figure overflows 64-bit byte counts: an input is beyond what any GPU or model holds");
}
// a + b, a - b, a * b; InputError when the exact result does not fit in 64 bits.
constexpr std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw_byte_overflow();
  return r;
}
constexpr std::int64_t checked_sub(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) throw_byte_overflow();
  return r;
}
constexpr std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw_byte_overflow();
  return r;
}
}  // namespace detail

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::int64_t count) : count_(count) {}

  [[nodiscard]] constexpr std::int64_t count() const { return count_; }

  constexpr Bytes& operator+=(Bytes other) {
    count_ = detail::checked_add(count_, other.count_);
    return *this;
  }
  constexpr Bytes& operator-=(Bytes other) {
    count_ = detail::checked_sub(count_, other.count_);
    return *this;
  }
  friend constexpr Bytes operator+(Bytes a, Bytes b) { return Bytes(detail::checked_add(a.count_, b.count_)); }
  friend constexpr Bytes operator-(Bytes a, Bytes b) { return Bytes(detail::checked_sub(a.count_, b.count_)); }
  friend constexpr Bytes operator*(Bytes a, std::int64_t k) { return Bytes(detail::checked_mul(a.count_, k)); }
  friend constexpr Bytes operator*(std::int64_t k, Bytes a) { return Bytes(detail::checked_mul(a.count_, k)); }
  // Integer division of a byte count by a count (e.g. bytes per layer); truncates toward zero.
  friend constexpr Bytes operator/(Bytes a, std::int64_t k) { return Bytes(a.count_ / k); }
  // How many whole `b` fit in `a` (e.g. blocks of a page size in a budget), and what is left.
  friend constexpr std::int64_t operator/(Bytes a, Bytes b) { return a.count_ / b.count_; }
  friend constexpr Bytes operator%(Bytes a, Bytes b) { return Bytes(a.count_ % b.count_); }
  friend constexpr auto operator<=>(Bytes, Bytes) = default;

 private:
  std::int64_t count_ = 0;
};

inline constexpr std::int64_t kKiB = 1024;
inline constexpr std::int64_t kMiB = 1024 * kKiB;
inline constexpr std::int64_t kGiB = 1024 * kMiB;

constexpr Bytes mib(std::int64_t n) { return Bytes(detail::checked_mul(n, kMiB)); }
constexpr Bytes gib(std::int64_t n) { return Bytes(detail::checked_mul(n, kGiB)); }

// A byte count from a double (an estimate, a logged GiB figure × 2^30), rounded toward zero; InputError
// when it is not finite or beyond 64 bits.
Bytes bytes_from_double(double bytes);

// For display only: bytes / 2^30.
constexpr double to_gib(Bytes b) { return static_cast<double>(b.count()) / static_cast<double>(kGiB); }

// Ceiling division of non-negative integers (vLLM's `cdiv`). Requires b > 0, a >= 0.
constexpr std::int64_t cdiv(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }
// Round a up to a multiple of b. Requires b > 0, a >= 0.
constexpr std::int64_t round_up(std::int64_t a, std::int64_t b) { return detail::checked_mul(cdiv(a, b), b); }
// How many `b` it takes to hold `a` (pages for a need). Requires b > 0, a >= 0.
constexpr std::int64_t cdiv(Bytes a, Bytes b) { return cdiv(a.count(), b.count()); }

}  // namespace gpubudget

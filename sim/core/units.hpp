#pragma once
// Physical quantities as value types (style principle 2, after ns-3's Time and DataRate).
//
// A Quantity carries the exponents of its four base dimensions -- time (s), data (B),
// work (flop) and energy (J) -- in its type, so only dimensionally meaningful expressions
// compile: Bytes / BytesPerSecond -> Seconds, Watts * Seconds -> Joules, Flops / Seconds
// -> FlopsPerSecond. A product or quotient whose dimensions cancel is a plain double.
// The value is always held in SI base units; `.value()` is the only way out, used at the
// SimGrid boundary and by report writers.

#include <compare>
#include <cstdint>

namespace hcsim {

template <int T, int B, int F, int E>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double si) : v_(si) {}
  [[nodiscard]] constexpr double value() const { return v_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity operator-() const { return Quantity(-v_); }
  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  constexpr Quantity operator*(double k) const { return Quantity(v_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(v_ / k); }
  constexpr Quantity& operator*=(double k) { v_ *= k; return *this; }
  constexpr Quantity& operator/=(double k) { v_ /= k; return *this; }
  friend constexpr Quantity operator*(double k, Quantity q) { return Quantity(k * q.v_); }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double v_ = 0.0;
};

template <int T1, int B1, int F1, int E1, int T2, int B2, int F2, int E2>
constexpr auto operator*(Quantity<T1, B1, F1, E1> a, Quantity<T2, B2, F2, E2> b) {
  if constexpr (T1 + T2 == 0 && B1 + B2 == 0 && F1 + F2 == 0 && E1 + E2 == 0)
    return a.value() * b.value();
  else
    return Quantity<T1 + T2, B1 + B2, F1 + F2, E1 + E2>(a.value() * b.value());
}

template <int T1, int B1, int F1, int E1, int T2, int B2, int F2, int E2>
constexpr auto operator/(Quantity<T1, B1, F1, E1> a, Quantity<T2, B2, F2, E2> b) {
  if constexpr (T1 == T2 && B1 == B2 && F1 == F2 && E1 == E2)
    return a.value() / b.value();
  else
    return Quantity<T1 - T2, B1 - B2, F1 - F2, E1 - E2>(a.value() / b.value());
}

template <int T, int B, int F, int E>
constexpr Quantity<-T, -B, -F, -E> operator/(double k, Quantity<T, B, F, E> q) {
  return Quantity<-T, -B, -F, -E>(k / q.value());
}

using Seconds = Quantity<1, 0, 0, 0>;
using Bytes = Quantity<0, 1, 0, 0>;
using Flops = Quantity<0, 0, 1, 0>;
using Joules = Quantity<0, 0, 0, 1>;
using Hertz = Quantity<-1, 0, 0, 0>;
using BytesPerSecond = Quantity<-1, 1, 0, 0>;
using FlopsPerSecond = Quantity<-1, 0, 1, 0>;
using Watts = Quantity<-1, 0, 0, 1>;
using JoulesPerByte = Quantity<0, -1, 0, 1>;
using JoulesPerFlop = Quantity<0, 0, -1, 1>;

template <class Q>
constexpr Q max(Q a, Q b) { return a < b ? b : a; }
template <class Q>
constexpr Q min(Q a, Q b) { return b < a ? b : a; }

namespace literals {
constexpr Seconds operator""_s(long double v) { return Seconds(static_cast<double>(v)); }
constexpr Seconds operator""_us(long double v) { return Seconds(static_cast<double>(v) * 1e-6); }
constexpr Bytes operator""_B(unsigned long long v) { return Bytes(static_cast<double>(v)); }
constexpr Bytes operator""_GiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1073741824.0); }
constexpr BytesPerSecond operator""_GBps(long double v) { return BytesPerSecond(static_cast<double>(v) * 1e9); }
constexpr FlopsPerSecond operator""_TFLOPS(long double v) { return FlopsPerSecond(static_cast<double>(v) * 1e12); }
}  // namespace literals

}  // namespace hcsim

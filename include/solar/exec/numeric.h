// Conversions between fp32/fp64 and the executor's narrow storage formats: bf16, fp16, tf32,
// fp8 (OCP E4M3FN and E5M2), FP4 E2M1 (the nvfp4 element) and int4, plus saturating integer
// stores. Layouts, rounding and overflow/NaN rules, with the ml_dtypes behaviour they match:
// docs/numeric-formats.md.
//
// Rounding is round-to-nearest, ties to even, done once and directly from the source type
// (a double is never rounded through float first). Encoders return codes; 4-bit codes sit in
// the low nibble of a byte. Decoders are exact and read only the bits of their format (the
// high nibble of a 4-bit code is ignored). NaN and infinity are recognised from the bits, so
// -ffinite-math-only does not break them (but see the doc's caveats on -ffast-math).
//
// Self-contained on purpose: code the native backend generates includes this header alone
// and may be compiled as C++17. Functions are constexpr where the compiler offers a
// constexpr bit cast (__builtin_bit_cast: GCC >= 11, Clang >= 9), inline otherwise.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#ifndef SOLAR_NUMERIC_HAS_CONSTEXPR_BIT_CAST  // predefine as 0 to force the memcpy fallback
#if defined(__has_builtin)
#if __has_builtin(__builtin_bit_cast)
#define SOLAR_NUMERIC_HAS_CONSTEXPR_BIT_CAST 1
#endif
#endif
#endif
#ifndef SOLAR_NUMERIC_HAS_CONSTEXPR_BIT_CAST
#define SOLAR_NUMERIC_HAS_CONSTEXPR_BIT_CAST 0
#endif
#if SOLAR_NUMERIC_HAS_CONSTEXPR_BIT_CAST
#define SOLAR_NUMERIC_CONSTEXPR constexpr
#else
#define SOLAR_NUMERIC_CONSTEXPR inline
#endif

namespace solar::numeric {
namespace detail {

template <typename To, typename From>
SOLAR_NUMERIC_CONSTEXPR To bit_cast(const From& from) noexcept {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
#if SOLAR_NUMERIC_HAS_CONSTEXPR_BIT_CAST
  return __builtin_bit_cast(To, from);
#else
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
#endif
}

// The IEEE binary32/binary64 layout of a source type.
template <typename T>
struct Source;
template <>
struct Source<float> {
  using Bits = uint32_t;
  static constexpr int kMant = 23;
  static constexpr int kBias = 127;
  static constexpr uint32_t kExpMax = 0xFF;
};
template <>
struct Source<double> {
  using Bits = uint64_t;
  static constexpr int kMant = 52;
  static constexpr int kBias = 1023;
  static constexpr uint32_t kExpMax = 0x7FF;
};

template <typename T>
struct IsSource : std::integral_constant<bool, std::is_same<T, float>::value ||
                                                   std::is_same<T, double>::value> {};

constexpr int highest_bit(uint64_t v) noexcept {
  int n = 0;
  while (v >>= 1) ++n;
  return n;
}

template <typename T>
SOLAR_NUMERIC_CONSTEXPR bool is_nan(T x) noexcept {
  using S = Source<T>;
  using Bits = typename S::Bits;
  const Bits mag = bit_cast<Bits>(x) & (std::numeric_limits<Bits>::max() >> 1);
  return mag > (static_cast<Bits>(S::kExpMax) << S::kMant);
}

constexpr uint8_t kFinite = 0, kInfinite = 1, kNaN = 2;

// |x| rounded to a binary format with kMant stored mantissa bits and minimum normal exponent
// kEmin, as that format's unsigned code (biased exponent << kMant | mantissa), taken as if the
// exponent field were unbounded above: each caller compares the code with its largest finite
// code to detect overflow.
struct Rounded {
  bool negative;
  uint8_t kind;   // kFinite, kInfinite or kNaN
  uint64_t code;  // when kFinite
};

template <int kMant, int kEmin, typename T>
SOLAR_NUMERIC_CONSTEXPR Rounded round_to(T x) noexcept {
  static_assert(IsSource<T>::value, "the source type is float or double");
  using S = Source<T>;
  using Bits = typename S::Bits;
  // The quantum below is then coarser than the source's (shift >= 1 below).
  static_assert(kMant < S::kMant && kEmin >= 1 - S::kBias, "the target must be narrower");
  const Bits bits = bit_cast<Bits>(x);
  Rounded r{(bits >> (8 * sizeof(Bits) - 1)) != 0, kFinite, 0};
  const uint32_t exp_field = static_cast<uint32_t>(bits >> S::kMant) & S::kExpMax;
  const uint64_t frac = static_cast<uint64_t>(bits & ((Bits{1} << S::kMant) - 1));
  if (exp_field == S::kExpMax) {
    r.kind = frac != 0 ? kNaN : kInfinite;
    return r;
  }
  // |x| = sig * 2^lsb, with its leading bit at 2^e.
  uint64_t sig = frac;
  int lsb = 1 - S::kBias - S::kMant;
  int e = 0;
  if (exp_field == 0) {
    if (frac == 0) return r;  // +-0
    e = lsb + highest_bit(sig);
  } else {
    sig |= uint64_t{1} << S::kMant;
    e = static_cast<int>(exp_field) - S::kBias;
    lsb = e - S::kMant;
  }
  const int binade = e > kEmin ? e : kEmin;  // the subnormal range shares the lowest binade
  const int shift = binade - kMant - lsb;    // source bits below the target's quantum, >= 1
  uint64_t n = 0;                            // |x| / quantum, rounded to nearest even
  if (shift <= S::kMant + 1) {               // else sig < 2^(kMant+1) <= quantum / 2: n = 0
    n = sig >> shift;
    const uint64_t rest = sig & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (n & 1) != 0)) ++n;
  }
  // Normal: n = 2^kMant + mantissa, code = (e + bias) << kMant | mantissa
  //                                      = (e - kEmin) << kMant + n.
  // Subnormal: code = n. A carry out of the mantissa moves into the exponent field.
  r.code = (static_cast<uint64_t>(binade - kEmin) << kMant) + n;
  return r;
}

// A float from its sign (0 or 1) and magnitude bits.
SOLAR_NUMERIC_CONSTEXPR float make_float(uint32_t sign, uint32_t magnitude) noexcept {
  return bit_cast<float>((sign << 31) | magnitude);
}

template <typename T>
constexpr T pow2(int n) noexcept {
  T r = 1;
  for (; n > 0; --n) r *= 2;
  return r;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------
// bf16: 1 sign, 8 exponent (bias 127), 7 mantissa bits; IEEE-like (inf, NaN, subnormals).
// NaN -> 0x7FC0 with the input's sign; overflow (|x| >= 0x1.FFp127, the midpoint above the
// largest finite 0x1.FEp127) -> +-inf.

template <typename T>
SOLAR_NUMERIC_CONSTEXPR uint16_t to_bf16(T x) noexcept {
  static_assert(detail::IsSource<T>::value, "T is float or double");
  if constexpr (std::is_same<T, float>::value) {
    // From float both formats share the exponent, so RNE is an integer add on the bits (a
    // carry rounds into the exponent, and from the largest binade into inf).
    const uint32_t bits = detail::bit_cast<uint32_t>(x);
    if (detail::is_nan(x)) return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7FC0u);
    return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
  } else {
    const detail::Rounded r = detail::round_to<7, -126>(x);
    const uint32_t sign = r.negative ? 0x8000u : 0u;
    if (r.kind == detail::kNaN) return static_cast<uint16_t>(sign | 0x7FC0u);
    if (r.kind == detail::kInfinite || r.code > 0x7F7Fu)
      return static_cast<uint16_t>(sign | 0x7F80u);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(r.code));
  }
}

// Exact; NaN payloads are kept (bf16 is the high half of a float).
SOLAR_NUMERIC_CONSTEXPR float from_bf16(uint16_t bits) noexcept {
  return detail::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

// ---------------------------------------------------------------------------------------
// fp16 (IEEE binary16): 1 sign, 5 exponent (bias 15), 10 mantissa bits. Largest finite 65504
// (0x7BFF); |x| >= 65520 -> +-inf (0x7C00); NaN -> 0x7E00 with the input's sign.

template <typename T>
SOLAR_NUMERIC_CONSTEXPR uint16_t to_fp16(T x) noexcept {
  const detail::Rounded r = detail::round_to<10, -14>(x);
  const uint32_t sign = r.negative ? 0x8000u : 0u;
  if (r.kind == detail::kNaN) return static_cast<uint16_t>(sign | 0x7E00u);
  if (r.kind == detail::kInfinite || r.code > 0x7BFFu) return static_cast<uint16_t>(sign | 0x7C00u);
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(r.code));
}

// Exact; NaN payloads are kept (shifted into the float's mantissa, as NumPy does).
SOLAR_NUMERIC_CONSTEXPR float from_fp16(uint16_t bits) noexcept {
  const uint32_t sign = static_cast<uint32_t>(bits) >> 15;
  const uint32_t exp = (static_cast<uint32_t>(bits) >> 10) & 0x1Fu;
  const uint32_t mant = static_cast<uint32_t>(bits) & 0x3FFu;
  if (exp == 0x1F) return detail::make_float(sign, 0x7F800000u | (mant << 13));
  if (exp == 0) {  // mant * 2^-24, exact in float
    return detail::make_float(sign,
                              detail::bit_cast<uint32_t>(static_cast<float>(mant) * 0x1p-24f));
  }
  return detail::make_float(sign, ((exp + 112u) << 23) | (mant << 13));
}

// ---------------------------------------------------------------------------------------
// fp8 E4M3FN (OCP): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinity; S.1111.111 is
// NaN, so the largest finite is S.1111.110 = +-448. NaN, +-inf and |x| > 464 (the midpoint
// between 448 and the NaN code's would-be 480) -> NaN with the input's sign (0x7F / 0xFF);
// |x| = 464 ties to even, to 448. As ml_dtypes.float8_e4m3fn; not saturating.

template <typename T>
SOLAR_NUMERIC_CONSTEXPR uint8_t to_fp8_e4m3(T x) noexcept {
  const detail::Rounded r = detail::round_to<3, -6>(x);
  const uint32_t sign = r.negative ? 0x80u : 0u;
  if (r.kind != detail::kFinite || r.code > 0x7Eu) return static_cast<uint8_t>(sign | 0x7Fu);
  return static_cast<uint8_t>(sign | static_cast<uint32_t>(r.code));
}

// NaN codes decode to the float quiet NaN with the code's sign.
SOLAR_NUMERIC_CONSTEXPR float from_fp8_e4m3(uint8_t bits) noexcept {
  const uint32_t sign = static_cast<uint32_t>(bits) >> 7;
  const uint32_t exp = (static_cast<uint32_t>(bits) >> 3) & 0xFu;
  const uint32_t mant = static_cast<uint32_t>(bits) & 0x7u;
  if (exp == 0xF && mant == 0x7) return detail::make_float(sign, 0x7FC00000u);
  if (exp == 0) {  // mant * 2^-9
    return detail::make_float(sign, detail::bit_cast<uint32_t>(static_cast<float>(mant) * 0x1p-9f));
  }
  return detail::make_float(sign, ((exp + 120u) << 23) | (mant << 20));
}

// ---------------------------------------------------------------------------------------
// fp8 E5M2 (OCP): 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like. Largest finite
// 57344 (0x7B); |x| >= 61440 -> +-inf (0x7C); NaN -> 0x7E with the input's sign.

template <typename T>
SOLAR_NUMERIC_CONSTEXPR uint8_t to_fp8_e5m2(T x) noexcept {
  const detail::Rounded r = detail::round_to<2, -14>(x);
  const uint32_t sign = r.negative ? 0x80u : 0u;
  if (r.kind == detail::kNaN) return static_cast<uint8_t>(sign | 0x7Eu);
  if (r.kind == detail::kInfinite || r.code > 0x7Bu) return static_cast<uint8_t>(sign | 0x7Cu);
  return static_cast<uint8_t>(sign | static_cast<uint32_t>(r.code));
}

// NaN codes (0x7D..0x7F, 0xFD..0xFF) decode to the float quiet NaN with the code's sign.
SOLAR_NUMERIC_CONSTEXPR float from_fp8_e5m2(uint8_t bits) noexcept {
  const uint32_t sign = static_cast<uint32_t>(bits) >> 7;
  const uint32_t exp = (static_cast<uint32_t>(bits) >> 2) & 0x1Fu;
  const uint32_t mant = static_cast<uint32_t>(bits) & 0x3u;
  if (exp == 0x1F) return detail::make_float(sign, mant == 0 ? 0x7F800000u : 0x7FC00000u);
  if (exp == 0) {  // mant * 2^-16
    return detail::make_float(sign,
                              detail::bit_cast<uint32_t>(static_cast<float>(mant) * 0x1p-16f));
  }
  return detail::make_float(sign, ((exp + 112u) << 23) | (mant << 21));
}

// ---------------------------------------------------------------------------------------
// FP4 E2M1 (OCP MX / nvfp4 element): 1 sign, 2 exponent (bias 1), 1 mantissa bit; no inf,
// no NaN. Values +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}; the code is in the low 4 bits. Out-of-range
// values and +-inf saturate to +-6 (0x7 / 0xF). NaN has no encoding; like ml_dtypes (whose
// float4_e2m1fn "quiet NaN" is -0, negated for a negative NaN) a NaN with the sign bit clear
// stores 0x8 (-0) and one with the sign bit set stores 0x0 (+0).

template <typename T>
SOLAR_NUMERIC_CONSTEXPR uint8_t to_e2m1(T x) noexcept {
  const detail::Rounded r = detail::round_to<1, 0>(x);
  if (r.kind == detail::kNaN) return r.negative ? 0x0u : 0x8u;
  const uint32_t sign = r.negative ? 0x8u : 0u;
  if (r.kind == detail::kInfinite || r.code > 0x7u) return static_cast<uint8_t>(sign | 0x7u);
  return static_cast<uint8_t>(sign | static_cast<uint32_t>(r.code));
}

SOLAR_NUMERIC_CONSTEXPR float from_e2m1(uint8_t bits) noexcept {
  const uint32_t sign = (static_cast<uint32_t>(bits) >> 3) & 1u;
  const uint32_t exp = (static_cast<uint32_t>(bits) >> 1) & 0x3u;
  const uint32_t mant = static_cast<uint32_t>(bits) & 0x1u;
  if (exp == 0) return detail::make_float(sign, mant != 0 ? 0x3F000000u : 0u);  // 0 or 0.5
  return detail::make_float(sign, ((exp + 126u) << 23) | (mant << 22));
}

// ---------------------------------------------------------------------------------------
// tf32: a float whose mantissa is rounded to its top 10 bits (1 sign, 8 exponent, 10
// mantissa bits; float's range, subnormals included, with a quantum of 2^-136 there).
// |x| >= 0x1.FFEp127 -> +-inf; NaN -> the float quiet NaN with the input's sign.

template <typename T>
SOLAR_NUMERIC_CONSTEXPR float round_tf32(T x) noexcept {
  static_assert(detail::IsSource<T>::value, "T is float or double");
  if constexpr (std::is_same<T, float>::value) {
    const uint32_t bits = detail::bit_cast<uint32_t>(x);
    if (detail::is_nan(x)) return detail::make_float(bits >> 31, 0x7FC00000u);
    return detail::bit_cast<float>((bits + 0xFFFu + ((bits >> 13) & 1u)) & 0xFFFFE000u);
  } else {
    const detail::Rounded r = detail::round_to<10, -126>(x);
    const uint32_t sign = r.negative ? 1u : 0u;
    if (r.kind == detail::kNaN) return detail::make_float(sign, 0x7FC00000u);
    if (r.kind == detail::kInfinite || r.code > 0x3FBFFu) {
      return detail::make_float(sign, 0x7F800000u);
    }
    return detail::make_float(sign, static_cast<uint32_t>(r.code) << 13);
  }
}

// ---------------------------------------------------------------------------------------
// Integer stores: NaN -> 0, truncation toward zero, saturation to the type's range (+-inf
// saturates). This is the rule of GPU float-to-integer conversions (PTX cvt.rzi); NumPy and
// ml_dtypes leave out-of-range values to the platform (x86 wraps or yields INT_MIN).

template <typename I, typename T>
SOLAR_NUMERIC_CONSTEXPR I to_int(T x) noexcept {
  static_assert(std::is_integral<I>::value && !std::is_same<I, bool>::value,
                "I is an integer type other than bool");
  static_assert(detail::IsSource<T>::value, "T is float or double");
  if (detail::is_nan(x)) return 0;
  // 2^digits is the first integer above max(); it, and min() = -2^digits, are exact in T.
  constexpr T kAbove = detail::pow2<T>(std::numeric_limits<I>::digits);
  if (x >= kAbove) return std::numeric_limits<I>::max();
  if constexpr (std::is_signed<I>::value) {
    if (x <= -kAbove) return std::numeric_limits<I>::min();
  } else {
    if (x <= T(-1)) return 0;
  }
  return static_cast<I>(x);  // in range: converts by truncation toward zero
}

// int4: signed, two's complement in the low nibble, range [-8, 7]. Same rule as to_int:
// NaN -> 0, truncation toward zero, saturation (ml_dtypes.int4 instead wraps modulo 16).
template <typename T>
SOLAR_NUMERIC_CONSTEXPR uint8_t to_int4(T x) noexcept {
  static_assert(detail::IsSource<T>::value, "T is float or double");
  if (detail::is_nan(x)) return 0;
  if (x >= T(8)) return 0x7;
  if (x <= T(-8)) return 0x8;
  return static_cast<uint8_t>(static_cast<unsigned>(static_cast<int>(x)) & 0xFu);
}

constexpr int from_int4(uint8_t bits) noexcept {
  const int v = bits & 0xF;
  return v >= 8 ? v - 16 : v;
}

}  // namespace solar::numeric

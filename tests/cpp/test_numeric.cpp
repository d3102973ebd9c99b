// exec/numeric.h: every code of the 8- and 4-bit formats decoded against values stated by
// hand, every code round-tripped, ties to even derived by hand, overflow/NaN rules, integer
// stores, and a randomized comparison with an independent reference (the nearest value in the
// table of decoded codes), each for T = float and T = double. docs/numeric-formats.md.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "solar/exec/numeric.h"

namespace {

namespace num = solar::numeric;

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float float_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Bitwise equal, or both NaN with the same sign.
::testing::AssertionResult same_float(float got, float want) {
  const bool ok = std::isnan(got) && std::isnan(want) ? std::signbit(got) == std::signbit(want)
                                                      : bits_of(got) == bits_of(want);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << std::hexfloat << "got " << got << " (0x" << std::hex << bits_of(got) << "), want "
         << std::hexfloat << want << " (0x" << std::hex << bits_of(want) << ")";
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// (-1)^s * 2^(e - bias) * (1 + m / 2^M) for e > 0, (-1)^s * 2^(1 - bias) * m / 2^M for e = 0:
// the definition of a binary format with M mantissa bits.
double binary_value(unsigned s, int e, unsigned m, int mant_bits, int bias) {
  const double v = e == 0 ? std::ldexp(m, 1 - bias - mant_bits)
                          : std::ldexp((1u << mant_bits) + m, e - bias - mant_bits);
  return s != 0 ? -v : v;
}

// --- decode every code -----------------------------------------------------------------

TEST(Numeric, E4m3DecodesEveryCode) {
  // Hand-stated: bias 7, 3 mantissa bits, S.1111.111 is NaN, no infinity.
  EXPECT_EQ(num::from_fp8_e4m3(0x00), 0.0f);
  EXPECT_TRUE(std::signbit(num::from_fp8_e4m3(0x80)));  // -0
  EXPECT_EQ(num::from_fp8_e4m3(0x01), 0x1p-9f);         // 0.001 * 2^-6, smallest subnormal
  EXPECT_EQ(num::from_fp8_e4m3(0x07), 7 * 0x1p-9f);     // largest subnormal
  EXPECT_EQ(num::from_fp8_e4m3(0x08), 0x1p-6f);         // smallest normal, 2^(1-7)
  EXPECT_EQ(num::from_fp8_e4m3(0x38), 1.0f);            // exponent field 7 = bias
  EXPECT_EQ(num::from_fp8_e4m3(0x3F), 1.875f);
  EXPECT_EQ(num::from_fp8_e4m3(0x40), 2.0f);
  EXPECT_EQ(num::from_fp8_e4m3(0x78), 256.0f);  // exponent 15: 2^8
  EXPECT_EQ(num::from_fp8_e4m3(0x7E), 448.0f);  // 1.75 * 2^8, the largest finite
  EXPECT_EQ(num::from_fp8_e4m3(0xFE), -448.0f);
  EXPECT_TRUE(same_float(num::from_fp8_e4m3(0x7F), kNaN));
  EXPECT_TRUE(same_float(num::from_fp8_e4m3(0xFF), -kNaN));
  for (unsigned c = 0; c < 256; ++c) {
    const unsigned s = c >> 7, e = (c >> 3) & 15, m = c & 7;
    const float want = e == 15 && m == 7
                           ? (s != 0 ? -kNaN : kNaN)
                           : static_cast<float>(binary_value(s, static_cast<int>(e), m, 3, 7));
    EXPECT_TRUE(same_float(num::from_fp8_e4m3(static_cast<uint8_t>(c)), want)) << "code " << c;
  }
}

TEST(Numeric, E5m2DecodesEveryCode) {
  // Hand-stated: bias 15, 2 mantissa bits, IEEE-like specials.
  EXPECT_EQ(num::from_fp8_e5m2(0x01), 0x1p-16f);  // 0.01 * 2^-14
  EXPECT_EQ(num::from_fp8_e5m2(0x03), 3 * 0x1p-16f);
  EXPECT_EQ(num::from_fp8_e5m2(0x04), 0x1p-14f);  // smallest normal
  EXPECT_EQ(num::from_fp8_e5m2(0x3C), 1.0f);
  EXPECT_EQ(num::from_fp8_e5m2(0x3D), 1.25f);
  EXPECT_EQ(num::from_fp8_e5m2(0x7B), 57344.0f);  // 1.75 * 2^15
  EXPECT_EQ(num::from_fp8_e5m2(0x7C), kInf);
  EXPECT_EQ(num::from_fp8_e5m2(0xFC), -kInf);
  for (uint8_t c : {0x7D, 0x7E, 0x7F, 0xFD}) EXPECT_TRUE(std::isnan(num::from_fp8_e5m2(c)));
  for (unsigned c = 0; c < 256; ++c) {
    const unsigned s = c >> 7, e = (c >> 2) & 31, m = c & 3;
    float want = static_cast<float>(binary_value(s, static_cast<int>(e), m, 2, 15));
    if (e == 31) want = m == 0 ? (s != 0 ? -kInf : kInf) : (s != 0 ? -kNaN : kNaN);
    EXPECT_TRUE(same_float(num::from_fp8_e5m2(static_cast<uint8_t>(c)), want)) << "code " << c;
  }
}

TEST(Numeric, E2m1DecodesEveryCode) {
  // Bias 1, 1 mantissa bit, no inf/NaN: 0.0 0.1 (subnormal 0.5), then 1, 1.5, 2, 3, 4, 6.
  const float table[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                           -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  for (unsigned c = 0; c < 16; ++c) {
    EXPECT_TRUE(same_float(num::from_e2m1(static_cast<uint8_t>(c)), table[c])) << "code " << c;
    // Only the low nibble is read.
    EXPECT_TRUE(same_float(num::from_e2m1(static_cast<uint8_t>(c | 0xA0)), table[c]));
  }
}

TEST(Numeric, Int4DecodesEveryCode) {
  const int table[16] = {0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1};
  for (unsigned c = 0; c < 16; ++c) {
    EXPECT_EQ(num::from_int4(static_cast<uint8_t>(c)), table[c]);
    EXPECT_EQ(num::from_int4(static_cast<uint8_t>(c | 0x50)), table[c]);
  }
}

TEST(Numeric, Bf16AndFp16DecodeEveryCode) {
  EXPECT_EQ(num::from_bf16(0x3F80), 1.0f);
  EXPECT_EQ(num::from_bf16(0x7F7F), 0x1.FEp127f);  // largest finite
  EXPECT_EQ(num::from_bf16(0x0080), 0x1p-126f);    // smallest normal
  EXPECT_EQ(num::from_bf16(0x0001), 0x1p-133f);    // smallest subnormal
  EXPECT_EQ(num::from_fp16(0x3C00), 1.0f);
  EXPECT_EQ(num::from_fp16(0x7BFF), 65504.0f);
  EXPECT_EQ(num::from_fp16(0x0400), 0x1p-14f);
  EXPECT_EQ(num::from_fp16(0x0001), 0x1p-24f);
  EXPECT_EQ(num::from_fp16(0xFC00), -kInf);
  EXPECT_TRUE(same_float(num::from_fp16(0x7E00), kNaN));
  for (unsigned c = 0; c < 65536; ++c) {
    const unsigned s = c >> 15;
    const uint16_t code = static_cast<uint16_t>(c);
    // bf16: 8 exponent bits, bias 127, 7 mantissa bits; the specials are float's.
    const unsigned be = (c >> 7) & 0xFF, bm = c & 0x7F;
    const float bf = be == 0xFF
                         ? float_of(static_cast<uint32_t>(c) << 16)
                         : static_cast<float>(binary_value(s, static_cast<int>(be), bm, 7, 127));
    ASSERT_TRUE(same_float(num::from_bf16(code), bf)) << "bf16 code " << c;
    const unsigned he = (c >> 10) & 0x1F, hm = c & 0x3FF;
    float h = static_cast<float>(binary_value(s, static_cast<int>(he), hm, 10, 15));
    if (he == 0x1F) h = hm == 0 ? (s != 0 ? -kInf : kInf) : (s != 0 ? -kNaN : kNaN);
    ASSERT_TRUE(same_float(num::from_fp16(code), h)) << "fp16 code " << c;
  }
}

// --- every code round-trips ------------------------------------------------------------

template <typename T>
void round_trip_every_code() {
  for (unsigned c = 0; c < 65536; ++c) {
    const uint16_t code = static_cast<uint16_t>(c);
    const float b = num::from_bf16(code), h = num::from_fp16(code);
    // NaNs come back as the canonical quiet NaN of their sign.
    EXPECT_EQ(num::to_bf16(static_cast<T>(b)), std::isnan(b) ? (c & 0x8000u) | 0x7FC0u : c);
    EXPECT_EQ(num::to_fp16(static_cast<T>(h)), std::isnan(h) ? (c & 0x8000u) | 0x7E00u : c);
  }
  for (unsigned c = 0; c < 256; ++c) {
    const uint8_t code = static_cast<uint8_t>(c);
    const float e4 = num::from_fp8_e4m3(code), e5 = num::from_fp8_e5m2(code);
    EXPECT_EQ(num::to_fp8_e4m3(static_cast<T>(e4)), c);  // 0x7F/0xFF are the only NaNs
    EXPECT_EQ(num::to_fp8_e5m2(static_cast<T>(e5)), std::isnan(e5) ? (c & 0x80u) | 0x7Eu : c);
  }
  for (unsigned c = 0; c < 16; ++c) {
    const uint8_t code = static_cast<uint8_t>(c);
    EXPECT_EQ(num::to_e2m1(static_cast<T>(num::from_e2m1(code))), c);  // -0 (0x8) included
    EXPECT_EQ(num::to_int4(static_cast<T>(num::from_int4(code))), c);
  }
  // tf32 values (float bits with the low 13 clear; the NaN patterns aside) are fixed points.
  for (uint32_t hi = 0; hi < (1u << 19); ++hi) {
    const float v = float_of(hi << 13);
    if (std::isnan(v)) continue;
    ASSERT_TRUE(same_float(num::round_tf32(static_cast<T>(v)), v)) << std::hexfloat << v;
  }
}

TEST(Numeric, EveryCodeRoundTripsFromFloat) { round_trip_every_code<float>(); }
TEST(Numeric, EveryCodeRoundTripsFromDouble) { round_trip_every_code<double>(); }

// --- ties to even, by hand -------------------------------------------------------------

template <typename T>
void ties_to_even() {
  // bf16: the ulp of [1, 2) is 2^-7. 1 + 2^-8 lies halfway between 1 (0x3F80, mantissa even)
  // and 1 + 2^-7 (0x3F81, odd): even wins, 0x3F80. 1 + 3*2^-8 lies between 0x3F81 (odd) and
  // 0x3F82 (even): 0x3F82. Subnormals (quantum 2^-133): 2^-134 is half the smallest, between
  // 0x0000 and 0x0001 -> 0x0000; 3*2^-134 between 0x0001 and 0x0002 -> 0x0002. At the top,
  // (2 - 2^-8)*2^127 is halfway between the largest finite 0x7F7F (odd) and 2^128 -> inf.
  EXPECT_EQ(num::to_bf16(T(1 + 0x1p-8)), 0x3F80);
  EXPECT_EQ(num::to_bf16(T(1 + 3 * 0x1p-8)), 0x3F82);
  EXPECT_EQ(num::to_bf16(T(-(1 + 3 * 0x1p-8))), 0xBF82);
  EXPECT_EQ(num::to_bf16(T(0x1p-134)), 0x0000);
  EXPECT_EQ(num::to_bf16(T(3 * 0x1p-134)), 0x0002);
  EXPECT_EQ(num::to_bf16(T(0x1.FFp127)), 0x7F80);
  EXPECT_EQ(num::to_bf16(T(0x1.FEFFFEp127)), 0x7F7F);  // just below that tie (float-exact)
  // fp16: the ulp of [1, 2) is 2^-10: 1 + 2^-11 -> 0x3C00, 1 + 3*2^-11 -> 0x3C02. The ulp of
  // [2048, 4096) is 2: 2049 lies between 2048 (0x6800, even) and 2050 (0x6801) -> 0x6800;
  // 2051 between 2050 (odd) and 2052 (0x6802) -> 0x6802. Subnormal quantum 2^-24: 2^-25 -> 0,
  // 3*2^-25 -> 0x0002. 65520 is halfway between 65504 (0x7BFF, odd) and 65536 -> inf.
  EXPECT_EQ(num::to_fp16(T(1 + 0x1p-11)), 0x3C00);
  EXPECT_EQ(num::to_fp16(T(1 + 3 * 0x1p-11)), 0x3C02);
  EXPECT_EQ(num::to_fp16(T(2049)), 0x6800);
  EXPECT_EQ(num::to_fp16(T(2051)), 0x6802);
  EXPECT_EQ(num::to_fp16(T(0x1p-25)), 0x0000);
  EXPECT_EQ(num::to_fp16(T(3 * 0x1p-25)), 0x0002);
  EXPECT_EQ(num::to_fp16(T(65520)), 0x7C00);
  EXPECT_EQ(num::to_fp16(T(65519.99)), 0x7BFF);
  // e4m3: ulp of [1, 2) is 2^-3. 1.0625 between 1 (0x38) and 1.125 (0x39) -> 0x38; 1.1875
  // between 0x39 and 1.25 (0x3A) -> 0x3A. The ulp of [16, 32) is 2: 17 between 16 (0x58: exponent
  // field 4 + 7 = 11) and 18 (0x59) -> 0x58. Subnormal quantum 2^-9: 2^-10 -> 0x00, 3*2^-10 ->
  // 0x02. 464 is halfway between 448 (0x7E, even) and the NaN code's would-be 480: 0x7E.
  EXPECT_EQ(num::to_fp8_e4m3(T(1.0625)), 0x38);
  EXPECT_EQ(num::to_fp8_e4m3(T(1.1875)), 0x3A);
  EXPECT_EQ(num::to_fp8_e4m3(T(17)), 0x58);
  EXPECT_EQ(num::to_fp8_e4m3(T(-17)), 0xD8);
  EXPECT_EQ(num::to_fp8_e4m3(T(0x1p-10)), 0x00);
  EXPECT_EQ(num::to_fp8_e4m3(T(3 * 0x1p-10)), 0x02);
  EXPECT_EQ(num::to_fp8_e4m3(T(464)), 0x7E);
  // e5m2: ulp of [1, 2) is 2^-2. 1.125 between 1 (0x3C) and 1.25 (0x3D) -> 0x3C; 1.375
  // between 0x3D and 1.5 (0x3E) -> 0x3E. Subnormal quantum 2^-16: 2^-17 -> 0, 3*2^-17 -> 0x02.
  // 61440 is halfway between 57344 (0x7B, odd) and 65536 -> inf (0x7C).
  EXPECT_EQ(num::to_fp8_e5m2(T(1.125)), 0x3C);
  EXPECT_EQ(num::to_fp8_e5m2(T(1.375)), 0x3E);
  EXPECT_EQ(num::to_fp8_e5m2(T(0x1p-17)), 0x00);
  EXPECT_EQ(num::to_fp8_e5m2(T(3 * 0x1p-17)), 0x02);
  EXPECT_EQ(num::to_fp8_e5m2(T(61440)), 0x7C);
  EXPECT_EQ(num::to_fp8_e5m2(T(61439)), 0x7B);
  // e2m1 codes 0..7 = 0, 0.5, 1, 1.5, 2, 3, 4, 6. Ties: 0.25 (codes 0|1) -> 0; 0.75 (1|2) -> 2
  // = 1.0; 1.25 (2|3) -> 2 = 1.0; 1.75 (3|4) -> 4 = 2.0; 2.5 (4|5) -> 4 = 2.0; 3.5 (5|6) -> 6
  // = 4.0; 5 (6|7) -> 6 = 4.0.
  const double e2m1_ties[7] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0};
  const unsigned e2m1_even[7] = {0x0, 0x2, 0x2, 0x4, 0x4, 0x6, 0x6};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(num::to_e2m1(T(e2m1_ties[i])), e2m1_even[i]) << e2m1_ties[i];
    EXPECT_EQ(num::to_e2m1(T(-e2m1_ties[i])), e2m1_even[i] | 0x8u) << -e2m1_ties[i];
  }
  // tf32 (10 mantissa bits): 1 + 2^-11 -> 1; 1 + 3*2^-11 -> 1 + 2^-9. Its subnormal quantum
  // is 2^-136 (float's 2^-149 times 2^13): 2^-137 -> 0, 3*2^-137 -> 2^-135.
  EXPECT_EQ(num::round_tf32(T(1 + 0x1p-11)), 1.0f);
  EXPECT_EQ(num::round_tf32(T(1 + 3 * 0x1p-11)), 1 + 0x1p-9f);
  EXPECT_EQ(num::round_tf32(T(0x1p-137)), 0.0f);
  EXPECT_EQ(num::round_tf32(T(3 * 0x1p-137)), 0x1p-135f);
  EXPECT_EQ(num::round_tf32(T(0x1.FFEp127)), kInf);  // halfway above the largest, 0x1.FFCp127
  // int4 truncates (it is an integer store): 2.5 -> 2, -2.5 -> -2 (0xE).
  EXPECT_EQ(num::to_int4(T(2.5)), 0x2);
  EXPECT_EQ(num::to_int4(T(-2.5)), 0xE);
}

TEST(Numeric, TiesGoToEvenFromFloat) { ties_to_even<float>(); }
TEST(Numeric, TiesGoToEvenFromDouble) { ties_to_even<double>(); }

TEST(Numeric, DoubleIsRoundedOnce) {
  // Each x is just above a tie of its format, by 2^-40 relative: below float's resolution, so
  // a float conversion first lands exactly on the tie, which then goes to even (down).
  // Rounded once, x is above the tie and goes up.
  const double bf = 1 + 0x1p-8 + 0x1p-40;
  EXPECT_EQ(num::to_bf16(bf), 0x3F81);
  EXPECT_EQ(num::to_bf16(static_cast<float>(bf)), 0x3F80);
  EXPECT_EQ(num::to_fp16(1 + 0x1p-11 + 0x1p-40), 0x3C01);
  EXPECT_EQ(num::to_fp8_e4m3(1.0625 + 0x1p-40), 0x39);
  EXPECT_EQ(num::to_fp8_e5m2(1.125 + 0x1p-40), 0x3D);
  EXPECT_EQ(num::to_e2m1(0.25 + 0x1p-40), 0x1);
  EXPECT_EQ(num::round_tf32(1 + 0x1p-11 + 0x1p-40), 1 + 0x1p-10f);
  EXPECT_EQ(num::to_bf16(0x1p-134 + 0x1p-180), 0x0001);  // above half the smallest subnormal
  EXPECT_EQ(num::to_bf16(0x1p-134), 0x0000);
  EXPECT_EQ(num::to_bf16(-0x1p-300), 0x8000);  // underflow keeps the sign
  EXPECT_EQ(num::to_fp8_e4m3(1e-300), 0x00);
}

// --- overflow, infinity and NaN --------------------------------------------------------

template <typename T>
void overflow_and_nan() {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const T big = std::numeric_limits<T>::max();
  // bf16 / fp16 / e5m2: IEEE-like; NaN keeps its sign as the canonical quiet NaN.
  EXPECT_EQ(num::to_bf16(nan), 0x7FC0);
  EXPECT_EQ(num::to_bf16(-nan), 0xFFC0);
  EXPECT_EQ(num::to_bf16(inf), 0x7F80);
  EXPECT_EQ(num::to_bf16(-big), 0xFF80);
  EXPECT_EQ(num::to_fp16(nan), 0x7E00);
  EXPECT_EQ(num::to_fp16(-nan), 0xFE00);
  EXPECT_EQ(num::to_fp16(-inf), 0xFC00);
  EXPECT_EQ(num::to_fp16(T(1e6)), 0x7C00);
  EXPECT_EQ(num::to_fp8_e5m2(nan), 0x7E);
  EXPECT_EQ(num::to_fp8_e5m2(-nan), 0xFE);
  EXPECT_EQ(num::to_fp8_e5m2(inf), 0x7C);
  EXPECT_EQ(num::to_fp8_e5m2(T(-1e5)), 0xFC);
  // e4m3fn: no infinity. NaN, +-inf and |x| > 464 all store NaN with their sign (ml_dtypes
  // float8_e4m3fn does the same; it does not saturate).
  EXPECT_EQ(num::to_fp8_e4m3(nan), 0x7F);
  EXPECT_EQ(num::to_fp8_e4m3(-nan), 0xFF);
  EXPECT_EQ(num::to_fp8_e4m3(inf), 0x7F);
  EXPECT_EQ(num::to_fp8_e4m3(-inf), 0xFF);
  EXPECT_EQ(num::to_fp8_e4m3(T(464.25)), 0x7F);
  EXPECT_EQ(num::to_fp8_e4m3(T(-480)), 0xFF);
  EXPECT_EQ(num::to_fp8_e4m3(big), 0x7F);
  EXPECT_EQ(num::to_fp8_e4m3(T(463.75)), 0x7E);
  // e2m1: no inf/NaN. Overflow and +-inf saturate to +-6; NaN stores -0 (0x8) when its sign
  // bit is clear and +0 (0x0) when set, as ml_dtypes does (its float4_e2m1fn "NaN" is -0).
  EXPECT_EQ(num::to_e2m1(inf), 0x7);
  EXPECT_EQ(num::to_e2m1(-inf), 0xF);
  EXPECT_EQ(num::to_e2m1(T(7)), 0x7);
  EXPECT_EQ(num::to_e2m1(T(-1e30)), 0xF);
  EXPECT_EQ(num::to_e2m1(nan), 0x8);
  EXPECT_EQ(num::to_e2m1(-nan), 0x0);
  // tf32: float's specials.
  EXPECT_TRUE(same_float(num::round_tf32(nan), kNaN));
  EXPECT_TRUE(same_float(num::round_tf32(-nan), -kNaN));
  EXPECT_EQ(num::round_tf32(-inf), -kInf);
  EXPECT_EQ(num::round_tf32(big), kInf);  // float max is above the tf32 overflow tie
  // int4: NaN -> 0, +-inf and out of range saturate to 7 / -8.
  EXPECT_EQ(num::to_int4(nan), 0x0);
  EXPECT_EQ(num::to_int4(inf), 0x7);
  EXPECT_EQ(num::to_int4(-inf), 0x8);
  EXPECT_EQ(num::to_int4(T(8)), 0x7);
  EXPECT_EQ(num::to_int4(T(7.99)), 0x7);
  EXPECT_EQ(num::to_int4(T(-8.99)), 0x8);
  EXPECT_EQ(num::to_int4(T(-100)), 0x8);
  EXPECT_EQ(num::to_int4(T(-0.99)), 0x0);
  // Signed zeros and signalling NaNs.
  EXPECT_EQ(num::to_bf16(T(-0.0)), 0x8000);
  EXPECT_EQ(num::to_fp8_e4m3(T(-0.0)), 0x80);
  EXPECT_EQ(num::to_e2m1(T(-0.0)), 0x8);
  EXPECT_EQ(num::to_int4(T(-0.0)), 0x0);
  EXPECT_EQ(num::to_fp16(std::numeric_limits<T>::signaling_NaN()), 0x7E00);
}

TEST(Numeric, OverflowAndNaNFromFloat) { overflow_and_nan<float>(); }
TEST(Numeric, OverflowAndNaNFromDouble) { overflow_and_nan<double>(); }

// --- integer stores --------------------------------------------------------------------

template <typename T>
void integer_stores() {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  // NaN -> 0; truncation toward zero.
  EXPECT_EQ(num::to_int<int32_t>(nan), 0);
  EXPECT_EQ(num::to_int<int32_t>(T(2.9)), 2);
  EXPECT_EQ(num::to_int<int32_t>(T(-2.9)), -2);
  EXPECT_EQ(num::to_int<int32_t>(T(-0.5)), 0);
  // int8 [-128, 127]
  EXPECT_EQ(num::to_int<int8_t>(T(127.9)), 127);
  EXPECT_EQ(num::to_int<int8_t>(T(128)), 127);
  EXPECT_EQ(num::to_int<int8_t>(T(-128.9)), -128);
  EXPECT_EQ(num::to_int<int8_t>(T(-129)), -128);
  EXPECT_EQ(num::to_int<int8_t>(inf), 127);
  EXPECT_EQ(num::to_int<int8_t>(-inf), -128);
  // uint8 [0, 255]: -0.9 truncates to 0, -1 saturates to 0.
  EXPECT_EQ(num::to_int<uint8_t>(T(-0.9)), 0);
  EXPECT_EQ(num::to_int<uint8_t>(T(-1)), 0);
  EXPECT_EQ(num::to_int<uint8_t>(T(255.5)), 255);
  EXPECT_EQ(num::to_int<uint8_t>(T(256)), 255);
  EXPECT_EQ(num::to_int<uint8_t>(-inf), 0);
  EXPECT_EQ(num::to_int<uint8_t>(nan), 0);
  // int16
  EXPECT_EQ(num::to_int<int16_t>(T(32767.5)), 32767);
  EXPECT_EQ(num::to_int<int16_t>(T(-40000)), -32768);
  // int32: 2^31 - 128 is the largest float below 2^31.
  EXPECT_EQ(num::to_int<int32_t>(T(0x1p31)), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(num::to_int<int32_t>(T(0x1.FFFFFEp30)), 2147483520);
  EXPECT_EQ(num::to_int<int32_t>(T(-0x1p31)), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(num::to_int<int32_t>(T(-1e20)), std::numeric_limits<int32_t>::min());
  // int64 / uint64: 2^63 and 2^64 saturate; -2^63 is exact.
  EXPECT_EQ(num::to_int<int64_t>(T(0x1p63)), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(num::to_int<int64_t>(T(-0x1p63)), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(num::to_int<int64_t>(T(-1e30)), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(num::to_int<int64_t>(T(0x1p40)), int64_t{1} << 40);
  EXPECT_EQ(num::to_int<uint64_t>(T(0x1p64)), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(num::to_int<uint64_t>(T(0x1p63)), uint64_t{1} << 63);
  EXPECT_EQ(num::to_int<uint64_t>(-inf), 0u);
}

TEST(Numeric, IntegerStoresFromFloat) { integer_stores<float>(); }
TEST(Numeric, IntegerStoresFromDouble) {
  integer_stores<double>();
  // Doubles next to the int32/int64 limits: 2^31 - 0.5 truncates to the max; the largest
  // double below 2^63 is 2^63 - 1024.
  EXPECT_EQ(num::to_int<int32_t>(2147483647.5), 2147483647);
  EXPECT_EQ(num::to_int<int32_t>(-2147483648.9), -2147483647 - 1);
  EXPECT_EQ(num::to_int<int64_t>(0x1.FFFFFFFFFFFFFp62), INT64_C(9223372036854774784));
  EXPECT_EQ(num::to_int<uint64_t>(0x1.FFFFFFFFFFFFFp63), UINT64_C(18446744073709549568));
}

// --- an independent reference ----------------------------------------------------------

// Round to nearest, ties to the even code, by searching the table of every decoded code.
// `values` holds the non-negative finite values in code order (code i has value values[i]);
// one more entry, the value the next code would have, stands for overflow.
struct Table {
  std::vector<double> values;
  unsigned overflow_code;  // what the overflow entry stores (a NaN, inf or max code)
  unsigned sign_bit;
};

template <typename Decode>
Table make_table(unsigned finite_codes, Decode decode, unsigned overflow_code, unsigned sign) {
  Table t{{}, overflow_code, sign};
  for (unsigned c = 0; c < finite_codes; ++c) t.values.push_back(decode(c));
  const double top = t.values.back(), step = top - t.values[t.values.size() - 2];
  t.values.push_back(top + step);
  return t;
}

unsigned nearest(const Table& t, double x) {
  const unsigned sign = std::signbit(x) ? t.sign_bit : 0;
  const double a = std::fabs(x);
  if (std::isinf(a)) return sign | t.overflow_code;
  const auto it = std::upper_bound(t.values.begin(), t.values.end(), a);
  unsigned code = 0;
  if (it == t.values.end()) {
    code = static_cast<unsigned>(t.values.size() - 1);
  } else {
    const unsigned hi = static_cast<unsigned>(it - t.values.begin()), lo = hi - 1;
    // Both differences are exact (Sterbenz) where a tie is possible.
    const double dlo = a - t.values[lo], dhi = t.values[hi] - a;
    code = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
  }
  if (code == t.values.size() - 1) return sign | t.overflow_code;
  return sign | code;
}

template <typename T>
std::vector<T> random_values(int n, int lo_exp, int hi_exp, uint32_t seed) {
  std::mt19937_64 rng(seed);
  // Two binades beyond the format's range on each side, within T's range.
  const double top = std::is_same<T, float>::value ? std::min(hi_exp + 2.0, 127.99) : hi_exp + 2.0;
  std::uniform_real_distribution<double> expo(lo_exp - 2, top);
  std::vector<T> out;
  for (int i = 0; i < n; ++i) {
    const double mag = std::exp2(expo(rng));
    out.push_back(static_cast<T>((rng() & 1) != 0 ? -mag : mag));
  }
  return out;
}

template <typename T, typename Encode>
void check_against_table(const char* name, const Table& t, Encode encode, int lo_exp, int hi_exp) {
  std::vector<T> xs = random_values<T>(200000, lo_exp, hi_exp, 7);
  // Every tie and its neighbours in T.
  for (size_t i = 0; i + 1 < t.values.size(); ++i) {
    const T mid = static_cast<T>((t.values[i] + t.values[i + 1]) / 2);
    for (T v :
         {mid, std::nextafter(mid, T(0)), std::nextafter(mid, std::numeric_limits<T>::max())}) {
      xs.push_back(v);
      xs.push_back(-v);
    }
  }
  int failures = 0;
  for (T x : xs) {
    const unsigned want = nearest(t, static_cast<double>(x)), got = encode(x);
    if (got != want && ++failures <= 5) {
      ADD_FAILURE() << name << std::hexfloat << ": " << x << " -> 0x" << std::hex << got
                    << ", want 0x" << want;
    }
  }
  EXPECT_EQ(failures, 0) << name;
}

template <typename T>
void matches_nearest_value_reference() {
  auto fp16 = [](unsigned c) { return double(num::from_fp16(static_cast<uint16_t>(c))); };
  auto bf16 = [](unsigned c) { return double(num::from_bf16(static_cast<uint16_t>(c))); };
  auto e4m3 = [](unsigned c) { return double(num::from_fp8_e4m3(static_cast<uint8_t>(c))); };
  auto e5m2 = [](unsigned c) { return double(num::from_fp8_e5m2(static_cast<uint8_t>(c))); };
  auto e2m1 = [](unsigned c) { return double(num::from_e2m1(static_cast<uint8_t>(c))); };
  check_against_table<T>(
      "bf16", make_table(0x7F80, bf16, 0x7F80, 0x8000),
      [](T x) { return unsigned(num::to_bf16(x)); }, -133, 128);
  check_against_table<T>(
      "fp16", make_table(0x7C00, fp16, 0x7C00, 0x8000),
      [](T x) { return unsigned(num::to_fp16(x)); }, -24, 16);
  check_against_table<T>(
      "fp8_e4m3", make_table(0x7F, e4m3, 0x7F, 0x80),
      [](T x) { return unsigned(num::to_fp8_e4m3(x)); }, -9, 9);
  check_against_table<T>(
      "fp8_e5m2", make_table(0x7C, e5m2, 0x7C, 0x80),
      [](T x) { return unsigned(num::to_fp8_e5m2(x)); }, -16, 16);
  check_against_table<T>(
      "e2m1", make_table(0x8, e2m1, 0x7, 0x8), [](T x) { return unsigned(num::to_e2m1(x)); }, -1,
      3);
}

TEST(Numeric, MatchesNearestValueReferenceFromFloat) { matches_nearest_value_reference<float>(); }
TEST(Numeric, MatchesNearestValueReferenceFromDouble) { matches_nearest_value_reference<double>(); }

TEST(Numeric, FloatAndDoublePathsAgree) {
  // bf16 and tf32 have a float-only fast path (an integer add on the bits); the double path
  // is the general rounding. Every 4099th float bit pattern, all signs and exponents.
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) {
    const float f = float_of(static_cast<uint32_t>(b));
    ASSERT_EQ(num::to_bf16(f), num::to_bf16(static_cast<double>(f))) << std::hex << b;
    ASSERT_TRUE(same_float(num::round_tf32(f), num::round_tf32(static_cast<double>(f))))
        << std::hex << b;
  }
}

// --- constexpr -------------------------------------------------------------------------

static_assert(num::from_int4(0x8) == -8 && num::from_int4(0xF7) == 7, "");
#if SOLAR_NUMERIC_HAS_CONSTEXPR_BIT_CAST
static_assert(num::from_fp8_e4m3(0x7E) == 448.0f, "");
static_assert(num::to_fp8_e4m3(448.0) == 0x7E && num::to_fp8_e4m3(1e9f) == 0x7F, "");
static_assert(num::to_bf16(1.0f) == 0x3F80 && num::to_bf16(1.0) == 0x3F80, "");
static_assert(num::to_e2m1(5.0) == 0x6 && num::from_e2m1(0xF) == -6.0f, "");
static_assert(num::to_int<int8_t>(300.0) == 127 && num::to_int4(-9.0f) == 0x8, "");
static_assert(num::round_tf32(1 + 0x1p-11) == 1.0f, "");
#endif

}  // namespace

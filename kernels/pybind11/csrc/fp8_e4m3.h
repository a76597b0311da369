// FP8 E4M3 ("fn" flavour, as used by TransformerEngine and the OCP FP8 spec) scalar conversions.
//
// Layout: 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits. No infinities; 0x7f/0xff are NaN.
// Largest finite value 448 (0x7e), smallest normal 2^-6 (0x08), smallest subnormal 2^-9 (0x01).
//
// Float -> E4M3 rounds to nearest, ties to even, and saturates to +-448 ("satfinite", the mode TE
// and cuda_fp8.h's __NV_SATFINITE use). NaN stays NaN. Usable from host and device code; the CUDA
// build uses cuda_fp8.h's intrinsics where available and this as a fallback, the CPU build uses it
// always. Pure C++: no Python here.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define FP8EXT_HD __host__ __device__ __forceinline__
#else
#define FP8EXT_HD inline
#endif

namespace fp8ext {

constexpr float kE4M3Max = 448.0f;

FP8EXT_HD uint8_t float_to_e4m3(float f) {
  const uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
  if (std::isnan(f)) return static_cast<uint8_t>(sign | 0x7f);
  const float a = std::fabs(f);
  if (a >= kE4M3Max) return static_cast<uint8_t>(sign | 0x7e);  // saturate (also +-inf)
  if (a < 0.015625f) {                                            // below 2^-6: subnormal range
    // quantum 2^-9; a * 2^9 is exact, rint() rounds half to even in the default mode.
    // q == 8 is 2^-6, which is exactly the code of the smallest normal (0x08).
    const int q = static_cast<int>(std::rint(a * 512.0f));
    return static_cast<uint8_t>(sign | q);
  }
  int e = 0;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  // a = (1 + k/8) * 2^(e-1): k = (2m - 1) * 8 = 16m - 8, exact in float.
  int k = static_cast<int>(std::rint(m * 16.0f - 8.0f));
  int exp_field = (e - 1) + 7;
  if (k == 8) {
    k = 0;
    ++exp_field;
  }
  if (exp_field > 15 || (exp_field == 15 && k == 7)) return static_cast<uint8_t>(sign | 0x7e);
  return static_cast<uint8_t>(sign | (exp_field << 3) | k);
}

FP8EXT_HD float e4m3_to_float(uint8_t c) {
  const int exp_field = (c >> 3) & 0xf;
  const int mant = c & 0x7;
  float v;
  if (exp_field == 15 && mant == 7) {
    v = NAN;
  } else if (exp_field == 0) {
    v = std::ldexp(static_cast<float>(mant), -9);
  } else {
    v = std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, exp_field - 7);
  }
  return (c & 0x80) ? -v : v;
}

}  // namespace fp8ext

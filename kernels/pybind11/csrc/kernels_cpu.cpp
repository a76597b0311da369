// CPU implementation of kernels.h, used when the build has no nvcc (or with build.py --cpu).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "fp8_e4m3.h"
#include "kernels.h"

namespace fp8ext {

const char* backend_name() { return "cpu"; }

std::string device_description() { return "host CPU (kernels_cpu.cpp)"; }

float quantize_e4m3(const float* x, uint8_t* out, size_t n, float scale) {
  float amax = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    amax = std::fmax(amax, std::fabs(v));
    out[i] = float_to_e4m3(v * scale);
  }
  return amax;
}

void dequantize_e4m3(const uint8_t* in, float* out, size_t n, float scale_inv) {
  float table[256];
  for (int c = 0; c < 256; ++c) table[c] = e4m3_to_float(static_cast<uint8_t>(c));
  for (size_t i = 0; i < n; ++i) out[i] = table[in[i]] * scale_inv;
}

void transpose_u8(const uint8_t* in, uint8_t* out, size_t rows, size_t cols) {
  constexpr size_t kTile = 32;
  for (size_t r0 = 0; r0 < rows; r0 += kTile) {
    const size_t r1 = std::min(rows, r0 + kTile);
    for (size_t c0 = 0; c0 < cols; c0 += kTile) {
      const size_t c1 = std::min(cols, c0 + kTile);
      for (size_t r = r0; r < r1; ++r)
        for (size_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
    }
  }
}

BenchResult benchmark(size_t rows, size_t cols, int iters) {
  const size_t n = rows * cols;
  std::vector<float> x(n), y(n);
  std::vector<uint8_t> q(n), t(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 2654435761u) % 1000) / 7.0f - 70.0f;
  using clock = std::chrono::steady_clock;
  auto time_ms = [&](auto&& fn) {
    fn();  // warm-up
    const auto t0 = clock::now();
    for (int i = 0; i < iters; ++i) fn();
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count() / iters;
  };
  BenchResult r;
  r.iters = iters;
  r.quantize_ms = time_ms([&] { quantize_e4m3(x.data(), q.data(), n, 2.0f); });
  r.dequantize_ms = time_ms([&] { dequantize_e4m3(q.data(), y.data(), n, 0.5f); });
  r.transpose_ms = time_ms([&] { transpose_u8(q.data(), t.data(), rows, cols); });
  return r;
}

}  // namespace fp8ext

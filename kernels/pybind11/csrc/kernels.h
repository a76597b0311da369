// Backend interface of the fp8 kernels: implemented twice, by kernels.cu (CUDA, built when nvcc
// is found) and by kernels_cpu.cpp (the fallback). Host pointers in, host pointers out; the CUDA
// backend stages through device memory. Pure C++: nothing here touches Python, so the GIL
// behaviour of the extension lives entirely in ops.cpp and the variant files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fp8ext {

// "cuda" or "cpu".
const char* backend_name();
// A human-readable description of the device that runs the kernels.
std::string device_description();

// out[i] = E4M3(x[i] * scale) (round to nearest even, saturating); returns amax = max |x[i]|.
float quantize_e4m3(const float* x, uint8_t* out, size_t n, float scale);
// out[i] = float(in[i]) * scale_inv.
void dequantize_e4m3(const uint8_t* in, float* out, size_t n, float scale_inv);
// out (cols x rows) = transpose of in (rows x cols), both row-major bytes.
void transpose_u8(const uint8_t* in, uint8_t* out, size_t rows, size_t cols);

struct BenchResult {
  double quantize_ms = 0;    // per call, data resident on the device (or in RAM for the CPU)
  double dequantize_ms = 0;
  double transpose_ms = 0;
  int iters = 0;
};
// Times the three kernels on a rows x cols matrix of generated data, `iters` calls each after a
// warm-up, excluding host<->device transfers.
BenchResult benchmark(size_t rows, size_t cols, int iters);

}  // namespace fp8ext

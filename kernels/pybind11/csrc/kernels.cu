// CUDA implementation of kernels.h: quantize (with an amax reduction), dequantize and a tiled byte
// transpose. Built by build.py when nvcc is on PATH, replacing kernels_cpu.cpp. Pure CUDA C++:
// nothing here touches Python.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

// -DFP8EXT_SOFTWARE_FP8 forces the portable conversions of fp8_e4m3.h on the device too.
#if defined(__has_include) && !defined(FP8EXT_SOFTWARE_FP8)
#if __has_include(<cuda_fp8.h>)
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#define FP8EXT_HAVE_CUDA_FP8 1
#endif
#endif

#include "fp8_e4m3.h"
#include "kernels.h"

namespace fp8ext {
namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("fp8ext: CUDA error in ") + what + ": " + cudaGetErrorString(err));
}
#define FP8EXT_CUDA(expr) check((expr), #expr)

template <typename T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(size_t n) {
    if (n) FP8EXT_CUDA(cudaMalloc(reinterpret_cast<void**>(&ptr), n * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

constexpr int kThreads = 256;
constexpr int kTile = 32;
constexpr int kBlockRows = 8;

int grid_for(size_t work_items) {
  const size_t blocks = (work_items + kThreads - 1) / kThreads;
  return static_cast<int>(std::min<size_t>(std::max<size_t>(blocks, 1), 4096));
}

__device__ __forceinline__ uint8_t to_e4m3(float v) {
#ifdef FP8EXT_HAVE_CUDA_FP8
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
#else
  return float_to_e4m3(v);
#endif
}

__device__ __forceinline__ float from_e4m3(uint8_t c) {
#ifdef FP8EXT_HAVE_CUDA_FP8
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E4M3)));
#else
  return e4m3_to_float(c);
#endif
}

__device__ __forceinline__ float warp_max(float v) {
  for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, off));
  return v;
}

// Grid-stride loop over float4s; each block reduces |x| to one value and folds it into *amax_bits
// with an integer atomicMax (non-negative floats order like their bit patterns).
__global__ void quantize_kernel(const float* __restrict__ x, uint8_t* __restrict__ out, size_t n, float scale,
                                unsigned int* __restrict__ amax_bits) {
  float local = 0.0f;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  uchar4* out4 = reinterpret_cast<uchar4*>(out);
  for (size_t i = tid; i < n4; i += stride) {
    const float4 v = x4[i];
    local = fmaxf(local, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
    out4[i] = make_uchar4(to_e4m3(v.x * scale), to_e4m3(v.y * scale), to_e4m3(v.z * scale), to_e4m3(v.w * scale));
  }
  for (size_t i = n4 * 4 + tid; i < n; i += stride) {
    const float v = x[i];
    local = fmaxf(local, fabsf(v));
    out[i] = to_e4m3(v * scale);
  }
  __shared__ float warp_partial[kThreads / 32];
  local = warp_max(local);
  if ((threadIdx.x & 31) == 0) warp_partial[threadIdx.x >> 5] = local;
  __syncthreads();
  if (threadIdx.x < 32) {
    local = threadIdx.x < (blockDim.x >> 5) ? warp_partial[threadIdx.x] : 0.0f;
    local = warp_max(local);
    if (threadIdx.x == 0) atomicMax(amax_bits, __float_as_uint(local));
  }
}

__global__ void dequantize_kernel(const uint8_t* __restrict__ in, float* __restrict__ out, size_t n, float scale_inv) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t n4 = n / 4;
  const uchar4* in4 = reinterpret_cast<const uchar4*>(in);
  float4* out4 = reinterpret_cast<float4*>(out);
  for (size_t i = tid; i < n4; i += stride) {
    const uchar4 c = in4[i];
    out4[i] = make_float4(from_e4m3(c.x) * scale_inv, from_e4m3(c.y) * scale_inv, from_e4m3(c.z) * scale_inv,
                          from_e4m3(c.w) * scale_inv);
  }
  for (size_t i = n4 * 4 + tid; i < n; i += stride) out[i] = from_e4m3(in[i]) * scale_inv;
}

// Classic shared-memory tiled transpose: a kTile x kTile tile is read row-wise (coalesced) and
// written column-wise from shared memory (coalesced again). Padding avoids bank conflicts.
__global__ void transpose_kernel(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, size_t rows, size_t cols) {
  __shared__ uint8_t tile[kTile][kTile + 4];
  const size_t c = static_cast<size_t>(blockIdx.x) * kTile + threadIdx.x;
  const size_t r0 = static_cast<size_t>(blockIdx.y) * kTile;
  for (int j = threadIdx.y; j < kTile; j += kBlockRows) {
    const size_t r = r0 + j;
    if (r < rows && c < cols) tile[j][threadIdx.x] = in[r * cols + c];
  }
  __syncthreads();
  const size_t out_col = r0 + threadIdx.x;                        // a row index of `in`
  const size_t out_row0 = static_cast<size_t>(blockIdx.x) * kTile;  // a column index of `in`
  for (int j = threadIdx.y; j < kTile; j += kBlockRows) {
    const size_t out_row = out_row0 + j;
    if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[threadIdx.x][j];
  }
}

__global__ void fill_kernel(float* x, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = static_cast<float>((i * 2654435761u) % 1000) / 7.0f - 70.0f;
}

void launch_quantize(const float* dx, uint8_t* dq, size_t n, float scale, unsigned int* damax) {
  quantize_kernel<<<grid_for(std::max<size_t>(n / 4, 1)), kThreads>>>(dx, dq, n, scale, damax);
  FP8EXT_CUDA(cudaGetLastError());
}

void launch_dequantize(const uint8_t* dq, float* dy, size_t n, float scale_inv) {
  dequantize_kernel<<<grid_for(std::max<size_t>(n / 4, 1)), kThreads>>>(dq, dy, n, scale_inv);
  FP8EXT_CUDA(cudaGetLastError());
}

void launch_transpose(const uint8_t* din, uint8_t* dout, size_t rows, size_t cols) {
  if (rows == 0 || cols == 0) return;
  const dim3 block(kTile, kBlockRows);
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>((rows + kTile - 1) / kTile));
  if (grid.y > 65535) throw std::invalid_argument("fp8ext: too many rows for the CUDA transpose grid");
  transpose_kernel<<<grid, block>>>(din, dout, rows, cols);
  FP8EXT_CUDA(cudaGetLastError());
}

}  // namespace

const char* backend_name() { return "cuda"; }

std::string device_description() {
  int dev = 0, runtime = 0;
  cudaDeviceProp prop;
  FP8EXT_CUDA(cudaGetDevice(&dev));
  FP8EXT_CUDA(cudaGetDeviceProperties(&prop, dev));
  FP8EXT_CUDA(cudaRuntimeGetVersion(&runtime));
  std::string s = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
                  ", " + std::to_string(prop.multiProcessorCount) + " SMs, CUDA runtime " +
                  std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10);
#ifdef FP8EXT_HAVE_CUDA_FP8
  s += ", cuda_fp8.h conversions)";
#else
  s += ", software conversions)";
#endif
  return s;
}

float quantize_e4m3(const float* x, uint8_t* out, size_t n, float scale) {
  if (n == 0) return 0.0f;
  DeviceBuffer<float> dx(n);
  DeviceBuffer<uint8_t> dq(n);
  DeviceBuffer<unsigned int> damax(1);
  FP8EXT_CUDA(cudaMemcpy(dx.ptr, x, n * sizeof(float), cudaMemcpyHostToDevice));
  FP8EXT_CUDA(cudaMemset(damax.ptr, 0, sizeof(unsigned int)));
  launch_quantize(dx.ptr, dq.ptr, n, scale, damax.ptr);
  FP8EXT_CUDA(cudaMemcpy(out, dq.ptr, n, cudaMemcpyDeviceToHost));
  unsigned int bits = 0;
  FP8EXT_CUDA(cudaMemcpy(&bits, damax.ptr, sizeof(bits), cudaMemcpyDeviceToHost));
  float amax;
  std::memcpy(&amax, &bits, sizeof(amax));
  return amax;
}

void dequantize_e4m3(const uint8_t* in, float* out, size_t n, float scale_inv) {
  if (n == 0) return;
  DeviceBuffer<uint8_t> dq(n);
  DeviceBuffer<float> dy(n);
  FP8EXT_CUDA(cudaMemcpy(dq.ptr, in, n, cudaMemcpyHostToDevice));
  launch_dequantize(dq.ptr, dy.ptr, n, scale_inv);
  FP8EXT_CUDA(cudaMemcpy(out, dy.ptr, n * sizeof(float), cudaMemcpyDeviceToHost));
}

void transpose_u8(const uint8_t* in, uint8_t* out, size_t rows, size_t cols) {
  const size_t n = rows * cols;
  if (n == 0) return;
  DeviceBuffer<uint8_t> din(n);
  DeviceBuffer<uint8_t> dout(n);
  FP8EXT_CUDA(cudaMemcpy(din.ptr, in, n, cudaMemcpyHostToDevice));
  launch_transpose(din.ptr, dout.ptr, rows, cols);
  FP8EXT_CUDA(cudaMemcpy(out, dout.ptr, n, cudaMemcpyDeviceToHost));
}

BenchResult benchmark(size_t rows, size_t cols, int iters) {
  const size_t n = rows * cols;
  DeviceBuffer<float> dx(n), dy(n);
  DeviceBuffer<uint8_t> dq(n), dt(n);
  DeviceBuffer<unsigned int> damax(1);
  fill_kernel<<<grid_for(n), kThreads>>>(dx.ptr, n);
  FP8EXT_CUDA(cudaGetLastError());
  cudaEvent_t start, stop;
  FP8EXT_CUDA(cudaEventCreate(&start));
  FP8EXT_CUDA(cudaEventCreate(&stop));
  auto time_ms = [&](auto&& launch) {
    launch();  // warm-up
    FP8EXT_CUDA(cudaDeviceSynchronize());
    FP8EXT_CUDA(cudaEventRecord(start));
    for (int i = 0; i < iters; ++i) launch();
    FP8EXT_CUDA(cudaEventRecord(stop));
    FP8EXT_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    FP8EXT_CUDA(cudaEventElapsedTime(&ms, start, stop));
    return static_cast<double>(ms) / iters;
  };
  BenchResult r;
  r.iters = iters;
  r.quantize_ms = time_ms([&] {
    FP8EXT_CUDA(cudaMemsetAsync(damax.ptr, 0, sizeof(unsigned int)));
    launch_quantize(dx.ptr, dq.ptr, n, 2.0f, damax.ptr);
  });
  r.dequantize_ms = time_ms([&] { launch_dequantize(dq.ptr, dy.ptr, n, 0.5f); });
  r.transpose_ms = time_ms([&] { launch_transpose(dq.ptr, dt.ptr, rows, cols); });
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return r;
}

}  // namespace fp8ext

// CUDA kernels of fp8ext_rs, compiled at run time by NVRTC (src/cuda.rs embeds this file with
// include_str!): quantize with an amax reduction, dequantize, and a tiled byte transpose. The same
// kernels as kernels/pybind11/csrc/kernels.cu, self-contained (NVRTC has no standard library).
// With -DFP8EXT_CUDA_FP8 (and cuda_fp8.h on the include path) the conversions use cuda_fp8.h's
// intrinsics; otherwise the portable software conversions below. Pure CUDA: no Python here.
#ifdef FP8EXT_CUDA_FP8
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

#define FP8EXT_THREADS 256
#define FP8EXT_TILE 32
#define FP8EXT_BLOCK_ROWS 8

typedef unsigned char fp8_u8;
typedef unsigned long long fp8_u64;

// Round to nearest, ties to even, saturating to +-448; NaN stays NaN (as __NV_SATFINITE).
__device__ __forceinline__ fp8_u8 sw_float_to_e4m3(float f) {
  const unsigned int sign = (__float_as_uint(f) >> 31) ? 0x80u : 0x00u;
  if (f != f) return (fp8_u8)(sign | 0x7fu);
  const float a = fabsf(f);
  if (a >= 448.0f) return (fp8_u8)(sign | 0x7eu);
  if (a < 0.015625f) return (fp8_u8)(sign | (unsigned int)rintf(a * 512.0f));
  int e = 0;
  const float m = frexpf(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int k = (int)rintf(m * 16.0f - 8.0f);
  int exp_field = (e - 1) + 7;
  if (k == 8) {
    k = 0;
    ++exp_field;
  }
  if (exp_field > 15 || (exp_field == 15 && k == 7)) return (fp8_u8)(sign | 0x7eu);
  return (fp8_u8)(sign | (unsigned int)((exp_field << 3) | k));
}

__device__ __forceinline__ float sw_e4m3_to_float(fp8_u8 c) {
  const int exp_field = (c >> 3) & 0xf;
  const int mant = c & 0x7;
  float v;
  if (exp_field == 15 && mant == 7) {
    v = __int_as_float(0x7fffffff);
  } else if (exp_field == 0) {
    v = ldexpf((float)mant, -9);
  } else {
    v = ldexpf(1.0f + (float)mant / 8.0f, exp_field - 7);
  }
  return (c & 0x80) ? -v : v;
}

__device__ __forceinline__ fp8_u8 to_e4m3(float v) {
#ifdef FP8EXT_CUDA_FP8
  return (fp8_u8)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
#else
  return sw_float_to_e4m3(v);
#endif
}

__device__ __forceinline__ float from_e4m3(fp8_u8 c) {
#ifdef FP8EXT_CUDA_FP8
  return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)c, __NV_E4M3)));
#else
  return sw_e4m3_to_float(c);
#endif
}

__device__ __forceinline__ float warp_max(float v) {
  for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, off));
  return v;
}

// Grid-stride loop over float4s; each block reduces |x| to one value and folds it into *amax_bits
// with an integer atomicMax (non-negative floats order like their bit patterns).
extern "C" __global__ void fp8_quantize(const float* __restrict__ x, fp8_u8* __restrict__ out, fp8_u64 n,
                                        float scale, unsigned int* __restrict__ amax_bits) {
  float local = 0.0f;
  const fp8_u64 stride = (fp8_u64)gridDim.x * blockDim.x;
  const fp8_u64 tid = (fp8_u64)blockIdx.x * blockDim.x + threadIdx.x;
  const fp8_u64 n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  uchar4* out4 = reinterpret_cast<uchar4*>(out);
  for (fp8_u64 i = tid; i < n4; i += stride) {
    const float4 v = x4[i];
    local = fmaxf(local, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
    out4[i] = make_uchar4(to_e4m3(v.x * scale), to_e4m3(v.y * scale), to_e4m3(v.z * scale), to_e4m3(v.w * scale));
  }
  for (fp8_u64 i = n4 * 4 + tid; i < n; i += stride) {
    const float v = x[i];
    local = fmaxf(local, fabsf(v));
    out[i] = to_e4m3(v * scale);
  }
  __shared__ float warp_partial[FP8EXT_THREADS / 32];
  local = warp_max(local);
  if ((threadIdx.x & 31) == 0) warp_partial[threadIdx.x >> 5] = local;
  __syncthreads();
  if (threadIdx.x < 32) {
    local = threadIdx.x < (blockDim.x >> 5) ? warp_partial[threadIdx.x] : 0.0f;
    local = warp_max(local);
    if (threadIdx.x == 0) atomicMax(amax_bits, __float_as_uint(local));
  }
}

extern "C" __global__ void fp8_dequantize(const fp8_u8* __restrict__ in, float* __restrict__ out, fp8_u64 n,
                                          float scale_inv) {
  const fp8_u64 stride = (fp8_u64)gridDim.x * blockDim.x;
  const fp8_u64 tid = (fp8_u64)blockIdx.x * blockDim.x + threadIdx.x;
  const fp8_u64 n4 = n / 4;
  const uchar4* in4 = reinterpret_cast<const uchar4*>(in);
  float4* out4 = reinterpret_cast<float4*>(out);
  for (fp8_u64 i = tid; i < n4; i += stride) {
    const uchar4 c = in4[i];
    out4[i] = make_float4(from_e4m3(c.x) * scale_inv, from_e4m3(c.y) * scale_inv, from_e4m3(c.z) * scale_inv,
                          from_e4m3(c.w) * scale_inv);
  }
  for (fp8_u64 i = n4 * 4 + tid; i < n; i += stride) out[i] = from_e4m3(in[i]) * scale_inv;
}

// Shared-memory tiled transpose: a tile is read row-wise and written column-wise, both coalesced;
// the padding avoids bank conflicts. Block (32, 8), grid (ceil(cols/32), ceil(rows/32)).
extern "C" __global__ void fp8_transpose(const fp8_u8* __restrict__ in, fp8_u8* __restrict__ out, fp8_u64 rows,
                                         fp8_u64 cols) {
  __shared__ fp8_u8 tile[FP8EXT_TILE][FP8EXT_TILE + 4];
  const fp8_u64 c = (fp8_u64)blockIdx.x * FP8EXT_TILE + threadIdx.x;
  const fp8_u64 r0 = (fp8_u64)blockIdx.y * FP8EXT_TILE;
  for (int j = threadIdx.y; j < FP8EXT_TILE; j += FP8EXT_BLOCK_ROWS) {
    const fp8_u64 r = r0 + j;
    if (r < rows && c < cols) tile[j][threadIdx.x] = in[r * cols + c];
  }
  __syncthreads();
  const fp8_u64 out_col = r0 + threadIdx.x;
  const fp8_u64 out_row0 = (fp8_u64)blockIdx.x * FP8EXT_TILE;
  for (int j = threadIdx.y; j < FP8EXT_TILE; j += FP8EXT_BLOCK_ROWS) {
    const fp8_u64 out_row = out_row0 + j;
    if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[threadIdx.x][j];
  }
}

extern "C" __global__ void fp8_fill(float* x, fp8_u64 n) {
  const fp8_u64 stride = (fp8_u64)gridDim.x * blockDim.x;
  for (fp8_u64 i = (fp8_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = (float)((i * 2654435761ull) % 1000ull) / 7.0f - 70.0f;
}

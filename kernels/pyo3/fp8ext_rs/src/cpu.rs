//! The CPU backend: the same three kernels as the CUDA one, on host memory. No Python here.

use std::time::Instant;

use crate::backend::BenchResult;
use crate::e4m3::{e4m3_to_float, float_to_e4m3};

/// E4M3 codes of x[i] * scale, and amax = max |x[i]|.
pub fn quantize(x: &[f32], scale: f32) -> (Vec<u8>, f32) {
    let mut amax = 0.0f32;
    let mut out = Vec::with_capacity(x.len());
    for &v in x {
        amax = amax.max(v.abs());
        out.push(float_to_e4m3(v * scale));
    }
    (out, amax)
}

pub fn dequantize(q: &[u8], scale_inv: f32) -> Vec<f32> {
    let table: Vec<f32> = (0..=255u8).map(e4m3_to_float).collect();
    q.iter().map(|&c| table[c as usize] * scale_inv).collect()
}

/// cols x rows transpose of a row-major rows x cols byte matrix, in 32x32 tiles.
pub fn transpose(input: &[u8], rows: usize, cols: usize) -> Vec<u8> {
    const TILE: usize = 32;
    let mut out = vec![0u8; input.len()];
    for r0 in (0..rows).step_by(TILE) {
        for c0 in (0..cols).step_by(TILE) {
            for r in r0..(r0 + TILE).min(rows) {
                for c in c0..(c0 + TILE).min(cols) {
                    out[c * rows + r] = input[r * cols + c];
                }
            }
        }
    }
    out
}

pub fn fill(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as u64).wrapping_mul(2_654_435_761) % 1000) as f32 / 7.0 - 70.0)
        .collect()
}

pub fn benchmark(rows: usize, cols: usize, iters: u32) -> BenchResult {
    let n = rows * cols;
    let x = fill(n);
    let time_ms = |f: &mut dyn FnMut()| {
        f(); // warm-up
        let t0 = Instant::now();
        for _ in 0..iters {
            f();
        }
        t0.elapsed().as_secs_f64() * 1e3 / f64::from(iters)
    };
    let mut q = Vec::new();
    let quantize_ms = time_ms(&mut || q = quantize(&x, 2.0).0);
    let dequantize_ms = time_ms(&mut || {
        std::hint::black_box(dequantize(&q, 0.5));
    });
    let transpose_ms = time_ms(&mut || {
        std::hint::black_box(transpose(&q, rows, cols));
    });
    BenchResult { quantize_ms, dequantize_ms, transpose_ms, iters }
}

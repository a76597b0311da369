//! Backend selection: CUDA through cudarc when a driver, NVRTC and a device are there, the CPU
//! kernels otherwise. Chosen once, lazily, on the first kernel call. No Python here: the
//! initialiser of BACKEND never needs the GIL, so waiting for it attached cannot deadlock.

use std::sync::OnceLock;

use crate::cpu;
use crate::cuda::Gpu;

pub struct BenchResult {
    pub quantize_ms: f64,
    pub dequantize_ms: f64,
    pub transpose_ms: f64,
    pub iters: u32,
}

pub enum Backend {
    /// The reason the CUDA backend is not used.
    Cpu(String),
    Cuda(Gpu),
}

static BACKEND: OnceLock<Backend> = OnceLock::new();

pub fn backend() -> &'static Backend {
    BACKEND.get_or_init(select)
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Whether the dynamic loader finds one of `names`: the probe for the CUDA driver, made with
/// libloading before any cudarc call (cudarc's dynamic loading panics when a library is missing).
fn loadable(names: &[&str]) -> bool {
    names
        .iter()
        .any(|name| unsafe { libloading::Library::new(*name) }.is_ok())
}

fn select() -> Backend {
    if env_flag("FP8EXT_FORCE_CPU") {
        return Backend::Cpu("FP8EXT_FORCE_CPU is set".into());
    }
    if !loadable(&["libcuda.so.1", "libcuda.so"]) {
        return Backend::Cpu("no CUDA driver (libcuda.so.1 not found)".into());
    }
    // Same candidate names as cudarc's own loader; does not panic.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Backend::Cpu("no NVRTC library (libnvrtc.so*) on the loader path".into());
    }
    match std::panic::catch_unwind(Gpu::new) {
        Ok(Ok(gpu)) => Backend::Cuda(gpu),
        Ok(Err(e)) => Backend::Cpu(format!("CUDA initialisation failed: {e}")),
        Err(_) => Backend::Cpu("CUDA initialisation panicked".into()),
    }
}

impl Backend {
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Cpu(_) => "cpu",
            Backend::Cuda(_) => "cuda",
        }
    }

    pub fn description(&self) -> String {
        match self {
            Backend::Cpu(reason) => format!("host CPU (src/cpu.rs; {reason})"),
            Backend::Cuda(gpu) => gpu.description.clone(),
        }
    }

    pub fn quantize(&self, x: &[f32], scale: f32) -> Result<(Vec<u8>, f32), String> {
        match self {
            Backend::Cpu(_) => Ok(cpu::quantize(x, scale)),
            Backend::Cuda(gpu) => gpu.quantize(x, scale),
        }
    }

    pub fn dequantize(&self, q: &[u8], scale_inv: f32) -> Result<Vec<f32>, String> {
        match self {
            Backend::Cpu(_) => Ok(cpu::dequantize(q, scale_inv)),
            Backend::Cuda(gpu) => gpu.dequantize(q, scale_inv),
        }
    }

    pub fn transpose(&self, input: &[u8], rows: usize, cols: usize) -> Result<Vec<u8>, String> {
        match self {
            Backend::Cpu(_) => Ok(cpu::transpose(input, rows, cols)),
            Backend::Cuda(gpu) => gpu.transpose(input, rows, cols),
        }
    }

    pub fn benchmark(&self, rows: usize, cols: usize, iters: u32) -> Result<BenchResult, String> {
        match self {
            Backend::Cpu(_) => Ok(cpu::benchmark(rows, cols, iters)),
            Backend::Cuda(gpu) => gpu.benchmark(rows, cols, iters),
        }
    }
}

//! The CUDA backend: cudarc with dynamic loading (no CUDA needed to build), the kernels of
//! src/kernels.cu compiled by NVRTC for the device's compute capability when the backend is first
//! used. Host slices in, host vectors out, staged through device memory on the context's default
//! stream (CUDA streams are thread-safe; cudarc binds the context to each calling thread).
//! Only created by backend::select() after the driver library was found. No Python here.

use std::path::PathBuf;
use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{CompileOptions, Ptx, compile_ptx_with_opts};

use crate::backend::BenchResult;

const SOURCE: &str = include_str!("kernels.cu");
const THREADS: u32 = 256;
const TILE: u32 = 32;
const BLOCK_ROWS: u32 = 8;

pub struct Gpu {
    /// Keeps the primary context retained for the life of the process.
    #[allow(dead_code)]
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    k_quantize: CudaFunction,
    k_dequantize: CudaFunction,
    k_transpose: CudaFunction,
    k_fill: CudaFunction,
    pub description: String,
}

fn err<E: std::fmt::Debug>(what: &str) -> impl FnOnce(E) -> String + '_ {
    move |e| format!("{what}: {e:?}")
}

/// Directories holding cuda_fp8.h (the toolkit's headers), for the intrinsics build.
fn fp8_include_dirs() -> Vec<String> {
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"]
        .iter()
        .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
        .collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    for root in roots {
        let include = root.join("include");
        if include.join("cuda_fp8.h").is_file() {
            let mut dirs = vec![include.display().to_string()];
            let cccl = include.join("cccl");
            if cccl.is_dir() {
                dirs.push(cccl.display().to_string());
            }
            return dirs;
        }
    }
    Vec::new()
}

fn compile(arch: &str) -> Result<(Ptx, String), String> {
    let options = |extra: &[&str]| {
        let mut o = vec![format!("--gpu-architecture={arch}"), "--std=c++17".to_string()];
        o.extend(extra.iter().map(|s| s.to_string()));
        o
    };
    let software_only = std::env::var("FP8EXT_SOFTWARE_FP8").is_ok_and(|v| !v.is_empty() && v != "0");
    let mut note = if software_only { "FP8EXT_SOFTWARE_FP8 is set".to_string() } else { String::new() };
    if !software_only {
        let include_paths = fp8_include_dirs();
        if include_paths.is_empty() {
            note = "no cuda_fp8.h found under $CUDA_HOME, $CUDA_PATH or /usr/local/cuda".into();
        } else {
            let opts = CompileOptions {
                options: options(&["-DFP8EXT_CUDA_FP8"]),
                include_paths,
                name: Some("kernels.cu".into()),
                ..Default::default()
            };
            match compile_ptx_with_opts(SOURCE, opts) {
                Ok(ptx) => return Ok((ptx, "cuda_fp8.h conversions".into())),
                Err(e) => {
                    let text = format!("{e:?}");
                    note = format!("the cuda_fp8.h build failed: {}", &text[..text.len().min(300)]);
                }
            }
        }
    }
    let opts = CompileOptions { options: options(&[]), name: Some("kernels.cu".into()), ..Default::default() };
    let ptx = compile_ptx_with_opts(SOURCE, opts).map_err(err("NVRTC"))?;
    Ok((ptx, format!("software conversions; {note}")))
}

fn versions() -> String {
    let mut driver = 0i32;
    let (mut major, mut minor) = (0i32, 0i32);
    unsafe {
        cudarc::driver::sys::cuDriverGetVersion(&mut driver);
        cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor);
    }
    format!("driver API {}.{}, NVRTC {major}.{minor}", driver / 1000, (driver % 1000) / 10)
}

fn grid_for(work_items: usize) -> u32 {
    (work_items.div_ceil(THREADS as usize)).clamp(1, 4096) as u32
}

fn linear(n: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid_for((n / 4).max(1)), 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 }
}

fn tiled(rows: usize, cols: usize) -> Result<LaunchConfig, String> {
    let gy = rows.div_ceil(TILE as usize);
    if gy > 65535 {
        return Err("fp8_transpose: too many rows for the CUDA transpose grid".into());
    }
    Ok(LaunchConfig {
        grid_dim: (cols.div_ceil(TILE as usize) as u32, gy as u32, 1),
        block_dim: (TILE, BLOCK_ROWS, 1),
        shared_mem_bytes: 0,
    })
}

impl Gpu {
    pub fn new() -> Result<Gpu, String> {
        let ctx = CudaContext::new(0).map_err(err("CudaContext::new(0)"))?;
        let (major, minor) = ctx.compute_capability().map_err(err("compute capability"))?;
        let name = ctx.name().map_err(err("device name"))?;
        let sms = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(err("SM count"))?;
        let (ptx, conversions) = compile(&format!("compute_{major}{minor}"))?;
        let module = ctx.load_module(ptx).map_err(err("cuModuleLoadData"))?;
        let function = |name: &str| module.load_function(name).map_err(err(name));
        let gpu = Gpu {
            k_quantize: function("fp8_quantize")?,
            k_dequantize: function("fp8_dequantize")?,
            k_transpose: function("fp8_transpose")?,
            k_fill: function("fp8_fill")?,
            stream: ctx.default_stream(),
            description: format!(
                "{name} (sm_{major}{minor}, {sms} SMs, {}, cudarc + NVRTC, {conversions})",
                versions()
            ),
            ctx,
        };
        Ok(gpu)
    }

    pub fn quantize(&self, x: &[f32], scale: f32) -> Result<(Vec<u8>, f32), String> {
        let n = x.len();
        if n == 0 {
            return Ok((Vec::new(), 0.0));
        }
        let s = &self.stream;
        let dx = s.clone_htod(x).map_err(err("copy to device"))?;
        let mut dq = s.alloc_zeros::<u8>(n).map_err(err("alloc"))?;
        let mut damax = s.alloc_zeros::<u32>(1).map_err(err("alloc"))?;
        let n64 = n as u64;
        let mut launch = s.launch_builder(&self.k_quantize);
        launch.arg(&dx).arg(&mut dq).arg(&n64).arg(&scale).arg(&mut damax);
        unsafe { launch.launch(linear(n)) }.map_err(err("fp8_quantize launch"))?;
        let q = s.clone_dtoh(&dq).map_err(err("copy to host"))?;
        let bits = s.clone_dtoh(&damax).map_err(err("copy to host"))?;
        Ok((q, f32::from_bits(bits[0])))
    }

    pub fn dequantize(&self, q: &[u8], scale_inv: f32) -> Result<Vec<f32>, String> {
        let n = q.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let s = &self.stream;
        let dq = s.clone_htod(q).map_err(err("copy to device"))?;
        let mut dy = s.alloc_zeros::<f32>(n).map_err(err("alloc"))?;
        let n64 = n as u64;
        let mut launch = s.launch_builder(&self.k_dequantize);
        launch.arg(&dq).arg(&mut dy).arg(&n64).arg(&scale_inv);
        unsafe { launch.launch(linear(n)) }.map_err(err("fp8_dequantize launch"))?;
        s.clone_dtoh(&dy).map_err(err("copy to host"))
    }

    pub fn transpose(&self, input: &[u8], rows: usize, cols: usize) -> Result<Vec<u8>, String> {
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let cfg = tiled(rows, cols)?;
        let s = &self.stream;
        let din = s.clone_htod(input).map_err(err("copy to device"))?;
        let mut dout = s.alloc_zeros::<u8>(input.len()).map_err(err("alloc"))?;
        let (r64, c64) = (rows as u64, cols as u64);
        let mut launch = s.launch_builder(&self.k_transpose);
        launch.arg(&din).arg(&mut dout).arg(&r64).arg(&c64);
        unsafe { launch.launch(cfg) }.map_err(err("fp8_transpose launch"))?;
        s.clone_dtoh(&dout).map_err(err("copy to host"))
    }

    /// Per-call kernel times with the data resident on the device (CUDA events).
    pub fn benchmark(&self, rows: usize, cols: usize, iters: u32) -> Result<BenchResult, String> {
        let n = rows * cols;
        let n64 = n as u64;
        let (r64, c64) = (rows as u64, cols as u64);
        let s = &self.stream;
        let mut dx = s.alloc_zeros::<f32>(n).map_err(err("alloc"))?;
        let mut dy = s.alloc_zeros::<f32>(n).map_err(err("alloc"))?;
        let mut dq = s.alloc_zeros::<u8>(n).map_err(err("alloc"))?;
        let mut dt = s.alloc_zeros::<u8>(n).map_err(err("alloc"))?;
        let mut damax = s.alloc_zeros::<u32>(1).map_err(err("alloc"))?;
        let fill_cfg =
            LaunchConfig { grid_dim: (grid_for(n), 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        unsafe { s.launch_builder(&self.k_fill).arg(&mut dx).arg(&n64).launch(fill_cfg) }
            .map_err(err("fp8_fill launch"))?;
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let time_ms = |launch: &mut dyn FnMut() -> Result<(), String>| -> Result<f64, String> {
            launch()?; // warm-up
            s.synchronize().map_err(err("synchronize"))?;
            let start = s.record_event(timing).map_err(err("event"))?;
            for _ in 0..iters {
                launch()?;
            }
            let stop = s.record_event(timing).map_err(err("event"))?;
            let ms = start.elapsed_ms(&stop).map_err(err("elapsed"))?;
            Ok(f64::from(ms) / f64::from(iters))
        };
        let scale = 2.0f32;
        let quantize_ms = time_ms(&mut || {
            s.memset_zeros(&mut damax).map_err(err("memset"))?;
            let mut l = s.launch_builder(&self.k_quantize);
            l.arg(&dx).arg(&mut dq).arg(&n64).arg(&scale).arg(&mut damax);
            unsafe { l.launch(linear(n)) }.map(|_| ()).map_err(err("fp8_quantize launch"))
        })?;
        let scale_inv = 0.5f32;
        let dequantize_ms = time_ms(&mut || {
            let mut l = s.launch_builder(&self.k_dequantize);
            l.arg(&dq).arg(&mut dy).arg(&n64).arg(&scale_inv);
            unsafe { l.launch(linear(n)) }.map(|_| ()).map_err(err("fp8_dequantize launch"))
        })?;
        let cfg = tiled(rows, cols)?;
        let transpose_ms = time_ms(&mut || {
            let mut l = s.launch_builder(&self.k_transpose);
            l.arg(&dq).arg(&mut dt).arg(&r64).arg(&c64);
            unsafe { l.launch(cfg) }.map(|_| ()).map_err(err("fp8_transpose launch"))
        })?;
        Ok(BenchResult { quantize_ms, dequantize_ms, transpose_ms, iters })
    }
}

//! The bindings, shaped like kernels/pybind11/csrc/ops.cpp: every one calls init_extension() (the
//! variant file's) first. Apart from that call this file is GIL-correct: the attached bindings
//! use Python freely, and fp8_transpose does its work inside `py.detach(..)` on Rust data only
//! (the bytes argument is borrowed as `&[u8]`, the result converted after the closure returns).

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::backend::backend;
use crate::init::init_extension;

/// quantize(x, scale=1.0) -> (bytes, amax): E4M3 codes of x*scale for a C-contiguous float32
/// buffer of 1 or 2 dimensions, and amax = max |x|. Attached.
#[pyfunction]
#[pyo3(signature = (x, scale = 1.0))]
fn quantize<'py>(py: Python<'py>, x: &Bound<'py, PyAny>, scale: f32) -> PyResult<(Bound<'py, PyBytes>, f32)> {
    init_extension();
    let buf = PyBuffer::<f32>::get(x)
        .map_err(|e| PyTypeError::new_err(format!("quantize: expected a float32 buffer ({e})")))?;
    if !(1..=2).contains(&buf.dimensions()) {
        return Err(PyValueError::new_err("quantize: expected a 1-D or 2-D buffer"));
    }
    if !buf.is_c_contiguous() {
        return Err(PyValueError::new_err("quantize: expected a C-contiguous buffer"));
    }
    let values = buf.to_vec(py)?;
    drop(buf);
    let (codes, amax) = backend().quantize(&values, scale).map_err(PyRuntimeError::new_err)?;
    Ok((PyBytes::new(py, &codes), amax))
}

/// dequantize(data, scale_inv=None) -> bytes (float32 values): `data` is fp8 bytes or a
/// fp8ext.float8_tensor.Float8Tensor (then scale_inv defaults to the tensor's). Attached.
#[pyfunction]
#[pyo3(signature = (data, scale_inv = None))]
fn dequantize<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, scale_inv: Option<f32>) -> PyResult<Bound<'py, PyBytes>> {
    let float8_tensor = init_extension().bind(py);
    let (payload, scale_inv) = if data.is_instance(float8_tensor)? {
        let scale_inv = match scale_inv {
            Some(s) => s,
            None => data.getattr("_scale_inv")?.extract::<f32>()?,
        };
        (data.getattr("_data")?, Some(scale_inv))
    } else {
        (data.clone(), scale_inv)
    };
    let scale_inv =
        scale_inv.ok_or_else(|| PyTypeError::new_err("dequantize: scale_inv is required for raw fp8 bytes"))?;
    let payload = payload
        .cast_into::<PyBytes>()
        .map_err(|_| PyTypeError::new_err("dequantize: expected bytes or a Float8Tensor"))?;
    let values = backend()
        .dequantize(payload.as_bytes(), scale_inv)
        .map_err(PyRuntimeError::new_err)?;
    let mut out = Vec::with_capacity(values.len() * 4);
    for v in values {
        out.extend_from_slice(&v.to_ne_bytes());
    }
    Ok(PyBytes::new(py, &out))
}

enum TransposeError {
    Shape,
    Backend(String),
}

/// fp8_transpose(data, rows, cols) -> bytes: the cols x rows transpose of a rows x cols fp8
/// matrix. The whole body, init_extension() included, runs detached (like pybind11's
/// call_guard<gil_scoped_release> binding of the C++ twin).
#[pyfunction]
fn fp8_transpose<'py>(py: Python<'py>, data: &[u8], rows: i64, cols: i64) -> PyResult<Bound<'py, PyBytes>> {
    let result = py.detach(|| {
        init_extension();
        let n = (rows as u64).checked_mul(cols as u64);
        if rows < 0 || cols < 0 || n != Some(data.len() as u64) {
            return Err(TransposeError::Shape);
        }
        backend().transpose(data, rows as usize, cols as usize).map_err(TransposeError::Backend)
    });
    match result {
        Ok(out) => Ok(PyBytes::new(py, &out)),
        Err(TransposeError::Shape) => Err(PyValueError::new_err("fp8_transpose: len(data) must equal rows * cols")),
        Err(TransposeError::Backend(e)) => Err(PyRuntimeError::new_err(e)),
    }
}

/// benchmark(rows, cols, iters=20) -> dict: per-call kernel times in ms on generated data
/// (resident on the device for CUDA). Attached.
#[pyfunction]
#[pyo3(signature = (rows, cols, iters = 20))]
fn benchmark<'py>(py: Python<'py>, rows: i64, cols: i64, iters: u32) -> PyResult<Bound<'py, PyDict>> {
    init_extension();
    if rows <= 0 || cols <= 0 || iters == 0 {
        return Err(PyValueError::new_err("benchmark: rows, cols and iters must be positive"));
    }
    let b = backend();
    let r = b
        .benchmark(rows as usize, cols as usize, iters)
        .map_err(PyRuntimeError::new_err)?;
    let d = PyDict::new(py);
    d.set_item("backend", b.name())?;
    d.set_item("device", b.description())?;
    d.set_item("rows", rows)?;
    d.set_item("cols", cols)?;
    d.set_item("iters", r.iters)?;
    d.set_item("quantize_ms", r.quantize_ms)?;
    d.set_item("dequantize_ms", r.dequantize_ms)?;
    d.set_item("transpose_ms", r.transpose_ms)?;
    Ok(d)
}

/// backend_info() -> dict: which kernels run ("cuda" or "cpu") and on what. Selects the backend
/// if no kernel has run yet; does not call init_extension().
#[pyfunction]
fn backend_info<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let b = backend();
    let d = PyDict::new(py);
    d.set_item("backend", b.name())?;
    d.set_item("device", b.description())?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>, variant: &str) -> PyResult<()> {
    m.add(
        "__doc__",
        "fp8 E4M3 kernels (cudarc + NVRTC, CPU fallback) with a lazily initialised Python dependency (gil-lint oracle)",
    )?;
    m.add("variant", variant)?;
    m.add_function(wrap_pyfunction!(quantize, m)?)?;
    m.add_function(wrap_pyfunction!(dequantize, m)?)?;
    m.add_function(wrap_pyfunction!(fp8_transpose, m)?)?;
    m.add_function(wrap_pyfunction!(benchmark, m)?)?;
    m.add_function(wrap_pyfunction!(backend_info, m)?)?;
    Ok(())
}

//! (a) std::sync::OnceLock whose initialiser attaches with Python::attach: the PyO3 FAQ deadlock,
//! the Rust twin of V1 (kernels/pybind11/variants/v1_acquire_inside.cpp).
//!
//! fp8_transpose calls init_extension() inside `py.detach(..)`: it takes the cell's lock, then
//! waits for the GIL in Python::attach. quantize and dequantize call it attached: they hold the
//! GIL and wait for the cell. A lock-order inversion (scenario S2). The import inside may also
//! drop the GIL while two attached callers meet on the cell (scenario S3).
use std::sync::OnceLock;

use pyo3::prelude::*;

use crate::delay::delay_from_env;

static FLOAT8_TENSOR: OnceLock<Py<PyAny>> = OnceLock::new();

pub fn init_extension() -> &'static Py<PyAny> {
    FLOAT8_TENSOR.get_or_init(|| {
        delay_from_env("FP8EXT_LAMBDA_DELAY_MS");
        Python::attach(|py| py.import("fp8ext.float8_tensor").unwrap().getattr("Float8Tensor").unwrap().unbind())  //~ gil-lock-inversion
    })
}

//! (b) pyo3::sync::PyOnceLock: clean, the Rust twin of V3 (gil_safe_call_once_and_store).
//!
//! init_extension() attaches first (fp8_transpose calls it detached). PyOnceLock::get_or_init
//! detaches before it blocks on the cell and re-attaches inside the initialiser: the single lock
//! order cell -> GIL, so the import may drop and re-take the GIL freely.
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::delay::delay_from_env;

static FLOAT8_TENSOR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

pub fn init_extension() -> &'static Py<PyAny> {
    Python::attach(|py| {
        FLOAT8_TENSOR.get_or_init(py, || {
            delay_from_env("FP8EXT_LAMBDA_DELAY_MS");
            py.import("fp8ext.float8_tensor").unwrap().getattr("Float8Tensor").unwrap().unbind()
        })
    })
}

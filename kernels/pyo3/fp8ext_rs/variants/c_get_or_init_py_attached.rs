//! (c) std::sync::OnceLock + pyo3::sync::OnceLockExt::get_or_init_py_attached: clean.
//!
//! init_extension() attaches first (fp8_transpose calls it detached). get_or_init_py_attached
//! waits for the cell detached and runs the initialiser attached: the single lock order
//! cell -> GIL, like V5's hand-written release -> call_once -> acquire.
use std::sync::OnceLock;

use pyo3::prelude::*;
use pyo3::sync::OnceLockExt;

use crate::delay::delay_from_env;

static FLOAT8_TENSOR: OnceLock<Py<PyAny>> = OnceLock::new();

pub fn init_extension() -> &'static Py<PyAny> {
    Python::attach(|py| {
        FLOAT8_TENSOR.get_or_init_py_attached(py, || {
            delay_from_env("FP8EXT_LAMBDA_DELAY_MS");
            py.import("fp8ext.float8_tensor").unwrap().getattr("Float8Tensor").unwrap().unbind()
        })
    })
}

//! (d) a once_cell::sync::Lazy static whose initialiser imports, used while attached: the Rust
//! twin of V4 (a function-local static initialised by an import) and of V2.
//!
//! init_extension() attaches first (fp8_transpose calls it detached), then uses the static: every
//! caller waits for the Lazy's lock holding the GIL. The initialiser's import can drop the GIL
//! (time.sleep, I/O, an eval-loop switch) and must take it back while it still holds the lock: a
//! deadlock with any other caller (scenarios S2, S3).
use once_cell::sync::Lazy;
use pyo3::prelude::*;

use crate::delay::delay_from_env;

static FLOAT8_TENSOR: Lazy<Py<PyAny>> = Lazy::new(|| {
    delay_from_env("FP8EXT_LAMBDA_DELAY_MS");
    Python::attach(|py| py.import("fp8ext.float8_tensor").unwrap().getattr("Float8Tensor").unwrap().unbind())
});

pub fn init_extension() -> &'static Py<PyAny> {
    Python::attach(|_py| &*FLOAT8_TENSOR)  //~ gil-held-blocking
}

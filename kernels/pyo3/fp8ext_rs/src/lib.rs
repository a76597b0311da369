//! fp8ext_rs: the PyO3 + cudarc twin of the pybind11 `fp8ext` extension (kernels/README.md).
//!
//! The crate is linked from the shared sources of this directory and exactly one file of
//! `../variants/`, chosen by a cargo feature, that defines `init_extension()`: the lazy one-time
//! initialisation that imports `fp8ext.float8_tensor` and caches its `Float8Tensor` class. The
//! variants differ only in how that initialisation handles the GIL; everything in `src/` is
//! GIL-correct. Each variant becomes its own module, `fp8ext_rs_a` ... `fp8ext_rs_d`.

#[cfg(feature = "variant-a")]
#[path = "../variants/a_oncelock_attach.rs"]
mod init;
#[cfg(feature = "variant-b")]
#[path = "../variants/b_pyoncelock.rs"]
mod init;
#[cfg(feature = "variant-c")]
#[path = "../variants/c_get_or_init_py_attached.rs"]
mod init;
#[cfg(feature = "variant-d")]
#[path = "../variants/d_lazy_static.rs"]
mod init;

#[cfg(not(any(
    feature = "variant-a",
    feature = "variant-b",
    feature = "variant-c",
    feature = "variant-d"
)))]
compile_error!("select exactly one init_extension() variant: --features variant-a|variant-b|variant-c|variant-d");

mod backend;
mod cpu;
mod cuda;
mod delay;
mod e4m3;
mod ops;

use pyo3::prelude::*;

#[cfg(feature = "variant-a")]
#[pymodule]
fn fp8ext_rs_a(m: &Bound<'_, PyModule>) -> PyResult<()> {
    ops::register(m, "a_oncelock_attach")
}

#[cfg(feature = "variant-b")]
#[pymodule]
fn fp8ext_rs_b(m: &Bound<'_, PyModule>) -> PyResult<()> {
    ops::register(m, "b_pyoncelock")
}

#[cfg(feature = "variant-c")]
#[pymodule]
fn fp8ext_rs_c(m: &Bound<'_, PyModule>) -> PyResult<()> {
    ops::register(m, "c_get_or_init_py_attached")
}

#[cfg(feature = "variant-d")]
#[pymodule]
fn fp8ext_rs_d(m: &Bound<'_, PyModule>) -> PyResult<()> {
    ops::register(m, "d_lazy_static")
}

//! The Rust (PyO3) front-end on arbitrary text: must not panic, overflow the stack or hang.
#![no_main]

use std::path::Path;

use gil_lint::frontend::{self, Language};
use gil_lint_fuzz::{knowledge, on_worker};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = on_worker(|| {
        frontend::extract(Language::Rust, Path::new("crate/src/lib.rs"), &text, knowledge())
    });
});

//! The Rust front-end, behind its nesting bound, on structured text (see
//! [`gil_lint_fuzz::expand`]): deep nesting, long lines and many items must give a model or a
//! one-line error, never a panic, a stack overflow or a hang.
#![no_main]

use std::path::Path;

use gil_lint::frontend::{self, Language};
use gil_lint_fuzz::{RUST_FRAGMENTS, expand, knowledge, on_worker};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = expand(data, RUST_FRAGMENTS, 1 << 20);
    let _ = gil_lint::frontend::rust_scan::scan_rust(&text, Path::new("crate/src/lib.rs"));
    let _ = gil_lint::suppress::scan(0, &text);
    let result = on_worker(|| {
        frontend::extract(Language::Rust, Path::new("crate/src/lib.rs"), &text, knowledge())
    });
    if let Err(reason) = result {
        assert!(!reason.contains('\n'), "{reason}");
    }
});

//! The C++ pre-pass and front-end on structured text (see [`gil_lint_fuzz::expand`]): deep
//! nesting, long lines, many declarations, conditional blocks and raw strings must give a model
//! or a one-line error, never a panic or a hang.
#![no_main]

use std::path::Path;

use gil_lint::frontend::{self, Language};
use gil_lint_fuzz::{CPP_FRAGMENTS, expand, knowledge, on_worker};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = expand(data, CPP_FRAGMENTS, 1 << 20);
    let _ = gil_lint::suppress::scan(0, &text);
    let result = on_worker(|| {
        frontend::extract(Language::Cpp, Path::new("src/m.cpp"), &text, knowledge())
    });
    if let Err(reason) = result {
        assert!(!reason.contains('\n'), "{reason}");
    }
});

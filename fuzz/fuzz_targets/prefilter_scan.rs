//! The pre-filter's scans (C/C++ and Rust) on arbitrary text: must not panic or hang.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use gil_lint::frontend::Language;
use gil_lint::frontend::cpp::scan::{Rewrites, scan_cpp};
use gil_lint::frontend::rust_scan::scan_rust;
use gil_lint::frontend::scan::Seeds;
use gil_lint_fuzz::knowledge;
use libfuzzer_sys::fuzz_target;

fn prepared() -> &'static (Seeds, Rewrites) {
    static P: OnceLock<(Seeds, Rewrites)> = OnceLock::new();
    P.get_or_init(|| (Seeds::new(knowledge()), Rewrites::new(knowledge())))
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (seeds, rewrites) = prepared();
    let path = Path::new("crates/x-y/src/a/mod.rs");
    let _ = seeds.in_text(path, &text, Language::Cpp);
    let _ = seeds.in_text(path, &text, Language::Rust);
    let _ = scan_cpp(&text, rewrites);
    let _ = scan_rust(&text, path);
    let _ = gil_lint::frontend::rust_scan::rust_depth_within_bounds(&text);
});

//! The Rust (PyO3) front-end on arbitrary text: must not panic, overflow the stack or hang.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use gil_lint::frontend::{self, Language};
use gil_lint::knowledge::Knowledge;
use libfuzzer_sys::fuzz_target;

fn knowledge() -> &'static Knowledge {
    static K: OnceLock<Knowledge> = OnceLock::new();
    K.get_or_init(Knowledge::builtin)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = frontend::extract(Language::Rust, Path::new("crate/src/lib.rs"), &text, knowledge());
});

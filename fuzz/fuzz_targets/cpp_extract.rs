//! The C++ pre-pass and front-end on arbitrary text: must not panic, overflow the stack or hang.
#![no_main]

use gil_lint::frontend::cpp;
use gil_lint_fuzz::{knowledge, on_worker};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let k = knowledge();
    let _ = cpp::project_macros(&text, k);
    let cleaned = cpp::neutralise(&text, k);
    assert_eq!(cleaned.len(), text.len(), "the pre-pass keeps every offset");
    let _ = on_worker(|| cpp::extract(&text, k));
});

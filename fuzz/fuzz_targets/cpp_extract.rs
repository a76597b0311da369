//! The C++ pre-pass and front-end on arbitrary text: must not panic, overflow the stack or hang.
#![no_main]

use std::sync::OnceLock;

use gil_lint::frontend::cpp;
use gil_lint::knowledge::Knowledge;
use libfuzzer_sys::fuzz_target;

fn knowledge() -> &'static Knowledge {
    static K: OnceLock<Knowledge> = OnceLock::new();
    K.get_or_init(Knowledge::builtin)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let k = knowledge();
    let _ = cpp::wrapper_macros(&text, k);
    let cleaned = cpp::neutralise(&text, k);
    assert_eq!(cleaned.len(), text.len(), "the pre-pass keeps every offset");
    let _ = cpp::extract(&text, k);
});

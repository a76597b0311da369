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

/// Runs `f` as gil-lint runs a front-end: on a worker thread with the pool's stack size.
fn on_worker<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn_scoped(s, f)
            .expect("a thread can be started")
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = on_worker(|| {
        frontend::extract(Language::Rust, Path::new("crate/src/lib.rs"), &text, knowledge())
    });
});

//! What the fuzz targets share.

use std::sync::OnceLock;

use gil_lint::knowledge::Knowledge;

/// The built-in knowledge, loaded once.
pub fn knowledge() -> &'static Knowledge {
    static K: OnceLock<Knowledge> = OnceLock::new();
    K.get_or_init(Knowledge::builtin)
}

/// Runs `f` as gil-lint runs a front-end: on a worker thread with the pool's stack size.
pub fn on_worker<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn_scoped(s, f)
            .expect("a thread can be started")
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

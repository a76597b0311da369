//! Test hook of the oracle: a plain Rust sleep, no Python.

use std::time::Duration;

/// Sleeps for the number of milliseconds in environment variable `name` (no-op if unset, empty,
/// not a number or not positive). The variants call it at the start of their once-initialiser,
/// before it touches Python (FP8EXT_LAMBDA_DELAY_MS), like the C++ `delay_from_env`.
pub fn delay_from_env(name: &str) {
    let ms = std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
    if ms > 0 {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

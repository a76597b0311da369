//! What the hostile-input tests share: a binding with one finding, and running the built binary
//! under a watchdog. (Each test crate uses part of it.)
#![allow(dead_code)]

use std::process::{Child, ExitStatus, Output};
use std::time::{Duration, Instant};

/// A binding whose callee needs the GIL but is entered without it: one finding.
pub const WITH_FINDING: &str = "#include <pybind11/pybind11.h>\nnamespace py = pybind11;\n\
void f() { py::print(\"x\"); }\n\
PYBIND11_MODULE(m, mod) { mod.def(\"f\", &f, py::call_guard<py::gil_scoped_release>()); }\n";

/// Waits for `child`, killing it and failing the test if it runs past `limit` (a hang).
pub fn wait_with_watchdog(mut child: Child, limit: Duration, what: &str) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{what} hung (killed after {limit:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The exit code; a signal (an abort, a stack overflow) fails the test.
pub fn exit_code(status: ExitStatus, what: &str) -> i32 {
    status
        .code()
        .unwrap_or_else(|| panic!("{what}: killed by a signal: {status:?}"))
}

/// Standard error as `(everything but the summary line, the summary line)`, failing the test on
/// a panic or a stack overflow message.
pub fn split_stderr(stderr: &[u8], what: &str) -> (String, String) {
    let stderr = String::from_utf8_lossy(stderr);
    let (summary, rest): (Vec<&str>, Vec<&str>) =
        stderr.lines().partition(|l| l.starts_with("checked "));
    let rest: String = rest.iter().map(|l| format!("{l}\n")).collect();
    assert!(
        !rest.contains("panicked") && !rest.contains("overflow"),
        "{what}: {rest}"
    );
    (rest, summary.join("\n"))
}

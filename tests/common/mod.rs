//! What the test crates share: the `//~ rule-id` expectation markers of fixture files, a binding
//! with one finding, and running the built binary under a watchdog. (Each test crate uses part of
//! it.)
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
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

/// Findings as `(path, 1-based line, rule)`: what `//~` markers expect, or what a run reports.
pub type Expectation = BTreeSet<(String, usize, String)>;

/// The path with `/` separators, as in an [`Expectation`].
pub fn slash(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// The expectations written in `files`: a finding of each rule named after `//~` on a line
/// (separated by commas or spaces), with its primary location on that line. An unknown rule
/// fails the test.
pub fn expectations(files: &[PathBuf]) -> Expectation {
    let mut expected = BTreeSet::new();
    for file in files {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (i, line) in text.lines().enumerate() {
            let Some((_, rules)) = line.split_once("//~") else {
                continue;
            };
            for rule in rules.split([',', ' ']).filter(|r| !r.is_empty()) {
                assert!(
                    gil_lint::lints::find(rule).is_some(),
                    "{}:{}: unknown rule `{rule}` after `//~`",
                    file.display(),
                    i + 1
                );
                expected.insert((slash(file), i + 1, rule.to_string()));
            }
        }
    }
    expected
}

/// The findings of a run as an [`Expectation`].
pub fn found(
    program: &gil_lint::model::Program,
    findings: &[gil_lint::diagnostic::Finding],
) -> Expectation {
    findings
        .iter()
        .map(|f| {
            let file = program.file(f.primary.file);
            (
                slash(&file.path),
                file.line_col(f.primary.start).0,
                f.rule.to_string(),
            )
        })
        .collect()
}

/// `Err` naming the missing and unexpected findings when `found` is not `expected`.
pub fn compare(name: &str, expected: &Expectation, found: &Expectation) -> Result<(), String> {
    if found == expected {
        return Ok(());
    }
    Err(format!(
        "{name}: missing {:?}, unexpected {:?}",
        expected.difference(found).collect::<Vec<_>>(),
        found.difference(expected).collect::<Vec<_>>()
    ))
}

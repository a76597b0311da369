//! Hostile C++ input for the pre-pass and the scanners, generated here and run through the built
//! binary: each must finish with the right exit code and findings, never a crash. The inputs are
//! sized so that a pass that rescans from each position (quadratic) runs for minutes in a debug
//! build (measured with the pre-pass before the fix: 4 minutes and more), past the watchdog,
//! while the linear passes take a second or two; there is no timing assert, only the watchdog
//! against a hang.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;

use common::{WITH_FINDING, exit_code, split_stderr, wait_with_watchdog};

struct Run {
    code: i32,
    stderr: String,
    /// `checked N files in ...: ...`.
    summary: String,
}

/// Writes `text` to `name` in a new directory and runs `gil-lint check name` there.
fn check_text(name: &str, text: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    check(dir.path(), name)
}

fn check(dir: &Path, name: &str) -> Run {
    let child = Command::new(env!("CARGO_BIN_EXE_gil-lint"))
        .args(["check", name])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let Output { status, stderr, .. } = wait_with_watchdog(
        child,
        Duration::from_secs(120),
        &format!("gil-lint check {name}"),
    );
    let (stderr, summary) = split_stderr(&stderr, name);
    Run {
        code: exit_code(status, name),
        stderr,
        summary,
    }
}

impl Run {
    /// One file checked, with `findings` findings and the matching exit code.
    fn assert_findings(&self, name: &str, findings: usize) {
        let found = match findings {
            0 => ": no findings".to_string(),
            1 => ": 1 finding".to_string(),
            n => format!(": {n} findings"),
        };
        assert!(
            self.summary.starts_with("checked 1 file in ") && self.summary.contains(&found),
            "{name}: expected `checked 1 file in ...{found}`, got `{}`\n{}",
            self.summary,
            self.stderr
        );
        assert_eq!(
            self.code,
            i32::from(findings > 0),
            "{name}: {}",
            self.stderr
        );
    }
}

/// `WITH_FINDING` followed by `body`: the binding makes the pre-filter keep the file, and its one
/// finding shows that the file was read to the end of the binding whatever follows.
fn after_binding(body: String) -> String {
    format!("{WITH_FINDING}{body}")
}

/// Words made of `len` upper-case letters (`AAA AAB ...`), `count` of them on one line.
fn upper_case_words(len: usize, count: usize, underscore: bool) -> String {
    let mut line = String::with_capacity(count * (len + 2));
    for i in 0..count {
        let mut n = i;
        for position in 0..len {
            if underscore && position == len - 1 {
                line.push('_');
            }
            line.push(char::from(b'A' + (n % 26) as u8));
            n /= 26;
        }
        line.push(' ');
    }
    line.push('\n');
    line
}

#[test]
fn deeply_nested_calls() {
    // The 200,000 nested calls (600 KB): the pre-pass searched each call's closing
    // parenthesis from its own `(` (64 s in the issue, 100 s here in release).
    let n = 200_000;
    let text = after_binding(format!(
        "void g() {{ x = {}0{}; }}\n",
        "h(".repeat(n),
        ")".repeat(n)
    ));
    check_text("nested.cpp", &text).assert_findings("nested.cpp", 1);
}

#[test]
fn nested_macro_calls() {
    let n = 50_000;
    let cases = [
        // A blanked macro inside itself: each one blanked its whole call again.
        (
            "blank.cpp",
            format!("{}x{}\n", "PYBIND11_NOINLINE(".repeat(n), ")".repeat(n)),
        ),
        // A rewritten macro whose argument spans lines is left alone, and so is every one inside.
        (
            "rewrite.cpp",
            format!(
                "{}x{}\n",
                "PYBIND11_NAMESPACE_BEGIN(\n".repeat(n),
                ")\n".repeat(n)
            ),
        ),
        // Macros standing alone on their lines, nested.
        (
            "standalone.cpp",
            format!("{}x{}\n", "MY_DECLARE(\n".repeat(n), "\n)".repeat(n)),
        ),
        // Never closed.
        ("unclosed.cpp", "NAMESPACE_BEGIN(".repeat(n)),
    ];
    for (name, body) in cases {
        check_text(name, &after_binding(body)).assert_findings(name, 1);
    }
}

#[test]
fn a_long_line_of_upper_case_identifiers() {
    // Half a megabyte on one line. Spelled as macros (`AB_C`), each identifier was checked for
    // standing alone by searching back to the start of its line and forward to its end.
    for (name, underscore) in [("upper.cpp", false), ("macros.cpp", true)] {
        let text = after_binding(upper_case_words(3, 120_000, underscore));
        check_text(name, &text).assert_findings(name, 1);
    }
}

#[test]
fn identifiers_ending_in_r_before_a_string() {
    // `xR""` on 150,000 lines (750 KB): each `R"` searched the rest of the file for the `(` of a
    // raw string delimiter (the 1.2 MB took 69 s).
    let text = after_binding("xR\"\"\n".repeat(150_000));
    check_text("raw.cpp", &text).assert_findings("raw.cpp", 1);
    // `R"` really opening raw strings, and one never closed.
    let text = after_binding(format!(
        "{}R\"(\n",
        "auto s = R\"x(\n#if 0\n)x\";\n".repeat(20_000)
    ));
    check_text("raw_open.cpp", &text).assert_findings("raw_open.cpp", 1);
}

#[test]
fn an_unterminated_comment_full_of_comment_openers() {
    // tree-sitter tries to end the comment again from every `/*` inside it (50 KB took 2.4 s in
    // release); the pre-pass blanks a comment that is never closed.
    let text = after_binding(format!("/*{}", "x /* ".repeat(100_000)));
    check_text("comment.cpp", &text).assert_findings("comment.cpp", 1);
}

#[test]
fn many_conditionals() {
    let n = 100_000;
    let cases = [
        ("open.cpp", "#if 1\n".repeat(n)),
        (
            "closed.cpp",
            "#ifdef X\nint a;\n#else\nint b;\n#endif\n".repeat(n / 4),
        ),
        (
            "comments.cpp",
            "#if 0 /*\n#endif */\nint a;\n#endif\n".repeat(n / 4),
        ),
    ];
    for (name, body) in cases {
        check_text(name, &after_binding(body)).assert_findings(name, 1);
    }
}

#[test]
fn a_directive_inside_a_comment_does_not_hide_the_binding() {
    // A directive is read after comments are removed: a `#endif` inside a comment does not count,
    // and `#if 0 /* ... */ #endif` on one line is an `#if` whose condition is not `0` (the
    // compiler rejects it; gil-lint keeps the first arm of a condition it cannot decide).
    let cases = [
        ("one_line.cpp", "#if 0 /* #endif */ #endif\n"),
        ("comment_line.cpp", "#if 0\n/* #endif */\n#endif\n"),
        ("commented_if.cpp", "/*\n#if 0\n*/\n"),
        ("spanning.cpp", "#if 0 /*\n#endif */\n#endif\n"),
        ("line_comment.cpp", "#if 0 // \\\n#endif\n#endif\n"),
        ("raw_string.cpp", "const char* s = R\"(\n#if 0\n)\";\n"),
    ];
    for (name, prefix) in cases {
        let run = check_text(name, &format!("{prefix}{WITH_FINDING}"));
        run.assert_findings(name, 1);
    }
    // What a comment continues stays in its directive: the binding is in the `#if 0` arm.
    let name = "hidden.cpp";
    let run = check_text(
        name,
        &format!("#if 0 /*\n#endif */\n{WITH_FINDING}#endif\n"),
    );
    run.assert_findings(name, 0);
    // An `#else` inside the comment does not switch to the other arm.
    let name = "else.cpp";
    let run = check_text(
        name,
        &format!("#ifndef GUARD /*\n#else */\n{WITH_FINDING}#else\nint x;\n#endif\n"),
    );
    run.assert_findings(name, 1);
}

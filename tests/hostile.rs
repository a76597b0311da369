//! Hostile input, run through the built binary: each case gives one line naming the file and the
//! right exit code (0 clean, 1 findings, 2 nothing readable or a bad argument), never a crash, a
//! hang or a stack overflow, and gil-lint never writes inside the checked tree.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

mod common;

use common::{WITH_FINDING, exit_code, split_stderr, wait_with_watchdog};

/// Everything under `root` (not following symbolic links): kind, size, modification time and
/// contents, to show that a run changed nothing.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            out.insert(dir, "unreadable directory".to_string());
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let kind = if meta.is_symlink() {
                format!("link to {:?}", std::fs::read_link(&path).unwrap())
            } else if meta.is_dir() {
                stack.push(path.clone());
                "dir".to_string()
            } else if !meta.is_file() {
                // A FIFO would block a read.
                format!("special file {:?}", meta.file_type())
            } else {
                let contents = std::fs::read(&path).map(|b| {
                    b.iter().fold(0xcbf29ce484222325u64, |h, &x| {
                        (h ^ x as u64).wrapping_mul(0x100000001b3)
                    })
                });
                format!("file {} bytes {contents:?}", meta.len())
            };
            out.insert(
                path,
                format!("{kind} modified {:?}", meta.modified().unwrap()),
            );
        }
    }
    out
}

struct Run {
    code: i32,
    stdout: String,
    /// Everything on stderr but the summary line.
    stderr: String,
    /// `checked N files in ...: ...`.
    summary: String,
}

impl Run {
    /// The summary says `files` files were checked and gives `findings` findings.
    fn assert_summary(&self, files: usize, findings: usize) {
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let checked = format!("checked {} in ", plural(files, "file"));
        let found = if findings == 0 {
            ": no findings".to_string()
        } else {
            format!(": {}", plural(findings, "finding"))
        };
        assert!(
            self.summary.starts_with(&checked) && self.summary.contains(&found),
            "expected `{checked}...{found}`, got `{}`",
            self.summary
        );
    }
}

/// Runs `gil-lint check ARGS` in `dir`, with a watchdog against hangs, and checks that nothing
/// under `dir` changed.
fn check<A: AsRef<OsStr> + std::fmt::Debug>(dir: &Path, args: &[A]) -> Run {
    check_as(&[], dir, args)
}

/// [`check`] through a command prefix (`setpriv ...` to run unprivileged).
fn check_as<A: AsRef<OsStr> + std::fmt::Debug>(prefix: &[&str], dir: &Path, args: &[A]) -> Run {
    let before = snapshot(dir);
    // The cache outside the tree, which must not change; hostile files go through it too.
    let cache = tempfile::tempdir().unwrap();
    // Writable by the unprivileged user of `setpriv`.
    std::fs::set_permissions(
        cache.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let mut command = match prefix.split_first() {
        Some((program, rest)) => {
            let mut c = Command::new(program);
            c.args(rest).arg(env!("CARGO_BIN_EXE_gil-lint"));
            c
        }
        None => Command::new(env!("CARGO_BIN_EXE_gil-lint")),
    };
    let child = command
        .arg("check")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("GIL_LINT_CACHE_DIR", cache.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let what = format!("gil-lint check {args:?}");
    let Output {
        status,
        stdout,
        stderr,
    } = wait_with_watchdog(child, Duration::from_secs(300), &what);
    assert_eq!(snapshot(dir), before, "{what} changed the tree");
    let (stderr, summary) = split_stderr(&stderr, &what);
    Run {
        code: exit_code(status, &what),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr,
        summary,
    }
}

fn tree(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, contents) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    dir
}

/// The stderr lines, asserting each names `file`.
fn warnings_naming(run: &Run, file: &str) -> Vec<String> {
    let lines: Vec<String> = run.stderr.lines().map(str::to_string).collect();
    for line in &lines {
        assert!(
            line.contains(file) || line == "error: no file could be read",
            "`{line}` does not name {file}"
        );
    }
    lines
}

#[test]
fn a_binary_file_is_skipped_with_one_line() {
    let mut binary: Vec<u8> = b"\x7fELF\x02\x01\x01\x00".to_vec();
    binary.extend((0..4096u32).map(|i| (i * 37 % 256) as u8));
    let ascii_with_nul = b"int x;\0\0\0int y;\n";
    let dir = tree(&[
        ("ok.cpp", WITH_FINDING.as_bytes()),
        ("blob.cpp", &binary),
        ("nul.h", ascii_with_nul),
    ]);
    let run = check(dir.path(), &["."]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    run.assert_summary(1, 1);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert!(
        lines[0].starts_with("warning: ./blob.cpp: binary file"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("warning: ./nul.h: binary file"),
        "{}",
        lines[1]
    );

    let run = check(dir.path(), &["blob.cpp"]);
    assert_eq!(run.code, 2);
    assert_eq!(warnings_naming(&run, "blob.cpp").len(), 2, "{}", run.stderr);
}

#[test]
fn latin1_source_is_read_not_skipped() {
    // Compilers accept Latin-1 bytes in comments and strings: such a file is read, with its
    // finding (a file with a NUL byte is binary, above).
    let latin1 = WITH_FINDING.replace("void f()", "// caf\u{e9}\nvoid f()");
    let latin1: Vec<u8> = latin1.chars().map(|c| c as u8).collect();
    let dir = tree(&[("latin1.cpp", &latin1)]);
    let run = check(dir.path(), &["."]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr, "");
}

#[test]
fn a_ten_megabyte_line() {
    let filler = "x".repeat(10 << 20);
    // A finding on the long line itself, and a long line of code that matters.
    let on_the_line = format!(
        "#include <pybind11/pybind11.h>\nnamespace py = pybind11;\nvoid f() {{ py::print(\"{filler}\"); }}\n\
         PYBIND11_MODULE(m, mod) {{ mod.def(\"f\", &f, py::call_guard<py::gil_scoped_release>()); }}\n"
    );
    let code: String = (0..400_000).map(|i| format!("int v{i} = {i};")).collect();
    let dir = tree(&[
        ("long.cpp", on_the_line.as_bytes()),
        (
            "code.cpp",
            format!("PYBIND11_MODULE(n, mod) {{}} {code}\n").as_bytes(),
        ),
        ("comment.h", format!("// {filler}").as_bytes()),
    ]);
    // Over the default size limit: skipped, one line each.
    let run = check(dir.path(), &["."]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let mut lines: Vec<&str> = run.stderr.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "error: no file could be read",
            "warning: ./code.cpp: larger than 4 MiB (max-file-size), skipped",
            "warning: ./comment.h: larger than 4 MiB (max-file-size), skipped",
            "warning: ./long.cpp: larger than 4 MiB (max-file-size), skipped",
        ]
    );
    let run = check(
        dir.path(),
        &[".", "--format", "json", "--max-file-size", "32MiB"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert!(
        run.stdout.contains("\"files_scanned\": 3"),
        "{}",
        &run.stdout[..run.stdout.len().min(2000)]
    );
    let run = check(
        dir.path(),
        &[
            "code.cpp",
            "comment.h",
            "--no-prefilter",
            "--max-file-size=32M",
        ],
    );
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    run.assert_summary(2, 0);
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let n = 10_000;
    let open = |s: &str| s.repeat(n);
    let module = "PYBIND11_MODULE(m, mod) { mod.def(\"f\", &f); }\n";
    let cases = [
        (
            "braces.cpp",
            format!("void f() {}{}\n{module}", open("{"), open("}")),
        ),
        (
            "parens.cpp",
            format!("int x = {}1{};\n{module}", open("("), open(")")),
        ),
        (
            "calls.cpp",
            format!("void f() {{ {}{}; }}\n{module}", open("g("), open(")")),
        ),
        (
            "brackets.cpp",
            format!("void f() {{ a{}0{}; }}\n{module}", open("["), open("]")),
        ),
        (
            "declarator.cpp",
            format!("void {}f{}() {{}}\n{module}", open("("), open(")")),
        ),
        (
            "lambdas.cpp",
            format!(
                "void f() {{ {}0{}; }}\n{module}",
                open("[]{ return "),
                open(";}()")
            ),
        ),
        (
            "namespaces.cpp",
            format!("{}{}\n{module}", open("namespace a { "), open("}")),
        ),
        (
            "classes.cpp",
            format!("{}{}\n{module}", open("struct A { "), open("};")),
        ),
        (
            "ifdefs.cpp",
            format!(
                "{}void f() {{}}\n{}{module}",
                open("#ifdef A\n"),
                open("#endif\n")
            ),
        ),
        (
            "unclosed.cpp",
            format!("void f() {}\n{module}", open("{ (")),
        ),
    ];
    check_each(&cases, &[], |name, run| {
        assert!(run.code <= 1, "{name}: exit {}\n{}", run.code, run.stderr);
        assert_eq!(run.stderr, "", "{name}");
        assert!(
            run.summary.starts_with("checked 1 file in "),
            "{name}: {}",
            run.summary
        );
    });
}

/// Checks each case file (beside `others`), with and without the pre-filter.
fn check_each(cases: &[(&str, String)], others: &[(&str, &[u8])], assert: impl Fn(&str, Run)) {
    let mut files: Vec<(&str, &[u8])> = cases.iter().map(|(n, t)| (*n, t.as_bytes())).collect();
    files.extend_from_slice(others);
    let dir = tree(&files);
    for (name, _) in cases {
        for extra in [None, Some("--no-prefilter")] {
            let args: Vec<&str> = others
                .iter()
                .map(|(n, _)| *n)
                .chain([*name])
                .chain(extra)
                .collect();
            assert(name, check(dir.path(), &args));
        }
    }
}

/// The Rust front-end parses and walks recursively: what is nested too deeply for it is skipped
/// with one line, as is a run of thousands of operators, calls or closures with no separator.
#[test]
fn deep_rust_nesting_is_skipped_with_one_line() {
    let n = 10_000;
    let open = |s: &str| s.repeat(n);
    let binding = "#[pyfunction]\nfn f() {}\n";
    let cases = [
        (
            "braces.rs",
            format!("{binding}fn g() {}{}\n", open("{"), open("}")),
        ),
        (
            "parens.rs",
            format!(
                "{binding}fn g() {{ let x = {}1{}; }}\n",
                open("("),
                open(")")
            ),
        ),
        (
            "calls.rs",
            format!("{binding}fn g() {{ {}{}; }}\n", open("h("), open(")")),
        ),
        (
            "modules.rs",
            format!("{binding}{}{}\n", open("mod a { "), open("}")),
        ),
        ("unclosed.rs", format!("{binding}fn g() {}\n", open("{ ("))),
        (
            "unary.rs",
            format!("{binding}fn g() {{ let y = {}x; }}\n", open("-")),
        ),
        (
            "chain.rs",
            format!("{binding}fn g() {{ x{}; }}\n", open(".a()")),
        ),
        (
            "closures.rs",
            format!("{binding}fn g() {{ let c = {}1; }}\n", open("|| ")),
        ),
        (
            "types.rs",
            format!("{binding}type T = {}u8{};\n", open("Vec<"), open(">")),
        ),
    ];
    check_each(
        &cases,
        &[("ok.cpp", WITH_FINDING.as_bytes())],
        |name, run| {
            assert_eq!(run.code, 1, "{name}: {}", run.stderr);
            assert_eq!(run.stderr.lines().count(), 1, "{name}: {}", run.stderr);
            assert!(
                run.stderr.starts_with(&format!("warning: {name}: "))
                    && run.stderr.trim_end().ends_with("skipped"),
                "{name}: {}",
                run.stderr
            );
            run.assert_summary(1, 1);
        },
    );
}

#[cfg(unix)]
#[test]
fn symbolic_link_loops_are_not_followed() {
    let dir = tree(&[("src/ok.cpp", WITH_FINDING.as_bytes())]);
    let src = dir.path().join("src");
    std::os::unix::fs::symlink("self.cpp", src.join("self.cpp")).unwrap();
    std::os::unix::fs::symlink("b.h", src.join("a.h")).unwrap();
    std::os::unix::fs::symlink("a.h", src.join("b.h")).unwrap();
    std::os::unix::fs::symlink("..", src.join("parent")).unwrap();
    let run = check(dir.path(), &["."]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    run.assert_summary(1, 1);

    // Named on the command line, a loop is a path that cannot be opened, and says why.
    let run = check(dir.path(), &["src/self.cpp"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "error: src/self.cpp: too many levels of symbolic links\n"
    );
}

/// `chmod 000` does not stop a privileged user (root in a container) from reading. Then the
/// binary is run as `nobody` through `setpriv` when it exists; otherwise the case cannot be made
/// here, and the test says so rather than pretend. Returns the command prefix to run with.
#[cfg(unix)]
fn unprivileged(dir: &Path, probe: &Path) -> Option<Vec<&'static str>> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(probe, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readable = std::fs::read(probe).is_ok();
    std::fs::set_permissions(probe, std::fs::Permissions::from_mode(0o644)).unwrap();
    if !readable {
        return Some(Vec::new());
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(setpriv) = setpriv else {
        eprintln!("skipped: chmod 000 does not stop this user (root?) and there is no setpriv");
        return None;
    };
    // `nobody` must reach the tree and the binary.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let prefix = vec![setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"];
    let probe_run = Command::new(prefix[0])
        .args(&prefix[1..])
        .arg(env!("CARGO_BIN_EXE_gil-lint"))
        .arg("--version")
        .output();
    if !probe_run.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: running as root, and the binary cannot be run as nobody");
        return None;
    }
    Some(prefix)
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_gives_one_line() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tree(&[
        ("ok.cpp", WITH_FINDING.as_bytes()),
        ("secret.cpp", b"int x;\n"),
        ("locked/inner.cpp", b"int y;\n"),
    ]);
    let secret = dir.path().join("secret.cpp");
    let Some(prefix) = unprivileged(dir.path(), &secret) else {
        return;
    };
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let run = check_as(&prefix, dir.path(), &["."]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "warning: ./secret.cpp: cannot read: Permission denied (os error 13)\n"
    );
    let run = check_as(&prefix, dir.path(), &["secret.cpp"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        warnings_naming(&run, "secret.cpp").len(),
        2,
        "{}",
        run.stderr
    );
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();

    let locked = dir.path().join("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let run = check_as(&prefix, dir.path(), &["."]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("./locked") && run.stderr.contains("Permission denied"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

/// A file found by the walk and removed before it is read: the read error path.
#[test]
fn a_file_removed_mid_run_gives_one_line() {
    let dir = tree(&[
        ("ok.cpp", WITH_FINDING.as_bytes()),
        ("gone.cpp", b"int x;\n"),
    ]);
    let found = gil_lint::discover::discover(
        &[dir.path().to_path_buf()],
        &gil_lint::discover::exclude_set(&[]).unwrap(),
    );
    assert_eq!(found.files.len(), 2);
    std::fs::remove_file(dir.path().join("gone.cpp")).unwrap();
    let knowledge = gil_lint::knowledge::Knowledge::builtin();
    for prefilter in [true, false] {
        let options = gil_lint::Options {
            prefilter,
            ..Default::default()
        };
        let analysis = gil_lint::analyse_files_opts(&found.files, &knowledge, &|_| {}, options);
        assert_eq!(analysis.findings.len(), 1);
        assert_eq!(analysis.errors.len(), 1, "{:?}", analysis.errors);
        let error = &analysis.errors[0];
        assert!(
            error.contains("gone.cpp: cannot read: No such file or directory")
                && !error.contains('\n'),
            "{error}"
        );
    }
}

#[test]
fn an_empty_directory_is_clean_with_a_warning() {
    let dir = tree(&[
        ("src/ok.cpp", WITH_FINDING.as_bytes()),
        ("docs/README.md", b""),
    ]);
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let run = check(dir.path(), &["empty"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stderr,
        "warning: empty: no C, C++, CUDA or Rust files found\n"
    );
    assert_eq!(run.stdout, "");
    run.assert_summary(0, 0);
    // Only the paths without such files are named.
    let run = check(dir.path(), &["src", "docs"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "warning: docs: no C, C++, CUDA or Rust files found\n"
    );
}

#[test]
fn a_finding_on_a_huge_line_prints_only_around_it() {
    let filler = "int a = 1; ".repeat(200_000);
    let text = WITH_FINDING.replacen(
        "py::print(\"x\");",
        &format!("{filler} py::print(\"x\"); {filler}"),
        1,
    );
    let dir = tree(&[("long.cpp", text.as_bytes())]);
    let run = check(dir.path(), &["long.cpp", "--max-file-size", "8MiB"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.len() < 10_000,
        "{} bytes of output",
        run.stdout.len()
    );
    assert!(run.stdout.contains("…"), "{}", run.stdout);
}

#[test]
fn a_nonexistent_path_is_a_usage_error() {
    let dir = tree(&[("ok.cpp", WITH_FINDING.as_bytes())]);
    let run = check(dir.path(), &["ok.cpp", "missing/nope.cpp"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "error: missing/nope.cpp: no such file or directory\n"
    );
    assert_eq!(run.stdout, "");
}

#[cfg(unix)]
#[test]
fn a_control_character_in_a_file_name_stays_on_one_line() {
    let dir = tree(&[
        ("ok.cpp", WITH_FINDING.as_bytes()),
        ("bad\nname.cpp", b"\0\n"),
    ]);
    let run = check(dir.path(), &["."]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "warning: ./bad\\nname.cpp: binary file (NUL byte 0), skipped\n"
    );
}

/// A PyO3 binding whose detached closure uses the C API: one finding, on line 5.
const RUST_WITH_FINDING: &str = "use pyo3::ffi;\nuse pyo3::prelude::*;\n#[pyfunction]\n\
fn bump(py: Python<'_>) {\n    py.detach(|| unsafe { ffi::Py_IncRef(std::ptr::null_mut()); });\n}\n";

/// `(line, column)` of each finding's primary location in a JSON report.
fn positions(run: &Run) -> Vec<(u64, u64)> {
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["line"].as_u64().unwrap(), f["column"].as_u64().unwrap()))
        .collect()
}

/// A byte order mark, a `#!` line and every kind of line ending leave lines and columns where an
/// editor puts them, in every format (JSON here; the human output reads the same line map).
#[test]
fn positions_survive_byte_order_marks_shebangs_and_line_endings() {
    let plain_cpp = WITH_FINDING.replace("void f() { py::print", "void f() {\n  py::print");
    let cases: Vec<(&str, String, i64)> = vec![
        ("plain.rs", RUST_WITH_FINDING.to_string(), 0),
        ("bom.rs", format!("\u{feff}{RUST_WITH_FINDING}"), 0),
        (
            "shebang.rs",
            format!("#!/usr/bin/env run-cargo-script\n{RUST_WITH_FINDING}"),
            1,
        ),
        (
            "bom_shebang.rs",
            format!("\u{feff}#!x\r\n{RUST_WITH_FINDING}"),
            1,
        ),
        ("plain.cpp", plain_cpp.clone(), 0),
        ("bom.cpp", format!("\u{feff}{plain_cpp}"), 0),
        ("crlf.cpp", plain_cpp.replace('\n', "\r\n"), 0),
        ("cr.cpp", plain_cpp.replace('\n', "\r"), 0),
    ];
    let expected = |name: &str| {
        let plain = if name.ends_with(".rs") {
            "plain.rs"
        } else {
            "plain.cpp"
        };
        let (_, text, _) = cases.iter().find(|c| c.0 == plain).unwrap();
        let dir = tree(&[(plain, text.as_bytes())]);
        positions(&check(dir.path(), &[plain, "--format", "json"]))
    };
    let (rust, cpp) = (expected("x.rs"), expected("x.cpp"));
    assert_eq!(rust, [(5, 27)]);
    assert_eq!(cpp, [(4, 3)]);
    for (name, text, shift) in &cases {
        let dir = tree(&[(name, text.as_bytes())]);
        let run = check(dir.path(), &[name, "--format", "json"]);
        let want: Vec<(u64, u64)> = if name.ends_with(".rs") { &rust } else { &cpp }
            .iter()
            .map(|&(line, column)| ((line as i64 + shift) as u64, column))
            .collect();
        assert_eq!(positions(&run), want, "{name}: {}", run.stderr);
        // The human output points at the same line.
        let human = check(dir.path(), &[name]);
        let (line, column) = want[0];
        assert!(
            human.stdout.contains(&format!("{name}:{line}:{column}")),
            "{name}: {}",
            human.stdout
        );
    }
}

/// The issue's reproducer: unary operators nested across brackets once aborted the whole run.
/// Now that file gets one line and the other files' findings stand.
#[test]
fn nesting_across_brackets_is_one_line_not_an_abort() {
    let deep = format!(
        "#[pyfunction]\nfn f() {{}}\nfn g() {{ let x = {}1{}; }}\n",
        format!("{}(", "-".repeat(4000)).repeat(14),
        ")".repeat(14)
    );
    let dir = tree(&[
        ("so.rs", deep.as_bytes()),
        ("ok.cpp", WITH_FINDING.as_bytes()),
    ]);
    let run = check(dir.path(), &["."]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning: ./so.rs: nested more than 8192 levels deep (line 3), skipped\n"
    );
    run.assert_summary(1, 1);
}

#[cfg(unix)]
#[test]
fn a_fifo_named_on_the_command_line_is_an_error_not_a_clean_run() {
    let dir = tree(&[("ok.cpp", WITH_FINDING.as_bytes())]);
    let made = Command::new("mkfifo")
        .arg(dir.path().join("pipe.cpp"))
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let run = check(dir.path(), &["pipe.cpp"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "warning: pipe.cpp: not a regular file (a FIFO)\nerror: no file could be read\n"
    );
    // In a walked directory it is passed over, as ripgrep does.
    let run = check(dir.path(), &["."]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""));
}

#[cfg(unix)]
#[test]
fn a_path_argument_that_is_not_utf8_is_read_in_every_format() {
    use std::os::unix::ffi::OsStrExt;
    let folder = OsStr::from_bytes(b"csrc \xff");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(folder)).unwrap();
    std::fs::write(dir.path().join(folder).join("ok.cpp"), WITH_FINDING).unwrap();
    for format in ["human", "json", "sarif", "github", "junit"] {
        let run = check(
            dir.path(),
            &[folder, OsStr::new("--format"), OsStr::new(format)],
        );
        assert_eq!(run.code, 1, "--format {format}: {}", run.stderr);
    }
    // The SARIF command line can be pasted into a shell: the space is quoted.
    let run = check(
        dir.path(),
        &[folder, OsStr::new("--format"), OsStr::new("sarif")],
    );
    let log: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        log["runs"][0]["invocations"][0]["commandLine"],
        "gil-lint check 'csrc \u{fffd}' --format sarif"
    );
}

#[test]
fn too_many_threads_is_a_usage_error() {
    let dir = tree(&[("ok.cpp", WITH_FINDING.as_bytes())]);
    for threads in ["0", "257", "99999"] {
        let run = check(dir.path(), &[".", "--threads", threads]);
        assert_eq!(run.code, 2, "--threads {threads}");
        assert!(run.stderr.contains("not in 1..=256"), "{}", run.stderr);
    }
    assert_eq!(check(dir.path(), &[".", "--threads", "256"]).code, 1);
}

/// `gil-lint ... | head`: the reader closes the pipe before the report ends. Ends quietly, as
/// ripgrep and ruff do; with standard error closed too, still no panic.
#[cfg(unix)]
#[test]
fn closed_output_streams_end_quietly() {
    let findings: String = (0..200)
        .map(|i| {
            WITH_FINDING
                .replace("void f()", &format!("void f{i}()"))
                .replace("&f,", &format!("&f{i},"))
        })
        .collect();
    let dir = tree(&[("many.cpp", findings.as_bytes())]);
    for (format, stderr_closed) in [("human", false), ("json", false), ("human", true)] {
        let script = format!(
            "\"$0\" check --format {format} many.cpp {} | head -c 10 > /dev/null; echo \"${{PIPESTATUS[0]}}\"",
            if stderr_closed {
                "2>&-"
            } else {
                "2>stderr.txt"
            }
        );
        let out = Command::new("bash")
            .args(["-c", &script, env!("CARGO_BIN_EXE_gil-lint")])
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let code = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert_eq!(code, "0", "{format}, stderr closed: {stderr_closed}");
        if !stderr_closed {
            let stderr = std::fs::read_to_string(dir.path().join("stderr.txt")).unwrap();
            assert_eq!(stderr, "", "{format}");
        }
    }
}

/// tree-sitter's memory grows with the `<` of one C++ statement (about 5 KB each): a flood of them
/// in one statement is refused with one line; as many spread over statements are modelled.
#[test]
fn a_flood_of_angle_brackets_in_one_statement_is_one_line() {
    let n = 100_000;
    let flood = format!("int x = {}1;\n", "a < ".repeat(n));
    let nested = format!("{}int{} x;\n", "A<".repeat(n), ">".repeat(n));
    let spread = format!(
        "{WITH_FINDING}{}",
        "std::vector<std::map<int, A<B>>> v;\n".repeat(n / 4)
    );
    let dir = tree(&[
        ("flood.cpp", flood.as_bytes()),
        ("nested.h", nested.as_bytes()),
        ("spread.cpp", spread.as_bytes()),
    ]);
    let run = check(dir.path(), &[".", "--no-prefilter"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning: ./flood.cpp: more than 2048 `<` in one statement (line 1), skipped\n\
         warning: ./nested.h: more than 2048 `<` in one statement (line 1), skipped\n"
    );
    run.assert_summary(1, 1);
}

/// Found by `cpp_structured`: a long run of prefix operators before garbage made tree-sitter's
/// error recovery quadratic (8,192 `*` then 4,096 `'c'` took minutes). Refused with one line; the
/// budget of parse operations in `cpp::parse` stops what the bound does not foresee.
#[test]
fn a_run_of_prefix_operators_is_one_line() {
    let stars = format!("{}{}\n", "*".repeat(8192), "'c'".repeat(4096));
    let dir = tree(&[
        ("stars.cpp", stars.as_bytes()),
        ("ok.cpp", WITH_FINDING.as_bytes()),
    ]);
    let run = check(dir.path(), &[".", "--no-prefilter"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning: ./stars.cpp: more than 64 prefix operators in a row (line 1), skipped\n"
    );
    // Real expressions are not runs: an operand (a literal too) ends one.
    let products = format!(
        "{WITH_FINDING}int x = {}1;\nint y = {}2;\n",
        "a * ".repeat(5000),
        "1 * -".repeat(5000)
    );
    let dir = tree(&[("products.cpp", products.as_bytes())]);
    let run = check(dir.path(), &["."]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""));
}

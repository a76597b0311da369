//! The command-line habits users bring from ruff and clippy: `--statistics`, `--show-settings`,
//! `--exit-zero`, `--color`, `-` with `--stdin-filename`, "did you mean" on a mistyped rule, a
//! PATH outside `--project`, and source files that are not UTF-8.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SEED: &str = "fixtures/seed_call_once_import";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The binary in `dir`, with no colour setting inherited from the environment, `input` on its
/// standard input.
fn run_with(dir: &Path, args: &[&str], env: &[(&str, &str)], input: &[u8]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gil-lint"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    // A run that fails before reading its input closes the pipe: not the test's concern.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

fn gil_lint(dir: &Path, args: &[&str]) -> Output {
    run_with(dir, args, &[], b"")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| panic!("{e}: {}", stdout(output)))
}

/// `(rule, path, line, column)` of each finding of a `--format json` run.
fn findings(output: &Output) -> Vec<(String, String, u64, u64)> {
    json(output)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// A copy of the seed fixture in a temporary directory, under `project/`.
fn seed_project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    for entry in std::fs::read_dir(repo().join(SEED)).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, project.join(path.file_name().unwrap())).unwrap();
    }
    (dir, project)
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn statistics_count_findings_per_rule() {
    let output = gil_lint(&repo(), &["check", "--statistics", "-q", SEED]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    snapshot("cli-statistics", &stdout(&output));
    let output = gil_lint(
        &repo(),
        &[
            "check",
            "--statistics",
            "--format=json",
            "fixtures/mutex_inversion",
        ],
    );
    let rows = json(&output);
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r["count"].as_u64() >= Some(1) && r["summary"] != "")
    );
    // Most first.
    let counts: Vec<u64> = rows.iter().map(|r| r["count"].as_u64().unwrap()).collect();
    assert!(counts.is_sorted_by(|a, b| a >= b), "{counts:?}");
    // Nothing found: no rows, exit 0.
    let clean = gil_lint(&repo(), &["check", "--statistics", "fixtures/no_python"]);
    assert_eq!(
        (clean.status.code(), stdout(&clean).as_str()),
        (Some(0), "")
    );
    // To a file, as the report would be.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stats.txt");
    let output = gil_lint(
        &repo(),
        &[
            "check",
            "--statistics",
            "-q",
            "-o",
            file.to_str().unwrap(),
            SEED,
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(file).unwrap(),
        stdout(&gil_lint(&repo(), &["check", "--statistics", "-q", SEED]))
    );
}

#[test]
fn exit_zero_reports_findings_but_succeeds() {
    let output = gil_lint(&repo(), &["check", "--exit-zero", "--format=json", SEED]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(findings(&output).len(), 2);
    // An error is still an error.
    let output = gil_lint(&repo(), &["check", "--exit-zero", "no/such/dir"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn color_follows_the_flag_then_the_environment() {
    let coloured = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["check", "-q", SEED];
        all.extend(args);
        let output = run_with(&repo(), &all, env, b"");
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        stdout(&output).contains('\x1b')
    };
    // Piped: plain unless asked.
    assert!(!coloured(&[], &[]));
    assert!(!coloured(&["--color=auto"], &[]));
    assert!(!coloured(&["--color=never"], &[("CLICOLOR_FORCE", "1")]));
    assert!(coloured(&["--color=always"], &[]));
    assert!(coloured(&["--color=always"], &[("NO_COLOR", "1")]));
    // CI logs: CLICOLOR_FORCE colours a pipe; NO_COLOR wins over it.
    assert!(coloured(&[], &[("CLICOLOR_FORCE", "1")]));
    assert!(!coloured(
        &[],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]
    ));
    // The colours are codespan's, around the same text.
    let plain = stdout(&gil_lint(&repo(), &["check", "-q", SEED]));
    let always = stdout(&gil_lint(&repo(), &["check", "-q", "--color=always", SEED]));
    let stripped = String::from_utf8(anstream::adapter::strip_bytes(always.as_bytes()).into_vec());
    assert_eq!(stripped.unwrap(), plain);
}

#[test]
fn show_settings_says_which_file_won_and_where_it_looked() {
    let (dir, project) = seed_project();
    std::fs::create_dir(project.join("sub")).unwrap();
    // A pyproject.toml without a [tool.gil-lint] table is passed over.
    std::fs::write(
        project.join("sub/pyproject.toml"),
        "[project]\nname = \"x\"\n",
    )
    .unwrap();
    std::fs::write(
        project.join("gil-lint.toml"),
        "ignore = [\"gil-held-blocking\"]\nexclude = [\"build\"]\n[severity]\nmissing-gil = \"warning\"\n",
    )
    .unwrap();
    let output = gil_lint(
        &project.join("sub"),
        &[
            "check",
            "--show-settings",
            "--exclude",
            "gen/**",
            "--min-confidence=high",
            ".",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let shown = stdout(&output).replace(root.to_str().unwrap(), "[TMP]");
    snapshot("cli-show-settings", &shown);
    // What it prints after the comments is TOML.
    let settings: toml::Table = shown.parse().unwrap();
    assert_eq!(
        settings["severity"]["missing-gil"].as_str(),
        Some("warning")
    );
    // Nothing was analysed: no summary.
    assert_eq!(stderr(&output), "");

    let isolated = stdout(&gil_lint(
        &project,
        &["check", "--show-settings", "--isolated"],
    ));
    assert!(
        isolated.starts_with("# Configuration file: none (--isolated)\n"),
        "{isolated}"
    );
    let isolated: toml::Table = isolated.parse().unwrap();
    assert_eq!(isolated["severity"]["missing-gil"].as_str(), Some("error"));
    assert!(
        isolated["rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str() == Some("gil-held-blocking"))
    );
    let named = stdout(&gil_lint(
        &project,
        &["check", "--show-settings", "--config", "gil-lint.toml"],
    ));
    assert!(
        named.starts_with("# Configuration file: gil-lint.toml (--config)\n"),
        "{named}"
    );
}

#[test]
fn stdin_is_analysed_as_the_named_file_of_the_project() {
    let (_dir, project) = seed_project();
    let text = std::fs::read(project.join("pybind.cpp")).unwrap();
    let from_disk = findings(&gil_lint(&project, &["check", "--format=json", "."]));
    assert_eq!(from_disk.len(), 2);
    // The editor's buffer replaces the file on the disk; the rest of the project is read.
    std::fs::write(project.join("pybind.cpp"), "// being edited\n").unwrap();
    let args = [
        "check",
        "--format=json",
        "--project",
        ".",
        "--stdin-filename",
        "pybind.cpp",
        "-",
    ];
    let output = run_with(&project, &args, &[], &text);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(findings(&output), from_disk);
    // A file that is not on the disk yet.
    std::fs::remove_file(project.join("pybind.cpp")).unwrap();
    let mut args = args;
    args[5] = "new.cpp";
    let output = run_with(&project, &args, &[], &text);
    let paths: Vec<String> = findings(&output).into_iter().map(|f| f.1).collect();
    assert!(paths.iter().all(|p| p == "new.cpp"), "{paths:?}");
    // The human output shows its lines from the text read.
    let human = run_with(
        &project,
        &[
            "check",
            "--project",
            ".",
            "--stdin-filename",
            "new.cpp",
            "-",
        ],
        &[],
        &text,
    );
    assert!(stdout(&human).contains("py::module_::import(\"fp8.tensor.float8_tensor\")"));
    // Alone, without --project: the file by itself.
    let alone = run_with(
        &project,
        &["check", "--stdin-filename", "new.cpp", "-"],
        &[],
        &text,
    );
    assert_eq!(alone.status.code(), Some(0), "{}", stderr(&alone));
    assert!(stderr(&alone).starts_with("checked 1 file in "));
}

#[test]
fn stdin_needs_a_file_name_of_a_language_read() {
    let error = |args: &[&str]| {
        let output = run_with(&repo(), args, &[], b"int x;\n");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        stderr(&output)
    };
    assert!(error(&["check", "-"]).contains("needs --stdin-filename"));
    assert!(error(&["check", "--stdin-filename", "a.cpp"]).contains("pass `-` as PATH"));
    assert!(error(&["check", "--stdin-filename", "a.cpp", "-", "src"]).contains("only PATH"));
    assert!(
        error(&["check", "--stdin-filename", "notes.txt", "-"])
            .contains("not the name of a C, C++, CUDA or Rust file")
    );
    // Binary input is refused, as a binary file is.
    let output = run_with(
        &repo(),
        &["check", "--stdin-filename", "a.cpp", "-"],
        &[],
        b"a\0b",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("standard input: binary file (NUL byte 1)"));
}

#[test]
fn a_mistyped_rule_gets_a_suggestion() {
    for args in [
        &["check", "--select", "missing-gill", SEED][..],
        &["check", "--ignore", "missing_gil", SEED],
        &["check", "--severity", "gil-held-blockin=warning", SEED],
        &["--explain", "gil-lock-invertion"],
    ] {
        let output = gil_lint(&repo(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let message = stderr(&output);
        assert!(message.contains("; did you mean `"), "{args:?}: {message}");
    }
    let output = gil_lint(&repo(), &["--explain", "gil-lock-invertion"]);
    assert_eq!(
        stderr(&output),
        "error: unknown rule `gil-lock-invertion`; did you mean `gil-lock-inversion`? \
         (`gil-lint rules` lists them)\n"
    );
    // Nothing close: no guess.
    let output = gil_lint(&repo(), &["check", "--select", "deadlock", SEED]);
    assert_eq!(
        stderr(&output),
        "error: unknown rule `deadlock`; `gil-lint rules` lists them\n"
    );
    // In the configuration file, at its position.
    let (_dir, project) = seed_project();
    std::fs::write(project.join("gil-lint.toml"), "select = [\"missing-gl\"]\n").unwrap();
    let output = gil_lint(&project, &["check"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .contains("gil-lint.toml:1:11: unknown rule `missing-gl`; did you mean `missing-gil`?"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_path_outside_the_project_is_an_error() {
    let (dir, project) = seed_project();
    std::fs::write(dir.path().join("elsewhere.cpp"), "int x;\n").unwrap();
    let output = gil_lint(&project, &["check", "--project", ".", "../elsewhere.cpp"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "error: ../elsewhere.cpp is outside the project . (--project): only findings in the \
         project are reported\n"
    );
    // Inside it, through `..`, is fine.
    let output = gil_lint(
        &project,
        &["check", "--project", ".", "../project/pybind.cpp"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
}

#[test]
fn source_that_is_not_utf8_is_read_with_lines_and_columns_kept() {
    let (_dir, project) = seed_project();
    let path = project.join("pybind.cpp");
    let original = std::fs::read_to_string(&path).unwrap();
    let line = "  auto module = py::module_::import";
    assert!(original.contains(line));
    // The same comment, `/* é */`, before the finding, in UTF-8 and in Latin-1.
    let utf8 = original.replace(line, &format!("/* é */{line}"));
    std::fs::write(&path, &utf8).unwrap();
    let expected = findings(&gil_lint(&project, &["check", "--format=json", "."]));
    assert!(expected.iter().any(|f| f.3 == 17 + 7), "{expected:?}");
    let latin1: Vec<u8> = utf8
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap())
        .collect();
    std::fs::write(&path, latin1).unwrap();
    let output = gil_lint(&project, &["check", "--format=json", "."]);
    assert_eq!(findings(&output), expected);
    assert_eq!(json(&output)["errors"], serde_json::json!([]));
    let human = stdout(&gil_lint(&project, &["check", "."]));
    assert!(human.contains(&format!("/* é */{line}")), "{human}");
}

/// What the example GitHub workflow relies on: a report file exists after exit 1 (written whole
/// before the exit) and none after exit 2, so `hashFiles` tells the upload whether to run.
#[test]
fn a_report_file_is_written_on_findings_and_not_on_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("gil-lint.sarif");
    let report_arg = report.to_str().unwrap();
    let failed = gil_lint(
        &repo(),
        &[
            "check",
            "--format=sarif",
            "-o",
            report_arg,
            "--select=nope",
            SEED,
        ],
    );
    assert_eq!(failed.status.code(), Some(2));
    assert!(!report.exists());
    let found = gil_lint(
        &repo(),
        &["check", "--format=sarif", "-o", report_arg, SEED],
    );
    assert_eq!(found.status.code(), Some(1));
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(log["runs"][0]["results"].as_array().unwrap().len(), 2);
}

#[test]
fn no_cache_from_the_environment_takes_the_usual_spellings() {
    for (value, cached) in [
        ("1", false),
        ("yes", false),
        ("true", false),
        ("0", true),
        ("false", true),
    ] {
        let (_dir, project) = seed_project();
        let output = run_with(
            &project,
            &["check", "--project", "."],
            &[("GIL_LINT_NO_CACHE", value)],
            b"",
        );
        assert_ne!(
            output.status.code(),
            Some(2),
            "{value}: {}",
            stderr(&output)
        );
        assert_eq!(
            project.join(".gil-lint-cache").exists(),
            cached,
            "GIL_LINT_NO_CACHE={value}"
        );
    }
}

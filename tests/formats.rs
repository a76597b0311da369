//! `--format concise|github|gitlab|json-lines|junit|rdjson`: each renderer's output, snapshotted
//! on findings of both levels (errors, and unused suppressions as warnings) across several files,
//! and each format through the command line. `tests/python/format_schemas.sh` validates the GitLab
//! and rdjson reports against their schemas and the JUnit XML's shape.

use std::path::{Path, PathBuf};

use gil_lint::check::{self, Report};
use gil_lint::config::Config;
use gil_lint::render::{concise, github, gitlab, json_lines, junit, rdjson};
use gil_lint::repo::RepoRoot;

const PATHS: [&str; 3] = [
    "fixtures/seed_call_once_import",
    "fixtures/mutex_inversion",
    "tests/config-fixtures/suppressions",
];

fn report(paths: &[&str]) -> Report {
    check::run(check::Options {
        config: Config {
            warn_unused_suppressions: Some(true),
            ..Config::default()
        },
        ..check::Options::new(paths.iter().map(PathBuf::from).collect(), &root())
    })
    .unwrap()
}

/// The repository root of the tests: the crate's folder, where they run.
fn root() -> RepoRoot {
    RepoRoot::at(Path::new(".")).unwrap()
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn every_format_s_snapshot() {
    let report = report(&PATHS);
    let (program, findings) = (&report.analysis.program, &report.analysis.findings);
    assert!(findings.iter().any(|f| f.rule == "unused-suppression"));
    assert!(findings.iter().any(|f| f.rule == "gil-lock-inversion"));
    let root = root();
    snapshot("format-concise", &concise::render(program, findings));
    snapshot("format-github", &github::render(program, findings, &root));
    snapshot("format-gitlab", &gitlab::render(program, findings, &root));
    snapshot("format-json-lines", &json_lines::render(program, findings));
    snapshot("format-junit", &junit::render(program, findings));
    snapshot("format-rdjson", &rdjson::render(program, findings));
}

#[test]
fn junit_without_findings_has_one_passing_case() {
    let report = report(&["fixtures/no_python"]);
    assert!(report.analysis.findings.is_empty());
    snapshot(
        "format-junit-empty",
        &junit::render(&report.analysis.program, &report.analysis.findings),
    );
}

#[test]
fn gitlab_fingerprints_are_unique() {
    let report = report(&PATHS);
    let (program, findings) = (&report.analysis.program, &report.analysis.findings);
    // Twice the same findings: the same fingerprints, which must still differ in the report.
    let twice: Vec<_> = findings.iter().chain(findings).cloned().collect();
    let issues: serde_json::Value =
        serde_json::from_str(&gitlab::render(program, &twice, &root())).unwrap();
    let mut prints: Vec<&str> = issues
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    prints.sort();
    let n = prints.len();
    prints.dedup();
    assert_eq!(prints.len(), n);
}

#[test]
fn every_format_runs_from_the_command_line() {
    for format in [
        "human",
        "concise",
        "json",
        "json-lines",
        "sarif",
        "github",
        "gitlab",
        "junit",
        "rdjson",
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gil-lint"))
            .args(["check", "--quiet", "--format", format, PATHS[1]])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("gil-lock-inversion"), "{format}: {text}");
    }
}

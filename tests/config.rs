//! Configuration and suppression fixtures: every folder of `tests/config-fixtures/` is a project
//! with its own `gil-lint.toml` or `pyproject.toml`, checked as `gil-lint check FOLDER` would
//! (configuration found from the folder, rules selected, suppressions applied). As in `fixtures/`,
//! the expected findings are written beside the code as `//~ rule-id`, and the human rendering is
//! snapshotted in `tests/snapshots/config-*.snap`.

mod common;

use std::path::{Path, PathBuf};

use common::{compare, expectations, slash};
use gil_lint::check::{self, Options};
use gil_lint::config::Config;

fn run(dir: &Path) -> check::Report {
    let rules: Vec<&str> = gil_lint::lints::LINTS.iter().map(|r| r.id).collect();
    let config = Config::discover(dir, &rules).unwrap();
    let root = gil_lint::repo::RepoRoot::at(Path::new(".")).unwrap();
    check::run(Options {
        config,
        ..Options::new(vec![dir.to_path_buf()], &root)
    })
    .unwrap()
}

#[test]
fn config_fixtures_report_exactly_their_annotations() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("tests/config-fixtures")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let report = run(dir);
        let analysis = &report.analysis;
        assert!(analysis.errors.is_empty(), "{name}: {:?}", analysis.errors);
        let actual = common::found(&analysis.program, &analysis.findings);
        // The analysed files, read again: the analysis keeps the text only of some.
        let files: Vec<PathBuf> = analysis
            .program
            .files
            .iter()
            .map(|f| f.path.clone())
            .collect();
        let expected = expectations(&files);
        let rendered = gil_lint::render::human::HumanRenderer::new(&analysis.program)
            .render_plain(&analysis.findings);
        insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(format!("config-{name}"), rendered);
        });
        if let Err(failure) = compare(&name, &expected, &actual) {
            failures.push(failure);
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn excluded_files_are_not_analysed_and_suppressions_are_counted() {
    let report = run(Path::new("tests/config-fixtures/pyproject"));
    let paths: Vec<String> = report
        .analysis
        .program
        .files
        .iter()
        .map(|f| slash(&f.path))
        .collect();
    assert_eq!(paths, ["tests/config-fixtures/pyproject/src/ops.cpp"]);
    // 3 in ext.cpp (trailing, above, block comment) and 2 in legacy.cpp (file-level).
    assert_eq!(
        run(Path::new("tests/config-fixtures/suppressions")).suppressed,
        5
    );
}

#[test]
fn severity_and_rule_selection_come_from_the_configuration() {
    let report = run(Path::new("tests/config-fixtures/select_and_severity"));
    let findings = &report.analysis.findings;
    assert!(findings.iter().all(|f| f.rule == "missing-gil"));
    assert!(
        findings
            .iter()
            .all(|f| f.severity == gil_lint::diagnostic::Severity::Warning)
    );
}

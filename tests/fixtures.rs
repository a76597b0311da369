//! UI tests: every folder under `fixtures/` is a small project whose expected findings are written
//! beside the code as `//~ rule-id` at the end of the line of the finding's primary location.
//! The test asserts the exact set of findings, and snapshots the human rendering (insta) so that a
//! change in wording or in the reported path is a reviewed diff.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{Expectation, compare, expectations};
use gil_lint::discover;
use gil_lint::knowledge::Knowledge;

/// Runs the whole pipeline on `roots`; returns the findings and the plain human rendering.
fn check(roots: &[PathBuf]) -> (Expectation, String, Vec<PathBuf>) {
    let found = discover::discover(roots, &discover::exclude_set(&[]).unwrap());
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    let analysis = gil_lint::analyse_files(&found.files, &Knowledge::builtin());
    assert!(analysis.errors.is_empty(), "{:?}", analysis.errors);
    let actual = common::found(&analysis.program, &analysis.findings);
    let rendered = gil_lint::render::human::HumanRenderer::new(&analysis.program)
        .render_plain(&analysis.findings);
    (
        actual,
        rendered,
        found.files.into_iter().map(|(p, _)| p).collect(),
    )
}

fn fixture_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("fixtures")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn assert_fixture(name: &str, roots: &[PathBuf]) -> Result<(), String> {
    let (actual, rendered, files) = check(roots);
    let expected = expectations(&files);
    insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, rendered);
    });
    compare(name, &expected, &actual)
}

#[test]
fn fixtures_report_exactly_their_annotations() {
    let failures: Vec<String> = fixture_dirs()
        .iter()
        .filter_map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().to_string();
            assert_fixture(&name, std::slice::from_ref(dir)).err()
        })
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Each `init_extension` variant of the fp8 extensions in `kernels/` is also a fixture: the
/// common sources plus one variant file, whose expected findings are the ones the runtime oracle
/// (`kernels/oracle.py`) checks against real runs.
fn assert_kernel_variants(common: &str, variants_dir: &str, extension: &str, expected: usize) {
    let mut variants: Vec<PathBuf> = std::fs::read_dir(variants_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    variants.sort();
    assert_eq!(
        variants.len(),
        expected,
        "variants in {variants_dir}: {variants:?}"
    );
    let failures: Vec<String> = variants
        .iter()
        .filter_map(|variant| {
            let name = format!("kernels-{}", variant.file_stem().unwrap().to_string_lossy());
            assert_fixture(&name, &[PathBuf::from(common), variant.clone()]).err()
        })
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn pybind11_kernel_variants_report_exactly_their_annotations() {
    assert_kernel_variants(
        "kernels/pybind11/csrc",
        "kernels/pybind11/variants",
        "cpp",
        6,
    );
}

#[test]
fn pyo3_kernel_variants_report_exactly_their_annotations() {
    assert_kernel_variants(
        "kernels/pyo3/fp8ext_rs/src",
        "kernels/pyo3/fp8ext_rs/variants",
        "rs",
        4,
    );
}

/// `fixtures/` for the analysis rules, `tests/config-fixtures/` for `unused-suppression` (which
/// needs `warn-unused-suppressions` in a configuration).
#[test]
fn every_rule_has_a_fixture_that_reports_it() {
    let mut dirs = fixture_dirs();
    dirs.push(PathBuf::from("tests/config-fixtures"));
    let found = discover::discover(&dirs, &discover::exclude_set(&[]).unwrap());
    let files: Vec<PathBuf> = found.files.into_iter().map(|(p, _)| p).collect();
    let all: BTreeSet<String> = expectations(&files)
        .into_iter()
        .map(|(_, _, rule)| rule)
        .collect();
    for rule in gil_lint::lints::LINTS {
        assert!(all.contains(rule.id), "no fixture expects `{}`", rule.id);
    }
}

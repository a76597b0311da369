//! Inputs that crashed a fuzz target (`fuzz/`), kept as regression tests: each file under
//! `tests/fuzz_regressions/` goes through everything the fuzz targets run.

use std::path::Path;

use gil_lint::frontend::cpp::scan::{Rewrites, scan_cpp};
use gil_lint::frontend::rust_scan::scan_rust;
use gil_lint::frontend::scan::Seeds;
use gil_lint::frontend::{self, Language};
use gil_lint::knowledge::Knowledge;

#[test]
fn every_fuzz_regression_runs_clean() {
    let knowledge = Knowledge::builtin();
    let seeds = Seeds::new(&knowledge);
    let rewrites = Rewrites::new(&knowledge);
    let mut inputs: Vec<_> = std::fs::read_dir("tests/fuzz_regressions")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty());
    for input in inputs {
        let bytes = std::fs::read(&input).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        // Each input runs as both languages, as the fuzz targets do.
        let _ = seeds.in_text(&input, &text, Language::Cpp);
        let _ = seeds.in_text(&input, &text, Language::Rust);
        let _ = scan_cpp(&text, &rewrites);
        let _ = scan_rust(&text, Path::new("src/lib.rs"));
        let _ = frontend::cpp::project_macros(&text, &knowledge);
        let _ = frontend::cpp::guards::guard_facts(&text, &knowledge);
        let cleaned = frontend::cpp::neutralise(&text, &knowledge);
        assert_eq!(cleaned.len(), text.len(), "{}", input.display());
        let _ = frontend::extract(Language::Cpp, &input, &text, &knowledge);
        let _ = frontend::extract(Language::Rust, Path::new("src/lib.rs"), &text, &knowledge);
    }
}

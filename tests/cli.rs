//! The `gil-lint` binary as users and CI run it: exit codes, configuration discovery and errors,
//! command-line overrides, output files, baselines, the pre-commit mode, the summary line, and no
//! terminal control codes when the output is piped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SEED: &str = "fixtures/seed_call_once_import";

fn gil_lint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gil-lint"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .output()
        .unwrap()
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// A copy of a fixture in a temporary directory (a project of its own).
fn project(fixture: &str) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                std::fs::create_dir(&target).unwrap();
                copy(&path, &target);
            } else {
                std::fs::copy(&path, target).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(&repo().join(fixture), dir.path());
    dir
}

fn edit(path: &Path, f: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, f(text)).unwrap();
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output)).unwrap()
}

fn rules_found(output: &Output) -> Vec<String> {
    json(output)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn exit_codes_and_summary() {
    let found = gil_lint(&repo(), &["check", SEED]);
    assert_eq!(found.status.code(), Some(1));
    let summary = stderr(&found);
    assert!(
        summary.starts_with("checked 3 files in ")
            && summary.contains(": 2 findings (gil-held-blocking: 1, missing-gil: 1)"),
        "{summary}"
    );
    assert!(!stdout(&found).contains("checked"));
    // Piped: no colours and no progress bar.
    assert!(!stdout(&found).contains('\x1b') && !summary.contains('\x1b'));

    let clean = gil_lint(&repo(), &["check", "fixtures/no_python"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert!(stderr(&clean).contains(": no findings"));

    let quiet = gil_lint(&repo(), &["check", "-q", "fixtures/no_python"]);
    assert_eq!(stderr(&quiet), "");

    let missing = gil_lint(&repo(), &["check", "no/such/dir"]);
    assert_eq!(missing.status.code(), Some(2));
    let unknown = gil_lint(&repo(), &["check", "--select", "nope", SEED]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("unknown rule `nope`"));
}

#[test]
fn configuration_is_found_upward_and_overridden_by_flags() {
    let dir = project(SEED);
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[project]\nname = \"x\"\n\n[tool.gil-lint]\nignore = [\"gil-held-blocking\"]\n\
         severity = { missing-gil = \"warning\" }\n",
    )
    .unwrap();
    let sub = dir.path().join("sub");
    // From a subdirectory, checking the parent: the pyproject.toml above applies.
    let output = gil_lint(&sub, &["check", "--format", "json", ".."]);
    assert_eq!(rules_found(&output), ["missing-gil"]);
    assert_eq!(json(&output)["findings"][0]["severity"], "warning");
    // Flags win: --select replaces the selection, --severity the level.
    let output = gil_lint(
        &sub,
        &[
            "check",
            "--format=json",
            "--select=gil-held-blocking,missing-gil",
            "--severity",
            "missing-gil=error",
            "..",
        ],
    );
    assert_eq!(rules_found(&output), ["missing-gil", "gil-held-blocking"]);
    assert_eq!(json(&output)["findings"][0]["severity"], "error");
    // --isolated reads no configuration; --config names one.
    let output = gil_lint(&sub, &["check", "--format=json", "--isolated", ".."]);
    assert_eq!(rules_found(&output).len(), 2);
    std::fs::write(sub.join("other.toml"), "select = [\"gil-held-blocking\"]\n").unwrap();
    let output = gil_lint(
        &sub,
        &["check", "--format=json", "--config", "other.toml", ".."],
    );
    assert_eq!(rules_found(&output), ["gil-held-blocking"]);
}

#[test]
fn configuration_errors_name_the_key_s_location() {
    let dir = project(SEED);
    std::fs::write(
        dir.path().join("gil-lint.toml"),
        "ignore = []\nexclude = [\"build\"]\nselet = [\"missing-gil\"]\n",
    )
    .unwrap();
    let output = gil_lint(dir.path(), &["check", "."]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("gil-lint.toml:3:1: unknown key `selet`, expected one of"),
        "{message}"
    );
}

#[test]
fn suppressions_and_unused_ones() {
    let dir = project(SEED);
    let pybind = dir.path().join("pybind.cpp");
    edit(&pybind, |text| {
        text.replace(
            "  //~ missing-gil",
            "  // gil-lint: allow(missing-gil) -- reviewed",
        )
        .replace(
            "void init_extension() {",
            "// gil-lint: allow(gil-held-blocking)\nvoid init_extension() {",
        )
    });
    let output = gil_lint(dir.path(), &["check", "--format=json", "."]);
    // The missing-gil finding is suppressed; the comment above `init_extension` is a line too far.
    assert_eq!(rules_found(&output), ["gil-held-blocking"]);
    let output = gil_lint(
        dir.path(),
        &["check", "--format=json", "--warn-unused-suppressions", "."],
    );
    assert_eq!(
        rules_found(&output),
        ["unused-suppression", "gil-held-blocking"]
    );
    assert_eq!(output.status.code(), Some(1));
    let human = gil_lint(dir.path(), &["check", "."]);
    assert!(
        stderr(&human).contains("1 suppressed"),
        "{}",
        stderr(&human)
    );
}

#[test]
fn baseline_reports_only_new_findings() {
    let dir = project(SEED);
    let write = gil_lint(
        dir.path(),
        &["check", "--write-baseline", "baseline.json", "."],
    );
    assert_eq!(write.status.code(), Some(0), "{}", stderr(&write));
    assert!(stderr(&write).contains("wrote 2 findings to baseline.json"));
    let check = |args: &[&str]| {
        let mut all = vec!["check", "--baseline", "baseline.json"];
        all.extend(args);
        gil_lint(dir.path(), &all)
    };
    let output = check(&["."]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("no findings, 2 in the baseline"));
    // Lines added above and re-indentation keep the findings in the baseline.
    edit(&dir.path().join("pybind.cpp"), |text| {
        format!(
            "// Copyright header\n\n{}",
            text.replace("  auto module", "    auto module")
        )
    });
    let output = check(&["."]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // A new bug is reported, alone.
    edit(&dir.path().join("transpose.cpp"), |text| {
        text.replace(
            "  init_extension();\n  return std::vector",
            "  init_extension();\n  py::print(\"transposing\");\n  return std::vector",
        )
        .replace(
            "#include \"extensions.h\"",
            "#include \"extensions.h\"\n#include <pybind11/pybind11.h>\nnamespace py = pybind11;",
        )
    });
    let output = check(&["--format=json", "."]);
    assert_eq!(output.status.code(), Some(1));
    let findings = json(&output)["findings"].as_array().unwrap().clone();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["path"], "transpose.cpp");
    // The fixed finding's entry is stale.
    edit(&dir.path().join("pybind.cpp"), |text| {
        text.replace(
            "    auto module = py::module_::import(\"fp8.tensor.float8_tensor\");",
            "    py::gil_scoped_acquire gil;\n    auto module = py::module_::import(\"fp8\");",
        )
    });
    let output = check(&["."]);
    assert!(
        stderr(&output).contains("no longer found"),
        "{}",
        stderr(&output)
    );
    let bad = gil_lint(dir.path(), &["check", "--baseline", "pybind.cpp", "."]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn sarif_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.sarif");
    let output = gil_lint(
        &repo(),
        &[
            "check",
            "--format",
            "sarif",
            "--output",
            out.to_str().unwrap(),
            SEED,
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "");
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(log["runs"][0]["results"].as_array().unwrap().len(), 2);
    let root = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        root.starts_with("file:///") && root.ends_with('/'),
        "{root}"
    );
}

#[test]
fn project_mode_reports_findings_that_touch_the_given_files() {
    let dir = project(SEED);
    let run = |files: &[&str]| {
        let mut args = vec!["check", "--format=json", "--project", "."];
        args.extend(files);
        rules_found(&gil_lint(dir.path(), &args))
    };
    // The call path of both findings goes through transpose.cpp.
    assert_eq!(run(&["transpose.cpp"]).len(), 2);
    assert_eq!(run(&["pybind.cpp"]).len(), 2);
    // Nothing involves the header.
    assert!(run(&["extensions.h"]).is_empty());
}

#[test]
fn rules_and_explain_include_unused_suppression() {
    let rules = gil_lint(&repo(), &["rules"]);
    assert!(stdout(&rules).contains("unused-suppression   warning"));
    let explain = gil_lint(&repo(), &["--explain", "unused-suppression"]);
    assert_eq!(explain.status.code(), Some(0));
    assert!(stdout(&explain).starts_with("# unused-suppression\n"));
}

#[test]
fn findings_on_guessed_paths_are_marked_and_can_be_hidden() {
    // `flush` is reached by a call on a receiver of unknown type, matched by name.
    let fixture = "fixtures/inherited_methods";
    let confidences = |output: &Output| -> Vec<String> {
        json(output)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["confidence"].as_str().unwrap().to_string())
            .collect()
    };
    let all = gil_lint(&repo(), &["check", "--format=json", fixture]);
    let all = confidences(&all);
    assert!(all.contains(&"low".to_string()), "{all:?}");
    let sure = gil_lint(
        &repo(),
        &["check", "--format=json", "--min-confidence=high", fixture],
    );
    let sure = confidences(&sure);
    assert_eq!(sure.len(), all.iter().filter(|c| *c == "high").count());
    assert!(sure.iter().all(|c| c == "high"));

    // The same from the configuration file, and in SARIF as the result's rank.
    let dir = project(fixture);
    std::fs::write(
        dir.path().join("gil-lint.toml"),
        "min-confidence = \"high\"\n",
    )
    .unwrap();
    assert_eq!(
        confidences(&gil_lint(dir.path(), &["check", "--format=json"])),
        sure
    );
    let sarif = gil_lint(&repo(), &["check", "--format=sarif", fixture]);
    let log: serde_json::Value = serde_json::from_str(&stdout(&sarif)).unwrap();
    let ranks: Vec<f64> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_f64().unwrap())
        .collect();
    assert_eq!(ranks.len(), all.len());
    assert!(ranks.iter().any(|&r| r < 50.0), "{ranks:?}");

    // A guessed path is said so in the human output.
    let human = stdout(&gil_lint(&repo(), &["check", fixture]));
    assert!(human.contains("(guessed)") && human.contains("confidence: low"));
}

/// Checking a binding crate reads the local crates its `Cargo.toml` depends on (a `path`
/// dependency, or one the workspace gives a path), so that its calls into them resolve, and
/// reports the findings that touch it; a dependency outside the repository is not read.
#[test]
fn a_crate_is_checked_with_its_path_dependencies() {
    let dir = project("fixtures/pyo3_once_initialiser_logs");
    let root = dir.path();
    let findings = |output: &Output| {
        stdout(output)
            .lines()
            .filter(|l| l.contains("gil-held-blocking"))
            .count()
    };
    let alone = gil_lint(
        root,
        &["check", "--no-cache", "--format", "concise", "python"],
    );
    assert_eq!(findings(&alone), 0, "{}", stdout(&alone));

    std::fs::write(
        root.join("netcore/Cargo.toml"),
        "[package]\nname = \"netcore\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"python\", \"netcore\"]\n\
         [workspace.dependencies]\nnetcore = { path = \"netcore\" }\n",
    )
    .unwrap();
    // Elsewhere: a copy of the engine crate that the binding may not make gil-lint read.
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(outside.path().join("src")).unwrap();
    for file in ["lib.rs", "tls.rs"] {
        std::fs::copy(
            root.join("netcore/src").join(file),
            outside.path().join("src").join(file),
        )
        .unwrap();
    }
    let manifest = |netcore: &str| {
        format!(
            "[package]\nname = \"binding\"\n[dependencies]\nnetcore = {netcore}\n\
             [target.'cfg(unix)'.dependencies]\nmissing = {{ path = \"../missing\" }}\n"
        )
    };
    let python = root.join("python/Cargo.toml");
    let outside_path = outside.path().to_str().unwrap().replace('\\', "/");
    std::fs::write(
        &python,
        manifest(&format!("{{ path = \"{outside_path}\" }}")),
    )
    .unwrap();
    let escaped = gil_lint(
        root,
        &["check", "--no-cache", "--format", "concise", "python"],
    );
    assert_eq!(findings(&escaped), 0, "{}", stdout(&escaped));

    for netcore in ["{ workspace = true }", "{ path = \"../netcore\" }"] {
        std::fs::write(&python, manifest(netcore)).unwrap();
        let with = gil_lint(
            root,
            &["check", "--no-cache", "--format", "concise", "python"],
        );
        let out = stdout(&with);
        assert_eq!(findings(&with), 1, "{netcore}: {out}{}", stderr(&with));
        assert!(out.contains("netcore/src/tls.rs"), "{out}");
    }
}

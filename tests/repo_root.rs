//! Reports and baselines name files relative to the repository root, not the current directory:
//! run from a subfolder, SARIF (and the GitLab report) point at the same files as from the root,
//! and a baseline written in one folder matches from another.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const SEED: &str = "fixtures/seed_call_once_import";

/// A repository (`.git` at its root) with the seed fixture under `csrc/ext/`.
fn repository() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let ext = repo.join("csrc/ext");
    std::fs::create_dir_all(&ext).unwrap();
    std::fs::create_dir(repo.join(".git")).unwrap();
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join(SEED);
    for entry in std::fs::read_dir(seed).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, ext.join(path.file_name().unwrap())).unwrap();
    }
    (dir, repo)
}

fn gil_lint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gil-lint"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn sarif(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["check", "--quiet", "--format", "sarif"];
    all.extend(args);
    let out = gil_lint(dir, &all);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every artifact URI of the run's results, with its base, and the results' fingerprints.
fn places(log: &Value) -> Vec<String> {
    let mut places = Vec::new();
    fn walk(value: &Value, places: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(uri)) = map.get("uri") {
                    places.push(format!(
                        "{uri} {}",
                        map.get("uriBaseId").unwrap_or(&Value::Null)
                    ));
                }
                map.values().for_each(|v| walk(v, places));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, places)),
            _ => {}
        }
    }
    let run = &log["runs"][0];
    walk(&run["results"], &mut places);
    for result in run["results"].as_array().unwrap() {
        places.push(result["partialFingerprints"].to_string());
    }
    places
}

#[test]
fn sarif_is_the_same_from_a_subfolder_as_from_the_root() {
    let (_dir, repo) = repository();
    let from_root = sarif(&repo, &["csrc"]);
    let from_sub = sarif(&repo.join("csrc/ext"), &["."]);
    let places_root = places(&from_root);
    assert!(
        places_root.contains(&"csrc/ext/pybind.cpp \"%SRCROOT%\"".to_string()),
        "{places_root:?}"
    );
    assert_eq!(places_root, places(&from_sub));
    let base = |log: &Value| log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"].clone();
    let root_uri = url_of(&repo);
    assert_eq!(base(&from_root), root_uri);
    assert_eq!(base(&from_sub), root_uri);
    // The invocation says where and how it ran.
    let invocation = &from_sub["runs"][0]["invocations"][0];
    assert_eq!(invocation["exitCode"], 1);
    assert_eq!(invocation["executionSuccessful"], true);
    assert_eq!(invocation["arguments"][0], "check");
    assert_eq!(
        invocation["workingDirectory"]["uri"],
        url_of(&repo.join("csrc/ext"))
    );
    assert!(
        invocation["commandLine"]
            .as_str()
            .unwrap()
            .starts_with("gil-lint check")
    );
    assert_eq!(from_sub["runs"][0]["automationDetails"]["id"], "gil-lint/");
}

/// `file:///…/dir/` of a directory, as the report writes it.
fn url_of(dir: &Path) -> Value {
    let dir = std::fs::canonicalize(dir).unwrap();
    Value::from(format!("file://{}/", dir.display()))
}

#[test]
fn repo_root_sets_the_base_of_the_paths() {
    let (_dir, repo) = repository();
    let log = sarif(&repo, &["--repo-root", "csrc", "csrc"]);
    let places = places(&log);
    assert!(
        places.contains(&"ext/pybind.cpp \"%SRCROOT%\"".to_string()),
        "{places:?}"
    );
    let out = gil_lint(&repo, &["check", "--repo-root", "nowhere", "csrc"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--repo-root nowhere"));
}

#[test]
fn a_baseline_matches_from_any_folder() {
    let (_dir, repo) = repository();
    let baseline = repo.join("gil-lint-baseline.json");
    let baseline = baseline.to_str().unwrap();
    // Written at the root, read from the subfolder.
    let out = gil_lint(&repo, &["check", "--write-baseline", baseline, "csrc"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let written: Value = serde_json::from_slice(&std::fs::read(baseline).unwrap()).unwrap();
    assert_eq!(
        written["findings"][0]["path"]
            .as_str()
            .unwrap()
            .rsplit_once('/')
            .unwrap()
            .0,
        "csrc/ext"
    );
    let sub = repo.join("csrc/ext");
    let out = gil_lint(&sub, &["check", "--baseline", baseline, "."]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("in the baseline"));
    // Written in the subfolder, read at the root: the same file.
    let out = gil_lint(&sub, &["check", "--write-baseline", baseline, "."]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let rewritten: Value = serde_json::from_slice(&std::fs::read(baseline).unwrap()).unwrap();
    assert_eq!(rewritten, written);
    let out = gil_lint(&repo, &["check", "--baseline", baseline, "csrc"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn gitlab_and_github_paths_are_the_same_from_a_subfolder() {
    let (_dir, repo) = repository();
    let sub = repo.join("csrc/ext");
    for format in ["gitlab", "github"] {
        let from_root = gil_lint(&repo, &["check", "--format", format, "csrc"]);
        let from_sub = gil_lint(&sub, &["check", "--format", format, "."]);
        assert_eq!(from_root.status.code(), Some(1), "{from_root:?}");
        let (root_text, sub_text) = (
            String::from_utf8(from_root.stdout).unwrap(),
            String::from_utf8(from_sub.stdout).unwrap(),
        );
        if format == "gitlab" {
            // The whole report: paths and fingerprints.
            assert_eq!(root_text, sub_text);
            assert!(root_text.contains("\"path\": \"csrc/ext/pybind.cpp\""));
        } else {
            // `file=` is the repository's path; the message repeats the path as shown.
            let files = |text: &str| -> Vec<String> {
                text.lines()
                    .map(|l| l.split(",line=").next().unwrap().to_string())
                    .collect()
            };
            assert_eq!(files(&root_text), files(&sub_text));
            assert!(
                root_text.contains(",file=csrc/ext/pybind.cpp,"),
                "{root_text}"
            );
        }
    }
}

//! `--format sarif` against GitHub code scanning's rules for uploads (the properties it requires,
//! not empty, within its limits), for the SARIF of every fixture. The OASIS schema itself is checked
//! by `tests/python/sarif_schema.sh`, with the official schema file.

use std::path::{Path, PathBuf};

use serde_json::Value;

use gil_lint::discover;
use gil_lint::knowledge::Knowledge;
use gil_lint::render::sarif;
use gil_lint::repo::RepoRoot;

/// The repository root of the tests: the crate's folder, where they run.
fn here() -> RepoRoot {
    RepoRoot::at(Path::new(".")).unwrap()
}

fn sarif_of(roots: &[PathBuf], options: &sarif::Options) -> Value {
    let found = discover::discover(roots, &discover::exclude_set(&[]).unwrap());
    let analysis = gil_lint::analyse_files(&found.files, &Knowledge::builtin());
    let text = sarif::render(
        &analysis.program,
        &analysis.findings,
        gil_lint::lints::LINTS,
        &analysis.errors,
        options,
    );
    serde_json::from_str(&text).unwrap()
}

fn fixture_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for parent in ["fixtures", "tests/config-fixtures"] {
        dirs.extend(
            std::fs::read_dir(parent)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_dir()),
        );
    }
    dirs.sort();
    dirs
}

fn text<'a>(value: &'a Value, pointer: &str, at: &str) -> &'a str {
    let text = value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{at}: `{pointer}` is missing"));
    assert!(!text.trim().is_empty(), "{at}: `{pointer}` is empty");
    text
}

fn check_location(location: &Value, at: &str) {
    let uri = text(location, "/physicalLocation/artifactLocation/uri", at);
    assert!(
        !uri.starts_with('/') && !uri.contains('\\') && !uri.contains(".."),
        "{at}: uri `{uri}` is not a clean relative path"
    );
    assert_eq!(
        location.pointer("/physicalLocation/artifactLocation/uriBaseId"),
        Some(&Value::from("%SRCROOT%")),
        "{at}"
    );
    let region = &location["physicalLocation"]["region"];
    let field = |name: &str| {
        region[name]
            .as_u64()
            .unwrap_or_else(|| panic!("{at}: region.{name} is missing"))
    };
    let (start_line, start_column) = (field("startLine"), field("startColumn"));
    let (end_line, end_column) = (field("endLine"), field("endColumn"));
    assert!(start_line >= 1 && start_column >= 1, "{at}: {region}");
    assert!(
        (end_line, end_column) >= (start_line, start_column),
        "{at}: region ends before it starts: {region}"
    );
}

/// GitHub's rules from "SARIF support for code scanning" and its upload limits.
fn check_github_rules(log: &Value, at: &str) {
    assert_eq!(log["version"], "2.1.0", "{at}");
    text(log, "/$schema", at);
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{at}: one run per upload");
    let run = &runs[0];
    text(run, "/tool/driver/name", at);
    text(run, "/tool/driver/semanticVersion", at);
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| text(r, "/id", at)).collect();
    assert_eq!(
        ids,
        gil_lint::lints::LINTS
            .iter()
            .map(|r| r.id)
            .collect::<Vec<_>>(),
        "{at}: every rule is described, in order"
    );
    for rule in rules {
        let at = format!("{at}: rule {}", rule["id"]);
        for pointer in ["/shortDescription/text", "/fullDescription/text"] {
            assert!(
                text(rule, pointer, &at).chars().count() <= 1024,
                "{at}: {pointer}"
            );
        }
        text(rule, "/help/text", &at);
        text(rule, "/help/markdown", &at);
        assert!(text(rule, "/name", &at).len() <= 255);
        let tags = rule["properties"]["tags"].as_array().unwrap();
        assert!(!tags.is_empty() && tags.len() <= 20, "{at}: tags");
        let precision = text(rule, "/properties/precision", &at);
        assert!(["very-high", "high", "medium", "low"].contains(&precision));
        let severity = text(rule, "/properties/problem.severity", &at);
        assert!(["error", "warning", "recommendation"].contains(&severity));
        let level = text(rule, "/defaultConfiguration/level", &at);
        assert!(["error", "warning", "note"].contains(&level));
        assert!(rule["properties"].get("security-severity").is_none());
    }
    let results = run["results"].as_array().unwrap();
    assert!(results.len() <= 25_000, "{at}: results per run");
    for (i, result) in results.iter().enumerate() {
        let at = format!("{at}: result {i}");
        let rule = text(result, "/ruleId", &at);
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(ids[index], rule, "{at}: ruleIndex");
        text(result, "/message/text", &at);
        let locations = result["locations"].as_array().unwrap();
        assert!(
            (1..=10).contains(&locations.len()),
            "{at}: 1 to 10 locations"
        );
        locations.iter().for_each(|l| check_location(l, &at));
        let hash = text(result, "/partialFingerprints/primaryLocationLineHash", &at);
        let (hex, n) = hash.split_once(':').expect("hash:count");
        assert!(u64::from_str_radix(hex, 16).is_ok() && n.parse::<u32>().unwrap() >= 1);
        let related = result["relatedLocations"].as_array().map_or(&[][..], |v| v);
        assert!(related.len() <= 1000, "{at}: related locations");
        for (k, location) in related.iter().enumerate() {
            assert_eq!(location["id"].as_u64(), Some(k as u64 + 1), "{at}");
            check_location(location, &at);
            text(location, "/message/text", &at);
        }
        // Every link in the message names a related location.
        let message = result["message"]["text"].as_str().unwrap();
        for link in message.split("](").skip(1) {
            let id: usize = link.split(')').next().unwrap().parse().unwrap();
            assert!((1..=related.len()).contains(&id), "{at}: link to {id}");
        }
        for flow in result["codeFlows"].as_array().map_or(&[][..], |v| v) {
            for thread in flow["threadFlows"].as_array().unwrap() {
                let steps = thread["locations"].as_array().unwrap();
                assert!(
                    !steps.is_empty() && steps.len() <= 10_000,
                    "{at}: thread flow"
                );
                for step in steps {
                    check_location(&step["location"], &at);
                    text(&step["location"], "/message/text", &at);
                }
            }
        }
    }
}

#[test]
fn every_fixture_s_sarif_meets_github_s_rules() {
    let root = here();
    let options = sarif::Options {
        root: &root,
        base_ids: true,
        invocation: Some(sarif::Invocation {
            arguments: vec!["check".into(), "--format".into(), "sarif".into()],
            working_directory: PathBuf::from("."),
            exit_code: 1,
        }),
    };
    let mut results = 0;
    for dir in fixture_dirs() {
        let log = sarif_of(std::slice::from_ref(&dir), &options);
        results += log["runs"][0]["results"].as_array().unwrap().len();
        check_github_rules(&log, &dir.display().to_string());
    }
    assert!(results > 20, "the fixtures have findings to check");
}

#[test]
fn deadlocks_have_one_thread_flow_per_thread() {
    let log = sarif_of(
        &[PathBuf::from("fixtures/mutex_inversion")],
        &sarif::Options::new(&here()),
    );
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "gil-lock-inversion");
    let threads = result["codeFlows"][0]["threadFlows"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    assert!(
        threads[0]["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("thread A:")
    );
    // Each thread's steps in the order it runs them: bound, takes the mutex, then (A) takes the
    // GIL where the finding is, or (B) waits for the mutex.
    let lines = |thread: &Value| -> Vec<u64> {
        thread["locations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                l.pointer("/location/physicalLocation/region/startLine")
                    .and_then(Value::as_u64)
                    .unwrap()
            })
            .collect()
    };
    assert_eq!(lines(&threads[0]), [34, 18, 20]);
    assert_eq!(lines(&threads[1]), [33, 13, 13]);
    let primary = result.pointer("/locations/0/physicalLocation/region/startLine");
    assert_eq!(primary, Some(&Value::from(20)));
}

#[test]
fn rule_help_is_the_rule_documentation() {
    let log = sarif_of(&[], &sarif::Options::new(&here()));
    for (rule, descriptor) in gil_lint::lints::LINTS.iter().zip(
        log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap(),
    ) {
        assert_eq!(descriptor["help"]["markdown"], rule.markdown().as_str());
        assert_eq!(descriptor["shortDescription"]["text"], rule.summary);
        let full = descriptor["fullDescription"]["text"].as_str().unwrap();
        assert!(
            rule.doc
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains(full.trim_end_matches('…')),
            "{}: fullDescription is the `What it finds` section",
            rule.id
        );
    }
}

#[test]
fn fingerprints_survive_lines_added_above() {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new("fixtures/seed_call_once_import");
    let copy = |prefix: &str| {
        for entry in std::fs::read_dir(source).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(
                dir.path().join(path.file_name().unwrap()),
                format!("{prefix}{text}"),
            )
            .unwrap();
        }
    };
    let fingerprints = || {
        let log = sarif_of(&[dir.path().to_path_buf()], &sarif::Options::new(&here()));
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["partialFingerprints"].clone(),
                    r["locations"][0]["physicalLocation"]["region"]["startLine"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    copy("");
    let before = fingerprints();
    copy("// A new licence header.\n\n");
    let after = fingerprints();
    assert_eq!(before.len(), after.len());
    for ((print_before, line_before), (print_after, line_after)) in before.iter().zip(&after) {
        assert_eq!(
            line_after.as_u64().unwrap(),
            line_before.as_u64().unwrap() + 2
        );
        assert_eq!(print_before, print_after);
    }
}

#[test]
fn sarif_snapshot() {
    let log = sarif_of(
        &[PathBuf::from("fixtures/seed_call_once_import")],
        &sarif::Options::new(&here()),
    );
    // The rules' documentation is checked above; the snapshot shows the results.
    let results = serde_json::to_string_pretty(&log["runs"][0]["results"]).unwrap();
    insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("sarif-seed_call_once_import", results);
    });
}

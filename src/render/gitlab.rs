//! `--format gitlab`: a GitLab Code Quality report (`artifacts:reports:codequality`), the subset of
//! the Code Climate format that GitLab reads, shaped as ruff writes it: `check_name`, a
//! `description` that starts with the rule (GitLab does not show `check_name`), `severity`, a
//! `fingerprint` unique in the report, and `location` with the path relative to the repository
//! root (as GitLab resolves it) and `positions`.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::baseline;
use crate::diagnostic::{Finding, Severity};
use crate::model::Program;
use crate::repo::RepoRoot;

#[derive(Serialize)]
struct Issue<'a> {
    check_name: &'a str,
    description: String,
    severity: &'static str,
    fingerprint: String,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    positions: Positions,
}

#[derive(Serialize)]
struct Positions {
    begin: Position,
    end: Position,
}

#[derive(Serialize)]
struct Position {
    line: usize,
    column: usize,
}

pub fn render(program: &Program, findings: &[Finding], root: &RepoRoot) -> String {
    let mut seen = BTreeSet::new();
    let issues: Vec<Issue> = findings
        .iter()
        .map(|f| {
            let at = super::place(program, f.primary);
            // The baselines' fingerprint, which survives lines moving; GitLab needs each one once.
            let base = baseline::fingerprint(program, f, root);
            let mut fingerprint = base.clone();
            for n in 2.. {
                if seen.insert(fingerprint.clone()) {
                    break;
                }
                fingerprint = format!("{base}-{n}");
            }
            Issue {
                check_name: f.rule,
                description: format!("{}: {}", f.rule, f.message),
                severity: match f.severity {
                    Severity::Error => "major",
                    Severity::Warning => "minor",
                },
                fingerprint,
                location: Location {
                    path: root.name(&program.file(f.primary.file).path),
                    positions: Positions {
                        begin: Position {
                            line: at.line,
                            column: at.column,
                        },
                        end: Position {
                            line: at.end_line,
                            column: at.end_column,
                        },
                    },
                },
            }
        })
        .collect();
    serde_json::to_string_pretty(&issues).expect("plain data serialises") + "\n"
}

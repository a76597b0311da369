//! Baselines, for adopting gil-lint on a codebase that already has findings: `--write-baseline
//! FILE` records the current findings, `--baseline FILE` reports only the ones not recorded.
//!
//! A finding is recorded by its rule and a fingerprint of its rule, file, function and the text of
//! its primary line with all whitespace removed, so a finding keeps its fingerprint when lines are
//! added above it or it is re-indented, and loses it when its own line changes. Several findings
//! with one fingerprint are counted.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::diagnostic::Finding;
use crate::model::Program;

const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    findings: Vec<Entry>,
}

/// One recorded finding; `path` and `message` are for people reading the file.
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    rule: String,
    fingerprint: String,
    path: String,
    message: String,
}

pub struct Baseline {
    /// `(rule, fingerprint)` -> how many findings it still accepts.
    remaining: BTreeMap<(String, String), usize>,
}

/// What applying a baseline did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Findings the baseline accepted (not reported).
    pub matched: usize,
    /// Baseline entries no finding matched: fixed since, or changed.
    pub stale: usize,
}

/// FNV-1a, 64 bits: stable across platforms and releases (unlike `std`'s hasher).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// The finding's fingerprint: 16 hex digits.
pub fn fingerprint(program: &Program, finding: &Finding) -> String {
    let file = &program.file(finding.primary.file);
    let line = file.line_col(finding.primary.start).0;
    let start = file.line_start(line - 1);
    let end = file.text[start..]
        .find('\n')
        .map_or(file.text.len(), |e| start + e);
    let content: String = file.text[start..end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let path = file.path.to_string_lossy().replace('\\', "/");
    format!(
        "{:016x}",
        fnv1a(&[finding.rule, &path, &finding.function, &content])
    )
}

/// The baseline file for `findings`, sorted so that rewriting it gives a small diff.
pub fn write(program: &Program, findings: &[Finding]) -> String {
    let mut entries: Vec<Entry> = findings
        .iter()
        .map(|f| Entry {
            rule: f.rule.to_string(),
            fingerprint: fingerprint(program, f),
            path: program
                .file(f.primary.file)
                .path
                .to_string_lossy()
                .replace('\\', "/"),
            message: f.message.clone(),
        })
        .collect();
    entries.sort();
    let file = File {
        version: VERSION,
        findings: entries,
    };
    serde_json::to_string_pretty(&file).expect("plain data serialises") + "\n"
}

impl Baseline {
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the baseline: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Baseline, String> {
        let file: File =
            serde_json::from_str(text).map_err(|e| format!("not a gil-lint baseline: {e}"))?;
        if file.version != VERSION {
            return Err(format!(
                "baseline version {} is not supported (expected {VERSION}); rewrite it with \
                 --write-baseline",
                file.version
            ));
        }
        let mut remaining = BTreeMap::new();
        for entry in file.findings {
            *remaining
                .entry((entry.rule, entry.fingerprint))
                .or_insert(0) += 1;
        }
        Ok(Baseline { remaining })
    }

    /// Removes the findings the baseline accepts.
    pub fn apply(mut self, program: &Program, findings: &mut Vec<Finding>) -> Applied {
        let before = findings.len();
        findings.retain(|f| {
            let key = (f.rule.to_string(), fingerprint(program, f));
            match self.remaining.get_mut(&key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            }
        });
        Applied {
            matched: before - findings.len(),
            stale: self.remaining.values().sum(),
        }
    }
}

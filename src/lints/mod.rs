//! The checks (clippy's word: lints), one file each, declared with `declare_lint!` so that the
//! declaration (id, group, severity, SARIF precision and tags, the version that added it, summary
//! and doc comment) is the single source of `gil-lint --explain`, `gil-lint rules`, `docs/rules/`,
//! the SARIF rule descriptors and the README's table of rules.
//! Users know each by its rule id (`missing-gil`). Not to be confused with the top-level `rules/`
//! folder: the frameworks' facts as data (what needs the GIL, what releases it, what waits), which
//! [`crate::knowledge`] loads and these checks read through the analysis.

use std::collections::BTreeSet;

use crate::analysis::{Facts, Witness};
use crate::callgraph::CallGraph;
use crate::diagnostic::{Finding, Flow, Severity, Step};
use crate::model::Program;

mod gil_held_blocking;
mod gil_lock_inversion;
mod missing_gil;
pub mod unused_suppression;

pub struct Lint {
    pub id: &'static str,
    /// What kind of problem it finds (`gil-lint rules`, the README's table).
    pub group: Group,
    pub default_severity: Severity,
    /// How often a finding is a real problem: SARIF's `precision`, by which GitHub orders alerts.
    pub precision: Precision,
    /// SARIF's `tags`, by which GitHub filters alerts (`external/cwe/cwe-N` links a CWE).
    pub tags: &'static [&'static str],
    /// The gil-lint version that first had the rule.
    pub added_in: &'static str,
    /// One line, lowercase, no period.
    pub summary: &'static str,
    /// Markdown: What it finds / Why is this bad? / Example / Use instead / Known problems.
    pub doc: &'static str,
    pub check: fn(&Program, &Facts) -> Vec<Finding>,
}

/// The kind of problem a rule finds, as clippy's lint groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Code that crashes or deadlocks.
    Correctness,
    /// gil-lint's own comments and settings that no longer say anything true.
    Maintenance,
}

/// SARIF's `precision` of a rule's findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    VeryHigh,
    High,
    Medium,
    Low,
}

impl Group {
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Correctness => "correctness",
            Group::Maintenance => "maintenance",
        }
    }
}

impl Precision {
    /// As SARIF writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::VeryHigh => "very-high",
            Precision::High => "high",
            Precision::Medium => "medium",
            Precision::Low => "low",
        }
    }
}

/// Declares a rule, everything about it in one place (as clippy's `declare_clippy_lint!`): its doc
/// comment becomes [`Lint::doc`], and `gil-lint --explain`, `gil-lint rules`, `docs/rules/`, the
/// SARIF rule descriptors and the README's table of rules (checked by `tests/docs.rs`) are made
/// from the declaration.
macro_rules! declare_lint {
    ($(#[doc = $doc:literal])* pub static $name:ident = {
        id: $id:literal,
        group: $group:expr,
        severity: $severity:expr,
        precision: $precision:expr,
        tags: [$($tag:literal),* $(,)?],
        added_in: $added_in:literal,
        summary: $summary:literal,
        check: $check:path $(,)?
    }) => {
        $(#[doc = $doc])*
        pub static $name: $crate::lints::Lint = $crate::lints::Lint {
            id: $id,
            group: $group,
            default_severity: $severity,
            precision: $precision,
            tags: &[$($tag),*],
            added_in: $added_in,
            summary: $summary,
            doc: concat!($($doc, "\n"),*),
            check: $check,
        };
    };
}
pub(crate) use declare_lint;

/// Every rule gil-lint reports, in the order of `gil-lint rules` and of SARIF's `ruleIndex`: the
/// analysis rules, then `unused-suppression` (which [`crate::suppress`] reports; its `check`
/// finds nothing).
pub static LINTS: &[&Lint] = &[
    &missing_gil::MISSING_GIL,
    &gil_lock_inversion::GIL_LOCK_INVERSION,
    &gil_held_blocking::GIL_HELD_BLOCKING,
    &unused_suppression::UNUSED_SUPPRESSION,
];

/// A rule of [`LINTS`] by id.
pub fn find(id: &str) -> Option<&'static Lint> {
    LINTS.iter().copied().find(|r| r.id == id)
}

/// Where a rule's documentation is published: its page in `docs/rules/`.
pub fn doc_url(id: &str) -> String {
    format!(
        "{}/blob/main/docs/rules/{id}.md",
        env!("CARGO_PKG_REPOSITORY")
    )
}

impl Lint {
    /// The doc as Markdown, with the one-space indent of doc comments removed.
    pub fn markdown(&self) -> String {
        let body: Vec<&str> = self
            .doc
            .lines()
            .map(|l| l.strip_prefix(' ').unwrap_or(l))
            .collect();
        format!(
            "# {}\n\n{}\n\n{}\n",
            self.id,
            self.summary,
            body.join("\n").trim()
        )
    }
}

/// Runs every rule (`unused-suppression` finds nothing here); findings come back in a
/// deterministic order.
pub fn check_all(program: &Program, graph: &CallGraph) -> Vec<Finding> {
    let facts = Facts::build(program, graph);
    let mut findings: Vec<Finding> = LINTS
        .iter()
        .flat_map(|r| (r.check)(program, &facts))
        .collect();
    findings.sort_by(|a, b| {
        let key = |f: &Finding| {
            (
                program.file(f.primary.file).path.clone(),
                f.primary.start,
                f.rule,
            )
        };
        key(a).cmp(&key(b))
    });
    findings
}

/// A witness's path as a flow, ending with a step at the witness itself.
fn flow_ending_at(program: &Program, witness: &Witness, title: String, last: String) -> Flow {
    let mut steps = witness.trace.clone();
    steps.push(Step {
        guessed: false,
        span: witness.at,
        function: program.functions[witness.function].qualname.clone(),
        note: last,
    });
    Flow { title, steps }
}

/// "`a`, `b` and 3 more", for notes.
fn binding_list(program: &Program, bindings: &BTreeSet<usize>) -> String {
    const SHOWN: usize = 8;
    let mut names: Vec<String> = bindings
        .iter()
        .map(|&b| format!("`{}`", program.bindings[b].name))
        .collect();
    names.dedup();
    let more = names.len().saturating_sub(SHOWN);
    names.truncate(SHOWN);
    let mut list = names.join(", ");
    if more > 0 {
        list.push_str(&format!(" and {more} more"));
    }
    list
}

/// The text for the language of the file `at` is in.
fn by_language(program: &Program, at: crate::model::Span, cpp: &str, rust: &str) -> String {
    match program.file(at.file).language {
        crate::model::Language::Cpp => cpp.to_string(),
        crate::model::Language::Rust => rust.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_are_well_formed() {
        let version = |v: &str| -> Vec<u32> {
            v.split('.')
                .map(|n| n.parse().unwrap_or_else(|_| panic!("version `{v}`")))
                .collect()
        };
        let crate_version = version(env!("CARGO_PKG_VERSION"));
        for (i, lint) in LINTS.iter().enumerate() {
            let id = lint.id;
            assert!(
                !id.is_empty()
                    && id
                        .split('-')
                        .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase())),
                "`{id}` is not kebab-case"
            );
            assert!(
                LINTS[..i].iter().all(|other| other.id != id),
                "`{id}` declared twice"
            );
            assert_eq!(version(lint.added_in).len(), 3, "{id}: added_in");
            assert!(version(lint.added_in) <= crate_version, "{id}: added_in");
            assert!(!lint.tags.is_empty(), "{id}: no SARIF tags");
            assert!(
                !lint.summary.ends_with('.') && !lint.summary.starts_with(char::is_uppercase),
                "{id}: summary"
            );
            assert!(std::ptr::eq(find(id).unwrap(), *lint));
        }
        assert!(find("no-such-rule").is_none());
    }
}

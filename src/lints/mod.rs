//! The checks (clippy's word: lints), one file each, declared with `declare_lint!` so that the
//! doc comment is the single source of `gil-lint --explain`, `gil-lint rules` and `docs/rules/`.
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

pub struct Lint {
    pub id: &'static str,
    pub default_severity: Severity,
    /// One line, lowercase, no period.
    pub summary: &'static str,
    /// Markdown: What it finds / Why is this bad? / Example / Use instead / Known problems.
    pub doc: &'static str,
    pub check: fn(&Program, &Facts) -> Vec<Finding>,
}

/// Declares a rule: its doc comment becomes [`Lint::doc`].
macro_rules! declare_lint {
    ($(#[doc = $doc:literal])* pub static $name:ident = {
        id: $id:literal, severity: $severity:expr, summary: $summary:literal, check: $check:path $(,)?
    }) => {
        $(#[doc = $doc])*
        pub static $name: $crate::lints::Lint = $crate::lints::Lint {
            id: $id,
            default_severity: $severity,
            summary: $summary,
            doc: concat!($($doc, "\n"),*),
            check: $check,
        };
    };
}
pub(crate) use declare_lint;

pub static LINTS: &[&Lint] = &[
    &missing_gil::MISSING_GIL,
    &gil_lock_inversion::GIL_LOCK_INVERSION,
    &gil_held_blocking::GIL_HELD_BLOCKING,
];

pub fn find(id: &str) -> Option<&'static Lint> {
    LINTS.iter().copied().find(|r| r.id == id)
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

/// Runs every rule; findings come back in a deterministic order.
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
        crate::frontend::Language::Cpp => cpp.to_string(),
        crate::frontend::Language::Rust => rust.to_string(),
    }
}

//! The rules: one file each, declared with [`declare_rule!`] so that the doc comment is the single
//! source of `gil-lint --explain`, `gil-lint rules` and `docs/rules/`.

use crate::callgraph::CallGraph;
use crate::diagnostic::{Finding, Severity};
use crate::model::Program;

mod missing_gil;

pub struct Rule {
    pub id: &'static str,
    pub default_severity: Severity,
    /// One line, lowercase, no period.
    pub summary: &'static str,
    /// Markdown: What it finds / Why is this bad? / Example / Use instead / Known problems.
    pub doc: &'static str,
    pub check: fn(&Program, &CallGraph) -> Vec<Finding>,
}

/// Declares a rule: its doc comment becomes [`Rule::doc`].
macro_rules! declare_rule {
    ($(#[doc = $doc:literal])* pub static $name:ident = {
        id: $id:literal, severity: $severity:expr, summary: $summary:literal, check: $check:path $(,)?
    }) => {
        $(#[doc = $doc])*
        pub static $name: $crate::rules::Rule = $crate::rules::Rule {
            id: $id,
            default_severity: $severity,
            summary: $summary,
            doc: concat!($($doc, "\n"),*),
            check: $check,
        };
    };
}
pub(crate) use declare_rule;

pub static RULES: &[&Rule] = &[&missing_gil::MISSING_GIL];

pub fn find(id: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.id == id)
}

impl Rule {
    /// The doc as Markdown, with the one-space indent of doc comments removed.
    pub fn markdown(&self) -> String {
        let body: Vec<&str> =
            self.doc.lines().map(|l| l.strip_prefix(' ').unwrap_or(l)).collect();
        format!("# {}\n\n{}\n\n{}\n", self.id, self.summary, body.join("\n").trim())
    }
}

/// Runs every rule; findings come back in a deterministic order.
pub fn check_all(program: &Program, graph: &CallGraph) -> Vec<Finding> {
    let mut findings: Vec<Finding> = RULES.iter().flat_map(|r| (r.check)(program, graph)).collect();
    findings.sort_by(|a, b| {
        let key = |f: &Finding| (program.files[f.primary.file].path.clone(), f.primary.start, f.rule);
        key(a).cmp(&key(b))
    });
    findings
}

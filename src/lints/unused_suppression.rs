//! `unused-suppression`: declared here with the other checks; the suppressions themselves are
//! read and matched in [`crate::suppress`], which reports it.

use super::{Group, Precision, declare_lint};
use crate::analysis::Facts;
use crate::diagnostic::{Finding, Severity};
use crate::model::Program;

declare_lint! {
    /// ## What it finds
    /// A `// gil-lint: allow(rule)` or `// gil-lint: allow-file(rule)` comment that suppresses no
    /// finding, names a rule gil-lint does not have, or cannot be read. It is reported only under
    /// `--warn-unused-suppressions` (or `warn-unused-suppressions = true` in the configuration).
    ///
    /// ## Why is this bad?
    /// A suppression outlives the finding it was written for: once the code is fixed, or the
    /// finding moves to another line, the comment stays and would hide a new finding of the same
    /// rule on that line. A misspelt rule name suppresses nothing at all.
    ///
    /// ## Example
    /// ```cpp
    /// // gil-lint: allow(missing-gil)
    /// int add(int a, int b) { return a + b; }  // no Python API here any more
    /// ```
    ///
    /// Use instead: remove the comment, or correct the rule's name (`gil-lint rules` lists them).
    ///
    /// ## Known problems
    /// A suppression of a rule that was not selected for the run cannot be checked and is never
    /// reported.
    pub static UNUSED_SUPPRESSION = {
        id: "unused-suppression",
        group: Group::Maintenance,
        severity: Severity::Warning,
        precision: Precision::VeryHigh,
        tags: ["maintainability"],
        added_in: "0.1.0",
        summary: "a gil-lint suppression comment that suppresses nothing",
        check: no_check,
    }
}

/// Reported by [`crate::suppress::apply`], not by the rule pass.
fn no_check(_: &Program, _: &Facts) -> Vec<Finding> {
    Vec::new()
}

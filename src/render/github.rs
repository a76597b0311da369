//! `--format github`: GitHub Actions workflow commands (`::error title=…,file=…,line=…::…`), which
//! GitHub shows as annotations on the workflow run and on a pull request's changed lines, without
//! code scanning (ruff's `github`). `file` is relative to the repository root, as GitHub resolves
//! it; the message repeats the place as shown elsewhere and the rule.

use crate::diagnostic::{Finding, Severity};
use crate::model::Program;
use crate::repo::RepoRoot;

pub fn render(program: &Program, findings: &[Finding], root: &RepoRoot) -> String {
    findings
        .iter()
        .map(|f| {
            let at = super::place(program, f.primary);
            let level = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let file = root.name(&program.file(f.primary.file).path);
            format!(
                "::{level} title={},file={},line={},col={},endLine={},endColumn={}::{}\n",
                property(&format!("gil-lint ({})", f.rule)),
                property(&file),
                at.line,
                at.column,
                at.end_line,
                at.end_column,
                data(&format!(
                    "{}:{}:{}: {} {}",
                    at.path, at.line, at.column, f.rule, f.message
                )),
            )
        })
        .collect()
}

/// A command's message, escaped as `@actions/core` escapes it: a newline would end the command.
fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A command's property value: also no `:` or `,`, which end a property.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_escaped() {
        assert_eq!(data("a%b\r\nc"), "a%25b%0D%0Ac");
        assert_eq!(property("x: a,b"), "x%3A a%2Cb");
    }
}

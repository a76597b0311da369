//! Suppression comments: `// gil-lint: allow(rule, ...)` at the end of a finding's primary line,
//! or alone on the line above it, and `// gil-lint: allow-file(rule, ...)` anywhere in a file for
//! all of that file's findings of those rules. Block comments (`/* ... */`) work too. Text after
//! the closing parenthesis is free, for the reason: `// gil-lint: allow(missing-gil) -- GIL held
//! by the caller`.
//!
//! With `--warn-unused-suppressions`, a suppression that suppresses nothing, names an unknown rule
//! or is malformed is reported as an `unused-suppression` finding. A suppression of a rule that
//! did not run (not selected) is not reported.

use crate::analysis::Facts;
use crate::diagnostic::{Finding, Severity};
use crate::model::{FileId, Program, Span};
use crate::rules::declare_rule;

declare_rule! {
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
        severity: Severity::Warning,
        summary: "a gil-lint suppression comment that suppresses nothing",
        check: no_check,
    }
}

/// Reported by [`apply`], not by the rule pass.
fn no_check(_: &Program, _: &Facts) -> Vec<Finding> {
    Vec::new()
}

/// One rule named in one suppression comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    pub file: FileId,
    /// 1-based line of the comment.
    pub line: usize,
    /// The comment is alone on its line, so it also covers the next line.
    pub covers_next: bool,
    pub file_level: bool,
    /// The rule as written; empty for a malformed comment.
    pub rule: String,
    /// The rule's name in the comment (for a malformed comment: the text after `gil-lint:`).
    pub span: Span,
}

const MARKER: &str = "gil-lint:";

/// The suppression comments of one file.
pub fn scan(file: FileId, text: &str) -> Vec<Directive> {
    let mut directives = Vec::new();
    let mut line_start = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let mut from = 0;
        while let Some(found) = line[from..].find(MARKER) {
            let at = from + found;
            from = at + MARKER.len();
            let before = &line[..at];
            if !(before.contains("//") || before.contains("/*")) {
                continue;
            }
            let trimmed = line.trim_start();
            let covers_next = trimmed.starts_with("//") || trimmed.starts_with("/*");
            let mut push = |rule: &str, start: usize, file_level: bool| {
                directives.push(Directive {
                    file,
                    line: index + 1,
                    covers_next,
                    file_level,
                    rule: rule.to_string(),
                    span: Span {
                        file,
                        start: (line_start + start) as u32,
                        end: (line_start + start + rule.len().max(1)) as u32,
                    },
                });
            };
            let rest = &line[from..];
            let body = rest.trim_start();
            let body_at = from + (rest.len() - body.len());
            let parsed = [("allow-file(", true), ("allow(", false)]
                .into_iter()
                .find_map(|(open, file_level)| {
                    let list = body.strip_prefix(open)?;
                    let close = list.find(')')?;
                    Some((body_at + open.len(), &list[..close], file_level))
                });
            match parsed {
                Some((list_at, list, file_level)) if !list.trim().is_empty() => {
                    let mut offset = 0;
                    for part in list.split(',') {
                        let name = part.trim();
                        if !name.is_empty() {
                            let start = list_at + offset + (part.len() - part.trim_start().len());
                            push(name, start, file_level);
                        }
                        offset += part.len() + 1;
                    }
                }
                _ => push("", body_at, false),
            }
        }
        line_start += line.len();
    }
    directives
}

/// What [`apply`] did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Findings removed by a suppression.
    pub suppressed: usize,
    /// `unused-suppression` findings (empty unless asked for).
    pub unused: Vec<Finding>,
}

impl Directive {
    fn covers(&self, program: &Program, finding: &Finding) -> bool {
        if finding.rule != self.rule || finding.primary.file != self.file {
            return false;
        }
        let line = program.file(self.file).line_col(finding.primary.start).0;
        self.file_level || line == self.line || (self.covers_next && line == self.line + 1)
    }
}

/// Removes the suppressed findings. With `report_unused`, returns a finding for each suppression
/// of a rule that ran (`ran`) which matched nothing, and for each unknown rule (`known`) or
/// malformed comment.
pub fn apply(
    program: &Program,
    findings: &mut Vec<Finding>,
    known: impl Fn(&str) -> bool,
    ran: impl Fn(&str) -> bool,
    report_unused: bool,
) -> Applied {
    let directives: Vec<Directive> = program
        .files
        .iter()
        .enumerate()
        .flat_map(|(id, file)| scan(id as FileId, &file.text))
        .collect();
    if directives.is_empty() {
        return Applied::default();
    }
    let mut used = vec![false; directives.len()];
    let before = findings.len();
    findings.retain(|finding| {
        let mut suppressed = false;
        for (d, directive) in directives.iter().enumerate() {
            if directive.covers(program, finding) {
                used[d] = true;
                suppressed = true;
            }
        }
        !suppressed
    });
    let mut applied = Applied {
        suppressed: before - findings.len(),
        unused: Vec::new(),
    };
    if !report_unused {
        return applied;
    }
    for (directive, used) in directives.iter().zip(used) {
        let (message, label) = if directive.rule.is_empty() {
            (
                "malformed gil-lint comment".to_string(),
                "expected `allow(rule, ...)` or `allow-file(rule, ...)`".to_string(),
            )
        } else if !known(&directive.rule) {
            (
                format!("`{}` is not a gil-lint rule", directive.rule),
                "unknown rule; `gil-lint rules` lists them".to_string(),
            )
        } else if !used && ran(&directive.rule) {
            let place = if directive.file_level {
                "in this file"
            } else if directive.covers_next {
                "on this line or the next"
            } else {
                "on this line"
            };
            (
                format!("unused suppression of `{}`", directive.rule),
                format!("no `{}` finding {place}", directive.rule),
            )
        } else {
            continue;
        };
        applied.unused.push(Finding {
            rule: UNUSED_SUPPRESSION.id,
            severity: UNUSED_SUPPRESSION.default_severity,
            message,
            primary: directive.span,
            primary_label: label,
            function: String::new(),
            flows: Vec::new(),
            notes: Vec::new(),
            help: Some("remove the suppression".to_string()),
        });
    }
    applied
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<(usize, bool, bool, String, String)> {
        scan(0, text)
            .into_iter()
            .map(|d| {
                let written = text[d.span.range()].to_string();
                (d.line, d.covers_next, d.file_level, d.rule, written)
            })
            .collect()
    }

    #[test]
    fn reads_line_file_and_block_comments() {
        let text = "int a;  // gil-lint: allow(missing-gil, gil-held-blocking) -- why\n\
                    // gil-lint: allow-file( missing-gil )\n\
                    /* gil-lint: allow(gil-lock-inversion) */\n\
                    const char* s = \"gil-lint: allow(missing-gil)\";\n";
        assert_eq!(
            rules(text),
            [
                (1, false, false, "missing-gil".into(), "missing-gil".into()),
                (
                    1,
                    false,
                    false,
                    "gil-held-blocking".into(),
                    "gil-held-blocking".into()
                ),
                (2, true, true, "missing-gil".into(), "missing-gil".into()),
                (
                    3,
                    true,
                    false,
                    "gil-lock-inversion".into(),
                    "gil-lock-inversion".into()
                ),
            ]
        );
    }

    #[test]
    fn malformed_comments_are_kept_for_reporting() {
        let text = "// gil-lint: alow(missing-gil)\n// gil-lint: allow()\n";
        let found = rules(text);
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|(_, _, _, rule, _)| rule.is_empty()));
    }
}

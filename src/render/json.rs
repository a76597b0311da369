//! `--format json`: a stable, versioned document for tools.

use serde::Serialize;

use crate::diagnostic::{Confidence, Finding, Severity};
use crate::model::{Program, Span};

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    findings: Vec<JsonFinding<'a>>,
    files_scanned: usize,
    errors: &'a [String],
}

#[derive(Serialize)]
pub(crate) struct JsonFinding<'a> {
    rule: &'a str,
    severity: Severity,
    /// `low` when a path follows a guessed call.
    confidence: Confidence,
    message: &'a str,
    path: String,
    line: usize,
    column: usize,
    trace: Vec<JsonStep<'a>>,
    /// What the human format shows under the finding.
    notes: &'a [String],
    /// How to fix it, when the rule knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<&'a str>,
}

#[derive(Serialize)]
pub(crate) struct JsonStep<'a> {
    /// 1-based thread of a deadlock's flows; absent when the finding has a single path.
    #[serde(skip_serializing_if = "Option::is_none")]
    thread: Option<usize>,
    path: String,
    line: usize,
    column: usize,
    function: &'a str,
    note: &'a str,
    /// The step is a call whose target was guessed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    guessed: bool,
}

fn location(program: &Program, span: Span) -> (String, usize, usize) {
    let place = super::place(program, span);
    (place.path, place.line, place.column)
}

pub fn render(program: &Program, findings: &[Finding], errors: &[String]) -> String {
    let document = Document {
        version: 1,
        findings: json_findings(program, findings),
        files_scanned: program.files.len(),
        errors,
    };
    serde_json::to_string_pretty(&document).expect("plain data serialises") + "\n"
}

/// Each finding as `--format json` and `--format json-lines` write it.
pub(crate) fn json_findings<'a>(
    program: &Program,
    findings: &'a [Finding],
) -> Vec<JsonFinding<'a>> {
    findings
        .iter()
        .map(|f| {
            let (path, line, column) = location(program, f.primary);
            let threaded = f.flows.len() > 1;
            let mut trace: Vec<JsonStep> = f
                .flows
                .iter()
                .enumerate()
                .flat_map(|(i, flow)| flow.steps.iter().map(move |s| (i, s)))
                .map(|(i, s)| {
                    let (path, line, column) = location(program, s.span);
                    let thread = threaded.then_some(i + 1);
                    JsonStep {
                        thread,
                        path,
                        line,
                        column,
                        function: &s.function,
                        note: &s.note,
                        guessed: s.guessed,
                    }
                })
                .collect();
            // The trace ends at the finding's location, once.
            let ends_at_primary = f
                .flows
                .iter()
                .any(|flow| flow.steps.last().is_some_and(|s| s.span == f.primary));
            if !ends_at_primary {
                trace.push(JsonStep {
                    thread: None,
                    path: path.clone(),
                    line,
                    column,
                    function: &f.function,
                    note: &f.primary_label,
                    guessed: false,
                });
            }
            JsonFinding {
                rule: f.rule,
                severity: f.severity,
                confidence: f.confidence(),
                message: &f.message,
                path,
                line,
                column,
                trace,
                notes: &f.notes,
                help: f.help.as_deref(),
            }
        })
        .collect()
}

//! `--format rdjson`: reviewdog's Diagnostic Format (`reviewdog -f=rdjson`), as ruff writes it:
//! one diagnostic per finding with its range (columns in UTF-8 bytes, the end exclusive, as the
//! format says), severity, rule code and its documentation's URL. Paths are relative to the
//! current directory, which reviewdog resolves them against.

use serde::Serialize;

use crate::diagnostic::{Finding, Severity};
use crate::model::{Program, Span};

#[derive(Serialize)]
struct DiagnosticResult<'a> {
    source: Source,
    diagnostics: Vec<Diagnostic<'a>>,
}

#[derive(Serialize)]
struct Source {
    name: &'static str,
    url: &'static str,
}

#[derive(Serialize)]
struct Diagnostic<'a> {
    message: &'a str,
    location: Location,
    severity: &'static str,
    code: Code<'a>,
}

#[derive(Serialize)]
struct Location {
    path: String,
    range: Range,
}

#[derive(Serialize)]
struct Range {
    start: Position,
    end: Position,
}

#[derive(Serialize)]
struct Position {
    line: usize,
    column: usize,
}

#[derive(Serialize)]
struct Code<'a> {
    value: &'a str,
    url: String,
}

/// 1-based line and 1-based column in UTF-8 bytes of a byte offset.
fn byte_position(program: &Program, span: Span, offset: u32) -> Position {
    let file = program.file(span.file);
    let offset = (offset as usize).min(file.text.len());
    let line = file.line_of(offset);
    Position {
        line: line + 1,
        column: offset - file.line_start(line) + 1,
    }
}

pub fn render(program: &Program, findings: &[Finding]) -> String {
    let diagnostics = findings
        .iter()
        .map(|f| Diagnostic {
            message: &f.message,
            location: Location {
                path: super::place(program, f.primary).path,
                range: Range {
                    start: byte_position(program, f.primary, f.primary.start),
                    end: byte_position(program, f.primary, f.primary.end.max(f.primary.start)),
                },
            },
            severity: match f.severity {
                Severity::Error => "ERROR",
                Severity::Warning => "WARNING",
            },
            code: Code {
                value: f.rule,
                url: crate::lints::doc_url(f.rule),
            },
        })
        .collect();
    let result = DiagnosticResult {
        source: Source {
            name: "gil-lint",
            url: env!("CARGO_PKG_REPOSITORY"),
        },
        diagnostics,
    };
    serde_json::to_string_pretty(&result).expect("plain data serialises") + "\n"
}

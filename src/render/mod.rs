//! Renderers: the same findings as rustc-like text, JSON or SARIF, and the formats that other
//! tools read (named as ruff names them): `concise` lines, `github` workflow commands, the
//! `gitlab` Code Quality report, `json-lines`, `junit` XML and reviewdog's `rdjson`.

pub mod concise;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod json;
pub mod json_lines;
pub mod junit;
pub mod rdjson;
pub mod sarif;

use crate::model::{Program, Span};

/// Where a span is, for the formats that give one position: the file as shown (relative to the
/// current directory when it can be, with `/`), and 1-based lines and columns in characters.
pub(crate) struct Place {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

pub(crate) fn place(program: &Program, span: Span) -> Place {
    let file = program.file(span.file);
    let (line, column) = file.line_col(span.start);
    let (end_line, end_column) = file.line_col(span.end.max(span.start));
    Place {
        path: file.path.to_string_lossy().replace('\\', "/"),
        line,
        column,
        end_line,
        end_column,
    }
}

//! `--format json-lines`: each finding of `--format json` as one JSON object on its own line
//! (ruff's `json-lines`), for tools that read a stream.

use crate::diagnostic::Finding;
use crate::model::Program;

pub fn render(program: &Program, findings: &[Finding]) -> String {
    super::json::json_findings(program, findings)
        .iter()
        .map(|f| serde_json::to_string(f).expect("plain data serialises") + "\n")
        .collect()
}

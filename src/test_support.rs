//! For the unit tests of the resolver, the analysis and each lint: a small program made from
//! source snippets by the front-ends, as the pipeline makes it (without the pre-filter, which only
//! skips files), and findings written down as what the tests assert.

use std::path::{Path, PathBuf};

use crate::analysis::Facts;
use crate::callgraph::CallGraph;
use crate::diagnostic::Finding;
use crate::frontend;
use crate::knowledge::Knowledge;
use crate::model::{Language, Program, SourceFile};

/// The pybind11 preamble of the C++ snippets (the front-end needs only the namespace alias).
pub const PYBIND11: &str =
    "#include <mutex>\n#include <pybind11/pybind11.h>\nnamespace py = pybind11;\n";

/// `files` as `(path, text)` modelled with the built-in knowledge, and the analysis of them.
pub fn analyse(files: &[(&str, &str)]) -> (Program, Facts) {
    let mut program = program(files);
    program.qualify_member_locks();
    let graph = CallGraph::build(&program);
    let facts = Facts::build(&program, &graph);
    (program, facts)
}

/// `files` as `(path, text)` modelled with the built-in knowledge.
pub fn program(files: &[(&str, &str)]) -> Program {
    let knowledge = Knowledge::builtin();
    let mut program = Program::default();
    for &(path, text) in files {
        let language = Language::of(Path::new(path)).expect("a C++ or Rust file name");
        let model = frontend::extract(language, Path::new(path), text, &knowledge)
            .unwrap_or_else(|reason| panic!("{path}: {reason}"));
        program.add_file(
            SourceFile::new(PathBuf::from(path), language, text.to_string()),
            model,
        );
    }
    program
}

/// A C++ file's text: [`PYBIND11`] then `body`.
pub fn cpp(body: &str) -> String {
    format!("{PYBIND11}{body}")
}

/// A finding as the tests assert it: rule, 1-based line of the primary location, function,
/// message.
#[derive(Debug, PartialEq, Eq)]
pub struct Seen {
    pub rule: &'static str,
    pub line: usize,
    pub function: String,
    pub message: String,
}

pub fn seen(program: &Program, findings: &[Finding]) -> Vec<Seen> {
    findings
        .iter()
        .map(|f| Seen {
            rule: f.rule,
            line: program.file(f.primary.file).line_col(f.primary.start).0,
            function: f.function.clone(),
            message: f.message.clone(),
        })
        .collect()
}

/// The 1-based line of the first line of `text` that contains `marker`.
pub fn line_of(text: &str, marker: &str) -> usize {
    text.lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no line contains `{marker}`"))
        + 1
}

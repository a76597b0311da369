//! gil-lint: finds GIL bugs in Python native-extension binding code.
//!
//! The pipeline: [`discover`] files -> parse each with its [`frontend`] into the language-neutral
//! [`model`] -> [`callgraph`] -> [`analysis`] -> one file per rule in [`rules`] -> [`render`].

pub mod analysis;
pub mod callgraph;
pub mod diagnostic;
pub mod discover;
pub mod frontend;
pub mod knowledge;
pub mod model;
pub mod render;
pub mod rules;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::callgraph::CallGraph;
use crate::diagnostic::Finding;
use crate::frontend::Language;
use crate::knowledge::Knowledge;
use crate::model::{FileModel, Program, SourceFile};

pub struct Analysis {
    pub program: Program,
    pub findings: Vec<Finding>,
    /// One line each, naming the file: what could not be read or parsed.
    pub errors: Vec<String>,
}

/// The path as the user should see it: relative to the current directory when below it.
pub fn display_path(path: &Path) -> PathBuf {
    let cwd = std::env::current_dir().ok();
    let absolute = std::fs::canonicalize(path).ok();
    match (cwd.and_then(|c| std::fs::canonicalize(c).ok()), absolute) {
        (Some(cwd), Some(abs)) => abs
            .strip_prefix(&cwd)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
    .components()
    .collect()
}

/// Reads and models one file; never panics (a panic in a front-end becomes the file's error).
fn read_file(
    path: &Path,
    language: Language,
    knowledge: &Knowledge,
) -> Result<(String, FileModel), String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| {
        format!(
            "{shown}: cannot read: {}",
            discover::one_line(&e.to_string())
        )
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{shown}: not valid UTF-8 (byte {}), skipped",
            e.utf8_error().valid_up_to()
        )
    })?;
    let model = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        frontend::extract(language, &text, knowledge)
    }))
    .map_err(|_| format!("{shown}: internal error while analysing this file, skipped"))?;
    Ok((text, model))
}

/// Reads every file in parallel and merges the models in path order, so the result does not depend
/// on the number of threads.
pub fn analyse_files(files: &[(PathBuf, Language)], knowledge: &Knowledge) -> Analysis {
    let results: Vec<_> = files
        .par_iter()
        .map(|(path, language)| (path, read_file(path, *language, knowledge)))
        .collect();
    let mut program = Program::default();
    let mut errors = Vec::new();
    for (path, result) in results {
        match result {
            Ok((text, model)) => program.add_file(SourceFile::new(display_path(path), text), model),
            Err(error) => errors.push(error),
        }
    }
    let graph = CallGraph::build(&program);
    let findings = rules::check_all(&program, &graph);
    Analysis {
        program,
        findings,
        errors,
    }
}

/// A thread pool with stacks big enough for deeply nested syntax.
pub fn thread_pool(threads: Option<usize>) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .stack_size(64 << 20)
        .build()
        .expect("a thread pool can be created")
}

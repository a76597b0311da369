//! Front-ends: one per language, each turning a file's text into a [`FileModel`].

pub mod cpp;
pub mod rust;

use std::path::Path;

use crate::knowledge::Knowledge;
use crate::model::FileModel;
/// Defined in the model, which imports nothing from the rest of the crate.
pub use crate::model::Language;

/// The file's model, or a one-line reason it has none.
pub fn extract(
    language: Language,
    path: &Path,
    text: &str,
    knowledge: &Knowledge,
) -> Result<FileModel, String> {
    let model = match language {
        // tree-sitter's memory grows with the `<` of one statement: refuse a flood of them.
        Language::Cpp => crate::prefilter::cpp_within_bounds(text)
            .and_then(|()| cpp::extract(text, knowledge))?,
        // syn parses and the walker visits recursively: refuse what would overflow the stack.
        Language::Rust => crate::prefilter::rust_depth_within_bounds(text)
            .and_then(|()| rust::extract(path, text, knowledge))?,
    };
    Ok(model.compacted())
}

//! Front-ends: one per language, each turning a file's text into a [`FileModel`]; and the light
//! scans of [`scan`], which read a file's text without parsing it, for the pre-filter.

pub mod cpp;
pub(crate) mod lexer;
pub mod rust;
pub mod rust_scan;
pub mod scan;

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
        Language::Cpp => {
            cpp::scan::cpp_within_bounds(text).and_then(|()| cpp::extract(text, knowledge))?
        }
        // syn parses and the walker visits recursively: refuse what would overflow the stack.
        Language::Rust => rust_scan::rust_depth_within_bounds(text)
            .and_then(|()| rust::extract(path, text, knowledge))?,
    };
    Ok(model.compacted())
}

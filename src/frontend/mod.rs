//! Front-ends: one per language, each turning a file's text into a [`FileModel`].

pub mod cpp;
pub mod rust;

use std::path::Path;

use crate::knowledge::Knowledge;
use crate::model::FileModel;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    Cpp,
    Rust,
}

/// C, C++ and CUDA sources and headers.
const CPP_EXTENSIONS: &[&str] = &[
    "c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "h++", "cu", "cuh", "inl", "ipp",
];

impl Language {
    pub fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        if ext == "rs" {
            return Some(Language::Rust);
        }
        CPP_EXTENSIONS
            .contains(&ext.as_str())
            .then_some(Language::Cpp)
    }
}

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

//! Front-ends: one per language, each turning a file's text into a [`FileModel`].

pub mod cpp;

use std::path::Path;

use crate::knowledge::Knowledge;
use crate::model::FileModel;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Language {
    Cpp,
}

/// C, C++ and CUDA sources and headers.
const CPP_EXTENSIONS: &[&str] = &[
    "c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "h++", "cu", "cuh", "inl", "ipp",
];

impl Language {
    pub fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        CPP_EXTENSIONS
            .contains(&ext.as_str())
            .then_some(Language::Cpp)
    }
}

pub fn extract(language: Language, text: &str, knowledge: &Knowledge) -> FileModel {
    match language {
        Language::Cpp => cpp::extract(text, knowledge),
    }
}

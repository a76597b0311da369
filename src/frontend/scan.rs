//! Light scans of a file's text, without parsing: whether it may register a binding
//! ([`Seeds`]) and what it may define ([`Definitions`], by [`super::cpp::scan`] and
//! [`super::rust_scan`]). The pre-filter decides from them which files to parse.

use std::path::Path;

use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::FxHashSet as HashSet;

use super::Language;
use super::cpp::scan::{Rewrites, scan_cpp};
use super::lexer::is_ident_byte;
use super::rust_scan::scan_rust;
use crate::knowledge::Knowledge;
use crate::model::last_segment;

/// What may register a binding, by language, matched as whole identifiers: the entry points of the
/// loaded knowledge, in C++ the GIL acquisitions (a destructor that takes the GIL is an entry
/// point), and in the files of a Rust library over PyO3, PyO3's token (a library's function that
/// takes it is an entry point; a binding crate's are helpers of its bindings, found from them).
/// A GIL release or a Python call matters only where a binding reaches it.
pub struct Seeds {
    cpp: Option<AhoCorasick>,
    rust: Option<AhoCorasick>,
    /// The Rust crates that are libraries over PyO3 (see [`crate::knowledge::CrateTypes::binds`]).
    rust_libraries: HashSet<String>,
}

impl Seeds {
    pub fn new(knowledge: &Knowledge) -> Self {
        let cpp = [
            &knowledge.acquire_guards,
            &knowledge.acquire_wrappers,
            &knowledge.acquire_calls,
        ]
        .into_iter()
        .flat_map(|set| set.names())
        .chain(
            [
                &knowledge.module_macros,
                &knowledge.def_methods,
                &knowledge.property_methods,
                &knowledge.method_tables,
            ]
            .into_iter()
            .flatten()
            .map(String::as_str),
        )
        .chain(knowledge.def_functions.keys().map(String::as_str))
        .chain(knowledge.entry_macros.keys().map(String::as_str))
        .chain(knowledge.callback_registrations.keys().map(String::as_str))
        .chain(knowledge.callback_fields.iter().map(|f| last_segment(f)))
        .chain(knowledge.native_owned_bases.iter().map(|b| last_segment(b)))
        .chain(knowledge.library_virtuals.keys().map(|b| last_segment(b)));
        let rust = [
            &knowledge.rust.function_attributes,
            &knowledge.rust.impl_attributes,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str);
        let rust_libraries = knowledge
            .rust
            .crates
            .keys()
            .filter(|krate| knowledge.rust.is_library(krate))
            .cloned()
            .collect();
        Seeds {
            cpp: needles(cpp),
            rust: needles(rust),
            rust_libraries,
        }
    }

    /// Whether the file at `path`, of `language` and with this text, may register a binding.
    pub fn in_text(&self, path: &Path, text: &str, language: Language) -> bool {
        let needles = match language {
            Language::Cpp => &self.cpp,
            Language::Rust => &self.rust,
        };
        let bytes = text.as_bytes();
        let found = |needle: &str| {
            memchr::memmem::find_iter(bytes, needle.as_bytes())
                .any(|at| whole_word(bytes, at, at + needle.len()))
        };
        needles.as_ref().is_some_and(|needles| {
            needles
                .find_iter(bytes)
                .any(|m| whole_word(bytes, m.start(), m.end()))
        }) || language == Language::Rust
            && self
                .rust_libraries
                .contains(&super::rust::module_path(path).0)
            && found(super::rust::TOKEN_TYPE)
    }
}

/// The last segments of `names`, to find as whole identifiers.
fn needles<'a>(names: impl Iterator<Item = &'a str>) -> Option<AhoCorasick> {
    let mut needles: Vec<&str> = names.map(last_segment).filter(|n| !n.is_empty()).collect();
    needles.sort_unstable();
    needles.dedup();
    (!needles.is_empty()).then(|| {
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&needles)
            .expect("a few short literal needles always build")
    })
}

fn whole_word(bytes: &[u8], start: usize, end: usize) -> bool {
    !start
        .checked_sub(1)
        .is_some_and(|i| is_ident_byte(bytes[i]))
        && !bytes.get(end).copied().is_some_and(is_ident_byte)
}

/// The name a definition is indexed under: the identifier in `f`, `~f`, `f<int>`; an operator
/// as the front-end spells it (`operator()`, `operator==`).
pub fn key(segment: &str) -> &str {
    if segment.starts_with("operator") {
        return segment;
    }
    let start = segment
        .bytes()
        .position(is_ident_byte)
        .unwrap_or(segment.len());
    let rest = &segment[start..];
    let end = rest
        .bytes()
        .position(|b| !is_ident_byte(b))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// What the scan of one C/C++ file found, as over-approximations.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Definitions {
    /// Keys ([`key`]) of the functions it may define.
    pub functions: Vec<String>,
    /// Each class head followed by a body: the names before the base clause, and the names in it.
    pub classes: Vec<(Vec<String>, Vec<String>)>,
    /// Names that may be a segment of the qualified name of a definition in the file: namespaces
    /// (and namespace aliases), classes, qualifiers written before a defined name, and whatever
    /// a pre-pass rewrite may produce.
    pub scopes: HashSet<String>,
    /// For Rust: the module path the front-end derives from the file's path.
    pub module: Option<Vec<String>>,
}

/// What a file may define, for the languages the pre-filter reads.
pub(crate) fn scan(
    language: Language,
    path: &Path,
    text: &str,
    rewrites: &Rewrites,
) -> Option<Definitions> {
    match language {
        Language::Cpp => Some(scan_cpp(text, rewrites)),
        Language::Rust => Some(scan_rust(text, path)),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::knowledge::CrateTypes;

    /// Each class head as its names and its bases, space-separated.
    pub(crate) fn heads(d: &Definitions) -> Vec<(String, String)> {
        d.classes
            .iter()
            .map(|(n, b)| (n.join(" "), b.join(" ")))
            .collect()
    }

    pub(crate) fn assert_scopes(d: &Definitions, scopes: &[&str]) {
        for scope in scopes {
            assert!(
                d.scopes.contains(*scope),
                "{scope} missing from {:?}",
                d.scopes
            );
        }
    }

    #[test]
    fn keys_match_what_the_scan_indexes() {
        assert_eq!(key("~Foo"), "Foo");
        assert_eq!(key("f"), "f");
        assert_eq!(key("operator()"), "operator()");
        assert_eq!(key("(*get)"), "get");
    }

    #[test]
    fn seeds_are_whole_identifiers() {
        let mut knowledge = Knowledge::builtin();
        knowledge.add_crate_types([
            ("engine".to_string(), CrateTypes::default()),
            (
                "binding".to_string(),
                CrateTypes {
                    binds: true,
                    ..CrateTypes::default()
                },
            ),
        ]);
        let p = Seeds::new(&knowledge);
        let at = Path::new("engine/src/lib.rs");
        let cpp = |text| p.in_text(at, text, Language::Cpp);
        assert!(cpp("PYBIND11_MODULE(x, m) {}"));
        assert!(cpp("m.def(\"f\", &f);"));
        assert!(cpp("~Holder() { py::gil_scoped_acquire gil; }"));
        assert!(!cpp("#define X default"));
        assert!(!cpp("int undef_x;"));
        assert!(!cpp("void f() { py::gil_scoped_release r; }"));
        let rust = |text| p.in_text(at, text, Language::Rust);
        assert!(rust("#[pyfunction]\nfn f() {}"));
        // A library's function that takes the token is an entry; a binding crate's is not.
        let token = "pub fn f(py: Python<'_>) { py.detach(|| ()); }";
        assert!(rust(token));
        assert!(!p.in_text(Path::new("binding/src/lib.rs"), token, Language::Rust));
        assert!(!rust("fn f(p: PythonLike) { p.detach(|| ()); }"));
        assert!(!rust("fn def() {}"));
    }
}

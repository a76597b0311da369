//! The pre-filter: decides, without parsing, which files can change the findings, so that only
//! those are parsed.
//!
//! Every finding lies on a path that starts at a binding (an entry point from Python) and follows
//! calls that [`crate::callgraph`] resolves by name. So a file matters only if
//! 1. it may register a binding: it mentions, as a whole identifier, an entry point of the loaded
//!    [`Knowledge`] (`PYBIND11_MODULE`, `def`, `PyMethodDef`, a project's own wrapper macro,
//!    `#[pyfunction]`, `#[pymethods]`...) or, in C++, a GIL acquisition (`gil_scoped_acquire`: a
//!    destructor that takes the GIL is an entry point). These files are the *seeds*; or
//! 2. it may define a function or a class that the resolution of a name used by a file that
//!    matters looks at. Resolution only ever looks at definitions with the called name, so the
//!    files that matter are found name by name (see [`Need`]).
//!
//! GIL releases, Python-API names and lock primitives are not seeds: they matter only on a path
//! from an entry point, and every function on such a path is found through (2).
//!
//! A cheap scan of every C/C++ and Rust file ([`scan_cpp`], [`scan_rust`]) lists, as an
//! over-approximation, the functions and classes it may define and the names that may qualify
//! them. The seeds are parsed first; the names their models use select, through that index, the
//! next files to parse; and so on to a fixed point. The set reached does not depend on the order of
//! the work, so the output does not depend on the number of threads.
//!
//! Files of a language the scan does not read and files that could not be read (so that their
//! error is reported as before) are always kept. A file skipped here is still counted as checked.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

// Fast hashing: the pre-filter looks up names hundreds of thousands of times.
type HashMap<K, V> = FxHashMap<K, V>;
type HashSet<T> = FxHashSet<T>;

use crate::callgraph::{
    Lookup, MAX_UNTYPED_FANOUT, Scope, by_arity, in_enclosing_scopes, resolve_path, simple_bases,
};
use crate::frontend::Language;
use crate::knowledge::Knowledge;
use crate::model::{
    CallTarget, FileModel, FnId, Function, FunctionKind, Receiver, last_segment, owner_of,
    split_path,
};

/// What may register a binding, by language, matched as whole identifiers: the entry points of the
/// loaded knowledge, and in C++ the GIL acquisitions (a destructor that takes the GIL is an entry
/// point). A GIL release or a Python call matters only where a binding reaches it.
pub struct Seeds {
    cpp: Option<AhoCorasick>,
    rust: Option<AhoCorasick>,
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
        );
        let rust = [
            &knowledge.rust.function_attributes,
            &knowledge.rust.impl_attributes,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str);
        Seeds {
            cpp: needles(cpp),
            rust: needles(rust),
        }
    }

    /// Whether a file of `language` with this text may register a binding.
    pub fn in_text(&self, text: &str, language: Language) -> bool {
        let needles = match language {
            Language::Cpp => &self.cpp,
            Language::Rust => &self.rust,
        };
        let Some(needles) = needles else {
            return false;
        };
        let bytes = text.as_bytes();
        needles
            .find_iter(bytes)
            .any(|m| whole_word(bytes, m.start(), m.end()))
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

/// What a model needs from other files' definitions, one name at a time, following
/// [`crate::callgraph`]'s resolution rules.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Need {
    /// `a::b::f`: functions named `f` whose qualified name ends with `b::f`, so whose file has
    /// `b` among the names that may qualify a definition.
    Qualified { name: String, qualifier: String },
    /// An unqualified call `f()` or binding target, or `this->f()` / `self.f()`: functions whose
    /// qualified name is one of `prefixes` (the caller's enclosing scopes and, for `f()`, its
    /// `using`s) followed by `f`. Failing those, the call is decided last (see `Live`), when it
    /// may reach any function named `f`.
    Scoped { name: String, prefixes: Prefixes },
    /// `x.f()` with `x` of class `c`, in a file of `language`: methods named `f` of `c` and the
    /// classes derived from it. Once those are parsed, the classes between their owners and `c`
    /// (see [`model_relevant`]); and when `c` does not define `f`, its bases.
    Typed {
        name: String,
        class: String,
        language: Language,
    },
    /// The owner of a function: whether a class of that name exists anywhere decides whether an
    /// out-of-line `A::f` is a method.
    Owner(String),
}

/// The scopes a name may be looked up in (see [`Need::Scoped`]), each written `a::b`.
type Prefixes = Arc<[Arc<str>]>;

/// The [`Prefixes`] of each function's scope and `use`s, built once and shared by its calls: a
/// copy for each call was most of the pre-filter's memory on a large crate. Keyed by where the
/// scope and `use` lists are, in models that outlive the cache. Each prefix is held once too.
#[derive(Default)]
struct ScopePrefixes {
    by_origin: HashMap<(usize, usize, usize, usize, bool), Prefixes>,
    prefixes: HashSet<Arc<str>>,
}

impl ScopePrefixes {
    fn get(&mut self, scope: &[String], usings: &[String], method: bool) -> Prefixes {
        let origin = (
            scope.as_ptr() as usize,
            scope.len(),
            usings.as_ptr() as usize,
            usings.len(),
            method,
        );
        self.by_origin
            .entry(origin)
            .or_insert_with(|| {
                let mut prefixes: Vec<String> =
                    (1..=scope.len()).map(|k| scope[..k].join("::")).collect();
                if !method {
                    prefixes.extend(usings.iter().cloned());
                }
                prefixes.sort_unstable();
                prefixes.dedup();
                prefixes
                    .into_iter()
                    .map(|p| match self.prefixes.get(p.as_str()) {
                        Some(shared) => shared.clone(),
                        None => {
                            let shared: Arc<str> = p.into();
                            self.prefixes.insert(shared.clone());
                            shared
                        }
                    })
                    .collect()
            })
            .clone()
    }
}

/// What a call (or a binding) to `target`, written in a file of `language` from a function in
/// `scope` with `usings`, needs.
fn target_needs(
    language: Language,
    target: &CallTarget,
    (scope, usings): (&[String], &[String]),
    prefixes: &mut ScopePrefixes,
    needs: &mut Vec<Need>,
) {
    let CallTarget::Named { path, receiver } = target else {
        return;
    };
    let name = key(last_segment(path));
    // `new` and `default` are C++ keywords, but Rust functions.
    if name.is_empty() || language == Language::Cpp && is_keyword(name) {
        return;
    }
    let name = name.to_string();
    let mut scoped = |name: String, method: bool| Need::Scoped {
        name,
        prefixes: prefixes.get(scope, usings, method),
    };
    let need = match receiver {
        Receiver::None => match path.rsplit("::").nth(1).map(key) {
            Some(q) if !q.is_empty() => Need::Qualified {
                name,
                qualifier: q.to_string(),
            },
            _ => scoped(name, false),
        },
        // Failing the caller's class, a method by name (see [`Live`]).
        Receiver::This => scoped(name, true),
        // Decided last, by how many methods have the name (see [`Live`]).
        Receiver::Object | Receiver::Native => return,
        Receiver::Typed(class) => Need::Typed {
            name,
            class: key(last_segment(class)).to_string(),
            language,
        },
    };
    needs.push(need);
}

/// What a function needs for the call graph to know whether it is a method.
fn owner_need(function: &Function) -> Option<Need> {
    if function.kind == FunctionKind::Lambda {
        return None;
    }
    let (owner, _) = split_path(&function.qualname)?;
    let owner = key(last_segment(owner));
    (!owner.is_empty()).then(|| Need::Owner(owner.to_string()))
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

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// C++ keywords: never the name of a function or class, so never indexed nor looked up (a call
/// "named" `constexpr` is a misparse of `if constexpr (...)`).
const KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "co_await",
    "co_return",
    "co_yield",
    "const",
    "const_cast",
    "consteval",
    "constexpr",
    "constinit",
    "continue",
    "decltype",
    "default",
    "defined",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "nullptr",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
];

fn is_keyword(name: &str) -> bool {
    KEYWORDS.binary_search(&name).is_ok()
}

/// What the scan of one C/C++ file found, as over-approximations.
#[derive(Debug, Default)]
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Token {
    Ident(usize, usize),
    /// `->`, kept apart from `>` so that `p->f(` is not read as the end of template arguments.
    Arrow,
    /// `::`, kept apart from `:` (a base clause or a constructor's initialisers).
    Scope,
    Punct(u8),
}

/// Tokens of C/C++ text: identifiers and punctuation, skipping comments, string and character
/// literals, numbers and preprocessor directives.
struct Lexer<'a> {
    bytes: &'a [u8],
    i: usize,
    line_start: bool,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer {
            bytes: text.as_bytes(),
            i: 0,
            line_start: true,
        }
    }

    fn skip_quoted(&mut self, quote: u8) {
        let bytes = self.bytes;
        self.i += 1;
        while self.i < bytes.len() && bytes[self.i] != quote && bytes[self.i] != b'\n' {
            self.i += if bytes[self.i] == b'\\' { 2 } else { 1 };
        }
        self.i = (self.i + 1).min(bytes.len());
    }

    /// `R"delim( ... )delim"`, from the opening quote.
    fn skip_raw_string(&mut self) {
        let bytes = self.bytes;
        let quote = self.i;
        let Some(paren) = bytes[quote..].iter().take(18).position(|&b| b == b'(') else {
            self.i += 1;
            return;
        };
        let delim = &bytes[quote + 1..quote + paren];
        let mut i = quote + paren + 1;
        while let Some(p) = memchr::memchr(b')', &bytes[i..]) {
            let close = i + p;
            if bytes[close + 1..].starts_with(delim)
                && bytes.get(close + 1 + delim.len()) == Some(&b'"')
            {
                self.i = close + delim.len() + 2;
                return;
            }
            i = close + 1;
        }
        self.i = bytes.len();
    }

    fn skip_directive(&mut self) {
        let bytes = self.bytes;
        loop {
            let Some(p) = memchr::memchr(b'\n', &bytes[self.i..]) else {
                self.i = bytes.len();
                return;
            };
            let end = self.i + p;
            self.i = end + 1;
            let continued = end > 0 && bytes[end - 1] == b'\\'
                || end > 1 && bytes[end - 1] == b'\r' && bytes[end - 2] == b'\\';
            if !continued {
                return;
            }
        }
    }

    fn skip_number(&mut self) {
        // Digit separators and suffixes: `1'000ull`, `0x1Fp-3`.
        let bytes = self.bytes;
        self.i += 1;
        while self.i < bytes.len() {
            let c = bytes[self.i];
            let separator = c == b'\''
                && bytes
                    .get(self.i + 1)
                    .is_some_and(|n| n.is_ascii_alphanumeric());
            let exponent =
                matches!(c, b'+' | b'-') && matches!(bytes[self.i - 1], b'e' | b'E' | b'p' | b'P');
            if is_ident_byte(c) || c == b'.' || separator || exponent {
                self.i += 1;
            } else {
                return;
            }
        }
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let bytes = self.bytes;
        while self.i < bytes.len() {
            let b = bytes[self.i];
            match b {
                b'\n' => {
                    self.line_start = true;
                    self.i += 1;
                    continue;
                }
                b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => {
                    self.i += 1;
                    continue;
                }
                b'#' if self.line_start => {
                    self.skip_directive();
                    continue;
                }
                _ => {}
            }
            self.line_start = false;
            match b {
                b'/' if bytes.get(self.i + 1) == Some(&b'/') => {
                    self.i = line_end(bytes, self.i);
                }
                b'/' if bytes.get(self.i + 1) == Some(&b'*') => {
                    self.i = memchr::memmem::find(&bytes[self.i + 2..], b"*/")
                        .map_or(bytes.len(), |p| self.i + 2 + p + 2);
                }
                b'"' | b'\'' => self.skip_quoted(b),
                b'0'..=b'9' => self.skip_number(),
                _ if is_ident_byte(b) => {
                    let start = self.i;
                    self.i = identifier_end(bytes, self.i);
                    let end = self.i;
                    // A string's encoding prefix, or a raw string.
                    if bytes.get(end) == Some(&b'"') {
                        match &bytes[start..end] {
                            b"R" | b"LR" | b"uR" | b"UR" | b"u8R" => {
                                self.skip_raw_string();
                                continue;
                            }
                            b"L" | b"u" | b"U" | b"u8" => {
                                self.skip_quoted(b'"');
                                continue;
                            }
                            _ => {}
                        }
                    }
                    return Some(Token::Ident(start, end));
                }
                _ => return Some(punctuation(bytes, &mut self.i)),
            }
        }
        None
    }
}

/// The token at `*i`, which is neither space nor an identifier: `->` and `::` are one token.
fn punctuation(bytes: &[u8], i: &mut usize) -> Token {
    let b = bytes[*i];
    *i += 1;
    match (b, bytes.get(*i)) {
        (b'-', Some(b'>')) => {
            *i += 1;
            Token::Arrow
        }
        (b':', Some(b':')) => {
            *i += 1;
            Token::Scope
        }
        _ => Token::Punct(b),
    }
}

fn identifier_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_ident_byte(bytes[i]) {
        i += 1;
    }
    i
}

fn line_end(bytes: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p)
}

/// How far back `f<...>(` is searched for the `<`, and `A::B::f(` for qualifiers.
const MAX_LOOKBACK: usize = 256;
/// Names collected in one class head before it is taken as a definition anyway.
const MAX_CLASS_HEAD: usize = 64;
/// How far an operator's name (`operator()`, `operator new[]`) may extend.
const MAX_OPERATOR: usize = 64;

/// A `class`/`struct`/`union` head being read.
struct Head<'a> {
    depth: usize,
    names: Vec<&'a str>,
    bases: Option<Vec<&'a str>>,
    /// Template arguments of a specialisation's name (`Foo<int, 2>`) or of a base.
    angles: usize,
}

/// Scans C/C++ text for what it may define (see [`Definitions`]). `rewrites` are the pre-pass's
/// rewritten macros and the identifiers their expansions contain.
pub fn scan_cpp<'a>(text: &'a str, rewrites: &'a Rewrites) -> Definitions {
    let mut functions: HashSet<Cow<str>> = HashSet::default();
    let mut classes = Vec::new();
    let mut scopes: HashSet<&'a str> = HashSet::default();
    // For each open `(` or `[`, the name before it and where that name starts.
    let mut opens: Vec<Option<(&'a str, usize)>> = Vec::new();
    // Names followed by a closed parameter list, with the depth they were closed at (sorted).
    let mut pending: Vec<(&'a str, usize, usize)> = Vec::new();
    let mut head: Option<Head<'a>> = None;
    // After `namespace`: every name up to `{` or `;` (a namespace, a nested one, an alias).
    let mut namespace = false;
    // After a rewritten macro: names in its parenthesised arguments, at this depth.
    let mut rewrite_args: Option<usize> = None;
    let mut ternaries = 0usize;
    let mut prev: Option<Token> = None;
    let mut prev_end = 0usize;
    let mut lexer = Lexer::new(text);
    // A closed parameter list followed by a body, `try` or initialisers: the names before it are
    // defined.
    let flush = |pending: &mut Vec<(&'a str, usize, usize)>,
                 depth: usize,
                 functions: &mut HashSet<Cow<'a, str>>,
                 scopes: &mut HashSet<&'a str>| {
        while let Some(&(name, d, start)) = pending.last() {
            if d < depth {
                break;
            }
            functions.insert(Cow::Borrowed(name));
            scopes.extend(qualifiers_before(text, start));
            pending.pop();
        }
    };
    while let Some(token) = lexer.next() {
        let depth = opens.len();
        match token {
            Token::Ident(start, end) => {
                let name = &text[start..end];
                if namespace || rewrite_args.is_some() {
                    scopes.insert(name);
                }
                if rewrites.keys.contains(name) {
                    scopes.extend(rewrites.produced.iter().map(String::as_str));
                    if text[end..].trim_start().starts_with('(') {
                        rewrite_args = Some(depth + 1);
                    }
                }
                match name {
                    "class" | "struct" | "union" => {
                        head = Some(Head {
                            depth,
                            names: Vec::new(),
                            bases: None,
                            angles: 0,
                        })
                    }
                    "namespace" => namespace = true,
                    "try" => flush(&mut pending, depth, &mut functions, &mut scopes),
                    "operator" => {
                        if let Some(op) = operator_name(text, start) {
                            functions.insert(Cow::Owned(op));
                        }
                    }
                    _ => {
                        if let Some(h) = &mut head
                            && h.depth == depth
                        {
                            // The model names a class and its bases without template arguments.
                            match &mut h.bases {
                                Some(bases) if h.angles == 0 => bases.push(name),
                                None if h.angles == 0 => h.names.push(name),
                                _ => {}
                            }
                            if h.names.len() + h.bases.as_ref().map_or(0, Vec::len) > MAX_CLASS_HEAD
                            {
                                classes.push(take_head(head.take(), &mut scopes));
                            }
                        }
                    }
                }
            }
            Token::Punct(open @ (b'(' | b'[')) => {
                let name = match prev {
                    Some(Token::Ident(s, e)) if open == b'(' => {
                        Some((&text[s..e], s)).filter(|(n, _)| !is_keyword(n))
                    }
                    Some(Token::Punct(b'>')) if open == b'(' => {
                        template_name(text, prev_end.saturating_sub(1))
                    }
                    _ => None,
                };
                opens.push(name);
            }
            Token::Punct(b')' | b']') => {
                if let Some(name) = opens.pop() {
                    let depth = opens.len();
                    if rewrite_args.is_some_and(|d| depth < d) {
                        rewrite_args = None;
                    }
                    while pending.last().is_some_and(|&(_, d, _)| d > depth) {
                        pending.pop();
                    }
                    if let Some((name, start)) = name {
                        pending.push((name, depth, start));
                    }
                    if head.as_ref().is_some_and(|h| h.depth > depth) {
                        head = None;
                    }
                }
            }
            Token::Punct(b'{') => {
                flush(&mut pending, depth, &mut functions, &mut scopes);
                if head.as_ref().is_some_and(|h| h.depth == depth) {
                    classes.push(take_head(head.take(), &mut scopes));
                }
                namespace = false;
                ternaries = 0;
            }
            Token::Punct(b':') if ternaries > 0 => ternaries -= 1,
            Token::Punct(b':') => {
                flush(&mut pending, depth, &mut functions, &mut scopes);
                if let Some(h) = &mut head
                    && h.depth == depth
                    && h.angles == 0
                    && h.bases.is_none()
                {
                    h.bases = Some(Vec::new());
                }
            }
            Token::Punct(b'<') => {
                if let Some(h) = &mut head
                    && h.depth == depth
                {
                    h.angles += 1;
                }
            }
            Token::Punct(b'>') => {
                if let Some(h) = &mut head
                    && h.depth == depth
                {
                    if h.bases.is_some() {
                        h.angles = h.angles.saturating_sub(1);
                    } else if h.angles == 0 {
                        // `template <class T>`: a template parameter, not a class.
                        head = None;
                    } else {
                        h.angles -= 1;
                    }
                }
            }
            Token::Punct(b'?') => ternaries += 1,
            Token::Punct(c @ (b';' | b'}' | b'=' | b',')) => {
                if c != b',' {
                    while pending.last().is_some_and(|&(_, d, _)| d >= depth) {
                        pending.pop();
                    }
                }
                if c != b'=' && c != b',' {
                    ternaries = 0;
                    namespace = false;
                }
                if let Some(h) = &head
                    && h.depth == depth
                    && (c != b',' || h.bases.is_none() && h.angles == 0)
                {
                    head = None;
                }
            }
            _ => {}
        }
        prev = Some(token);
        prev_end = lexer.i;
    }
    let mut functions: Vec<String> = functions
        .into_iter()
        .filter(|n| !is_keyword(n))
        .map(Cow::into_owned)
        .collect();
    functions.sort_unstable();
    Definitions {
        functions,
        classes,
        scopes: scopes.into_iter().map(str::to_string).collect(),
        module: None,
    }
}

fn take_head<'a>(
    head: Option<Head<'a>>,
    scopes: &mut HashSet<&'a str>,
) -> (Vec<String>, Vec<String>) {
    let head = head.expect("a head is being read");
    scopes.extend(head.names.iter().copied());
    let owned = |v: Vec<&str>| v.into_iter().map(str::to_string).collect();
    (owned(head.names), owned(head.bases.unwrap_or_default()))
}

/// The front-end's name for the operator written at `start` (`operator()`, `operator==`,
/// `operatornew[]`): whitespace removed, template-like `<...>` dropped, the last `::` segment, as
/// the front-end's `path` spells a declarator.
fn operator_name(text: &str, start: usize) -> Option<String> {
    let bytes = text.as_bytes();
    let after = start + "operator".len();
    let mut i = after;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let end = if bytes.get(i) == Some(&b'(') {
        // `operator()`: the first parentheses are the name.
        i + 1
            + bytes[i + 1..]
                .iter()
                .take(MAX_OPERATOR)
                .position(|&b| b == b')')?
            + 1
    } else {
        i + bytes[i..]
            .iter()
            .take(MAX_OPERATOR)
            .position(|&b| b == b'(')?
    };
    let mut name = String::new();
    let mut depth = 0usize;
    for c in text[start..end].chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth > 0 || c.is_whitespace() => {}
            _ => name.push(c),
        }
    }
    Some(name.rsplit("::").next().unwrap_or(&name).to_string())
}

/// `A`, `B` in `A::B::f` or `A<T>::f`, given where `f` starts.
fn qualifiers_before(text: &str, start: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let lowest = start.saturating_sub(MAX_LOOKBACK);
    let mut out = Vec::new();
    let mut i = start;
    loop {
        let mut j = i;
        while j > lowest && bytes[j - 1].is_ascii_whitespace() {
            j -= 1;
        }
        if j < lowest + 2 || &bytes[j - 2..j] != b"::" {
            return out;
        }
        j -= 2;
        while j > lowest && bytes[j - 1].is_ascii_whitespace() {
            j -= 1;
        }
        if j > lowest && bytes[j - 1] == b'>' {
            match template_name(text, j - 1) {
                Some((name, s)) => {
                    out.push(name);
                    i = s;
                }
                None => return out,
            }
        } else {
            // A qualifier that starts before the window is not read (it could start mid-character).
            let Some(s) = bytes[lowest..j]
                .iter()
                .rposition(|&b| !is_ident_byte(b))
                .map(|p| lowest + p + 1)
            else {
                return out;
            };
            if s == j {
                return out;
            }
            out.push(&text[s..j]);
            i = s;
        }
    }
}

/// `f` in `f<int, std::vector<T>>`, given the offset of the last `>`, with where it starts.
fn template_name(text: &str, close: usize) -> Option<(&str, usize)> {
    let bytes = text.as_bytes();
    let lowest = close.saturating_sub(MAX_LOOKBACK);
    let mut depth = 0usize;
    let mut i = close + 1;
    while i > lowest {
        i -= 1;
        match bytes[i] {
            b'>' if i == 0 || bytes[i - 1] != b'-' => depth += 1,
            b'<' => {
                depth -= 1;
                if depth == 0 {
                    let end = bytes[..i]
                        .iter()
                        .rposition(|b| !b.is_ascii_whitespace())
                        .map_or(0, |p| p + 1);
                    let start = bytes[..end]
                        .iter()
                        .rposition(|&b| !is_ident_byte(b))
                        .map_or(0, |p| p + 1);
                    let name = &text[start..end];
                    return (!name.is_empty() && !name.as_bytes()[0].is_ascii_digit())
                        .then_some((name, start));
                }
            }
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

/// Tokens of Rust text: identifiers and punctuation, skipping comments (nested), string, byte,
/// raw and character literals, lifetimes and numbers.
struct RustLexer<'a> {
    bytes: &'a [u8],
    i: usize,
}

impl RustLexer<'_> {
    /// `"..."`, which may span lines, from the opening quote.
    fn skip_string(&mut self) {
        let bytes = self.bytes;
        self.i += 1;
        while self.i < bytes.len() && bytes[self.i] != b'"' {
            self.i += if bytes[self.i] == b'\\' { 2 } else { 1 };
        }
        self.i = (self.i + 1).min(bytes.len());
    }

    /// `r#"..."#`, from the first `#` or quote.
    fn skip_raw_string(&mut self) {
        let bytes = self.bytes;
        let hashes = bytes[self.i..].iter().take_while(|&&b| b == b'#').count();
        self.i += hashes;
        if bytes.get(self.i) != Some(&b'"') {
            return;
        }
        self.i += 1;
        while let Some(p) = memchr::memchr(b'"', &bytes[self.i..]) {
            let close = self.i + p;
            let end = close + 1 + hashes;
            if end <= bytes.len() && bytes[close + 1..end].iter().all(|&b| b == b'#') {
                self.i = end;
                return;
            }
            self.i = close + 1;
        }
        self.i = bytes.len();
    }

    /// A character literal (`'x'`, `'\n'`, `'\u{1F600}'`) or a lifetime or label (`'a`), from
    /// the quote.
    fn skip_quote(&mut self) {
        let bytes = self.bytes;
        let i = self.i + 1;
        if bytes.get(i) == Some(&b'\\') {
            let close = memchr::memchr(b'\'', &bytes[(i + 2).min(bytes.len())..]);
            self.i = close.map_or(bytes.len(), |p| i + 2 + p + 1);
            return;
        }
        // One character, then a closing quote: a literal.
        let width = match bytes.get(i) {
            Some(&b) if b < 0x80 => 1,
            Some(&b) if b >= 0xf0 => 4,
            Some(&b) if b >= 0xe0 => 3,
            Some(_) => 2,
            None => 0,
        };
        if width > 0 && bytes.get(i + width) == Some(&b'\'') {
            self.i = i + width + 1;
            return;
        }
        // A lifetime: the quote and its name.
        self.i = identifier_end(bytes, i);
    }
}

impl Iterator for RustLexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let bytes = self.bytes;
        while self.i < bytes.len() {
            let b = bytes[self.i];
            match b {
                _ if b.is_ascii_whitespace() => self.i += 1,
                b'/' if bytes.get(self.i + 1) == Some(&b'/') => {
                    self.i = line_end(bytes, self.i);
                }
                b'/' if bytes.get(self.i + 1) == Some(&b'*') => {
                    let mut depth = 0usize;
                    while self.i < bytes.len() {
                        if bytes[self.i..].starts_with(b"/*") {
                            depth += 1;
                            self.i += 2;
                        } else if bytes[self.i..].starts_with(b"*/") {
                            depth -= 1;
                            self.i += 2;
                            if depth == 0 {
                                break;
                            }
                        } else {
                            self.i += 1;
                        }
                    }
                }
                b'"' => self.skip_string(),
                b'\'' => self.skip_quote(),
                b'0'..=b'9' => {
                    self.i += 1;
                    while self.i < bytes.len()
                        && (is_ident_byte(bytes[self.i])
                            || bytes[self.i] == b'.'
                                && bytes.get(self.i + 1).is_some_and(u8::is_ascii_digit))
                    {
                        self.i += 1;
                    }
                }
                _ if is_ident_byte(b) => {
                    let start = self.i;
                    self.i = identifier_end(bytes, self.i);
                    let word = &bytes[start..self.i];
                    match (word, bytes.get(self.i)) {
                        (b"r" | b"br" | b"cr", Some(b'"' | b'#'))
                            if bytes.get(self.i) == Some(&b'"')
                                || bytes[self.i..]
                                    .iter()
                                    .find(|&&c| c != b'#')
                                    .is_some_and(|&c| c == b'"') =>
                        {
                            self.skip_raw_string();
                            continue;
                        }
                        (b"b" | b"c", Some(b'"')) => {
                            self.skip_string();
                            continue;
                        }
                        (b"b", Some(b'\'')) => {
                            self.skip_quote();
                            continue;
                        }
                        // `r#type`: a raw identifier.
                        (b"r", Some(b'#'))
                            if bytes.get(self.i + 1).copied().is_some_and(is_ident_byte) =>
                        {
                            let raw = self.i + 1;
                            self.i = identifier_end(bytes, raw);
                            return Some(Token::Ident(raw, self.i));
                        }
                        _ => return Some(Token::Ident(start, self.i)),
                    }
                }
                _ => return Some(punctuation(bytes, &mut self.i)),
            }
        }
        None
    }
}

/// The most nesting the Rust front-end is given: an upper bound on how deep syn's parser, the
/// front-end's walk and the syntax tree's drop recurse (see [`rust_depth_within_bounds`]). With
/// [`crate::STACK_PER_RUST_LEVEL`] bytes a level, it sizes the worker threads' stacks.
pub const MAX_RUST_DEPTH: usize = 8_192;

/// The words that may follow a `}` and continue what it ends: `if a {} else {}`,
/// `for S {..} in xs`, `impl Tr<{ N }> for T`, a `where` after a const block. Any other word (or
/// an attribute's `#`) after a `}` starts a new item, statement or match arm.
const CONTINUES_AFTER_BRACE: &[&[u8]] = &[b"else", b"as", b"in", b"where", b"for"];

/// Whether Rust text is shallow enough for the recursive parser, walker and drop of the Rust
/// front-end, so that no input can overflow a worker's stack.
///
/// Each token of a nesting (a bracket, a unary operator, a link of a method chain, an operand of
/// a long `a + b + ...`, which syn parses in a loop but stores as a left-leaning tree) costs at
/// most a few stack frames somewhere. So the depth at any token is bounded by the tokens of every
/// open bracket level since that level's last point where all of them had been returned from:
/// a `,` or `;`, the end of a block that a new item, statement or match arm follows. The bound is
/// their sum, and a file over [`MAX_RUST_DEPTH`] is refused. A file of any number of items,
/// statements or arms stays within it; only one expression or type nested thousands deep does
/// not. Only a valid prefix can make syn recurse (it stops at the first error), so those resets
/// need only hold for valid Rust.
pub fn rust_depth_within_bounds(text: &str) -> Result<(), String> {
    let mut lexer = RustLexer {
        bytes: text.as_bytes(),
        i: 0,
    };
    /// One open bracket level (the outermost is the file).
    struct Level {
        /// Tokens since the last point where they had all been returned from.
        run: usize,
        /// A `{` right after `=>`: a match arm's block, whose end ends the arm.
        arm_body: bool,
    }
    let mut levels = vec![Level {
        run: 0,
        arm_body: false,
    }];
    // The sum of the levels' runs, plus one per open level.
    let mut depth = 1usize;
    let mut previous = [None, None];
    // A `}` closed just before this token: unless the token continues it, what came before at
    // this level has been parsed and returned from.
    let mut brace_closed = false;
    while let Some(token) = lexer.next() {
        let nested = levels.len() > 1;
        let level = levels.last_mut().expect("the file's level is never closed");
        if std::mem::take(&mut brace_closed) {
            let ends = match token {
                Token::Ident(start, end) => {
                    !CONTINUES_AFTER_BRACE.contains(&&text.as_bytes()[start..end])
                }
                Token::Punct(b'#') => true,
                _ => false,
            };
            if ends {
                depth -= level.run;
                level.run = 0;
            }
        }
        match token {
            Token::Punct(b'(' | b'[' | b'{') => {
                let arm_body = token == Token::Punct(b'{')
                    && previous == [Some(Token::Punct(b'=')), Some(Token::Punct(b'>'))];
                level.run += 1;
                levels.push(Level { run: 0, arm_body });
                depth += 2;
            }
            Token::Punct(b')' | b']' | b'}') if nested => {
                let closed = levels.pop().expect("more than one level is open");
                depth -= closed.run + 1;
                let level = levels.last_mut().expect("the file's level is never closed");
                if closed.arm_body {
                    depth -= level.run;
                    level.run = 0;
                } else if token == Token::Punct(b'}') {
                    brace_closed = true;
                }
            }
            Token::Punct(b',' | b';') => {
                depth -= level.run;
                level.run = 0;
            }
            _ => {
                level.run += 1;
                depth += 1;
            }
        }
        if depth > MAX_RUST_DEPTH {
            return Err(format!(
                "nested more than {MAX_RUST_DEPTH} levels deep (line {}), skipped",
                line_of(text.as_bytes(), lexer.i)
            ));
        }
        previous = [previous[1], Some(token)];
    }
    Ok(())
}

/// The most `<` one C++ statement or declaration may hold. tree-sitter-cpp keeps every reading
/// of an ambiguous `<` (template argument list or less-than) alive until the statement ends: its
/// memory grows by about 5 KB per `<` of one statement (800 MB for 160,000), where real code has
/// a few dozen.
pub const MAX_CPP_ANGLES: usize = 2_048;

/// The longest run of prefix operators (`***p`, `- - x`, `&&&`) without an operand. Each deepens
/// tree-sitter's parse stack, and error recovery walks that stack for every later token: 2,048
/// `*` before a run of garbage took 5 s and 8,192 took minutes. Real code has a handful.
pub const MAX_CPP_PREFIX_RUN: usize = 64;

/// Whether C++ text is within what tree-sitter parses in bounded memory and about linear time
/// (see [`MAX_CPP_ANGLES`] and [`MAX_CPP_PREFIX_RUN`]). Nesting of brackets costs a few hundred
/// bytes a level and needs no bound beyond the file size limit.
pub fn cpp_within_bounds(text: &str) -> Result<(), String> {
    let bytes = text.as_bytes();
    let mut lexer = Lexer::new(text);
    let mut angles = 0usize;
    let mut prefix_run = 0usize;
    let mut previous_end = 0;
    let mut after_operand = false;
    let refuse =
        |what: String, at: usize| Err(format!("{what} (line {}), skipped", line_of(bytes, at)));
    while let Some(token) = lexer.next() {
        let start = match token {
            Token::Ident(start, _) => start,
            Token::Arrow | Token::Scope => lexer.i - 2,
            Token::Punct(_) => lexer.i - 1,
        };
        // The lexer skips literals: something other than blanks before this token was one.
        if !bytes[previous_end..start.max(previous_end)]
            .trim_ascii()
            .is_empty()
        {
            after_operand = true;
        }
        previous_end = lexer.i;
        match token {
            Token::Punct(b';' | b'{' | b'}' | b',') => {
                angles = 0;
                after_operand = false;
            }
            Token::Ident(..) | Token::Punct(b')' | b']') => after_operand = true,
            _ => {}
        }
        if let Token::Punct(b'*' | b'&' | b'-' | b'+' | b'!' | b'~') = token
            && !after_operand
        {
            prefix_run += 1;
            if prefix_run > MAX_CPP_PREFIX_RUN {
                return refuse(
                    format!("more than {MAX_CPP_PREFIX_RUN} prefix operators in a row"),
                    lexer.i,
                );
            }
        } else {
            prefix_run = 0;
        }
        match token {
            // `<<` and `<=` are operators of their own, never a template's bracket.
            Token::Punct(b'<')
                if !matches!(bytes.get(lexer.i), Some(b'<' | b'='))
                    && bytes.get(lexer.i.wrapping_sub(2)) != Some(&b'<') =>
            {
                angles += 1;
                if angles > MAX_CPP_ANGLES {
                    return refuse(
                        format!("more than {MAX_CPP_ANGLES} `<` in one statement"),
                        lexer.i,
                    );
                }
            }
            Token::Ident(..) | Token::Punct(b')' | b']') => {}
            // After an operator or opener, an operand is expected again.
            _ => after_operand = false,
        }
    }
    Ok(())
}

/// The 1-based line of byte `at`, for a message.
fn line_of(bytes: &[u8], at: usize) -> usize {
    memchr::memchr_iter(b'\n', &bytes[..at.min(bytes.len())]).count() + 1
}

/// Rust keywords that may stand in an `impl` head.
const RUST_HEAD_KEYWORDS: &[&str] = &["const", "dyn", "impl", "mut", "unsafe"];

/// An `impl` head being read: `impl<generics> Trait<..> for Type<..> where ... {`.
struct ImplHead<'a> {
    depth: usize,
    /// Nesting of the `<...>` right after `impl`, whose names belong to neither side.
    generics: usize,
    /// The next `<` opens those generics.
    opening: bool,
    /// Nesting of other `<...>`: a `for` inside is not the separator.
    angles: usize,
    trait_names: Vec<&'a str>,
    type_names: Vec<&'a str>,
    after_for: bool,
    in_where: bool,
    /// The type is `Arc<..>` (or `Rc`, `Box`, `Pin`): the front-end names it by what it holds.
    unwraps: bool,
}

/// Whether the next byte (after spaces) opens `impl`'s generics.
fn generics_follow(lexer: &RustLexer) -> bool {
    let rest = &lexer.bytes[lexer.i..];
    rest.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<')
}

/// Scans Rust text for what it may define (see [`Definitions`]): functions (`fn f`), the types
/// of `impl` blocks (classes for the call graph, with the traits they implement as bases) and,
/// as scopes, the module path the front-end derives from `path`, inline modules, `impl` types
/// and traits.
pub fn scan_rust(text: &str, path: &Path) -> Definitions {
    let mut functions: HashSet<&str> = HashSet::default();
    let mut classes = Vec::new();
    let mut scopes: HashSet<String> = path
        .components()
        .map(|c| {
            let part = c.as_os_str().to_string_lossy();
            part.trim_end_matches(".rs").replace('-', "_")
        })
        .chain(["crate".to_string()])
        .collect();
    let mut lexer = RustLexer {
        bytes: text.as_bytes(),
        i: 0,
    };
    let mut prev: Option<&str> = None;
    let mut head: Option<ImplHead> = None;
    let mut depth = 0usize;
    while let Some(token) = lexer.next() {
        let mut word = None;
        match token {
            Token::Ident(start, end) => {
                let name = &text[start..end];
                match prev {
                    Some("fn") => {
                        functions.insert(name);
                    }
                    Some("mod" | "trait") => {
                        scopes.insert(name.to_string());
                    }
                    _ => {}
                }
                match &mut head {
                    None if name == "impl" => {
                        head = Some(ImplHead {
                            depth,
                            generics: 0,
                            opening: generics_follow(&lexer),
                            angles: 0,
                            trait_names: Vec::new(),
                            type_names: Vec::new(),
                            after_for: false,
                            in_where: false,
                            unwraps: false,
                        })
                    }
                    Some(h) if h.depth == depth && h.generics == 0 => match name {
                        "for" if h.angles == 0 && !h.after_for => {
                            h.trait_names = std::mem::take(&mut h.type_names);
                            h.after_for = true;
                            h.unwraps = false;
                        }
                        "where" => h.in_where = true,
                        _ if h.in_where || RUST_HEAD_KEYWORDS.contains(&name) => {}
                        // As the front-end names them: the last segment, without generic
                        // arguments, except inside `Arc<..>`, `Rc<..>`, `Box<..>`, `Pin<..>`.
                        _ if h.angles == 0 || h.after_for && h.unwraps => h.type_names.push(name),
                        _ => {}
                    },
                    _ => {}
                }
                word = Some(name);
            }
            Token::Punct(b'<') => {
                if let Some(h) = &mut head
                    && h.depth == depth
                {
                    if h.opening || h.generics > 0 {
                        h.generics += 1;
                        h.opening = false;
                    } else {
                        if h.angles == 0
                            && h.type_names
                                .last()
                                .is_some_and(|t| matches!(*t, "Arc" | "Rc" | "Box" | "Pin"))
                        {
                            h.unwraps = true;
                        }
                        h.angles += 1;
                    }
                }
            }
            Token::Punct(b'>') => {
                if let Some(h) = &mut head
                    && h.depth == depth
                {
                    if h.generics > 0 {
                        h.generics -= 1;
                    } else {
                        h.angles = h.angles.saturating_sub(1);
                    }
                }
            }
            Token::Punct(b'(' | b'[' | b'{') => {
                if token == Token::Punct(b'{')
                    && let Some(h) = head.take_if(|h| h.depth == depth)
                {
                    let owned =
                        |v: Vec<&str>| v.into_iter().map(str::to_string).collect::<Vec<_>>();
                    let (names, bases) = (owned(h.type_names), owned(h.trait_names));
                    scopes.extend(names.iter().cloned());
                    classes.push((names, bases));
                }
                depth += 1;
            }
            Token::Punct(b')' | b']' | b'}') => {
                depth = depth.saturating_sub(1);
                if head.as_ref().is_some_and(|h| h.depth > depth) {
                    head = None;
                }
            }
            Token::Punct(b';') if head.as_ref().is_some_and(|h| h.depth == depth) => head = None,
            _ => {}
        }
        prev = word;
    }
    let mut functions: Vec<String> = functions.into_iter().map(str::to_string).collect();
    functions.sort_unstable();
    Definitions {
        functions,
        classes,
        scopes,
        module: Some(crate::frontend::rust::module_path(path).1),
    }
}

/// What a file may define, for the languages the pre-filter reads.
fn scan(language: Language, path: &Path, text: &str, rewrites: &Rewrites) -> Option<Definitions> {
    match language {
        Language::Cpp => Some(scan_cpp(text, rewrites)),
        Language::Rust => Some(scan_rust(text, path)),
    }
}

/// The pre-pass's rewritten macros (`PYBIND11_NAMESPACE_BEGIN(x)` becomes `namespace x {`): where
/// one is used, its arguments and the identifiers of every expansion may name a scope.
#[derive(Default)]
pub struct Rewrites {
    keys: HashSet<String>,
    produced: Vec<String>,
}

impl Rewrites {
    pub fn new(knowledge: &Knowledge) -> Self {
        let keys = knowledge.prepass_rewrite.keys().cloned().collect();
        let mut produced: Vec<String> = knowledge
            .prepass_rewrite
            .values()
            .flat_map(|template| {
                template
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii()))
                    .filter(|w| !w.is_empty())
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        produced.sort_unstable();
        produced.dedup();
        Rewrites { keys, produced }
    }
}

/// The scans of every C/C++ file, indexed by name.
struct Index {
    functions: HashMap<String, Vec<usize>>,
    /// Base name -> names of the classes written with it as a base, over every file.
    subclasses: HashMap<String, Vec<String>>,
    /// Class name -> each file that may define it, with the bases written there.
    heads: HashMap<String, Vec<(usize, Vec<String>)>>,
    /// Per file: the names that may qualify its definitions.
    scopes: Vec<HashSet<String>>,
    /// Per Rust file: the module path the front-end gives it.
    modules: Vec<Option<Vec<String>>>,
}

impl Index {
    fn new(scans: Vec<Option<Definitions>>) -> Self {
        let mut index = Index {
            functions: HashMap::default(),
            subclasses: HashMap::default(),
            heads: HashMap::default(),
            scopes: Vec::with_capacity(scans.len()),
            modules: Vec::with_capacity(scans.len()),
        };
        for (i, scan) in scans.into_iter().enumerate() {
            let Some(scan) = scan else {
                index.scopes.push(HashSet::default());
                index.modules.push(None);
                continue;
            };
            index.modules.push(scan.module);
            for name in scan.functions {
                index.functions.entry(name).or_default().push(i);
            }
            for (names, bases) in scan.classes {
                for base in &bases {
                    index
                        .subclasses
                        .entry(base.clone())
                        .or_default()
                        .extend(names.iter().cloned());
                }
                for name in names {
                    index
                        .heads
                        .entry(name)
                        .or_default()
                        .push((i, bases.clone()));
                }
            }
            index.scopes.push(scan.scopes);
        }
        index
    }

    /// `class` and every class that may derive from it; empty when no class has that name or
    /// base (a call on it then has no target).
    fn derived<'s>(&'s self, class: &'s str) -> HashSet<&'s str> {
        if !self.heads.contains_key(class) && !self.subclasses.contains_key(class) {
            return HashSet::default();
        }
        closure(class, |c| {
            self.subclasses
                .get(c)
                .into_iter()
                .flatten()
                .map(String::as_str)
        })
    }

    /// `class` and every name in the base clauses of its definitions, transitively.
    fn ancestors<'s>(&'s self, class: &'s str) -> HashSet<&'s str> {
        closure(class, |c| {
            self.heads
                .get(c)
                .into_iter()
                .flatten()
                .flat_map(|(_, bases)| bases.iter().map(String::as_str))
        })
    }

    /// Whether a definition in file `file` may have a qualified name starting with `prefix`: in
    /// Rust, the file's module path and then names the file may nest in it; otherwise, names the
    /// file may qualify a definition with.
    fn may_qualify(&self, file: usize, prefix: &str) -> bool {
        let mut segments = prefix.split("::");
        if let Some(module) = &self.modules[file]
            && !module.iter().all(|m| segments.next() == Some(m.as_str()))
        {
            return false;
        }
        segments.all(|s| self.scopes[file].contains(s))
    }

    fn function_definers(&self, name: &str) -> &[usize] {
        self.functions.get(name).map_or(&[], Vec::as_slice)
    }

    fn class_definers(&self, name: &str) -> impl Iterator<Item = usize> {
        self.heads
            .get(name)
            .into_iter()
            .flatten()
            .map(|(file, _)| *file)
    }
}

fn owned(names: HashSet<&str>) -> HashSet<String> {
    names.into_iter().map(str::to_string).collect()
}

/// `start` and every name reachable from it through `edges`.
fn closure<'s, I: Iterator<Item = &'s str>>(
    start: &'s str,
    edges: impl Fn(&'s str) -> I,
) -> HashSet<&'s str> {
    let mut out = HashSet::default();
    let mut stack = vec![start];
    while let Some(c) = stack.pop() {
        if out.insert(c) {
            stack.extend(edges(c));
        }
    }
    out
}

/// The models parsed so far, by file.
type Models<T> = [Option<Result<T, String>>];

/// Function `id` of file `file`'s model.
fn function_at<T: AsRef<FileModel>>(models: &Models<T>, (file, id): (usize, FnId)) -> &Function {
    match &models[file] {
        Some(Ok(model)) => &model.as_ref().functions[id],
        _ => unreachable!("only parsed functions are indexed"),
    }
}

/// What the files kept so far define, to decide the needs that depend on the whole program. It
/// points into the models rather than copying their names.
#[derive(Default)]
struct Kept {
    /// Key -> the kept non-lambda functions whose name, or the last segment of whose qualified
    /// name, has that key: (file, function). (The two keys differ for no function the front-ends
    /// make, but nothing here depends on it.)
    by_key: HashMap<String, Vec<(usize, FnId)>>,
    /// Key -> owners (last segments, keyed) of the kept non-lambda functions.
    owners: HashMap<String, Vec<String>>,
    /// Kept classes, by qualified name and by last segment.
    classes: HashSet<String>,
}

/// Appends `item` to the list of `key`, allocating the key only the first time.
fn push_at<V>(map: &mut HashMap<String, Vec<V>>, key: &str, item: V) {
    match map.get_mut(key) {
        Some(items) => items.push(item),
        None => {
            map.insert(key.to_string(), vec![item]);
        }
    }
}

impl Kept {
    /// Adds file `file`'s model; returns the `(key, owner)` pairs of functions not seen before.
    fn add(&mut self, file: usize, model: &FileModel) -> Vec<(String, String)> {
        let mut new = Vec::new();
        for (id, f) in model.functions.iter().enumerate() {
            if f.kind == FunctionKind::Lambda {
                continue;
            }
            let k = key(&f.name);
            push_at(&mut self.by_key, k, (file, id));
            let last = key(last_segment(&f.qualname));
            if last != k {
                push_at(&mut self.by_key, last, (file, id));
            }
            let owner_key = key(last_segment(owner_of(&f.qualname)));
            let name_key = key(&f.name);
            let known = self
                .owners
                .get(name_key)
                .is_some_and(|owners| owners.iter().any(|o| o == owner_key));
            if !owner_key.is_empty() && !known {
                push_at(&mut self.owners, name_key, owner_key.to_string());
                new.push((name_key.to_string(), owner_key.to_string()));
            }
        }
        for (class, _) in &model.classes {
            self.classes.insert(class.clone());
            self.classes.insert(last_segment(class).to_string());
        }
        new
    }

    /// The kept functions whose key is `k`, and some others (see `by_key`).
    fn keyed<'s, 'm, T: AsRef<FileModel>>(
        &'s self,
        models: &'m Models<T>,
        k: &str,
    ) -> impl Iterator<Item = ((usize, FnId), &'m Function)> + use<'s, 'm, T> {
        self.by_key
            .get(k)
            .into_iter()
            .flatten()
            .map(move |&at| (at, function_at(models, at)))
    }

    /// The kept functions declared with the name `name`, with where they are.
    fn named<'s, 'm, 'n, T: AsRef<FileModel>>(
        &'s self,
        models: &'m Models<T>,
        name: &'n str,
    ) -> impl Iterator<Item = ((usize, FnId), &'m Function)> + use<'s, 'm, 'n, T> {
        self.keyed(models, key(name))
            .filter(move |(_, f)| f.name == name)
    }

    /// A lower bound of the number of methods named `name` in the whole program: adding files
    /// only adds methods (and classes that make out-of-line definitions methods).
    fn methods<T: AsRef<FileModel>>(&self, models: &Models<T>, name: &str) -> usize {
        self.named(models, name)
            .filter(|(_, f)| f.is_method_where(|class| self.classes.contains(class)))
            .count()
    }

    /// How many different qualified names the kept functions named `name` that a call may
    /// reach by name (`eligible`, given their file) have: with two, a call resolved "by unique
    /// name" has no target, whatever else is parsed.
    fn qualnames<T: AsRef<FileModel>>(
        &self,
        models: &Models<T>,
        name: &str,
        eligible: impl Fn(usize, &Function) -> bool,
    ) -> usize {
        self.named(models, name)
            .filter(|&((file, _), f)| eligible(file, f))
            .map(|(_, f)| owner_of(&f.qualname))
            .collect::<HashSet<_>>()
            .len()
    }

    /// The owners (last segments) of the kept functions whose key is `name`.
    fn owners<'s>(&'s self, name: &str) -> impl Iterator<Item = &'s str> {
        self.owners
            .get(name)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }
}

/// Calls on typed receivers: the methods they may reach, then the classes between those methods'
/// owners and the receiver's class. Worked incrementally, as needs and owners arrive.
#[derive(Default)]
struct Typed {
    /// Method name -> receiver classes it is called on.
    classes_by_name: HashMap<String, Vec<String>>,
    /// Class -> the classes that may derive from it.
    derived: HashMap<String, HashSet<String>>,
    /// Class -> the classes it may derive from.
    ancestors: HashMap<String, Vec<String>>,
    done: HashSet<(String, String)>,
    /// Calls whose class may not define the method, decided once nothing else is left: `(name,
    /// class, language)`.
    inherited: BTreeSet<(String, String, Language)>,
    /// Those whose class does not, up the class's bases.
    walks: Vec<Walk>,
}

/// A walk up a class's bases for the nearest definition of a method (as the call graph makes it).
struct Walk {
    name: String,
    language: Language,
    /// The classes whose definitions were pulled last.
    level: Vec<String>,
    seen: HashSet<String>,
}

impl Walk {
    /// With the current level's classes kept: marks live the functions named `name` they own,
    /// and stops (returns false) if one is a method of the call's language, or if there are no
    /// bases further up (a subset of where the call graph stops); else pulls the next level's
    /// definitions and of the method, and goes on at once when all of them are modelled already.
    fn step<T: AsRef<FileModel>>(
        &mut self,
        (kept, models, files): (&Kept, &Models<T>, &[(PathBuf, Language)]),
        bases: &FxHashMap<&str, Vec<&str>>,
        (index, selection): (&Index, &mut Selection),
        live: &mut Vec<(usize, FnId)>,
    ) -> bool {
        loop {
            let mut stops = false;
            for (at, f) in kept.named(models, &self.name) {
                let owner = last_segment(owner_of(&f.qualname));
                if self.level.iter().any(|c| c == owner) {
                    live.push(at);
                    stops |= f.kind.is_method() && files[at.0].1 == self.language;
                }
            }
            if stops {
                return false;
            }
            let next: Vec<String> = self
                .level
                .iter()
                .flat_map(|c| bases.get(c.as_str()).into_iter().flatten())
                .filter(|b| self.seen.insert(b.to_string()))
                .map(|b| b.to_string())
                .collect();
            if next.is_empty() {
                return false;
            }
            let mut needed: Vec<usize> = next
                .iter()
                .flat_map(|class| index.class_definers(class))
                .collect();
            needed.extend(
                index
                    .function_definers(&self.name)
                    .iter()
                    .filter(|&&j| next.iter().any(|c| index.scopes[j].contains(c))),
            );
            selection.pull(&needed);
            self.level = next;
            if needed.iter().any(|&j| models[j].is_none()) {
                return true;
            }
        }
    }
}

/// Whether a kept method of `language` named `name` belongs to `class` (a subset of what the
/// call graph takes for a definition, so that the pre-filter walks the bases whenever it does).
fn defines<T: AsRef<FileModel>>(
    kept: &Kept,
    models: &Models<T>,
    files: &[(PathBuf, Language)],
    class: &str,
    name: &str,
    language: Language,
) -> bool {
    kept.named(models, name).any(|((file, _), f)| {
        f.kind.is_method()
            && files[file].1 == language
            && last_segment(owner_of(&f.qualname)) == class
    })
}

impl Typed {
    fn need(
        &mut self,
        name: String,
        class: String,
        language: Language,
        index: &Index,
        kept: &Kept,
        s: &mut Selection,
    ) {
        let derived = self
            .derived
            .entry(class.clone())
            .or_insert_with(|| owned(index.derived(&class)));
        s.pull_if(index.function_definers(&name), |j| {
            derived.iter().any(|c| index.scopes[j].contains(c))
        });
        self.inherited
            .insert((name.clone(), class.clone(), language));
        for owner in kept.owners(&name) {
            self.chain(&class, owner, index, s);
        }
        self.classes_by_name.entry(name).or_default().push(class);
    }

    /// A kept function named `name` whose owner is `owner`.
    fn owner(&mut self, name: &str, owner: &str, index: &Index, s: &mut Selection) {
        let classes = self.classes_by_name.get(name).cloned().unwrap_or_default();
        for class in classes {
            self.chain(&class, owner, index, s);
        }
    }

    /// Every definition of each class between `owner` and `class`.
    fn chain(&mut self, class: &str, owner: &str, index: &Index, s: &mut Selection) {
        let derived = &self.derived[class];
        if !derived.contains(owner) || !self.done.insert((class.to_string(), owner.to_string())) {
            return;
        }
        let ancestors = self.ancestors.entry(owner.to_string()).or_insert_with(|| {
            index
                .ancestors(owner)
                .into_iter()
                .map(str::to_string)
                .collect()
        });
        // Each class on the way keeps the definitions that give it a base on the way; in C++,
        // where two files may define the same class (and the bases of both count), all of them.
        let on_the_way: HashSet<&str> = ancestors
            .iter()
            .map(String::as_str)
            .filter(|a| derived.contains(*a))
            .collect();
        for &between in &on_the_way {
            if between == class {
                continue;
            }
            for (file, bases) in index.heads.get(between).into_iter().flatten() {
                let cpp = index.modules[*file].is_none();
                if cpp || bases.iter().any(|b| on_the_way.contains(b.as_str())) {
                    s.pull(&[*file]);
                }
            }
        }
    }
}

/// What the pre-filter reads in each file's text, so that the texts need not be kept while files
/// are modelled.
pub struct Scans {
    /// Per file: whether it is kept from the start, and what it may define.
    files: Vec<(bool, Option<Definitions>)>,
}

/// Scans every file's text (see [`Seeds`] and [`Definitions`]).
pub fn scan_files(
    files: &[(PathBuf, Language)],
    texts: &[Result<String, String>],
    knowledge: &Knowledge,
) -> Scans {
    let seeds = Seeds::new(knowledge);
    let rewrites = Rewrites::new(knowledge);
    let files = files
        .par_iter()
        .zip(texts)
        .map(|((path, language), text)| match text {
            Ok(text) => match scan(*language, path, text, &rewrites) {
                Some(scan) => (seeds.in_text(text, *language), Some(scan)),
                None => (true, None),
            },
            Err(_) => (true, None),
        })
        .collect();
    Scans { files }
}

/// Models the files that can matter, in rounds to a fixed point (see the module doc).
/// `model(i)` models file `i`; the result has one entry per file, `None` for a skipped file. `T`
/// is what `model` makes of a file: its [`FileModel`], and whatever else the caller keeps.
///
/// Beyond the seeds and the definers of called names, two needs depend on the program parsed so
/// far. An owner class only has to exist once: the first file (in path order) that defines it is
/// parsed, then the next one if that one did not. A call on a typed receiver needs, besides the
/// methods it may reach, every definition of each class between their owners and the receiver's
/// class (so that `derived_classes` sees the same inheritance, also where two files define a class
/// of the same name). Calls by name are resolved as the call graph resolves them once the files
/// that may define their targets are modelled; what depends on the whole program (method names
/// with too many methods, unique names) is decided last, when nothing else is left (see `Live`).
pub fn model_relevant<T, M>(
    files: &[(PathBuf, Language)],
    scans: Scans,
    model: M,
) -> Vec<Option<Result<T, String>>>
where
    T: AsRef<FileModel> + Send,
    M: Fn(usize) -> Result<T, String> + Sync,
{
    let scans = scans.files;
    let mut selection = Selection {
        kept: scans.iter().map(|(seed, _)| *seed).collect(),
        next: Vec::new(),
    };
    let index = Index::new(scans.into_iter().map(|(_, scan)| scan).collect());
    let mut models: Vec<Option<Result<T, String>>> = files.iter().map(|_| None).collect();
    let mut frontier: Vec<usize> = (0..files.len()).filter(|&i| selection.kept[i]).collect();
    let mut seen: HashSet<Need> = HashSet::default();
    let mut owners: BTreeSet<String> = BTreeSet::new();
    let mut typed = Typed::default();
    let mut kept = Kept::default();
    let mut live = Live::default();
    let mut pending: Vec<Need> = Vec::new();
    let mut round = 0;
    while !frontier.is_empty() || !pending.is_empty() || !typed.walks.is_empty() || live.waits() {
        round += 1;
        let modelled: Vec<(usize, Result<T, String>)> =
            frontier.par_iter().map(|&i| (i, model(i))).collect();
        let mut needs = std::mem::take(&mut pending);
        let done: Vec<usize> = modelled.iter().map(|(i, _)| *i).collect();
        for (i, result) in modelled {
            models[i] = Some(result);
        }
        // The calls of this round's live code can be resolved once the files their needs pull
        // (in this round) are modelled (in the next).
        live.ready = round + 1;
        for i in done {
            let Some(Ok(m)) = &models[i] else { continue };
            let m = m.as_ref();
            for (name, owner) in kept.add(i, m) {
                typed.owner(&name, &owner, &index, &mut selection);
            }
            live.add(i, (&models, &index, &kept), files, &mut needs);
        }
        live.resolve(round, (&models, &index, &kept), files);
        live.propagate((&models, &index, &kept), files, &mut needs);
        for need in needs {
            if !seen.insert(need.clone()) {
                continue;
            }
            match need {
                Need::Qualified { name, qualifier } => selection
                    .pull_if(index.function_definers(&name), |j| {
                        index.scopes[j].contains(&qualifier)
                    }),
                Need::Typed {
                    name,
                    class,
                    language,
                } => typed.need(name, class, language, &index, &kept, &mut selection),
                Need::Scoped { name, prefixes } => {
                    selection.pull_if(index.function_definers(&name), |j| {
                        prefixes.iter().any(|p| index.may_qualify(j, p))
                    });
                }
                Need::Owner(name) => {
                    owners.insert(name);
                }
            }
        }
        // An owner is settled once a kept class has its name.
        owners.retain(|name| {
            if kept.classes.contains(name) {
                return false;
            }
            match index.class_definers(name).find(|&j| !selection.kept[j]) {
                Some(j) => {
                    selection.pull(&[j]);
                    true
                }
                None => false,
            }
        });
        // With nothing else left to follow, decide the calls that depend on the whole program:
        // a name that already has too many methods, or several qualified names, resolves
        // nowhere, whatever else is parsed.
        if selection.next.is_empty() {
            live.decide_untyped((&models, &index, &kept), files, &mut selection);
            live.resolve_by_unique_name((&models, &index, &kept), files, &mut selection);
            // A typed call on a class that does not define the method (its definers were pulled
            // with the call) runs the nearest definition among the class's bases: walked one level
            // at a time, each level's definitions of the class pulled before its bases are read.
            if !typed.walks.is_empty() {
                // The kept models' classes, read as the call graph reads the program's.
                let bases = simple_bases(
                    models
                        .iter()
                        .flatten()
                        .flatten()
                        .flat_map(|model| &model.as_ref().classes)
                        .map(|(class, bases)| (class, bases)),
                );
                let context = (&kept, &models[..], files);
                typed.walks.retain_mut(|walk| {
                    walk.step(context, &bases, (&index, &mut selection), &mut live.queue)
                });
            }
            for (name, class, language) in std::mem::take(&mut typed.inherited) {
                // Nothing to walk to when no file that may define the method may name one of
                // the class's bases (read from the scans, a superset of the real ones).
                let bases = index.ancestors(&class);
                let inheritable = index.function_definers(&name).iter().any(|&j| {
                    bases
                        .iter()
                        .any(|&b| b != class && index.scopes[j].contains(b))
                });
                if inheritable && !defines(&kept, &models, files, &class, &name, language) {
                    let files: Vec<usize> = index.class_definers(&class).collect();
                    selection.pull(&files);
                    typed.walks.push(Walk {
                        seen: HashSet::from_iter([class.clone()]),
                        level: vec![class],
                        name,
                        language,
                    });
                }
            }
            // Their methods, now known, are live; their calls are needs of the next round, whose
            // files are modelled in the round after.
            let mut needs = Vec::new();
            live.ready = round + 2;
            live.propagate((&models, &index, &kept), files, &mut needs);
            pending.extend(needs);
        }
        frontier = std::mem::take(&mut selection.next);
        frontier.sort_unstable();
    }
    models
}

/// The functions that may run: the targets of the bindings, and every kept function that a call
/// in one of them may resolve to. Calls by name (`f()`, `a::f()`, `this->f()`, `self.f()`) are
/// resolved as the call graph resolves them ([`crate::callgraph::resolve_path`]), over the kept files,
/// once every file that may define a function they can reach is kept; those whose resolution
/// depends on the whole program are decided last, from a lower bound of what it defines: a name
/// with more than [`MAX_UNTYPED_FANOUT`] methods, or with two qualified names, resolves nowhere
/// whatever else is parsed. Calls on typed receivers reach the methods of every class that may
/// derive from the receiver's. Only the calls of live functions are needs.
#[derive(Default)]
struct Live {
    prefixes: ScopePrefixes,
    /// Key -> the calls from live functions that reach by pattern every kept function of that
    /// key: on typed receivers, and the untyped ones once decided.
    patterns: HashMap<String, Vec<Pattern>>,
    /// Calls by name from live code, each with the round after which the files that resolve it
    /// are modelled.
    waiting: Vec<(Caller, usize)>,
    /// The round that calls found now wait for.
    ready: usize,
    /// Calls `f()` that the caller's enclosing scopes do not define: resolved as written, through
    /// `using`s or by unique name (see [`crate::callgraph::by_unique_suffix`]), decided last.
    unresolved: Vec<Caller>,
    /// Method calls on receivers of unknown type (C++), and `this->f()` / `self.f()` that the
    /// caller's class does not define, by name, until the number of such methods is known.
    untyped: BTreeSet<(String, Language)>,
    done: HashSet<(usize, FnId)>,
    queue: Vec<(usize, FnId)>,
    /// Class -> the classes that may derive from it.
    related: HashMap<String, HashSet<String>>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Pattern {
    /// The methods of this name in files of this language (every function in a class or a
    /// namespace, a superset: whether an out-of-line `A::f` is a method depends on classes that
    /// may be parsed later).
    Method(String, Language),
    /// Functions whose owner may derive from this class.
    OwnedBy(String),
}

/// A call by name from live code: call `call` of a function, or a binding's target.
#[derive(Clone, Copy)]
enum Caller {
    Call {
        file: usize,
        function: FnId,
        call: usize,
    },
    Binding {
        file: usize,
        binding: usize,
    },
}

impl Caller {
    /// The file the call is written in.
    fn file(self) -> usize {
        match self {
            Caller::Call { file, .. } | Caller::Binding { file, .. } => file,
        }
    }

    /// Where the call is looked up from, what it names, and its number of arguments (none for
    /// a binding, whose targets are not chosen by arity).
    fn call<'m, T: AsRef<FileModel>>(
        self,
        models: &'m Models<T>,
        files: &[(PathBuf, Language)],
    ) -> (Scope<'m>, &'m CallTarget, Option<u32>) {
        let file = self.file();
        let Some(Ok(model)) = &models[file] else {
            unreachable!("only the calls of parsed files wait");
        };
        let model = model.as_ref();
        let language = files[file].1;
        match self {
            Caller::Call { function, call, .. } => {
                let f = &model.functions[function];
                let call = &f.calls[call];
                (
                    Scope::of_function(f, language),
                    &call.target,
                    Some(call.args),
                )
            }
            Caller::Binding { binding, .. } => {
                let binding = &model.bindings[binding];
                (Scope::of_binding(binding, language), &binding.target, None)
            }
        }
    }
}

/// The kept functions, looked up as the call graph looks up the program's.
struct KeptLookup<'a, T> {
    kept: &'a Kept,
    models: &'a Models<T>,
    files: &'a [(PathBuf, Language)],
}

impl<T: AsRef<FileModel>> Lookup for KeptLookup<'_, T> {
    type Id = (usize, FnId);

    fn with_qualname(&self, qualname: &str) -> impl Iterator<Item = (usize, FnId)> {
        // Borrowed for as long as `self` only, as the trait's signature says.
        let (kept, models): (&Kept, &Models<T>) = (self.kept, self.models);
        kept.keyed(models, key(last_segment(qualname)))
            .filter(move |(_, f)| f.qualname == qualname)
            .map(|(at, _)| at)
    }

    fn named(&self, name: &str) -> impl Iterator<Item = (usize, FnId)> {
        self.kept.named(self.models, name).map(|(at, _)| at)
    }

    fn function(&self, id: (usize, FnId)) -> &Function {
        function_at(self.models, id)
    }

    fn language(&self, (file, _): (usize, FnId)) -> Language {
        self.files[file].1
    }
}

impl Live {
    fn matches(
        related: &mut HashMap<String, HashSet<String>>,
        pattern: &Pattern,
        (function, language): (&Function, Language),
        index: &Index,
    ) -> bool {
        let qualname = function.qualname.as_str();
        match pattern {
            Pattern::Method(name, of) => {
                function.name == *name
                    && language == *of
                    && (function.kind.is_method() || !owner_of(qualname).is_empty())
            }
            Pattern::OwnedBy(class) => related
                .entry(class.clone())
                .or_insert_with(|| owned(index.derived(class)))
                .contains(key(last_segment(owner_of(qualname)))),
        }
    }

    /// Whether calls are left to resolve.
    fn waits(&self) -> bool {
        !self.waiting.is_empty() || !self.unresolved.is_empty() || !self.untyped.is_empty()
    }

    /// Adds file `file`, just modelled.
    fn add<T: AsRef<FileModel>>(
        &mut self,
        file: usize,
        (models, index, kept): (&Models<T>, &Index, &Kept),
        files: &[(PathBuf, Language)],
        needs: &mut Vec<Need>,
    ) {
        let Some(Ok(model)) = &models[file] else {
            return;
        };
        let model = model.as_ref();
        for (id, f) in model.functions.iter().enumerate() {
            if f.kind == FunctionKind::Lambda {
                continue;
            }
            let k = key(&f.name);
            let related = &mut self.related;
            let live = self.patterns.get(k).is_some_and(|ps| {
                ps.iter()
                    .any(|p| Self::matches(related, p, (f, files[file].1), index))
            });
            if live {
                self.queue.push((file, id));
            }
        }
        for (i, binding) in model.bindings.iter().enumerate() {
            let from = (&binding.scope[..], &binding.usings[..]);
            let caller = Caller::Binding { file, binding: i };
            self.target(
                caller,
                &binding.target,
                from,
                (models, index, kept),
                files,
                needs,
            );
        }
    }

    /// A call from live code.
    fn target<T: AsRef<FileModel>>(
        &mut self,
        caller: Caller,
        target: &CallTarget,
        (scope, usings): (&[String], &[String]),
        (models, index, kept): (&Models<T>, &Index, &Kept),
        files: &[(PathBuf, Language)],
        needs: &mut Vec<Need>,
    ) {
        let file = caller.file();
        let language = files[file].1;
        let CallTarget::Named { path, receiver } = target else {
            if let CallTarget::Direct(id) = target {
                self.queue.push((file, *id));
            }
            return;
        };
        target_needs(language, target, (scope, usings), &mut self.prefixes, needs);
        match receiver {
            Receiver::Typed(class) => {
                let pattern = Pattern::OwnedBy(key(last_segment(class)).to_string());
                self.pattern(
                    key(last_segment(path)),
                    pattern,
                    (models, index, kept),
                    files,
                );
            }
            Receiver::Object | Receiver::Native if language == Language::Cpp => {
                self.untyped.insert((path.to_string(), language));
            }
            // The call graph matches untyped method calls by name in C++ only.
            Receiver::Object | Receiver::Native => {}
            Receiver::None | Receiver::This => self.waiting.push((caller, self.ready)),
        }
    }

    fn pattern<T: AsRef<FileModel>>(
        &mut self,
        k: &str,
        pattern: Pattern,
        (models, index, kept): (&Models<T>, &Index, &Kept),
        files: &[(PathBuf, Language)],
    ) {
        if self.patterns.get(k).is_some_and(|ps| ps.contains(&pattern)) {
            return;
        }
        for (at, function) in kept.keyed(models, k) {
            let language = files[at.0].1;
            if Self::matches(&mut self.related, &pattern, (function, language), index) {
                self.queue.push(at);
            }
        }
        push_at(&mut self.patterns, k, pattern);
    }

    /// Resolves the calls whose files are modelled by round `round`: every file that may define
    /// a function they can reach, except for an `f()` beyond the caller's enclosing scopes (which
    /// may reach any function named `f`) and a method that the caller's class does not define.
    fn resolve<T: AsRef<FileModel>>(
        &mut self,
        round: usize,
        (models, _, kept): (&Models<T>, &Index, &Kept),
        files: &[(PathBuf, Language)],
    ) {
        let definitions = KeptLookup {
            kept,
            models,
            files,
        };
        let (ready, later) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|&(_, at)| at <= round);
        self.waiting = later;
        for (caller, _) in ready {
            let (scope, target, args) = caller.call(models, files);
            let CallTarget::Named { path, receiver } = target else {
                continue;
            };
            let by_name = !path.contains("::");
            let found = match receiver {
                Receiver::This => match in_enclosing_scopes(&definitions, scope, path) {
                    Some(found) => found,
                    None => {
                        self.untyped.insert((path.to_string(), scope.language()));
                        continue;
                    }
                },
                // The scopes' files are kept, but the rest of the lookup may reach any
                // function of that name.
                _ if by_name => match in_enclosing_scopes(&definitions, scope, path) {
                    Some(found) => found,
                    None => {
                        self.unresolved.push(caller);
                        continue;
                    }
                },
                _ => resolve_path(&definitions, scope, path),
            };
            self.reach(&definitions, found, args);
        }
    }

    fn reach<T: AsRef<FileModel>>(
        &mut self,
        definitions: &KeptLookup<T>,
        found: Vec<(usize, FnId)>,
        args: Option<u32>,
    ) {
        match args {
            Some(args) => self.queue.extend(by_arity(definitions, found, args, true)),
            None => self.queue.extend(found),
        }
    }

    /// Resolves the calls `f()` left by [`Live::resolve`] once every function named `f` is kept
    /// (or, in Rust, two qualified names are); pulls the files that may define one otherwise.
    fn resolve_by_unique_name<T: AsRef<FileModel>>(
        &mut self,
        (models, index, kept): (&Models<T>, &Index, &Kept),
        files: &[(PathBuf, Language)],
        selection: &mut Selection,
    ) {
        let definitions = KeptLookup {
            kept,
            models,
            files,
        };
        let mut settled: HashMap<(&str, Language), bool> = HashMap::default();
        for caller in std::mem::take(&mut self.unresolved) {
            let (scope, target, args) = caller.call(models, files);
            let CallTarget::Named { path, .. } = target else {
                continue;
            };
            let language = scope.language();
            let definers = index.function_definers(key(path));
            let done = *settled.entry((path, language)).or_insert_with(|| {
                // Two qualified names leave a Rust call without a target; a C++ one may still
                // find a global function of that name.
                let reachable = |file: usize, f: &Function| files[file].1 == language || f.extern_c;
                language == Language::Rust && kept.qualnames(models, path, reachable) >= 2
                    || definers.iter().all(|&j| models[j].is_some())
            });
            if done {
                let found = resolve_path(&definitions, scope, path);
                self.reach(&definitions, found, args);
            } else {
                selection.pull(definers);
                self.unresolved.push(caller);
            }
        }
    }

    /// Decides the method calls by name (on receivers of unknown type in C++, and `this->f()` /
    /// `self.f()` that the caller's class does not define): with more than
    /// [`MAX_UNTYPED_FANOUT`] methods of that name kept, they resolve nowhere; with all the files
    /// that may define one kept, they reach those methods. Otherwise pulls enough of those files
    /// to find the methods that would settle it, and waits.
    fn decide_untyped<T: AsRef<FileModel>>(
        &mut self,
        (models, index, kept): (&Models<T>, &Index, &Kept),
        files: &[(PathBuf, Language)],
        selection: &mut Selection,
    ) {
        for (name, language) in std::mem::take(&mut self.untyped) {
            let methods = kept.methods(models, &name);
            if methods > MAX_UNTYPED_FANOUT {
                continue;
            }
            let unmodelled: Vec<usize> = index
                .function_definers(key(&name))
                .iter()
                .copied()
                .filter(|&j| models[j].is_none())
                .collect();
            if unmodelled.is_empty() {
                let pattern = Pattern::Method(name.clone(), language);
                self.pattern(key(&name), pattern, (models, index, kept), files);
            } else {
                let enough = unmodelled.len().min(MAX_UNTYPED_FANOUT + 1 - methods);
                selection.pull(&unmodelled[..enough]);
                self.untyped.insert((name, language));
            }
        }
    }

    fn propagate<T: AsRef<FileModel>>(
        &mut self,
        (models, index, kept): (&Models<T>, &Index, &Kept),
        files: &[(PathBuf, Language)],
        needs: &mut Vec<Need>,
    ) {
        while let Some((file, id)) = self.queue.pop() {
            if !self.done.insert((file, id)) {
                continue;
            }
            let Some(Ok(model)) = &models[file] else {
                continue;
            };
            let model = model.as_ref();
            let Some(function) = model.functions.get(id) else {
                continue;
            };
            needs.extend(owner_need(function));
            let from = (&function.scope[..], &function.usings[..]);
            for (call, site) in function.calls.iter().enumerate() {
                let caller = Caller::Call {
                    file,
                    function: id,
                    call,
                };
                let context = (models, index, kept);
                self.target(caller, &site.target, from, context, files, needs);
            }
        }
    }
}

/// The files kept so far, and those kept since the last round.
struct Selection {
    kept: Vec<bool>,
    next: Vec<usize>,
}

impl Selection {
    fn pull(&mut self, files: &[usize]) {
        self.pull_if(files, |_| true);
    }

    fn pull_if(&mut self, files: &[usize], keep: impl Fn(usize) -> bool) {
        for &j in files {
            if !self.kept[j] && keep(j) {
                self.kept[j] = true;
                self.next.push(j);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_scopes(d: &Definitions, scopes: &[&str]) {
        for scope in scopes {
            assert!(
                d.scopes.contains(*scope),
                "{scope} missing from {:?}",
                d.scopes
            );
        }
    }

    fn scan(text: &str) -> Definitions {
        scan_cpp(text, &Rewrites::new(&Knowledge::builtin()))
    }

    #[test]
    fn finds_function_and_class_definitions_not_calls() {
        let text = r#"
            namespace ns {
            struct Foo : public Bar<int, 2>, private Baz { void method() const override { helper(1); } };
            static int free_fn(int a, int b = g(2)) noexcept(true) { return call(a) ? x(b) : y(b); }
            Foo::Foo(int a) : base_(a), other_{a} { }
            auto trailing(int x) -> decltype(x) { return x; }
            template <> void spec<int>(int) {}
            Foo::~Foo() {}
            bool operator==(const Foo&, const Foo&) { return true; }
            void declared_only(int);
            int value = compute(3);
            template <class T> void tmpl(T t) { if (check(t)) { run(t); } }
            PYBIND11_MODULE(m, mod) { mod.def("f", &free_fn); }
            void with_try() try { risky(); } catch (...) {}
            template <class T> struct Spec<T*> : Base2 {};
            }
        "#;
        let d = scan(text);
        for name in [
            "Foo",
            "method",
            "free_fn",
            "trailing",
            "spec",
            "operator==",
            "tmpl",
            "PYBIND11_MODULE",
            "with_try",
        ] {
            assert!(
                d.functions.contains(&name.to_string()),
                "{name} missing from {:?}",
                d.functions
            );
        }
        for name in [
            "helper",
            "g",
            "call",
            "x",
            "y",
            "declared_only",
            "compute",
            "check",
            "run",
            "risky",
            "T",
            "Bar",
            "if",
            "catch",
        ] {
            assert!(
                !d.functions.contains(&name.to_string()),
                "{name} wrongly in {:?}",
                d.functions
            );
        }
        let heads: Vec<_> = d
            .classes
            .iter()
            .map(|(n, b)| (n.join(" "), b.join(" ")))
            .collect();
        assert!(
            heads.contains(&("Foo".into(), "public Bar private Baz".into())),
            "{heads:?}"
        );
        assert!(
            heads.contains(&("Spec".into(), "Base2".into())),
            "{heads:?}"
        );
        assert!(!heads.iter().any(|(n, _)| n == "T"), "{heads:?}");
        assert_scopes(&d, &["ns", "Foo", "Spec"]);
    }

    #[test]
    fn ignores_comments_strings_and_directives() {
        let text = "// void a() {}\n/* void b() {} */\nconst char* s = \"void c() {}\";\n\
                    #define D(x) void d() {}\nauto r = R\"x(void e() {})x\";\nvoid f() {}\n";
        assert_eq!(scan(text).functions, vec!["f".to_string()]);
    }

    #[test]
    fn operators_are_spelled_as_the_front_end_does() {
        let d =
            scan("struct A { int operator()(int) { return 0; } void* operator new (size_t); };");
        assert!(
            d.functions.contains(&"operator()".to_string()),
            "{:?}",
            d.functions
        );
        assert!(
            d.functions.contains(&"operatornew".to_string()),
            "{:?}",
            d.functions
        );
    }

    #[test]
    fn qualifiers_and_rewritten_namespaces_are_scopes() {
        let d = scan("void a::B<int>::f() {}\nPYBIND11_NAMESPACE_BEGIN(detail)\nvoid g() {}\n");
        assert_scopes(&d, &["a", "B", "detail", "pybind11"]);
    }

    #[test]
    fn rust_scan_finds_functions_impls_and_scopes() {
        let text = r##"
            //! fn not_this() {}
            use pyo3::prelude::*;
            /* nested /* fn nor_this() {} */ still a comment fn nor_that() {} */
            const S: &str = "fn no() {}";
            const R: &str = r#"fn raw() {} "#;
            fn free<'a>(x: &'a str) -> char { let c = '{'; c }
            impl<T: Clone> Trait<Vec<T>> for Arc<Widget<T>> where T: Copy {
                fn method(&self) {}
            }
            impl Gadget { fn other(&self) {} }
            mod inner { pub trait Poke { fn poke(&self) {} } }
            fn r#type() {}
        "##;
        let d = scan_rust(text, Path::new("crates/my-crate/src/a/b.rs"));
        assert_eq!(
            d.functions,
            ["free", "method", "other", "poke", "type"].map(String::from)
        );
        let heads: Vec<_> = d
            .classes
            .iter()
            .map(|(n, b)| (n.join(" "), b.join(" ")))
            .collect();
        assert_eq!(
            heads,
            [
                ("Arc Widget T".into(), "Trait".into()),
                ("Gadget".into(), String::new())
            ]
        );
        assert_scopes(
            &d,
            &["Gadget", "Widget", "inner", "Poke", "my_crate", "a", "b"],
        );
        assert_eq!(
            d.module,
            Some(["my_crate", "a", "b"].map(String::from).to_vec())
        );
    }

    #[test]
    fn keys_match_what_the_scan_indexes() {
        assert_eq!(key("~Foo"), "Foo");
        assert_eq!(key("f"), "f");
        assert_eq!(key("operator()"), "operator()");
        assert_eq!(key("(*get)"), "get");
    }

    #[test]
    fn keywords_are_sorted_for_binary_search() {
        assert!(KEYWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn seeds_are_whole_identifiers() {
        let p = Seeds::new(&Knowledge::builtin());
        let cpp = |text| p.in_text(text, Language::Cpp);
        assert!(cpp("PYBIND11_MODULE(x, m) {}"));
        assert!(cpp("m.def(\"f\", &f);"));
        assert!(cpp("~Holder() { py::gil_scoped_acquire gil; }"));
        assert!(!cpp("#define X default"));
        assert!(!cpp("int undef_x;"));
        assert!(!cpp("void f() { py::gil_scoped_release r; }"));
        let rust = |text| p.in_text(text, Language::Rust);
        assert!(rust("#[pyfunction]\nfn f() {}"));
        assert!(!rust(
            "fn f(py: Python) { py.detach(|| ()); Python::attach(|py| ()); }"
        ));
        assert!(!rust("fn def() {}"));
    }
}

//! The light scan of Rust text for what it may define (see [`Definitions`]), and the nesting
//! bound within which syn's parser and the Rust front-end's walk cannot overflow a stack.

use std::path::Path;

use rustc_hash::FxHashSet as HashSet;

use super::lexer::{RustLexer, Token, line_of};
use super::scan::{Definitions, key};
use crate::knowledge::{CrateTypes, Knowledge};

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
    let mut lexer = RustLexer::new(text);
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
    let rest = lexer.rest();
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
    let mut lexer = RustLexer::new(text);
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
                    // `static ref X` of `lazy_static!`: its initialiser, `X::{init}`.
                    Some("ref") => {
                        functions.insert(key(LAZY_STATIC_INIT));
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

/// Whether the text names a type of Python objects: one of `python_types` (`Bound`, `Python`) or,
/// by PyO3's naming, a `Py` type (`PyDict`), outside comments and strings. Before a function
/// (`pyo3::Python::attach`, `PyDict::new`) it is Python's; before a variant (`Bound::Included`)
/// or at the end of a path (`Cow::Borrowed`, `std::ops::Bound`) another type's.
pub fn names_python_type(text: &str, python_types: &foldhash::HashSet<String>) -> bool {
    // Lexing the file costs more than looking for the names in its text first.
    let bytes = text.as_bytes();
    let py_type = || {
        memchr::memmem::find_iter(bytes, b"Py")
            .any(|at| bytes.get(at + 2).is_some_and(u8::is_ascii_uppercase))
    };
    if !py_type()
        && !python_types
            .iter()
            .any(|name| memchr::memmem::find(bytes, name.as_bytes()).is_some())
    {
        return false;
    }
    let starts_upper = |token: Option<Token>| match token {
        Some(Token::Ident(start, _)) => bytes[start].is_ascii_uppercase(),
        _ => false,
    };
    // The token before, the token, and the two after it: read as the lexer goes, so that a file
    // stops being lexed at its first Python type.
    let mut lexer = RustLexer::new(text);
    let mut window = [None, lexer.next(), lexer.next(), lexer.next()];
    while let [before, Some(token), next, after] = window {
        if let Token::Ident(start, end) = token {
            let word = &text[start..end];
            let python = python_types.contains(word)
                || word
                    .strip_prefix("Py")
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()));
            let before_path = next == Some(Token::Scope);
            let in_path = before == Some(Token::Scope);
            let before_function = before_path && !starts_upper(after);
            if python && (before_function || !(before_path || in_path)) {
                return true;
            }
        }
        window = [Some(token), next, after, lexer.next()];
    }
    false
}

/// Whether the text names one of `crates` as a path's first segment (`pyo3_log::init()`,
/// `use pyo3_log::Logger;`), outside comments and strings.
pub fn names_crate(text: &str, crates: &foldhash::HashSet<String>) -> bool {
    // Lexing every Rust file costs more than looking for the names in its text, and most files
    // name none of them.
    if !crates
        .iter()
        .any(|name| memchr::memmem::find(text.as_bytes(), name.as_bytes()).is_some())
    {
        return false;
    }
    let mut previous: Option<(usize, usize)> = None;
    for token in RustLexer::new(text) {
        match token {
            Token::Ident(start, end) => previous = Some((start, end)),
            Token::Scope => {
                if let Some((start, end)) = previous.take()
                    && crates.contains(&text[start..end])
                {
                    return true;
                }
            }
            _ => previous = None,
        }
    }
    false
}

/// The name of a lazy static's initialiser, a function of its own (`X::{init}`).
pub const LAZY_STATIC_INIT: &str = "{init}";

/// The struct fields and statics a Rust file declares, read from its tokens without parsing the
/// file (each type alone is parsed): `struct S { a: Arc<Mutex<T>>, .. }` gives `(S, a, Mutex)`,
/// `static X: RwLock<T> = ..` and `lazy_static! { static ref X: T = ..; }` give `(X, ..)`.
/// Also whether the file names a binding attribute (see [`CrateTypes::binds`]).
pub fn declared_types(text: &str, knowledge: &Knowledge) -> CrateTypes {
    let mut lexer = RustLexer::new(text);
    let mut types = CrateTypes::default();
    let word = |start: usize, end: usize| &text[start..end];
    let mut previous = None;
    while let Some(token) = lexer.next() {
        let before = previous.replace(token);
        let Token::Ident(start, end) = token else {
            continue;
        };
        let rust = &knowledge.rust;
        types.binds |= [&rust.function_attributes, &rust.impl_attributes]
            .iter()
            .any(|names| names.contains(word(start, end)));
        match word(start, end) {
            // An impl item, not `-> impl Trait` nor `f: impl Fn()`: it starts the file, follows
            // an item, a statement, a block's opening or an attribute, or is `unsafe`.
            "impl"
                if match before {
                    None | Some(Token::Punct(b'}' | b';' | b'{' | b']')) => true,
                    Some(Token::Ident(s, e)) => word(s, e) == "unsafe",
                    _ => false,
                } =>
            {
                impl_returns(text, &mut lexer, knowledge, &mut types);
                previous = Some(Token::Punct(b'}'));
            }
            // A free function (a method's `fn` is read with its impl), or a nested one. Its
            // body is read on, for the items in it.
            "fn" if method_return(text, &mut lexer, None, &mut types).0 => {
                previous = Some(Token::Punct(b'{'));
            }
            // A trait's methods are not free functions: its body is skipped.
            "trait" => {
                let mut angles = 0usize;
                loop {
                    match lexer.next() {
                        Some(Token::Punct(b'<')) => angles += 1,
                        Some(Token::Punct(b'>')) => angles = angles.saturating_sub(1),
                        Some(Token::Punct(b'{')) if angles == 0 => {
                            skip_group_from(&mut lexer, 1);
                            break;
                        }
                        Some(Token::Punct(b';')) | None => break,
                        _ => {}
                    }
                }
                previous = Some(Token::Punct(b'}'));
            }
            "struct" => {
                let Some(Token::Ident(s, e)) = lexer.next() else {
                    continue;
                };
                let owner = word(s, e).to_string();
                // Skip generics and a where clause to the body; a tuple or unit struct has none.
                let mut angles = 0usize;
                let body = loop {
                    match lexer.next() {
                        Some(Token::Punct(b'<')) => angles += 1,
                        Some(Token::Punct(b'>')) => angles = angles.saturating_sub(1),
                        Some(Token::Punct(b'{')) if angles == 0 => break true,
                        Some(Token::Punct(b';' | b'(')) if angles == 0 => break false,
                        None => break false,
                        _ => {}
                    }
                };
                if body {
                    struct_fields(text, &mut lexer, &owner, &mut types);
                }
                // What follows a struct's body or `;` starts an item (a tuple struct's fields
                // are read on, to its `;`).
                previous = Some(Token::Punct(b';'));
            }
            "static" => {
                let mut name = lexer.next();
                let mut lazy = false;
                while let Some(Token::Ident(s, e)) = name
                    && matches!(word(s, e), "ref" | "mut")
                {
                    lazy |= word(s, e) == "ref";
                    name = lexer.next();
                }
                if let (Some(Token::Ident(s, e)), Some(Token::Punct(b':'))) = (name, lexer.next())
                    && let Some((ty, content)) = type_until(text, &mut lexer, b'=')
                {
                    let name = word(s, e).to_string();
                    types.contents.extend(content.map(|c| (name.clone(), c)));
                    if lazy {
                        types.lazy_statics.push(name.clone());
                    }
                    types.statics.push((name, ty));
                }
            }
            _ => {}
        }
    }
    types
}

/// The fields of a struct body whose `{` was just read: `name: Type` at the body's top level.
fn struct_fields(text: &str, lexer: &mut RustLexer, owner: &str, types: &mut CrateTypes) {
    let mut previous: Option<(usize, usize)> = None;
    while let Some(token) = lexer.next() {
        match token {
            Token::Punct(b'}') => return,
            Token::Punct(b'#') => skip_group(lexer),
            Token::Punct(b'(') => skip_group_from(lexer, 1),
            Token::Punct(b':') => {
                if let Some((s, e)) = previous.take()
                    && let Some((ty, content)) = type_until(text, lexer, b',')
                {
                    let field = &text[s..e];
                    types
                        .contents
                        .extend(content.map(|c| (format!("{owner}.{field}"), c)));
                    types
                        .fields
                        .push((owner.to_string(), field.to_string(), ty));
                }
                // The type ended at a `,` or at the body's `}`.
                if lexer.rest().is_empty() || text.as_bytes()[lexer.i - 1] == b'}' {
                    return;
                }
            }
            Token::Ident(s, e) => previous = Some((s, e)),
            _ => previous = None,
        }
    }
}

/// The return types of the methods of an impl whose `impl` was just read, to the end of its
/// body: `impl Pool { fn get(&self) -> Result<Item> {..} }` gives `(Pool::get, Item)`; and
/// those of its methods returning a value whose body names one of the C API's releases and none
/// of its acquires (see [`CrateTypes::releasing`]).
fn impl_returns(text: &str, lexer: &mut RustLexer, knowledge: &Knowledge, types: &mut CrateTypes) {
    // The self type: after the generics, and after `for` in a trait impl, to the body or `where`.
    let mut start = lexer.i;
    let mut angles = 0usize;
    let mut named = false;
    let stop = loop {
        let before = lexer.i;
        match lexer.next() {
            Some(Token::Punct(b'<')) => angles += 1,
            Some(Token::Punct(b'>')) => {
                angles = angles.saturating_sub(1);
                if angles == 0 && !named {
                    start = lexer.i;
                }
            }
            Some(Token::Punct(b'{')) if angles == 0 => break before,
            Some(Token::Ident(s, e)) if angles == 0 => match &text[s..e] {
                "for" => start = lexer.i,
                "where" => {
                    // To the body, past the bounds.
                    while !matches!(lexer.next(), Some(Token::Punct(b'{')) | None) {}
                    break before;
                }
                _ => named = true,
            },
            Some(Token::Punct(b';')) | None => return,
            _ => {}
        }
    };
    let owner = text
        .get(start..stop)
        .filter(|t| t.len() <= MAX_TYPE_LEN)
        .and_then(|t| syn::parse_str::<syn::Type>(t).ok())
        .and_then(|ty| super::rust::type_name(&ty));
    // The body's items, one level in; in the body of a method returning a value, whether it
    // releases and whether it acquires.
    let mut depth = 1usize;
    let mut body: Option<(String, bool, bool)> = None;
    while depth > 0 {
        match lexer.next() {
            Some(Token::Punct(b'{' | b'(' | b'[')) => depth += 1,
            Some(Token::Punct(b'}' | b')' | b']')) => {
                depth -= 1;
                if depth == 1
                    && let Some((method, releases, acquires)) = body.take()
                    && releases
                    && !acquires
                {
                    types.releasing.push(method);
                }
            }
            Some(Token::Ident(s, e)) if depth == 1 && &text[s..e] == "fn" => {
                // A method whose signature was read with its body's `{`. An impl whose type is
                // not read: its methods are read past, and kept nowhere (they are no free
                // functions).
                let (opened, returning) = match owner.as_deref() {
                    Some(owner) => method_return(text, lexer, Some(owner), types),
                    None => method_return(text, lexer, None, &mut CrateTypes::default()),
                };
                if opened {
                    depth += 1;
                    body = owner
                        .as_ref()
                        .and(returning)
                        .map(|method| (method, false, false));
                }
            }
            Some(Token::Ident(s, e)) => {
                if let Some((_, releases, acquires)) = &mut body {
                    *releases |= knowledge.release_calls.contains(&text[s..e]);
                    *acquires |= knowledge.acquire_calls.contains(&text[s..e]);
                }
            }
            None => return,
            _ => {}
        }
    }
}

/// Records the return type of the method of `owner` (a free function's, with none) whose `fn`
/// was just read, reading its signature; returns whether it read its body's `{` too, and the
/// function (`Type::method`, or the free function's name) when it returns a value.
fn method_return(
    text: &str,
    lexer: &mut RustLexer,
    owner: Option<&str>,
    types: &mut CrateTypes,
) -> (bool, Option<String>) {
    let Some(Token::Ident(s, e)) = lexer.next() else {
        return (false, None);
    };
    let method = &text[s..e];
    // Past the generics to the parameters, then past them.
    loop {
        match lexer.next() {
            Some(Token::Punct(b'(')) => break,
            Some(Token::Punct(b'{' | b';')) | None => return (false, None),
            _ => {}
        }
    }
    skip_group_from(lexer, 1);
    match lexer.next() {
        Some(Token::Arrow) => {}
        next => return (next == Some(Token::Punct(b'{')), None),
    }
    let (Some(ty), opened) = parse_type_until(text, lexer, b'{') else {
        return (false, None);
    };
    let function = match owner {
        Some(owner) => format!("{owner}::{method}"),
        None => method.to_string(),
    };
    for (position, returned) in super::rust::returned_type_names(&ty, owner) {
        types
            .returns
            .push((format!("{function}{position}"), returned));
    }
    (opened, Some(function))
}

/// Skips an attribute's `[..]` after its `#`.
fn skip_group(lexer: &mut RustLexer) {
    if let Some(Token::Punct(b'[')) = lexer.next() {
        skip_group_from(lexer, 1);
    }
}

/// Skips to where `depth` open brackets are closed.
fn skip_group_from(lexer: &mut RustLexer, mut depth: usize) {
    while depth > 0 {
        match lexer.next() {
            Some(Token::Punct(b'(' | b'[' | b'{')) => depth += 1,
            Some(Token::Punct(b')' | b']' | b'}')) => depth -= 1,
            None => return,
            _ => {}
        }
    }
}

/// The longest and the most nested type text [`type_until`] parses: a declared type is short,
/// and syn's parser recurses once per level.
const MAX_TYPE_LEN: usize = 512;
const MAX_TYPE_DEPTH: usize = 32;

/// The name of the type that starts here and ends at `end` (or at a closing bracket) outside
/// any brackets, and that of its content: parsed alone, looked through as
/// [`super::rust::type_name`] and [`super::rust::content_type_name`] do.
fn type_until(text: &str, lexer: &mut RustLexer, end: u8) -> Option<(String, Option<String>)> {
    let ty = parse_type_until(text, lexer, end).0?;
    Some((
        super::rust::type_name(&ty)?,
        super::rust::content_type_name(&ty),
    ))
}

/// The type that starts here and ends at `end`, at a closing bracket, at a `;` or at a `where`
/// outside any brackets, parsed alone; and whether `end` is what ended it (it was read).
fn parse_type_until(text: &str, lexer: &mut RustLexer, end: u8) -> (Option<syn::Type>, bool) {
    let start = lexer.i;
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let (stop, at_end) = loop {
        let before = lexer.i;
        match lexer.next() {
            Some(Token::Punct(b)) if b == end && depth == 0 => break (before, true),
            Some(Token::Punct(b';')) if depth == 0 => break (before, false),
            Some(Token::Ident(s, e)) if depth == 0 && &text[s..e] == "where" => {
                break (before, false);
            }
            Some(Token::Punct(b'<' | b'(' | b'[' | b'{')) => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            // `->` inside `Box<dyn Fn() -> T>` is one token (`Token::Arrow`): it closes nothing.
            Some(Token::Punct(b'>' | b')' | b']' | b'}')) => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => break (before, false),
            },
            None => break (text.len(), false),
            _ => {}
        }
    };
    if stop.saturating_sub(start) > MAX_TYPE_LEN || deepest > MAX_TYPE_DEPTH {
        return (None, at_end);
    }
    let ty = text.get(start..stop).and_then(|t| syn::parse_str(t).ok());
    (ty, at_end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::scan::tests::{assert_scopes, heads};

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
        let heads = heads(&d);
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
    fn declared_types_are_read_from_the_tokens() {
        let text = "#[pyclass(frozen)]\npub struct T<'a> {\n    #[pyo3(get)]\n    pub(crate) rows: \
                    Arc<RwLock<Vec<i64>>>,\n    f: Box<dyn Fn(u8) -> u8 + 'a>,\n    last: Mutex<u8>\n}\n\
                    struct Unit;\nstruct Pair(u8, u8);\n\
                    static X: LazyLock<Mutex<u8>> = LazyLock::new(|| Mutex::new(0));\n\
                    lazy_static! { static ref Y: RwLock<u8> = RwLock::new(0); }\n";
        let types = super::declared_types(text, &crate::knowledge::Knowledge::builtin());
        let field = |o: &str, f: &str, t: &str| (o.to_string(), f.to_string(), t.to_string());
        assert_eq!(
            types.fields,
            [field("T", "rows", "RwLock"), field("T", "last", "Mutex")]
        );
        let statics: Vec<(&str, &str)> = types
            .statics
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        assert_eq!(statics, [("X", "Mutex"), ("Y", "RwLock")]);
    }

    #[test]
    fn return_types_are_read_from_impls_and_free_functions() {
        let text = "struct Unit;\nimpl Pool {\n    pub fn open(p: &str) -> Result<Self, E> { Ok(Pool { p: (p, [1]) }) }\n\
                    fn get<'a, T: Into<u8>>(&'a self) -> PyResult<Item>\n    where\n        T: Send,\n    {}\n\
                    fn first(&self) -> Option<&Item> { self.items.first() }\n    fn none(&self) {}\n\
                    fn make() -> impl Fn() -> u8 { || 0 }\n}\n\
                    unsafe impl<T: Clone> Source for Wrapper<T> { fn next(&mut self) -> Self { todo!() } }\n\
                    fn free() -> impl Iterator<Item = u8> { std::iter::empty() }\n\
                    trait Source { fn next(&mut self) -> Item; }\n\
                    pub(crate) fn configure(b: Builder) -> MyResult<(Builder, Option<String>)> { todo!() }\n";
        let types = super::declared_types(text, &crate::knowledge::Knowledge::builtin());
        let returns: Vec<(&str, &str)> = types
            .returns
            .iter()
            .map(|(m, t)| (m.as_str(), t.as_str()))
            .collect();
        assert_eq!(
            returns,
            [
                ("Pool::open", "Pool"),
                ("Pool::get", "Item"),
                ("Pool::first", "Item"),
                ("Wrapper::next", "Wrapper"),
                ("configure.0", "Builder"),
                ("configure.1", "String"),
            ]
        );
    }
}

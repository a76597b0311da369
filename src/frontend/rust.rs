//! The Rust front-end: PyO3 bindings read with syn, walked once to fill the language-neutral model.
//!
//! syn trees are not `Send` (their spans live in a thread-local source map), so each file is
//! parsed and turned into plain data inside its worker thread.

use foldhash::HashSet;
use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};
use std::path::Path;

use proc_macro2::Span as SynSpan;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Expr, FnArg, ImplItem, Item, Pat, Type};

use super::rust_scan::LAZY_STATIC_INIT;
use crate::knowledge::Knowledge;
use crate::model::{
    Binding, CallNote, CallSite, CallTarget, FileModel, FnId, Function, FunctionKind, GilState,
    GilSwitch, LockKind, LockRegion, Names, PyUse, Receiver, SharedNames, Span, Unconsumed,
    last_segment,
};

pub fn extract(path: &Path, text: &str, knowledge: &Knowledge) -> Result<FileModel, String> {
    let parsed = blank_preamble(text);
    set_ascii_lines(&parsed);
    let file = syn::parse_file(&parsed).map_err(|e| {
        let at = e.span().start();
        format!(
            "does not parse as Rust (line {}, column {}): {e}",
            at.line,
            at.column + 1
        )
    })?;
    let (krate, module) = module_path(path);
    let mut walker = Walker {
        k: knowledge,
        krate,
        model: FileModel {
            names_framework: true,
            ..FileModel::default()
        },
        module,
        self_type: None,
        usings: Vec::new(),
        shared_scope: SharedNames::default(),
        shared_usings: SharedNames::default(),
        statics: FxHashMap::default(),
        field_types: FxHashMap::default(),
        python_classes: FxHashSet::default(),
        declared_types: FxHashSet::default(),
        variant_types: FxHashMap::default(),
        last_thread: None,
        python_future: None,
        awaited: None,
        guard_functions: FxHashMap::default(),
        returned_types: FxHashMap::default(),
        lock_functions: FxHashSet::default(),
        sender_functions: FxHashMap::default(),
        methods: FxHashSet::default(),
        lock_fields: FxHashSet::default(),
        thread_locals: FxHashSet::default(),
        thread_local_closure: false,
        free_functions: FxHashSet::default(),
        type_aliases: FxHashMap::default(),
        lock_contents: FxHashMap::default(),
        log_imports: FxHashSet::default(),
        names_python: super::rust_scan::names_python_type(text, &knowledge.rust.python_types),
        generic_bounds: Vec::new(),
        frames: Vec::new(),
    };
    walker.crate_declarations();
    walker.collect_declarations(&file.items);
    walker.items(&file.items);
    let model = walker.model;
    // Spans are no longer needed: free this thread's source map for the next file.
    proc_macro2::extra::invalidate_current_thread_spans();
    ASCII_LINES.with_borrow_mut(Vec::clear);
    Ok(model)
}

/// The crate (the directory holding `src/`, `-` read as `_`) and the module path of a file:
/// `polars-python/src/series/mod.rs` -> (`polars_python`, [`polars_python`, `series`]).
pub(crate) fn module_path(path: &Path) -> (String, Vec<String>) {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let src = parts.iter().rposition(|p| p == "src");
    let krate = src
        .and_then(|i| i.checked_sub(1))
        .map_or("crate".to_string(), |i| parts[i].replace('-', "_"));
    let mut module = vec![krate.clone()];
    let rest = src.map_or(&parts[parts.len().saturating_sub(1)..], |i| &parts[i + 1..]);
    for (i, part) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        let stem = if last {
            part.trim_end_matches(".rs")
        } else {
            part.as_str()
        };
        if !(last && matches!(stem, "lib" | "main" | "mod")) {
            module.push(stem.to_string());
        }
    }
    (krate, module)
}

/// `text` with a byte order mark and a `#!` line turned into spaces of the same length. syn drops
/// both before parsing, which would shift every span: blanked, spans are offsets into `text`.
fn blank_preamble(text: &str) -> Cow<'_, str> {
    const BOM: &str = "\u{feff}";
    let bom = if text.starts_with(BOM) { BOM.len() } else { 0 };
    let rest = &text[bom..];
    // rustc's rule: `#!` starts a shebang line unless `[` follows (an inner attribute `#![..]`).
    let shebang = match rest.strip_prefix("#!") {
        Some(after) if !after.trim_start().starts_with('[') => {
            rest.find('\n').unwrap_or(rest.len())
        }
        _ => 0,
    };
    match bom + shebang {
        0 => Cow::Borrowed(text),
        blanked => Cow::Owned(" ".repeat(blanked) + &text[blanked..]),
    }
}

thread_local! {
    /// The byte offset of each line of the file being modelled when the file is ASCII (else
    /// empty), where a span's line and column (counted in characters) give its bytes at once:
    /// proc_macro2's `byte_range` counts characters through a map it grows at every call, a few
    /// per cent of a run. Per thread, as proc_macro2's own source map is.
    static ASCII_LINES: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Sets [`ASCII_LINES`] for `text`, which the spans to come are in. Lines end at `\n` only, as
/// proc_macro2 counts them.
fn set_ascii_lines(text: &str) {
    ASCII_LINES.with_borrow_mut(|lines| {
        lines.clear();
        if text.is_ascii() {
            lines.push(0);
            lines.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|at| at + 1));
        }
    });
}

fn span_of(span: SynSpan) -> Span {
    let range = ASCII_LINES.with_borrow(|lines| {
        let byte =
            |at: proc_macro2::LineColumn| Some(lines.get(at.line.checked_sub(1)?)? + at.column);
        match (byte(span.start()), byte(span.end())) {
            (Some(start), Some(end)) => start..end,
            // Not ASCII, or a span of another text than the file's.
            _ => span.byte_range(),
        }
    });
    Span {
        file: 0,
        start: range.start as u32,
        end: range.end as u32,
    }
}

/// The span of an expression's last token. syn's `Spanned` finds it by printing the whole
/// expression, which, asked at every statement and arm, costs the walk a copy of each block per
/// level of nesting; the expressions that end in a delimiter or a token know it directly.
fn last_token(expr: &Expr) -> SynSpan {
    match expr {
        Expr::Array(e) => e.bracket_token.span.close(),
        Expr::Assign(e) => last_token(&e.right),
        Expr::Async(e) => e.block.brace_token.span.close(),
        Expr::Await(e) => e.await_token.span,
        Expr::Binary(e) => last_token(&e.right),
        Expr::Block(e) => e.block.brace_token.span.close(),
        Expr::Call(e) => e.paren_token.span.close(),
        Expr::Closure(e) => last_token(&e.body),
        Expr::ForLoop(e) => e.body.brace_token.span.close(),
        Expr::If(e) => match &e.else_branch {
            Some((_, otherwise)) => last_token(otherwise),
            None => e.then_branch.brace_token.span.close(),
        },
        Expr::Index(e) => e.bracket_token.span.close(),
        Expr::Let(e) => last_token(&e.expr),
        Expr::Loop(e) => e.body.brace_token.span.close(),
        Expr::Macro(e) => e.mac.delimiter.span().close(),
        Expr::Match(e) => e.brace_token.span.close(),
        Expr::MethodCall(e) => e.paren_token.span.close(),
        Expr::Paren(e) => e.paren_token.span.close(),
        Expr::Reference(e) => last_token(&e.expr),
        Expr::Struct(e) => e.brace_token.span.close(),
        Expr::Try(e) => e.question_token.span,
        Expr::Tuple(e) => e.paren_token.span.close(),
        Expr::Unary(e) => last_token(&e.expr),
        Expr::Unsafe(e) => e.block.brace_token.span.close(),
        Expr::While(e) => e.body.brace_token.span.close(),
        // Short, or rare in function bodies.
        other => other.span(),
    }
}

/// Where a statement ends (see [`last_token`]).
fn statement_end(stmt: &syn::Stmt) -> SynSpan {
    match stmt {
        syn::Stmt::Local(local) => local.semi_token.span,
        syn::Stmt::Expr(_, Some(semi)) => semi.span,
        syn::Stmt::Expr(expr, None) => last_token(expr),
        syn::Stmt::Macro(m) => match &m.semi_token {
            Some(semi) => semi.span,
            None => m.mac.delimiter.span().close(),
        },
        syn::Stmt::Item(item) => item.span(),
    }
}

/// The span of a closure's body or of an initialiser: a block's braces, or the whole expression.
fn body_span(body: &Expr) -> SynSpan {
    match body {
        Expr::Block(e) if e.attrs.is_empty() && e.label.is_none() => {
            e.block.brace_token.span.join()
        }
        other => other.span(),
    }
}

/// A path as written, without generic arguments: `Python::attach`, `std::thread::spawn`.
fn path_string(path: &syn::Path) -> String {
    segment_names(path).join("::")
}

/// The names of a path's segments, without generic arguments.
fn segment_names(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// The name a type is declared with, looking through references, smart pointers and cells:
/// `&'static OnceLock<T>` -> `OnceLock`, `Arc<Mutex<T>>` -> `Mutex`.
pub(crate) fn type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Reference(r) => type_name(&r.elem),
        Type::Paren(p) => type_name(&p.elem),
        Type::Path(p) => {
            let last = p.path.segments.last()?;
            let name = last.ident.to_string();
            if WRAPPER_TYPES.contains(&name.as_str())
                && let syn::PathArguments::AngleBracketed(args) = &last.arguments
                && let Some(syn::GenericArgument::Type(inner)) = args.args.first()
            {
                return type_name(inner);
            }
            Some(name)
        }
        // `dyn Scorer`, `impl Scorer`: the trait, whose implementors the call graph knows.
        Type::TraitObject(t) => trait_bound_name(&t.bounds),
        Type::ImplTrait(t) => trait_bound_name(&t.bounds),
        _ => None,
    }
}

/// `T` for `Result<T, E>`, `PyResult<T>` and `Option<T>`, and for a crate's alias of `Result`
/// (`PolarsResult<T>`, `io::Result<T>`: a name ending in `Result`): what `?` or `.unwrap()`
/// gives; any other type as it is.
fn result_value_type(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return Some(ty) };
    let last = p.path.segments.last()?;
    let name = last.ident.to_string();
    if !(name.ends_with("Result") || name == "Option") {
        return Some(ty);
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) => match args.args.first()? {
            syn::GenericArgument::Type(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// The name of the type a function declared to return `ty` gives its callers once unwrapped
/// (see [`result_value_type`]); `Self` is the impl's type, `owner`.
pub(crate) fn returned_type_name(ty: &Type, owner: Option<&str>) -> Option<String> {
    match type_name(result_value_type(ty)?)? {
        this if this == "Self" => owner.map(str::to_string),
        name => Some(name),
    }
}

/// The names of the types a function declared to return `ty` gives its callers, keyed by what
/// follows the function's name: `("", T)` for one value, and for a tuple each element's by
/// position, `(".0", A)`, `(".1", B)`, which `let (a, b) = f(..)?;` binds.
pub(crate) fn returned_type_names(ty: &Type, owner: Option<&str>) -> Vec<(String, String)> {
    if let Some(Type::Tuple(tuple)) = result_value_type(ty) {
        return (tuple.elems.iter().enumerate())
            .filter_map(|(i, element)| Some((format!(".{i}"), returned_type_name(element, owner)?)))
            .collect();
    }
    returned_type_name(ty, owner)
        .map(|name| (String::new(), name))
        .into_iter()
        .collect()
}

/// The type parameters of `generics` bounded by a trait, in their list or in the where clause,
/// with the first such trait: `PT: PreTokenizer` gives (`PT`, `PreTokenizer`).
fn trait_bounds(generics: &syn::Generics) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = generics
        .type_params()
        .filter_map(|p| Some((p.ident.to_string(), trait_bound_name(&p.bounds)?)))
        .collect();
    for predicate in generics.where_clause.iter().flat_map(|w| &w.predicates) {
        if let syn::WherePredicate::Type(t) = predicate
            && let Type::Path(p) = &t.bounded_ty
            && let Some(param) = p.path.get_ident()
            && let Some(bound) = trait_bound_name(&t.bounds)
        {
            found.push((param.to_string(), bound));
        }
    }
    found
}

/// The first trait of a trait object's or parameter's bounds that says what the value does:
/// `Scorer` for `dyn Scorer + Send`, `PreTokenizer` for `PT: Sync + PreTokenizer`.
fn trait_bound_name(
    bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>,
) -> Option<String> {
    bounds.iter().find_map(|b| match b {
        syn::TypeParamBound::Trait(t) => t
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .filter(|name| !STD_TRAITS.contains(&name.as_str())),
        _ => None,
    })
}

/// Traits of the standard library and of serde: types of every kind implement them, so a call
/// through one (`iter.next()` on an `impl Iterator`) says nothing of which project type runs.
const STD_TRAITS: &[&str] = &[
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "Display",
    "Any",
    "Error",
    "Iterator",
    "IntoIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "FromIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "Into",
    "TryFrom",
    "TryInto",
    "AsRef",
    "AsMut",
    "Borrow",
    "BorrowMut",
    "Deref",
    "DerefMut",
    "ToString",
    "ToOwned",
    "Read",
    "Write",
    "Seek",
    "BufRead",
    "Hash",
    "Hasher",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "Drop",
    "Future",
    "Stream",
    "Serialize",
    "Deserialize",
    "IntoPy",
    "ToPyObject",
];

/// The type a value of `ty` holds, when `ty` (through the wrappers of [`type_name`]) holds
/// another: `State` for `Arc<RwLock<Option<State>>>`. A lock's guard is used as one.
pub(crate) fn content_type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Reference(r) => content_type_name(&r.elem),
        Type::Paren(p) => content_type_name(&p.elem),
        Type::Path(p) => {
            let last = p.path.segments.last()?;
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return None;
            };
            let inner = args.args.iter().find_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })?;
            if WRAPPER_TYPES.contains(&last.ident.to_string().as_str()) {
                content_type_name(inner)
            } else {
                type_name(inner)
            }
        }
        _ => None,
    }
}

/// Types that hold another one (`Arc<T>`, `LazyLock<T>`): a value of theirs is used as a `T`, and
/// one made by their constructor says nothing of `T`.
const WRAPPER_TYPES: &[&str] = &["Arc", "Rc", "Box", "Pin", "Lazy", "LazyLock", "Option"];

/// The last segment of a path type as written, wrappers included: `Lazy` for `Lazy<Mutex<T>>`.
/// PyO3's token of an attached thread: `Python<'py>`. A closure or a library's function that
/// takes it is an entry (see [`Walker::token_function_entry`]).
pub const TOKEN_TYPE: &str = "Python";

fn is_token_type(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == TOKEN_TYPE))
}

fn outer_type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// The type of a value built in place: a struct literal `T { .. }`, or `T::new(..)` /
/// `T::default()`.
fn constructed_type(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Struct(s) => s.path.segments.last().map(|s| s.ident.to_string()),
        Expr::Call(call) => {
            let Expr::Path(func) = &*call.func else {
                return None;
            };
            let segments = &func.path.segments;
            let (ty, constructor) = match segments.len() {
                0 | 1 => return None,
                n => (segments[n - 2].ident.to_string(), &segments[n - 1].ident),
            };
            (matches!(constructor.to_string().as_str(), "new" | "default")
                && ty.starts_with(|c: char| c.is_ascii_uppercase())
                && !WRAPPER_TYPES.contains(&ty.as_str()))
            .then_some(ty)
        }
        Expr::Paren(p) => constructed_type(&p.expr),
        _ => None,
    }
}

/// An expression without the references, parentheses and dereferences around it.
/// The value of an `unsafe { value }` block: `unsafe { SuspendGIL::new() }` is that call.
fn block_value(expr: &Expr) -> &Expr {
    match expr {
        Expr::Unsafe(u) => match u.block.stmts.as_slice() {
            [syn::Stmt::Expr(value, None)] => block_value(value),
            _ => expr,
        },
        other => other,
    }
}

fn unwrapped(expr: &Expr) -> &Expr {
    match expr {
        Expr::Reference(r) => unwrapped(&r.expr),
        Expr::Paren(p) => unwrapped(&p.expr),
        Expr::Unary(u) => unwrapped(&u.expr),
        other => other,
    }
}

/// `x`, `self.x`, `self.0`, `Self::X`, `crate::X`: the name a receiver is known by.
fn receiver_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(p) => Some(path_string(&p.path)),
        Expr::Field(f) => match &f.member {
            syn::Member::Named(name) => Some(name.to_string()),
            syn::Member::Unnamed(index) => Some(index.index.to_string()),
        },
        Expr::Reference(r) => receiver_name(&r.expr),
        Expr::Paren(p) => receiver_name(&p.expr),
        Expr::Unary(u) => receiver_name(&u.expr),
        _ => None,
    }
}

/// The call whose value a `let` initialiser binds, looking through what passes a lock's guard on
/// (`.unwrap()`, `.expect(..)`, `.unwrap_or_else(..)`, `.map_err(..)`, `.ok()`, `?`, `Ok(..)`):
/// `m.lock().unwrap()` -> `m.lock()`. In `m.lock().unwrap().len()` it is `.len()`: the guard is a
/// temporary, dropped at the end of the statement.
fn guard_call(expr: &Expr) -> Option<&Expr> {
    match expr {
        Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "unwrap" | "expect" | "unwrap_or_else" | "map_err" | "ok" | "ok_or" | "ok_or_else"
            ) =>
        {
            guard_call(&m.receiver)
        }
        Expr::Try(t) => guard_call(&t.expr),
        Expr::Call(c)
            if c.args.len() == 1
                && matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Ok") || p.path.is_ident("Some")) =>
        {
            guard_call(&c.args[0])
        }
        Expr::MethodCall(_) | Expr::Call(_) => Some(expr),
        _ => None,
    }
}

/// The operand whose temporaries a `let` keeps to the end of its block: a borrowed temporary is
/// extended, so `let s = &self.s.read();` and `let s = &*m.lock()?;` hold the guard (Rust's
/// temporary lifetime extension); in `&m.read().clone()` only the clone is.
fn extended_operand(expr: &Expr) -> &Expr {
    match expr {
        Expr::Reference(r) => extended_operand(&r.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => extended_operand(&u.expr),
        Expr::Paren(p) => extended_operand(&p.expr),
        _ => expr,
    }
}

/// Where a call's value comes from: its method's name, or its function's path.
fn call_position(call: &Expr) -> Option<u32> {
    match call {
        Expr::MethodCall(m) => Some(span_of(m.method.span()).start),
        Expr::Call(c) => Some(span_of(c.func.span()).start),
        _ => None,
    }
}

/// Whether `ty` is a lock's guard, or a `Result`, `PyResult`, `LockResult` or `Option` of one.
fn is_guard_type(ty: &Type, guards: &HashSet<String>) -> bool {
    let Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    if guards.contains(&name) {
        return true;
    }
    matches!(
        name.as_str(),
        "Result" | "PyResult" | "LockResult" | "Option"
    ) && matches!(&last.arguments, syn::PathArguments::AngleBracketed(args)
            if matches!(args.args.first(), Some(syn::GenericArgument::Type(inner)) if is_guard_type(inner, guards)))
}

/// The root of a field access: `self` for `self.inner.state`.
fn field_root(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Field(f) => field_root(&f.base),
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        Expr::Reference(r) => field_root(&r.expr),
        Expr::Paren(p) => field_root(&p.expr),
        Expr::Unary(u) => field_root(&u.expr),
        _ => None,
    }
}

/// The Python objects a function borrows exclusively from PyO3 (`&mut self` of a Python class's
/// method, a `PyRefMut` parameter): while it runs, every other call on those objects fails the
/// borrow check rather than waits, so a lock owned by one of them is the function's alone.
#[derive(Clone)]
struct ExclusiveBorrow {
    /// The function that holds the borrow, to name the locks it owns.
    borrower: String,
    /// The names the objects are reached by.
    names: FxHashSet<String>,
}

/// What a name in a function stands for.
#[derive(Clone)]
enum Local {
    /// A closure bound with `let`.
    Closure(FnId),
    /// The function's parameter number `.0` (not counting `self`).
    Param(u32),
    /// A guard returned by a lock call: index into the function's lock regions.
    Guard(usize),
    /// A thread state that the C API's release saved (`let ts = unsafe {
    /// ffi::PyEval_SaveThread() }`), or a value keeping one (`let g = Guard(..)`, `let g =
    /// ThreadStateGuard::new()`): index into the function's GIL switches of the release it
    /// keeps, which ends where the value is dropped or restored. `None` in a closure the value
    /// was moved into (`call_once(move || { drop(ts_guard); f() })`): dropping it there takes
    /// the GIL back for the rest of the closure.
    Release(Option<usize>),
    /// A thread handle from `std::thread::spawn`, with the thread's lock name.
    Thread(String),
}

struct Frame {
    id: FnId,
    locals: FxHashMap<String, Local>,
    /// Declared types of `let`s and parameters, by name.
    types: FxHashMap<String, String>,
    /// Parameters that are Python objects of a project class (`pyself: Py<Self>`), with that
    /// class: what `pyself.get()` gives.
    objects: FxHashMap<String, String>,
    /// Locals that are an end of a rendezvous channel, with the channel's name (see
    /// [`Walker::rendezvous_channel`]).
    channels: FxHashMap<String, String>,
    /// Ends of the enclosing blocks, innermost last.
    block_ends: Vec<u32>,
    /// End of the statement being walked: a temporary guard lives to it.
    statement_end: u32,
    /// While walking a `let` whose value may be a lock's guard: the bound name, and where the
    /// method name of the call that gives the value starts (a lock call elsewhere in the
    /// initialiser gives a temporary).
    binding_guard: Option<(String, u32)>,
    /// A lock call whose guard a method takes by value (`m.lock().map_or(..)`): the start of the
    /// lock method's name, and the end of the consuming call, where the guard is gone.
    consumed_guard: Option<(u32, u32)>,
    /// While walking a `let` whose value spawns a thread: the bound name.
    binding_thread: Option<String>,
    /// While walking the value stored in a field that holds a thread's handle: the thread's
    /// name, the field's (see [`Walker::handle_field`]).
    field_thread: Option<String>,
    /// Parameters whose type is callable (`F: FnOnce()`, `impl Fn()`, `&dyn Fn()`).
    callable_params: FxHashSet<String>,
    /// The Python objects borrowed exclusively by this function (or the one a closure is in).
    exclusive: Option<ExclusiveBorrow>,
    /// A statement using a parallel iterator: closures before this offset run on the pool,
    /// holding this thread lock.
    parallel: Option<(u32, String)>,
    closures: usize,
    /// The async blocks passed to calls so far (see [`Walker::async_block_function`]).
    async_blocks: usize,
    body_start: u32,
    /// Locals holding an object this function built in place and has given to no one: calling
    /// its methods keeps it so, any other use ends it (see [`CallNote::Unpublished`]). A `&self`
    /// method cannot hand the object to another thread, and a clone of it has its own locks
    /// where its fields hold them by value (see [`Walker::lock_fields`]).
    unpublished: FxHashSet<String>,
    /// Locals bound to a lock a function returned, with the lock's name (see
    /// [`Walker::lock_functions`]).
    returned_locks: FxHashMap<String, String>,
    /// Closure parameters bound to this thread's value of a `thread_local!` static
    /// (`CELL.with(|cell| ..)`).
    thread_local: FxHashSet<String>,
}

/// What kind of static a name is: decides what using it means.
#[derive(Clone)]
enum Static {
    /// `static X: Lazy<T> = Lazy::new(|| ...)` or `lazy_static!`: using it may wait for the
    /// initialiser (a function of its own, in this file or, `None`, in the declaring file).
    Lazy(Option<FnId>, Option<String>),
    /// Any other static, by its declared type name (`OnceLock`, `Mutex`, `GILOnceCell`).
    Typed(String),
}

/// What a Rust function with a binding or test attribute is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    Binding,
    /// A module's initialiser (see [`Binding::module_init`]).
    ModuleInit,
    Test,
    /// A closure or a library's function that takes PyO3's `Python` token (see
    /// [`Walker::token_closure_entry`] and [`Walker::token_function_entry`]).
    Token,
    /// An async method of a trait impl (`#[async_trait] impl Builtin for Adapter { async fn
    /// execute(..) }`) that nothing in the program calls: the library that declares the trait
    /// polls it on its runtime's threads, which do not hold the GIL.
    LibraryFuture,
}

struct Walker<'k> {
    k: &'k Knowledge,
    krate: String,
    model: FileModel,
    module: Vec<String>,
    self_type: Option<String>,
    usings: Vec<String>,
    /// [`Self::scope`] and `usings` as the functions and bindings walked keep them.
    shared_scope: SharedNames,
    shared_usings: SharedNames,
    statics: FxHashMap<String, Static>,
    /// Field name -> the structs declaring it, with its type in each.
    field_types: FxHashMap<String, Vec<(String, String)>>,
    /// Types that are Python classes: a `#[pyclass]` struct or the type of a `#[pymethods]` impl.
    python_classes: FxHashSet<String>,
    /// The structs and enums the file declares.
    declared_types: FxHashSet<String>,
    /// The type held by each variant of the file's enums that holds one value, by
    /// `Enum::Variant` (`PutInput::SyncPush` holds a `SyncPushSource`).
    variant_types: FxHashMap<String, String>,
    /// Functions that return a held lock's guard (`log`, `Table::rows`), with that lock.
    guard_functions: FxHashMap<String, (LockKind, String)>,
    /// The type each of the file's functions returns (`make_engine`, `Engine::new`), through a
    /// `Result`, for the `let`s bound to their calls.
    returned_types: FxHashMap<String, String>,
    /// The file's functions that return a lock (`fn sessions(&self) -> Arc<Mutex<Sessions>>`):
    /// the lock bound from a call is named by the function, `Engine::sessions()`, one lock
    /// wherever it is bound, whose contents are the declared ones.
    lock_functions: FxHashSet<String>,
    /// The file's functions that return a channel's sender (`-> SyncSender<Item>`), with the
    /// element type that names the channel.
    sender_functions: FxHashMap<String, String>,
    /// The methods of the file's impls, as `Type::method`: `self.lock(py)` on a type with its
    /// own `lock` calls that method, it takes no mutex.
    methods: FxHashSet<String>,
    /// The file's struct fields that hold a lock by value (`Store.inner: Mutex<T>`, not
    /// `Arc<Mutex<T>>`): each object has its own.
    lock_fields: FxHashSet<String>,
    /// The file's `thread_local!` statics: each thread has its own, so no lock in one is
    /// contended.
    thread_locals: FxHashSet<String>,
    /// The next closure is the one a thread-local's `with` runs: its parameter is that
    /// thread's value.
    thread_local_closure: bool,
    /// The last thread or task started, with where its spawn call's name starts (see
    /// [`Walker::task_of`]).
    last_thread: Option<(u32, String)>,
    /// The thread of the last Python coroutine made a future (see [`Walker::python_future`]),
    /// for the `let` whose value it is, also through the closure that returns it
    /// (`let f = Python::attach(|py| into_future(coroutine))?;`).
    python_future: Option<String>,
    /// Where the name of the call being awaited is (see [`Walker::argument_future`]).
    awaited: Option<u32>,
    /// The free functions the file declares: their names passed as values are calls.
    free_functions: FxHashSet<String>,
    /// What a guard of each lock is used as (see [`CrateTypes::contents`]), by lock name.
    lock_contents: FxHashMap<String, String>,
    /// Whether the file names a type of Python objects: only then may a value of unknown type be
    /// one (an engine crate's `column.str()` is its own).
    names_python: bool,
    /// The log macros imported from the `log` facade (`use log::{info, warn};`), `*` for all.
    log_imports: FxHashSet<String>,
    /// `type Tokenizer = TokenizerImpl<..>;`: the alias and the type it names.
    type_aliases: FxHashMap<String, String>,
    /// The generic parameters in scope (of the impl, then of the function) with the first trait
    /// that bounds each: a value of type `PT: PreTokenizer` is called as a `PreTokenizer`, whose
    /// implementors the call graph knows.
    generic_bounds: Vec<(String, String)>,
    frames: Vec<Frame>,
}

impl Walker<'_> {
    /// The struct fields and statics that the crate's other files declare (the file's own are
    /// added after them and win).
    fn crate_declarations(&mut self) {
        let Some(types) = self.k.rust.crates.get(&self.krate) else {
            return;
        };
        for (owner, field, ty) in &types.fields {
            self.field_types
                .entry(field.clone())
                .or_default()
                .push((owner.clone(), ty.clone()));
        }
        for (name, ty) in &types.statics {
            let declared = if types.lazy_statics.contains(name) {
                Static::Lazy(None, Some(ty.clone()))
            } else {
                Static::Typed(ty.clone())
            };
            self.statics.insert(name.clone(), declared);
        }
        self.lock_contents.extend(types.contents.iter().cloned());
    }

    /// Statics and struct fields first: functions use them before or after their declaration.
    fn collect_declarations(&mut self, items: &[Item]) {
        for item in items {
            match item {
                Item::Static(s) => {
                    if let Some(ty) = type_name(&s.ty) {
                        self.statics.insert(s.ident.to_string(), Static::Typed(ty));
                    }
                    if let Some(content) = content_type_name(&s.ty) {
                        self.lock_contents.insert(s.ident.to_string(), content);
                    }
                }
                Item::Enum(e) => {
                    self.declared_types.insert(e.ident.to_string());
                    for variant in &e.variants {
                        if let syn::Fields::Unnamed(fields) = &variant.fields
                            && fields.unnamed.len() == 1
                            && let Some(ty) = type_name(&fields.unnamed[0].ty)
                        {
                            let key = format!("{}::{}", e.ident, variant.ident);
                            self.variant_types.insert(key, ty);
                        }
                    }
                }
                Item::Type(t) => {
                    if let Some(ty) = type_name(&t.ty) {
                        self.type_aliases.insert(t.ident.to_string(), ty);
                    }
                }
                Item::Struct(s) => {
                    self.declared_types.insert(s.ident.to_string());
                    if self.has_attribute(&s.attrs, &self.k.rust.class_attributes) {
                        self.python_classes.insert(s.ident.to_string());
                    }
                    for field in &s.fields {
                        if let Some(name) = &field.ident
                            && outer_type_name(&field.ty)
                                .is_some_and(|ty| self.k.rust.mutex_types.contains(&ty))
                        {
                            self.lock_fields.insert(format!("{}.{name}", s.ident));
                        }
                        if let (Some(name), Some(content)) =
                            (&field.ident, content_type_name(&field.ty))
                        {
                            self.lock_contents
                                .insert(format!("{}.{name}", s.ident), content);
                        }
                        if let (Some(name), Some(ty)) = (&field.ident, type_name(&field.ty)) {
                            self.field_types
                                .entry(name.to_string())
                                .or_default()
                                .push((s.ident.to_string(), ty));
                        }
                    }
                }
                Item::Fn(f) => {
                    self.free_functions.insert(f.sig.ident.to_string());
                    self.guard_function(&f.sig, &f.block);
                    self.returned_type(&f.sig);
                }
                Item::Impl(i) => {
                    let ty = type_name(&i.self_ty);
                    if self.has_attribute(&i.attrs, &self.k.rust.impl_attributes) {
                        self.python_classes.extend(ty.clone());
                    }
                    let saved = std::mem::replace(&mut self.self_type, ty);
                    for item in &i.items {
                        if let ImplItem::Fn(m) = item {
                            self.guard_function(&m.sig, &m.block);
                            self.returned_type(&m.sig);
                            if let Some(ty) = &self.self_type {
                                self.methods.insert(format!("{ty}::{}", m.sig.ident));
                            }
                        }
                    }
                    self.self_type = saved;
                }
                Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        self.collect_declarations(items);
                    }
                }
                Item::Macro(m)
                    if m.mac
                        .path
                        .segments
                        .last()
                        .is_some_and(|s| s.ident == "thread_local") =>
                {
                    if let Ok(names) = m.mac.parse_body_with(parse_thread_local_names) {
                        self.thread_locals.extend(names);
                    }
                }
                _ => {}
            }
        }
    }

    /// A function declared to return a guard, whose value is a lock call on a static or a field:
    /// its callers hold that lock (see [`Self::guard_function_call`]).
    fn guard_function(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let syn::ReturnType::Type(_, ty) = &sig.output else {
            return;
        };
        if !is_guard_type(ty, &self.k.rust.guard_types) {
            return;
        }
        let Some(syn::Stmt::Expr(tail, None)) = block.stmts.last() else {
            return;
        };
        let Some(Expr::MethodCall(lock_call)) = guard_call(tail) else {
            return;
        };
        let method = lock_call.method.to_string();
        if !self.k.rust.mutex_methods.contains(&method) {
            return;
        }
        let Some(receiver) = receiver_name(&lock_call.receiver) else {
            return;
        };
        let kind = if method.starts_with("read") {
            LockKind::SharedRead
        } else {
            LockKind::Mutex
        };
        let lock = self.lock_name(&lock_call.receiver, &receiver);
        let name = match &self.self_type {
            Some(ty) => format!("{ty}::{}", sig.ident),
            None => sig.ident.to_string(),
        };
        self.guard_functions.insert(name, (kind, lock));
    }

    /// Records the type `sig` returns, looking through `Result`/`PyResult` (see
    /// [`Self::returned_types`]).
    fn returned_type(&mut self, sig: &syn::Signature) {
        let syn::ReturnType::Type(_, ty) = &sig.output else {
            return;
        };
        let Some(value) = result_value_type(ty) else {
            return;
        };
        let name = match &self.self_type {
            Some(owner) => format!("{owner}::{}", sig.ident),
            None => sig.ident.to_string(),
        };
        if let Type::Tuple(_) = value {
            for (position, element) in returned_type_names(ty, self.self_type.as_deref()) {
                self.returned_types
                    .insert(format!("{name}{position}"), element);
            }
            return;
        }
        let Some(ty) = returned_type_name(ty, self.self_type.as_deref()) else {
            return;
        };
        if self.k.rust.mutex_types.contains(&ty) {
            if let Some(content) = content_type_name(value) {
                self.lock_contents.insert(format!("{name}()"), content);
            }
            self.lock_functions.insert(name.clone());
        }
        if self.k.rust.channel_sender_types.contains(&ty)
            && let Some(element) = content_type_name(value)
        {
            self.sender_functions.insert(name.clone(), element);
        }
        self.returned_types.insert(name, ty);
    }

    /// The type of the value of a call to one of the file's functions: `make_engine(..)`,
    /// `Engine::new(..)?`, `Self::open(..).unwrap()`, `self.engine.sessions()`; with a
    /// `position` (`.1`), that of the element of the tuple it returns.
    fn call_value_type(&self, expr: &Expr, position: &str) -> Option<String> {
        let function = self.called_function(expr)? + position;
        match self.returned_types.get(&function) {
            Some(ty) => Some(ty.clone()),
            None => self.k.rust.method_returns.get(&function).cloned().flatten(),
        }
    }

    /// The function whose value `expr` is, as [`Self::returned_types`] keys it.
    fn called_function(&self, expr: &Expr) -> Option<String> {
        let func = match guard_call(expr)? {
            Expr::Call(call) => match &*call.func {
                Expr::Path(func) => func,
                _ => return None,
            },
            Expr::MethodCall(m) => {
                return Some(format!("{}::{}", self.type_of(&m.receiver)?, m.method));
            }
            _ => return None,
        };
        let segments = segment_names(&func.path);
        Some(match segments.as_slice() {
            [f] => f.clone(),
            [.., owner, f] if owner == "Self" => format!("{}::{f}", self.self_type.as_ref()?),
            [.., owner, f] => format!("{owner}::{f}"),
            [] => return None,
        })
    }

    fn items(&mut self, items: &[Item]) {
        for item in items {
            self.item(item);
        }
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Fn(f) => {
                let id = self.function(&f.sig, &f.block, FunctionKind::Free);
                let name = || python_name(&f.attrs).unwrap_or_else(|| f.sig.ident.to_string());
                if self.has_attribute(&f.attrs, &self.k.rust.module_init_attributes) {
                    self.bind(name(), f.sig.ident.span(), id, Entry::ModuleInit);
                } else if self.has_attribute(&f.attrs, &self.k.rust.function_attributes) {
                    self.bind(name(), f.sig.ident.span(), id, Entry::Binding);
                } else if self.has_attribute(&f.attrs, &self.k.rust.test_attributes) {
                    self.bind(f.sig.ident.to_string(), f.sig.ident.span(), id, Entry::Test);
                } else {
                    let public = matches!(f.vis, syn::Visibility::Public(_));
                    self.token_function_entry(&f.sig, public, id);
                }
            }
            Item::Impl(i) => {
                let Some(ty) = type_name(&i.self_ty) else {
                    return;
                };
                // Types with methods are classes for the call graph; a trait they implement is a
                // base, so calls on the trait reach this implementation.
                let bases = i
                    .trait_
                    .iter()
                    .filter_map(|(path, _)| path.segments.last())
                    .map(|s| s.ident.to_string())
                    .collect();
                self.model
                    .classes
                    .push((format!("{}::{ty}", self.module.join("::")), bases));
                let binds = self.has_attribute(&i.attrs, &self.k.rust.impl_attributes);
                let saved = self.self_type.replace(ty.clone());
                let generics = self.generic_bounds.len();
                self.generic_bounds.extend(trait_bounds(&i.generics));
                for impl_item in &i.items {
                    if let ImplItem::Fn(m) = impl_item {
                        let id = self.function(&m.sig, &m.block, FunctionKind::Method);
                        if binds {
                            let name =
                                python_name(&m.attrs).unwrap_or_else(|| m.sig.ident.to_string());
                            self.bind(
                                format!("{ty}.{name}"),
                                m.sig.ident.span(),
                                id,
                                Entry::Binding,
                            );
                        } else if i.trait_.is_some() && m.sig.asyncness.is_some() {
                            self.bind(
                                format!("{ty}::{}", m.sig.ident),
                                m.sig.ident.span(),
                                id,
                                Entry::LibraryFuture,
                            );
                        } else {
                            let public =
                                i.trait_.is_some() || matches!(m.vis, syn::Visibility::Public(_));
                            self.token_function_entry(&m.sig, public, id);
                        }
                    }
                }
                self.generic_bounds.truncate(generics);
                self.self_type = saved;
            }
            Item::Trait(t) => {
                let saved = self.self_type.replace(t.ident.to_string());
                for trait_item in &t.items {
                    if let syn::TraitItem::Fn(m) = trait_item
                        && let Some(block) = &m.default
                    {
                        self.function(&m.sig, block, FunctionKind::ProvidedMethod);
                    }
                }
                self.self_type = saved;
            }
            Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    self.module.push(m.ident.to_string());
                    if self.has_attribute(&m.attrs, &self.k.rust.function_attributes) {
                        // `#[pymodule] mod m { #[pymodule_export] use ...; }`: nothing to run.
                    }
                    self.items(items);
                    self.module.pop();
                }
            }
            Item::Use(u) => self.use_tree(&u.tree, Vec::new()),
            Item::ExternCrate(e)
                if self.k.rust.log_crates.contains(&e.ident.to_string())
                    && e.attrs.iter().any(|a| a.path().is_ident("macro_use")) =>
            {
                self.log_imports.insert("*".to_string());
            }
            Item::Static(s) => self.lazy_static_item(&s.ident, &s.ty, &s.expr),
            Item::Macro(m) => self.lazy_static_macro(m),
            _ => {}
        }
    }

    fn has_attribute(&self, attrs: &[syn::Attribute], names: &HashSet<String>) -> bool {
        attrs.iter().any(|a| {
            a.path()
                .segments
                .last()
                .is_some_and(|s| names.contains(&s.ident.to_string()))
        })
    }

    /// `use a::b::c;` makes `a::b` visible for `c`; `use a::b::*;` makes `a::b` visible.
    fn use_tree(&mut self, tree: &syn::UseTree, mut prefix: Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
            }
            syn::UseTree::Name(_) | syn::UseTree::Rename(_) | syn::UseTree::Glob(_) => {
                if let [krate] = prefix.as_slice()
                    && self.k.rust.log_crates.contains(krate)
                {
                    let imported = match tree {
                        syn::UseTree::Name(n) => n.ident.to_string(),
                        syn::UseTree::Rename(r) => r.rename.to_string(),
                        _ => "*".to_string(),
                    };
                    self.log_imports.insert(imported);
                }
                if !prefix.is_empty() {
                    let joined = self.absolute(&prefix.join("::"));
                    self.usings.push(joined);
                }
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(item, prefix.clone());
                }
            }
        }
    }

    /// `crate::a::f`, `self::f`, `super::f`, `Self::f` made absolute from the current module.
    fn absolute(&self, path: &str) -> String {
        let mut segments: Vec<&str> = path.split("::").collect();
        let mut base: Vec<String> = Vec::new();
        match segments.first().copied() {
            Some("crate") => {
                base.push(self.krate.clone());
                segments.remove(0);
            }
            Some("self") => {
                base = self.module.clone();
                segments.remove(0);
            }
            Some("super") => {
                base = self.module.clone();
                while segments.first() == Some(&"super") {
                    base.pop();
                    segments.remove(0);
                }
            }
            Some("Self") => {
                if let Some(ty) = &self.self_type {
                    base = self.module.clone();
                    base.push(ty.clone());
                    segments.remove(0);
                }
            }
            _ => return path.to_string(),
        }
        base.extend(segments.iter().map(|s| s.to_string()));
        base.join("::")
    }

    fn scope(&self) -> Vec<String> {
        let mut scope = self.module.clone();
        scope.extend(self.self_type.clone());
        scope
    }

    fn shared_scope(&mut self) -> Names {
        let scope = self.scope();
        self.shared_scope.get(&scope)
    }

    fn new_function(
        &mut self,
        name: String,
        qualname: String,
        kind: FunctionKind,
        span: SynSpan,
        arity: (u32, Option<u32>),
    ) -> FnId {
        let scope = self.shared_scope();
        let usings = self.shared_usings.get(&self.usings);
        self.model.functions.push(Function {
            scope,
            usings,
            arity,
            ..Function::new(name, qualname, kind, span_of(span))
        });
        self.model.functions.len() - 1
    }

    fn function(&mut self, sig: &syn::Signature, block: &syn::Block, kind: FunctionKind) -> FnId {
        let name = sig.ident.to_string();
        let qualname = format!("{}::{name}", self.scope().join("::"));
        let params: Vec<&syn::PatType> = sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                FnArg::Typed(t) => Some(t),
                FnArg::Receiver(_) => None,
            })
            .collect();
        let arity = (params.len() as u32, Some(params.len() as u32));
        let id = self.new_function(name, qualname, kind, sig.ident.span(), arity);
        self.model.functions[id].extern_c = sig.abi.is_some();
        let mut frame = self.frame(id, block.brace_token.span.join());
        frame.exclusive = self.exclusive_borrow(sig, &params, id);
        let callable = callable_type_parameters(sig);
        for (index, param) in params.iter().enumerate() {
            if let Pat::Ident(ident) = &*param.pat {
                let name = ident.ident.to_string();
                frame
                    .locals
                    .insert(name.clone(), Local::Param(index as u32));
                if is_callable(&param.ty, &callable) {
                    frame.callable_params.insert(name.clone());
                }
                if let Some(class) = self.object_class(&param.ty) {
                    frame.objects.insert(name.clone(), class);
                }
                if let Some(ty) = type_name(&param.ty) {
                    frame.types.insert(name, ty);
                }
            }
        }
        let generics = self.generic_bounds.len();
        self.generic_bounds.extend(trait_bounds(&sig.generics));
        self.frames.push(frame);
        self.visit_block(block);
        self.frames.pop();
        self.generic_bounds.truncate(generics);
        id
    }

    /// The project class a Python object of type `ty` holds (`Py<Self>`, `Bound<'py, Engine>`).
    fn object_class(&self, ty: &Type) -> Option<String> {
        let Type::Path(p) = ty else { return None };
        let last = p.path.segments.last()?;
        if !self.k.rust.python_types.contains(&last.ident.to_string()) {
            return None;
        }
        let class = content_type_name(ty)?;
        match class.as_str() {
            "Self" => self.self_type.clone(),
            _ => (!self.is_python_type(&class)).then_some(class),
        }
    }

    /// The class of the Rust value that `expr` takes out of a Python object parameter
    /// (`pyself.get()`, `slf.try_borrow()?`).
    fn object_content_type(&self, expr: &Expr) -> Option<String> {
        let Expr::MethodCall(m) = guard_call(expr)? else {
            return None;
        };
        let Expr::Path(p) = &*m.receiver else {
            return None;
        };
        if !self
            .k
            .rust
            .class_access_methods
            .contains(&m.method.to_string())
        {
            return None;
        }
        self.frames
            .last()?
            .objects
            .get(&path_string(&p.path))
            .cloned()
    }

    /// The ends of a rendezvous channel that a `let` binds: both of `let (tx, rx) =
    /// sync_channel(0)`, named by the element type written (`sync_channel::<Item>(0)`) or else
    /// by the sender's local; or a sender returned by one of the file's functions
    /// (`let tx = self.worker_tx()?;` with `-> PyResult<SyncSender<Item>>`), named by its
    /// element type.
    fn rendezvous_channel(&mut self, pattern: &Pat, value: &Expr) {
        let ends: Vec<(String, String)> = match (pattern, guard_call(value)) {
            (Pat::Tuple(t), Some(Expr::Call(call))) if t.elems.len() == 2 => {
                let Expr::Path(func) = &*call.func else {
                    return;
                };
                let Some(last) = func.path.segments.last() else {
                    return;
                };
                let zero = matches!(single(&call.args), Some(Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(n), ..
                })) if n.base10_digits() == "0");
                let names: Vec<_> = t.elems.iter().filter_map(pattern_ident).collect();
                if !zero
                    || names.len() != 2
                    || !self
                        .k
                        .rust
                        .rendezvous_channel_calls
                        .contains(&last.ident.to_string())
                {
                    return;
                }
                let element = match &last.arguments {
                    syn::PathArguments::AngleBracketed(args) => {
                        args.args.iter().find_map(|a| match a {
                            syn::GenericArgument::Type(t) => type_name(t),
                            _ => None,
                        })
                    }
                    _ => None,
                };
                let channel = element.unwrap_or_else(|| self.qualified(&names[0]));
                names.into_iter().map(|n| (n, channel.clone())).collect()
            }
            (pattern, _) => {
                let (Some(name), Some(element)) = (
                    pattern_ident(pattern),
                    self.called_function(value)
                        .and_then(|f| self.sender_functions.get(&f).cloned()),
                ) else {
                    return;
                };
                vec![(name, element)]
            }
        };
        if let Some(frame) = self.frames.last_mut() {
            frame.channels.extend(ends);
        }
    }

    /// The rendezvous channel whose end `receiver` is: a local of this function or of one
    /// around it (a receiver moved into a spawned closure).
    fn channel_of(&self, receiver: &Expr) -> Option<String> {
        let Expr::Path(p) = receiver else { return None };
        let name = p.path.get_ident()?.to_string();
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.channels.get(&name).cloned())
    }

    /// The objects `sig` borrows exclusively from PyO3: `self` for a `&mut self` (or
    /// `self: PyRefMut<Self>`) method of a Python class, and its `PyRefMut` parameters. (PyO3
    /// rejects `&mut self` on a frozen class.)
    fn exclusive_borrow(
        &self,
        sig: &syn::Signature,
        params: &[&syn::PatType],
        id: FnId,
    ) -> Option<ExclusiveBorrow> {
        let exclusive_type = |ty: &Type| {
            type_name(ty).is_some_and(|t| self.k.rust.exclusive_borrow_types.contains(&t))
        };
        let mut names: FxHashSet<String> = params
            .iter()
            .filter(|p| exclusive_type(&p.ty))
            .filter_map(|p| match &*p.pat {
                Pat::Ident(ident) => Some(ident.ident.to_string()),
                _ => None,
            })
            .collect();
        let python_class = self
            .self_type
            .as_ref()
            .is_some_and(|ty| self.python_classes.contains(ty));
        if let Some(receiver) = sig.receiver()
            && python_class
            && match &receiver.kind {
                syn::ReceiverKind::Reference(_, _, mutability) => mutability.is_some(),
                syn::ReceiverKind::Typed(_, ty) => exclusive_type(ty),
                _ => false,
            }
        {
            names.insert("self".to_string());
        }
        (!names.is_empty()).then(|| ExclusiveBorrow {
            borrower: self.model.functions[id].qualname.clone(),
            names,
        })
    }

    fn frame(&self, id: FnId, body: SynSpan) -> Frame {
        let body = span_of(body);
        Frame {
            id,
            locals: FxHashMap::default(),
            types: FxHashMap::default(),
            objects: FxHashMap::default(),
            channels: FxHashMap::default(),
            block_ends: vec![body.end],
            statement_end: body.end,
            binding_guard: None,
            consumed_guard: None,
            binding_thread: None,
            field_thread: None,
            parallel: None,
            callable_params: FxHashSet::default(),
            exclusive: None,
            closures: 0,
            async_blocks: 0,
            body_start: body.start,
            unpublished: FxHashSet::default(),
            returned_locks: FxHashMap::default(),
            thread_local: FxHashSet::default(),
        }
    }

    /// An entry point: a binding, entered attached, or a test, entered without the GIL.
    fn bind(&mut self, name: String, span: SynSpan, id: FnId, entry: Entry) {
        let test = entry == Entry::Test;
        let scope = self.shared_scope();
        let usings = self.shared_usings.get(&self.usings);
        let at = span_of(span);
        let why = match entry {
            Entry::Token => Some(format!(
                "`{name}` takes a `Python` token: whoever runs it holds the GIL"
            )),
            Entry::LibraryFuture => Some(format!(
                "`{name}` is an async trait method that nothing here calls: a library polls it on its own threads, without the GIL"
            )),
            _ => test.then(|| format!("`{name}` is a test, run on a thread without the GIL")),
        };
        self.model.bindings.push(Binding {
            name,
            span: at,
            scope,
            usings,
            target: CallTarget::Direct(id),
            entry: match entry {
                Entry::Test | Entry::LibraryFuture => GilState::Released,
                _ => GilState::Held,
            },
            guard: why.map(|why| (at, why)),
            test,
            module_init: entry == Entry::ModuleInit,
            unless_run: matches!(entry, Entry::Token | Entry::LibraryFuture),
        });
    }

    /// `static X: Lazy<T> = Lazy::new(|| init)`: the initialiser becomes a function that every
    /// use of `X` may run, holding `X`'s lock.
    fn lazy_static_item(&mut self, name: &syn::Ident, ty: &Type, expr: &Expr) {
        let is_lazy = outer_type_name(ty).is_some_and(|t| self.k.rust.lazy_types.contains(&t));
        let Expr::Call(call) = expr else { return };
        let Some(Expr::Closure(closure)) = call.args.first() else {
            return;
        };
        if !is_lazy {
            return;
        }
        let id = self.closure_function(
            closure,
            &format!("{}::{name}::{LAZY_STATIC_INIT}", self.module.join("::")),
        );
        self.statics
            .insert(name.to_string(), Static::Lazy(Some(id), type_name(ty)));
    }

    /// `lazy_static! { static ref X: T = expr; ... }`.
    fn lazy_static_macro(&mut self, m: &syn::ItemMacro) {
        let Some(last) = m.mac.path.segments.last() else {
            return;
        };
        if !self.k.rust.lazy_macros.contains(&last.ident.to_string()) {
            return;
        }
        let Ok(entries) = m.mac.parse_body_with(parse_lazy_statics) else {
            return;
        };
        for (name, ty, expr) in entries {
            let id = self.new_function(
                LAZY_STATIC_INIT.to_string(),
                format!("{}::{name}::{LAZY_STATIC_INIT}", self.module.join("::")),
                // A function of its own, which another file's use calls by name.
                FunctionKind::Free,
                name.span(),
                (0, Some(0)),
            );
            let frame = self.frame(id, body_span(&expr));
            self.frames.push(frame);
            self.visit_expr(&expr);
            self.frames.pop();
            self.statics
                .insert(name.to_string(), Static::Lazy(Some(id), type_name(&ty)));
        }
    }

    /// A closure stored for later (`Arc::new(|x| ...)`): walked as a function of its own that
    /// nothing here calls.
    fn stored_closure(&mut self, closure: &syn::ExprClosure) {
        let owner = self.frames.last().map_or(self.module.join("::"), |f| {
            self.model.functions[f.id].qualname.clone()
        });
        self.closure_function(closure, &format!("{owner}::{{stored closure}}"));
    }

    /// A closure as a function of its own, walked now; the caller decides how it is run.
    fn closure_function(&mut self, closure: &syn::ExprClosure, qualname: &str) -> FnId {
        let params = closure.inputs.len() as u32;
        let thread_local = std::mem::take(&mut self.thread_local_closure)
            .then(|| closure.inputs.first().and_then(pattern_ident))
            .flatten();
        let id = self.nested_function(
            "{closure}",
            qualname,
            closure.inputs_begin.span,
            params,
            body_span(&closure.body),
            thread_local,
        );
        self.visit_expr(&closure.body);
        self.frames.pop();
        id
    }

    /// An async block passed to a call: a function of its own, like a closure, since its body
    /// runs where it is polled. Numbered apart from the closures, so that their names do not
    /// depend on it.
    fn async_block_function(&mut self, block: &syn::ExprAsync) -> FnId {
        let qualname = self.numbered_name("async", |f| &mut f.async_blocks);
        let id = self.nested_function(
            "{async}",
            &qualname,
            block.async_token.span,
            0,
            block.block.brace_token.span.join(),
            None,
        );
        self.visit_block(&block.block);
        self.frames.pop();
        id
    }

    /// A closure's or an async block's function, with its frame pushed: it sees the names of
    /// the function it is written in (and `thread_local`, a parameter bound to a thread-local's
    /// value). The caller walks the body and pops the frame.
    fn nested_function(
        &mut self,
        name: &str,
        qualname: &str,
        at: SynSpan,
        params: u32,
        body: SynSpan,
        thread_local: Option<String>,
    ) -> FnId {
        let id = self.new_function(
            name.to_string(),
            qualname.to_string(),
            FunctionKind::Lambda,
            at,
            (params, Some(params)),
        );
        let mut frame = self.frame(id, body);
        if let Some(parent) = self.frames.last() {
            // A guard's lock region and a release's switch are the parent's: a closure that
            // drops the value it captured ends neither there.
            frame.locals = parent
                .locals
                .iter()
                .filter_map(|(name, local)| match local {
                    Local::Guard(_) => None,
                    Local::Release(_) => Some((name.clone(), Local::Release(None))),
                    other => Some((name.clone(), other.clone())),
                })
                .collect();
            frame.types = parent.types.clone();
            frame.callable_params = parent.callable_params.clone();
            frame.exclusive = parent.exclusive.clone();
            frame.thread_local = parent.thread_local.clone();
        }
        frame.thread_local.extend(thread_local);
        self.frames.push(frame);
        id
    }

    fn current(&mut self) -> Option<&mut Function> {
        let id = self.frames.last()?.id;
        Some(&mut self.model.functions[id])
    }

    fn push_call(
        &mut self,
        span: SynSpan,
        target: CallTarget,
        args: u32,
        passed_to: Option<(usize, u32, Unconsumed)>,
    ) {
        self.push_noted_call(span, target, args, passed_to, None);
    }

    fn push_noted_call(
        &mut self,
        span: SynSpan,
        target: CallTarget,
        args: u32,
        passed_to: Option<(usize, u32, Unconsumed)>,
        note: Option<CallNote>,
    ) {
        let spawns = self.parallel_thread(span_of(span).start);
        let site = CallSite {
            span: span_of(span),
            target,
            args,
        };
        let notes = passed_to
            .map(|(call, index, unconsumed)| CallNote::PassedTo(call as u32, index, unconsumed))
            .into_iter()
            .chain(spawns.map(|thread| CallNote::Spawns(thread.into_boxed_str())))
            .chain(note);
        if let Some(f) = self.current() {
            f.push_call(site, notes);
        }
    }

    /// Inside a statement that uses a parallel iterator, closures run on the pool.
    fn parallel_thread(&self, at: u32) -> Option<String> {
        let frame = self.frames.last()?;
        frame
            .parallel
            .as_ref()
            .filter(|(end, _)| at < *end)
            .map(|(_, name)| name.clone())
    }

    fn push_use(&mut self, span: SynSpan, what: String, runs_code: bool, needs_gil_check: bool) {
        if let Some(f) = self.current() {
            f.py_uses.push(PyUse {
                span: span_of(span),
                what,
                runs_code,
                needs_gil_check,
                at_destruction: false,
            });
        }
    }

    fn push_switch(
        &mut self,
        span: SynSpan,
        to: GilState,
        scope: std::ops::Range<u32>,
        what: String,
    ) {
        if let Some(f) = self.current() {
            f.gil_switches.push(GilSwitch {
                span: span_of(span),
                to,
                scope,
                what,
            });
        }
    }

    fn push_region(&mut self, region: LockRegion) -> Option<usize> {
        let f = self.current()?;
        f.lock_regions.push(region);
        Some(f.lock_regions.len() - 1)
    }

    fn block_end(&self) -> u32 {
        self.frames
            .last()
            .and_then(|f| f.block_ends.last().copied())
            .unwrap_or(u32::MAX)
    }

    fn qualified(&self, name: &str) -> String {
        let owner = self.frames.last().map_or(String::new(), |f| {
            self.model.functions[f.id].qualname.clone()
        });
        format!("{owner}::{name}")
    }

    /// Whether values of type `ty` are Python objects: a type of the knowledge, or PyO3's naming
    /// (`PyDict`) for a type the file does not declare itself.
    fn is_python_type(&self, ty: &str) -> bool {
        self.k.rust.python_types.contains(ty)
            || (ty
                .strip_prefix("Py")
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
                && !self.declared_types.contains(ty))
    }

    /// The type of a receiver (see [`Self::declared_type_of`]), an alias or a bounded generic
    /// parameter read as what it stands for.
    fn type_of(&self, receiver: &Expr) -> Option<String> {
        let ty = self.declared_type_of(receiver)?;
        let bound = self
            .generic_bounds
            .iter()
            .rev()
            .find(|(param, _)| *param == ty)
            .map(|(_, bound)| bound.clone());
        Some(
            bound
                .or_else(|| self.type_aliases.get(&ty).cloned())
                .unwrap_or(ty),
        )
    }

    /// The declared type of a receiver: a `let`, a parameter, a field, or a static; `self`; a
    /// value built in place.
    fn declared_type_of(&self, receiver: &Expr) -> Option<String> {
        if let Some(ty) = constructed_type(receiver) {
            return Some(ty);
        }
        if let Expr::Path(p) = receiver
            && p.path.is_ident("self")
        {
            return self.self_type.clone();
        }
        if let Expr::Field(field) = unwrapped(receiver) {
            let syn::Member::Named(name) = &field.member else {
                return None;
            };
            // The field of the owner's type, or of any struct when the owner is not known.
            let declared = self.field_types.get(&name.to_string())?;
            let owner = self.type_of(&field.base);
            return declared
                .iter()
                .find(|(struct_name, _)| Some(struct_name) == owner.as_ref())
                .or(declared.last())
                .map(|(_, ty)| ty.clone());
        }
        if let Some(ty) = self.guard_content_type(receiver) {
            return Some(ty);
        }
        let name = receiver_name(receiver)?;
        let frame = self.frames.last();
        frame.and_then(|f| f.types.get(&name).cloned()).or_else(|| {
            match self.statics.get(last_segment(&name))? {
                Static::Typed(ty) | Static::Lazy(_, Some(ty)) => Some(ty.clone()),
                Static::Lazy(_, None) => None,
            }
        })
    }

    /// The names a pattern binds to the value itself or to the one inside `Some(..)`, `Ok(..)`
    /// or a reference: `s` in `Some(ref s)`.
    fn pattern_names(pat: &Pat, names: &mut Vec<String>) {
        match pat {
            Pat::Ident(i) if i.subpat.is_none() => names.push(i.ident.to_string()),
            Pat::Reference(r) => Self::pattern_names(&r.pat, names),
            Pat::Paren(p) => Self::pattern_names(&p.pat, names),
            Pat::Guard(g) => Self::pattern_names(&g.pat, names),
            Pat::TupleStruct(t)
                if t.elems.len() == 1 && (t.path.is_ident("Some") || t.path.is_ident("Ok")) =>
            {
                Self::pattern_names(&t.elems[0], names)
            }
            Pat::Or(o) => {
                for case in &o.cases {
                    Self::pattern_names(case, names);
                }
            }
            _ => {}
        }
    }

    /// The names `pat` binds from `value` take its type, as [`type_name`] reads wrappers, and
    /// the thread whose handle it is (`if let Some(h) = self.worker.take()`).
    fn bind_pattern(&mut self, pat: &Pat, value: &Expr) {
        if self.bind_variant(pat, value) {
            return;
        }
        let mut names = Vec::new();
        Self::pattern_names(pat, &mut names);
        if names.is_empty() {
            return;
        }
        let ty = self.type_of(value);
        let thread = self.thread_of(value);
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        for name in names {
            if let Some(ty) = &ty {
                frame.types.insert(name.clone(), ty.clone());
            }
            if let Some(thread) = &thread {
                frame.locals.insert(name, Local::Thread(thread.clone()));
            }
        }
    }

    /// `Self::Push(source)`, `Input::Push(source)` matched on a value of an enum the file
    /// declares: `source` has the type the variant holds.
    fn bind_variant(&mut self, pat: &Pat, value: &Expr) -> bool {
        let Pat::TupleStruct(t) = pat else {
            return false;
        };
        let (Some(Pat::Ident(inner)), 1) = (t.elems.first(), t.elems.len()) else {
            return false;
        };
        let segments = segment_names(&t.path);
        let enum_name = match segments.as_slice() {
            [.., owner, _] if owner == "Self" => self.self_type.clone(),
            [.., owner, _] => Some(owner.clone()),
            _ => self.type_of(value),
        };
        let Some(ty) = enum_name
            .and_then(|e| {
                self.variant_types
                    .get(&format!("{e}::{}", segments.last()?))
            })
            .cloned()
        else {
            return false;
        };
        if let Some(frame) = self.frames.last_mut() {
            frame.types.insert(inner.ident.to_string(), ty);
        }
        true
    }

    /// The thread name of field `field` of `owner` when it holds a thread's handle.
    fn handle_field(&self, owner: &str, field: &str) -> Option<String> {
        let declared = self.field_types.get(field)?;
        let (_, ty) = declared.iter().find(|(o, _)| o == owner)?;
        self.k
            .rust
            .handle_types
            .contains(ty)
            .then(|| format!("{owner}.{field}"))
    }

    /// Walks `value`, stored in a field whose thread it starts when `thread` says so.
    fn with_field_thread(&mut self, thread: Option<String>, value: &Expr) {
        let saved = thread.and_then(|t| Some(self.frames.last_mut()?.field_thread.replace(t)));
        self.visit_expr(value);
        if let (Some(saved), Some(frame)) = (saved, self.frames.last_mut()) {
            frame.field_thread = saved;
        }
    }

    /// The thread whose handle `expr` is: a local bound to one, or a handle field, through
    /// `.take()`, `.unwrap()` and the like.
    fn thread_of(&self, expr: &Expr) -> Option<String> {
        match unwrapped(expr) {
            Expr::Path(p) => match self.frames.last()?.locals.get(&path_string(&p.path))? {
                Local::Thread(thread) => Some(thread.clone()),
                _ => None,
            },
            Expr::Field(field) => {
                let syn::Member::Named(name) = &field.member else {
                    return None;
                };
                self.handle_field(&self.type_of(&field.base)?, &name.to_string())
            }
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "take" | "unwrap" | "expect" | "as_mut" | "as_ref"
                ) =>
            {
                self.thread_of(&m.receiver)
            }
            Expr::Try(t) => self.thread_of(&t.expr),
            _ => None,
        }
    }

    /// The type of a lock's guard used as its content (`state.write().unwrap()` is a `State`),
    /// looking through what passes a value on (`.unwrap()`, `?`, `.as_mut()`).
    fn guard_content_type(&self, expr: &Expr) -> Option<String> {
        match expr {
            Expr::Try(t) => self.guard_content_type(&t.expr),
            Expr::Paren(p) => self.guard_content_type(&p.expr),
            Expr::MethodCall(m) => {
                let method = m.method.to_string();
                if matches!(
                    method.as_str(),
                    "unwrap"
                        | "expect"
                        | "map_err"
                        | "as_mut"
                        | "as_ref"
                        | "as_deref"
                        | "as_deref_mut"
                ) {
                    return self.guard_content_type(&m.receiver);
                }
                let rust = &self.k.rust;
                let lock = rust.mutex_methods.contains(&method)
                    || rust.detached_mutex_methods.contains(&method);
                let is_mutex = method == "lock"
                    || self
                        .type_of(&m.receiver)
                        .is_some_and(|t| rust.mutex_types.contains(&t));
                if !(lock && is_mutex) {
                    return None;
                }
                let receiver = receiver_name(&m.receiver)?;
                self.lock_contents
                    .get(&self.lock_name(&m.receiver, &receiver))
                    .cloned()
            }
            _ => None,
        }
    }

    /// Walks a closure that is an argument of the call just pushed (or of a construct that is not
    /// a call), marking it as passed to that call when `passed_to` says so.
    fn argument_closure(
        &mut self,
        closure: &syn::ExprClosure,
        passed_to: Option<(usize, u32, Unconsumed)>,
    ) {
        let id = self.numbered_closure(closure);
        self.push_call(
            closure.inputs_begin.span,
            CallTarget::Direct(id),
            0,
            passed_to,
        );
    }

    /// A closure written as an argument, as a function of its own named by its number in the
    /// function it is written in (whether or not it runs there, so that the names of those after
    /// it do not depend on it).
    fn numbered_closure(&mut self, closure: &syn::ExprClosure) -> FnId {
        let qualname = self.numbered_name("closure", |f| &mut f.closures);
        let id = self.closure_function(closure, &qualname);
        self.token_closure_entry(closure, id);
        id
    }

    /// A closure written as an argument that takes PyO3's `Python` token (`move |py|
    /// aw.set_result(py, r)`, typed `Python<'_>` or, as a `FnOnce(Python)` bound lets it be
    /// written, untyped and named `py`) runs attached wherever it runs: only an attached thread
    /// has a token to give it. A call may keep it and run it later on another thread (a
    /// blocking pool's worker that attaches first), where no binding's path leads, so it is an
    /// entry of its own, entered attached, unless the program runs it (see
    /// [`Binding::unless_run`]).
    fn token_closure_entry(&mut self, closure: &syn::ExprClosure, id: FnId) {
        let token = |pattern: &Pat| match pattern {
            Pat::Type(t) => is_token_type(&t.ty),
            Pat::Ident(p) => p.ident == "py",
            _ => false,
        };
        if closure.inputs.iter().any(token) {
            let name = self.model.functions[id].qualname.clone();
            self.bind(name, closure.inputs_begin.span, id, Entry::Token);
        }
    }

    /// A function another crate may call (`pub`, or a trait impl's method, which the trait's
    /// users call) that takes PyO3's `Python` token (`pub fn zeros(py: Python<'py>, ..)`,
    /// `fn get_dtype(py: Python<'_>)` of `impl Element for Datetime`) runs attached wherever it
    /// runs, for the same reason as [`Self::token_closure_entry`]: a library crate, with no
    /// binding of its own, is entered through these from its users' attached code. One that
    /// the program calls is reached from its callers instead (see [`Binding::unless_run`]).
    /// In a crate with bindings, such functions are its bindings' helpers, called from them
    /// (through calls the front-end may not resolve, a trait object's method dispatched by the
    /// crate's own loop): as entries they would be taken to run on threads of their own, beside
    /// the bindings that run them, so they are not (see [`crate::knowledge::CrateTypes::binds`]).
    fn token_function_entry(&mut self, sig: &syn::Signature, public: bool, id: FnId) {
        let token = |arg: &FnArg| matches!(arg, FnArg::Typed(t) if is_token_type(&t.ty));
        if self.k.rust.is_library(&self.krate) && public && sig.inputs.iter().any(token) {
            let name = self.model.functions[id].qualname.clone();
            self.bind(name, sig.ident.span(), id, Entry::Token);
        }
    }

    /// `owner::{kind#N}`: the next name of a lambda of this kind in the function being walked,
    /// numbered by `counter` of its frame.
    fn numbered_name(&mut self, kind: &str, counter: fn(&mut Frame) -> &mut usize) -> String {
        let number = self.frames.last_mut().map_or(0, |f| {
            let count = counter(f);
            *count += 1;
            *count
        });
        let owner = self.frames.last().map_or(self.module.join("::"), |f| {
            self.model.functions[f.id].qualname.clone()
        });
        format!("{owner}::{{{kind}#{number}}}")
    }

    fn visit_arguments<'e>(
        &mut self,
        args: impl Iterator<Item = &'e Expr>,
        passed_to_call: Option<(usize, Unconsumed)>,
    ) {
        for (index, arg) in args.enumerate() {
            let passed_to =
                passed_to_call.map(|(call, unconsumed)| (call, index as u32, unconsumed));
            match arg {
                Expr::Closure(c) => self.argument_closure(c, passed_to),
                Expr::Async(block) if passed_to.is_some() => self.argument_future(block, passed_to),
                _ => match self.callable_argument(arg) {
                    Some(target) => self.push_call(arg.span(), target, 0, passed_to),
                    None => {
                        self.passed_callable_parameter(arg, passed_to);
                        self.visit_expr(arg);
                    }
                },
            }
        }
    }

    /// An async block passed to a call: like a closure, it runs where its callee runs it (a
    /// project function that awaits that parameter), and a library keeps it for later
    /// (`future_into_py(py, async { .. })` runs it on the runtime's threads), unless the call
    /// is awaited here (`timeout(d, async { .. }).await` polls it in place).
    fn argument_future(
        &mut self,
        block: &syn::ExprAsync,
        passed_to: Option<(usize, u32, Unconsumed)>,
    ) {
        let id = self.async_block_function(block);
        let passed_to = passed_to.map(|(call, index, unconsumed)| {
            let at = self.current().map(|f| f.calls[call].span.start);
            match at.is_some() && at == self.awaited {
                true => (call, index, Unconsumed::RunByLibrary),
                false => (call, index, unconsumed),
            }
        });
        self.push_call(block.async_token.span, CallTarget::Direct(id), 0, passed_to);
    }

    /// The arguments of a call that keeps its callable arguments for later: a closure is walked
    /// as a function that nothing here calls, a function passed by name is not called.
    fn stored_arguments<'e>(&mut self, args: impl Iterator<Item = &'e Expr>) {
        for arg in args {
            match arg {
                Expr::Closure(c) => {
                    self.numbered_closure(c);
                }
                Expr::Async(block) => {
                    self.async_block_function(block);
                }
                _ if self.callable_argument(arg).is_some() => {}
                _ => self.visit_expr(arg),
            }
        }
    }

    /// A closure bound to a local, or a function item, passed by name (`engine.apply(call)`,
    /// `rows.map(parse_row)`, `thread::spawn(worker)`, `.map(Self::convert)`): the callee runs
    /// it. A single name is a function only when the file declares one of that name and no
    /// local hides it; a path is one when its last segment is not a type's, variant's or
    /// constant's.
    fn callable_argument(&self, arg: &Expr) -> Option<CallTarget> {
        let Expr::Path(p) = arg else { return None };
        if p.qself.is_some() {
            return None;
        }
        let written = path_string(&p.path);
        let frame = self.frames.last()?;
        if p.path.segments.len() == 1 {
            return match frame.locals.get(&written) {
                Some(Local::Closure(id)) => Some(CallTarget::Direct(*id)),
                Some(_) => None,
                None => (self.free_functions.contains(&written)
                    && !frame.types.contains_key(&written))
                .then(|| CallTarget::Named {
                    path: self.absolute(&written).into(),
                    receiver: Receiver::None,
                }),
            };
        }
        let last = p.path.segments.last()?.ident.to_string();
        last.starts_with(|c: char| c.is_ascii_lowercase())
            .then(|| CallTarget::Named {
                path: self.absolute(&written).into(),
                receiver: Receiver::None,
            })
    }

    /// A callable parameter handed on (`catch_unwind(AssertUnwindSafe(f))`) is called there
    /// when the callee runs it, as a closure written there would be (see `passed_to`).
    fn passed_callable_parameter(
        &mut self,
        arg: &Expr,
        passed_to: Option<(usize, u32, Unconsumed)>,
    ) {
        let inner = match arg {
            Expr::Call(call) if call.args.len() == 1 => &call.args[0],
            other => other,
        };
        let Expr::Path(p) = inner else { return };
        let name = path_string(&p.path);
        let Some(frame) = self.frames.last() else {
            return;
        };
        if let (true, Some(Local::Param(index))) = (
            frame.callable_params.contains(&name),
            frame.locals.get(&name).cloned(),
        ) {
            self.push_call(p.span(), CallTarget::Param(index), 0, passed_to);
        }
    }

    fn last_call_index(&mut self) -> Option<usize> {
        self.current().map(|f| f.calls.len().saturating_sub(1))
    }

    /// `drop(guard)` ends the guard's lock region, or the release a saved thread state keeps.
    fn drop_guard(
        &mut self,
        args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
        at: u32,
    ) -> bool {
        let Some(Expr::Path(p)) = args.first() else {
            return false;
        };
        let name = path_string(&p.path);
        let local = self
            .frames
            .last()
            .and_then(|f| f.locals.get(&name).cloned());
        let Some(f) = self.current() else {
            return false;
        };
        match local {
            Some(Local::Guard(region)) => f.lock_regions[region].scope.end = at,
            Some(Local::Release(Some(switch))) => f.gil_switches[switch].scope.end = at,
            Some(Local::Release(None)) => {
                let scope = at..self.block_end();
                self.push_switch(
                    args.span(),
                    GilState::Held,
                    scope,
                    format!("`drop({name})`, which restores the saved thread state"),
                );
            }
            _ => return false,
        }
        true
    }

    /// `let ts = unsafe { ffi::PyEval_SaveThread() };`, `let g = Guard(unsafe {
    /// ffi::PyEval_SaveThread() });`, `let g = ThreadStateGuard::new();` (a function of the crate
    /// that returns with the GIL released, see [`crate::knowledge::CrateTypes::releasing`]): the
    /// thread state the release saved is kept in `name`, and the GIL stays released while it
    /// lives, to `drop(name)`, a restore of it (`ffi::PyEval_RestoreThread(ts)`, or the guard's
    /// `Drop`), or the end of the block. (A C-style release alone lasts to the end of its block,
    /// here the `unsafe` block around it.)
    fn kept_release(&mut self, name: &str, init: &Expr) {
        let releasing = |function: &String| {
            self.k
                .rust
                .crates
                .get(&self.krate)
                .is_some_and(|types| types.releasing.contains(function))
        };
        let constructed = match unwrapped(block_value(init)) {
            Expr::Call(_) | Expr::MethodCall(_) => self
                .called_function(block_value(init))
                .is_some_and(|f| releasing(&f)),
            _ => false,
        };
        if !constructed && !self.calls_release(init) {
            return;
        }
        let span = span_of(init.span());
        let scope = span.end..self.block_end();
        let Some(f) = self.current() else { return };
        let switch = f.gil_switches.len();
        f.gil_switches.push(GilSwitch {
            span,
            to: GilState::Released,
            scope,
            what: format!("`{name}` (a saved thread state)"),
        });
        if let Some(frame) = self.frames.last_mut() {
            frame
                .locals
                .insert(name.to_string(), Local::Release(Some(switch)));
        }
    }

    /// Whether `expr` calls one of the C API's releases itself (not in a closure it makes), and
    /// none of its acquires (a state saved and restored within it is no longer kept).
    fn calls_release(&self, expr: &Expr) -> bool {
        struct Finder<'w, 'k> {
            walker: &'w Walker<'k>,
            releases: bool,
            acquires: bool,
        }
        impl<'ast> Visit<'ast> for Finder<'_, '_> {
            fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
            fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
            fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
                if let Expr::Path(func) = &*call.func
                    && let Some(name) = self.walker.ffi_name(&func.path)
                {
                    self.releases |= self.walker.k.release_calls.contains(&name);
                    self.acquires |= self.walker.k.acquire_calls.contains(&name);
                }
                syn::visit::visit_expr_call(self, call);
            }
        }
        let mut finder = Finder {
            walker: self,
            releases: false,
            acquires: false,
        };
        finder.visit_expr(expr);
        finder.releases && !finder.acquires
    }

    /// The C-API name a call's path names: through an ffi module (`ffi::PyEval_SaveThread`), or
    /// bare, imported or declared in the crate's own `extern "C"` block (its `_` keeps
    /// tuple-struct constructors such as `PyTokenizer(..)` out).
    fn ffi_name(&self, path: &syn::Path) -> Option<String> {
        let segments = segment_names(path);
        let last = segments.last()?;
        let through_ffi = segments.iter().any(|s| self.k.rust.ffi_modules.contains(s))
            || segments.len() == 1 && last.contains('_');
        through_ffi.then(|| last.clone())
    }

    /// A method call that takes or waits for a lock; returns whether it was one.
    fn lock_method(&mut self, call: &syn::ExprMethodCall) -> bool {
        let method = call.method.to_string();
        let rust = &self.k.rust;
        let receiver = receiver_name(&call.receiver).unwrap_or_else(|| "_".to_string());
        let receiver_type = self.type_of(&call.receiver);
        if receiver_type
            .as_ref()
            .is_some_and(|ty| self.methods.contains(&format!("{ty}::{method}")))
        {
            return false;
        }
        let borrowed = self.borrowed_lock(&call.receiver, &receiver);
        let contended = borrowed.is_none() && !self.is_thread_local(&call.receiver);
        let lock = borrowed.unwrap_or_else(|| self.lock_name(&call.receiver, &receiver));
        let span = span_of(call.method.span());
        let args_span = span_of(call.paren_token.span.join());
        // `cell.get_or_init(|| ...)`: the closure runs holding the cell's lock. A GIL-only cell
        // (`PyOnceLock`, `GILOnceCell`, which take `py` first) is not a second lock.
        let gil_cell = receiver_type
            .as_ref()
            .map_or(call.args.len() == 2, |t| rust.gil_cells.contains(t));
        if (rust.once_methods.contains(&method) && !gil_cell)
            || rust.detached_once_methods.contains(&method)
        {
            let waits = contended && !rust.detached_once_methods.contains(&method);
            self.push_region(LockRegion {
                member: false,
                span,
                kind: LockKind::Once,
                lock: lock.clone(),
                scope: args_span.start..args_span.end,
                waits,
            });
            return false; // the arguments are walked by the caller
        }
        let is_mutex = rust.mutex_methods.contains(&method)
            && (method == "lock"
                || receiver_type
                    .as_ref()
                    .is_some_and(|t| rust.mutex_types.contains(t)));
        if is_mutex || rust.detached_mutex_methods.contains(&method) {
            let kind = if method.starts_with("read") {
                LockKind::SharedRead
            } else {
                LockKind::Mutex
            };
            let member = self.is_member_lock(&call.receiver);
            self.push_guard(span, kind, lock, is_mutex && contended, member);
            return false;
        }
        if rust.barrier_wait_methods.contains(&method)
            && receiver_type
                .as_ref()
                .is_some_and(|t| rust.barrier_types.contains(t))
        {
            self.push_region(LockRegion {
                member: false,
                span,
                kind: LockKind::Barrier,
                lock: lock.clone(),
                scope: span.start..span.start,
                waits: contended,
            });
            return false;
        }
        // A pool's acquire call, in a crate whose structs keep the pool's items (the objects a
        // binding hands to Python): an item comes back only when Python frees its object.
        if rust.pool_acquire_methods.contains(&method)
            && receiver_type
                .as_ref()
                .is_some_and(|t| rust.pool_types.contains(t))
            && self
                .field_types
                .values()
                .flatten()
                .any(|(_, ty)| rust.pool_item_types.contains(ty))
        {
            self.push_region(LockRegion {
                member: false,
                span,
                kind: LockKind::Pool,
                lock: lock.clone(),
                scope: span.start..span.start,
                waits: contended,
            });
            return false;
        }
        // A rendezvous send waits for the receiving thread; the receiving code holds the channel
        // from its start until it receives.
        if let Some(channel) = self.channel_of(&call.receiver) {
            let (send, receive) = (
                rust.channel_send_methods.contains(&method),
                rust.channel_receive_methods.contains(&method),
            );
            self.signal_region(span, LockKind::Channel, channel, (send, receive), contended);
            return false;
        }
        if receiver_type
            .as_ref()
            .is_some_and(|t| rust.condvar_types.contains(t))
        {
            let (wait, notify) = (
                rust.condvar_wait_methods.contains(&method),
                rust.condvar_notify_methods.contains(&method),
            );
            self.signal_region(span, LockKind::Condvar, lock, (wait, notify), contended);
            return false;
        }
        if rust.join_methods.contains(&method)
            && let Some(thread) = self.thread_of(&call.receiver)
        {
            self.push_region(LockRegion {
                member: false,
                span,
                kind: LockKind::Thread,
                lock: thread,
                scope: span.start..span.start,
                waits: true,
            });
            return false;
        }
        false
    }

    /// A wait at `span` for another thread's signal (`cv.wait(g)`, a rendezvous `tx.send(x)`), or
    /// that signal (`cv.notify_one()`, `rx.recv()`), which the signalling code "holds" from the
    /// start of its function until it signals; `(waits, signals)` says which `span` is.
    fn signal_region(
        &mut self,
        span: Span,
        kind: LockKind,
        lock: String,
        (waits, signals): (bool, bool),
        contended: bool,
    ) {
        let (scope, waits) = match (waits, signals) {
            (true, _) => (span.start..span.start, contended),
            (false, true) => (
                self.frames.last().map_or(0, |f| f.body_start)..span.start,
                false,
            ),
            (false, false) => return,
        };
        self.push_region(LockRegion {
            member: false,
            span,
            kind,
            lock,
            scope,
            waits,
        });
    }

    /// A guard taken at `span`: held to the end of the block when a `let` binds it, to the end of
    /// the statement when it is a temporary.
    fn push_guard(&mut self, span: Span, kind: LockKind, lock: String, waits: bool, member: bool) {
        let frame = self.frames.last();
        let guard = frame
            .and_then(|f| f.binding_guard.clone())
            .filter(|&(_, at)| at == span.start)
            .map(|(name, _)| name);
        let consumed = frame
            .and_then(|f| f.consumed_guard)
            .filter(|&(at, _)| at == span.start)
            .map(|(_, end)| end);
        // A `let` binds the consuming call's value, never the guard it consumed.
        let end = match (&guard, consumed) {
            (_, Some(end)) => end,
            (Some(_), None) => self.block_end(),
            (None, None) => frame.map_or(u32::MAX, |f| f.statement_end),
        };
        let region = self.push_region(LockRegion {
            member,
            span,
            kind,
            lock,
            scope: span.start..end,
            waits,
        });
        if let (Some(name), Some(region), Some(frame)) = (guard, region, self.frames.last_mut()) {
            frame.locals.insert(name, Local::Guard(region));
            frame.binding_guard = None;
        }
    }

    /// A call of a function that returns a held guard (see [`Self::guard_function`]): the caller
    /// holds its lock from the call on. The wait is the function's own.
    fn guard_function_call(&mut self, at: SynSpan, function: &str) {
        if let Some((kind, lock)) = self.guard_functions.get(function).cloned() {
            self.push_guard(span_of(at), kind, lock, false, false);
        }
    }

    /// Temporaries of a call's arguments live to the end of its statement: a lock they take is
    /// held by the call too (`off_gil(py, LOG.lock().unwrap().len())`).
    fn hold_argument_temporaries(&mut self, call_start: u32, regions_before: usize, args_end: u32) {
        if let Some(f) = self.current() {
            for region in f.lock_regions.iter_mut().skip(regions_before) {
                if region.scope.end >= args_end && region.scope.start > call_start {
                    region.scope.start = call_start;
                }
            }
        }
    }

    fn region_count(&mut self) -> usize {
        self.current().map_or(0, |f| f.lock_regions.len())
    }

    /// A lock that is a field of an object borrowed exclusively (see [`ExclusiveBorrow`]): named
    /// by the borrowing function. Nothing outside the borrow can hold it or wait for it, and
    /// within it the borrowing thread waits for nobody (it would wait for itself).
    fn borrowed_lock(&self, receiver_expr: &Expr, receiver: &str) -> Option<String> {
        let borrow = self.frames.last()?.exclusive.as_ref()?;
        let root = field_root(receiver_expr)?;
        (matches!(receiver_expr, Expr::Field(_)) && borrow.names.contains(&root))
            .then(|| format!("{}::{root}.{receiver}", borrow.borrower))
    }

    /// Whether `receiver_expr` is, or is a field of, this thread's value of a `thread_local!`.
    fn is_thread_local(&self, receiver_expr: &Expr) -> bool {
        field_root(receiver_expr).is_some_and(|root| {
            self.thread_locals.contains(&root)
                || self
                    .frames
                    .last()
                    .is_some_and(|f| f.thread_local.contains(&root))
        })
    }

    /// `self.inner` where the type holds `inner` by value: a lock of this one object (see
    /// [`LockRegion::member`]).
    fn is_member_lock(&self, receiver_expr: &Expr) -> bool {
        let Expr::Field(field) = unwrapped(receiver_expr) else {
            return false;
        };
        let (syn::Member::Named(name), Some(owner)) = (&field.member, &self.self_type) else {
            return false;
        };
        matches!(&*field.base, Expr::Path(p) if p.path.is_ident("self"))
            && self.lock_fields.contains(&format!("{owner}.{name}"))
    }

    /// Statics are shared by name across the module; locals are qualified by their function,
    /// except a lock a function returned, named by that function; a field is named with its
    /// owner's type when that is known (`Protocol.tx`: another type's `tx` is another lock).
    fn lock_name(&self, receiver_expr: &Expr, receiver: &str) -> String {
        if let Expr::Path(_) = unwrapped(receiver_expr)
            && let Some(lock) = self
                .frames
                .last()
                .and_then(|f| f.returned_locks.get(receiver))
        {
            return lock.clone();
        }
        if let Expr::Field(field) = unwrapped(receiver_expr) {
            return match self.type_of(&field.base) {
                Some(owner) => format!("{owner}.{receiver}"),
                None => receiver.to_string(),
            };
        }
        let declares =
            |f: &&Frame| f.types.contains_key(receiver) || f.locals.contains_key(receiver);
        // A local captured by closures is one lock in all of them (`barrier` in each thread of a
        // `thread::scope`): it is named in the function that declares it.
        let declaring = self.frames.iter().rev().take_while(declares).last();
        if receiver == "self"
            && let Some(ty) = &self.self_type
        {
            // An object that is itself a lock (through `Deref`) is one lock per type, as its
            // fields are; `self` alone would merge every type's.
            ty.clone()
        } else if let Some(frame) = declaring {
            format!("{}::{receiver}", self.model.functions[frame.id].qualname)
        } else if self.statics.contains_key(last_segment(receiver)) {
            // A static is one lock however it is written (`crate::state::REGISTRY`).
            last_segment(receiver).to_string()
        } else {
            receiver.to_string()
        }
    }

    /// Starts threads for closures among `args`, waited for at `wait` (a scoped or parallel call).
    fn scoped_threads<'e>(
        &mut self,
        wait: SynSpan,
        label: &str,
        args: impl Iterator<Item = &'e Expr>,
    ) {
        let thread = self.qualified(&format!("{label}@{}", wait.start().line));
        self.wait_for_thread(span_of(wait), thread.clone());
        self.spawn_closures(&thread, args);
    }

    /// `runtime.block_on(future)` at `wait`: the future is polled in place, in the caller's
    /// state, so its own waits are the caller's; when it is a task's handle (`block_on(
    /// handle.spawn(..))`, a local bound to one), the caller waits for that task.
    fn future_wait(&mut self, wait: SynSpan, future: &Expr) {
        match future {
            Expr::Async(block) => self.async_block_call(block),
            _ if self.awaited_parameter(future) => {}
            _ => self.visit_expr(future),
        }
        if let Some(task) = self.task_of(future) {
            self.wait_for_thread(span_of(wait), task);
        }
    }

    /// A future parameter awaited (or blocked on) runs there, as a callable parameter called
    /// does: whether `future` is one, now called.
    fn awaited_parameter(&mut self, future: &Expr) -> bool {
        let Expr::Path(p) = unwrapped(future) else {
            return false;
        };
        let Some(&Local::Param(index)) = self
            .frames
            .last()
            .and_then(|f| f.locals.get(&path_string(&p.path)))
        else {
            return false;
        };
        self.push_call(p.span(), CallTarget::Param(index), 0, None);
        true
    }

    /// The task or thread whose handle `expr` is: a local or field bound to one, or the spawn
    /// call `expr` itself, just walked.
    fn task_of(&self, expr: &Expr) -> Option<String> {
        self.thread_of(expr).or_else(|| {
            let at = call_name_start(expr)?;
            self.last_thread
                .as_ref()
                .filter(|(started, _)| *started == at)
                .map(|(_, thread)| thread.clone())
        })
    }

    fn wait_for_thread(&mut self, at: Span, thread: String) {
        self.push_region(LockRegion {
            member: false,
            span: at,
            kind: LockKind::Thread,
            lock: thread,
            scope: at.start..at.start,
            waits: true,
        });
    }

    /// `pyo3_async_runtimes::tokio::into_future(coroutine)` at `at`: Python's event loop runs
    /// the coroutine attached, on its own thread, and the future it returns waits for it. That
    /// thread is a function of its own, which takes the GIL.
    fn python_future(&mut self, at: SynSpan, written: &str) {
        let thread = self.spawned_thread(written, at);
        let line = at.start().line;
        let id = self.new_function(
            "{event loop}".to_string(),
            self.qualified(&format!("{{event loop@{line}}}")),
            FunctionKind::Lambda,
            at,
            (0, Some(0)),
        );
        let span = span_of(at);
        self.model.functions[id].gil_switches.push(GilSwitch {
            span,
            to: GilState::Held,
            scope: span.start..span.end,
            what: format!("the event loop that `{written}` hands the coroutine to"),
        });
        let note = CallNote::Spawns(thread.clone().into_boxed_str());
        self.push_noted_call(at, CallTarget::Direct(id), 0, None, Some(note));
        self.python_future = Some(thread);
    }

    /// An async block handed to a runtime, called where it is written.
    fn async_block_call(&mut self, block: &syn::ExprAsync) {
        let id = self.async_block_function(block);
        self.push_call(block.async_token.span, CallTarget::Direct(id), 0, None);
    }

    /// The thread a spawn call at `at` starts: named by the field or the `let` that keeps its
    /// handle, or else by the call and its line.
    fn spawned_thread(&mut self, written: &str, at: SynSpan) -> String {
        let field = self.frames.last_mut().and_then(|f| f.field_thread.take());
        let thread = field.unwrap_or_else(|| {
            self.frames
                .last()
                .and_then(|f| f.binding_thread.clone())
                .map_or_else(
                    || self.qualified(&format!("{written}@{}", at.start().line)),
                    |name| self.qualified(&name),
                )
        });
        if let Some(frame) = self.frames.last_mut()
            && let Some(name) = frame.binding_thread.take()
        {
            frame.locals.insert(name, Local::Thread(thread.clone()));
        }
        self.last_thread = Some((span_of(at).start, thread.clone()));
        thread
    }

    /// The callables among `args` run on new threads that hold the thread lock `thread`; so do
    /// the calls that make the other arguments (`spawn(worker.run())`: the future runs there).
    fn spawn_closures<'e>(&mut self, thread: &str, args: impl Iterator<Item = &'e Expr>) {
        for arg in args {
            let saved = self
                .frames
                .last_mut()
                .and_then(|f| f.parallel.replace((u32::MAX, thread.to_string())));
            match (arg, self.callable_argument(arg)) {
                (Expr::Closure(c), _) => self.argument_closure(c, None),
                (Expr::Async(block), _) => self.async_block_call(block),
                (_, Some(target)) => self.push_call(arg.span(), target, 0, None),
                _ => self.visit_expr(arg),
            }
            if let Some(frame) = self.frames.last_mut() {
                frame.parallel = saved;
            }
        }
    }
}

/// What becomes of a closure passed to a call none of whose project callees calls it: one that
/// the knowledge says the library runs (`opt.map(|x| ..)`) runs in place when the callee is the
/// library's; any other is kept for later.
fn unconsumed(library_runs: bool) -> Unconsumed {
    if library_runs {
        Unconsumed::RunByLibrary
    } else {
        Unconsumed::Stored
    }
}

/// Where the name of the call `expr` is (`f` of `f(..)`, `m` of `x.m(..)`), through `?`.
fn call_name_start(expr: &Expr) -> Option<u32> {
    match unwrapped(expr) {
        Expr::MethodCall(m) => Some(span_of(m.method.span()).start),
        Expr::Call(c) => Some(span_of(c.func.span()).start),
        Expr::Try(t) => call_name_start(&t.expr),
        _ => None,
    }
}

/// The only argument of a call that has one.
fn single(args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>) -> Option<&Expr> {
    (args.len() == 1).then(|| &args[0])
}

/// Generic parameters bounded by `Fn`, `FnMut` or `FnOnce`, in the generics or the where clause.
fn callable_type_parameters(sig: &syn::Signature) -> FxHashSet<String> {
    let mut names: FxHashSet<String> = sig
        .generics
        .type_params()
        .filter(|p| has_fn_bound(&p.bounds))
        .map(|p| p.ident.to_string())
        .collect();
    if let Some(clause) = &sig.generics.where_clause {
        for predicate in &clause.predicates {
            if let syn::WherePredicate::Type(t) = predicate
                && has_fn_bound(&t.bounds)
                && let Some(name) = type_name(&t.bounded_ty)
            {
                names.insert(name);
            }
        }
    }
    names
}

fn has_fn_bound(bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>) -> bool {
    bounds.iter().any(|b| match b {
        syn::TypeParamBound::Trait(t) => t
            .path
            .segments
            .last()
            .is_some_and(|s| matches!(s.ident.to_string().as_str(), "Fn" | "FnMut" | "FnOnce")),
        _ => false,
    })
}

/// `F` with `F: FnOnce()`, `impl Fn()`, `&dyn FnMut()`.
fn is_callable(ty: &Type, callable: &FxHashSet<String>) -> bool {
    match ty {
        Type::Reference(r) => is_callable(&r.elem, callable),
        Type::ImplTrait(t) => has_fn_bound(&t.bounds),
        Type::TraitObject(t) => has_fn_bound(&t.bounds),
        other => type_name(other).is_some_and(|name| callable.contains(&name)),
    }
}

/// The entries of a `lazy_static!` body: `[pub] static ref NAME: Type = expr;`.
fn parse_lazy_statics(
    input: syn::parse::ParseStream,
) -> syn::Result<Vec<(syn::Ident, Type, Expr)>> {
    let mut entries = Vec::new();
    while !input.is_empty() {
        let _attrs = input.call(syn::Attribute::parse_outer)?;
        let _vis: syn::Visibility = input.parse()?;
        input.parse::<syn::Token![static]>()?;
        input.parse::<syn::Token![ref]>()?;
        let name: syn::Ident = input.parse()?;
        input.parse::<syn::Token![:]>()?;
        let ty: Type = input.parse()?;
        input.parse::<syn::Token![=]>()?;
        let expr: Expr = input.parse()?;
        input.parse::<syn::Token![;]>()?;
        entries.push((name, ty, expr));
    }
    Ok(entries)
}

/// The name a pattern binds when it is a single name (`x`, `x: T`, `mut x`).
fn pattern_ident(pattern: &Pat) -> Option<String> {
    match pattern {
        Pat::Ident(p) => Some(p.ident.to_string()),
        Pat::Type(t) => pattern_ident(&t.pat),
        _ => None,
    }
}

/// The expressions of a macro body written as `select!` arms: `[biased;]`, then arms `pattern =
/// future [, if condition] => handler[,]` and `else => handler`.
fn parse_select_arms(input: syn::parse::ParseStream) -> syn::Result<Vec<Expr>> {
    let mut exprs = Vec::new();
    if input.peek(syn::Ident) && input.peek2(syn::Token![;]) {
        input.parse::<syn::Ident>()?;
        input.parse::<syn::Token![;]>()?;
    }
    while !input.is_empty() {
        if input.parse::<Option<syn::Token![else]>>()?.is_none() {
            Pat::parse_single(input)?;
            input.parse::<syn::Token![=]>()?;
            exprs.push(input.parse()?);
            if input.peek(syn::Token![,]) && input.peek2(syn::Token![if]) {
                input.parse::<syn::Token![,]>()?;
                input.parse::<syn::Token![if]>()?;
                exprs.push(input.parse()?);
            }
        }
        input.parse::<syn::Token![=>]>()?;
        exprs.push(input.parse()?);
        input.parse::<Option<syn::Token![,]>>()?;
    }
    Ok(exprs)
}

/// The names a `thread_local!` body declares: `[pub] static NAME: Type = [const] init;`, the
/// last `;` optional.
fn parse_thread_local_names(input: syn::parse::ParseStream) -> syn::Result<Vec<String>> {
    let mut names = Vec::new();
    while !input.is_empty() {
        let _attrs = input.call(syn::Attribute::parse_outer)?;
        let _vis: syn::Visibility = input.parse()?;
        input.parse::<syn::Token![static]>()?;
        let name: syn::Ident = input.parse()?;
        input.parse::<syn::Token![:]>()?;
        let _ty: Type = input.parse()?;
        input.parse::<syn::Token![=]>()?;
        if input.peek(syn::Token![const]) {
            input.parse::<syn::Token![const]>()?;
        }
        let _init: Expr = input.parse()?;
        names.push(name.to_string());
        if !input.is_empty() {
            input.parse::<syn::Token![;]>()?;
        }
    }
    Ok(names)
}

/// `#[pyo3(name = "x")]` or `#[pyfunction(name = "x")]`.
fn python_name(attrs: &[syn::Attribute]) -> Option<String> {
    let mut found = None;
    for attr in attrs {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name")
                && let Ok(value) = meta.value()
                && let Ok(lit) = value.parse::<syn::LitStr>()
            {
                found = Some(lit.value());
            } else if meta.input.peek(syn::Token![=]) {
                let _ = meta.value().and_then(|v| v.parse::<Expr>());
            } else if meta.input.peek(syn::token::Paren) {
                let _ = meta.parse_nested_meta(|_| Ok(()));
            }
            Ok(())
        });
    }
    found
}

impl<'ast> Visit<'ast> for Walker<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        // A static declared in a body (`static DTYPES: TypeDescriptors = ..;`, a cache of the
        // function's) has its declared type, and is one lock by its name, as the file's statics
        // are (one the file declares wins).
        if let Item::Static(s) = item
            && !self.frames.is_empty()
            && let Some(ty) = type_name(&s.ty)
        {
            self.statics
                .entry(s.ident.to_string())
                .or_insert(Static::Typed(ty));
        }
        // Items nested in function bodies are functions of their own.
        let frames = std::mem::take(&mut self.frames);
        self.item(item);
        self.frames = frames;
    }

    fn visit_block(&mut self, block: &'ast syn::Block) {
        let end = span_of(block.brace_token.span.join()).end;
        if let Some(f) = self.frames.last_mut() {
            f.block_ends.push(end);
        }
        for stmt in &block.stmts {
            let statement_end = span_of(statement_end(stmt)).end;
            let saved = self
                .frames
                .last_mut()
                .map(|f| std::mem::replace(&mut f.statement_end, statement_end));
            self.visit_stmt(stmt);
            if let (Some(f), Some(saved)) = (self.frames.last_mut(), saved) {
                f.statement_end = saved;
                f.parallel = None;
            }
        }
        if let Some(f) = self.frames.last_mut() {
            f.block_ends.pop();
        }
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        let name = match &local.pat {
            Pat::Ident(i) => Some(i.ident.to_string()),
            Pat::Type(t) => match &*t.pat {
                Pat::Ident(i) => Some(i.ident.to_string()),
                _ => None,
            },
            _ => None,
        };
        let declared = match &local.pat {
            Pat::Type(t) => type_name(&t.ty),
            _ => local.init.as_ref().and_then(|i| {
                constructed_type(&i.expr)
                    .or_else(|| self.call_value_type(&i.expr, ""))
                    .or_else(|| self.guard_content_type(&i.expr))
                    .or_else(|| self.object_content_type(&i.expr))
            }),
        };
        if let (Some(ty), Some(name)) = (declared, &name)
            && let Some(frame) = self.frames.last_mut()
        {
            frame.types.insert(name.clone(), ty);
        }
        let Some(init) = &local.init else { return };
        // `let (builder, proxy) = configure(..)?;`: each name has its element's type.
        if let Pat::Tuple(tuple) = &local.pat {
            for (position, element) in tuple.elems.iter().enumerate() {
                if let Some(element) = pattern_ident(element)
                    && let Some(ty) = self.call_value_type(&init.expr, &format!(".{position}"))
                    && let Some(frame) = self.frames.last_mut()
                {
                    frame.types.insert(element, ty);
                }
            }
        }
        self.rendezvous_channel(&local.pat, &init.expr);
        let built = constructed_type(&init.expr).is_some();
        let returned_lock = self
            .called_function(&init.expr)
            .filter(|f| self.lock_functions.contains(f));
        if !matches!(local.pat, Pat::Ident(_) | Pat::Type(_))
            || self.thread_of(&init.expr).is_some()
        {
            self.bind_pattern(&local.pat, &init.expr);
        }
        match (&*init.expr, &name) {
            (Expr::Closure(closure), Some(name)) => {
                let qualname = self.qualified(name);
                let id = self.closure_function(closure, &qualname);
                if let Some(frame) = self.frames.last_mut() {
                    frame.locals.insert(name.clone(), Local::Closure(id));
                }
            }
            (expr, Some(name)) => {
                if let Some(frame) = self.frames.last_mut() {
                    if let Some(at) = guard_call(extended_operand(expr)).and_then(call_position) {
                        frame.binding_guard = Some((name.clone(), at));
                    }
                    frame.binding_thread = Some(name.clone());
                }
                let outer = self.python_future.take();
                self.visit_expr(expr);
                self.kept_release(name, expr);
                let future = std::mem::replace(&mut self.python_future, outer);
                if let Some(frame) = self.frames.last_mut() {
                    frame.binding_guard = None;
                    frame.binding_thread = None;
                    if let Some(thread) = future {
                        frame.locals.insert(name.clone(), Local::Thread(thread));
                    }
                }
            }
            (expr, None) => self.visit_expr(expr),
        }
        if let Some((_, diverge)) = &init.diverge {
            self.visit_expr(diverge);
        }
        if let (Some(name), Some(frame)) = (name, self.frames.last_mut()) {
            match returned_lock {
                Some(function) => frame
                    .returned_locks
                    .insert(name.clone(), format!("{function}()")),
                None => frame.returned_locks.remove(&name),
            };
            if built && matches!(local.pat, Pat::Ident(_)) {
                frame.unpublished.insert(name);
            } else {
                frame.unpublished.remove(&name);
            }
        }
    }

    fn visit_expr_struct(&mut self, literal: &'ast syn::ExprStruct) {
        // A closure in a struct literal is stored, not run.
        let owner = match literal.path.segments.last() {
            Some(s) if s.ident == "Self" => self.self_type.clone(),
            Some(s) => Some(s.ident.to_string()),
            None => None,
        };
        for field in &literal.fields {
            match &field.expr {
                Expr::Closure(c) => self.stored_closure(c),
                other => {
                    let thread = match (&field.member, &owner) {
                        (syn::Member::Named(name), Some(owner)) => {
                            self.handle_field(owner, &name.to_string())
                        }
                        _ => None,
                    };
                    self.with_field_thread(thread, other);
                }
            }
        }
        if let Some(rest) = &literal.rest {
            self.visit_expr(rest);
        }
    }

    /// A match arm ends what a parallel call in it runs on the pool: the other arms run in the
    /// caller (`Some(pool) => pool.install(..), None => self.step()`).
    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        let end = span_of(
            arm.comma
                .map_or_else(|| last_token(&arm.body), |comma| comma.span),
        )
        .end;
        let saved = self.frames.last_mut().map(|f| {
            (
                std::mem::replace(&mut f.statement_end, end),
                f.parallel.take(),
            )
        });
        syn::visit::visit_arm(self, arm);
        if let (Some(f), Some((statement_end, parallel))) = (self.frames.last_mut(), saved) {
            f.statement_end = statement_end;
            f.parallel = parallel;
        }
    }

    fn visit_expr_if(&mut self, expr: &'ast syn::ExprIf) {
        // Temporaries of an `if let` scrutinee live through the then-block (Rust 2024 drops them
        // before `else`); those of a plain condition die before the block.
        let end = match &*expr.cond {
            Expr::Let(_) => span_of(expr.then_branch.brace_token.span.join()).end,
            cond => span_of(cond.span()).end,
        };
        let saved = self
            .frames
            .last_mut()
            .map(|f| std::mem::replace(&mut f.statement_end, end));
        self.visit_expr(&expr.cond);
        if let (Some(f), Some(saved)) = (self.frames.last_mut(), saved) {
            f.statement_end = saved;
        }
        self.visit_block(&expr.then_branch);
        if let Some((_, otherwise)) = &expr.else_branch {
            self.visit_expr(otherwise);
        }
    }

    fn visit_expr_let(&mut self, expr: &'ast syn::ExprLet) {
        // `if let Some(s) = &self.scorer`: `s` has the type inside the scrutinee's wrappers.
        self.bind_pattern(&expr.pat, &expr.expr);
        self.visit_expr(&expr.expr);
    }

    fn visit_expr_match(&mut self, expr: &'ast syn::ExprMatch) {
        self.visit_expr(&expr.expr);
        for arm in &expr.arms {
            self.bind_pattern(&arm.pat, &expr.expr);
            self.visit_arm(arm);
        }
    }

    fn visit_expr_assign(&mut self, assign: &'ast syn::ExprAssign) {
        // `self.worker = Some(thread::spawn(..))`: the thread is named by the field.
        let thread = match &*assign.left {
            Expr::Field(field) => match (&field.member, self.type_of(&field.base)) {
                (syn::Member::Named(name), Some(owner)) => {
                    self.handle_field(&owner, &name.to_string())
                }
                _ => None,
            },
            _ => None,
        };
        self.visit_expr(&assign.left);
        self.with_field_thread(thread, &assign.right);
    }

    fn visit_expr_await(&mut self, expr: &'ast syn::ExprAwait) {
        // `spawn_blocking(f).await` waits here for `f`, run on another thread.
        if let Expr::Call(call) = unwrapped(&expr.base)
            && let Expr::Path(func) = &*call.func
        {
            let written = path_string(&func.path);
            let segments: Vec<&str> = written.split("::").collect();
            let spawns = &self.k.rust.awaited_spawn_calls;
            if spawns.contains(&written)
                || (segments.len() > 1
                    && spawns.contains(&segments[segments.len() - 2..].join("::")))
            {
                self.scoped_threads(func.span(), &written, call.args.iter());
                return;
            }
        }
        if self.awaited_parameter(&expr.base) {
            return;
        }
        let outer = std::mem::replace(&mut self.awaited, call_name_start(&expr.base));
        self.visit_expr(&expr.base);
        self.awaited = outer;
        // Awaiting a task's handle (or a Python coroutine's future) waits for it.
        if let Some(task) = self.task_of(&expr.base) {
            self.wait_for_thread(span_of(expr.await_token.span), task);
        }
    }

    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        // A closure that is not an argument of a call we understand runs where it is written.
        self.argument_closure(closure, None);
    }

    fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
        let name = path_string(&path.path);
        // Any use but a method call's receiver may give the object away, also from a closure.
        for frame in &mut self.frames {
            frame.unpublished.remove(&name);
        }
        // Using a lazy static may run its initialiser, holding its lock.
        if let Some(Static::Lazy(init, _)) = self.statics.get(&name).cloned() {
            let at = span_of(path.span());
            self.push_region(LockRegion {
                member: false,
                span: at,
                kind: LockKind::Lazy,
                lock: name.clone(),
                scope: at.start..at.end,
                waits: true,
            });
            let init = match init {
                Some(id) => CallTarget::Direct(id),
                None => CallTarget::Named {
                    path: format!("{}::{LAZY_STATIC_INIT}", self.absolute(&name)).into(),
                    receiver: Receiver::None,
                },
            };
            self.push_call(path.span(), init, 0, None);
        }
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        let Expr::Path(func) = &*call.func else {
            visit::visit_expr_call(self, call);
            return;
        };
        let written = path_string(&func.path);
        let last = func
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let rust = &self.k.rust;
        let args_span = span_of(call.paren_token.span.join());
        let shown = written.clone();
        if last == "drop" && self.drop_guard(&call.args, span_of(call.span()).start) {
            return;
        }
        if self.gil_closure_call(
            &last,
            func.span(),
            args_span,
            format!("`{shown}`"),
            call.args.iter(),
        ) {
            return;
        }
        if rust.acquire_calls.contains(&last) {
            let at = span_of(call.span()).start;
            self.push_switch(
                func.span(),
                GilState::Held,
                at..self.block_end(),
                format!("`{shown}()`"),
            );
            return;
        }
        let segments = segment_names(&func.path);
        let through_ffi = self.ffi_name(&func.path).is_some();
        // `ffi::PyGILState_Ensure()` / `ffi::PyEval_SaveThread()`: the C API's own switches, to the
        // end of the block (the knowledge of rules/cpython.toml).
        if through_ffi
            && (self.k.acquire_calls.contains(&last) || self.k.release_calls.contains(&last))
        {
            let to = if self.k.acquire_calls.contains(&last) {
                GilState::Held
            } else {
                GilState::Released
            };
            let at = span_of(call.span()).start;
            self.push_switch(
                func.span(),
                to,
                at..self.block_end(),
                format!("`{shown}()`"),
            );
            // `ffi::PyEval_RestoreThread(ts)` restores the thread state kept in `ts`.
            if to == GilState::Held {
                self.drop_guard(&call.args, at);
            }
            self.visit_arguments(call.args.iter(), None);
            return;
        }
        if through_ffi && self.k.is_c_api_call(&last) {
            let runs_code = self.k.c_api_runs_code(&last);
            self.push_use(func.span(), format!("`{shown}` is called"), runs_code, true);
            self.visit_arguments(call.args.iter(), None);
            return;
        }
        if segments.len() >= 2
            && rust.methods_running_code.contains(&last)
            && segments[segments.len() - 2].starts_with(|c: char| c.is_ascii_uppercase())
            && segments[segments.len() - 2].starts_with("Py")
        {
            self.push_use(func.span(), format!("`{shown}` is called"), true, false);
            self.visit_arguments(call.args.iter(), None);
            return;
        }
        if rust.spawn_calls.contains(&written)
            || (segments.len() > 1
                && rust
                    .spawn_calls
                    .contains(&segments[segments.len() - 2..].join("::")))
        {
            let thread = self.spawned_thread(&written, func.span());
            self.spawn_closures(&thread, call.args.iter());
            return;
        }
        if rust.scoped_calls.contains(&written) {
            self.scoped_threads(func.span(), &written, call.args.iter());
            return;
        }
        if rust.future_wait_calls.contains(&written)
            && let Some(future) = single(&call.args)
        {
            self.future_wait(func.span(), future);
            return;
        }
        if rust.python_future_calls.contains(&written)
            || (segments.len() > 1
                && rust
                    .python_future_calls
                    .contains(&segments[segments.len() - 2..].join("::")))
        {
            self.python_future(func.span(), &written);
            self.visit_arguments(call.args.iter(), None);
            return;
        }
        // `Arc::new(|x| ...)`, `Box::new(...)`: a closure stored to be called later, by code we
        // cannot follow; it does not run here.
        if segments.len() >= 2
            && last == "new"
            && matches!(segments[segments.len() - 2].as_str(), "Box" | "Arc" | "Rc")
        {
            for arg in &call.args {
                match arg {
                    Expr::Closure(c) => self.stored_closure(c),
                    _ => self.visit_expr(arg),
                }
            }
            return;
        }
        // A local closure or a parameter called by name, or a call resolved by path.
        let local = (segments.len() == 1)
            .then(|| {
                self.frames
                    .last()
                    .and_then(|f| f.locals.get(&written).cloned())
            })
            .flatten();
        let target = match local {
            Some(Local::Closure(id)) => CallTarget::Direct(id),
            Some(Local::Param(index)) => CallTarget::Param(index),
            _ => CallTarget::Named {
                path: self.absolute(&written).into(),
                receiver: Receiver::None,
            },
        };
        if segments.len() == 1 {
            self.guard_function_call(func.span(), &written);
        }
        self.push_call(func.span(), target, call.args.len() as u32, None);
        let library_runs = rust.running_calls.contains(&last);
        let index = self
            .last_call_index()
            .map(|i| (i, unconsumed(library_runs)));
        let regions = self.region_count();
        self.visit_arguments(call.args.iter(), index);
        self.hold_argument_temporaries(span_of(func.span()).start, regions, args_span.end);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let method = call.method.to_string();
        let rust = &self.k.rust;
        if rust.parallel_methods.contains(&method) && self.parallel_thread(0).is_none() {
            let at = span_of(call.method.span());
            let thread = self.qualified(&format!("{method}@{}", call.method.span().start().line));
            self.push_region(LockRegion {
                member: false,
                span: at,
                kind: LockKind::Thread,
                lock: thread.clone(),
                scope: at.start..at.start,
                waits: true,
            });
            if let Some(frame) = self.frames.last_mut() {
                frame.parallel = Some((frame.statement_end, thread));
            }
        }
        let consumed = match &*call.receiver {
            Expr::MethodCall(lock) if rust.guard_consuming_methods.contains(&method) => {
                Some((span_of(lock.method.span()).start, span_of(call.span()).end))
            }
            _ => None,
        };
        let saved = consumed.and_then(|consumed| {
            let frame = self.frames.last_mut()?;
            Some(frame.consumed_guard.replace(consumed))
        });
        let unpublished = matches!(&*call.receiver, Expr::Path(p)
            if self.frames.last().is_some_and(|f| f.unpublished.contains(&path_string(&p.path))));
        if !unpublished {
            self.visit_expr(&call.receiver);
        }
        if let (Some(saved), Some(frame)) = (saved, self.frames.last_mut()) {
            frame.consumed_guard = saved;
        }
        let args_span = span_of(call.paren_token.span.join());
        let shown = format!("`.{method}()`");
        if self.gil_closure_call(
            &method,
            call.method.span(),
            args_span,
            shown,
            call.args.iter(),
        ) {
            return;
        }
        // `joinset.spawn(worker.run())`, `builder.spawn(|| ..)`: a task or thread of a runtime.
        if rust.spawn_methods.contains(&method)
            && !matches!(&*call.receiver, Expr::Path(p) if p.path.is_ident("self"))
        {
            let thread = self.spawned_thread(&method, call.method.span());
            self.spawn_closures(&thread, call.args.iter());
            return;
        }
        if rust.future_wait_methods.contains(&method)
            && let Some(future) = single(&call.args)
        {
            self.future_wait(call.method.span(), future);
            return;
        }
        if rust.scoped_methods.contains(&method)
            && call.args.iter().any(|a| matches!(a, Expr::Closure(_)))
        {
            self.scoped_threads(call.method.span(), &method, call.args.iter());
            return;
        }
        if self.lock_method(call) {
            return;
        }
        // Taken by the next closure made, which must be this call's first argument.
        self.thread_local_closure = method.starts_with("with")
            && matches!(call.args.first(), Some(Expr::Closure(_)))
            && matches!(&*call.receiver, Expr::Path(p)
                if p.path.get_ident().is_some_and(|i| self.thread_locals.contains(&i.to_string())));
        // `PY_ARRAY_API.PyArray_Zeros(py, ..)`: a call of the C API through a table that its
        // first call fills by importing the module (the knowledge's `c_api_tables`).
        if let Expr::Path(p) = &*call.receiver
            && p.path
                .segments
                .last()
                .is_some_and(|s| rust.c_api_tables.contains(&s.ident.to_string()))
        {
            let table = path_string(&p.path);
            let what = format!("`{table}.{method}()` is called");
            self.push_use(call.method.span(), what, true, true);
            self.visit_arguments(call.args.iter(), None);
            return;
        }
        // Item access with a literal key (`dict.set_item("max_length", n)`) hashes a `str` or an
        // `int`: no Python code runs.
        let literal_key =
            method.ends_with("_item") && matches!(call.args.first(), Some(Expr::Lit(_)));
        // A Rust type's own method of that name is not Python.
        let rust_receiver = match self.type_of(&call.receiver) {
            Some(ty) => !self.is_python_type(&ty),
            None => !self.names_python,
        };
        if rust.methods_running_code.contains(&method) && !literal_key && !rust_receiver {
            self.push_use(
                call.method.span(),
                format!("`.{method}()` is called"),
                true,
                false,
            );
            self.visit_arguments(call.args.iter(), None);
            return;
        }
        let receiver = match &*call.receiver {
            Expr::Path(p) if p.path.is_ident("self") => Receiver::This,
            other => match self.type_of(other) {
                Some(ty) => Receiver::Typed(ty.into()),
                // The call graph follows no Rust method call on a receiver of unknown type (see
                // `callgraph`), so none is kept: a third of a Rust program's calls. Closures
                // passed to it run in place when the knowledge says the method runs them
                // (`.map(|x| ..)`), and are kept for later otherwise (`env.add_filter(n, |..| ..)`).
                None if rust.running_methods.contains(&method) => {
                    return self.visit_arguments(call.args.iter(), None);
                }
                None => return self.stored_arguments(call.args.iter()),
            },
        };
        if receiver == Receiver::This
            && let Some(ty) = self.self_type.clone()
        {
            self.guard_function_call(call.method.span(), &format!("{ty}::{method}"));
        }
        let library_runs = self.k.rust.running_methods.contains(&method);
        let target = CallTarget::Named {
            path: method.into(),
            receiver,
        };
        let note = unpublished.then_some(CallNote::Unpublished);
        self.push_noted_call(
            call.method.span(),
            target,
            call.args.len() as u32,
            None,
            note,
        );
        let index = self
            .last_call_index()
            .map(|i| (i, unconsumed(library_runs)));
        let regions = self.region_count();
        self.visit_arguments(call.args.iter(), index);
        self.hold_argument_temporaries(span_of(call.method.span()).start, regions, args_span.end);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.log_macro(mac);
        // Expression macros (`vec![..]`, `format!(..)`, `assert!(..)`) whose arguments parse as
        // expressions are walked, and so are those written as arms (`tokio::select!`), which
        // poll each future and run the chosen arm's handler in place; others are opaque.
        let args = mac
            .parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)
            .map(|args| args.into_iter().collect())
            .or_else(|_| mac.parse_body_with(parse_select_arms));
        for arg in args.iter().flatten() {
            self.visit_expr(arg);
        }
    }
}

impl Walker<'_> {
    /// A macro of the `log` facade (`log::warn!(..)`, or `warn!(..)` imported from it) when the
    /// analysed code installs a bridge to Python's `logging`: it takes the GIL. Only in a once
    /// cell's initialiser (`ROOTS.get_or_init(|| { warn!(..); .. })`) are the handlers counted
    /// as Python code, which may drop the GIL while the cell is held: elsewhere most log calls
    /// under a lock are in futures run elsewhere, which the front-end walks in place, while an
    /// initialiser runs where it is written.
    fn log_macro(&mut self, mac: &syn::Macro) {
        let rust = &self.k.rust;
        if !rust.python_logging {
            return;
        }
        let segments = segment_names(&mac.path);
        let is_log = match segments.as_slice() {
            [krate, name] => rust.log_crates.contains(krate) && rust.log_macros.contains(name),
            [name] => {
                (rust.log_macros.contains(name) && self.log_imports.contains("*"))
                    || self.log_imports.contains(name)
            }
            _ => false,
        };
        if !is_log {
            return;
        }
        let span = span_of(mac.path.span());
        let what = format!(
            "`{}!` (the `log` facade, forwarded to Python's `logging`)",
            segments.join("::")
        );
        self.push_switch(
            mac.path.span(),
            GilState::Held,
            span.start..span_of(mac.delimiter.span().join()).end,
            what.clone(),
        );
        if self.in_once_initialiser(span.start) {
            self.push_use(mac.path.span(), what, true, false);
        }
    }

    /// Whether `at` is inside the arguments of a once cell's initialising call
    /// (`get_or_init(..)`), in the function walked or one around it.
    fn in_once_initialiser(&self, at: u32) -> bool {
        self.frames.iter().any(|frame| {
            self.model.functions[frame.id]
                .lock_regions
                .iter()
                .any(|r| r.kind == LockKind::Once && r.scope.contains(&at))
        })
    }

    /// `py.detach(|| ...)`, `Python::attach(|py| ...)`: the arguments run in the switched state.
    /// Returns whether `name` was such a call.
    fn gil_closure_call<'e>(
        &mut self,
        name: &str,
        at: SynSpan,
        args_span: Span,
        shown: String,
        args: impl Iterator<Item = &'e Expr>,
    ) -> bool {
        let rust = &self.k.rust;
        let to = if rust.release_closures.contains(name) {
            GilState::Released
        } else if rust.acquire_closures.contains(name) {
            GilState::Held
        } else {
            return false;
        };
        self.push_switch(at, to, args_span.start..args_span.end, shown);
        self.gil_closure_arguments(args);
        true
    }

    /// The closure of `detach`/`attach` runs in place, in the switched state; a parameter
    /// passed there (`fn enter_native(&self, f: F) { self.py.detach(f) }`) is run there too.
    fn gil_closure_arguments<'e>(&mut self, args: impl Iterator<Item = &'e Expr>) {
        for arg in args {
            match arg {
                Expr::Path(p) if p.path.segments.len() == 1 => {
                    let name = path_string(&p.path);
                    match self
                        .frames
                        .last()
                        .and_then(|f| f.locals.get(&name).cloned())
                    {
                        Some(Local::Param(index)) => {
                            self.push_call(p.span(), CallTarget::Param(index), 0, None)
                        }
                        Some(Local::Closure(id)) => {
                            self.push_call(p.span(), CallTarget::Direct(id), 0, None)
                        }
                        _ => self.visit_expr(arg),
                    }
                }
                _ => self.visit_expr(arg),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spans are byte offsets whether the file is ASCII (read from lines and columns) or not
    /// (counted by proc_macro2), and a file's lines do not leak into the next one's.
    #[test]
    fn spans_are_byte_offsets() {
        let knowledge = Knowledge::builtin();
        let ascii = "// a\nfn first() {}\r\nfn second() { first(); }\n";
        let wide = "// é — ü\nfn first() {}\r\n/* ☃ */ fn second() { first(); }\n";
        for text in [ascii, wide, ascii] {
            let model = extract(Path::new("src/lib.rs"), text, &knowledge).unwrap();
            for (name, f) in ["first", "second"].iter().zip(&model.functions) {
                let at = text.find(&format!("fn {name}")).unwrap() + 3;
                assert_eq!(f.span.start as usize, at, "{name} in {text:?}");
                assert_eq!(f.span.end as usize, at + name.len(), "{name} in {text:?}");
            }
        }
    }
}

//! The language-neutral model every front-end fills: functions, their call sites, Python-API uses,
//! GIL switches and lock regions, and the bindings through which Python enters native code.
//!
//! Positions are byte offsets into the file's text. Everything a rule needs later is plain data, so
//! front-ends run in worker threads and keep no syntax tree.

use foldhash::HashMap;
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use thin_vec::ThinVec;

pub type FileId = u32;

/// Index of a function in the merged [`Program`]; inside a [`FileModel`] it is file-local.
pub type FnId = usize;

/// `a::B::f` split at its last `::` into `a::B` and `f`; none for a path without one. Written
/// with a one-byte search: the call graph and the pre-filter split hundreds of thousands of names.
pub fn split_path(path: &str) -> Option<(&str, &str)> {
    let mut end = path.len();
    while let Some(colon) = path[..end].rfind(':') {
        if colon > 0 && path.as_bytes()[colon - 1] == b':' {
            return Some((&path[..colon - 1], &path[colon + 1..]));
        }
        end = colon;
    }
    None
}

/// The last segment of a path: `f` for `a::B::f` and for `f`.
pub fn last_segment(path: &str) -> &str {
    split_path(path).map_or(path, |(_, last)| last)
}

/// The owner part of a qualified name: `a::B` for `a::B::f`, empty for `f`.
pub fn owner_of(qualname: &str) -> &str {
    split_path(qualname).map_or("", |(owner, _)| owner)
}

/// A list of names (enclosing scopes, `using`s) that many functions and bindings of a file have
/// in common: shared between them rather than copied into each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names(Arc<[String]>);

impl Deref for Names {
    type Target = [String];

    fn deref(&self) -> &[String] {
        &self.0
    }
}

/// Written as the list, and read back as a list of its own: [`FileModel::share_names`] shares
/// the lists of a model read back.
impl Serialize for Names {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<String>::deserialize(deserializer).map(|names| Names(names.into()))
    }
}

/// Hands out a list that changes while a file is walked as [`Names`]: the same allocation for as
/// long as the list stays the same.
#[derive(Default)]
pub struct SharedNames(Names);

impl SharedNames {
    pub fn get(&mut self, names: &[String]) -> Names {
        if *self.0 != *names {
            self.0 = Names(names.into());
        }
        self.0.clone()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn range(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GilState {
    Held,
    Released,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FunctionKind {
    Free,
    Method,
    /// A Rust trait's provided (default) method: a method of every type that implements the
    /// trait.
    ProvidedMethod,
    Lambda,
}

impl FunctionKind {
    pub fn is_method(self) -> bool {
        matches!(self, FunctionKind::Method | FunctionKind::ProvidedMethod)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Function {
    /// The name as declared: `f`, `Tensor::cast`; `{lambda}` for lambdas.
    pub name: String,
    /// Fully qualified: `ns::Class::f`, `ns::f::{lambda#1}`.
    pub qualname: String,
    /// Enclosing namespaces and classes, outermost first, used to resolve unqualified calls.
    pub scope: Names,
    /// Namespaces made visible by `using namespace` or named by `using` declarations.
    pub usings: Names,
    pub kind: FunctionKind,
    /// Declared with C linkage (`extern "C"`): the one kind of function that code in the other
    /// language calls by name.
    pub extern_c: bool,
    /// Defined in a Python framework's namespace (`pybind11::capsule::set_name`).
    pub framework: bool,
    /// A method defined in the body of a class that holds Python objects (a field of a framework
    /// object type): the binding layer's wrapper of a Python object (C++ only).
    pub wraps_python: bool,
    /// How many arguments a call may pass: `(required, maximum)`, no maximum when variadic.
    pub arity: (u32, Option<u32>),
    /// The declared type of each parameter, by position, as [`type_name`] writes it (`None`
    /// where not written plainly): chooses among overloads that take as many arguments.
    pub param_types: ThinVec<Option<Box<str>>>,
    /// The name (or, for a lambda, its introducer), for labels.
    pub span: Span,
    // Thin vectors (one pointer, length and capacity on the heap): most of a program's functions
    // have no events and many have no calls, and an empty one allocates nothing.
    pub calls: ThinVec<CallSite>,
    /// What a few of the calls carry besides their target, by call index, in call order.
    pub call_notes: ThinVec<(u32, CallNote)>,
    pub py_uses: ThinVec<PyUse>,
    pub gil_switches: ThinVec<GilSwitch>,
    pub lock_regions: ThinVec<LockRegion>,
    /// The parameters this function keeps for later instead of calling (C++): `(index, None)`
    /// for one stored in a container (`tasks.push(std::move(f))`, `handlers[id] = f`), directly,
    /// through a local made from it (`std::packaged_task<R()> task(std::move(f))`), or captured
    /// by a lambda so stored; `(index, Some((call, argument)))` for one handed on as that
    /// argument of that call (`impl->add(std::move(f))`), kept when every callee keeps it.
    pub kept_params: ThinVec<(u32, Option<(u32, u32)>)>,
    /// The lock guards a caller lends this function by reference (`std::unique_lock<std::mutex>
    /// &lock`) and that it unlocks (C++): `(parameter, range)` where the caller's lock is not
    /// held, from `lock.unlock()` to the next `lock.lock()` or the end of the body (see
    /// [`CallNote::LendsGuard`]).
    pub unlocked_params: ThinVec<(u32, Range<u32>)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CallSite {
    pub span: Span,
    pub target: CallTarget,
    /// The number of arguments written, to choose among overloads.
    pub args: u32,
}

/// What a call site may carry besides its target. Kept beside the calls rather than in them:
/// few calls have one, and a program has hundreds of thousands of calls.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum CallNote {
    /// For a lambda written as argument `.1` of call site `.0` of the same function: the lambda
    /// runs inside the callee when the callee calls that parameter (a wrapper such as
    /// `without_gil([&] { ... })`); `.2` says what happens to it otherwise.
    PassedTo(u32, u32, Unconsumed),
    /// The callee runs on a new thread (`std::thread t(f)`), without the GIL, "holding" the
    /// thread lock of this name until it ends.
    Spawns(Box<str>),
    /// The receiver is an object this function made (`new T(...)`, `std::make_unique<T>()`, a
    /// local `T x(...)`) and has given to no one before the call: no other thread can hold or
    /// wait for the locks that are its fields (see [`LockRegion::member`]) while the callee runs.
    Unpublished,
    /// The declared types of the arguments, by position, as [`type_name`] writes them (`None`
    /// for an argument whose type is not in sight); only on calls with some type known.
    ArgumentTypes(ThinVec<Option<Box<str>>>),
    /// The lambda (a `Direct` target) is not called here but kept in a container for later
    /// (`handlers[id] = [cb] { .. }`, `tasks.push_back([=] { .. })`).
    Kept,
    /// Argument `argument` is a local lock guard of this function holding the lock of its
    /// region number `region`: a callee that unlocks the guard (see
    /// [`Function::unlocked_params`]) does not hold that lock meanwhile.
    LendsGuard { argument: u32, region: u32 },
}

/// What becomes of a lambda passed to a call none of whose callees calls that parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unconsumed {
    /// It runs in place, at the call, unless every callee keeps that parameter (see
    /// [`Function::kept_params`]): C++, where a project function's calls of its callable
    /// parameters are not all seen (`std::forward<F>(f)()`), and `std::for_each` runs it.
    InPlace,
    /// A project callee keeps it for later (`self.callbacks.push(Box::new(f))`), so it does not
    /// run here; a callee outside the project runs it in place, as the knowledge says of it
    /// (`opt.map(|x| ..)`, `cell.get_or_init(|| ..)`).
    RunByLibrary,
    /// It is kept for later wherever the callee is: a project function that does not call it,
    /// or a library function the knowledge does not list as running it
    /// (`env.add_filter(name, |..| ..)`).
    Stored,
}

/// A declared type as overloads are told apart by it: its last path segment without template
/// arguments (`std::vector<std::pair<A, B>>` is `vector`, `ns::State` is `State`).
pub fn type_name(declared: &str) -> &str {
    let path = declared.split('<').next().unwrap_or(declared);
    path.rsplit("::").next().unwrap_or(path).trim()
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CallTarget {
    /// A call by name: `f()`, `ns::f()`, `x.f()`, `this->f()`; a C++ `::f()` keeps its leading
    /// `::` (the global `f` only). (Boxed strings: a program has hundreds of thousands of call
    /// sites.)
    Named { path: Box<str>, receiver: Receiver },
    /// A function defined at the call (a lambda run where it is written, or through a local
    /// variable), already resolved by the front-end.
    Direct(FnId),
    /// A call of the function's own parameter number `.0`: runs what the caller passed there.
    Param(u32),
}

impl CallTarget {
    /// Whether a method it lands on runs on the caller's own object: `this->f()`, or `f()`
    /// written in a method.
    pub fn on_own_object(&self) -> bool {
        matches!(
            self,
            CallTarget::Named {
                receiver: Receiver::This | Receiver::None,
                ..
            }
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Receiver {
    /// A free or qualified call.
    None,
    /// `this->f()`: a method of the caller's own class first.
    This,
    /// `x.f()` or `p->f()` with an unknown receiver type (C++ only: the Rust front-end does not
    /// record such calls, which the call graph would not follow).
    Object,
    /// The same in a file that never names a Python framework: the object is not one of the
    /// framework's (TransformerEngine's cuDNN graph `.set_name(...)` is not pybind11's
    /// `capsule::set_name`).
    Native,
    /// `x.f()` where `x` is declared with this type (smart pointers unwrapped, template arguments
    /// removed): `at::Tensor`, `Quantizer`.
    Typed(Box<str>),
    /// `f.m()`, `f->m()` or `this->f->m()` in a C++ function, where `f` is no parameter, local or
    /// global in sight: a field of the caller's class, whose declaration is often in another
    /// file (its header). Typed from that declaration, wherever it is; else an `Object` (or a
    /// `Native` one, when `native`).
    Field {
        name: Box<str>,
        arrow: bool,
        native: bool,
    },
}

/// The class whose method `x.f()` (or `x->f()`, when `arrow`) calls, for `x` declared with type
/// `declared`: through `->`, smart pointers and `std::optional` give their pointee; template
/// arguments are dropped.
pub fn receiver_class(declared: &str, arrow: bool) -> Option<&str> {
    let pointee = [
        "shared_ptr<",
        "unique_ptr<",
        "optional<",
        "reference_wrapper<",
    ]
    .iter()
    .find_map(|w| declared.split_once(w).map(|(_, inner)| inner));
    let class = match pointee {
        Some(inner) if arrow => inner,
        _ => declared,
    };
    let class = class
        .split(['<', '>', ',', '*', '&'])
        .next()
        .unwrap_or(class)
        .trim();
    Some(class.trim_start_matches("::")).filter(|c| !c.is_empty())
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PyUse {
    pub span: Span,
    /// What happens, for messages: "`py::module_::import` is called".
    pub what: String,
    /// Whether it can run arbitrary Python code, during which the interpreter may drop the GIL
    /// and must take it back.
    pub runs_code: bool,
    /// Whether `missing-gil` must check it. PyO3's methods on Python objects need a `Python<'py>`
    /// token or a `Bound<'py, T>`, so the compiler already proves them attached: only their
    /// lock-order effect (`runs_code`) is ours to check.
    pub needs_gil_check: bool,
    /// It happens when what owns it is destroyed (a lambda's by-copy captures, a class's
    /// fields), taken as right after the owner's body: not so for a lambda the project keeps in
    /// a container, which lives as long as the entry (see [`Function::kept_params`]).
    pub at_destruction: bool,
}

/// From `scope.start` to `scope.end` the GIL is in state `to`, unless a later switch inside that
/// range says otherwise (the innermost, latest switch wins).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GilSwitch {
    pub span: Span,
    pub to: GilState,
    pub scope: Range<u32>,
    pub what: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LockKind {
    /// `std::call_once(flag, ...)`.
    Once,
    /// The hidden guard of a function-local `static`'s initialisation.
    StaticInit,
    /// A mutex held through an RAII guard or `.lock()`, or a reader-writer lock held for
    /// writing.
    Mutex,
    /// A reader-writer lock held for reading (`rw.read()`, `std::shared_lock`): it excludes
    /// writers only.
    SharedRead,
    /// A thread the code waits for (`join`, a future's `get`): the thread "holds" it while it
    /// runs.
    Thread,
    /// A condition variable waited on: the notifying code "holds" it until it notifies.
    Condvar,
    /// An atomic spun on (`while (flag.load()) ...`): the code that stores to it "holds" it
    /// until it stores.
    Atomic,
    /// A barrier waited on (`barrier.wait()`): every party waits for the others to arrive, so
    /// each wait site is both a waiter and the arrival the other parties wait for.
    Barrier,
    /// A lazily initialised static (`Lazy`, `LazyLock`, `lazy_static!`): its first use runs the
    /// initialiser holding the static's lock, and other uses wait for it.
    Lazy,
    /// A rendezvous channel (`sync_channel(0)`): a send waits until the receiving thread reaches
    /// its receive, so the receiving code "holds" it until it receives.
    Channel,
    /// A pool of items whose acquire call waits until one is given back (tantivy's searcher
    /// pool), when the crate keeps items in its objects: Python objects that free them only
    /// with the GIL. Each acquire site both waits and leases an item to such an object.
    Pool,
}

impl LockKind {
    /// Whether waiting for a lock of kind `self` can be blocked by a holder of kind `held` (of
    /// the same lock): readers do not block readers.
    pub fn blocked_by(&self, held: &LockKind) -> bool {
        match (self, held) {
            (LockKind::SharedRead, LockKind::SharedRead) => false,
            (LockKind::Mutex | LockKind::SharedRead, LockKind::Mutex | LockKind::SharedRead) => {
                true
            }
            (wait, held) => wait == held,
        }
    }

    /// A once flag, lazy static or function-local static's guard: held only while its
    /// initialiser runs, once.
    pub fn is_initialisation(&self) -> bool {
        matches!(self, LockKind::Once | LockKind::Lazy | LockKind::StaticInit)
    }

    /// Waiting for it means waiting for another thread's work, not for a lock.
    pub fn is_work(&self) -> bool {
        matches!(
            self,
            LockKind::Thread
                | LockKind::Condvar
                | LockKind::Channel
                | LockKind::Atomic
                | LockKind::Barrier
                | LockKind::Pool
        )
    }
}

/// A region of a function's text during which a lock other than the GIL is held.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LockRegion {
    pub span: Span,
    pub kind: LockKind,
    /// Identifies the lock: the once flag's name, or the static's qualified name.
    pub lock: String,
    pub scope: Range<u32>,
    /// Whether `span` waits for the lock (false for `cv.notify_one()`, which only ends a hold).
    pub waits: bool,
    /// The lock is a field of the object the function runs on (`mutex_`, `this->m`,
    /// `impl_->m`), not a global or a static field: a lock of that one object, which no other
    /// thread can reach while the object is unpublished (see [`CallNote::Unpublished`]).
    pub member: bool,
}

/// A function exposed to Python.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Binding {
    /// The Python-visible name.
    pub name: String,
    /// The registration (`m.def(...)`).
    pub span: Span,
    /// Where it is registered: the target's name is resolved from these namespaces and `using`s.
    pub scope: Names,
    pub usings: Names,
    pub target: CallTarget,
    pub entry: GilState,
    /// What makes it an entry in its state (`py::call_guard<py::gil_scoped_release>()` entering
    /// released), and a sentence saying so.
    pub guard: Option<(Span, String)>,
    /// A test function (`#[test]`), entered on a thread of its own without the GIL. Running the
    /// test shows its misuse of Python and of the library's locks; only the deadlocks between
    /// the threads it starts need an unlucky interleaving, so only those are reported from it.
    #[serde(default)]
    pub test: bool,
    /// The module's initialiser (`#[pymodule]`): run once, at import, before any other binding
    /// of the module can be called.
    #[serde(default)]
    pub module_init: bool,
    /// An entry only when nothing in the program runs its target: a closure taking PyO3's
    /// `Python` token, which the call it is handed to may keep and run later on a thread that
    /// attaches, a library crate's public function taking the token, which its users call
    /// attached, or an async trait method that a library polls; one that runs where the program
    /// calls it is reached from there.
    #[serde(default)]
    pub unless_run: bool,
}

/// What one front-end extracted from one file.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FileModel {
    pub functions: Vec<Function>,
    pub bindings: Vec<Binding>,
    /// Classes and structs defined in the file, qualified, with the names of their bases as
    /// written.
    pub classes: Vec<(String, Vec<String>)>,
    /// The fields of those classes declared with a class type: (qualified class, field, type as
    /// written, whitespace removed, with a `*` after it for a raw pointer).
    pub fields: Vec<(String, String, String)>,
    /// The file names a Python framework's namespace (`py::`, `pybind11`, `nanobind`): only then
    /// may an object whose type is not known here be a framework object, or a bare name
    /// (`str(x)`) be the framework's, brought in by a `using` in an included header. Always set
    /// for Rust, whose bindings name PyO3 by construction.
    #[serde(default)]
    pub names_framework: bool,
}

impl AsRef<FileModel> for FileModel {
    fn as_ref(&self) -> &FileModel {
        self
    }
}

impl FileModel {
    /// The model copied into fresh allocations of exactly the size used, the original freed.
    /// A front-end allocates the model's parts in between its syntax tree's, so that once the
    /// tree is freed its memory stays pinned by them; made after the tree is freed, the copy is
    /// packed together instead. Every file's model is kept until all are done, so on a large
    /// project this is a good part of the peak memory (121 -> 108 MiB on the corpus of
    /// docs/performance.md, at no measurable cost).
    pub fn compacted(self) -> FileModel {
        self.clone()
    }

    /// Shares equal lists of names of neighbouring functions and bindings again, as the
    /// front-end does, in a model read back from the cache (each list is read on its own).
    pub fn share_names(&mut self) {
        let (mut scopes, mut usings) = (SharedNames::default(), SharedNames::default());
        for function in &mut self.functions {
            function.scope = scopes.get(&function.scope);
            function.usings = usings.get(&function.usings);
        }
        for binding in &mut self.bindings {
            binding.scope = scopes.get(&binding.scope);
            binding.usings = usings.get(&binding.usings);
        }
    }
}

/// The languages gil-lint reads, by file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Language {
    Cpp,
    Rust,
}

/// C, C++ and CUDA sources and headers.
const CPP_EXTENSIONS: &[&str] = &[
    "c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "h++", "cu", "cuh", "inl", "ipp",
];

/// Whether `path` is a C, C++ or CUDA file compiled on its own (not a header, which each
/// including file compiles as its own part).
pub fn is_translation_unit(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        matches!(
            e.to_ascii_lowercase().as_str(),
            "c" | "cc" | "cpp" | "cxx" | "c++" | "cu"
        )
    })
}

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

pub struct SourceFile {
    /// As shown to the user: relative to the current directory when possible.
    pub path: PathBuf,
    pub language: Language,
    /// Empty once dropped (see [`SourceFile::drop_text`]).
    pub text: String,
    /// Byte offset of each line start (offsets are 32-bit throughout the model).
    line_starts: Vec<u32>,
    /// The text starts with a UTF-8 byte order mark, which no editor counts as a column.
    bom: bool,
    /// The length and a hash of the text analysed, to know it again.
    len: usize,
    hash: u64,
    /// See [`FileModel::names_framework`].
    pub names_framework: bool,
}

fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = rustc_hash::FxHasher::default();
    text.hash(&mut hasher);
    hasher.finish()
}

impl SourceFile {
    pub fn new(path: PathBuf, language: Language, text: String) -> Self {
        let line_starts = line_starts(&text);
        SourceFile {
            path,
            language,
            bom: text.starts_with(BOM),
            len: text.len(),
            hash: text_hash(&text),
            text,
            line_starts,
            names_framework: true,
        }
    }

    /// Frees the text, keeping what locating an offset needs: most files are only needed again
    /// if a finding points into them (see [`SourceFile::restore_text`]).
    pub fn drop_text(&mut self) {
        self.text = String::new();
    }

    pub fn has_text(&self) -> bool {
        self.text.len() == self.len
    }

    /// Puts back the text read again after [`SourceFile::drop_text`]. If the file changed
    /// during the run, puts blank lines of the analysed lengths instead, so that every offset
    /// still points where it did, and returns false.
    pub fn restore_text(&mut self, text: String) -> bool {
        if text.len() == self.len && text_hash(&text) == self.hash {
            self.text = text;
            return true;
        }
        let mut blank = String::with_capacity(self.len);
        for line in 0..self.line_count() {
            let range = self.line_range(line).expect("the line exists");
            blank.extend(std::iter::repeat_n(' ', range.len()));
            if !range.is_empty() && line + 1 < self.line_count() {
                blank.pop();
                blank.push('\n');
            }
        }
        self.text = blank;
        false
    }

    /// 1-based line and 1-based column in characters (as editors and SARIF count).
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let offset = (offset as usize).min(self.len);
        let line = self.line_of(offset);
        (line + 1, self.column(line, offset) + 1)
    }

    /// The 0-based column in characters of byte `offset` on 0-based line `line`; a byte order
    /// mark does not count.
    pub fn column(&self, line: usize, offset: usize) -> usize {
        let mut start = self.line_start(line);
        if line == 0 && self.bom {
            start = BOM.len().min(offset);
        }
        self.text
            .get(start..offset)
            .map_or(offset.saturating_sub(start), |s| s.chars().count())
    }

    /// The byte range of 0-based line `line`, with its line break.
    pub fn line_range(&self, line: usize) -> Option<Range<usize>> {
        let start = *self.line_starts.get(line)? as usize;
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.len, |&end| end as usize);
        Some(start..end)
    }

    /// How many lines the text has (a last line without a line break counts).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The 0-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts
            .partition_point(|&start| start as usize <= offset)
            - 1
    }

    /// The byte offset where 0-based line `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts[line] as usize
    }
}

const BOM: &str = "\u{feff}";

/// The byte offset of each line's start. A line ends at `\n`, `\r\n` or a lone `\r` (old Mac
/// files), as editors count them; every renderer locates offsets through these.
pub fn line_starts(text: &str) -> Vec<u32> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    for at in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        if bytes[at] == b'\n' || bytes.get(at + 1) != Some(&b'\n') {
            starts.push((at + 1) as u32);
        }
    }
    starts
}

/// Every function of a program, by [`FnId`]. Each file's functions stay in the vector its
/// front-end made: merging them into one would copy them all, and hold both copies at once at
/// the peak of the run's memory.
#[derive(Default)]
pub struct Functions {
    by_file: Vec<Vec<Function>>,
    /// Each function's place: `(file's vector, index in it)`.
    places: Vec<(u32, u32)>,
}

impl Functions {
    pub fn len(&self) -> usize {
        self.places.len()
    }

    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// In id order.
    pub fn iter(&self) -> impl Iterator<Item = &Function> {
        self.by_file.iter().flatten()
    }

    /// With their ids, in id order (as `collect` keeps it).
    pub fn par_enumerate(&self) -> impl ParallelIterator<Item = (FnId, &Function)> {
        let firsts: Vec<FnId> = self
            .by_file
            .iter()
            .scan(0, |next, functions| {
                let first = *next;
                *next += functions.len();
                Some(first)
            })
            .collect();
        self.by_file
            .par_iter()
            .zip(firsts)
            .flat_map_iter(|(functions, first)| {
                functions
                    .iter()
                    .enumerate()
                    .map(move |(i, f)| (first + i, f))
            })
    }

    /// Each file's functions, in id order, a file a task (a file's work varies too much for
    /// rayon's runs of files cut up front to end together).
    pub fn par_by_file(&self) -> impl IndexedParallelIterator<Item = &Vec<Function>> {
        self.by_file.par_iter().with_max_len(1)
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut Function> {
        self.by_file.iter_mut().flatten()
    }

    fn push_file(&mut self, functions: Vec<Function>) {
        let file = self.by_file.len() as u32;
        self.places
            .extend((0..functions.len() as u32).map(|index| (file, index)));
        self.by_file.push(functions);
    }
}

impl std::ops::Index<FnId> for Functions {
    type Output = Function;

    fn index(&self, id: FnId) -> &Function {
        let (file, index) = self.places[id];
        &self.by_file[file as usize][index as usize]
    }
}

/// The whole program after merging every file's model.
#[derive(Default)]
pub struct Program {
    pub files: Vec<SourceFile>,
    pub functions: Functions,
    pub bindings: Vec<Binding>,
    /// Qualified class name -> the names of its bases as written.
    pub classes: HashMap<String, Vec<String>>,
    /// Class (last segment) -> field -> the types its definitions declare it with.
    pub fields: FieldTypes,
}

/// The class whose method `f.m()` (or `f->m()`, when `arrow`) calls, for a field `f` declared
/// with type `declared` (see [`FileModel::fields`]). Through `->`, a field that is no raw pointer
/// is a handle whose `operator->` gives its first template argument: a smart pointer of the
/// project or of another library (`Pimpl<Impl>`, `ComPtr<T>`), or an iterator.
pub fn field_class(declared: &str, arrow: bool) -> Option<&str> {
    if arrow
        && !declared.contains('*')
        && let Some((_, arguments)) = declared.split_once('<')
    {
        let mut depth = 0;
        let end = arguments.find(|c| {
            match c {
                '<' => depth += 1,
                '>' if depth > 0 => depth -= 1,
                ',' | '>' => return true,
                _ => {}
            }
            false
        })?;
        return receiver_class(&arguments[..end], false);
    }
    receiver_class(declared, arrow)
}

/// Class (last segment) -> field -> the types its definitions declare it with.
pub type FieldTypes = HashMap<String, HashMap<String, Vec<String>>>;

/// The types `fields` (see [`FieldTypes`]) has for `class`'s field `field`.
pub fn field_types_in(fields: &FieldTypes, class: &str, field: &str) -> Vec<String> {
    fields
        .get(class)
        .and_then(|of_class| of_class.get(field))
        .cloned()
        .unwrap_or_default()
}

/// Adds one file's class fields (see [`FileModel::fields`]) to `all`.
pub fn add_fields(all: &mut FieldTypes, fields: &[(String, String, String)]) {
    for (class, field, ty) in fields {
        let types = all
            .entry(last_segment(class).to_string())
            .or_default()
            .entry(field.clone())
            .or_default();
        if !types.contains(ty) {
            types.push(ty.clone());
        }
    }
}

impl Program {
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id as usize]
    }

    /// Names each C++ lock that is a field of the method's object (`mutex_`) after the class
    /// that declares the field, the method's class or a base of it (`Patch::mutex_`): two
    /// classes that both call their lock `mutex_` hold two different mutexes. A field declared
    /// in no class in sight keeps its bare name. Runs once every file is added.
    pub fn qualify_member_locks(&mut self) {
        let mut declaring: FxHashMap<(String, String), Option<String>> = FxHashMap::default();
        let (classes, fields) = (&self.classes, &self.fields);
        for function in self.functions.iter_mut() {
            if !function.lock_regions.iter().any(|r| r.member) {
                continue;
            }
            let Some(owner) = owner_class(&function.qualname) else {
                continue;
            };
            for region in function.lock_regions.iter_mut().filter(|r| r.member) {
                let field = region.lock.strip_prefix("this->").unwrap_or(&region.lock);
                if !field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    continue;
                }
                let key = (owner.to_string(), field.to_string());
                let class = declaring
                    .entry(key)
                    .or_insert_with(|| declaring_class(classes, fields, owner, field));
                if let Some(class) = class {
                    region.lock = format!("{class}::{field}");
                }
            }
        }
    }

    /// Appends one file's model, turning its file-local function ids into program ids.
    pub fn add_file(&mut self, mut source: SourceFile, model: FileModel) {
        source.names_framework = model.names_framework;
        let file = self.files.len() as FileId;
        let base = self.functions.len();
        let relocate = |target: &mut CallTarget| {
            if let CallTarget::Direct(id) = target {
                *id += base;
            }
        };
        let mut functions = model.functions;
        for function in &mut functions {
            for call in &mut function.calls {
                relocate(&mut call.target);
            }
            set_file(function, file);
        }
        self.functions.push_file(functions);
        for mut binding in model.bindings {
            relocate(&mut binding.target);
            binding.span.file = file;
            if let Some((span, _)) = &mut binding.guard {
                span.file = file;
            }
            self.bindings.push(binding);
        }
        add_fields(&mut self.fields, &model.fields);
        // A class written more than once (several Rust impls of one type, a C++ class in two
        // headers) has the bases of all of them.
        for (class, bases) in model.classes {
            let all = self.classes.entry(class).or_default();
            for base in bases {
                if !all.contains(&base) {
                    all.push(base);
                }
            }
        }
        self.files.push(source);
    }
}

/// The qualified class a method belongs to, or the method a lambda is written in:
/// `ns::Patch` for `ns::Patch::resize` and `ns::Patch::resize::{lambda#1}`.
fn owner_class(qualname: &str) -> Option<&str> {
    let mut function = qualname;
    while let Some((outer, last)) = split_path(function) {
        function = outer;
        if !last.starts_with('{') {
            return Some(function);
        }
    }
    None
}

/// The class, `class` or one of its bases (as far as they are in sight), that declares
/// `field`, by its last segment.
fn declaring_class(
    classes: &HashMap<String, Vec<String>>,
    fields: &FieldTypes,
    class: &str,
    field: &str,
) -> Option<String> {
    let mut pending = vec![class.to_string()];
    let mut seen = FxHashSet::default();
    while let Some(class) = pending.pop() {
        let name = last_segment(class.split('<').next().unwrap_or(&class)).trim();
        if !seen.insert(name.to_string()) || seen.len() > 64 {
            continue;
        }
        if fields.get(name).is_some_and(|f| f.contains_key(field)) {
            return Some(name.to_string());
        }
        // Bases are written as the derived class's file names them: matched by last segment.
        pending.extend(
            classes
                .iter()
                .filter(|(qualified, _)| last_segment(qualified) == name)
                .flat_map(|(_, bases)| bases.iter().cloned()),
        );
    }
    None
}

fn set_file(function: &mut Function, file: FileId) {
    function.span.file = file;
    function.calls.iter_mut().for_each(|c| c.span.file = file);
    function.py_uses.iter_mut().for_each(|u| u.span.file = file);
    function
        .gil_switches
        .iter_mut()
        .for_each(|g| g.span.file = file);
    function
        .lock_regions
        .iter_mut()
        .for_each(|l| l.span.file = file);
}

impl Function {
    /// A function as a front-end first declares it, before walking its body: no scope, no C
    /// linkage, no parameters, and no calls or events yet.
    pub fn new(name: String, qualname: String, kind: FunctionKind, span: Span) -> Self {
        Function {
            name,
            qualname,
            scope: Names::default(),
            usings: Names::default(),
            kind,
            extern_c: false,
            framework: false,
            wraps_python: false,
            arity: (0, Some(0)),
            param_types: ThinVec::new(),
            span,
            calls: ThinVec::new(),
            call_notes: ThinVec::new(),
            py_uses: ThinVec::new(),
            gil_switches: ThinVec::new(),
            lock_regions: ThinVec::new(),
            kept_params: ThinVec::new(),
            unlocked_params: ThinVec::new(),
        }
    }

    /// Whether the call graph takes this function for a method: declared in a class (or a Rust
    /// trait or impl), or defined out of line as `A::f` where `A` (qualified or by its last
    /// segment) is a class, as `is_class` says.
    pub fn is_method_where(&self, is_class: impl Fn(&str) -> bool) -> bool {
        self.kind.is_method()
            || split_path(&self.qualname)
                .is_some_and(|(owner, _)| is_class(owner) || is_class(last_segment(owner)))
    }

    /// Adds a call site with its notes.
    pub fn push_call(&mut self, site: CallSite, notes: impl IntoIterator<Item = CallNote>) {
        let call = self.calls.len() as u32;
        self.call_notes
            .extend(notes.into_iter().map(|note| (call, note)));
        self.calls.push(site);
    }

    fn notes(&self, call: usize) -> impl Iterator<Item = &CallNote> {
        let first = self
            .call_notes
            .partition_point(|(c, _)| (*c as usize) < call);
        self.call_notes[first..]
            .iter()
            .take_while(move |(c, _)| *c as usize == call)
            .map(|(_, note)| note)
    }

    /// See [`CallNote::ArgumentTypes`]: empty when no argument's type is known.
    pub fn argument_types(&self, call: usize) -> &[Option<Box<str>>] {
        self.notes(call)
            .find_map(|note| match note {
                CallNote::ArgumentTypes(types) => Some(types.as_slice()),
                CallNote::PassedTo(..)
                | CallNote::Spawns(_)
                | CallNote::Unpublished
                | CallNote::Kept
                | CallNote::LendsGuard { .. } => None,
            })
            .unwrap_or(&[])
    }

    /// Whether a parameter's declared type differs from the known type of the argument passed
    /// in its place.
    pub fn conflicts_with(&self, argument_types: &[Option<Box<str>>]) -> bool {
        argument_types
            .iter()
            .zip(&self.param_types)
            .any(|pair| matches!(pair, (Some(argument), Some(param)) if argument != param))
    }

    /// See [`CallNote::PassedTo`].
    pub fn passed_to(&self, call: usize) -> Option<(u32, u32, Unconsumed)> {
        self.notes(call).find_map(|note| match note {
            CallNote::PassedTo(outer, index, unconsumed) => Some((*outer, *index, *unconsumed)),
            CallNote::Spawns(_)
            | CallNote::Unpublished
            | CallNote::ArgumentTypes(_)
            | CallNote::Kept
            | CallNote::LendsGuard { .. } => None,
        })
    }

    /// See [`CallNote::Spawns`].
    pub fn spawns(&self, call: usize) -> Option<&str> {
        self.notes(call).find_map(|note| match note {
            CallNote::Spawns(thread) => Some(&**thread),
            CallNote::PassedTo(..)
            | CallNote::Unpublished
            | CallNote::ArgumentTypes(_)
            | CallNote::Kept
            | CallNote::LendsGuard { .. } => None,
        })
    }

    /// See [`CallNote::Unpublished`].
    pub fn unpublished_receiver(&self, call: usize) -> bool {
        self.notes(call)
            .any(|note| matches!(note, CallNote::Unpublished))
    }

    /// The regions of this function whose locks call `call` lends to its callee, by argument
    /// (see [`CallNote::LendsGuard`]).
    pub fn lent_guards(&self, call: usize) -> impl Iterator<Item = (u32, &LockRegion)> {
        self.notes(call).filter_map(|note| match note {
            CallNote::LendsGuard { argument, region } => {
                Some((*argument, self.lock_regions.get(*region as usize)?))
            }
            _ => None,
        })
    }

    /// See [`CallNote::Kept`].
    pub fn keeps(&self, call: usize) -> bool {
        self.notes(call).any(|note| matches!(note, CallNote::Kept))
    }

    pub fn accepts(&self, args: u32) -> bool {
        args >= self.arity.0 && self.arity.1.is_none_or(|max| args <= max)
    }

    /// The GIL state at `offset` in this function's text, given the state on entry.
    pub fn gil_state_at(&self, offset: u32, entry: GilState) -> GilState {
        self.gil_switches
            .iter()
            .filter(|s| s.scope.contains(&offset))
            .max_by_key(|s| s.scope.start)
            .map_or(entry, |s| s.to)
    }

    /// The lock regions enclosing `offset`, outermost first.
    pub fn locks_at(&self, offset: u32) -> impl Iterator<Item = &LockRegion> {
        self.lock_regions
            .iter()
            .filter(move |l| l.scope.contains(&offset))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_split_at_their_last_double_colon() {
        assert_eq!(super::split_path("a::B::f"), Some(("a::B", "f")));
        assert_eq!(super::split_path("f"), None);
        assert_eq!(super::split_path("a:b"), None);
        assert_eq!(super::split_path("a:::b"), Some(("a:", "b")));
        assert_eq!(super::last_segment("a::B::f"), "f");
        assert_eq!(super::last_segment("f"), "f");
        assert_eq!(super::owner_of("a::B::f"), "a::B");
        assert_eq!(super::owner_of("f"), "");
    }

    use super::*;

    #[test]
    fn a_dropped_text_comes_back_or_stays_locatable() {
        let text = "int a;\r\nvoid f() {}\n\nlast";
        let mut file = SourceFile::new("x.cpp".into(), Language::Cpp, text.to_string());
        let at = text.find('f').unwrap() as u32;
        let located = file.line_col(at);
        file.drop_text();
        assert!(!file.has_text());
        assert_eq!(file.line_col(at), located);
        assert!(file.restore_text(text.to_string()));
        assert_eq!(file.text, text);

        // Changed during the run: blank lines of the analysed lengths.
        file.drop_text();
        assert!(!file.restore_text("int b;\n".to_string()));
        assert_eq!(file.text, "       \n           \n\n    ");
        assert!(file.has_text());
        assert_eq!(file.line_col(at), located);
    }
}

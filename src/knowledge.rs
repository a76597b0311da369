//! Framework knowledge, read from the TOML files in `rules/`.
//!
//! The analysis never names a framework API itself: what releases or acquires the GIL, what needs
//! it and what is a once/lock primitive all come from these files, so a user can describe their own
//! wrappers without recompiling. (They are the frameworks' facts; the checks that read them, one
//! per rule id, are [`crate::lints`].)
//!
//! A knowledge file other than the built-in ones is read as [`crate::input`] reads every untrusted
//! file: a regular file of at most [`FILE_LIMIT`] bytes of UTF-8 text without NUL bytes. Its errors
//! are `file:line:col: message`, never its source line, and quoted strings in the message are
//! elided (where the file came from, [`crate::config`] decides).

mod rust;
pub use rust::CrateTypes;

use std::collections::BTreeMap;

use foldhash::{HashMap, HashMapExt, HashSet};
use std::path::Path;

use anyhow::Result;
use serde::Deserialize;

use crate::input::{self, shown};
use crate::model::GilState;

/// The most a knowledge file may hold, in bytes (the built-in ones are a few KiB each).
pub const FILE_LIMIT: u64 = 1 << 20;

/// The knowledge files compiled into the binary.
const BUILTIN: &[(&str, &str)] = &[
    ("rules/cpython.toml", include_str!("../rules/cpython.toml")),
    ("rules/cpp.toml", include_str!("../rules/cpp.toml")),
    (
        "rules/pybind11.toml",
        include_str!("../rules/pybind11.toml"),
    ),
    (
        "rules/nanobind.toml",
        include_str!("../rules/nanobind.toml"),
    ),
    ("rules/pyo3.toml", include_str!("../rules/pyo3.toml")),
    ("rules/numpy.toml", include_str!("../rules/numpy.toml")),
    (
        "rules/c_libraries.toml",
        include_str!("../rules/c_libraries.toml"),
    ),
];

/// Just enough of a file to know which schema the rest follows.
#[derive(Deserialize)]
struct FileHeader {
    framework: FrameworkSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct KnowledgeFile {
    framework: FrameworkSection,
    #[serde(default)]
    gil: GilSection,
    #[serde(default)]
    python_api: PythonApiSection,
    #[serde(default)]
    bindings: BindingsSection,
    #[serde(default)]
    locks: LocksSection,
    #[serde(default)]
    threads: ThreadsSection,
    #[serde(default)]
    prepass: PrepassSection,
    #[serde(default)]
    construction: ConstructionSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FrameworkSection {
    pub(crate) name: String,
    pub(crate) language: String,
    #[serde(default)]
    pub(crate) namespaces: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GilSection {
    #[serde(default)]
    release_guards: Vec<String>,
    #[serde(default)]
    acquire_guards: Vec<String>,
    /// Macros or functions whose arguments run with the GIL released (acquired): a project's
    /// `SCOPED_GIL_RELEASE(code)`. Macros defined in the analysed tree are found by themselves.
    #[serde(default)]
    release_wrappers: Vec<String>,
    #[serde(default)]
    acquire_wrappers: Vec<String>,
    #[serde(default)]
    release_calls: Vec<String>,
    #[serde(default)]
    acquire_calls: Vec<String>,
    #[serde(default)]
    release_state_calls: Vec<String>,
    /// Calls that tell whether this thread holds the GIL (`PyGILState_Check()`): the branch taken
    /// when one says no runs without it.
    #[serde(default)]
    held_checks: Vec<String>,
    /// Types of callables that take the GIL when called, since they may wrap a Python
    /// callable (`std::function`, through pybind11's `functional.h`).
    #[serde(default)]
    acquiring_callables: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PythonApiSection {
    #[serde(default)]
    calls: Vec<String>,
    #[serde(default)]
    calls_running_code: Vec<String>,
    #[serde(default)]
    ready_after_import: Vec<String>,
    #[serde(default)]
    types: Vec<String>,
    #[serde(default)]
    callable_types: Vec<String>,
    #[serde(default)]
    non_owning_types: Vec<String>,
    #[serde(default)]
    member_calls: Vec<String>,
    #[serde(default)]
    member_calls_running_code: Vec<String>,
    #[serde(default)]
    member_calls_common: Vec<String>,
    #[serde(default)]
    member_calls_emptying: Vec<String>,
    #[serde(default)]
    empty_when_default: Vec<String>,
    #[serde(default)]
    c_api_prefixes: Vec<String>,
    #[serde(default)]
    c_api_running_code: Vec<String>,
    #[serde(default)]
    c_api_gil_free: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BindingsSection {
    #[serde(default)]
    module_macros: Vec<String>,
    #[serde(default)]
    def_methods: Vec<String>,
    #[serde(default)]
    property_methods: Vec<String>,
    #[serde(default)]
    callable_wrappers: Vec<String>,
    #[serde(default)]
    method_tables: Vec<String>,
    /// `py::init<Args...>()`: with no argument, binds the bound class's constructor.
    #[serde(default)]
    constructor_wrappers: Vec<String>,
    /// `py::pickle(get, set)` as a `.def` argument: binds `__getstate__` and `__setstate__`.
    #[serde(default)]
    pickle_wrappers: Vec<String>,
    /// Project functions that bind their callable argument under their string argument, as
    /// `.def` does (`def_nogil(m, "name", f)`); in `def_functions_released`, with the GIL
    /// released on entry. Those defined in the file that calls them are found by themselves,
    /// and those that add a release call guard in any file (`ProjectMacro::DefHelper`).
    #[serde(default)]
    def_functions: Vec<String>,
    #[serde(default)]
    def_functions_released: Vec<String>,
    /// Macros whose first argument is a function bound under its own name, entered with the GIL
    /// held: `ADD(f)` written as a method-table entry `{#f, (PyCFunction)f, ...}`. Those defined
    /// in the analysed tree are found by themselves.
    #[serde(default)]
    entry_macros: Vec<String>,
    /// C library functions that store a function-pointer argument (name -> its index) and call
    /// it later from the library's own code, without the GIL: `PQsetNoticeProcessor(conn, cb,
    /// arg)`. The callback is an entry point entered with the GIL released.
    #[serde(default)]
    callback_registrations: BTreeMap<String, usize>,
    /// Function-pointer fields of C library structs, `Type::field`, that the library's consumer
    /// calls later on any thread, without the GIL: `managed->deleter = f` makes `f` such an
    /// entry point.
    #[serde(default)]
    callback_fields: Vec<String>,
    /// C++ library base classes whose objects the library owns and frees on whichever thread
    /// drops the last reference (`arrow::Buffer` in a `shared_ptr`), without the GIL: the
    /// destructor of a class deriving from one is an entry point entered with the GIL released.
    #[serde(default)]
    native_owned_bases: Vec<String>,
    /// C++ library base classes (-> method names) whose virtual methods the library or the C++
    /// runtime calls on any thread, in any GIL state (`std::streambuf::sync`, run by any
    /// `std::cout <<`): an override is an entry point entered with the GIL released.
    #[serde(default)]
    library_virtuals: BTreeMap<String, Vec<String>>,
    call_guard: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LocksSection {
    #[serde(default)]
    once_calls: Vec<String>,
    #[serde(default)]
    static_locals: bool,
    #[serde(default)]
    guard_types: Vec<String>,
    #[serde(default)]
    mutex_types: Vec<String>,
    #[serde(default)]
    lock_methods: Vec<String>,
    #[serde(default)]
    unlock_methods: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThreadsSection {
    #[serde(default)]
    spawn_types: Vec<String>,
    #[serde(default)]
    spawn_calls: Vec<String>,
    #[serde(default)]
    worker_calls: Vec<String>,
    #[serde(default)]
    join_methods: Vec<String>,
    #[serde(default)]
    condvar_types: Vec<String>,
    #[serde(default)]
    condvar_wait_methods: Vec<String>,
    #[serde(default)]
    condvar_notify_methods: Vec<String>,
    #[serde(default)]
    atomic_types: Vec<String>,
    #[serde(default)]
    atomic_load_methods: Vec<String>,
    #[serde(default)]
    atomic_store_methods: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConstructionSection {
    /// `std::make_shared<T>(args...)`: calls that construct their first template argument.
    #[serde(default)]
    calls: Vec<String>,
    /// `v.push_back(x)`: methods that add an element made from their arguments to a sequence.
    #[serde(default)]
    container_add_methods: Vec<String>,
    /// `py::reinterpret_borrow<py::function>(h)`: calls that return their first template
    /// argument, which types `auto f = ...`.
    #[serde(default)]
    typed_calls: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PrepassSection {
    #[serde(default)]
    blank: Vec<String>,
    #[serde(default)]
    rewrite: BTreeMap<String, String>,
}

/// A set of possibly qualified names (`module_::import`), each belonging to a framework whose
/// namespaces may prefix it (`py::module_::import`).
#[derive(Clone, Debug, Default)]
pub struct NameSet {
    names: HashSet<String>,
}

impl NameSet {
    /// A single name of a framework with namespaces (`cast`, `object`) is only known qualified
    /// (`py::cast`), or unqualified where the framework's namespace is open: a project's own
    /// `print()` or a `std::set` named after `using namespace std;` is not pybind11's.
    fn extend(&mut self, names: &[String], namespaces: &[String]) {
        for name in names {
            if namespaces.is_empty() || name.contains("::") {
                self.names.insert(name.clone());
            }
            for ns in namespaces {
                self.names.insert(format!("{ns}::{name}"));
            }
        }
    }

    /// Whether `path` (a `::`-joined name as written, template arguments removed) is in the set.
    pub fn contains(&self, path: &str) -> bool {
        self.names.contains(path.trim_start_matches("::"))
    }

    /// Every name of the set, qualified as stored.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}

/// What a function-like macro of the analysed code is, read from its `#define`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ProjectMacro {
    /// Its arguments run in this GIL state: `SCOPED_GIL_RELEASE(code)`.
    Wrapper(String, crate::model::GilState),
    /// It switches the GIL to this state for the rest of the block, after evaluating its
    /// arguments: `NPY_BEGIN_THREADS_THRESHOLDED(n)`, `BEGIN_THREADS()`.
    Switch(String, crate::model::GilState),
    /// Its argument number `.1` is a function bound under its own name: `ADD(f)` for
    /// `{#f, (PyCFunction)f, METH_VARARGS, nullptr}`.
    Entry(String, usize),
    /// A function or macro that the project defines under a name in the C API's style
    /// (`PyObject_FreePIDL`, `PyMem_RawNew`), with the C-API-style names that its body or
    /// expansion calls without holding a GIL it took itself.
    CApiStyle(String, Vec<String>),
    /// A project function that binds its callable argument with the GIL released, as `.def`
    /// with a release call guard does (see `def_functions_released`).
    DefHelper(String),
}

/// All loaded knowledge, merged over the files.
#[derive(Clone, Debug, Default)]
pub struct Knowledge {
    pub release_guards: NameSet,
    pub acquire_guards: NameSet,
    /// Member functions of the project's guards that release or take the GIL while a guard
    /// lives (`NativeLock::Release()` takes it back early), found with the guards (see
    /// `frontend::cpp::guards`).
    pub guard_methods_releasing: NameSet,
    pub guard_methods_acquiring: NameSet,
    pub release_wrappers: NameSet,
    pub acquire_wrappers: NameSet,
    pub release_calls: NameSet,
    pub acquire_calls: NameSet,
    /// Calls that give back what an acquire took (`PyGILState_Release`): no switch of their own
    /// (the GIL may have been held before), but a destructor starting with one ends what its
    /// constructor took (see `frontend::cpp::guards`).
    pub release_state_calls: NameSet,
    /// Calls that tell whether this thread holds the GIL: `if (!PyGILState_Check()) { ... }`
    /// runs its branch without it.
    pub held_checks: NameSet,
    pub python_calls: NameSet,
    pub calls_running_code: NameSet,
    pub ready_after_import: NameSet,
    pub python_types: NameSet,
    pub callable_types: NameSet,
    pub non_owning_types: NameSet,
    pub member_calls: HashSet<String>,
    pub member_calls_running_code: HashSet<String>,
    pub member_calls_common: HashSet<String>,
    /// Methods that leave a framework object holding nothing (`obj.release()`, nanobind's
    /// `obj.reset()`): a field emptied so is not released again by its destructor.
    pub member_calls_emptying: HashSet<String>,
    /// Types whose default-constructed value holds no reference (`py::object()`,
    /// `py::iterator()`): assigning one empties a field.
    pub empty_when_default: NameSet,
    pub c_api_running_code: Vec<String>,
    pub c_api_prefixes: Vec<String>,
    pub c_api_gil_free: HashSet<String>,
    pub module_macros: HashSet<String>,
    pub def_methods: HashSet<String>,
    pub property_methods: HashSet<String>,
    pub callable_wrappers: HashSet<String>,
    pub method_tables: HashSet<String>,
    pub constructor_wrappers: HashSet<String>,
    pub pickle_wrappers: HashSet<String>,
    /// Function name -> whether it binds with the GIL released.
    pub def_functions: HashMap<String, bool>,
    /// Macro name -> the index of its argument that is bound.
    pub entry_macros: HashMap<String, usize>,
    /// Registration function name -> the index of its callback argument (entered without the GIL).
    pub callback_registrations: HashMap<String, usize>,
    /// `Type::field` function-pointer fields whose value is entered without the GIL.
    pub callback_fields: HashSet<String>,
    /// Qualified library base classes whose derived objects are destroyed without the GIL.
    pub native_owned_bases: HashSet<String>,
    /// Qualified library base classes -> their methods called in any GIL state.
    pub library_virtuals: HashMap<String, Vec<String>>,
    pub constructing_calls: NameSet,
    /// Calls that return their first template argument (`reinterpret_borrow<T>`).
    pub typed_calls: NameSet,
    pub call_guards: NameSet,
    pub once_calls: NameSet,
    pub static_locals: bool,
    pub lock_guard_types: NameSet,
    /// Types whose `lock()` holds a lock (see `lock_methods`).
    pub mutex_types: NameSet,
    pub lock_methods: HashSet<String>,
    pub unlock_methods: HashSet<String>,
    pub spawn_types: NameSet,
    pub spawn_calls: NameSet,
    /// Calls (`tbb::parallel_for`, or `Class::method`) that run their lambda argument on other
    /// threads and wait for those threads.
    pub worker_calls: NameSet,
    pub join_methods: HashSet<String>,
    pub container_add_methods: HashSet<String>,
    pub condvar_types: NameSet,
    pub condvar_wait_methods: HashSet<String>,
    pub condvar_notify_methods: HashSet<String>,
    pub atomic_types: NameSet,
    pub atomic_load_methods: HashSet<String>,
    pub atomic_store_methods: HashSet<String>,
    pub acquiring_callables: NameSet,
    pub prepass_blank: HashSet<String>,
    pub prepass_rewrite: BTreeMap<String, String>,
    /// What the Rust front-end reads (`language = "rust"` files).
    pub rust: crate::knowledge::rust::RustKnowledge,
    /// Framework namespaces (`py`, `pybind11`), for messages and type matching.
    pub namespaces: Vec<String>,
    /// A hash of the names and texts of the files loaded, in order: what the cache of per-file
    /// facts keys them by (facts learnt from the analysed code are keyed separately).
    pub fingerprint: u64,
}

impl Knowledge {
    /// The built-in knowledge plus each extra file, in order.
    pub fn load(extra: &[&Path]) -> Result<Self> {
        let mut knowledge = Knowledge::default();
        for (name, text) in BUILTIN {
            knowledge.add_text(name, text)?;
        }
        for path in extra {
            let text = input::read_text(path, FILE_LIMIT).map_err(|e| {
                anyhow::anyhow!(
                    "{}: cannot read the knowledge file: {}",
                    shown(path),
                    e.detail()
                )
            })?;
            knowledge.add_text(&shown(path), &text)?;
        }
        Ok(knowledge)
    }

    pub fn builtin() -> Self {
        Self::load(&[]).expect("built-in knowledge files are valid (checked by tests)")
    }

    fn add_text(&mut self, name: &str, text: &str) -> Result<()> {
        let seed = xxhash_rust::xxh3::xxh3_64_with_seed(name.as_bytes(), self.fingerprint);
        self.fingerprint = xxhash_rust::xxh3::xxh3_64_with_seed(text.as_bytes(), seed);
        // `toml`'s `Display` quotes the offending source line: only the position and the message.
        let error = |e: toml::de::Error| {
            let message = elide_strings(&input::one_line(e.message()));
            anyhow::anyhow!(
                "{}",
                input::located(Path::new(name), text, e.span(), &message)
            )
        };
        let header: FileHeader = toml::from_str(text).map_err(error)?;
        match header.framework.language.as_str() {
            "cpp" => self.add_cpp(toml::from_str(text).map_err(error)?),
            "rust" => {
                self.rust.add(toml::from_str(text).map_err(error)?);
                Ok(())
            }
            other => anyhow::bail!(
                "{name}: framework `{}` has unknown language `{other}` (expected `cpp` or `rust`)",
                header.framework.name
            ),
        }
    }

    fn add_cpp(&mut self, file: KnowledgeFile) -> Result<()> {
        let ns = &file.framework.namespaces;
        let gil = &file.gil;
        self.release_guards.extend(&gil.release_guards, ns);
        self.acquire_guards.extend(&gil.acquire_guards, ns);
        self.release_wrappers.extend(&gil.release_wrappers, &[]);
        self.acquire_wrappers.extend(&gil.acquire_wrappers, &[]);
        self.release_calls.extend(&gil.release_calls, ns);
        self.acquire_calls.extend(&gil.acquire_calls, ns);
        self.release_state_calls
            .extend(&gil.release_state_calls, ns);
        self.held_checks.extend(&gil.held_checks, ns);
        let api = &file.python_api;
        self.python_calls.extend(&api.calls, ns);
        self.calls_running_code.extend(&api.calls_running_code, ns);
        self.ready_after_import.extend(&api.ready_after_import, ns);
        self.python_types.extend(&api.types, ns);
        self.callable_types.extend(&api.callable_types, ns);
        self.non_owning_types.extend(&api.non_owning_types, ns);
        self.member_calls.extend(api.member_calls.iter().cloned());
        self.member_calls_running_code
            .extend(api.member_calls_running_code.iter().cloned());
        self.member_calls_common
            .extend(api.member_calls_common.iter().cloned());
        self.member_calls_emptying
            .extend(api.member_calls_emptying.iter().cloned());
        self.empty_when_default.extend(&api.empty_when_default, ns);
        self.c_api_running_code
            .extend(api.c_api_running_code.iter().cloned());
        self.c_api_prefixes
            .extend(api.c_api_prefixes.iter().cloned());
        self.c_api_gil_free
            .extend(api.c_api_gil_free.iter().cloned());
        let b = &file.bindings;
        self.module_macros.extend(b.module_macros.iter().cloned());
        self.def_methods.extend(b.def_methods.iter().cloned());
        self.property_methods
            .extend(b.property_methods.iter().cloned());
        self.callable_wrappers
            .extend(b.callable_wrappers.iter().cloned());
        self.method_tables.extend(b.method_tables.iter().cloned());
        self.constructor_wrappers
            .extend(b.constructor_wrappers.iter().cloned());
        self.pickle_wrappers
            .extend(b.pickle_wrappers.iter().cloned());
        self.def_functions
            .extend(b.def_functions.iter().map(|f| (f.clone(), false)));
        self.def_functions
            .extend(b.def_functions_released.iter().map(|f| (f.clone(), true)));
        self.entry_macros
            .extend(b.entry_macros.iter().map(|m| (m.clone(), 0)));
        self.callback_registrations.extend(
            b.callback_registrations
                .iter()
                .map(|(f, &i)| (f.clone(), i)),
        );
        self.callback_fields
            .extend(b.callback_fields.iter().cloned());
        self.native_owned_bases
            .extend(b.native_owned_bases.iter().cloned());
        self.library_virtuals.extend(
            b.library_virtuals
                .iter()
                .map(|(base, methods)| (base.clone(), methods.clone())),
        );
        self.constructing_calls
            .extend(&file.construction.calls, &[]);
        self.container_add_methods
            .extend(file.construction.container_add_methods.iter().cloned());
        self.typed_calls.extend(&file.construction.typed_calls, ns);
        if let Some(guard) = &b.call_guard {
            self.call_guards.extend(std::slice::from_ref(guard), ns);
        }
        self.once_calls.extend(&file.locks.once_calls, &[]);
        self.static_locals |= file.locks.static_locals;
        self.lock_guard_types.extend(&file.locks.guard_types, &[]);
        self.mutex_types.extend(&file.locks.mutex_types, &[]);
        self.lock_methods
            .extend(file.locks.lock_methods.iter().cloned());
        self.unlock_methods
            .extend(file.locks.unlock_methods.iter().cloned());
        let threads = &file.threads;
        self.spawn_types.extend(&threads.spawn_types, &[]);
        self.spawn_calls.extend(&threads.spawn_calls, &[]);
        self.worker_calls.extend(&threads.worker_calls, &[]);
        self.join_methods
            .extend(threads.join_methods.iter().cloned());
        self.condvar_types.extend(&threads.condvar_types, &[]);
        self.condvar_wait_methods
            .extend(threads.condvar_wait_methods.iter().cloned());
        self.condvar_notify_methods
            .extend(threads.condvar_notify_methods.iter().cloned());
        self.atomic_types.extend(&threads.atomic_types, &[]);
        self.atomic_load_methods
            .extend(threads.atomic_load_methods.iter().cloned());
        self.atomic_store_methods
            .extend(threads.atomic_store_methods.iter().cloned());
        self.acquiring_callables
            .extend(&gil.acquiring_callables, &[]);
        self.prepass_blank
            .extend(file.prepass.blank.iter().cloned());
        self.prepass_rewrite.extend(file.prepass.rewrite.clone());
        self.namespaces.extend(ns.iter().cloned());
        Ok(())
    }

    /// Whether a called C identifier is a C-API function that needs the GIL.
    pub fn is_c_api_call(&self, name: &str) -> bool {
        self.c_api_prefixes.iter().any(|p| {
            name.strip_prefix(p.as_str())
                .and_then(|rest| rest.chars().next())
                .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        }) && !self.c_api_gil_free.contains(name)
    }

    /// Adds the types declared by each file of a Rust crate (see [`CrateTypes`]).
    pub fn add_crate_types(&mut self, files: impl IntoIterator<Item = (String, CrateTypes)>) {
        for (krate, types) in files {
            let all = self.rust.crates.entry(krate).or_default();
            all.fields.extend(types.fields);
            all.statics.extend(types.statics);
            all.lazy_statics.extend(types.lazy_statics);
            all.contents.extend(types.contents);
            all.releasing.extend(types.releasing);
            all.binds |= types.binds;
            for (method, ty) in types.returns {
                let known = self
                    .rust
                    .method_returns
                    .entry(method)
                    .or_insert(Some(ty.clone()));
                if known.as_ref() != Some(&ty) {
                    *known = None;
                }
            }
        }
    }

    /// Adds what the analysed code's own macros were found to be.
    pub fn add_macros(&mut self, macros: impl IntoIterator<Item = ProjectMacro>) {
        let mut wrappers = Vec::new();
        let mut switches = Vec::new();
        let mut c_api_style: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for found in macros {
            match found {
                ProjectMacro::Wrapper(name, state) => wrappers.push((name, state)),
                ProjectMacro::Switch(name, state) => switches.push((name, state)),
                ProjectMacro::Entry(name, argument) => {
                    self.entry_macros.insert(name, argument);
                }
                ProjectMacro::CApiStyle(name, calls) => {
                    c_api_style.entry(name).or_default().extend(calls)
                }
                ProjectMacro::DefHelper(name) => {
                    self.def_functions.insert(name, true);
                }
            }
        }
        self.add_gil_free_project_names(c_api_style);
        // `(name, state its arguments run in)`.
        add_by_state(
            &mut self.release_wrappers,
            &mut self.acquire_wrappers,
            wrappers,
        );
        add_by_state(&mut self.release_calls, &mut self.acquire_calls, switches);
    }

    /// The project's own C-API-style names (name -> what their definitions call) that need no
    /// GIL join `c_api_gil_free`: a call of one then goes to the project's definition, whose body
    /// is analysed. One that calls an API needing the GIL, directly or through another such name,
    /// before taking the GIL itself or after giving it back, is the API it looks like: its callers
    /// must hold the GIL (`PyWinObject_FreeWCHAR` is `PyMem_Free`), and the finding is theirs.
    fn add_gil_free_project_names(&mut self, defined: BTreeMap<String, Vec<String>>) {
        // Callers of each name, so that needing the GIL spreads from callee to caller once per
        // name (a long chain of wrappers costs its length, not its square).
        let mut callers: HashMap<&str, Vec<&str>> = HashMap::new();
        for (name, calls) in &defined {
            for call in calls {
                callers
                    .entry(call.as_str())
                    .or_default()
                    .push(name.as_str());
            }
        }
        let mut pending: Vec<&str> = defined
            .iter()
            .filter(|(_, calls)| {
                calls
                    .iter()
                    .any(|c| !defined.contains_key(c) && self.is_c_api_call(c))
            })
            .map(|(name, _)| name.as_str())
            .collect();
        let mut needs: HashSet<&str> = pending.iter().copied().collect();
        while let Some(name) = pending.pop() {
            for &caller in callers.get(name).into_iter().flatten() {
                if needs.insert(caller) {
                    pending.push(caller);
                }
            }
        }
        let free: Vec<String> = defined
            .keys()
            .filter(|name| !needs.contains(name.as_str()))
            .cloned()
            .collect();
        self.c_api_gil_free.extend(free);
    }

    /// Adds guard types found in the analysed code, `(name, state while one lives)`, and the
    /// member functions that switch the GIL while one lives, `(Guard::method, state it leaves)`.
    pub fn add_guards(
        &mut self,
        guards: impl IntoIterator<Item = (String, GilState)>,
        switching_methods: Vec<(String, GilState)>,
    ) {
        add_by_state(&mut self.release_guards, &mut self.acquire_guards, guards);
        add_by_state(
            &mut self.guard_methods_releasing,
            &mut self.guard_methods_acquiring,
            switching_methods,
        );
    }

    /// Whether a C-API call can run arbitrary Python code.
    pub fn c_api_runs_code(&self, name: &str) -> bool {
        self.c_api_running_code
            .iter()
            .any(|p| name.starts_with(p.as_str()))
    }

    /// Every spelling of a framework type: `object` -> `py::object`, `pybind11::object`, ...
    pub fn python_types_spelled(&self, name: &str) -> Vec<String> {
        self.namespaces
            .iter()
            .map(|ns| format!("{ns}::{name}"))
            .filter(|spelled| self.python_types.contains(spelled))
            .collect()
    }

    /// Whether the bare `name` is in `set` under one of the frameworks' namespaces
    /// (`gil_scoped_acquire` as `pybind11::gil_scoped_acquire`).
    pub fn in_framework_namespace(&self, set: &NameSet, name: &str) -> bool {
        self.namespaces
            .iter()
            .any(|ns| set.contains(&format!("{ns}::{name}")))
    }

    /// Whether `name` is a framework namespace such as `py`.
    pub fn is_framework_namespace(&self, name: &str) -> bool {
        self.namespaces.iter().any(|n| n == name)
    }
}

/// Names found in the analysed code, each into the set of the state it stands for.
fn add_by_state(
    release: &mut NameSet,
    acquire: &mut NameSet,
    found: impl IntoIterator<Item = (String, GilState)>,
) {
    for (name, state) in found {
        let set = match state {
            GilState::Released => &mut *release,
            GilState::Held => &mut *acquire,
        };
        set.extend(&[name], &[]);
    }
}

/// `message` with each double-quoted string (serde's `invalid type: string "..."`) replaced by
/// `"…"`: a message names what was wrong, not the value.
fn elide_strings(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '"' {
            continue;
        }
        // Skip to the closing quote (a backslash escapes the next character).
        let mut closed = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    closed = true;
                    break;
                }
                _ => {}
            }
        }
        out.push('…');
        if closed {
            out.push('"');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_knowledge_loads_and_matches_qualified_names() {
        let k = Knowledge::builtin();
        assert!(k.python_calls.contains("py::module_::import"));
        assert!(k.python_calls.contains("pybind11::module_::import"));
        assert!(k.python_calls.contains("module_::import"));
        assert!(!k.python_calls.contains("import"));
        // Single framework names are only known qualified (or where the namespace is open).
        assert!(!k.python_calls.contains("print"));
        assert!(!k.python_types.contains("set"));
        assert!(k.release_guards.contains("py::gil_scoped_release"));
        assert!(k.once_calls.contains("std::call_once"));
        assert!(k.is_c_api_call("PyObject_GetAttrString"));
        assert!(k.is_c_api_call("Py_INCREF"));
        assert!(!k.is_c_api_call("PyGILState_Check"));
        assert!(!k.is_c_api_call("Pythagoras"));
    }

    #[test]
    fn every_file_in_rules_is_built_in() {
        let mut on_disk: Vec<String> =
            std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/rules"))
                .unwrap()
                .map(|e| format!("rules/{}", e.unwrap().file_name().to_string_lossy()))
                .collect();
        on_disk.sort();
        let mut built_in: Vec<String> = BUILTIN.iter().map(|(name, _)| name.to_string()).collect();
        built_in.sort();
        assert_eq!(on_disk, built_in);
    }

    #[test]
    fn unknown_keys_are_errors_naming_the_file() {
        let mut k = Knowledge::default();
        let err = k
            .add_text(
                "x.toml",
                "[framework]\nname='x'\nlanguage='cpp'\n[gil]\nrelease_gaurds=[]\n",
            )
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("x.toml:5:1: unknown field `release_gaurds`"),
            "{err}"
        );
        assert!(!err.to_string().contains('\n'), "{err}");
    }

    #[test]
    fn parse_errors_show_the_position_not_the_source() {
        let mut k = Knowledge::default();
        let err = k
            .add_text("x.toml", "[framework]\nname='x'\nSECRET=hunter2\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.toml:3:8: "), "{err}");
        assert!(!err.contains("hunter2") && !err.contains('\n'), "{err}");
        let err = k
            .add_text("x.toml", "framework = \"hunter2\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.toml:1:13: "), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn quoted_strings_are_elided() {
        assert_eq!(
            elide_strings(r#"invalid type: string "a\"b", expected a sequence"#),
            r#"invalid type: string "…", expected a sequence"#
        );
        assert_eq!(elide_strings(r#"unterminated "abc"#), r#"unterminated "…"#);
        assert_eq!(elide_strings("unknown field `x`"), "unknown field `x`");
    }

    #[cfg(unix)]
    #[test]
    fn extra_files_must_be_regular_and_small() {
        let err = Knowledge::load(&[Path::new("/dev/zero")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "/dev/zero: cannot read the knowledge file: not a regular file (a character device)"
        );
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; FILE_LIMIT as usize + 1]).unwrap();
        let err = Knowledge::load(&[&big]).unwrap_err().to_string();
        assert!(err.ends_with("larger than 1 MiB"), "{err}");
        let environ = dir.path().join("environ");
        std::fs::write(&environ, b"GIL_LINT_SECRET=s3cr3t\0PATH=/bin\0").unwrap();
        let err = Knowledge::load(&[&environ]).unwrap_err().to_string();
        assert!(err.ends_with("binary file (NUL byte 22)"), "{err}");
        assert!(!err.contains("s3cr3t"), "{err}");
    }
}

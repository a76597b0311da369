//! Knowledge for the Rust front-end (`language = "rust"` files such as `rules/pyo3.toml`).

use foldhash::{HashMap, HashSet};

use serde::Deserialize;

use super::FrameworkSection;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RustFile {
    #[allow(
        dead_code,
        reason = "read by the header pass; kept so the section is allowed"
    )]
    framework: FrameworkSection,
    #[serde(default)]
    gil: Gil,
    #[serde(default)]
    python_api: PythonApi,
    #[serde(default)]
    bindings: Bindings,
    #[serde(default)]
    locks: Locks,
    #[serde(default)]
    threads: Threads,
    #[serde(default)]
    callables: Callables,
    #[serde(default)]
    pooled_items: PooledItems,
}

/// Pools whose acquire call waits for a free item (see [`crate::model::LockKind::Pool`]).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PooledItems {
    #[serde(default)]
    pool_types: Vec<String>,
    #[serde(default)]
    acquire_methods: Vec<String>,
    #[serde(default)]
    item_types: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Callables {
    #[serde(default)]
    running_methods: Vec<String>,
    #[serde(default)]
    running_calls: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Gil {
    #[serde(default)]
    release_closures: Vec<String>,
    #[serde(default)]
    acquire_closures: Vec<String>,
    #[serde(default)]
    acquire_calls: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PythonApi {
    #[serde(default)]
    ffi_modules: Vec<String>,
    #[serde(default)]
    c_api_tables: Vec<String>,
    #[serde(default)]
    python_types: Vec<String>,
    #[serde(default)]
    class_access_methods: Vec<String>,
    #[serde(default)]
    methods_running_code: Vec<String>,
    #[serde(default)]
    logging_bridges: Vec<String>,
    #[serde(default)]
    log_crates: Vec<String>,
    #[serde(default)]
    log_macros: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Bindings {
    #[serde(default)]
    function_attributes: Vec<String>,
    #[serde(default)]
    impl_attributes: Vec<String>,
    #[serde(default)]
    class_attributes: Vec<String>,
    #[serde(default)]
    exclusive_borrow_types: Vec<String>,
    #[serde(default)]
    test_attributes: Vec<String>,
    #[serde(default)]
    module_init_attributes: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Locks {
    #[serde(default)]
    once_methods: Vec<String>,
    #[serde(default)]
    detached_once_methods: Vec<String>,
    #[serde(default)]
    gil_cells: Vec<String>,
    #[serde(default)]
    lazy_types: Vec<String>,
    #[serde(default)]
    lazy_macros: Vec<String>,
    #[serde(default)]
    mutex_methods: Vec<String>,
    #[serde(default)]
    mutex_types: Vec<String>,
    #[serde(default)]
    guard_types: Vec<String>,
    #[serde(default)]
    guard_consuming_methods: Vec<String>,
    #[serde(default)]
    detached_mutex_methods: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Threads {
    #[serde(default)]
    spawn_calls: Vec<String>,
    #[serde(default)]
    join_methods: Vec<String>,
    #[serde(default)]
    handle_types: Vec<String>,
    #[serde(default)]
    awaited_spawn_calls: Vec<String>,
    #[serde(default)]
    scoped_calls: Vec<String>,
    #[serde(default)]
    scoped_methods: Vec<String>,
    #[serde(default)]
    future_wait_methods: Vec<String>,
    #[serde(default)]
    future_wait_calls: Vec<String>,
    #[serde(default)]
    python_future_calls: Vec<String>,
    #[serde(default)]
    spawn_methods: Vec<String>,
    #[serde(default)]
    parallel_methods: Vec<String>,
    #[serde(default)]
    condvar_types: Vec<String>,
    #[serde(default)]
    condvar_wait_methods: Vec<String>,
    #[serde(default)]
    condvar_notify_methods: Vec<String>,
    #[serde(default)]
    rendezvous_channel_calls: Vec<String>,
    #[serde(default)]
    channel_sender_types: Vec<String>,
    #[serde(default)]
    channel_send_methods: Vec<String>,
    #[serde(default)]
    channel_receive_methods: Vec<String>,
    #[serde(default)]
    barrier_types: Vec<String>,
    #[serde(default)]
    barrier_wait_methods: Vec<String>,
}

/// Names are simple identifiers (`detach`) or paths as written (`thread::spawn`).
#[derive(Clone, Debug, Default)]
pub struct RustKnowledge {
    pub release_closures: HashSet<String>,
    pub acquire_closures: HashSet<String>,
    pub acquire_calls: HashSet<String>,
    pub ffi_modules: HashSet<String>,
    /// Statics through which a library calls an extension module's C API, a table of function
    /// pointers that the first call fills by importing the module (rust-numpy's
    /// `PY_ARRAY_API.PyArray_Zeros(py, ..)`): every call through one needs the GIL and may run
    /// Python code.
    pub c_api_tables: HashSet<String>,
    pub python_types: HashSet<String>,
    /// Methods of a Python object of a project class that give the Rust value it holds
    /// (`pyself.get()`, `obj.borrow(py)`).
    pub class_access_methods: HashSet<String>,
    pub methods_running_code: HashSet<String>,
    /// Crates that, once named by the analysed code (`pyo3_log::init()`), forward the `log`
    /// facade to Python's `logging` for the whole process.
    pub logging_bridges: HashSet<String>,
    /// The facade's crates and macros: `log::warn!(..)`, or `warn!(..)` imported from one.
    pub log_crates: HashSet<String>,
    pub log_macros: HashSet<String>,
    /// Whether the analysed code names a logging bridge: then every log macro attaches and runs
    /// Python handlers (learnt from all files before any is modelled).
    pub python_logging: bool,
    pub function_attributes: HashSet<String>,
    pub impl_attributes: HashSet<String>,
    pub class_attributes: HashSet<String>,
    pub exclusive_borrow_types: HashSet<String>,
    /// Test functions (`#[test]`, `#[tokio::test]`): entry points entered without the GIL, as the
    /// test harness runs each on a thread of its own.
    pub test_attributes: HashSet<String>,
    /// A module's initialiser (`#[pymodule]`, `#[pymodule_init]`): a binding run once, when the
    /// module is imported, before any other binding of the module can be called.
    pub module_init_attributes: HashSet<String>,
    pub once_methods: HashSet<String>,
    pub detached_once_methods: HashSet<String>,
    pub gil_cells: HashSet<String>,
    pub lazy_types: HashSet<String>,
    /// Library methods and functions that call the closures passed to them before they return
    /// (`opt.map(|x| ..)`, `catch_unwind(|| ..)`); other libraries' keep them for later.
    pub running_methods: HashSet<String>,
    pub running_calls: HashSet<String>,
    pub lazy_macros: HashSet<String>,
    pub mutex_methods: HashSet<String>,
    pub mutex_types: HashSet<String>,
    pub guard_types: HashSet<String>,
    pub guard_consuming_methods: HashSet<String>,
    pub detached_mutex_methods: HashSet<String>,
    pub spawn_calls: HashSet<String>,
    pub join_methods: HashSet<String>,
    /// Types of a thread's handle (`JoinHandle`): one kept in a field is joined elsewhere.
    pub handle_types: HashSet<String>,
    /// Calls that run a closure on another thread and whose `.await` waits for it
    /// (`spawn_blocking`).
    pub awaited_spawn_calls: HashSet<String>,
    pub scoped_calls: HashSet<String>,
    pub scoped_methods: HashSet<String>,
    /// Methods that wait for the future they are given, whose work runs on a runtime's threads
    /// (`runtime.block_on(fut)`).
    pub future_wait_methods: HashSet<String>,
    /// Functions that do so (`futures::executor::block_on(fut)`), by their path as written.
    pub future_wait_calls: HashSet<String>,
    /// Calls that hand a Python coroutine to the event loop and return a future that waits for
    /// it (`pyo3_async_runtimes::tokio::into_future`), by their path's last two segments.
    pub python_future_calls: HashSet<String>,
    /// Methods that run their callable or future argument on a runtime's thread
    /// (`joinset.spawn(fut)`).
    pub spawn_methods: HashSet<String>,
    pub parallel_methods: HashSet<String>,
    pub condvar_types: HashSet<String>,
    pub condvar_wait_methods: HashSet<String>,
    pub condvar_notify_methods: HashSet<String>,
    /// `let (tx, rx) = sync_channel(0)`: a rendezvous channel, whose `tx.send(x)` waits until
    /// the receiving thread reaches `rx.recv()`. A sender is also known from a function returning
    /// one of `channel_sender_types`, whose element type names the channel.
    pub rendezvous_channel_calls: HashSet<String>,
    pub channel_sender_types: HashSet<String>,
    pub channel_send_methods: HashSet<String>,
    pub channel_receive_methods: HashSet<String>,
    pub barrier_types: HashSet<String>,
    pub barrier_wait_methods: HashSet<String>,
    /// A call of one of `pool_acquire_methods` on a `pool_types` value waits for a free item,
    /// which is given back when the value of `pool_item_types` holding it is dropped.
    pub pool_types: HashSet<String>,
    pub pool_acquire_methods: HashSet<String>,
    pub pool_item_types: HashSet<String>,
    /// The types each crate declares, by crate name (see [`CrateTypes`]).
    pub crates: HashMap<String, CrateTypes>,
    /// What the methods of every crate's impls and its free functions return (see
    /// [`CrateTypes::returns`]), by `Type::method` or `function` (a tuple's elements by
    /// `function.0`, ..): one binding crate calls the library crate it wraps, and one file the
    /// functions of another. `None` for a name declared with different types (one name in two
    /// modules or crates).
    pub method_returns: HashMap<String, Option<String>>,
}

impl RustKnowledge {
    /// Whether `krate` is a library over PyO3 (see [`CrateTypes::binds`]).
    pub fn is_library(&self, krate: &str) -> bool {
        !self.crates.get(krate).is_some_and(|types| types.binds)
    }

    pub(super) fn add(&mut self, file: RustFile) {
        let pairs: [(&mut HashSet<String>, Vec<String>); 52] = [
            (&mut self.release_closures, file.gil.release_closures),
            (&mut self.acquire_closures, file.gil.acquire_closures),
            (&mut self.acquire_calls, file.gil.acquire_calls),
            (&mut self.ffi_modules, file.python_api.ffi_modules),
            (&mut self.c_api_tables, file.python_api.c_api_tables),
            (&mut self.python_types, file.python_api.python_types),
            (
                &mut self.class_access_methods,
                file.python_api.class_access_methods,
            ),
            (
                &mut self.methods_running_code,
                file.python_api.methods_running_code,
            ),
            (&mut self.logging_bridges, file.python_api.logging_bridges),
            (&mut self.log_crates, file.python_api.log_crates),
            (&mut self.log_macros, file.python_api.log_macros),
            (
                &mut self.function_attributes,
                file.bindings.function_attributes,
            ),
            (&mut self.impl_attributes, file.bindings.impl_attributes),
            (&mut self.class_attributes, file.bindings.class_attributes),
            (
                &mut self.exclusive_borrow_types,
                file.bindings.exclusive_borrow_types,
            ),
            (&mut self.once_methods, file.locks.once_methods),
            (
                &mut self.detached_once_methods,
                file.locks.detached_once_methods,
            ),
            (&mut self.gil_cells, file.locks.gil_cells),
            (&mut self.lazy_types, file.locks.lazy_types),
            (&mut self.running_methods, file.callables.running_methods),
            (&mut self.running_calls, file.callables.running_calls),
            (&mut self.lazy_macros, file.locks.lazy_macros),
            (&mut self.mutex_methods, file.locks.mutex_methods),
            (&mut self.mutex_types, file.locks.mutex_types),
            (&mut self.guard_types, file.locks.guard_types),
            (
                &mut self.guard_consuming_methods,
                file.locks.guard_consuming_methods,
            ),
            (
                &mut self.detached_mutex_methods,
                file.locks.detached_mutex_methods,
            ),
            (&mut self.spawn_calls, file.threads.spawn_calls),
            (&mut self.join_methods, file.threads.join_methods),
            (&mut self.handle_types, file.threads.handle_types),
            (
                &mut self.awaited_spawn_calls,
                file.threads.awaited_spawn_calls,
            ),
            (&mut self.scoped_calls, file.threads.scoped_calls),
            (&mut self.scoped_methods, file.threads.scoped_methods),
            (
                &mut self.future_wait_methods,
                file.threads.future_wait_methods,
            ),
            (&mut self.future_wait_calls, file.threads.future_wait_calls),
            (
                &mut self.python_future_calls,
                file.threads.python_future_calls,
            ),
            (&mut self.spawn_methods, file.threads.spawn_methods),
            (&mut self.parallel_methods, file.threads.parallel_methods),
            (&mut self.condvar_types, file.threads.condvar_types),
            (
                &mut self.rendezvous_channel_calls,
                file.threads.rendezvous_channel_calls,
            ),
            (
                &mut self.channel_sender_types,
                file.threads.channel_sender_types,
            ),
            (
                &mut self.channel_send_methods,
                file.threads.channel_send_methods,
            ),
            (
                &mut self.channel_receive_methods,
                file.threads.channel_receive_methods,
            ),
            (
                &mut self.condvar_wait_methods,
                file.threads.condvar_wait_methods,
            ),
            (
                &mut self.condvar_notify_methods,
                file.threads.condvar_notify_methods,
            ),
            (&mut self.barrier_types, file.threads.barrier_types),
            (
                &mut self.barrier_wait_methods,
                file.threads.barrier_wait_methods,
            ),
            (&mut self.pool_types, file.pooled_items.pool_types),
            (
                &mut self.pool_acquire_methods,
                file.pooled_items.acquire_methods,
            ),
            (&mut self.pool_item_types, file.pooled_items.item_types),
            (&mut self.test_attributes, file.bindings.test_attributes),
            (
                &mut self.module_init_attributes,
                file.bindings.module_init_attributes,
            ),
        ];
        for (set, names) in pairs {
            set.extend(names);
        }
    }
}

/// Types declared anywhere in one crate, gathered by a light scan of all its files before any is
/// modelled: a `#[pymethods]` block or a function in one file uses the struct fields and statics
/// of another.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct CrateTypes {
    /// `(struct, field, type name)`.
    pub fields: Vec<(String, String, String)>,
    /// `(static, type name)`.
    pub statics: Vec<(String, String)>,
    /// The statics of `lazy_static!` (`static ref X: T = ..`): their first use runs the
    /// initialiser, a function named `X::{init}` in the declaring file's module.
    pub lazy_statics: Vec<String>,
    /// `(lock, content type name)` for the fields (`Owner.field`) and statics whose type holds
    /// another (`RwLock<State>`): what a guard of theirs is used as.
    pub contents: Vec<(String, String)>,
    /// `(Type::method, type name)`: what the methods of the crate's impls return once
    /// unwrapped (`fn get(&self) -> Result<Searcher>` gives `Searcher`), for the `let`s bound to
    /// their calls in other files; `(function, ..)` for a free function, and `(function.0, ..)`,
    /// `(function.1, ..)` for the elements of a returned tuple.
    pub returns: Vec<(String, String)>,
    /// The methods of the crate's impls (`Type::method`) that return a value with the GIL
    /// released: their body calls the C API's release (`PyEval_SaveThread`) and none of its
    /// acquires, so the value keeps the saved thread state (`ThreadStateGuard::new()`, whose
    /// `Drop` restores it), and the GIL stays released while the caller keeps it.
    #[serde(default)]
    pub releasing: Vec<String>,
    /// Whether the crate names a binding attribute (`#[pyfunction]`, `#[pymethods]`): a binding
    /// crate, entered through its bindings. A crate that names none is a library over PyO3,
    /// entered through its public functions that take the `Python` token.
    #[serde(default)]
    pub binds: bool,
}

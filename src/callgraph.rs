//! Resolves every call site to the functions it may run.
//!
//! C++ is resolved by name, without types (see docs/call-graph.md for what that misses and what it
//! over-approximates):
//! 1. a qualified or unqualified name is looked up through the caller's enclosing scopes (innermost
//!    first), then through its `using` directives, then as written;
//! 2. failing that, by the name's last segments when exactly one qualified name ends with them;
//!    both steps among the functions of the caller's language and those with C linkage;
//! 3. `this->f()` goes to the caller's own class (or a scope around it, not a global `f`), then
//!    like `x.f()`;
//! 4. `x.f()` / `p->f()` with an unknown receiver type goes to every method named `f` (not to a
//!    framework's own methods from a file that never names the framework).
//!
//! Rust follows the same rules with its module paths, except that method calls on receivers of
//! unknown type are not followed, and a `self.f()` that `self`'s own impls do not define goes
//! only to the methods of classes related to `self`'s type (docs/call-graph.md).

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::frontend::Language;
use crate::model::{
    Binding, CallTarget, FnId, Function, FunctionKind, Program, Receiver, last_segment, owner_of,
    split_path,
};

/// A method call whose receiver type is unknown goes to every method of that name, unless more
/// than this many define it: `get`, `size` or `data` on an `auto` variable says nothing about
/// which class is meant, and following all of them invents paths through unrelated code.
/// (Virtual dispatch over a known base class is not limited: see [`Receiver::Typed`].)
pub(crate) const MAX_UNTYPED_FANOUT: usize = 8;

pub struct CallGraph {
    /// For each call site of the program (numbered function by function, from
    /// `first_call[function]`), the end of its callees in `targets`; they start where the call
    /// before ends. Flat, since a program has hundreds of thousands of calls.
    first_call: Vec<u32>,
    callee_ends: Vec<u32>,
    targets: Vec<FnId>,
    /// Functions that call one of their own parameters.
    calls_parameters: FxHashSet<FnId>,
    /// `(caller, call, argument index)` -> the lambdas written there, for calls that pass lambdas
    /// to a function that calls that parameter.
    passed: FxHashMap<(FnId, usize, u32), Vec<FnId>>,
    /// For each binding, the functions its callable names, resolved from where it is registered.
    binding_targets: Vec<Vec<FnId>>,
}

/// Where a name is looked up from: the enclosing namespaces and classes, and the `using`s.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    names: &'a [String],
    usings: &'a [String],
    /// Whether a method call on a receiver of unknown type goes to every method of that name.
    /// Not in Rust: there most such calls are on the standard library's and other crates' types
    /// (`read`, `get`, `as_str`), and name matching invents paths through unrelated code; the
    /// receivers that matter (`self`, declared parameters, fields, statics) have known types.
    by_method_name: bool,
    /// In Rust, the type of `self` (the last segment of the scope of a method or of a closure
    /// in one).
    self_type: Option<&'a str>,
    language: Language,
}

impl<'a> Scope<'a> {
    /// Where the calls of `f`, a function written in `language`, are looked up from.
    pub(crate) fn of_function(f: &'a Function, language: Language) -> Self {
        let cpp = language == Language::Cpp;
        Scope {
            names: &f.scope,
            usings: &f.usings,
            by_method_name: cpp,
            self_type: f.scope.last().filter(|_| !cpp).map(String::as_str),
            language,
        }
    }

    pub(crate) fn language(&self) -> Language {
        self.language
    }

    /// Where the target of `binding`, registered in a file of `language`, is looked up from.
    pub(crate) fn of_binding(binding: &'a Binding, language: Language) -> Self {
        Scope {
            names: &binding.scope,
            usings: &binding.usings,
            by_method_name: true,
            self_type: None,
            language,
        }
    }
}

/// The functions that names are resolved against: the whole program for the call graph, and the
/// files parsed so far for the pre-filter, which resolves calls the same way so as to parse only
/// what they reach.
pub(crate) trait Lookup {
    type Id: Copy;
    /// The non-lambda functions with this qualified name.
    fn with_qualname(&self, qualname: &str) -> impl Iterator<Item = Self::Id>;
    /// The non-lambda functions declared with this name.
    fn named(&self, name: &str) -> impl Iterator<Item = Self::Id>;
    fn function(&self, id: Self::Id) -> &Function;
    fn language(&self, id: Self::Id) -> Language;

    /// Whether a call by name from `language` may reach `id`: a function of the same language or
    /// one with C linkage (C++ calls no Rust `compile` by its name, but does call an `extern "C"`
    /// one).
    fn callable_from(&self, id: Self::Id, language: Language) -> bool {
        self.function(id).extern_c || self.language(id) == language
    }

    /// The functions with this qualified name that a call by name from `language` may reach.
    fn callable_with_qualname(&self, qualname: &str, language: Language) -> Vec<Self::Id> {
        self.with_qualname(qualname)
            .filter(|&id| self.callable_from(id, language))
            .collect()
    }
}

struct Index<'p> {
    program: &'p Program,
    by_qualname: FxHashMap<&'p str, Vec<FnId>>,
    by_name: FxHashMap<&'p str, Vec<FnId>>,
    methods: FxHashMap<&'p str, Vec<FnId>>,
    /// Simple class name -> simple names of the classes derived from it, itself included.
    derived: FxHashMap<&'p str, FxHashSet<&'p str>>,
    /// Simple class name -> simple names of its bases (C++ base classes, Rust traits).
    bases: FxHashMap<&'p str, Vec<&'p str>>,
}

impl CallGraph {
    pub fn build(program: &Program) -> Self {
        let index = Index::new(program);
        // Each function's calls resolve independently of the others'; the indexed collect keeps
        // program order.
        let resolved: Vec<Resolved> = program
            .functions
            .par_iter()
            .map(|f| {
                let scope = Scope::of_function(f, program.file(f.span.file).language);
                let mut calls = Resolved::default();
                for c in &f.calls {
                    let candidates = index.resolve(scope, &c.target);
                    // A method matched by name only must also take the arguments given.
                    let guessed = matches!(
                        c.target,
                        CallTarget::Named {
                            receiver: Receiver::Object | Receiver::Native,
                            ..
                        }
                    );
                    calls
                        .targets
                        .extend(by_arity(&index, candidates, c.args, !guessed));
                    calls.ends.push(calls.targets.len() as u32);
                }
                calls
            })
            .collect();
        let (run_by_callee, calls_parameters, passed) = route_passed_lambdas(program, &resolved);
        let mut first_call = Vec::with_capacity(resolved.len() + 1);
        let mut callee_ends = Vec::with_capacity(resolved.iter().map(|r| r.ends.len()).sum());
        let mut targets = Vec::with_capacity(resolved.iter().map(|r| r.targets.len()).sum());
        for (caller, calls) in resolved.into_iter().enumerate() {
            first_call.push(callee_ends.len() as u32);
            for call in 0..calls.ends.len() {
                if !run_by_callee.contains(&(caller, call)) {
                    targets.extend_from_slice(calls.get(call));
                }
                callee_ends.push(targets.len() as u32);
            }
        }
        first_call.push(callee_ends.len() as u32);
        let binding_targets = program
            .bindings
            .par_iter()
            .map(|b| {
                index.resolve(
                    Scope::of_binding(b, program.file(b.span.file).language),
                    &b.target,
                )
            })
            .collect();
        CallGraph {
            first_call,
            callee_ends,
            targets,
            calls_parameters,
            passed,
            binding_targets,
        }
    }

    pub fn callees(&self, caller: FnId, call: usize) -> &[FnId] {
        let at = self.first_call[caller] as usize + call;
        nth_list(&self.callee_ends, &self.targets, at)
    }

    pub fn calls_parameters(&self, function: FnId) -> bool {
        self.calls_parameters.contains(&function)
    }

    /// The lambdas passed as argument `index` by call `call` of `caller`.
    pub fn passed_lambdas(&self, caller: FnId, call: usize, index: u32) -> Vec<FnId> {
        self.passed
            .get(&(caller, call, index))
            .cloned()
            .unwrap_or_default()
    }

    pub fn binding_targets(&self, binding: usize) -> &[FnId] {
        &self.binding_targets[binding]
    }
}

impl<'p> Index<'p> {
    fn new(program: &'p Program) -> Self {
        let mut by_qualname: FxHashMap<&str, Vec<FnId>> = FxHashMap::default();
        let mut by_name: FxHashMap<&str, Vec<FnId>> = FxHashMap::default();
        let mut methods: FxHashMap<&str, Vec<FnId>> = FxHashMap::default();
        let class_names: FxHashSet<&str> = program
            .classes
            .keys()
            .map(|c| last_segment(c))
            .chain(program.classes.keys().map(String::as_str))
            .collect();
        for (id, f) in program.functions.iter().enumerate() {
            if f.kind == FunctionKind::Lambda {
                continue;
            }
            by_qualname.entry(&f.qualname).or_default().push(id);
            by_name.entry(&f.name).or_default().push(id);
            if f.is_method_where(|class| class_names.contains(class)) {
                methods.entry(&f.name).or_default().push(id);
            }
        }
        Index {
            program,
            by_qualname,
            by_name,
            methods,
            derived: derived_classes(program, &receiver_classes(program)),
            bases: simple_bases(&program.classes),
        }
    }

    fn resolve(&self, caller: Scope, target: &CallTarget) -> Vec<FnId> {
        match target {
            CallTarget::Direct(id) => vec![*id],
            // Resolved once every call is: see `route_passed_lambdas`.
            CallTarget::Param(_) => Vec::new(),
            CallTarget::Named {
                path,
                receiver: Receiver::None,
            } => resolve_path(self, caller, path),
            CallTarget::Named {
                path,
                receiver: Receiver::This,
            } => {
                if let Some(own) = in_enclosing_scopes(self, caller, path) {
                    return own;
                }
                let mut methods = self.untyped_methods(path, caller.language);
                // A Rust `self` has its impl's type: what that type's own impls do not define
                // comes from a trait, as a provided method or, called from a trait's provided
                // method, as an implementor's method. A method of any other type is not it.
                if let Some(self_type) = caller.self_type {
                    let related = self.derived.get(self_type);
                    methods.retain(|&id| {
                        self.program.functions[id].kind == FunctionKind::ProvidedMethod
                            || related.is_some_and(|classes| self.owned_by(id, classes))
                    });
                }
                methods
            }
            CallTarget::Named {
                path,
                receiver: Receiver::Object,
            } if caller.by_method_name => self.untyped_methods(path, caller.language),
            CallTarget::Named {
                path,
                receiver: Receiver::Native,
            } if caller.by_method_name => {
                let mut methods = self.untyped_methods(path, caller.language);
                methods.retain(|&id| !self.program.functions[id].framework);
                methods
            }
            CallTarget::Named {
                receiver: Receiver::Object | Receiver::Native,
                ..
            } => Vec::new(),
            CallTarget::Named {
                path,
                receiver: Receiver::Typed(ty),
            } => {
                // A type the project does not define (`std::atomic`, `at::Tensor`) has no methods
                // here; a project class's call may run an override in any derived class, or,
                // when the class does not define the method, the nearest definition among its
                // bases (a C++ base class, a Rust trait's provided method).
                // Classes are matched by simple name, so a standard type written as such
                // (`std::array`) is never taken for a project's class of that name
                // (`pybind11::array`).
                if ty.trim_start_matches("::").starts_with("std::") {
                    return Vec::new();
                }
                let class = last_segment(ty);
                let Some(classes) = self.derived.get(class) else {
                    return Vec::new();
                };
                // A method is never called from the other language (a Rust `str` is not
                // pybind11's).
                let mut methods = self.methods_named(path);
                methods.retain(|&id| self.language(id) == caller.language);
                let mut found: Vec<FnId> = methods
                    .iter()
                    .copied()
                    .filter(|&id| self.owned_by(id, classes))
                    .collect();
                // A method of the receiver's class itself.
                let own = |id: FnId| self.owner(id) == Some(class);
                // A C++ class written with its namespace (`platform::Window`) is not another
                // namespace's class of that name, when the program has that one. (Rust types are
                // often named through re-exports, so their paths say less.)
                if caller.language == Language::Cpp && ty.contains("::") {
                    let written = ty.trim_start_matches("::");
                    let suffix = format!("::{written}");
                    let named_so = |id: FnId| {
                        let owner = owner_of(&self.program.functions[id].qualname);
                        owner == written || owner.ends_with(&suffix)
                    };
                    if found.iter().any(|&id| own(id) && named_so(id)) {
                        found.retain(|&id| !own(id) || named_so(id));
                    }
                }
                if !found.iter().any(|&id| own(id)) {
                    let mut level = FxHashSet::from_iter([class]);
                    let mut seen = level.clone();
                    while !level.is_empty() {
                        level = level
                            .iter()
                            .flat_map(|c| self.bases.get(c).into_iter().flatten().copied())
                            .filter(|b| seen.insert(b))
                            .collect();
                        let inherited: Vec<FnId> = methods
                            .iter()
                            .copied()
                            .filter(|&id| self.owned_by(id, &level))
                            .collect();
                        if !inherited.is_empty() {
                            found.extend(inherited);
                            break;
                        }
                    }
                }
                found
            }
        }
    }

    /// The methods named `name`, or none when the program has more than [`MAX_UNTYPED_FANOUT`];
    /// only those in `language` (a method is never called by name from the other language, but
    /// counts for how ambiguous the name is).
    fn untyped_methods(&self, name: &str, language: Language) -> Vec<FnId> {
        let mut methods = self.methods_named(name);
        if methods.len() > MAX_UNTYPED_FANOUT {
            return Vec::new();
        }
        methods.retain(|&id| self.language(id) == language);
        methods
    }

    /// The simple name of the class (or namespace) a function is defined in.
    fn owner(&self, id: FnId) -> Option<&str> {
        let (owner, _) = split_path(&self.program.functions[id].qualname)?;
        Some(last_segment(owner))
    }

    fn owned_by(&self, id: FnId, classes: &FxHashSet<&str>) -> bool {
        self.owner(id).is_some_and(|owner| classes.contains(owner))
    }

    fn methods_named(&self, name: &str) -> Vec<FnId> {
        self.methods.get(name).cloned().unwrap_or_default()
    }
}

impl Lookup for Index<'_> {
    type Id = FnId;

    fn with_qualname(&self, qualname: &str) -> impl Iterator<Item = FnId> {
        self.by_qualname
            .get(qualname)
            .into_iter()
            .flatten()
            .copied()
    }

    fn named(&self, name: &str) -> impl Iterator<Item = FnId> {
        self.by_name.get(name).into_iter().flatten().copied()
    }

    fn function(&self, id: FnId) -> &Function {
        &self.program.functions[id]
    }

    fn language(&self, id: FnId) -> Language {
        self.program
            .file(self.program.functions[id].span.file)
            .language
    }
}

/// Overloads that accept `args` arguments; with `keep_if_none`, all of them when none does (a
/// default argument hidden in a macro, a parse error), since dropping every candidate of a call
/// resolved by its name and scope would hide real paths.
pub(crate) fn by_arity<D: Lookup>(
    definitions: &D,
    candidates: Vec<D::Id>,
    args: u32,
    keep_if_none: bool,
) -> Vec<D::Id> {
    let fitting: Vec<D::Id> = candidates
        .iter()
        .copied()
        .filter(|&id| definitions.function(id).accepts(args))
        .collect();
    if fitting.is_empty() && keep_if_none {
        candidates
    } else {
        fitting
    }
}

/// `path` looked up in the caller's scopes, innermost first, among the functions a call from
/// the caller's language may reach. With the number of scopes it was found under (0: `path` is
/// a whole qualified name).
fn scoped_lookup<D: Lookup>(
    definitions: &D,
    caller: Scope,
    path: &str,
) -> Option<(usize, Vec<D::Id>)> {
    let scope = caller.names;
    // One buffer for every candidate name: this runs for most of the program's calls.
    let mut qualified = String::new();
    (0..=scope.len()).rev().find_map(|n| {
        qualified.clear();
        for name in &scope[..n] {
            qualified.push_str(name);
            qualified.push_str("::");
        }
        qualified.push_str(path);
        let found = definitions.callable_with_qualname(&qualified, caller.language);
        (!found.is_empty()).then_some((n, found))
    })
}

fn in_scopes<D: Lookup>(definitions: &D, caller: Scope, path: &str) -> Vec<D::Id> {
    scoped_lookup(definitions, caller, path).map_or_else(Vec::new, |(_, found)| found)
}

/// `path` looked up under the caller's enclosing scopes only, not as written: where
/// `this->f()` and `self.f()` look first.
pub(crate) fn in_enclosing_scopes<D: Lookup>(
    definitions: &D,
    caller: Scope,
    path: &str,
) -> Option<Vec<D::Id>> {
    scoped_lookup(definitions, caller, path)
        .filter(|&(scopes, _)| scopes > 0)
        .map(|(_, found)| found)
}

/// `path` looked up through the caller's `using`s, in order.
fn through_usings<D: Lookup>(definitions: &D, caller: Scope, path: &str) -> Vec<D::Id> {
    let mut qualified = String::new();
    for using in caller.usings {
        qualified.clear();
        qualified.push_str(using);
        qualified.push_str("::");
        qualified.push_str(path);
        let found = definitions.callable_with_qualname(&qualified, caller.language);
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// The functions of the one qualified name that ends with `path`, among those a call from
/// `language` may reach; none when there are several such names.
fn by_unique_suffix<D: Lookup>(definitions: &D, language: Language, path: &str) -> Vec<D::Id> {
    let last = last_segment(path);
    let suffix = format!("::{path}");
    let candidates: Vec<D::Id> = definitions
        .named(last)
        .filter(|&id| {
            let q = &definitions.function(id).qualname;
            (q == path || q.ends_with(&suffix)) && definitions.callable_from(id, language)
        })
        .collect();
    let qualnames: FxHashSet<&str> = candidates
        .iter()
        .map(|&id| definitions.function(id).qualname.as_str())
        .collect();
    if qualnames.len() == 1 {
        candidates
    } else {
        Vec::new()
    }
}

/// Rules 1 and 2 of the module doc.
pub(crate) fn resolve_path<D: Lookup>(definitions: &D, caller: Scope, path: &str) -> Vec<D::Id> {
    let found = in_scopes(definitions, caller, path);
    if !found.is_empty() {
        return found;
    }
    let found = through_usings(definitions, caller, path);
    if !found.is_empty() {
        return found;
    }
    by_unique_suffix(definitions, caller.language, path)
}

/// For each class (by simple name), the simple names of the bases written for any of its
/// definitions (the pre-filter reads its kept models' classes the same way).
pub(crate) fn simple_bases<'a>(
    classes: impl IntoIterator<Item = (&'a String, &'a Vec<String>)>,
) -> FxHashMap<&'a str, Vec<&'a str>> {
    let mut bases: FxHashMap<&str, Vec<&str>> = FxHashMap::default();
    for (class, written) in classes {
        let entry = bases.entry(last_segment(class)).or_default();
        for base in written {
            if !entry.contains(&last_segment(base)) {
                entry.push(last_segment(base));
            }
        }
    }
    bases
}

/// The classes (by simple name) that calls may be made on: typed receivers, and the type of a Rust
/// `self`. Only theirs are needed of [`derived_classes`].
fn receiver_classes(program: &Program) -> FxHashSet<&str> {
    program
        .functions
        .iter()
        .flat_map(|f| {
            let rust = program.file(f.span.file).language == Language::Rust;
            let self_type = f
                .scope
                .last()
                .filter(|_| {
                    rust && f.calls.iter().any(|c| {
                        matches!(
                            c.target,
                            CallTarget::Named {
                                receiver: Receiver::This,
                                ..
                            }
                        )
                    })
                })
                .map(String::as_str);
            f.calls
                .iter()
                .filter_map(|c| match &c.target {
                    CallTarget::Named {
                        receiver: Receiver::Typed(ty),
                        ..
                    } => Some(last_segment(ty)),
                    _ => None,
                })
                .chain(self_type)
        })
        .collect()
}

/// For each of `wanted` (by simple name) that is a class or a base, the classes that derive from
/// it, transitively, itself included when it is a class. Computed for those alone: over a whole
/// program, the sets of a deep hierarchy add up to the square of its depth.
fn derived_classes<'p>(
    program: &'p Program,
    wanted: &FxHashSet<&'p str>,
) -> FxHashMap<&'p str, FxHashSet<&'p str>> {
    let mut subclasses: FxHashMap<&str, Vec<&str>> = FxHashMap::default();
    let mut classes: FxHashSet<&str> = FxHashSet::default();
    for (class, bases) in &program.classes {
        let class = last_segment(class);
        classes.insert(class);
        for base in bases {
            subclasses
                .entry(last_segment(base))
                .or_default()
                .push(class);
        }
    }
    wanted
        .iter()
        .filter(|w| classes.contains(*w) || subclasses.contains_key(*w))
        .map(|&w| {
            let mut below: FxHashSet<&str> = FxHashSet::default();
            if classes.contains(w) {
                below.insert(w);
            }
            let mut stack: Vec<&str> = subclasses.get(w).cloned().unwrap_or_default();
            while let Some(c) = stack.pop() {
                if below.insert(c) {
                    stack.extend(subclasses.get(c).into_iter().flatten());
                }
            }
            (w, below)
        })
        .collect()
}

/// One function's resolved calls, flat: call `i` may run `targets[ends[i - 1]..ends[i]]`.
#[derive(Default)]
struct Resolved {
    ends: Vec<u32>,
    targets: Vec<FnId>,
}

impl Resolved {
    fn get(&self, call: usize) -> &[FnId] {
        nth_list(&self.ends, &self.targets, call)
    }
}

/// List `n` of lists stored one after the other in `items`, each ending at `ends[n]`.
fn nth_list<'a>(ends: &[u32], items: &'a [FnId], n: usize) -> &'a [FnId] {
    let start = match n {
        0 => 0,
        _ => ends[n - 1] as usize,
    };
    &items[start..ends[n] as usize]
}

/// A lambda passed to a project function that calls that parameter (`without_gil([&] { ... })`)
/// runs inside the callee, at the parameter's call, in the callee's GIL state; it runs in place
/// only when no callee calls the parameter. Returns the call sites of the lambdas that run inside
/// their callee (so not where they are written), the functions that call a parameter, and the
/// lambdas passed to them by each call site (the analysis enters such a function once per call
/// site, so each call runs its own lambdas).
#[allow(clippy::type_complexity)]
fn route_passed_lambdas(
    program: &Program,
    callees: &[Resolved],
) -> (
    FxHashSet<(FnId, usize)>,
    FxHashSet<FnId>,
    FxHashMap<(FnId, usize, u32), Vec<FnId>>,
) {
    let mut calls_param: FxHashSet<(FnId, u32)> = program
        .functions
        .iter()
        .enumerate()
        .flat_map(|(id, f)| {
            f.calls.iter().filter_map(move |c| match c.target {
                CallTarget::Param(index) => Some((id, index)),
                _ => None,
            })
        })
        .collect();
    // A closure that calls a parameter of the function it is written in (`self.detach(|| f())`)
    // makes that function call it.
    loop {
        let inherited: Vec<(FnId, u32)> = program
            .functions
            .iter()
            .enumerate()
            .flat_map(|(id, f)| {
                let calls_param = &calls_param;
                f.calls.iter().filter_map(move |c| match c.target {
                    CallTarget::Direct(lambda)
                        if program.functions[lambda].kind == FunctionKind::Lambda =>
                    {
                        Some(
                            calls_param
                                .iter()
                                .filter(move |(f, _)| *f == lambda)
                                .map(move |(_, i)| (id, *i)),
                        )
                    }
                    _ => None,
                })
            })
            .flatten()
            .filter(|entry| !calls_param.contains(entry))
            .collect();
        if inherited.is_empty() {
            break;
        }
        calls_param.extend(inherited);
    }
    let mut passed: FxHashMap<(FnId, usize, u32), Vec<FnId>> = FxHashMap::default();
    let mut run_by_callee = FxHashSet::default();
    for (caller, f) in program.functions.iter().enumerate() {
        for (site, call) in f.calls.iter().enumerate() {
            let (Some((outer, index)), CallTarget::Direct(lambda)) =
                (f.passed_to(site), &call.target)
            else {
                continue;
            };
            let outer = outer as usize;
            let consumed = callees[caller]
                .get(outer)
                .iter()
                .any(|&callee| calls_param.contains(&(callee, index)));
            if consumed {
                run_by_callee.insert((caller, site));
                passed
                    .entry((caller, outer, index))
                    .or_default()
                    .push(*lambda);
            }
        }
    }
    let calls_parameters = calls_param.into_iter().map(|(id, _)| id).collect();
    (run_by_callee, calls_parameters, passed)
}

//! Resolves every call site to the functions it may run.
//!
//! C++ is resolved by name, without types (see docs/call-graph.md for what that misses and what it
//! over-approximates):
//! 1. a qualified or unqualified name is looked up through the caller's enclosing scopes (innermost
//!    first), then through its `using` directives, then as written;
//! 2. failing that, by the name's last segments when exactly one qualified name ends with them;
//!    both steps among the functions of the caller's language and those with C linkage;
//! 3. failing both, a class's name (`T(a)`, and the constructions the front-end writes so:
//!    `T x(a)`, `new T(a)`, `make_shared<T>(a)`) runs that class's constructors, and `C::f`
//!    runs the nearest `f` among `C`'s bases;
//! 4. `this->f()` goes to the caller's own class (or a scope around it, not a global `f`), then
//!    like `x.f()`;
//! 5. `x.f()` / `p->f()` with an unknown receiver type goes to every method named `f` (not to a
//!    framework's own methods from a file that never names the framework).
//!
//! Rust follows the same rules with its module paths, except that method calls on receivers of
//! unknown type are not followed, and a `self.f()` that `self`'s own impls do not define goes
//! only to the methods of classes related to `self`'s type (docs/call-graph.md).
//!
//! These rules are written once, in [`resolve`], over a [`Lookup`]: here the whole program's
//! [`Index`]; in the pre-filter, the files parsed so far.

mod resolve;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use resolve::judge_call;
pub(crate) use resolve::{Lookup, Scope, qualified_names, resolve_call};

use crate::model::{
    CallTarget, FnId, Function, FunctionKind, Language, Program, Unconsumed, field_types_in,
    is_translation_unit, last_segment,
};

pub struct CallGraph {
    /// For each call site of the program (numbered function by function, from
    /// `first_call[function]`), the end of its callees in `targets`; they start where the call
    /// before ends. Flat, since a program has hundreds of thousands of calls.
    first_call: Vec<u32>,
    callee_ends: Vec<u32>,
    targets: Vec<FnId>,
    /// For each call site, whether its callees are a guess (see [`resolve::Resolution`]).
    guessed: Vec<bool>,
    /// Functions that call one of their own parameters.
    calls_parameters: FxHashSet<FnId>,
    /// `(caller, call, argument index)` -> the lambdas written there, for calls that pass lambdas
    /// to a function that calls that parameter.
    passed: FxHashMap<(FnId, usize, u32), Vec<FnId>>,
    /// Lambdas the project keeps for later (see [`CallGraph::kept_for_later`]).
    kept: FxHashSet<FnId>,
    /// For each binding, the functions its callable names, resolved from where it is registered.
    binding_targets: Vec<Vec<FnId>>,
}

struct Index<'p> {
    program: &'p Program,
    by_qualname: FxHashMap<&'p str, Vec<FnId>>,
    by_name: FxHashMap<&'p str, Vec<FnId>>,
    /// Method name -> each method of that name, with its class (see [`resolve::method_owner`]),
    /// which lookups by class test for every method of a common name (`get`, `new`).
    methods: FxHashMap<&'p str, Vec<(FnId, Option<&'p str>)>>,
    /// Simple class name -> simple names of the classes derived from it, itself included.
    derived: FxHashMap<&'p str, FxHashSet<&'p str>>,
    /// Simple class name -> simple names of its bases (C++ base classes, Rust traits).
    bases: FxHashMap<&'p str, Vec<&'p str>>,
}

impl CallGraph {
    pub fn build(program: &Program) -> Self {
        let index = Index::new(program);
        // Each function's calls resolve independently of the others', a file's at a time: one
        // list per file, not per function, whose tens of thousands of small allocations would
        // be freed only once copied into the flat arrays, at the run's peak. The indexed collect
        // keeps program order.
        let by_file: Vec<Resolved> = program
            .functions
            .par_by_file()
            .map(|functions| {
                let mut calls = Resolved::default();
                for f in functions {
                    let file = f.span.file;
                    let source = program.file(file);
                    let scope = Scope::of_function(
                        f,
                        source.language,
                        file as usize,
                        source.names_framework,
                    );
                    for (call, c) in f.calls.iter().enumerate() {
                        let (callees, guessed) = match c.target {
                            CallTarget::Direct(id) => (vec![id], false),
                            // Resolved once every call is: see `route_passed_lambdas`.
                            CallTarget::Param(_) => (Vec::new(), false),
                            CallTarget::Named { .. } => {
                                let found = judge_call(
                                    &index,
                                    scope,
                                    &c.target,
                                    Some(c.args),
                                    f.argument_types(call),
                                );
                                (found.callees, found.guessed)
                            }
                        };
                        calls.guessed.push(guessed);
                        calls.targets.extend(callees);
                        calls.ends.push(calls.targets.len() as u32);
                    }
                }
                calls
            })
            .collect();
        let mut first_call = Vec::with_capacity(program.functions.len() + 1);
        let mut calls = 0;
        for f in program.functions.iter() {
            first_call.push(calls);
            calls += f.calls.len() as u32;
        }
        first_call.push(calls);
        let mut callee_ends = Vec::with_capacity(calls as usize);
        let mut targets = Vec::with_capacity(by_file.iter().map(|r| r.targets.len()).sum());
        let mut guessed = Vec::with_capacity(calls as usize);
        for file in by_file {
            let before = targets.len() as u32;
            callee_ends.extend(file.ends.iter().map(|end| before + end));
            targets.extend_from_slice(&file.targets);
            guessed.extend_from_slice(&file.guessed);
        }
        let mut graph = CallGraph {
            first_call,
            callee_ends,
            targets,
            guessed,
            calls_parameters: FxHashSet::default(),
            passed: FxHashMap::default(),
            kept: FxHashSet::default(),
            binding_targets: Vec::new(),
        };
        let Routes {
            run_by_callee,
            calls_parameters,
            passed,
            kept,
        } = route_passed_lambdas(program, &graph);
        graph.drop_targets_of(&run_by_callee);
        let CallGraph {
            first_call,
            callee_ends,
            targets,
            guessed,
            ..
        } = graph;
        // What the program runs: the callees of its calls, and the lambdas run inside theirs.
        let run: FxHashSet<FnId> = match program.bindings.iter().any(|b| b.unless_run) {
            true => targets
                .iter()
                .chain(passed.values().flatten())
                .copied()
                .collect(),
            false => FxHashSet::default(),
        };
        let binding_targets = program
            .bindings
            .par_iter()
            .map(|b| match b.target {
                CallTarget::Direct(id) if b.unless_run && run.contains(&id) => Vec::new(),
                CallTarget::Direct(id) => vec![id],
                _ => {
                    let source = program.file(b.span.file);
                    let scope = Scope::of_binding(
                        b,
                        source.language,
                        b.span.file as usize,
                        source.names_framework,
                    );
                    resolve_call(&index, scope, &b.target, None)
                }
            })
            .collect();
        CallGraph {
            first_call,
            callee_ends,
            targets,
            guessed,
            calls_parameters,
            passed,
            kept,
            binding_targets,
        }
    }

    /// Removes the callees of the calls `dropped` (`(caller, call)`), in place.
    fn drop_targets_of(&mut self, dropped: &FxHashSet<(FnId, usize)>) {
        if dropped.is_empty() {
            return;
        }
        let (mut kept, mut start) = (0, 0);
        for caller in 0..self.first_call.len() - 1 {
            let sites = self.first_call[caller] as usize..self.first_call[caller + 1] as usize;
            for (call, site) in sites.clone().enumerate() {
                let end = self.callee_ends[site] as usize;
                if !dropped.contains(&(caller, call)) {
                    self.targets.copy_within(start..end, kept);
                    kept += end - start;
                }
                start = end;
                self.callee_ends[site] = kept as u32;
            }
        }
        self.targets.truncate(kept);
    }

    pub fn callees(&self, caller: FnId, call: usize) -> &[FnId] {
        let at = self.first_call[caller] as usize + call;
        nth_list(&self.callee_ends, &self.targets, at)
    }

    /// Whether call number `call` of `caller` reaches its callees by a guess: matched by
    /// method name on a receiver of unknown type, or dispatched to the overrides of several
    /// classes.
    pub fn guessed(&self, caller: FnId, call: usize) -> bool {
        self.guessed[self.first_call[caller] as usize + call]
    }

    pub fn calls_parameters(&self, function: FnId) -> bool {
        self.calls_parameters.contains(&function)
    }

    /// Whether `lambda` is kept by the project for later, in a container (`tasks.push(..)`, or
    /// through a function that keeps its parameter so): it is not run where it is written, and
    /// what it captures lives as long as the entry, not just through one call.
    pub fn kept_for_later(&self, lambda: FnId) -> bool {
        self.kept.contains(&lambda)
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
        // Independent maps over the whole program, built side by side.
        let named = || {
            program
                .functions
                .iter()
                .enumerate()
                .filter(|(_, f)| f.kind != FunctionKind::Lambda)
        };
        let ((by_qualname, by_name), (methods, (derived, bases))) = rayon::join(
            || {
                rayon::join(
                    || group(named().map(|(id, f)| (f.qualname.as_str(), id))),
                    || group(named().map(|(id, f)| (f.name.as_str(), id))),
                )
            },
            || {
                rayon::join(
                    || {
                        let class_names: FxHashSet<&str> = program
                            .classes
                            .keys()
                            .map(|c| last_segment(c))
                            .chain(program.classes.keys().map(String::as_str))
                            .collect();
                        group(
                            named()
                                .filter(|(_, f)| {
                                    f.is_method_where(|class| class_names.contains(class))
                                })
                                .map(|(id, f)| {
                                    (f.name.as_str(), (id, resolve::method_owner(&f.qualname)))
                                }),
                        )
                    },
                    || {
                        rayon::join(
                            || derived_classes(program, &resolve::classes_called_on(program)),
                            || simple_bases(&program.classes),
                        )
                    },
                )
            },
        );
        Index {
            program,
            by_qualname,
            by_name,
            methods,
            derived,
            bases,
        }
    }

    fn methods(&self, name: &str) -> &[(FnId, Option<&'p str>)] {
        self.methods.get(name).map_or(&[], Vec::as_slice)
    }

    fn methods_where(&self, name: &str, owner_is: impl Fn(&str) -> bool) -> Vec<FnId> {
        self.methods(name)
            .iter()
            .filter(|(_, owner)| owner.is_some_and(&owner_is))
            .map(|&(id, _)| id)
            .collect()
    }
}

impl Lookup for Index<'_> {
    type Id = FnId;

    fn function(&self, id: FnId) -> &Function {
        &self.program.functions[id]
    }

    fn file(&self, id: FnId) -> usize {
        self.program.functions[id].span.file as usize
    }

    fn in_translation_unit(&self, id: FnId) -> bool {
        let file = self.program.functions[id].span.file;
        is_translation_unit(&self.program.file(file).path)
    }

    fn language(&self, id: FnId) -> Language {
        self.program
            .file(self.program.functions[id].span.file)
            .language
    }

    fn with_qualname(&self, qualname: &str) -> Vec<FnId> {
        self.by_qualname.get(qualname).cloned().unwrap_or_default()
    }

    fn ending_with(&self, path: &str, language: Language, most: usize) -> Option<Vec<FnId>> {
        let suffix = format!("::{path}");
        let found: Vec<FnId> = self
            .by_name
            .get(last_segment(path))
            .into_iter()
            .flatten()
            .copied()
            .filter(|&id| {
                let q = &self.program.functions[id].qualname;
                (q == path || q.ends_with(&suffix)) && self.callable_from(id, language)
            })
            .collect();
        (qualified_names(self, &found) <= most).then_some(found)
    }

    fn methods_named(&self, name: &str, most: usize) -> Option<Vec<FnId>> {
        let methods = self.methods(name);
        (methods.len() <= most).then(|| methods.iter().map(|&(id, _)| id).collect())
    }

    fn methods_below(&self, name: &str, class: &str) -> Vec<FnId> {
        self.methods_where(name, |owner| self.derives(owner, class))
    }

    fn methods_of(&self, name: &str, classes: &[String]) -> Vec<FnId> {
        self.methods_where(name, |owner| classes.iter().any(|c| c == owner))
    }

    fn derives(&self, class: &str, base: &str) -> bool {
        self.derived
            .get(base)
            .is_some_and(|derived| derived.contains(class))
    }

    fn bases(&self, class: &str) -> Vec<String> {
        self.bases
            .get(class)
            .into_iter()
            .flatten()
            .map(|b| b.to_string())
            .collect()
    }

    fn field_types(&self, class: &str, field: &str) -> Vec<String> {
        field_types_in(&self.program.fields, class, field)
    }
}

/// The values of `pairs` grouped by key, each group in the order met.
fn group<'p, V>(pairs: impl Iterator<Item = (&'p str, V)>) -> FxHashMap<&'p str, Vec<V>> {
    let mut groups: FxHashMap<&str, Vec<V>> = FxHashMap::default();
    for (key, value) in pairs {
        groups.entry(key).or_default().push(value);
    }
    groups
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

/// One file's resolved calls, flat: its call `i` (its functions' calls in order) may run
/// `targets[ends[i - 1]..ends[i]]`.
#[derive(Default)]
struct Resolved {
    ends: Vec<u32>,
    targets: Vec<FnId>,
    guessed: Vec<bool>,
}

/// List `n` of lists stored one after the other in `items`, each ending at `ends[n]`.
fn nth_list<'a>(ends: &[u32], items: &'a [FnId], n: usize) -> &'a [FnId] {
    let start = match n {
        0 => 0,
        _ => ends[n - 1] as usize,
    };
    &items[start..ends[n] as usize]
}

/// Where passed lambdas run (see [`route_passed_lambdas`]).
struct Routes {
    /// The call sites of the lambdas that do not run in place (inside their callee, or kept).
    run_by_callee: FxHashSet<(FnId, usize)>,
    /// The functions that call a parameter.
    calls_parameters: FxHashSet<FnId>,
    /// The lambdas passed to those functions by each call site (the analysis enters such a
    /// function once per call site, so each call runs its own lambdas).
    passed: FxHashMap<(FnId, usize, u32), Vec<FnId>>,
    /// The lambdas a project function keeps for later without calling them.
    kept: FxHashSet<FnId>,
}

/// The parameters `(function, index)` that functions keep for later (see
/// [`Function::kept_params`](crate::model::Function::kept_params)): those they store, and those
/// they hand on to a call all of whose callees keep that argument. Overloads that hand a
/// parameter to one another (`add(q, f)` wrapping `f` for `add(q, g)`) keep it when the one
/// they end in does: every parameter with an entry is taken as kept, and those whose every
/// hand-off reaches a callee that does not keep it are dropped until none is.
fn kept_parameters(program: &Program, graph: &CallGraph) -> FxHashSet<(FnId, u32)> {
    let entries = || {
        program.functions.par_enumerate().flat_map_iter(|(id, f)| {
            f.kept_params
                .iter()
                .map(move |&(index, handed)| (id, index, handed))
        })
    };
    let mut kept: FxHashSet<(FnId, u32)> = entries().map(|(id, index, _)| (id, index)).collect();
    loop {
        let keeps = |(id, _, handed): (FnId, u32, Option<(u32, u32)>)| match handed {
            None => true,
            Some((call, argument)) => {
                let call_callees = graph.callees(id, call as usize);
                !call_callees.is_empty()
                    && call_callees
                        .iter()
                        .all(|&callee| kept.contains(&(callee, argument)))
            }
        };
        let still: FxHashSet<(FnId, u32)> = entries()
            .filter(|&entry| keeps(entry))
            .map(|(id, index, _)| (id, index))
            .collect();
        if still.len() == kept.len() {
            return kept;
        }
        kept = still;
    }
}

/// A lambda passed to a project function that calls that parameter (`without_gil([&] { ... })`)
/// runs inside the callee, at the parameter's call, in the callee's GIL state; when no callee
/// calls the parameter, it runs in place or is kept for later, as its [`Unconsumed`] says. A
/// lambda passed to a guessed call that most of its candidates (two at least) call, and none
/// keeps, also runs in place: the candidates agree that it runs whichever of them is called, so
/// reaching it needs no guess (`trainer.feed(it, |s| ..)` on a generic `T: Trainer`, whose
/// test stub runs nothing). This is the one place that decides it, for both languages.
fn route_passed_lambdas(program: &Program, graph: &CallGraph) -> Routes {
    let kept_params = kept_parameters(program, graph);
    // Whether a callable passed as argument `index` of call `outer` of `caller` runs: inside a
    // callee that calls that parameter, or else as its `Unconsumed` says.
    let runs = |calls_param: &FxHashSet<(FnId, u32)>,
                caller: FnId,
                (outer, index, unconsumed): (u32, u32, Unconsumed)| {
        let outer_callees = graph.callees(caller, outer as usize);
        let consumed = outer_callees
            .iter()
            .any(|&callee| calls_param.contains(&(callee, index)));
        let in_place = match unconsumed {
            Unconsumed::InPlace => {
                outer_callees.is_empty()
                    || !outer_callees
                        .iter()
                        .all(|&callee| kept_params.contains(&(callee, index)))
            }
            Unconsumed::RunByLibrary => outer_callees.is_empty(),
            Unconsumed::Stored => false,
        };
        (consumed, in_place)
    };
    let mut calls_param: FxHashSet<(FnId, u32)> = program
        .functions
        .par_enumerate()
        .flat_map_iter(|(id, f)| {
            f.calls.iter().enumerate().filter_map(move |(site, c)| {
                match (&c.target, f.passed_to(site)) {
                    (CallTarget::Param(index), None) => Some((id, *index)),
                    _ => None,
                }
            })
        })
        .collect();
    // A closure that calls a parameter of the function it is written in (`self.detach(|| f())`)
    // makes that function call it; so does handing the parameter to a callee that runs it.
    loop {
        // By function: a program has tens of thousands of closures written at their call.
        let mut params_called: FxHashMap<FnId, Vec<u32>> = FxHashMap::default();
        for &(function, index) in &calls_param {
            params_called.entry(function).or_default().push(index);
        }
        let inherited: Vec<(FnId, u32)> = program
            .functions
            .par_enumerate()
            .flat_map_iter(|(id, f)| {
                let (calls_param, params_called) = (&calls_param, &params_called);
                f.calls.iter().enumerate().flat_map(move |(site, c)| {
                    let lambda_calls: &[u32] = match c.target {
                        CallTarget::Direct(lambda)
                            if program.functions[lambda].kind == FunctionKind::Lambda =>
                        {
                            params_called.get(&lambda).map_or(&[], Vec::as_slice)
                        }
                        _ => &[],
                    };
                    let handed_on = match c.target {
                        CallTarget::Param(index) => f
                            .passed_to(site)
                            .filter(|&passed| {
                                let (consumed, in_place) = runs(calls_param, id, passed);
                                consumed || in_place
                            })
                            .map(|_| (id, index)),
                        _ => None,
                    };
                    lambda_calls.iter().map(move |&i| (id, i)).chain(handed_on)
                })
            })
            .filter(|entry| !calls_param.contains(entry))
            .collect();
        if inherited.is_empty() {
            break;
        }
        calls_param.extend(inherited);
    }
    let mut passed: FxHashMap<(FnId, usize, u32), Vec<FnId>> = FxHashMap::default();
    let mut run_by_callee = FxHashSet::default();
    let mut kept = FxHashSet::default();
    for (caller, f) in program.functions.iter().enumerate() {
        for (site, call) in f.calls.iter().enumerate() {
            if f.keeps(site) {
                run_by_callee.insert((caller, site));
                if let CallTarget::Direct(lambda) = call.target {
                    kept.insert(lambda);
                }
                continue;
            }
            let Some((outer, index, unconsumed)) = f.passed_to(site) else {
                continue;
            };
            // A closure, or a function item passed by name (`engine.apply(parse_row)`).
            let lambdas = match &call.target {
                CallTarget::Direct(lambda) => std::slice::from_ref(lambda),
                CallTarget::Named { .. } => graph.callees(caller, site),
                CallTarget::Param(_) => continue,
            };
            let (consumed, in_place) = runs(&calls_param, caller, (outer, index, unconsumed));
            if consumed {
                let outer_callees = graph.callees(caller, outer as usize);
                let runners = outer_callees
                    .iter()
                    .filter(|&&callee| calls_param.contains(&(callee, index)))
                    .count();
                let vouched = graph.guessed(caller, outer as usize)
                    && runners >= 2
                    && runners * 2 > outer_callees.len()
                    && !outer_callees
                        .iter()
                        .any(|&callee| kept_params.contains(&(callee, index)));
                if !vouched {
                    run_by_callee.insert((caller, site));
                }
                passed
                    .entry((caller, outer as usize, index))
                    .or_default()
                    .extend_from_slice(lambdas);
            } else if !in_place {
                // Kept for later by the callee: it runs neither here nor inside the callee.
                run_by_callee.insert((caller, site));
                if let CallTarget::Direct(lambda) = call.target
                    && !graph.callees(caller, outer as usize).is_empty()
                {
                    kept.insert(lambda);
                }
            }
        }
    }
    Routes {
        run_by_callee,
        calls_parameters: calls_param.into_iter().map(|(id, _)| id).collect(),
        passed,
        kept,
    }
}

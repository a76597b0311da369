//! The analysis shared by every rule: walks the call graph from each binding, tracking the GIL
//! state and the other locks held, and builds a lock-order graph in which the GIL is a lock.
//!
//! A function is visited once per (binding, GIL state, set of locks held by its callers); the sets
//! are small in practice, so this stays close to linear in the size of the call graph per binding.
//! Breadth-first order makes every reconstructed path a shortest one.
//!
//! Edges of the lock-order graph (see docs/design.md):
//! - `GIL -> L` (a wait): lock `L` is taken while the GIL is held;
//! - `L -> GIL`, explicit: the GIL is acquired (it was released) while `L` is held;
//! - `L -> GIL`, implicit: Python code runs while `L` is held with the GIL held: the interpreter may
//!   drop the GIL and must take it back while `L` is still held.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::callgraph::CallGraph;
use crate::diagnostic::{Step, guesses};
use crate::frontend::Language;
use crate::model::{
    CallTarget, FnId, Function, FunctionKind, GilState, LockKind, LockRegion, Program, Span,
};

pub type LockId = usize;

/// A path follows at most this many guessed calls. Each guess may invent the path, and two
/// compound: on the real-code ledger, findings whose best path needed two guesses or more were
/// nearly all false.
const MAX_GUESSES_PER_PATH: usize = 1;

/// Bindings explored at once per thread: enough for the threads to share a batch's work, few
/// enough that a batch's reaches stay a small part of the run's memory.
const BINDINGS_PER_THREAD: usize = 8;

/// A function entered in a GIL state with a set of locks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    pub function: FnId,
    pub state: GilState,
    /// The locks held by the callers: an index into [`Facts::held`].
    pub held: usize,
    /// For a function that calls its own parameters: the call site `(caller, call)` that entered
    /// it, which says what the parameters are. `None` for every other function.
    pub entered_from: Option<(FnId, usize)>,
    /// The method runs on an object that its maker has not yet given away (entered through a
    /// call noted [`crate::model::CallNote::Unpublished`], or a call on `this` from such a method): the locks
    /// that are the object's fields cannot be contended, so they are left out.
    pub unpublished: bool,
    /// The caller's lock that the call lends the function as a lock guard parameter it unlocks,
    /// with the parameter (see [`crate::model::Function::unlocked_params`]).
    pub lent: Option<(u32, LockId)>,
}

/// How a node was first reached.
#[derive(Clone, Copy, Debug)]
pub enum Pred {
    /// Directly by the binding.
    Entry,
    /// Through call number `call` of `caller`, a guess when the call graph says so.
    /// `caller` is the caller's index in [`Reach::order`].
    Call {
        caller: usize,
        call: usize,
        guessed: bool,
    },
}

/// Everything one binding reaches, with how: read for the binding's facts, then dropped. It
/// holds no map from nodes: on a large program the maps were the peak of the run's memory.
pub struct Reach {
    pub binding: usize,
    /// Nodes in the order they were reached (deterministic): first those reached through
    /// resolved calls only, then those that need a guessed call.
    pub order: Vec<Node>,
    /// How each node of `order` was first reached, at the same index.
    preds: Vec<Pred>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Edge {
    /// `GIL -> L`: waits for `L` with the GIL held.
    Wait(LockId),
    /// `L -> GIL`: acquires the GIL while holding `L`.
    Acquire(LockId),
    /// `L -> GIL`: runs Python code while holding `L` (and the GIL).
    RunsPython(LockId),
}

impl Edge {
    pub fn lock(&self) -> LockId {
        match *self {
            Edge::Wait(lock) | Edge::Acquire(lock) | Edge::RunsPython(lock) => lock,
        }
    }
}

/// One place that adds an edge, with the path from a binding to it.
pub struct Witness {
    pub at: Span,
    pub function: FnId,
    /// What happens at `at`: "`std::call_once` waits", "`py::module_::import` is called".
    pub what: String,
    pub trace: Vec<Step>,
    /// Every binding whose paths add this edge here.
    pub bindings: BTreeSet<usize>,
    /// For an edge that takes the GIL while holding a lock (explicitly or by running Python):
    /// the region on `trace` that holds the lock, in this function or in a caller.
    pub holder: Option<Span>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lock {
    pub kind: LockKind,
    pub name: String,
}

impl Lock {
    /// The lock `region` holds.
    fn of(region: &LockRegion) -> Lock {
        Lock {
            kind: region.kind.clone(),
            name: region.lock.clone(),
        }
    }

    /// "once flag `init_flag`", for messages.
    pub fn describe(&self) -> String {
        match self.kind {
            LockKind::Once => format!("once flag `{}`", self.name),
            LockKind::StaticInit => format!("the initialisation guard of static `{}`", self.name),
            LockKind::Mutex => format!("mutex `{}`", self.name),
            LockKind::SharedRead => format!("lock `{}` (read)", self.name),
            LockKind::Lazy => format!("lazy static `{}`", self.name),
            LockKind::Thread => {
                // `ns::f::worker`, or `ns::f::par_iter@12` for threads started by a call.
                let name = self.name.rsplit("::").next().unwrap_or(&self.name);
                match name.split_once('@') {
                    Some((call, line)) => format!("the threads started by `{call}` at line {line}"),
                    None => format!("thread `{name}`"),
                }
            }
            LockKind::Condvar => format!("condition variable `{}`", self.name),
            LockKind::Channel => format!("rendezvous channel `{}`", self.name),
            LockKind::Atomic => format!("atomic `{}`", self.name),
            LockKind::Barrier => format!("barrier `{}`", self.name),
            LockKind::Pool => format!("pool `{}`", self.name),
        }
    }
}

pub struct Facts {
    /// Every use of the Python API reached with the GIL released, keyed by `(function, site,
    /// index in its py_uses)`, with the path that follows the fewest guessed calls.
    pub released_uses: BTreeMap<(FnId, Span, usize), ReleasedUse>,
    pub locks: Vec<Lock>,
    /// The locks of each name, in id order: only locks of one name block one another.
    namesakes: FxHashMap<String, Vec<LockId>>,
    held_sets: Vec<Vec<LockId>>,
    /// For each edge, its witnesses by site, in site order.
    pub edges: BTreeMap<Edge, BTreeMap<Span, Witness>>,
    /// For each lock, every region that holds it while the GIL is taken (an `Acquire` or a
    /// `RunsPython` edge), with one path through it, in region order. A lock held in a shared
    /// helper's callers takes the GIL back at one site for many of them: each caller's region is
    /// a cycle of its own, and fixing one of them must change the report.
    pub holders: BTreeMap<LockId, BTreeMap<Span, Witness>>,
}

/// A use of the Python API reached with the GIL released: the first binding whose path to it
/// follows the fewest guessed calls, that path, and every other binding that reaches it so.
pub struct ReleasedUse {
    pub binding: usize,
    pub trace: Vec<Step>,
    pub others: Vec<usize>,
}

/// What exploring a binding needs: the program, and the locks and sets of held locks its nodes
/// name, numbered as they are first met.
struct Walker<'p> {
    program: &'p Program,
    graph: &'p CallGraph,
    /// See [`Walker::filled_at_import`].
    filled_at_import: &'p FxHashSet<Lock>,
    lock_ids: FxHashMap<Lock, LockId>,
    locks: Vec<Lock>,
    held_ids: FxHashMap<Vec<LockId>, usize>,
    held_sets: Vec<Vec<LockId>>,
}

struct Builder<'p> {
    walker: Walker<'p>,
    edges: BTreeMap<Edge, BTreeMap<Span, Witness>>,
    holders: BTreeMap<LockId, BTreeMap<Span, Witness>>,
    released_uses: BTreeMap<(FnId, Span, usize), ReleasedUse>,
}

impl Facts {
    pub fn build(program: &Program, graph: &CallGraph) -> Self {
        Self::build_visiting(program, graph, drop)
    }

    /// Builds the facts, handing each binding's [`Reach`] to `visit` once its facts are taken.
    /// A run keeps none: on a large program every binding's reach together was a fifth of the
    /// run's peak memory.
    ///
    /// The bindings are explored in parallel, each by a walker of its own, a batch at a time (a
    /// batch's reaches are held together); each reach then takes the numbers of the run's walker
    /// in binding order, and its facts are recorded, so the facts are those of exploring the
    /// bindings one after another.
    fn build_visiting(program: &Program, graph: &CallGraph, mut visit: impl FnMut(Reach)) -> Self {
        let none_filled = FxHashSet::default();
        let mut walker = Walker::new(program, graph, &none_filled);
        let filled_at_import = walker.filled_at_import();
        let mut builder = Builder {
            walker: Walker {
                filled_at_import: &filled_at_import,
                ..walker
            },
            edges: BTreeMap::new(),
            holders: BTreeMap::new(),
            released_uses: BTreeMap::new(),
        };
        let bindings: Vec<usize> = (0..program.bindings.len()).collect();
        for batch in bindings.chunks(rayon::current_num_threads() * BINDINGS_PER_THREAD) {
            let explored: Vec<(Reach, Walker)> = batch
                .par_iter()
                .with_max_len(1)
                .map(|&binding| {
                    let mut walker = Walker::new(program, graph, &filled_at_import);
                    (walker.explore(binding), walker)
                })
                .collect();
            for (mut reach, explorer) in explored {
                builder.walker.adopt(&mut reach, &explorer);
                builder.record_edges(&reach);
                builder.record_released_uses(&reach);
                visit(reach);
            }
        }
        let mut namesakes: FxHashMap<String, Vec<LockId>> = FxHashMap::default();
        for (id, lock) in builder.walker.locks.iter().enumerate() {
            namesakes.entry(lock.name.clone()).or_default().push(id);
        }
        Facts {
            released_uses: builder.released_uses,
            namesakes,
            locks: builder.walker.locks,
            held_sets: builder.walker.held_sets,
            edges: builder.edges,
            holders: builder.holders,
        }
    }

    pub fn held(&self, set: usize) -> &[LockId] {
        &self.held_sets[set]
    }

    /// The locks whose holders can block a wait for `lock`: itself, and for a reader-writer lock
    /// its other mode where the modes conflict.
    pub fn blockers(&self, lock: LockId) -> impl Iterator<Item = LockId> + '_ {
        let waited = &self.locks[lock];
        self.namesakes(lock)
            .filter(move |&held| waited.kind.blocked_by(&self.locks[held].kind))
    }

    /// Waits, with the GIL held, that a holder of `held` can block, with the lock each waits for.
    pub fn waits_blocked_by(&self, held: LockId) -> impl Iterator<Item = (LockId, &Witness)> {
        let held_kind = &self.locks[held].kind;
        self.namesakes(held)
            .filter(move |&waited| self.locks[waited].kind.blocked_by(held_kind))
            .flat_map(|waited| self.witnesses(Edge::Wait(waited)).map(move |w| (waited, w)))
    }

    /// The locks named as `lock` is, itself included, in id order.
    fn namesakes(&self, lock: LockId) -> impl Iterator<Item = LockId> + '_ {
        self.namesakes[&self.locks[lock].name].iter().copied()
    }

    pub fn witnesses(&self, edge: Edge) -> impl Iterator<Item = &Witness> {
        self.edges.get(&edge).into_iter().flat_map(|w| w.values())
    }

    /// The regions holding `lock` while the GIL is taken, each with a path through it.
    pub fn holders(&self, lock: LockId) -> impl Iterator<Item = &Witness> {
        self.holders.get(&lock).into_iter().flat_map(|h| h.values())
    }
}

impl<'p> Walker<'p> {
    /// A walker that has met no lock yet: the empty set of held locks is set 0.
    fn new(
        program: &'p Program,
        graph: &'p CallGraph,
        filled_at_import: &'p FxHashSet<Lock>,
    ) -> Self {
        let mut walker = Walker {
            program,
            graph,
            filled_at_import,
            lock_ids: FxHashMap::default(),
            locks: Vec::new(),
            held_ids: FxHashMap::default(),
            held_sets: Vec::new(),
        };
        walker.held_set(Vec::new());
        walker
    }

    /// Renumbers `reach`, explored by `explorer`, with this walker's locks and sets, numbering
    /// those it has not met in the order `explorer` met them: as if this walker had explored it.
    fn adopt(&mut self, reach: &mut Reach, explorer: &Walker) {
        let locks: Vec<LockId> = explorer
            .locks
            .iter()
            .map(|lock| self.lock_id(lock.kind.clone(), &lock.name))
            .collect();
        let sets: Vec<usize> = explorer
            .held_sets
            .iter()
            .map(|set| self.held_set(set.iter().map(|&lock| locks[lock]).collect()))
            .collect();
        for node in &mut reach.order {
            node.held = sets[node.held];
            if let Some((_, lock)) = &mut node.lent {
                *lock = locks[*lock];
            }
        }
    }

    fn lock_id(&mut self, kind: LockKind, name: &str) -> LockId {
        let lock = Lock {
            kind,
            name: name.to_string(),
        };
        if let Some(&id) = self.lock_ids.get(&lock) {
            return id;
        }
        self.locks.push(lock.clone());
        self.lock_ids.insert(lock, self.locks.len() - 1);
        self.locks.len() - 1
    }

    fn held_set(&mut self, mut locks: Vec<LockId>) -> usize {
        locks.sort_unstable();
        locks.dedup();
        if let Some(&id) = self.held_ids.get(&locks) {
            return id;
        }
        self.held_sets.push(locks.clone());
        self.held_ids.insert(locks, self.held_sets.len() - 1);
        self.held_sets.len() - 1
    }

    /// The once cells and lazy statics that a module's initialiser fills, on a path of calls
    /// that are no guess: the initialiser runs at import, before any other binding of the module
    /// can be called, so every later use finds them filled, and nobody waits for them or runs
    /// their initialiser again (a `static DEFER: OnceCell<..>` that `#[pymodule]` fills first).
    fn filled_at_import(&mut self) -> FxHashSet<Lock> {
        let mut filled = FxHashSet::default();
        let inits =
            (0..self.program.bindings.len()).filter(|&b| self.program.bindings[b].module_init);
        for binding in inits.collect::<Vec<_>>() {
            let reach = self.explore(binding);
            let mut sure: Vec<bool> = Vec::with_capacity(reach.order.len());
            for (node, pred) in reach.order.iter().zip(&reach.preds) {
                let node_sure = match *pred {
                    Pred::Entry => true,
                    Pred::Call {
                        caller, guessed, ..
                    } => !guessed && sure[caller],
                };
                sure.push(node_sure);
                if !node_sure {
                    continue;
                }
                let regions = &self.program.functions[node.function].lock_regions;
                filled.extend(
                    regions
                        .iter()
                        .filter(|r| r.kind.is_initialisation())
                        .map(Lock::of),
                );
            }
        }
        filled
    }

    /// Whether another thread can hold or wait for the lock of `region` while `node` runs: not
    /// when it is a field of an object that is not yet published, nor when it is a once cell
    /// filled at import (see [`Walker::filled_at_import`]).
    fn contended(&self, region: &LockRegion, node: Node) -> bool {
        // Asked for every region at every call: the set is looked up only for the kinds it holds.
        let filled_at_import =
            region.kind.is_initialisation() && self.filled_at_import.contains(&Lock::of(region));
        !(region.member && node.unpublished || filled_at_import)
    }

    /// The set of locks held at `offset` in `node`'s function.
    fn held_at(&mut self, node: Node, offset: u32) -> usize {
        // Most functions hold no lock of their own: their callers' set, already interned.
        if node.lent.is_none()
            && self.program.functions[node.function]
                .lock_regions
                .is_empty()
        {
            return node.held;
        }
        let locks = self.locks_at(node, offset);
        self.held_set(locks)
    }

    /// The locks held at `offset` in `node`'s function.
    fn locks_at(&mut self, node: Node, offset: u32) -> Vec<LockId> {
        let mut locks = self.locks_where(node, |r| r.scope.contains(&offset));
        if let Some((param, lock)) = node.lent
            && self.program.functions[node.function]
                .unlocked_params
                .iter()
                .any(|(p, range)| *p == param && range.contains(&offset))
        {
            locks.retain(|&held| held != lock);
        }
        locks
    }

    /// The lock that call `call` of `caller` lends `callee` as a guard the callee unlocks, with
    /// the parameter.
    fn lent_lock(&mut self, caller: FnId, call: usize, callee: FnId) -> Option<(u32, LockId)> {
        let program = self.program;
        let unlocked = &program.functions[callee].unlocked_params;
        let (param, region) = program.functions[caller]
            .lent_guards(call)
            .find(|(argument, _)| unlocked.iter().any(|(p, _)| p == argument))?;
        Some((param, self.lock_id(region.kind.clone(), &region.lock)))
    }

    /// The locks held by `node`'s callers and those of its function's regions that `keep`.
    fn locks_where(&mut self, node: Node, keep: impl Fn(&LockRegion) -> bool) -> Vec<LockId> {
        let f = &self.program.functions[node.function];
        let mut locks = self.held_sets[node.held].clone();
        let regions: Vec<(LockKind, String)> = f
            .lock_regions
            .iter()
            .filter(|r| keep(r) && self.contended(r, node))
            .map(|r| (r.kind.clone(), r.lock.clone()))
            .collect();
        locks.extend(
            regions
                .into_iter()
                .map(|(kind, name)| self.lock_id(kind, &name)),
        );
        locks.sort_unstable();
        locks.dedup();
        locks
    }

    /// The region holding `lock` at `offset` of node `reach.order[index]`: the innermost one of
    /// its function around `offset`, else the one around the call of the nearest caller on its
    /// path that holds it.
    fn holder_region(
        &self,
        reach: &Reach,
        index: usize,
        lock: LockId,
        offset: u32,
    ) -> Option<Span> {
        let lock = &self.locks[lock];
        let around = |function: FnId, offset: u32| {
            self.program.functions[function]
                .lock_regions
                .iter()
                .filter(|r| r.kind == lock.kind && r.lock == lock.name && r.scope.contains(&offset))
                .max_by_key(|r| r.scope.start)
                .map(|r| r.span)
        };
        around(reach.order[index].function, offset).or_else(|| {
            reach
                .path_to(index)
                .iter()
                .rev()
                .find_map(|&(caller, call, _)| {
                    around(
                        caller.function,
                        self.program.functions[caller.function].calls[call]
                            .span
                            .start,
                    )
                })
        })
    }

    fn explore(&mut self, binding: usize) -> Reach {
        let entry = self.program.bindings[binding].entry;
        let mut reach = Reach {
            binding,
            order: Vec::new(),
            preds: Vec::new(),
        };
        let mut seen = FxHashSet::default();
        for &function in self.graph.binding_targets(binding) {
            let node = Node {
                function,
                state: entry,
                held: 0,
                entered_from: None,
                unpublished: false,
                lent: None,
            };
            reach.add(&mut seen, node, Pred::Entry);
        }
        // Every node is reached first along a path with the fewest guessed calls (a breadth-first
        // search per number of guesses), so that its path shows no guess when it has one without,
        // and one guess rather than two: each guess may invent the path.
        let mut deferred = Vec::new();
        // The guessed calls on the paths of the nodes being visited.
        let mut guesses = 0;
        // Nodes are visited in the order they are reached: `reach.order[visited..]` is the queue.
        let mut visited = 0;
        loop {
            while let Some(&node) = reach.order.get(visited) {
                let index = visited;
                visited += 1;
                let (program, graph) = (self.program, self.graph);
                let f = &program.functions[node.function];
                for (call, site) in f.calls.iter().enumerate() {
                    let at = site.span.start;
                    let state = f.gil_state_at(at, node.state);
                    let held = self.held_at(node, at);
                    let passed;
                    let callees = match (&site.target, node.entered_from) {
                        (&CallTarget::Param(index), Some((caller, outer))) => {
                            passed = graph.passed_lambdas(caller, outer, index);
                            &passed[..]
                        }
                        _ => graph.callees(node.function, call),
                    };
                    // A new thread starts without the GIL and without the caller's locks. One that
                    // its starter waits for (a parallel iterator's workers, a joined thread) is
                    // part of the starter's work: whoever waits for the starter, itself a thread
                    // (`pool.install(|| xs.par_iter()..)`), waits for it too.
                    let (state, held) = match f.spawns(call) {
                        Some(thread) => {
                            let waited = f
                                .lock_regions
                                .iter()
                                .any(|r| r.kind == LockKind::Thread && r.lock == thread && r.waits);
                            let mut threads = vec![self.lock_id(LockKind::Thread, thread)];
                            if waited {
                                threads.extend(
                                    self.held_sets[held]
                                        .iter()
                                        .filter(|&&l| self.locks[l].kind == LockKind::Thread),
                                );
                            }
                            (GilState::Released, self.held_set(threads))
                        }
                        None => (state, held),
                    };
                    for &function in callees {
                        // A closure written in a function that calls its parameters sees the same
                        // parameters: it inherits the call site that entered that function.
                        let closure = matches!(site.target, CallTarget::Direct(_))
                            && self.program.functions[function].kind == FunctionKind::Lambda;
                        let entered_from = match (closure, node.entered_from) {
                            (true, Some(from)) => Some(from),
                            _ => self
                                .graph
                                .calls_parameters(function)
                                .then_some((node.function, call)),
                        };
                        // A call on `this` (written or not) from a method on an unpublished object
                        // runs on that object too.
                        let on_this = site.target.on_own_object()
                            && self.program.functions[function].kind.is_method();
                        let next = Node {
                            function,
                            state,
                            held,
                            entered_from,
                            unpublished: f.unpublished_receiver(call)
                                || node.unpublished && on_this,
                            lent: self.lent_lock(node.function, call, function),
                        };
                        if self.graph.guessed(node.function, call) {
                            if guesses < MAX_GUESSES_PER_PATH {
                                deferred.push((next, index, call));
                            }
                        } else {
                            let pred = Pred::Call {
                                caller: index,
                                call,
                                guessed: false,
                            };
                            reach.add(&mut seen, next, pred);
                        }
                    }
                }
            }
            if deferred.is_empty() {
                break;
            }
            guesses += 1;
            for (next, caller, call) in std::mem::take(&mut deferred) {
                let pred = Pred::Call {
                    caller,
                    call,
                    guessed: true,
                };
                reach.add(&mut seen, next, pred);
            }
        }
        reach
    }
}

impl Builder<'_> {
    /// Records the uses of the Python API that `reach` makes with the GIL released. A test that
    /// uses Python without the GIL fails when it runs (see `Binding::test`): its uses are not
    /// recorded. What a lambda the project keeps in a container captured is destroyed where the
    /// project drops the entry, which is not followed, not after each run of its body.
    fn record_released_uses(&mut self, reach: &Reach) {
        let binding = reach.binding;
        if self.walker.program.bindings[binding].test {
            return;
        }
        for (at, &node) in reach.order.iter().enumerate() {
            let (function, state) = (node.function, node.state);
            let f = &self.walker.program.functions[function];
            for (index, py_use) in f.py_uses.iter().enumerate() {
                if !py_use.needs_gil_check
                    || py_use.at_destruction && self.walker.graph.kept_for_later(function)
                    || f.gil_state_at(py_use.span.start, state) != GilState::Released
                {
                    continue;
                }
                let key = (function, py_use.span, index);
                match self.released_uses.get_mut(&key) {
                    // The path with the fewest guessed calls is the one to show.
                    Some(known) if reach.guesses(at) < guesses(&known.trace) => {
                        let trace = trace_to(self.walker.program, reach, at, py_use.span.start);
                        if known.binding != binding {
                            known.others.retain(|&b| b != binding);
                            known.others.push(known.binding);
                            known.binding = binding;
                        }
                        known.trace = trace;
                    }
                    Some(known) if known.binding != binding && !known.others.contains(&binding) => {
                        known.others.push(binding)
                    }
                    Some(_) => {}
                    None => {
                        let trace = trace_to(self.walker.program, reach, at, py_use.span.start);
                        self.released_uses.insert(
                            key,
                            ReleasedUse {
                                binding,
                                trace,
                                others: Vec::new(),
                            },
                        );
                    }
                }
            }
        }
    }

    fn record_edges(&mut self, reach: &Reach) {
        for (index, &node) in reach.order.iter().enumerate() {
            let Node {
                function, state, ..
            } = node;
            let f = &self.walker.program.functions[function];
            let mut found: Vec<(Edge, Span, String)> = Vec::new();
            for region in &f.lock_regions {
                if region.waits
                    && self.walker.contended(region, node)
                    && f.gil_state_at(region.span.start, state) == GilState::Held
                {
                    let lock = self.walker.lock_id(region.kind.clone(), &region.lock);
                    let what = format!("waits for {}", self.walker.locks[lock].describe());
                    found.push((Edge::Wait(lock), region.span, what));
                    // A party holding the GIL at the barrier arrives only once the GIL is free:
                    // the other parties wait for it as for work that needs the GIL.
                    if region.kind == LockKind::Barrier {
                        let what = format!(
                            "reaches {} holding the GIL",
                            self.walker.locks[lock].describe()
                        );
                        found.push((Edge::Acquire(lock), region.span, what));
                    }
                    // The item leased here goes to an object that Python frees: it comes back
                    // to the pool only when the object is freed, which needs the GIL.
                    if region.kind == LockKind::Pool {
                        let what = format!(
                            "leases an item of {} to an object that Python frees",
                            self.walker.locks[lock].describe()
                        );
                        found.push((Edge::Acquire(lock), region.span, what));
                    }
                }
            }
            for (i, switch) in f.gil_switches.iter().enumerate() {
                if switch.to == GilState::Held
                    && gil_state_without(f, i, switch.span.start, state) == GilState::Released
                {
                    for lock in self.walker.locks_at(node, switch.span.start) {
                        let what = format!("takes the GIL with {}", switch.what);
                        found.push((Edge::Acquire(lock), switch.span, what));
                    }
                }
                // The end of a release (a `gil_scoped_release` block, a `detach` closure) takes
                // the GIL back, still holding every lock taken before the release.
                if switch.to == GilState::Released
                    && gil_state_without(f, i, switch.span.start, state) == GilState::Held
                {
                    let end = switch.scope.end.saturating_sub(1);
                    let released_at = switch.span.start;
                    let locks = self.walker.locks_where(node, |r| {
                        r.scope.start < released_at && r.scope.contains(&end)
                    });
                    for lock in locks {
                        let what = format!("takes the GIL back at the end of {}", switch.what);
                        found.push((Edge::Acquire(lock), switch.span, what));
                    }
                }
            }
            for py_use in &f.py_uses {
                if py_use.runs_code && f.gil_state_at(py_use.span.start, state) == GilState::Held {
                    for lock in self.walker.locks_at(node, py_use.span.start) {
                        found.push((Edge::RunsPython(lock), py_use.span, py_use.what.clone()));
                    }
                }
            }
            // A test's own lock orders are the library's (reached from the bindings too): from
            // it, only waits for the work of other threads count (see `Binding::test`).
            if self.walker.program.bindings[reach.binding].test {
                found.retain(|(edge, _, _)| self.walker.locks[edge.lock()].kind.is_work());
            }
            for (edge, at, what) in found {
                let holder = match edge {
                    Edge::Wait(_) => None,
                    Edge::Acquire(lock) | Edge::RunsPython(lock) => {
                        self.walker.holder_region(reach, index, lock, at.start)
                    }
                };
                let witness = || Witness {
                    at,
                    function,
                    what: what.clone(),
                    trace: trace_to(self.walker.program, reach, index, at.start),
                    bindings: BTreeSet::from([reach.binding]),
                    holder,
                };
                if let Some(region) = holder {
                    let regions = self.holders.entry(edge.lock()).or_default();
                    match regions.get_mut(&region) {
                        Some(known) => {
                            known.bindings.insert(reach.binding);
                        }
                        None => {
                            regions.insert(region, witness());
                        }
                    }
                }
                let sites = self.edges.entry(edge).or_default();
                match sites.get_mut(&at) {
                    Some(known) => {
                        known.bindings.insert(reach.binding);
                        if reach.guesses(index) < guesses(&known.trace) {
                            known.trace = trace_to(self.walker.program, reach, index, at.start);
                            known.holder = holder;
                        }
                    }
                    None => {
                        sites.insert(at, witness());
                    }
                }
            }
        }
    }
}

/// Whether the analysis reads the text of this model's file: a once region's call is quoted in
/// the path (see [`trace_to`]).
pub fn reads_text(model: &crate::model::FileModel) -> bool {
    model
        .functions
        .iter()
        .any(|f| f.lock_regions.iter().any(|r| r.kind == LockKind::Once))
}

/// The GIL state at `offset` ignoring switch `skip`: what a `gil_scoped_acquire` finds.
fn gil_state_without(f: &Function, skip: usize, offset: u32, entry: GilState) -> GilState {
    f.gil_switches
        .iter()
        .enumerate()
        .filter(|(i, s)| *i != skip && s.scope.contains(&offset))
        .max_by_key(|(_, s)| s.scope.start)
        .map_or(entry, |(_, s)| s.to)
}

impl Reach {
    /// Adds `node`, reached as `pred` says, unless it was reached before (it is in `seen`).
    fn add(&mut self, seen: &mut FxHashSet<Node>, node: Node, pred: Pred) {
        if seen.insert(node) {
            self.order.push(node);
            self.preds.push(pred);
        }
    }

    /// How many guessed calls the path to node `order[index]` follows.
    pub fn guesses(&self, index: usize) -> usize {
        self.path_to(index)
            .iter()
            .filter(|&&(_, _, guessed)| guessed)
            .count()
    }

    /// The calls from the binding to node `order[index]`: `(caller, call index, guessed)`,
    /// outermost first.
    pub fn path_to(&self, index: usize) -> Vec<(Node, usize, bool)> {
        let mut path = Vec::new();
        let mut current = index;
        while let Pred::Call {
            caller,
            call,
            guessed,
        } = self.preds[current]
        {
            path.push((self.order[caller], call, guessed));
            current = caller;
        }
        path.reverse();
        path
    }
}

/// The path from the binding to `offset` in `node`'s function: the binding, every call with the
/// GIL release and the locks in effect there, and what is in effect at `offset`.
pub fn trace_to(program: &Program, reach: &Reach, index: usize, offset: u32) -> Vec<Step> {
    let node = reach.order[index];
    let binding = &program.bindings[reach.binding];
    let mut steps = vec![Step {
        guessed: false,
        span: binding
            .guard
            .as_ref()
            .map_or(binding.span, |(span, _)| *span),
        function: binding.name.clone(),
        note: match &binding.guard {
            Some((_, note)) => note.clone(),
            None => format!(
                "`{}` is bound here and entered with the GIL held",
                binding.name
            ),
        },
    }];
    for (caller, call, guessed) in reach.path_to(index) {
        let (f, state) = (&program.functions[caller.function], caller.state);
        let site = &f.calls[call];
        context_steps(program, f, state, site.span.start, &mut steps);
        let callee = match &site.target {
            CallTarget::Named { path, .. } => format!("`{path}`"),
            CallTarget::Param(_) => "the function passed in".to_string(),
            CallTarget::Direct(id) => match program.functions[*id].kind {
                FunctionKind::Lambda => match program.file(site.span.file).language {
                    Language::Cpp => "the lambda".to_string(),
                    // The front-end's names of its Rust lambdas: closures, async blocks, and
                    // the event loop that runs a Python coroutine.
                    Language::Rust => match program.functions[*id].name.as_str() {
                        "{async}" => "the async block".to_string(),
                        "{event loop}" => "the event loop".to_string(),
                        _ => "the closure".to_string(),
                    },
                },
                _ => format!("`{}`", program.functions[*id].qualname),
            },
        };
        let note = match guessed {
            true => format!("calls {callee} (guessed)"),
            false => format!("calls {callee}"),
        };
        steps.push(Step {
            span: site.span,
            function: f.qualname.clone(),
            note,
            guessed,
        });
    }
    context_steps(
        program,
        &program.functions[node.function],
        node.state,
        offset,
        &mut steps,
    );
    steps
}

/// Steps for what is in effect at `offset`: the switch that changed the GIL state there, and the
/// lock regions around it.
fn context_steps(
    program: &Program,
    f: &Function,
    entry: GilState,
    offset: u32,
    steps: &mut Vec<Step>,
) {
    let switch = f
        .gil_switches
        .iter()
        .filter(|s| s.scope.contains(&offset))
        .max_by_key(|s| s.scope.start);
    if let Some(switch) = switch
        && switch.to != entry
    {
        let note = match switch.to {
            GilState::Released => format!("the GIL is released here by {}", switch.what),
            GilState::Held => format!("the GIL is taken here by {}", switch.what),
        };
        steps.push(Step {
            guessed: false,
            span: switch.span,
            function: f.qualname.clone(),
            note,
        });
    }
    for region in f.locks_at(offset) {
        let note = match region.kind {
            LockKind::Once => format!(
                "inside `{}`, holding once flag `{}`",
                &program.file(region.span.file).text[region.span.range()],
                region.lock
            ),
            LockKind::Lazy => format!(
                "the first use of `{}` runs its initialiser, holding its lock",
                region.lock
            ),
            LockKind::StaticInit => {
                format!(
                    "initialising function-local static `{}`, holding its guard",
                    region.lock
                )
            }
            LockKind::Mutex => format!("holding mutex `{}`", region.lock),
            LockKind::SharedRead => format!("holding lock `{}` for reading", region.lock),
            LockKind::Thread => format!("runs as thread `{}`", region.lock),
            LockKind::Condvar => {
                format!("has not yet notified condition variable `{}`", region.lock)
            }
            LockKind::Channel => {
                format!(
                    "has not yet received from rendezvous channel `{}`",
                    region.lock
                )
            }
            LockKind::Atomic => format!("has not yet stored to atomic `{}`", region.lock),
            LockKind::Barrier => format!("has not yet reached barrier `{}`", region.lock),
            LockKind::Pool => format!("leases an item of pool `{}`", region.lock),
        };
        steps.push(Step {
            guessed: false,
            span: region.span,
            function: f.qualname.clone(),
            note,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{analyse, cpp, line_of};

    fn analyse_cpp(body: &str) -> (String, Program, Facts) {
        let text = cpp(body);
        let (program, facts) = analyse(&[("ext.cpp", &text)]);
        (text, program, facts)
    }

    /// As [`analyse_cpp`], with every binding's reach, which a run does not keep.
    fn explore_cpp(body: &str) -> (Program, Facts, Vec<Reach>) {
        let mut program = crate::test_support::program(&[("ext.cpp", &cpp(body))]);
        program.qualify_member_locks();
        let graph = CallGraph::build(&program);
        let mut reaches = Vec::new();
        let facts = Facts::build_visiting(&program, &graph, |reach| reaches.push(reach));
        (program, facts, reaches)
    }

    /// The reached functions of `reach`, by name, with the GIL state each was entered in.
    fn reached(program: &Program, reach: &Reach) -> Vec<(String, GilState)> {
        reach
            .order
            .iter()
            .map(|n| (program.functions[n.function].qualname.clone(), n.state))
            .collect()
    }

    fn line(program: &Program, span: Span) -> usize {
        program.file(span.file).line_col(span.start).0
    }

    /// Each edge with its sites' lines and the description of its lock.
    fn edges(program: &Program, facts: &Facts) -> Vec<(&'static str, String, usize)> {
        facts
            .edges
            .iter()
            .flat_map(|(edge, sites)| {
                let (kind, lock) = match *edge {
                    Edge::Wait(l) => ("wait", l),
                    Edge::Acquire(l) => ("acquire", l),
                    Edge::RunsPython(l) => ("runs-python", l),
                };
                sites
                    .keys()
                    .map(move |&at| (kind, facts.locks[lock].describe(), line(program, at)))
            })
            .collect()
    }

    #[test]
    fn bindings_are_explored_breadth_first_in_their_entry_state() {
        let (program, facts, reaches) = explore_cpp(
            "void leaf() {}\n\
             void middle() { leaf(); }\n\
             void top() { middle(); leaf(); }\n\
             void released() { py::gil_scoped_release r; middle(); }\n\
             PYBIND11_MODULE(m, mod) {\n\
               mod.def(\"top\", &top);\n\
               mod.def(\"guarded\", &top, py::call_guard<py::gil_scoped_release>());\n\
               mod.def(\"released\", &released);\n\
             }\n",
        );
        use GilState::{Held, Released};
        let named = |list: &[(&str, GilState)]| -> Vec<(String, GilState)> {
            list.iter().map(|&(n, s)| (n.to_string(), s)).collect()
        };
        assert_eq!(reaches.len(), 3);
        assert_eq!(
            reached(&program, &reaches[0]),
            named(&[("top", Held), ("middle", Held), ("leaf", Held)])
        );
        assert_eq!(
            reached(&program, &reaches[1]),
            named(&[("top", Released), ("middle", Released), ("leaf", Released)])
        );
        // The release inside `released` changes the state its callees are entered in.
        assert_eq!(
            reached(&program, &reaches[2]),
            named(&[("released", Held), ("middle", Released), ("leaf", Released)])
        );
        assert!(facts.edges.is_empty());
    }

    #[test]
    fn locks_are_numbered_as_met_binding_after_binding_on_any_number_of_threads() {
        // More bindings than a batch of four threads explores at once. Binding `i` takes its own
        // mutex, then the next binding's, and calls `h`, which takes the GIL back: the locks'
        // numbers follow the binding order, and `h` holds each mutex for two bindings, only where
        // each reach explored in parallel is renumbered, its sets of held locks too.
        let bindings = 4 * BINDINGS_PER_THREAD + 3;
        let mut body = String::from("void h() { py::gil_scoped_acquire gil; }\n");
        for i in 0..bindings {
            let next = (i + 1) % bindings;
            body.push_str(&format!(
                "std::mutex mu{i};\n\
                 void f{i}() {{ std::lock_guard<std::mutex> a(mu{i}); \
                 std::lock_guard<std::mutex> b(mu{next}); h(); }}\n",
            ));
        }
        body.push_str("PYBIND11_MODULE(m, mod) {\n");
        for i in 0..bindings {
            body.push_str(&format!(
                "  mod.def(\"f{i}\", &f{i}, py::call_guard<py::gil_scoped_release>());\n"
            ));
        }
        body.push_str("}\n");
        let mut program = crate::test_support::program(&[("ext.cpp", &cpp(&body))]);
        program.qualify_member_locks();
        let graph = CallGraph::build(&program);
        for threads in [1, 4] {
            let pool = crate::thread_pool(Some(threads)).expect("a pool");
            let facts = pool.install(|| Facts::build(&program, &graph));
            let names: Vec<&str> = facts.locks.iter().map(|l| l.name.as_str()).collect();
            let expected: Vec<String> = (0..bindings).map(|i| format!("mu{i}")).collect();
            assert_eq!(names, expected, "{threads} threads");
            for lock in 0..bindings {
                let holders: Vec<BTreeSet<&str>> = facts
                    .witnesses(Edge::Acquire(lock))
                    .map(|w| {
                        let names = w.bindings.iter();
                        names.map(|&b| program.bindings[b].name.as_str()).collect()
                    })
                    .collect();
                let previous = format!("f{}", (lock + bindings - 1) % bindings);
                let own = format!("f{lock}");
                assert_eq!(
                    holders,
                    [BTreeSet::from([previous.as_str(), own.as_str()])],
                    "mu{lock}, {threads} threads"
                );
            }
        }
    }

    #[test]
    fn the_lock_order_graph_has_waits_acquires_and_python_runs() {
        let (text, program, facts) = analyse_cpp(
            "std::mutex mu;\n\
             void wait_held() { std::lock_guard<std::mutex> lock(mu); }  // wait\n\
             void acquire_under(py::object f) {\n\
               std::lock_guard<std::mutex> lock(mu);\n\
               py::gil_scoped_acquire gil;  // acquire\n\
             }\n\
             void run_under(py::object f) {\n\
               std::lock_guard<std::mutex> lock(mu);  // runs-wait\n\
               f();  // python\n\
             }\n\
             PYBIND11_MODULE(m, mod) {\n\
               mod.def(\"wait_held\", &wait_held);\n\
               mod.def(\"acquire_under\", &acquire_under, py::call_guard<py::gil_scoped_release>());\n\
               mod.def(\"run_under\", &run_under);\n\
             }\n",
        );
        let mutex = "mutex `mu`".to_string();
        assert_eq!(
            edges(&program, &facts),
            [
                ("wait", mutex.clone(), line_of(&text, "// wait")),
                ("wait", mutex.clone(), line_of(&text, "// runs-wait")),
                ("acquire", mutex.clone(), line_of(&text, "// acquire")),
                ("runs-python", mutex, line_of(&text, "// python")),
            ]
        );
        assert_eq!(facts.locks.len(), 1);
        assert_eq!(facts.blockers(0).collect::<Vec<_>>(), [0]);
        assert_eq!(facts.waits_blocked_by(0).count(), 2);
        // The witness of the acquire: the binding's release, no call, what is in effect there (the
        // acquire itself is not yet).
        let acquire = facts.witnesses(Edge::Acquire(0)).next().unwrap();
        assert_eq!(acquire.bindings, BTreeSet::from([1]));
        let notes: Vec<&str> = acquire.trace.iter().map(|s| s.note.as_str()).collect();
        assert_eq!(
            notes,
            [
                "`acquire_under` is bound with `py::call_guard<py::gil_scoped_release>()`: the \
                 GIL is released on entry",
                "holding mutex `mu`",
            ]
        );
    }

    /// A thread starts without the GIL and without its starter's locks, holding only itself.
    #[test]
    fn a_thread_body_runs_released_holding_its_thread_lock() {
        let (program, facts, reaches) = explore_cpp(
            "#include <thread>\n\
             std::mutex mu;\n\
             void start() {\n\
               std::lock_guard<std::mutex> lock(mu);\n\
               std::thread t([] { py::print(1); });\n\
               t.join();\n\
             }\n\
             PYBIND11_MODULE(m, mod) { mod.def(\"start\", &start); }\n",
        );
        let reach = &reaches[0];
        let index = reach
            .order
            .iter()
            .position(|n| program.functions[n.function].kind == FunctionKind::Lambda)
            .expect("the thread's body is reached");
        let node = reach.order[index];
        assert_eq!(node.state, GilState::Released);
        let held: Vec<&Lock> = facts
            .held(node.held)
            .iter()
            .map(|&l| &facts.locks[l])
            .collect();
        assert_eq!(held.len(), 1, "{held:?}");
        assert_eq!(held[0].kind, LockKind::Thread);
        // The path to it: the binding, then the call that starts the thread.
        let path = reach.path_to(index);
        assert_eq!(path.len(), 1);
        assert_eq!(program.functions[path[0].0.function].qualname, "start");
    }

    #[test]
    fn locks_describe_themselves() {
        let lock = |kind, name: &str| Lock {
            kind,
            name: name.to_string(),
        };
        assert_eq!(lock(LockKind::Once, "flag").describe(), "once flag `flag`");
        assert_eq!(
            lock(LockKind::StaticInit, "cls").describe(),
            "the initialisation guard of static `cls`"
        );
        assert_eq!(lock(LockKind::Mutex, "m").describe(), "mutex `m`");
        assert_eq!(
            lock(LockKind::SharedRead, "rw").describe(),
            "lock `rw` (read)"
        );
        assert_eq!(
            lock(LockKind::Lazy, "CELL").describe(),
            "lazy static `CELL`"
        );
        assert_eq!(
            lock(LockKind::Thread, "ns::f::worker").describe(),
            "thread `worker`"
        );
        assert_eq!(
            lock(LockKind::Thread, "ns::f::par_iter@12").describe(),
            "the threads started by `par_iter` at line 12"
        );
        assert_eq!(
            lock(LockKind::Condvar, "cv").describe(),
            "condition variable `cv`"
        );
    }

    #[test]
    fn only_once_regions_make_the_analysis_read_a_file() {
        let knowledge = crate::knowledge::Knowledge::builtin();
        let model = |body: &str| {
            crate::frontend::extract(
                Language::Cpp,
                std::path::Path::new("ext.cpp"),
                &cpp(body),
                &knowledge,
            )
            .unwrap()
        };
        assert!(reads_text(&model(
            "std::once_flag flag;\nvoid f() { std::call_once(flag, [] {}); }\n"
        )));
        assert!(!reads_text(&model(
            "std::mutex mu;\nvoid f() { std::lock_guard<std::mutex> l(mu); }\n"
        )));
    }
}

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
//! A cheap scan of every C/C++ and Rust file ([`crate::frontend::scan`]) lists, as an
//! over-approximation, the functions and classes it may define and the names that may qualify
//! them. The seeds are parsed first; the names their models use select, through that index, the
//! next files to parse; and so on to a fixed point. The set reached does not depend on the order of
//! the work, so the output does not depend on the number of threads.
//!
//! Files of a language the scan does not read and files that could not be read (so that their
//! error is reported as before) are always kept. A file skipped here is still counted as checked.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

// Fast hashing: the pre-filter looks up names hundreds of thousands of times.
type HashMap<K, V> = FxHashMap<K, V>;
type HashSet<T> = FxHashSet<T>;

use crate::callgraph::{
    Lookup, MAX_UNTYPED_FANOUT, Scope, by_arity, in_enclosing_scopes, resolve_path, simple_bases,
};
use crate::frontend::Language;
use crate::frontend::cpp::scan::{Rewrites, is_keyword};
use crate::frontend::scan::{Definitions, Seeds, key, scan};
use crate::knowledge::Knowledge;
use crate::model::{
    CallTarget, FileModel, FnId, Function, FunctionKind, Receiver, last_segment, owner_of,
    split_path,
};

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

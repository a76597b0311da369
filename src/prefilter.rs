//! The pre-filter: decides, without parsing all of them, which files can change the findings, so
//! that only those are parsed. It is a scheduler around the call graph's own resolver.
//!
//! Every finding lies on a path that starts at a binding (an entry point from Python) and follows
//! calls that [`crate::callgraph`] resolves by name. So a file matters only if
//! 1. it may register a binding: it mentions, as a whole identifier, an entry point of the loaded
//!    [`Knowledge`] (`PYBIND11_MODULE`, `def`, `PyMethodDef`, a project's own wrapper macro,
//!    `#[pyfunction]`, `#[pymethods]`...) or, in C++, a GIL acquisition (`gil_scoped_acquire`: a
//!    destructor that takes the GIL is an entry point). These files are the *seeds*; or
//! 2. it may define a function or a class that the resolution of a call on such a path looks at.
//!
//! GIL releases, Python-API names and lock primitives are not seeds: they matter only on a path
//! from an entry point, and every function on such a path is found through (2).
//!
//! A cheap scan of every C/C++ and Rust file ([`crate::frontend::scan`]) lists, as an
//! over-approximation, the functions and classes it may define and the names that may qualify
//! them. The seeds are parsed first. Then, in rounds, every call reached from a binding is
//! resolved by [`crate::callgraph`]'s resolver over the files parsed so far ([`Partial`]); that
//! lookup notes each file the scan says could add to one of its answers. A call whose answers
//! noted nothing is decided, exactly as over the whole program, and its callees are reached; the
//! others wait for the files they noted, parsed in the next round. Answers that depend on the
//! whole program (how many methods have a name, how many functions end with a path) are settled
//! last, when nothing else is left to parse, since the files parsed meanwhile often settle them.
//! The set reached does not depend on the order of the work, so the output does not depend on
//! the number of threads.
//!
//! Files of a language the scan does not read and files that could not be read (so that their
//! error is reported as before) are always kept. A file skipped here is still counted as checked.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

// Fast hashing: the pre-filter looks up names hundreds of thousands of times.
type HashMap<K, V> = FxHashMap<K, V>;
type HashSet<T> = FxHashSet<T>;

use crate::callgraph::{Lookup, Scope, qualified_names, resolve_call};
use crate::frontend::Language;
use crate::frontend::cpp::scan::Rewrites;
use crate::frontend::scan::{Definitions, Seeds, key, scan};
use crate::knowledge::Knowledge;
use crate::model::{
    CallTarget, FieldTypes, FileModel, FnId, Function, FunctionKind, add_fields, field_types_in,
    is_translation_unit, last_segment, owner_of, split_path,
};

/// What the pre-filter reads in one file's text: whether the file is kept from the start, and
/// what it may define.
pub type FileScan = (bool, Option<Definitions>);

/// What the pre-filter reads in each file's text, so that the texts need not be kept while files
/// are modelled.
pub struct Scans {
    files: Vec<FileScan>,
}

impl Scans {
    /// The scans of the files, in their order.
    pub fn new(files: Vec<FileScan>) -> Self {
        Scans { files }
    }
}

/// Scans files' texts (see [`Seeds`] and [`Definitions`]) under the knowledge it was made with.
pub struct Scanner {
    seeds: Seeds,
    rewrites: Rewrites,
}

impl Scanner {
    pub fn new(knowledge: &Knowledge) -> Self {
        Scanner {
            seeds: Seeds::new(knowledge),
            rewrites: Rewrites::new(knowledge),
        }
    }

    /// The scan of one file's text; a file that could not be read is kept (its error is
    /// reported as before).
    pub fn scan(&self, path: &Path, language: Language, text: Option<&str>) -> FileScan {
        match text.and_then(|text| Some((text, scan(language, path, text, &self.rewrites)?))) {
            Some((text, scan)) => (self.seeds.in_text(path, text, language), Some(scan)),
            None => (true, None),
        }
    }
}

/// The files that may define a function of one name, in order.
#[derive(Default)]
struct Definers {
    files: Vec<usize>,
    /// Those of them that are C/C++ files (no module path), whose names qualify a definition.
    unscoped: Vec<usize>,
}

/// The scans of every file, indexed by name: which files may define what.
struct Index {
    functions: HashMap<String, Definers>,
    /// Base name -> names of the classes written with it as a base, over every file.
    subclasses: HashMap<String, Vec<String>>,
    /// Class name -> each file that may define it, with the bases written there.
    heads: HashMap<String, Vec<(usize, Vec<String>)>>,
    /// Per file: the names that may qualify its definitions.
    scopes: Vec<NameHashes>,
    /// Per Rust file: the module path the front-end gives it.
    modules: Vec<Option<Vec<String>>>,
    /// Module path (`a::b`) -> the Rust files the front-end gives it.
    files_of_module: HashMap<String, Vec<usize>>,
}

impl Index {
    fn new(scans: Vec<Option<Definitions>>) -> Self {
        let mut index = Index {
            functions: HashMap::default(),
            subclasses: HashMap::default(),
            heads: HashMap::default(),
            scopes: Vec::with_capacity(scans.len()),
            modules: Vec::with_capacity(scans.len()),
            files_of_module: HashMap::default(),
        };
        for (i, scan) in scans.into_iter().enumerate() {
            let Some(scan) = scan else {
                index.scopes.push(NameHashes::default());
                index.modules.push(None);
                continue;
            };
            if let Some(module) = &scan.module {
                let path = module.join("::");
                index.files_of_module.entry(path).or_default().push(i);
            }
            for name in scan.functions {
                let definers = index.functions.entry(name).or_default();
                definers.files.push(i);
                if scan.module.is_none() {
                    definers.unscoped.push(i);
                }
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
            index.scopes.push(NameHashes::new(&scan.scopes));
            index.modules.push(scan.module);
        }
        index
    }

    /// `class` and every class that may derive from it; none when no class has that name or
    /// base.
    fn derived(&self, class: &str) -> HashSet<String> {
        if !self.heads.contains_key(class) && !self.subclasses.contains_key(class) {
            return HashSet::default();
        }
        closure(class, |c| self.subclasses.get(c).into_iter().flatten())
    }

    /// `class` and every name in the base clauses of its definitions, transitively.
    fn ancestors(&self, class: &str) -> HashSet<String> {
        closure(class, |c| {
            self.heads
                .get(c)
                .into_iter()
                .flatten()
                .flat_map(|(_, bases)| bases)
        })
    }

    /// Whether a definition in file `file` may be qualified by `owner` (`a::B`; empty for none):
    /// in Rust, the file's module path and then names the file may nest in it; otherwise, names
    /// the file may qualify a definition with.
    fn may_qualify(&self, file: usize, owner: &str) -> bool {
        let mut segments = owner.split("::").filter(|s| !s.is_empty());
        if let Some(module) = &self.modules[file]
            && !module.iter().all(|m| segments.next() == Some(m.as_str()))
        {
            return false;
        }
        segments.all(|s| self.scopes[file].contains(key(s)))
    }

    /// The files that may define a function with this qualified name, of those `wanted`: the
    /// Rust files whose module path starts it, the C/C++ files whose names may qualify it.
    fn qualname_definers(&self, qualname: &str, wanted: impl Fn(usize) -> bool) -> Vec<usize> {
        let (owner, name) = split_path(qualname).unwrap_or(("", qualname));
        let Some(definers) = self.functions.get(key(name)) else {
            return Vec::new();
        };
        // Most names looked up are scope and `using` guesses that nothing defines, and most are
        // looked up once every file that may define their last segment is parsed: then none is
        // wanted, and the qualifiers need not be matched.
        if !definers.files.iter().any(|&j| wanted(j)) {
            return Vec::new();
        }
        let defines = |j: &usize| definers.files.binary_search(j).is_ok();
        let qualifiers = qualifier_hashes(owner.split("::"));
        let mut files: Vec<usize> = definers
            .unscoped
            .iter()
            .copied()
            .filter(|&j| wanted(j) && self.scopes[j].contains_all(&qualifiers))
            .collect();
        let mut module = String::new();
        for segment in owner.split("::") {
            if !module.is_empty() {
                module.push_str("::");
            }
            module.push_str(segment);
            for &j in self.files_of_module.get(&module).into_iter().flatten() {
                if wanted(j) && defines(&j) && self.may_qualify(j, owner) {
                    files.push(j);
                }
            }
        }
        files
    }

    fn function_definers(&self, name: &str) -> &[usize] {
        self.functions
            .get(key(name))
            .map_or(&[], |definers| definers.files.as_slice())
    }

    /// The files that may define class `name` with a base clause.
    fn base_writers(&self, name: &str) -> impl Iterator<Item = usize> {
        self.heads
            .get(key(name))
            .into_iter()
            .flatten()
            .filter(|(_, bases)| !bases.is_empty())
            .map(|(file, _)| *file)
    }

    fn class_definers(&self, name: &str) -> impl Iterator<Item = usize> {
        self.heads
            .get(key(name))
            .into_iter()
            .flatten()
            .map(|(file, _)| *file)
    }
}

/// A set of names held as their sorted hashes: tens of thousands of names over a program's files,
/// for 8 bytes each. Two names of one hash are one name here, which only makes the pre-filter keep
/// a file it could have skipped.
#[derive(Default)]
struct NameHashes(Box<[u64]>);

impl NameHashes {
    fn new(names: &HashSet<String>) -> Self {
        let mut hashes: Vec<u64> = names.iter().map(|name| name_hash(name)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        NameHashes(hashes.into())
    }

    fn contains(&self, name: &str) -> bool {
        self.contains_hash(name_hash(name))
    }

    fn contains_hash(&self, hash: u64) -> bool {
        self.0.binary_search(&hash).is_ok()
    }

    /// Whether every one of `hashes` (see [`qualifier_hashes`]) is in the set.
    fn contains_all(&self, hashes: &[u64]) -> bool {
        hashes.iter().all(|&hash| self.contains_hash(hash))
    }
}

/// The hashes of the keys of a qualified name's qualifiers, computed once per lookup rather than
/// once per file that may define the name.
fn qualifier_hashes<'s>(qualifiers: impl Iterator<Item = &'s str>) -> Vec<u64> {
    qualifiers
        .filter(|q| !q.is_empty())
        .map(|q| name_hash(key(q)))
        .collect()
}

fn name_hash(name: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(name)
}

/// `start` and every name reachable from it through `edges`.
fn closure<'s, I: Iterator<Item = &'s String>>(
    start: &str,
    edges: impl Fn(&str) -> I,
) -> HashSet<String> {
    let mut out = HashSet::default();
    let mut stack = vec![start.to_string()];
    while let Some(c) = stack.pop() {
        if !out.contains(&c) {
            stack.extend(edges(&c).cloned());
            out.insert(c);
        }
    }
    out
}

/// A function of a parsed file: (file, function).
type At = (usize, FnId);

/// The models parsed so far, by file.
type Models<T> = [Option<Result<T, String>>];

/// Function `id` of file `file`'s model.
fn function_at<T: AsRef<FileModel>>(models: &Models<T>, (file, id): (usize, FnId)) -> &Function {
    match &models[file] {
        Some(Ok(model)) => &model.as_ref().functions[id],
        _ => unreachable!("only parsed functions are indexed"),
    }
}

/// What the files parsed so far define, indexed as the call graph indexes the program.
#[derive(Default)]
struct Parsed {
    /// Key -> the non-lambda functions whose name, or the last segment of whose qualified name,
    /// has that key: (file, function).
    by_key: HashMap<String, Vec<(usize, FnId)>>,
    /// The hash of a qualified name -> the same functions with a qualified name of that hash: a
    /// lookup by qualified name need not compare every function of its last segment (`new`).
    by_qualname: HashMap<u64, Vec<(usize, FnId)>>,
    /// Classes, by qualified name and by last segment.
    classes: HashSet<String>,
    /// Class (last segment) -> the bases (last segments) written for any of its definitions.
    bases: HashMap<String, Vec<String>>,
    /// The fields of those classes (see [`FileModel::fields`]).
    fields: FieldTypes,
}

impl Parsed {
    fn add(&mut self, file: usize, model: &FileModel) {
        for (id, f) in model.functions.iter().enumerate() {
            if f.kind == FunctionKind::Lambda {
                continue;
            }
            self.by_qualname
                .entry(name_hash(&f.qualname))
                .or_default()
                .push((file, id));
            // Under the key of its qualified name's last segment too, where they differ.
            let k = key(&f.name);
            let last = key(last_segment(&f.qualname));
            for k in std::iter::once(k).chain((last != k).then_some(last)) {
                match self.by_key.get_mut(k) {
                    Some(at) => at.push((file, id)),
                    None => {
                        self.by_key.insert(k.to_string(), vec![(file, id)]);
                    }
                }
            }
        }
        add_fields(&mut self.fields, &model.fields);
        for (class, written) in &model.classes {
            self.classes.insert(class.clone());
            self.classes.insert(last_segment(class).to_string());
            let bases = self
                .bases
                .entry(last_segment(class).to_string())
                .or_default();
            for base in written {
                let base = last_segment(base);
                if !bases.iter().any(|b| b == base) {
                    bases.push(base.to_string());
                }
            }
        }
    }
}

/// The files an answer of [`Partial`] could still change with.
#[derive(Default)]
struct Notes {
    files: Vec<usize>,
    /// An answer that depends on the whole program could change with files not noted.
    whole_program: bool,
}

/// The program parsed so far, looked up as the call graph looks up the whole program, noting
/// the files that the scans say could add to each answer (see [`Lookup`]).
struct Partial<'a, T> {
    parsed: &'a Parsed,
    models: &'a Models<T>,
    files: &'a [(PathBuf, Language)],
    index: &'a Index,
    /// Whether answers that depend on the whole program note their files, rather than waiting
    /// for the rest to be parsed first.
    settle: bool,
    notes: RefCell<Notes>,
    scanned: &'a Mutex<Scanned>,
}

/// What the scans say of names, computed once per name and shared by the threads that resolve
/// a round's calls.
#[derive(Default)]
struct Scanned {
    derived: HashMap<String, Arc<HashSet<String>>>,
    ancestors: HashMap<String, Arc<HashSet<String>>>,
}

impl<T: AsRef<FileModel>> Partial<'_, T> {
    fn unparsed(&self, file: usize) -> bool {
        self.models[file].is_none()
    }

    fn note(&self, files: impl IntoIterator<Item = usize>) {
        let mut notes = self.notes.borrow_mut();
        notes
            .files
            .extend(files.into_iter().filter(|&j| self.models[j].is_none()));
    }

    /// Notes `files` now if the whole program is being settled; else only that it waits.
    fn note_whole_program(&self, files: impl IntoIterator<Item = usize>) {
        if self.settle {
            self.note(files);
        } else if files.into_iter().any(|j| self.unparsed(j)) {
            self.notes.borrow_mut().whole_program = true;
        }
    }

    /// The parsed non-lambda functions declared with the name `name`.
    fn named<'s>(
        &'s self,
        name: &'s str,
    ) -> impl Iterator<Item = ((usize, FnId), &'s Function)> + 's {
        self.parsed
            .by_key
            .get(key(name))
            .into_iter()
            .flatten()
            .map(|&at| (at, function_at(self.models, at)))
            .filter(move |(_, f)| f.name == name)
    }

    /// Whether a parsed function is a method, as the call graph decides it; noting the next file
    /// that may define its owner class when none parsed does.
    fn is_method(&self, f: &Function) -> bool {
        if f.is_method_where(|class| self.parsed.classes.contains(class)) {
            return true;
        }
        let owner = last_segment(owner_of(&f.qualname));
        if !owner.is_empty() {
            self.note(self.index.class_definers(owner).find(|&j| self.unparsed(j)));
        }
        false
    }

    /// `class` and the classes that may derive from it, by the scans.
    fn scanned_derived(&self, class: &str) -> Arc<HashSet<String>> {
        self.scanned_once(class, |scanned| &mut scanned.derived, Index::derived)
    }

    /// `class` and the names it may derive from, by the scans.
    fn scanned_ancestors(&self, class: &str) -> Arc<HashSet<String>> {
        self.scanned_once(class, |scanned| &mut scanned.ancestors, Index::ancestors)
    }

    /// What `compute` says of `class` in the scans, computed once per class.
    fn scanned_once(
        &self,
        class: &str,
        cache: fn(&mut Scanned) -> &mut HashMap<String, Arc<HashSet<String>>>,
        compute: fn(&Index, &str) -> HashSet<String>,
    ) -> Arc<HashSet<String>> {
        let class = key(class);
        let mut scanned = self.scanned.lock().unwrap_or_else(|e| e.into_inner());
        let cache = cache(&mut scanned);
        match cache.get(class) {
            Some(names) => names.clone(),
            None => {
                let names = Arc::new(compute(self.index, class));
                cache.insert(class.to_string(), names.clone());
                names
            }
        }
    }

    /// Notes the files that may define a function named `name` in one of `classes`.
    fn note_definers_in(&self, name: &str, classes: &HashSet<String>) {
        let index = self.index;
        let classes: Vec<u64> = classes.iter().map(|c| name_hash(c)).collect();
        self.note(
            index
                .function_definers(name)
                .iter()
                .copied()
                .filter(|&j| classes.iter().any(|&c| index.scopes[j].contains_hash(c))),
        );
    }
}

impl<T: AsRef<FileModel>> Lookup for Partial<'_, T> {
    type Id = (usize, FnId);

    fn function(&self, id: (usize, FnId)) -> &Function {
        function_at(self.models, id)
    }

    fn file(&self, (file, _): (usize, FnId)) -> usize {
        file
    }

    fn in_translation_unit(&self, (file, _): (usize, FnId)) -> bool {
        is_translation_unit(&self.files[file].0)
    }

    fn language(&self, (file, _): (usize, FnId)) -> Language {
        self.files[file].1
    }

    fn with_qualname(&self, qualname: &str) -> Vec<(usize, FnId)> {
        self.note(self.index.qualname_definers(qualname, |j| self.unparsed(j)));
        self.parsed
            .by_qualname
            .get(&name_hash(qualname))
            .into_iter()
            .flatten()
            .copied()
            .filter(|&at| function_at(self.models, at).qualname == qualname)
            .collect()
    }

    fn ending_with(
        &self,
        path: &str,
        language: Language,
        most: usize,
    ) -> Option<Vec<(usize, FnId)>> {
        let name = last_segment(path);
        let suffix = format!("::{path}");
        let found: Vec<(usize, FnId)> = self
            .named(name)
            .filter(|&(at, f)| {
                (f.qualname == path || f.qualname.ends_with(&suffix))
                    && self.callable_from(at, language)
            })
            .map(|(at, _)| at)
            .collect();
        // Definitions only add qualified names.
        if qualified_names(self, &found) > most {
            return None;
        }
        let index = self.index;
        let definers = index.function_definers(name).iter().copied();
        let qualifiers: Vec<&str> = owner_of(path)
            .split("::")
            .filter(|s| !s.is_empty())
            .collect();
        if qualifiers.is_empty() {
            self.note_whole_program(definers);
        } else {
            let qualifiers = qualifier_hashes(qualifiers.iter().copied());
            self.note(definers.filter(|&j| index.scopes[j].contains_all(&qualifiers)));
        }
        Some(found)
    }

    fn methods_named(&self, name: &str, most: usize) -> Option<Vec<(usize, FnId)>> {
        let candidates: Vec<((usize, FnId), &Function)> = self.named(name).collect();
        let classes = &self.parsed.classes;
        let methods: Vec<(usize, FnId)> = candidates
            .iter()
            .filter(|(_, f)| f.is_method_where(|class| classes.contains(class)))
            .map(|&(at, _)| at)
            .collect();
        // Definitions only add methods (and classes that make out-of-line definitions methods).
        if methods.len() > most {
            return None;
        }
        let unparsed: Vec<usize> = self
            .index
            .function_definers(name)
            .iter()
            .copied()
            .filter(|&j| self.unparsed(j))
            .collect();
        if self.settle {
            // Enough of them to pass the bound, if they do.
            self.note(unparsed.into_iter().take(most + 1 - methods.len()));
            for (_, f) in &candidates {
                self.is_method(f);
            }
        } else if !unparsed.is_empty()
            || candidates.iter().any(|(_, f)| {
                !f.is_method_where(|class| classes.contains(class)) && {
                    let owner = last_segment(owner_of(&f.qualname));
                    !owner.is_empty() && self.index.class_definers(owner).any(|j| self.unparsed(j))
                }
            })
        {
            self.notes.borrow_mut().whole_program = true;
        }
        Some(methods)
    }

    fn methods_below(&self, name: &str, class: &str) -> Vec<(usize, FnId)> {
        let derived = self.scanned_derived(class);
        self.note_definers_in(name, &derived);
        self.named(name)
            .filter(|(_, f)| {
                let owner = last_segment(owner_of(&f.qualname));
                derived.contains(key(owner)) && self.is_method(f) && self.derives(owner, class)
            })
            .map(|(at, _)| at)
            .collect()
    }

    fn methods_of(&self, name: &str, classes: &[String]) -> Vec<(usize, FnId)> {
        let keyed: HashSet<String> = classes.iter().map(|c| key(c).to_string()).collect();
        self.note_definers_in(name, &keyed);
        self.named(name)
            .filter(|(at, f)| {
                self.owner(*at)
                    .is_some_and(|owner| classes.iter().any(|c| c == owner))
                    && self.is_method(f)
            })
            .map(|(at, _)| at)
            .collect()
    }

    fn derives(&self, class: &str, base: &str) -> bool {
        let bases = &self.parsed.bases;
        let mut seen: HashSet<&str> = HashSet::from_iter([class]);
        let mut stack = vec![class];
        while let Some(c) = stack.pop() {
            if c == base && bases.contains_key(c) {
                return true;
            }
            if let Some(up) = bases.get(c) {
                for b in up {
                    if b == base {
                        return true;
                    }
                    if seen.insert(b) {
                        stack.push(b);
                    }
                }
            }
        }
        // Not yet: every definition of each class the scans put between the two could add the
        // link (in Rust, those that name a class on the way as a base: a type's impls of other
        // traits, in many files, add nothing).
        let ancestors = self.scanned_ancestors(class);
        if !ancestors.contains(key(base)) {
            return false;
        }
        let derived = self.scanned_derived(base);
        let on_the_way: HashSet<&String> =
            ancestors.iter().filter(|a| derived.contains(*a)).collect();
        for between in &on_the_way {
            for (file, written) in self.index.heads.get(between.as_str()).into_iter().flatten() {
                let cpp = self.index.modules[*file].is_none();
                if cpp || written.iter().any(|b| on_the_way.contains(b)) {
                    self.note([*file]);
                }
            }
        }
        false
    }

    fn bases(&self, class: &str) -> Vec<String> {
        // Only a definition with a base clause can add a base: a type's other definitions (an
        // inherent `impl T`, in many files) are parsed for other needs, if any.
        self.note(self.index.base_writers(class));
        self.parsed.bases.get(class).cloned().unwrap_or_default()
    }

    fn field_types(&self, class: &str, field: &str) -> Vec<String> {
        self.note(self.index.class_definers(class));
        field_types_in(&self.parsed.fields, class, field)
    }
}

/// A call from reached code: call `call` of a function, or a binding's target.
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
    /// Where the call is looked up from, what it names, and its number of arguments (none for
    /// a binding, whose targets are not chosen by arity).
    fn call<'m, T: AsRef<FileModel>>(
        self,
        models: &'m Models<T>,
        files: &[(PathBuf, Language)],
    ) -> (usize, Scope<'m>, &'m CallTarget, Option<u32>) {
        let (Caller::Call { file, .. } | Caller::Binding { file, .. }) = self;
        let Some(Ok(model)) = &models[file] else {
            unreachable!("only the calls of parsed files are followed");
        };
        let model = model.as_ref();
        let language = files[file].1;
        match self {
            Caller::Call { function, call, .. } => {
                let f = &model.functions[function];
                let call = &f.calls[call];
                let scope = Scope::of_function(f, language, file, model.names_framework);
                (file, scope, &call.target, Some(call.args))
            }
            Caller::Binding { binding, .. } => {
                let binding = &model.bindings[binding];
                let scope = Scope::of_binding(binding, language, file, model.names_framework);
                (file, scope, &binding.target, None)
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
        for &j in files {
            if !self.kept[j] {
                self.kept[j] = true;
                self.next.push(j);
            }
        }
    }
}

/// The functions reached from the bindings, and the calls not decided yet.
#[derive(Default)]
struct Reach {
    reached: HashSet<(usize, FnId)>,
    queue: Vec<(usize, FnId)>,
    /// Calls waiting for the files they noted.
    waiting: Vec<Caller>,
    /// Calls waiting for the whole program to be settled.
    whole_program: Vec<Caller>,
}

impl Reach {
    /// Resolves `calls`, and those of every function they reach, over what is parsed.
    fn resolve<T: AsRef<FileModel> + Sync>(
        &mut self,
        mut calls: Vec<Caller>,
        (parsed, models, files, index): (&Parsed, &Models<T>, &[(PathBuf, Language)], &Index),
        (settle, scanned): (bool, &Mutex<Scanned>),
        selection: &mut Selection,
    ) {
        loop {
            while let Some((file, id)) = self.queue.pop() {
                if !self.reached.insert((file, id)) {
                    continue;
                }
                let Some(Ok(model)) = &models[file] else {
                    continue;
                };
                for (call, site) in model.as_ref().functions[id].calls.iter().enumerate() {
                    match site.target {
                        CallTarget::Direct(lambda) => self.queue.push((file, lambda)),
                        CallTarget::Param(_) => {}
                        CallTarget::Named { .. } => calls.push(Caller::Call {
                            file,
                            function: id,
                            call,
                        }),
                    }
                }
            }
            if calls.is_empty() {
                return;
            }
            // Each call is resolved over the same parsed files, so in any order: in parallel (a
            // call a task, as files are modelled), applied in the order given.
            let resolved: Vec<(Caller, Vec<At>, Notes)> = std::mem::take(&mut calls)
                .into_par_iter()
                .with_max_len(1)
                .map(|caller| {
                    let (file, scope, target, args) = caller.call(models, files);
                    if let CallTarget::Direct(id) = target {
                        return (caller, vec![(file, *id)], Notes::default());
                    }
                    let lookup = Partial {
                        parsed,
                        models,
                        files,
                        index,
                        settle,
                        notes: RefCell::default(),
                        scanned,
                    };
                    let callees = resolve_call(&lookup, scope, target, args);
                    (caller, callees, lookup.notes.into_inner())
                })
                .collect();
            for (caller, callees, notes) in resolved {
                if !notes.files.is_empty() {
                    selection.pull(&notes.files);
                    self.waiting.push(caller);
                } else if notes.whole_program {
                    self.whole_program.push(caller);
                } else {
                    self.queue.extend(callees);
                }
            }
        }
    }
}

/// Models the files that can matter, in rounds to a fixed point (see the module doc).
/// `model(i)` models file `i`; the result has one entry per file, `None` for a skipped file. `T`
/// is what `model` makes of a file: its [`FileModel`], and whatever else the caller keeps.
pub fn model_relevant<T, M>(
    files: &[(PathBuf, Language)],
    scans: Scans,
    model: M,
) -> Vec<Option<Result<T, String>>>
where
    T: AsRef<FileModel> + Send + Sync,
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
    let mut parsed = Parsed::default();
    let mut reach = Reach::default();
    let scanned = Mutex::default();
    loop {
        // A file a task: rayon otherwise cuts the frontier into a few runs of files up front, and
        // a thread done with its runs waits while another models the rest of its own (in some
        // runs a quarter of a round's time on two threads).
        let modelled: Vec<(usize, Result<T, String>)> = frontier
            .par_iter()
            .with_max_len(1)
            .map(|&i| (i, model(i)))
            .collect();
        let mut calls = std::mem::take(&mut reach.waiting);
        for (i, result) in modelled {
            if let Ok(m) = &result {
                let m = m.as_ref();
                parsed.add(i, m);
                calls.extend(
                    (0..m.bindings.len()).map(|binding| Caller::Binding { file: i, binding }),
                );
            }
            models[i] = Some(result);
        }
        let context = (&parsed, &models[..], files, &index);
        reach.resolve(calls, context, (false, &scanned), &mut selection);
        // With nothing else left to parse, settle what depends on the whole program.
        if selection.next.is_empty() && !reach.whole_program.is_empty() {
            let calls = std::mem::take(&mut reach.whole_program);
            reach.resolve(calls, context, (true, &scanned), &mut selection);
        }
        if selection.next.is_empty() {
            return models;
        }
        frontier = std::mem::take(&mut selection.next);
        frontier.sort_unstable();
    }
}

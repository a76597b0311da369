//! The resolver: the one place that decides which functions a call by name may run, by the rules
//! of [`super`]'s doc. It is generic over what it looks in ([`Lookup`]): the whole program for
//! the call graph, or the files parsed so far for the pre-filter, whose lookup notes, as it
//! answers, the files that could still change each answer (see `crate::prefilter`). Nothing else
//! matches on [`Receiver`].

use rustc_hash::FxHashSet;

use crate::model;
use crate::model::{
    Binding, CallTarget, Function, FunctionKind, Language, Program, Receiver, last_segment,
    owner_of, split_path,
};

/// A method call whose receiver type is unknown goes to every method of that name, unless more
/// than this many define it: `get`, `size` or `data` on an `auto` variable says nothing about
/// which class is meant, and following all of them invents paths through unrelated code.
/// (Virtual dispatch over a known base class is not limited: see [`Receiver::Typed`].)
pub(crate) const MAX_UNTYPED_FANOUT: usize = 8;

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
    /// In C++, the innermost scope: the class of a method, also one defined out of its class
    /// (`void C::f() {}`), or of a lambda in one; a namespace for a free function, which no
    /// method's class is named after.
    own_class: Option<&'a str>,
    language: Language,
    /// The file the call is written in, as the lookup numbers files.
    file: usize,
    /// See [`crate::model::FileModel::names_framework`], for that file.
    names_framework: bool,
}

impl<'a> Scope<'a> {
    /// Where the calls of `f`, a function written in `language` in file `file`, are looked up
    /// from.
    pub(crate) fn of_function(
        f: &'a Function,
        language: Language,
        file: usize,
        names_framework: bool,
    ) -> Self {
        let cpp = language == Language::Cpp;
        Scope {
            names: &f.scope,
            usings: &f.usings,
            by_method_name: cpp,
            self_type: f.scope.last().filter(|_| !cpp).map(String::as_str),
            own_class: f.scope.last().filter(|_| cpp).map(String::as_str),
            language,
            file,
            names_framework,
        }
    }

    /// Where the target of `binding`, registered in file `file` of `language`, is looked up
    /// from.
    pub(crate) fn of_binding(
        binding: &'a Binding,
        language: Language,
        file: usize,
        names_framework: bool,
    ) -> Self {
        Scope {
            names: &binding.scope,
            usings: &binding.usings,
            by_method_name: true,
            self_type: None,
            own_class: None,
            language,
            file,
            names_framework,
        }
    }
}

/// The functions and classes that names are resolved against. Classes are named by their simple
/// names (the last segment), as the resolver matches them.
///
/// Each answer is what the lookup holds. The pre-filter's lookup holds part of the program: its
/// answers are what that part defines, and it notes aside whenever the rest could add to one.
/// The answers given with a bound (`most`) may stop short once the bound is passed, since adding
/// definitions never brings a count back under it.
pub(crate) trait Lookup {
    type Id: Copy + PartialEq;
    fn function(&self, id: Self::Id) -> &Function;
    fn language(&self, id: Self::Id) -> Language;
    /// The non-lambda functions with this qualified name.
    fn with_qualname(&self, qualname: &str) -> Vec<Self::Id>;
    /// The non-lambda functions whose qualified name is `path` or ends with `::path`, that a
    /// call from `language` may reach; `None` when they have more than `most` qualified names.
    fn ending_with(&self, path: &str, language: Language, most: usize) -> Option<Vec<Self::Id>>;
    /// The methods named `name`; `None` when there are more than `most`.
    fn methods_named(&self, name: &str, most: usize) -> Option<Vec<Self::Id>>;
    /// The methods named `name` of `class` and the classes derived from it.
    fn methods_below(&self, name: &str, class: &str) -> Vec<Self::Id>;
    /// The methods named `name` of one of `classes`.
    fn methods_of(&self, name: &str, classes: &[String]) -> Vec<Self::Id>;
    /// Whether `class` is `base` or derives from it, transitively.
    fn derives(&self, class: &str, base: &str) -> bool;
    /// The bases written for any definition of `class`.
    fn bases(&self, class: &str) -> Vec<String>;
    /// The types that definitions of `class` declare its field `field` with.
    fn field_types(&self, class: &str, field: &str) -> Vec<String>;
    /// The file that defines `id`.
    fn file(&self, id: Self::Id) -> usize;
    /// Whether the file that defines `id` is compiled on its own, not a header.
    fn in_translation_unit(&self, id: Self::Id) -> bool;

    /// Whether a call by name from `language` may reach `id`: a function of the same language or
    /// one with C linkage (C++ calls no Rust `compile` by its name, but does call an `extern "C"`
    /// one).
    fn callable_from(&self, id: Self::Id, language: Language) -> bool {
        self.function(id).extern_c || self.language(id) == language
    }

    /// The simple name of the class (or namespace) a function is defined in.
    fn owner(&self, id: Self::Id) -> Option<&str> {
        method_owner(&self.function(id).qualname)
    }
}

/// The class (last segment) whose method a qualified name names: `B` for `a::B::f`.
pub(crate) fn method_owner(qualname: &str) -> Option<&str> {
    let (owner, _) = split_path(qualname)?;
    Some(last_segment(owner))
}

/// How many qualified names the functions `ids` have.
pub(crate) fn qualified_names<L: Lookup>(lookup: &L, ids: &[L::Id]) -> usize {
    ids.iter()
        .map(|&id| lookup.function(id).qualname.as_str())
        .collect::<FxHashSet<_>>()
        .len()
}

/// The functions a call may run, and whether they are a guess.
pub(crate) struct Resolution<Id> {
    pub callees: Vec<Id>,
    /// The call was matched by method name on a receiver of unknown type, or dispatches to
    /// overrides in several classes: the path may not exist at run time.
    pub guessed: bool,
}

/// The functions a call to `target` from `caller`, with `args` arguments, may run: by the rules
/// of [`super`]'s doc, then by arity. A binding's target (`args` of `None`) is not chosen by
/// arity. A lambda (`Direct`) or a parameter (`Param`) is the caller's to follow.
pub(crate) fn resolve_call<L: Lookup>(
    lookup: &L,
    caller: Scope,
    target: &CallTarget,
    args: Option<u32>,
) -> Vec<L::Id> {
    judge_call(lookup, caller, target, args, &[]).callees
}

/// [`resolve_call`], saying whether the answer is a guess; `argument_types` (see
/// [`crate::model::CallNote::ArgumentTypes`]) choose among overloads of one arity.
pub(crate) fn judge_call<L: Lookup>(
    lookup: &L,
    caller: Scope,
    target: &CallTarget,
    args: Option<u32>,
    argument_types: &[Option<Box<str>>],
) -> Resolution<L::Id> {
    let CallTarget::Named { path, receiver } = target else {
        return Resolution {
            callees: Vec::new(),
            guessed: false,
        };
    };
    let (callees, how) = resolve(lookup, caller, path, receiver);
    // Dispatch is judged on the overrides that take the arguments: `s.Name()` is no guess when
    // the overrides all take a parameter.
    let judged = |callees: Vec<L::Id>| {
        let callees = visible_from_caller(lookup, caller, callees);
        Resolution {
            guessed: match how {
                How::Certain => false,
                How::ByName => true,
                How::Dispatch => qualified_names(lookup, &callees) > 1,
            },
            callees,
        }
    };
    let Some(args) = args else {
        return judged(callees);
    };
    // A method matched by name only must also take the arguments given; for other calls,
    // dropping every candidate resolved by name and scope would hide real paths (a default
    // argument hidden in a macro, a parse error).
    let by_name = match receiver {
        Receiver::Object | Receiver::Native => true,
        Receiver::Field { .. } => matches!(how, How::ByName),
        _ => false,
    };
    let fitting: Vec<L::Id> = callees
        .iter()
        .copied()
        .filter(|&id| lookup.function(id).accepts(args))
        .collect();
    let callees = if fitting.is_empty() && !by_name {
        callees
    } else {
        fitting
    };
    judged(by_argument_types(lookup, callees, argument_types))
}

/// The callees that the caller's file can see: not a function of an anonymous namespace of
/// another source file (a header's is every including file's own). Then, of several definitions
/// of one qualified name, those in the caller's own file, when it has some: a `static` helper of
/// the same name in each of two files is that file's own, and one program links no two external
/// definitions of one name.
fn visible_from_caller<L: Lookup>(
    lookup: &L,
    caller: Scope,
    mut callees: Vec<L::Id>,
) -> Vec<L::Id> {
    callees.retain(|&id| {
        lookup.file(id) == caller.file
            || !lookup.in_translation_unit(id)
            || !lookup
                .function(id)
                .qualname
                .split("::")
                .any(|segment| segment == "(anonymous)")
    });
    if callees.len() < 2 || qualified_names(lookup, &callees) > 1 {
        return callees;
    }
    let own: Vec<L::Id> = callees
        .iter()
        .copied()
        .filter(|&id| lookup.file(id) == caller.file)
        .collect();
    if own.is_empty() { callees } else { own }
}

/// How a call's candidates were found.
enum How {
    /// By scope, or on a receiver of a known class that no other class overrides.
    Certain,
    /// Virtual dispatch: a guess when the overrides of several classes remain.
    Dispatch,
    /// By method name alone: always a guess.
    ByName,
}

/// Of overloads that take as many arguments, those whose parameter types do not conflict with
/// the known argument types, when some do: `History(player, aoh)` with a `std::vector aoh` is
/// not `History(Player, const State &)`. An exact match is what C++ picks over a conversion;
/// when every candidate conflicts (a derived class passed as its base), all are kept.
fn by_argument_types<L: Lookup>(
    lookup: &L,
    callees: Vec<L::Id>,
    argument_types: &[Option<Box<str>>],
) -> Vec<L::Id> {
    if callees.len() < 2 || argument_types.is_empty() {
        return callees;
    }
    let fitting: Vec<L::Id> = callees
        .iter()
        .copied()
        .filter(|&id| !lookup.function(id).conflicts_with(argument_types))
        .collect();
    if fitting.is_empty() { callees } else { fitting }
}

fn resolve<L: Lookup>(
    lookup: &L,
    caller: Scope,
    path: &str,
    receiver: &Receiver,
) -> (Vec<L::Id>, How) {
    match receiver {
        Receiver::None => (resolve_path(lookup, caller, path), How::Certain),
        Receiver::This => {
            if let Some(own) = in_enclosing_scopes(lookup, caller, path) {
                return (own, How::Certain);
            }
            let mut methods = untyped_methods(lookup, path, caller.language);
            // A Rust `self` has its impl's type: what that type's own impls do not define
            // comes from a trait, as a provided method or, called from a trait's provided
            // method, as an implementor's method. A method of any other type is not it.
            if let Some(self_type) = caller.self_type {
                methods.retain(|&id| {
                    lookup.function(id).kind == FunctionKind::ProvidedMethod
                        || lookup
                            .owner(id)
                            .is_some_and(|owner| lookup.derives(owner, self_type))
                });
            }
            // In C++ a `this->f()` that the class does not define is matched by name.
            let how = match caller.self_type {
                None => How::ByName,
                Some(_) => How::Dispatch,
            };
            (methods, how)
        }
        Receiver::Object | Receiver::Native if caller.by_method_name => {
            let mut methods = untyped_methods(lookup, path, caller.language);
            // A call on the caller's own object is written `f()` or `this->f()`: `x.f()` inside
            // a method of `C` is, far more often than another `C`, the native object that `C`
            // wraps (`rel->Insert(v)` in `PyRelation::Insert`), whose type is not in sight.
            if let Some(own) = caller.own_class {
                methods.retain(|&id| lookup.owner(id) != Some(own));
            }
            // Nor is an object whose type is not in sight a wrapper of a Python object
            // (`PyDictionary::ToString` for `val.ToString()` on a native value): such wrappers
            // are few, and the binding code that uses them names their type.
            methods.retain(|&id| !lookup.function(id).wraps_python);
            if *receiver == Receiver::Native {
                methods.retain(|&id| !lookup.function(id).framework);
            }
            (methods, How::ByName)
        }
        Receiver::Object | Receiver::Native => (Vec::new(), How::Certain),
        Receiver::Typed(ty) => {
            // Virtual dispatch to the overrides of several classes: which one runs depends on
            // the object.
            (typed(lookup, caller, path, ty), How::Dispatch)
        }
        Receiver::Field {
            name,
            arrow,
            native,
        } => match caller
            .own_class
            .and_then(|class| inherited_field_class(lookup, class, name, *arrow))
        {
            Some(class) => (typed(lookup, caller, path, &class), How::Dispatch),
            None => {
                let untyped = if *native {
                    Receiver::Native
                } else {
                    Receiver::Object
                };
                resolve(lookup, caller, path, &untyped)
            }
        },
    }
}

/// The class of field `field` of `class` or of its nearest base that declares it, through `->`
/// when `arrow`; `None` when no definition in sight declares it, or they disagree.
fn inherited_field_class<L: Lookup>(
    lookup: &L,
    class: &str,
    field: &str,
    arrow: bool,
) -> Option<String> {
    let mut level = vec![class.to_string()];
    let mut seen: FxHashSet<String> = FxHashSet::from_iter([class.to_string()]);
    while !level.is_empty() {
        let mut types: Vec<String> = level
            .iter()
            .flat_map(|c| lookup.field_types(c, field))
            .collect();
        types.dedup();
        match types.as_slice() {
            [] => {}
            [declared] => return model::field_class(declared, arrow).map(str::to_string),
            _ => return None,
        }
        level = level
            .iter()
            .flat_map(|c| lookup.bases(c))
            .filter(|b| seen.insert(b.clone()))
            .collect();
    }
    None
}

/// `x.f()` with `x` of type `ty`. A type the project does not define (`std::atomic`,
/// `at::Tensor`) has no methods here; a project class's call may run an override in any derived
/// class, or, when the class does not define the method, the nearest definition among its bases
/// (a C++ base class, a Rust trait's provided method). Classes are matched by simple name, so a
/// standard type written as such (`std::array`) is never taken for a project's class of that name
/// (`pybind11::array`).
fn typed<L: Lookup>(lookup: &L, caller: Scope, path: &str, ty: &str) -> Vec<L::Id> {
    if ty.trim_start_matches("::").starts_with("std::") {
        return Vec::new();
    }
    // A class that is neither defined nor a base has no methods below it and no bases.
    let class = last_segment(ty);
    // A method is never called from the other language (a Rust `str` is not pybind11's).
    let same_language = |id: &L::Id| lookup.language(*id) == caller.language;
    let mut found = lookup.methods_below(path, class);
    found.retain(same_language);
    // A method of the receiver's class itself.
    let own = |id: L::Id| lookup.owner(id) == Some(class);
    // A C++ class written with its namespace (`platform::Window`) is not another namespace's
    // class of that name: when the program has that one, the others are dropped; when it has
    // none, a project class whose path does not even hold the qualifier (`RE2::Set` for the
    // project's `re2_python::Set`) is another library's class.
    // (Rust types are often named through re-exports, so their paths say less.)
    if caller.language == Language::Cpp && ty.contains("::") {
        let written = ty.trim_start_matches("::");
        let suffix = format!("::{written}");
        let named_so = |id: L::Id| {
            let owner = owner_of(&lookup.function(id).qualname);
            owner == written || owner.ends_with(&suffix)
        };
        let qualifier = written.split("::").next().unwrap_or(written);
        let holds_qualifier = |id: L::Id| {
            owner_of(&lookup.function(id).qualname)
                .split("::")
                .any(|segment| segment == qualifier)
        };
        if found.iter().any(|&id| own(id) && named_so(id)) {
            found.retain(|&id| !own(id) || named_so(id));
        } else {
            // A framework's class is written through its aliases (`py::capsule`).
            found.retain(|&id| !own(id) || lookup.function(id).framework || holds_qualifier(id));
        }
    }
    if !found.iter().any(|&id| own(id)) {
        found.extend(inherited(lookup, path, class, caller.language));
    }
    found
}

/// The nearest definitions of method `name` among the bases of `class` (by simple name), level
/// by level up the hierarchy, in `language`.
fn inherited<L: Lookup>(lookup: &L, name: &str, class: &str, language: Language) -> Vec<L::Id> {
    let mut level = vec![class.to_string()];
    let mut seen: FxHashSet<String> = FxHashSet::from_iter([class.to_string()]);
    while !level.is_empty() {
        level = level
            .iter()
            .flat_map(|c| lookup.bases(c))
            .filter(|b| seen.insert(b.clone()))
            .collect();
        let mut found = lookup.methods_of(name, &level);
        found.retain(|&id| lookup.language(id) == language);
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// The methods named `name`, or none when the program has more than [`MAX_UNTYPED_FANOUT`];
/// only those in `language` (a method is never called by name from the other language, but
/// counts for how ambiguous the name is).
fn untyped_methods<L: Lookup>(lookup: &L, name: &str, language: Language) -> Vec<L::Id> {
    let Some(mut methods) = lookup.methods_named(name, MAX_UNTYPED_FANOUT) else {
        return Vec::new();
    };
    methods.retain(|&id| lookup.language(id) == language);
    methods
}

/// `path` looked up in the caller's scopes, innermost first, among the functions a call from
/// the caller's language may reach. With the number of scopes it was found under (0: `path` is
/// a whole qualified name).
fn scoped_lookup<L: Lookup>(lookup: &L, caller: Scope, path: &str) -> Option<(usize, Vec<L::Id>)> {
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
        let found = callable_with_qualname(lookup, &qualified, caller.language);
        (!found.is_empty()).then_some((n, found))
    })
}

fn callable_with_qualname<L: Lookup>(lookup: &L, qualname: &str, language: Language) -> Vec<L::Id> {
    let mut found = lookup.with_qualname(qualname);
    found.retain(|&id| lookup.callable_from(id, language));
    found
}

/// `path` looked up under the caller's enclosing scopes only, not as written: where
/// `this->f()` and `self.f()` look first.
fn in_enclosing_scopes<L: Lookup>(lookup: &L, caller: Scope, path: &str) -> Option<Vec<L::Id>> {
    scoped_lookup(lookup, caller, path)
        .filter(|&(scopes, _)| scopes > 0)
        .map(|(_, found)| found)
}

/// `path` looked up through the caller's `using`s, in order.
fn through_usings<L: Lookup>(lookup: &L, caller: Scope, path: &str) -> Vec<L::Id> {
    let mut qualified = String::new();
    for using in caller.usings {
        qualified.clear();
        qualified.push_str(using);
        qualified.push_str("::");
        qualified.push_str(path);
        let found = callable_with_qualname(lookup, &qualified, caller.language);
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// Rules 1 to 3 of [`super`]'s doc: `path` as a function's name; failing that, as a class's
/// name, its constructors (`T(a)`, `T x(a)`, `new T(a)`); failing that, `C::f` as a method that
/// `C` inherits (`&Derived::f` bound for `Base::f`).
fn resolve_path<L: Lookup>(lookup: &L, caller: Scope, path: &str) -> Vec<L::Id> {
    // `::f()`: the global `f` alone (a C library's, often wrapped by a method of that name).
    if let Some(global) = path.strip_prefix("::") {
        return callable_with_qualname(lookup, global, caller.language);
    }
    let mut found = resolve_function(lookup, caller, path);
    if caller.language != Language::Cpp {
        return found;
    }
    if found.is_empty() {
        found = resolve_function(lookup, caller, &constructor_path(path));
    }
    // A bare name in a file that never names a Python framework is not the framework's: no
    // `using` can bring it in there (`str(boost::format(..))` is `boost::str`, found through its
    // argument, not `pybind11::str`).
    if !caller.names_framework && !path.contains("::") {
        found.retain(|&id| !lookup.function(id).framework);
    }
    if !found.is_empty() {
        return found;
    }
    match split_path(path) {
        Some((owner, name)) => inherited(lookup, name, last_segment(owner), caller.language),
        None => Vec::new(),
    }
}

/// The name of the constructors of the class named `class`: `ns::T::T` for `ns::T`.
fn constructor_path(class: &str) -> String {
    format!("{class}::{}", last_segment(class))
}

/// Rules 1 and 2 of [`super`]'s doc: the caller's scopes, its `using`s, then the functions of
/// the one qualified name that ends with `path` (none when there are several).
fn resolve_function<L: Lookup>(lookup: &L, caller: Scope, path: &str) -> Vec<L::Id> {
    if let Some((_, found)) = scoped_lookup(lookup, caller, path) {
        return found;
    }
    let found = through_usings(lookup, caller, path);
    if !found.is_empty() {
        return found;
    }
    let bare = !path.contains("::");
    // In a method, a bare name is looked up in its class's bases before the namespaces.
    if bare && let Some(class) = caller.own_class {
        let found = inherited(lookup, path, class, caller.language);
        if !found.is_empty() {
            return found;
        }
    }
    let mut found = lookup
        .ending_with(path, caller.language, 1)
        .unwrap_or_default();
    // Nor is a bare name any other class's method: there is no object to call it on. (A
    // namespace's function stays: brought in by a `using` or an argument's namespace that is
    // not in sight.)
    if bare && !found.is_empty() {
        let methods = lookup.methods_named(path, usize::MAX).unwrap_or_default();
        found.retain(|id| !methods.contains(id));
    }
    found
}

/// The classes (by simple name) that calls may be made on: typed receivers, the type of a
/// Rust `self` that calls its own methods, and the classes of fields (see [`Receiver::Field`]).
/// A lookup that computes the classes derived from a class ahead needs only theirs.
pub(crate) fn classes_called_on(program: &Program) -> FxHashSet<&str> {
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
        .chain(program.fields.values().flat_map(|of_class| {
            of_class.values().flatten().flat_map(|declared| {
                [false, true]
                    .into_iter()
                    .filter_map(|arrow| model::field_class(declared, arrow).map(last_segment))
            })
        }))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::callgraph::CallGraph;
    use crate::test_support::{cpp, program};

    /// The qualified names of what each call of `caller` may run, in call order, sorted within
    /// a call.
    fn callees(files: &[(&str, &str)], caller: &str) -> Vec<Vec<String>> {
        let program = program(files);
        let graph = CallGraph::build(&program);
        let (id, f) = program
            .functions
            .iter()
            .enumerate()
            .find(|(_, f)| f.qualname == caller)
            .unwrap_or_else(|| panic!("no function `{caller}`"));
        (0..f.calls.len())
            .map(|call| {
                let mut names: Vec<String> = graph
                    .callees(id, call)
                    .iter()
                    .map(|&c| program.functions[c].qualname.clone())
                    .collect();
                names.sort();
                names
            })
            .collect()
    }

    fn one_cpp(body: &str, caller: &str) -> Vec<Vec<String>> {
        callees(&[("ext.cpp", &cpp(body))], caller)
    }

    /// Whether each call of `caller` is a guess.
    fn guesses(body: &str, caller: &str) -> Vec<bool> {
        let program = program(&[("ext.cpp", &cpp(body))]);
        let graph = CallGraph::build(&program);
        let id = program
            .functions
            .iter()
            .position(|f| f.qualname == caller)
            .unwrap_or_else(|| panic!("no function `{caller}`"));
        (0..program.functions[id].calls.len())
            .map(|call| graph.guessed(id, call))
            .collect()
    }

    #[test]
    fn calls_matched_by_name_or_dispatched_to_several_overrides_are_guesses() {
        let body = "void free_fn() {}\n\
                    struct Base { virtual void run() {}\n void own() {} };\n\
                    struct Derived : Base { void run() override {} };\n\
                    struct Leaf { void run() {}\n void go() { this->own(); this->gone(); } };\n\
                    void use(Base& b, Derived& d, auto& x) {\n\
                    free_fn(); b.own(); d.run(); b.run(); x.run(); }\n";
        // Scope, a typed receiver's own or inherited method: resolved. Overrides in several
        // classes, or a method matched by name on an `auto`: guessed.
        assert_eq!(guesses(body, "use"), [false, false, false, true, true]);
        // `this->own()` is not `Leaf`'s: matched by name; `this->gone()` matches nothing.
        assert_eq!(guesses(body, "Leaf::go"), [true, true]);
    }

    #[test]
    fn dispatch_is_a_guess_only_among_overrides_that_take_the_arguments() {
        let body = "struct Base { virtual void run(int) {}\n void run() {} };\n\
                    struct Derived : Base { void run(int) override {} };\n\
                    void use(Base& b) { b.run(); b.run(1); }\n";
        assert_eq!(guesses(body, "use"), [false, true]);
    }

    #[test]
    fn a_name_is_looked_up_in_the_innermost_scope_first() {
        let body = "namespace a { void f() {}\n namespace b { void f() {}\n void g() { f(); } } }\n\
                    namespace a { void h() { f(); } }\n";
        assert_eq!(one_cpp(body, "a::b::g"), [["a::b::f"]]);
        assert_eq!(one_cpp(body, "a::h"), [["a::f"]]);
    }

    #[test]
    fn a_qualified_tail_resolves_only_when_one_name_ends_with_it() {
        let one = "namespace a { namespace x { void f() {} } }\nvoid g() { x::f(); }\n";
        assert_eq!(one_cpp(one, "g"), [["a::x::f"]]);
        let two = "namespace a { namespace x { void f() {} } }\n\
                   namespace b { namespace x { void f() {} } }\nvoid g() { x::f(); }\n";
        assert_eq!(one_cpp(two, "g"), [Vec::<String>::new()]);
    }

    #[test]
    fn a_field_declared_in_another_file_types_its_receiver() {
        let header = "namespace n { struct Native { void fetch() {} };\n\
                      struct Sink { void report(int) {} };\n\
                      struct Wrap { void fetch();\n Native &base_; };\n\
                      struct Counting : Wrap { void count();\n protected: Sink *sink_; }; }\n";
        let other = "struct Other { void fetch() {}\n void report(int) {} };\n";
        let source = "namespace n { void Wrap::fetch() { base_.fetch(); this->base_.fetch(); }\n\
                      void Counting::count() { sink_->report(1); base_.fetch(); } }\n";
        let handle = "namespace n { struct Impl { void go() {} };\n\
                      template <class T> struct Pimpl { T *operator->(); };\n\
                      struct Front { void run();\n Pimpl<Impl> impl; }; }\n";
        let front = "namespace n { void Front::run() { impl->go(); } }\n";
        let files = [("front.h", handle), ("front.cpp", front)];
        // Through `->`, a handle that is no raw pointer gives its template argument.
        assert_eq!(callees(&files, "n::Front::run"), [["n::Impl::go"]]);
        let files = [
            ("wrap.h", header),
            ("other.cpp", other),
            ("wrap.cpp", source),
        ];
        assert_eq!(
            callees(&files, "n::Wrap::fetch"),
            [["n::Native::fetch"], ["n::Native::fetch"]]
        );
        assert_eq!(
            callees(&files, "n::Counting::count"),
            [["n::Sink::report"], ["n::Native::fetch"]]
        );
    }

    #[test]
    fn this_calls_go_to_the_own_class_before_a_global() {
        let body = "void run() {}\nstruct A { void run() {}\n void go() { this->run(); } };\n";
        assert_eq!(one_cpp(body, "A::go"), [["A::run"]]);
    }

    #[test]
    fn an_untyped_receiver_reaches_every_method_of_the_name_up_to_the_bound() {
        let classes = |n: usize| -> String {
            (0..n)
                .map(|i| format!("struct C{i} {{ void get() {{}} }};\n"))
                .collect()
        };
        let call = "void use(auto& x) { x.get(); }\n";
        let two = one_cpp(&(classes(2) + call), "use");
        assert_eq!(two, [["C0::get", "C1::get"]]);
        let at_bound = one_cpp(&(classes(super::MAX_UNTYPED_FANOUT) + call), "use");
        assert_eq!(at_bound[0].len(), super::MAX_UNTYPED_FANOUT);
        let over = one_cpp(&(classes(super::MAX_UNTYPED_FANOUT + 1) + call), "use");
        assert_eq!(over, [Vec::<String>::new()]);
    }

    #[test]
    fn a_method_guessed_by_name_must_take_the_arguments() {
        let body = "struct A { void m(int, int) {} };\nstruct B { void m() {} };\n\
                    void use(auto& x) { x.m(1, 2); x.m(1, 2, 3); }\n";
        assert_eq!(one_cpp(body, "use"), [vec!["A::m"], vec![]]);
    }

    #[test]
    fn a_call_resolved_by_name_keeps_its_targets_when_none_takes_the_arguments() {
        // A default argument hidden in a macro, or a parse error, must not hide the path.
        let body = "void f(int) {}\nvoid g() { f(); }\n";
        assert_eq!(one_cpp(body, "g"), [["f"]]);
    }

    #[test]
    fn a_typed_receiver_reaches_overrides_and_inherited_methods_only() {
        let body = "struct Base { virtual void run() {}\n void base_only() {} };\n\
                    struct Derived : Base { void run() override {} };\n\
                    struct Other { void run() {}\n void base_only() {} };\n\
                    void use(Base& b, Derived& d, std::vector<int>& v) {\n\
                    b.run(); d.base_only(); v.size(); }\n";
        assert_eq!(
            one_cpp(body, "use"),
            [
                vec!["Base::run".to_string(), "Derived::run".to_string()],
                vec!["Base::base_only".to_string()],
                vec![],
            ]
        );
    }

    #[test]
    fn auto_variables_take_the_return_type_declared_in_sight() {
        let body = "struct Engine { void Load() {} };\nstruct PyEngine { void Load() {} };\n\
                    Engine &GetEngine();\nstd::vector<Engine> &All();\n\
                    void use() { auto &e = GetEngine(); e.Load(); GetEngine().Load();\n\
                    for (auto &x : All()) x.Load(); }\n";
        let calls = one_cpp(body, "use");
        let loads: Vec<_> = calls.into_iter().filter(|c| !c.is_empty()).collect();
        assert_eq!(
            loads,
            [["Engine::Load"], ["Engine::Load"], ["Engine::Load"]]
        );
    }

    #[test]
    fn an_untyped_receiver_in_a_method_is_not_the_methods_own_class() {
        let body = "struct Other { void Insert(int) {} };\nstruct PyRel { void Insert(int v);\n\
                    void Run(); };\nvoid PyRel::Insert(int v) { rel->Insert(v); }\n\
                    void PyRel::Run() { [&] { rel->Insert(1); }(); }\n\
                    void free_use(auto &r) { r.Insert(1); }\n";
        assert_eq!(one_cpp(body, "PyRel::Insert"), [["Other::Insert"]]);
        assert_eq!(one_cpp(body, "PyRel::Run::{lambda#1}"), [["Other::Insert"]]);
        assert_eq!(
            one_cpp(body, "free_use"),
            [vec![
                "Other::Insert".to_string(),
                "PyRel::Insert".to_string()
            ]]
        );
    }

    #[test]
    fn a_class_written_with_its_namespace_is_not_another_namespaces_class() {
        let body = "namespace p { struct Window { void Present() {} }; }\n\
                    namespace q { struct Window { void Present() {} }; }\n\
                    void use(p::Window& w) { w.Present(); }\n";
        assert_eq!(one_cpp(body, "use"), [["p::Window::Present"]]);
    }

    #[test]
    fn a_class_name_called_runs_its_constructors() {
        let body = "namespace n { struct T { T(int) {}\n T(int, int) {} }; }\n\
                    void use() { n::T(1); n::T(1, 2); }\n";
        assert_eq!(one_cpp(body, "use"), [["n::T::T"], ["n::T::T"]]);
    }

    #[test]
    fn a_qualified_method_that_its_class_inherits_is_the_bases() {
        let body = "struct Base { void go() {} };\nstruct Mid : Base {};\nstruct Leaf : Mid {};\n\
                    void use() { Leaf::go(); }\n";
        assert_eq!(one_cpp(body, "use"), [["Base::go"]]);
    }

    #[test]
    fn an_untyped_receiver_in_a_method_is_not_an_object_of_its_own_class() {
        // `rel` is a field declared in a header: the wrapped native object, not another `PyRel`.
        let body = "struct Native { void Insert(int) {} };\n\
                    struct PyRel { void Insert(int v) { rel->Insert(v); this->Check(); }\n\
                    void Check() {} };\n";
        assert_eq!(
            one_cpp(body, "PyRel::Insert"),
            [["Native::Insert"], ["PyRel::Check"]]
        );
    }

    #[test]
    fn a_rust_self_call_stays_with_the_type_of_self() {
        let lib = "struct A;\nstruct B;\nimpl A { fn go(&self) { self.helper(); }\n fn helper(&self) {} }\n\
                   impl B { fn helper(&self) {} }\n";
        let calls = callees(&[("src/lib.rs", lib)], "crate::A::go");
        assert_eq!(calls, [["crate::A::helper"]]);
    }
}

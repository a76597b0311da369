//! A project's own GIL guard types, inferred from their definitions without parsing: a class whose
//! constructor ends by taking the GIL (`PyGILState_Ensure`) and whose destructor starts by giving
//! it back (`PyGILState_Release`) is an acquire guard, like one holding a `gil_scoped_acquire`
//! member; release guards likewise. The GIL call may sit in another member function of the class
//! that the constructor or destructor calls (`PyAcquireGIL() { acquire(); }`). A class deriving
//! from a guard, or holding one as a member, is a guard too, found in rounds over the files that
//! name the guards found before; one whose constructor switches its guard member through that
//! guard's member functions (`_lock.Acquire(); _lock.BeginAllowThreads();`) holds the state those
//! leave, until the member's destructor undoes them. The found types join the knowledge's `release_guards` and
//! `acquire_guards`, where a user may also declare them, before any file is modelled: a guard may
//! be defined in a header and used in every file.

use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::frontend::lexer::{Lexer, Token};
use crate::knowledge::Knowledge;
use crate::model::GilState;

/// What one file says about one class (by qualified name): the steps of its constructor, of its
/// destructor and of its member functions that call the GIL API, or the guard member it holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum GuardFact {
    Constructor(Vec<Step>),
    Destructor(Vec<Step>),
    /// A member function, by name, that calls the GIL API itself.
    Method(String, Vec<Step>),
    /// A base or member of a guard type (as written), holding this state while it lives; with
    /// the member's name (none for a base).
    Member(GilState, String, Option<String>),
}

/// What a body does with the GIL, in order: a GIL call, a call of a member function of its own
/// class (`acquire()`, `this->acquire()`) that counts as that function's steps, or a call of a
/// member function on a field (`_lock.Acquire()`), which counts when the field is one of the
/// class's guard members and that guard's function switches the GIL.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Step {
    Switch(Switch),
    Call(String),
    /// `field.method`.
    MemberCall(String, String),
}

/// How deep calls between a class's member functions are followed: bounds hostile recursion.
const MAX_CALL_DEPTH: usize = 4;

/// The facts of one file, in order. A file that names no GIL call nor guard is not lexed.
pub fn guard_facts(text: &str, knowledge: &Knowledge) -> Vec<(String, GuardFact)> {
    let named = [
        &knowledge.acquire_calls,
        &knowledge.release_calls,
        &knowledge.release_state_calls,
        &knowledge.acquire_guards,
        &knowledge.release_guards,
    ]
    .iter()
    .flat_map(|set| set.names())
    .any(|name| memchr::memmem::find(text.as_bytes(), last(name).as_bytes()).is_some());
    if !named {
        return Vec::new();
    }
    let tokens: Vec<Token> = Lexer::new(text).collect();
    Scanner {
        text,
        closes: closing_brackets(&tokens),
        tokens: &tokens,
        k: knowledge,
        facts: Vec::new(),
    }
    .run()
}

/// What the facts of every file make: the guard types, by each name that may spell them (a class
/// is a guard when it holds a guard member, or when its constructor leaves one state and its
/// destructor starts by switching back), and the member functions that switch the GIL while a
/// guard lives (`NativeLock::Release()`, which restores the thread state its constructor saved;
/// `PyAcquireGIL::acquire()`, which takes it again), as `Class::method` by each spelling of the
/// class, with the state each leaves.
struct Inferred {
    guards: Vec<(String, GilState)>,
    switching_methods: Vec<(String, GilState)>,
}

fn infer_guards(facts: impl IntoIterator<Item = (String, GuardFact)>) -> Inferred {
    #[derive(Default)]
    struct Seen {
        /// Every constructor with steps, in the order seen: the first that switches counts.
        constructors: Vec<Vec<Step>>,
        destructor: Option<Vec<Step>>,
        methods: FxHashMap<String, Vec<Step>>,
        member: Option<GilState>,
        /// Its guard members: their names and types, as written.
        guard_members: Vec<(String, String)>,
    }
    let mut classes: FxHashMap<String, Seen> = FxHashMap::default();
    for (class, fact) in facts {
        let seen = classes.entry(class).or_default();
        match fact {
            GuardFact::Constructor(steps) => seen.constructors.push(steps),
            GuardFact::Destructor(steps) => {
                seen.destructor.get_or_insert(steps);
            }
            GuardFact::Method(name, steps) => {
                seen.methods.entry(name).or_insert(steps);
            }
            GuardFact::Member(state, of, field) => {
                seen.member = seen.member.or(Some(state));
                seen.guard_members.extend(field.map(|field| (field, of)));
            }
        }
    }
    // Each class's member functions that switch the GIL by themselves, with their last switch:
    // what a call on a member of that class does.
    let own_switching: FxHashMap<&str, FxHashMap<&str, Switch>> = classes
        .iter()
        .map(|(class, seen)| {
            let switching = seen
                .methods
                .iter()
                .filter_map(|(name, steps)| {
                    let mut out = Vec::new();
                    flatten(steps, &seen.methods, &|_, _| None, 0, &mut out);
                    Some((name.as_str(), out.last()?.0))
                })
                .collect();
            (class.as_str(), switching)
        })
        .collect();
    // `a::b::Guard` is also written `b::Guard` and `Guard`.
    let spellings = |class: &str| -> Vec<String> {
        let segments: Vec<&str> = class.split("::").collect();
        (0..segments.len())
            .map(|from| segments[from..].join("::"))
            .collect()
    };
    let mut inferred = Inferred {
        guards: Vec::new(),
        switching_methods: Vec::new(),
    };
    for (class, seen) in &classes {
        // `_lock.Acquire()`: the switch of `Acquire` in the guard type of the member `_lock`.
        let on_member = |field: &str, method: &str| {
            let (_, of) = seen.guard_members.iter().find(|(name, _)| name == field)?;
            let of = of.trim_start_matches("::");
            own_switching.iter().find_map(|(other, switching)| {
                let spelled = other
                    .strip_suffix(of)
                    .is_some_and(|outer| outer.is_empty() || outer.ends_with("::"));
                spelled.then(|| switching.get(method).copied()).flatten()
            })
        };
        let switches = |steps: &Vec<Step>| {
            let mut out = Vec::new();
            flatten(steps, &seen.methods, &on_member, 0, &mut out);
            out
        };
        let constructed = seen
            .constructors
            .iter()
            .map(switches)
            .find(|s| !s.is_empty())
            .unwrap_or_default();
        // A constructor that gives back what it took leaves the state as it found it.
        let constructor = constructed.last().filter(|(s, _)| !s.gives_back);
        let destructor = seen.destructor.as_ref().map(switches).unwrap_or_default();
        // The destructor starts by switching back, once it has undone, through the guard's own
        // member functions, a switch that those made while it lived (`if (allowing)
        // EndAllowThreads(); Release();`). A switch written in its body to the constructor's
        // state is its own work (`PyGILState_Ensure()` to drop a reference).
        let by_constructor = constructor.map(|(s, _)| s.to).filter(|state| {
            destructor
                .iter()
                .find(|(s, origin)| s.to != *state || *origin != Origin::Method)
                .is_some_and(|(end, _)| end.to != *state)
        });
        // A constructor that switches its guard member leaves the state of that switch; the
        // member's destructor undoes it.
        let state = match (seen.member, constructor) {
            (Some(_), Some((switch, Origin::Member))) => Some(switch.to),
            (Some(member), _) => Some(member),
            (None, _) => by_constructor,
        };
        let Some(state) = state else {
            continue;
        };
        // Each member function that switches the GIL, with the state its last switch leaves.
        let switching: Vec<(&String, GilState)> = seen
            .methods
            .iter()
            .filter_map(|(name, steps)| Some((name, switches(steps).last()?.0.to)))
            .collect();
        for spelled in spellings(class) {
            inferred.switching_methods.extend(
                switching
                    .iter()
                    .map(|(method, to)| (format!("{spelled}::{method}"), *to)),
            );
            inferred.guards.push((spelled, state));
        }
    }
    inferred.guards.sort();
    inferred.guards.dedup();
    inferred.switching_methods.sort();
    inferred.switching_methods.dedup();
    inferred
}

/// How many rounds of guards built on the guards of the round before are followed (a class
/// deriving from one holding a member deriving from a guard...): bounds hostile chains.
const MAX_ROUNDS: usize = 8;

/// Learns the project's guards into `knowledge` from `facts`, each file's [`guard_facts`], then
/// round by round the guards built on those: a class deriving from a guard, or holding one as a
/// member, in any file, even one that names no GIL call. Each round reads again the files that
/// name a guard found in the round before, and replaces their facts by what they say now.
/// `texts` are the C++ files' texts, by the same index as `facts`.
pub fn learn_guards(
    texts: &[Option<&str>],
    facts: &mut [Vec<(String, GuardFact)>],
    knowledge: &mut Knowledge,
) {
    let mut known: FxHashSet<String> = FxHashSet::default();
    for round in 0..=MAX_ROUNDS {
        let Inferred {
            guards,
            switching_methods,
        } = infer_guards(facts.iter().flatten().cloned());
        // Every guard is also spelled by its bare name, which each file naming it holds.
        let found: Vec<String> = guards
            .iter()
            .filter(|(name, _)| !name.contains("::") && !known.contains(name))
            .map(|(name, _)| name.clone())
            .collect();
        knowledge.add_guards(guards, switching_methods);
        if found.is_empty() || round == MAX_ROUNDS {
            break;
        }
        let Ok(finder) = AhoCorasick::new(&found) else {
            break;
        };
        known.extend(found);
        let k: &Knowledge = knowledge;
        facts.par_iter_mut().zip(texts).for_each(|(facts, text)| {
            if let Some(text) = text
                && finder.is_match(*text)
            {
                *facts = guard_facts(text, k);
            }
        });
    }
}

/// Where a switch of a constructor or destructor is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// In its own body.
    Body,
    /// In a member function of its class that it calls (`Acquire();`).
    Method,
    /// In a member function of a guard member that it calls (`_lock.Acquire();`).
    Member,
}

/// The GIL calls of `steps` in order, with the member functions they call expanded, each with
/// where it is written (`on_member` gives what a call on a member does).
fn flatten(
    steps: &[Step],
    methods: &FxHashMap<String, Vec<Step>>,
    on_member: &dyn Fn(&str, &str) -> Option<Switch>,
    depth: usize,
    out: &mut Vec<(Switch, Origin)>,
) {
    for step in steps {
        match step {
            Step::Switch(switch) if depth == 0 => out.push((*switch, Origin::Body)),
            Step::Switch(switch) => out.push((*switch, Origin::Method)),
            Step::Call(name) if depth < MAX_CALL_DEPTH => {
                if let Some(called) = methods.get(name) {
                    flatten(called, methods, on_member, depth + 1, out);
                }
            }
            Step::Call(_) => {}
            Step::MemberCall(field, method) => {
                out.extend(on_member(field, method).map(|s| (s, Origin::Member)));
            }
        }
    }
}

/// Where each `(` and `{` closes, found in one pass (each kind matched apart: a stray `)` in a
/// body does not end it).
fn closing_brackets(tokens: &[Token]) -> FxHashMap<usize, usize> {
    let mut closes = FxHashMap::default();
    let (mut parens, mut braces) = (Vec::new(), Vec::new());
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Punct(b'(') => parens.push(i),
            Token::Punct(b'{') => braces.push(i),
            Token::Punct(b')') => {
                if let Some(open) = parens.pop() {
                    closes.insert(open, i);
                }
            }
            Token::Punct(b'}') => {
                if let Some(open) = braces.pop() {
                    closes.insert(open, i);
                }
            }
            _ => {}
        }
    }
    closes
}

fn last(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

/// How many tokens may lie between a constructor's parameters and its body (its initialisers):
/// bounds the look-ahead from each `C(` written in a class, which hostile text may repeat.
const MAX_INITIALISERS: usize = 512;

/// A GIL call in a constructor or destructor: the state it switches to, and whether it gives
/// back what an acquire took (`PyGILState_Release`) rather than switching from any state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Switch {
    to: GilState,
    gives_back: bool,
}

/// An open brace: a namespace's or a class's body (named unless anonymous), or another block.
struct Open {
    name: Option<String>,
    class: bool,
    block: bool,
}

/// Which member function a body belongs to.
enum Kind {
    Constructor,
    Destructor,
    Method(String),
}

struct Scanner<'a> {
    text: &'a str,
    tokens: &'a [Token],
    /// For each `(` and `{`, the index of its closing token.
    closes: FxHashMap<usize, usize>,
    k: &'a Knowledge,
    facts: Vec<(String, GuardFact)>,
}

impl<'a> Scanner<'a> {
    fn ident(&self, i: usize) -> Option<&'a str> {
        match self.tokens.get(i)? {
            Token::Ident(start, end) => Some(&self.text[*start..*end]),
            _ => None,
        }
    }

    fn punct(&self, i: usize, p: u8) -> bool {
        self.tokens.get(i) == Some(&Token::Punct(p))
    }

    /// The path `a::b::c` starting at `i` (a leading `::` skipped), and the index after it.
    fn path(&self, mut i: usize) -> Option<(String, usize)> {
        if self.tokens.get(i) == Some(&Token::Scope) {
            i += 1;
        }
        let mut path = self.ident(i)?.to_string();
        i += 1;
        while self.tokens.get(i) == Some(&Token::Scope)
            && let Some(next) = self.ident(i + 1)
        {
            path.push_str("::");
            path.push_str(next);
            i += 2;
        }
        Some((path, i))
    }

    /// Whether the name at `i` starts a base's path: not `b` in `a::b`, but `b` in `public ::b`.
    fn starts_path(&self, i: usize) -> bool {
        i == 0
            || self.tokens[i - 1] != Token::Scope
            || self
                .ident(i.wrapping_sub(2))
                .is_none_or(|w| matches!(w, "public" | "protected" | "private" | "virtual"))
    }

    /// The index of the token closing the bracket opened at `open`, or the end.
    fn close(&self, open: usize) -> usize {
        self.closes.get(&open).copied().unwrap_or(self.tokens.len())
    }

    /// The class and namespace names around, outermost first.
    fn qualified(opens: &[Open], written: &str) -> String {
        let mut names: Vec<&str> = opens.iter().filter_map(|o| o.name.as_deref()).collect();
        names.push(written);
        names.join("::")
    }

    fn run(mut self) -> Vec<(String, GuardFact)> {
        let mut opens: Vec<Open> = Vec::new();
        // The head read since `namespace`, `class` or `struct`: its names, until its `{`.
        let mut head: Option<(Vec<&str>, bool)> = None;
        let mut in_bases = false;
        // The states of the guard types among the head's bases, and the depth of `<` in them.
        let mut guard_bases: Vec<(GilState, String)> = Vec::new();
        let mut angles = 0usize;
        let mut i = 0;
        while i < self.tokens.len() {
            let token = self.tokens[i];
            let word = self.ident(i);
            match (word, token) {
                (Some("namespace"), _) => {
                    head = Some((Vec::new(), false));
                    in_bases = false;
                }
                (Some("class" | "struct" | "union"), _)
                    if self.ident(i.wrapping_sub(1)) != Some("enum") =>
                {
                    head = Some((Vec::new(), true));
                    in_bases = false;
                    guard_bases.clear();
                    angles = 0;
                }
                (_, Token::Punct(b'{')) => {
                    let (name, class, block) = match head.take() {
                        Some((names, class)) => (names.last().map(|n| n.to_string()), class, false),
                        None => (None, false, true),
                    };
                    // A base is constructed before the class's constructor runs and destroyed
                    // after its destructor, like a member.
                    if let Some(name) = name.as_deref().filter(|_| class) {
                        for (state, base) in guard_bases.drain(..) {
                            let class = Self::qualified(&opens, name);
                            self.facts
                                .push((class, GuardFact::Member(state, base, None)));
                        }
                    }
                    opens.push(Open { name, class, block });
                }
                (_, Token::Punct(b'}')) => {
                    opens.pop();
                }
                _ if head.is_some() => {
                    match (word, token) {
                        (_, Token::Punct(b';')) => head = None,
                        (Some("final"), _) => {}
                        (Some(name), _) if !in_bases => {
                            if let Some((names, _)) = &mut head {
                                names.push(name);
                            }
                        }
                        (_, Token::Punct(b':')) => in_bases = true,
                        (Some(_), _) if angles == 0 && self.starts_path(i) => {
                            if let Some((path, _)) = self.path(i)
                                && let Some(state) = self.guard(&path)
                            {
                                guard_bases.push((state, path));
                            }
                        }
                        (_, Token::Scope) | (Some(_), _) => {}
                        // Template arguments of a base are not bases.
                        (_, Token::Punct(b'<')) if in_bases => angles += 1,
                        (_, Token::Punct(b'>')) if in_bases => angles = angles.saturating_sub(1),
                        _ if in_bases => {}
                        // A declaration (`struct timeval tv;`), a template parameter or a
                        // specialisation: not a definition to follow.
                        _ => head = None,
                    }
                }
                _ => {
                    if let Some(end) = self.member_function(&opens, i) {
                        i = end;
                    } else {
                        self.member_guard(&opens, i);
                    }
                }
            }
            i += 1;
        }
        self.facts
    }

    /// A constructor, destructor or member function starting at `i` (`C(`, `~C(`, `f(` in the
    /// body of `C`; `C::C(`, `C::~C(`, `C::f(` at namespace scope): its fact, and the index of its
    /// last token.
    fn member_function(&mut self, opens: &[Open], i: usize) -> Option<usize> {
        if i > 0 && self.tokens[i - 1] == Token::Scope {
            return None;
        }
        let in_class = opens
            .last()
            .filter(|o| o.class)
            .and_then(|o| o.name.as_deref());
        let outside = opens.len().saturating_sub(1);
        let at_namespace_scope = opens.iter().all(|o| !o.class && !o.block);
        let (class, kind, parameters) = if self.punct(i, b'~') {
            let name = self.ident(i + 1)?;
            if in_class != Some(name) || !self.punct(i + 2, b'(') {
                return None;
            }
            (
                Self::qualified(&opens[..outside], name),
                Kind::Destructor,
                i + 2,
            )
        } else {
            let (path, after) = self.path(i)?;
            let (owner, name) = path.rsplit_once("::").unwrap_or(("", &path));
            if self.punct(after, b'(') {
                if owner.is_empty() && in_class == Some(name) {
                    (
                        Self::qualified(&opens[..outside], name),
                        Kind::Constructor,
                        after,
                    )
                } else if !owner.is_empty() && last(owner) == name {
                    (Self::qualified(opens, owner), Kind::Constructor, after)
                } else if let Some(class) = in_class.filter(|_| owner.is_empty()) {
                    let class = Self::qualified(&opens[..outside], class);
                    (class, Kind::Method(name.to_string()), after)
                } else if !owner.is_empty() && at_namespace_scope {
                    (
                        Self::qualified(opens, owner),
                        Kind::Method(name.to_string()),
                        after,
                    )
                } else {
                    return None;
                }
            } else if self.tokens.get(after) == Some(&Token::Scope)
                && self.punct(after + 1, b'~')
                && self.ident(after + 2) == Some(last(&path))
                && self.punct(after + 3, b'(')
            {
                (Self::qualified(opens, &path), Kind::Destructor, after + 3)
            } else {
                return None;
            }
        };
        let end = match kind {
            Kind::Method(_) => self.method_body_end(parameters)?,
            _ => self.body_end(parameters)?,
        };
        let steps = self.steps(parameters, end);
        let fact = match kind {
            Kind::Constructor => GuardFact::Constructor(steps),
            Kind::Destructor => GuardFact::Destructor(steps),
            // Only a function that calls the GIL API itself is worth keeping.
            Kind::Method(name) if steps.iter().any(|s| matches!(s, Step::Switch(_))) => {
                GuardFact::Method(name, steps)
            }
            Kind::Method(_) => return Some(end),
        };
        if !matches!(&fact, GuardFact::Constructor(s) | GuardFact::Destructor(s) if s.is_empty()) {
            self.facts.push((class, fact));
        }
        Some(end)
    }

    /// From the `(` of a member function's parameters, where its body closes: only qualifiers
    /// (`const`, `noexcept`, `override`) may come between; none for a declaration or a call.
    fn method_body_end(&self, parameters: usize) -> Option<usize> {
        let mut i = self.close(parameters) + 1;
        while let Some(word) = self.ident(i) {
            if !matches!(
                word,
                "const" | "noexcept" | "override" | "final" | "volatile"
            ) {
                return None;
            }
            i += 1;
        }
        self.punct(i, b'{').then(|| self.close(i))
    }

    /// From the `(` of a parameter list, where the body that follows (after initialisers) closes;
    /// none for a declaration.
    fn body_end(&self, parameters: usize) -> Option<usize> {
        let mut i = self.close(parameters) + 1;
        let limit = self.tokens.len().min(i + MAX_INITIALISERS);
        while i < limit {
            match self.tokens[i] {
                Token::Punct(b';') => return None,
                Token::Punct(b'(') => i = self.close(i),
                Token::Punct(b'{') => {
                    let end = self.close(i);
                    // `field{value}` among the initialisers.
                    let initialiser = self.ident(i - 1).is_some_and(|w| {
                        !matches!(w, "noexcept" | "override" | "final" | "const" | "try")
                    }) || self.punct(i - 1, b'>');
                    if !initialiser {
                        return Some(end);
                    }
                    i = end;
                }
                Token::Punct(b'}') => return None,
                _ => {}
            }
            i += 1;
        }
        None
    }

    /// The GIL calls, the calls of unqualified functions (maybe members of the same class) and
    /// of member functions on a field (`_lock.Acquire()`) between two tokens, in order.
    fn steps(&self, from: usize, until: usize) -> Vec<Step> {
        let mut found = Vec::new();
        let mut i = from;
        while i < until {
            let Some((path, after)) = self.path(i).filter(|_| self.ident(i).is_some()) else {
                i += 1;
                continue;
            };
            if self.punct(after, b'(') {
                if let Some(switch) = self.switch_called(&path) {
                    found.push(Step::Switch(switch));
                } else if after == i + 1 && self.own_call(i) {
                    found.push(Step::Call(path));
                } else if after == i + 1
                    && let Some(field) = self.field_call(i)
                {
                    found.push(Step::MemberCall(field.to_string(), path));
                }
            }
            i = after;
        }
        found
    }

    /// Whether the name at `i` is called on the object itself: `f(`, `this->f(`, not `x.f(`.
    fn own_call(&self, i: usize) -> bool {
        match i.checked_sub(1).map(|p| self.tokens[p]) {
            Some(Token::Arrow) => self.ident(i - 2) == Some("this"),
            Some(Token::Punct(b'.')) | Some(Token::Scope) => false,
            _ => true,
        }
    }

    /// The plain name the name at `i` is called on: `_lock` in `_lock.f(`; none in `a.b.f(`,
    /// `this->f(` or `g().f(`.
    fn field_call(&self, i: usize) -> Option<&'a str> {
        let on_object = matches!(
            i.checked_sub(1).map(|p| self.tokens[p]),
            Some(Token::Punct(b'.') | Token::Arrow)
        ) && !matches!(
            i.checked_sub(3).map(|p| self.tokens[p]),
            Some(Token::Punct(b'.') | Token::Arrow | Token::Scope)
        );
        self.ident(i.wrapping_sub(2))
            .filter(|w| on_object && *w != "this")
    }

    fn switch_called(&self, path: &str) -> Option<Switch> {
        let (to, gives_back) = if self.k.acquire_calls.contains(path) {
            (GilState::Held, false)
        } else if self.k.release_calls.contains(path) {
            (GilState::Released, false)
        } else if self.k.release_state_calls.contains(path) {
            (GilState::Released, true)
        } else {
            return None;
        };
        Some(Switch { to, gives_back })
    }

    /// A field of a guard type at `i` in a class body: `py::gil_scoped_acquire acquire_;`.
    fn member_guard(&mut self, opens: &[Open], i: usize) {
        let Some(class) = opens
            .last()
            .filter(|o| o.class)
            .and_then(|o| o.name.as_deref())
        else {
            return;
        };
        let starts_statement =
            i == 0 || matches!(self.tokens[i - 1], Token::Punct(b';' | b'{' | b'}' | b':'));
        if !starts_statement {
            return;
        }
        let Some((path, after)) = self.path(i) else {
            return;
        };
        let Some(field) = self.ident(after) else {
            return;
        };
        let Some(state) = self.guard(&path) else {
            return;
        };
        let class = Self::qualified(&opens[..opens.len() - 1], class);
        let member = GuardFact::Member(state, path, Some(field.to_string()));
        self.facts.push((class, member));
    }

    /// The state a guard type holds while it lives, if `path` names one.
    fn guard(&self, path: &str) -> Option<GilState> {
        if self.k.acquire_guards.contains(path) {
            Some(GilState::Held)
        } else if self.k.release_guards.contains(path) {
            Some(GilState::Released)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guards(files: &[&str]) -> Vec<(String, GilState)> {
        let k = Knowledge::builtin();
        infer_guards(files.iter().flat_map(|text| guard_facts(text, &k))).guards
    }

    #[test]
    fn a_constructor_that_takes_the_gil_and_a_destructor_that_gives_it_back_make_a_guard() {
        let text = "namespace a { struct Hold { PyGILState_STATE s;\n\
                    Hold() : s(PyGILState_Ensure()) {}\n ~Hold() { PyGILState_Release(s); } }; }";
        assert_eq!(
            guards(&[text]),
            [
                ("Hold".to_string(), GilState::Held),
                ("a::Hold".to_string(), GilState::Held)
            ]
        );
    }

    #[test]
    fn out_of_line_members_in_other_files_count() {
        let header =
            "namespace a { class NoGil { public: NoGil(); ~NoGil(); PyThreadState *t; }; }";
        let source = "namespace a {\nNoGil::NoGil() { if (PyGILState_Check()) t = PyEval_SaveThread(); }\n\
                      NoGil::~NoGil() { if (t) PyEval_RestoreThread(t); }\n}";
        assert_eq!(
            guards(&[header, source]),
            [
                ("NoGil".to_string(), GilState::Released),
                ("a::NoGil".to_string(), GilState::Released)
            ]
        );
    }

    #[test]
    fn a_guard_member_makes_a_guard() {
        let text = "struct Outer { struct Inner { py::gil_scoped_release r; int n; }; };\n\
                    struct WithOptional { std::optional<py::gil_scoped_release> r; };";
        assert_eq!(
            guards(&[text]),
            [
                ("Inner".to_string(), GilState::Released),
                ("Outer::Inner".to_string(), GilState::Released)
            ]
        );
    }

    #[test]
    fn a_class_that_gives_the_gil_back_before_its_constructor_returns_is_not_a_guard() {
        let text = "struct Counted { Counted(PyObject *o) { auto s = PyGILState_Ensure();\n\
                    Py_INCREF(o); PyGILState_Release(s); }\n\
                    ~Counted() { auto s = PyGILState_Ensure(); PyGILState_Release(s); } };\n\
                    struct OnlyCtor { OnlyCtor() { PyGILState_Ensure(); } };";
        assert_eq!(guards(&[text]), []);
    }

    #[test]
    fn gil_calls_in_member_functions_the_constructor_and_destructor_call_count() {
        let header = "namespace a { class Acquire { public:\n\
                      Acquire() : held_(false) { acquire(); }\n\
                      ~Acquire() { this->release(); }\n\
                      void acquire() { if (!held_) { s_ = PyGILState_Ensure(); held_ = true; } }\n\
                      void release();\n\
                      bool held_; PyGILState_STATE s_; }; }";
        let source =
            "namespace a { void Acquire::release() { if (held_) PyGILState_Release(s_); } }";
        assert_eq!(
            guards(&[header, source]),
            [
                ("Acquire".to_string(), GilState::Held),
                ("a::Acquire".to_string(), GilState::Held)
            ]
        );
        // Another object's `acquire()`, or a free function of that name, is not the class's own.
        let other = "struct Lock { Lock() { other.acquire(); } ~Lock() { release(); }\n\
                     Holder other; };\n\
                     void acquire() { PyGILState_Ensure(); }\n\
                     struct Holder { void acquire() { PyGILState_Ensure(); } };\n\
                     void release() { PyEval_SaveThread(); }";
        assert_eq!(guards(&[other]), []);
    }

    #[test]
    fn member_functions_calling_each_other_are_followed_a_bounded_depth() {
        let text = "struct Loop { Loop() { a(); } ~Loop() { PyGILState_Release(s); }\n\
                    void a() { b(); PyGILState_Ensure(); } void b() { a(); PyGILState_Ensure(); } };";
        assert_eq!(guards(&[text]), [("Loop".to_string(), GilState::Held)]);
    }

    #[test]
    fn a_guards_member_functions_that_switch_the_gil_are_found_with_the_state_they_leave() {
        let k = Knowledge::builtin();
        let text = "namespace a { class NativeLock { public:\n\
                    NativeLock(bool c) { if (c) save(); }\n\
                    ~NativeLock() { if (t) PyEval_RestoreThread(t); }\n\
                    void save() { t = PyEval_SaveThread(); }\n\
                    void Release() { if (t) PyEval_RestoreThread(t); t = nullptr; }\n\
                    void Pause() { t = PyEval_SaveThread(); }\n\
                    PyThreadState *t; }; }";
        let inferred = infer_guards(guard_facts(text, &k));
        let (released, held) = (GilState::Released, GilState::Held);
        let methods: Vec<(&str, GilState)> = inferred
            .switching_methods
            .iter()
            .map(|(name, state)| (name.as_str(), *state))
            .collect();
        assert_eq!(
            methods,
            [
                ("NativeLock::Pause", released),
                ("NativeLock::Release", held),
                ("NativeLock::save", released),
                ("a::NativeLock::Pause", released),
                ("a::NativeLock::Release", held),
                ("a::NativeLock::save", released),
            ]
        );
    }

    #[test]
    fn a_destructor_that_ends_a_methods_release_before_giving_the_gil_back_makes_a_guard() {
        let text = "struct Lock { Lock() { Acquire(); }\n\
                    ~Lock() { if (allowing) EndAllow(); if (held) Release(); }\n\
                    void Acquire() { s = PyGILState_Ensure(); }\n\
                    void Release() { PyGILState_Release(s); }\n\
                    void EndAllow() { PyEval_RestoreThread(t); } };";
        assert_eq!(guards(&[text]), [("Lock".to_string(), GilState::Held)]);
        // One that takes the GIL in its own body to drop a reference, and gives it back, does not
        // undo its constructor's switch (which starts the interpreter, holding the GIL).
        let callback = "struct Callback { Callback(PyObject *f) { set(f); Py_Initialize(); }\n\
                        ~Callback() { PyGILState_STATE s = PyGILState_Ensure();\n\
                        Py_DECREF(f_); PyGILState_Release(s); } PyObject *f_; };";
        assert_eq!(guards(&[callback]), []);
    }

    #[test]
    fn a_constructor_switching_its_guard_member_makes_a_guard_of_the_state_it_leaves() {
        let lock = "class Lock { public: Lock(); Lock(int); ~Lock();\n\
                    void Acquire() { s = PyGILState_Ensure(); }\n\
                    void Release() { PyGILState_Release(s); }\n\
                    void BeginAllow() { t = PyEval_SaveThread(); }\n\
                    void EndAllow() { PyEval_RestoreThread(t); } };\n\
                    Lock::Lock() { Acquire(); }\n\
                    Lock::~Lock() { EndAllow(); Release(); }";
        let unlocked = "struct Unlocked { Unlocked(); Lock lock_; };\n\
                        Unlocked::Unlocked() : lock_(0) { lock_.Acquire(); lock_.BeginAllow(); }";
        // A call on another object's member function of that name is not the member's.
        let other = "struct Other { Other() { lock_.Acquire(); helper.BeginAllow(); }\n\
                     Lock lock_; };";
        let (acquire, release) = learnt(&[lock, unlocked, other]);
        assert_eq!(acquire, ["Lock", "Other"]);
        assert_eq!(release, ["Unlocked"]);
    }

    /// What [`learn_guards`] adds to the knowledge from these files.
    fn learnt(files: &[&str]) -> (Vec<String>, Vec<String>) {
        let mut k = Knowledge::builtin();
        let mut facts: Vec<_> = files.iter().map(|text| guard_facts(text, &k)).collect();
        let texts: Vec<Option<&str>> = files.iter().map(|text| Some(*text)).collect();
        let before = Knowledge::builtin();
        learn_guards(&texts, &mut facts, &mut k);
        let added = |set: &crate::knowledge::NameSet, known: &crate::knowledge::NameSet| {
            let mut names: Vec<String> = set
                .names()
                .filter(|n| !known.contains(n))
                .map(str::to_string)
                .collect();
            names.sort();
            names
        };
        (
            added(&k.acquire_guards, &before.acquire_guards),
            added(&k.release_guards, &before.release_guards),
        )
    }

    #[test]
    fn classes_deriving_from_or_holding_a_guard_are_guards_in_any_file() {
        let guard = "class Take { public: Take() { on(); } ~Take() { off(); }\n\
                     void on() { s = PyGILState_Ensure(); } void off() { PyGILState_Release(s); }\n\
                     PyGILState_STATE s; };\n\
                     struct Drop { py::gil_scoped_release r; };";
        // Names no GIL call: only the guards found first lead to it.
        let derived = "namespace n { class Helper : public ::Take { public: Helper(int); };\n\
                       struct Holder { int id; Helper helper; };\n\
                       class Both : public Base<Take>, virtual Drop {}; }\n\
                       struct Pointing { Holder *h; Helper &r; };\n\
                       struct Last final : n::Holder {};";
        let (acquire, release) = learnt(&[guard, derived]);
        assert_eq!(
            acquire,
            ["Helper", "Holder", "Last", "Take", "n::Helper", "n::Holder"]
        );
        assert_eq!(release, ["Both", "Drop", "n::Both"]);
    }

    #[test]
    fn chains_of_guards_built_on_guards_stop_after_a_bounded_number_of_rounds() {
        let mut text = String::from("struct G0 { py::gil_scoped_acquire a; };");
        for i in 1..=MAX_ROUNDS + 4 {
            text.push_str(&format!("struct G{i} : G{} {{}};", i - 1));
        }
        let (acquire, _) = learnt(&[&text]);
        assert_eq!(acquire.len(), MAX_ROUNDS + 1);
    }

    #[test]
    fn unclosed_constructor_heads_are_read_in_bounded_steps() {
        let text = format!(
            "PyGILState_Ensure struct X {{ {} }};",
            "X() X(".repeat(20_000)
        );
        assert_eq!(guards(&[&text]), []);
    }
}

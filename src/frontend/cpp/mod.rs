//! The C/C++/CUDA front-end: tree-sitter-cpp over the pre-passed text, walked once to fill the
//! language-neutral model.

mod emptied;
mod fields;
pub mod guards;
mod prepass;
pub mod scan;

use rustc_hash::{FxHashMap, FxHashSet};

use std::ops::{ControlFlow, Range};

use thin_vec::ThinVec;
use tree_sitter::{Node, ParseOptions, Parser};

use crate::frontend::lexer::{Lexer, Token};
use crate::knowledge::{Knowledge, ProjectMacro};
use crate::model::{
    Binding, CallNote, CallSite, CallTarget, FileModel, FnId, Function, FunctionKind, GilState,
    GilSwitch, LockKind, LockRegion, Names, PyUse, Receiver, SharedNames, Span, Unconsumed,
    last_segment, receiver_class, type_name,
};
use fields::{Field, FieldChild};

pub use prepass::neutralise;

/// Syntax trees deeper than this are not walked further (generated or hostile input); what lies
/// below is ignored rather than overflowing the stack.
const MAX_DEPTH: usize = 1_000;

pub fn parse(text: &str) -> Result<tree_sitter::Tree, String> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_cpp::LANGUAGE.into())
        .expect("tree-sitter-cpp's ABI is supported by the pinned tree-sitter runtime");
    // tree-sitter calls back every 100 parse operations. Real code takes 0.02 to 0.2 calls a
    // byte; error recovery over a long ambiguous run (thousands of `*` before garbage) takes a
    // number that grows with the square of the run. A budget linear in the size keeps every
    // file's parse linear, and counting operations (not time) keeps the verdict the same on
    // every machine.
    let budget = text.len() / PARSE_BYTES_PER_CALLBACK + MIN_PARSE_CALLBACKS;
    let mut calls = 0;
    let mut within_budget = |_: &tree_sitter::ParseState| {
        calls += 1;
        if calls > budget {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let bytes = text.as_bytes();
    parser
        .parse_with_options(
            &mut |at, _| &bytes[at.min(bytes.len())..],
            None,
            Some(ParseOptions::new().progress_callback(&mut within_budget)),
        )
        .ok_or_else(|| {
            "too ambiguous for the C++ grammar to parse in linear time, skipped".to_string()
        })
}

/// The parse budget: one progress callback (100 operations) per this many bytes...
const PARSE_BYTES_PER_CALLBACK: usize = 2;
/// ...plus this many, for small files.
const MIN_PARSE_CALLBACKS: usize = 5_000;

/// Bytes covered by ERROR nodes and missing tokens, to measure how much of a file the grammar
/// could not read.
pub fn error_bytes(tree: &tree_sitter::Tree) -> usize {
    let mut total = 0;
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_error() {
            total += node.byte_range().len();
        } else if node.has_error() {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    total
}

/// What the file's macros are: wrappers whose body releases or acquires the GIL before using a
/// parameter (`#define SCOPED_GIL_RELEASE(code) { py::gil_scoped_release r; code }`), whose
/// arguments run in that state at every use, in any file; switches, whose body releases or
/// acquires after any use of its parameters (`#define BEGIN_THREADS_IF(n) if (n) _save =
/// PyEval_SaveThread();`, or the object-like `#define BEGIN_THREADS _save = PyEval_SaveThread();`),
/// leaving that state for the rest of the block; and method-table entries
/// (`#define ADD(fn) g_methods.push_back({#fn, (PyCFunction)fn, METH_VARARGS, nullptr})`), whose
/// argument is bound. A macro may switch through another of the same file
/// (`#define BEGIN_THREADS_DESCR(d) if (!needs_api(d)) BEGIN_THREADS`).
///
/// It also finds the functions and macros that the file defines under C-API-style names (see
/// [`c_api_style_definitions`]).
pub fn project_macros(text: &str, knowledge: &Knowledge) -> Vec<ProjectMacro> {
    let mut pending: Vec<MacroDefinition> = macro_definitions(text).collect();
    let mut found = c_api_style_definitions(text, &pending, knowledge);
    let mut switching: FxHashMap<String, GilState> = FxHashMap::default();
    let switch_to = |switching: &FxHashMap<String, GilState>, w: &String| {
        // A name the pre-pass rewrites switches as its rewrite does (`#define GUI_BLOCK_THREADS
        // Py_BLOCK_THREADS`, which becomes `Py_BLOCK();`).
        let rewritten = knowledge.prepass_rewrite.get(w).and_then(|r| {
            r.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .find(|word| !word.is_empty())
        });
        let w: &str = rewritten.unwrap_or(w);
        if knowledge.release_guards.contains(w)
            || knowledge.release_calls.contains(w)
            || knowledge.release_wrappers.contains(w)
        {
            Some(GilState::Released)
        } else if knowledge.acquire_guards.contains(w)
            || knowledge.acquire_calls.contains(w)
            || knowledge.acquire_wrappers.contains(w)
        {
            Some(GilState::Held)
        } else {
            switching.get(w).copied()
        }
    };
    // Each round decides at least one macro, or stops.
    loop {
        let before = pending.len();
        pending.retain(|definition| {
            let replacement = &definition.replacement;
            // A body that only closes a block a release opened (`#define NPY_END_ALLOW_THREADS
            // Py_END_ALLOW_THREADS`, rewritten `}`) takes the GIL back, as the block's end does.
            let Some((at, state)) = replacement
                .iter()
                .enumerate()
                .find_map(|(at, w)| Some((at, switch_to(&switching, w)?)))
                .or_else(|| {
                    let closer = replacement
                        .iter()
                        .position(|w| rewrite_braces(w, knowledge) < 0)?;
                    Some((closer, GilState::Held))
                })
            else {
                return true;
            };
            let switches_both = replacement
                .iter()
                .filter_map(|w| switch_to(&switching, w))
                .any(|s| s != state);
            let name = definition.name.clone();
            let argument_after_switch = definition.params.as_ref().is_some_and(|params| {
                runs_argument_after(&definition.body, &replacement[at], params)
            });
            if !argument_after_switch && block_closes_in_body(replacement, at, knowledge) {
                // Released and taken back inside the body: the caller's state is unchanged.
                return false;
            }
            match &definition.params {
                Some(_) => {
                    // A body that switches both ways around no argument is a scope of its own:
                    // kept as a wrapper, as before switches were told apart.
                    if argument_after_switch || switches_both {
                        found.push(ProjectMacro::Wrapper(name.clone(), state));
                    } else {
                        found.push(ProjectMacro::Switch(name.clone(), state));
                    }
                    switching.insert(name, state);
                }
                None if !switches_both => {
                    found.push(ProjectMacro::Switch(name.clone(), state));
                    switching.insert(name, state);
                }
                None => {}
            }
            false
        });
        if pending.len() == before {
            break;
        }
    }
    for definition in pending {
        if definition.params.is_some()
            && let Some(argument) = entry_argument(&definition.body)
        {
            found.push(ProjectMacro::Entry(definition.name, argument));
        }
    }
    found.extend(def_helper_definitions(text, knowledge));
    found
}

/// The project functions that bind what their callers pass them with the GIL released: their body
/// hands one of their parameters to a `.def` call with a release call guard (`template <class T,
/// class F> void Def(py::module_ &m, F &&f) { args<T>().def(m, T::name, wrap(std::forward<F>(f)),
/// py::call_guard<py::gil_scoped_release>()); }`). Defined in a header, they are called in every
/// file that binds through them.
fn def_helper_definitions(text: &str, knowledge: &Knowledge) -> Vec<ProjectMacro> {
    if memchr::memmem::find(text.as_bytes(), b"call_guard").is_none() {
        return Vec::new();
    }
    let releases = |w: &str| {
        knowledge
            .release_guards
            .names()
            .any(|g| last_segment(g) == w)
    };
    let mut found = Vec::new();
    let mut lexer = Lexer::new(text);
    while let Some(token) = lexer.next() {
        let Some(name) = word(text, &token) else {
            continue;
        };
        if knowledge.def_methods.contains(name) {
            continue;
        }
        let mut after = lexer.clone();
        let Some((params, body)) = definition_parts(&mut after) else {
            continue;
        };
        // Past the body: each token is read in one body at most, however deep the nesting.
        lexer = after;
        let names = parameter_names(&text[params]);
        let body = &text[body];
        let tokens: Vec<Token> = Lexer::new(body).collect();
        let named = |argument: &[Token], wanted: &dyn Fn(&str) -> bool| {
            argument.iter().filter_map(|t| word(body, t)).any(wanted)
        };
        let binds = tokens.windows(3).enumerate().any(|(i, w)| {
            let is_def = matches!(w[0], Token::Punct(b'.') | Token::Arrow)
                && word(body, &w[1]).is_some_and(|m| knowledge.def_methods.contains(m))
                && w[2] == Token::Punct(b'(');
            if !is_def {
                return false;
            }
            let arguments = top_level_arguments(&tokens[i + 3..]);
            // The callable passed on (the first argument is the module or the name).
            arguments
                .iter()
                .skip(1)
                .any(|a| named(a, &|w| names.contains(&w)))
                && arguments
                    .iter()
                    .any(|a| named(a, &|w| w == "call_guard") && named(a, &releases))
        });
        if binds {
            found.push(ProjectMacro::DefHelper(name.to_string()));
        }
    }
    found
}

/// The identifier a token of `text` is, if it is one.
fn word<'t>(text: &'t str, token: &Token) -> Option<&'t str> {
    match *token {
        Token::Ident(s, e) => Some(&text[s..e]),
        _ => None,
    }
}

/// The functions and macros that the file defines under a name the knowledge takes for the C API
/// (`void PyObject_FreePIDL(LPCITEMIDLIST p) { CoTaskMemFree(p); }`, `#define PyMem_RawNew(t, n)
/// ((t *)PyMem_RawMalloc((n) * sizeof(t)))`), each with the C-API-style names its body or
/// expansion calls. Of a macro defined in several `#if` arms, the first counts, as the front-end
/// analyses the first arm.
fn c_api_style_definitions(
    text: &str,
    macros: &[MacroDefinition],
    knowledge: &Knowledge,
) -> Vec<ProjectMacro> {
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    let mut found = Vec::new();
    for definition in macros {
        if !knowledge.is_c_api_call(&definition.name) || !seen.insert(&definition.name) {
            continue;
        }
        let calls = match (&definition.params, definition.replacement.as_slice()) {
            // `#define PyWin_SAFE_DOWNCAST Py_SAFE_DOWNCAST`: another name for that one.
            (None, [alias]) => vec![alias.clone()],
            (Some(_), _) => {
                let expansion = definition.body.split_once(')').map_or("", |(_, e)| e);
                c_api_style_calls(expansion, knowledge)
            }
            (None, _) => c_api_style_calls(&definition.body, knowledge),
        };
        found.push(ProjectMacro::CApiStyle(definition.name.clone(), calls));
    }
    // A function definition: the name after a type (an identifier, `*` or `&`), its parameter
    // list, then its body.
    let mut lexer = Lexer::new(text);
    let mut previous: Option<Token> = None;
    while let Some(token) = lexer.next() {
        let before = previous.replace(token);
        let Token::Ident(start, end) = token else {
            continue;
        };
        let name = &text[start..end];
        // A class of the project's (`struct PyCallbackToken { ... }`): constructing one is a
        // call of the project's own.
        let class_head = matches!(before, Some(Token::Ident(s, e))
            if matches!(&text[s..e], "struct" | "class"));
        if class_head {
            if knowledge.is_c_api_call(name) && defines_class(lexer.clone(), text) {
                found.push(ProjectMacro::CApiStyle(name.to_string(), Vec::new()));
            }
            continue;
        }
        let after_type = match before {
            Some(Token::Ident(s, e)) => !matches!(
                &text[s..e],
                "return" | "else" | "case" | "do" | "goto" | "new" | "delete" | "throw"
            ),
            Some(Token::Punct(b'*' | b'&')) => true,
            _ => false,
        };
        if !after_type || !knowledge.is_c_api_call(name) {
            continue;
        }
        let Some(body) = definition_body(&mut lexer) else {
            continue;
        };
        previous = None;
        found.push(ProjectMacro::CApiStyle(
            name.to_string(),
            c_api_style_calls(&text[body], knowledge),
        ));
    }
    found
}

/// After `struct Name`: whether a definition follows (`{`, a base clause, or `final` before
/// them), not a declaration or an elaborated type (`struct PyModuleDef def = {...}`).
fn defines_class(mut lexer: Lexer, text: &str) -> bool {
    match lexer.next() {
        Some(Token::Punct(b'{' | b':')) => true,
        Some(Token::Ident(s, e)) if &text[s..e] == "final" => {
            matches!(lexer.next(), Some(Token::Punct(b'{' | b':')))
        }
        _ => false,
    }
}

/// After a function's name: reads `( ... ) { ... }` and returns the body's extent, or stops at
/// the first token that is not so.
fn definition_body(lexer: &mut Lexer) -> Option<std::ops::Range<usize>> {
    definition_parts(lexer).map(|(_, body)| body)
}

/// After a function's name: the text of its parameter list and of its body, inside their
/// brackets.
fn definition_parts(lexer: &mut Lexer) -> Option<(Range<usize>, Range<usize>)> {
    if lexer.next()? != Token::Punct(b'(') {
        return None;
    }
    let params_start = lexer.i;
    let mut params_end = lexer.i;
    let mut depth = 1usize;
    while depth > 0 {
        params_end = lexer.i;
        match lexer.next()? {
            Token::Punct(b'(') => depth += 1,
            Token::Punct(b')') => depth -= 1,
            // A parameter list holds no braces or `;`: this was a call in a statement.
            Token::Punct(b'{' | b'}' | b';') => return None,
            _ => {}
        }
    }
    if lexer.next()? != Token::Punct(b'{') {
        return None;
    }
    let start = lexer.i;
    let mut depth = 1usize;
    while depth > 0 {
        match lexer.next()? {
            Token::Punct(b'{') => depth += 1,
            Token::Punct(b'}') => depth -= 1,
            _ => {}
        }
    }
    Some((params_start..params_end, start..lexer.i))
}

/// The names a parameter list declares: the last identifier of each parameter, before any
/// default value (`py::module_ &m, F &&f` gives `m` and `f`).
fn parameter_names(params: &str) -> Vec<&str> {
    let tokens: Vec<Token> = Lexer::new(params).collect();
    top_level_arguments(&tokens)
        .into_iter()
        .filter_map(|parameter| {
            let declared = parameter
                .split(|t| *t == Token::Punct(b'='))
                .next()
                .unwrap_or(parameter);
            declared.iter().rev().find_map(|t| match *t {
                Token::Ident(s, e) => Some(&params[s..e]),
                _ => None,
            })
        })
        .collect()
}

/// The comma-separated arguments of a bracketed list whose opening bracket was read, up to its
/// closing one: `(a, f<b, c>(d))` gives `a` and `f<b, c>(d)`.
fn top_level_arguments(tokens: &[Token]) -> Vec<&[Token]> {
    let mut arguments = Vec::new();
    let (mut depth, mut angles, mut start) = (0usize, 0usize, 0);
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Token::Punct(b'(' | b'[' | b'{') => depth += 1,
            Token::Punct(b')' | b']' | b'}') if depth == 0 => {
                arguments.push(&tokens[start..i]);
                return arguments;
            }
            Token::Punct(b')' | b']' | b'}') => depth -= 1,
            Token::Punct(b'<') => angles += 1,
            Token::Punct(b'>') => angles = angles.saturating_sub(1),
            Token::Punct(b',') if depth == 0 && angles == 0 => {
                arguments.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    arguments.push(&tokens[start..]);
    arguments
}

/// The C-API-style names called in `text` (each such identifier followed by `(`) where the body
/// has not taken the GIL itself: before it does, or after it gives it back. These need the
/// caller's GIL. The body holds its own GIL from an acquire call or the declaration of an acquire
/// guard (`PyGILState_STATE s = PyGILState_Ensure();`, `AttachThread attached;`) to a release
/// call (`PyGILState_Release(s)`, `PyEval_SaveThread()`) or the end of the block it is written in,
/// as the analysis reads it. An acquire under a condition without braces (`if (c) s =
/// PyGILState_Ensure();`) is not taken on every path: it does not count.
fn c_api_style_calls(text: &str, knowledge: &Knowledge) -> Vec<String> {
    /// Where the scan is in the current block.
    #[derive(Clone, Copy, Default)]
    struct Block {
        own_gil: bool,
        /// Open parentheses: a `;` inside them (`for (;;)`) ends no statement.
        parens: usize,
        /// Whether the current statement starts with a control word (`if`, `else`, `for`, ...).
        conditional: bool,
    }
    let mut calls = Vec::new();
    let mut block = Block::default();
    let mut outer: Vec<Block> = Vec::new();
    let mut at_statement_start = true;
    // The path being read (`ns::Guard`), and whether it starts its statement.
    let mut path = String::new();
    let mut path_starts_statement = false;
    let mut after_scope = false;
    for token in Lexer::new(text) {
        let starts_statement = std::mem::replace(&mut at_statement_start, false);
        match token {
            Token::Ident(start, end) => {
                let word = &text[start..end];
                if after_scope {
                    path.push_str("::");
                    path.push_str(word);
                    after_scope = false;
                    continue;
                }
                // `Guard name`: a declaration of a guard, at the start of its statement.
                if path_starts_statement && !block.conditional {
                    if knowledge.acquire_guards.contains(&path) {
                        block.own_gil = true;
                    } else if knowledge.release_guards.contains(&path) {
                        block.own_gil = false;
                    }
                }
                if starts_statement {
                    block.conditional = matches!(
                        word,
                        "if" | "else" | "for" | "while" | "do" | "switch" | "case"
                    );
                }
                path = word.to_string();
                path_starts_statement = starts_statement;
                continue;
            }
            Token::Scope if !path.is_empty() => {
                after_scope = true;
                continue;
            }
            Token::Punct(b'(') => {
                let name = last_segment(&path);
                if knowledge.acquire_calls.contains(&path) {
                    block.own_gil |= !block.conditional;
                } else if knowledge.release_calls.contains(&path)
                    || knowledge.release_state_calls.contains(&path)
                {
                    block.own_gil = false;
                } else if !block.own_gil && knowledge.is_c_api_call(name) {
                    calls.push(name.to_string());
                }
                block.parens += 1;
            }
            Token::Punct(b')') => block.parens = block.parens.saturating_sub(1),
            Token::Punct(b'{') => {
                outer.push(block);
                block = Block {
                    own_gil: block.own_gil,
                    ..Block::default()
                };
                at_statement_start = true;
            }
            Token::Punct(b'}') => {
                block = outer.pop().unwrap_or_default();
                block.conditional = false;
                at_statement_start = true;
            }
            Token::Punct(b';') if block.parens == 0 => {
                block.conditional = false;
                at_statement_start = true;
            }
            _ => {}
        }
        path.clear();
        path_starts_statement = false;
        after_scope = false;
    }
    calls
}

/// Whether `call` (`PyEval_RestoreThread((PyThreadState *)obj->tstate)`) restores the state that
/// the condition `(obj->tstate)` (or `(obj->tstate != NULL)`) tests to be set.
fn restores_tested_state(condition: &str, call: &str) -> bool {
    let compact = |t: &str| -> String { t.chars().filter(|c| !c.is_whitespace()).collect() };
    let condition = compact(condition);
    let condition = condition.strip_prefix('(').unwrap_or(&condition);
    let condition = condition
        .strip_suffix(')')
        .unwrap_or(condition)
        .trim_end_matches("!=NULL")
        .trim_end_matches("!=nullptr")
        .trim_end_matches("!=0");
    let call = compact(call);
    let Some(arguments) = call.split_once('(').map(|(_, a)| a) else {
        return false;
    };
    !condition.is_empty()
        && arguments.match_indices(condition).any(|(at, _)| {
            let before = arguments[..at].chars().next_back();
            let after = arguments[at + condition.len()..].chars().next();
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                && !after.is_some_and(|c| {
                    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' || c == '['
                })
        })
}

/// Whether a function-like macro's `(params) expansion` uses a parameter as code after the word
/// `switch`: `{ py::gil_scoped_release r; code }` runs its argument released. A parameter used
/// only as the object of a member access is data, not code: `if ((obj)->tstate) {
/// PyEval_RestoreThread((obj)->tstate); (obj)->tstate = NULL; }` is a switch.
fn runs_argument_after(body: &str, switch: &str, params: &[String]) -> bool {
    let expansion = body.split_once(')').map_or("", |(_, e)| e);
    // The lexer reads `py::gil_scoped_release` as three tokens.
    let switch = last_segment(switch);
    let mut tokens = Lexer::new(expansion).peekable();
    let mut switched = false;
    while let Some(token) = tokens.next() {
        let Token::Ident(start, end) = token else {
            continue;
        };
        let word = &expansion[start..end];
        if !switched {
            switched = word == switch;
            continue;
        }
        if !params.iter().any(|p| p == word) {
            continue;
        }
        while tokens.next_if_eq(&Token::Punct(b')')).is_some() {}
        if !matches!(tokens.peek(), Some(Token::Arrow | Token::Punct(b'.'))) {
            return true;
        }
    }
    false
}

/// Whether the switch at `replacement[at]` is the pre-pass rewrite of a block opener
/// (`Py_BEGIN_ALLOW_THREADS`, rewritten `{PyEval_SaveThread();`) whose block a later word of the
/// same replacement closes (`Py_END_ALLOW_THREADS`, rewritten `}`).
fn block_closes_in_body(replacement: &[String], at: usize, knowledge: &Knowledge) -> bool {
    if rewrite_braces(&replacement[at], knowledge) <= 0 {
        return false;
    }
    let mut depth = 0;
    replacement[at..].iter().any(|w| {
        depth += rewrite_braces(w, knowledge);
        depth <= 0
    })
}

/// How many more blocks the pre-pass rewrite of `word` opens than it closes.
fn rewrite_braces(word: &str, knowledge: &Knowledge) -> isize {
    knowledge.prepass_rewrite.get(word).map_or(0, |r| {
        r.matches('{').count() as isize - r.matches('}').count() as isize
    })
}

/// A `#define`, continuation lines joined.
struct MacroDefinition {
    name: String,
    /// The parameters of a function-like macro.
    params: Option<Vec<String>>,
    /// The words of its replacement, in order.
    replacement: Vec<String>,
    /// `(params) replacement` of a function-like macro, as written.
    body: String,
}

fn macro_definitions(text: &str) -> impl Iterator<Item = MacroDefinition> + '_ {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .map(|w| w.trim_matches(':').to_string())
            .filter(|w| !w.is_empty())
            .collect()
    };
    let mut lines = text.lines();
    std::iter::from_fn(move || {
        loop {
            let line = lines.next()?;
            let Some(rest) = line.trim_start().strip_prefix('#') else {
                continue;
            };
            let Some(rest) = rest.trim_start().strip_prefix("define") else {
                continue;
            };
            let mut definition = rest.to_string();
            let mut current = line;
            while current.trim_end().ends_with('\\') {
                let Some(next) = lines.next() else { break };
                definition.push(' ');
                definition.push_str(next);
                current = next;
            }
            let definition = definition.trim_start();
            let name_end = definition
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(definition.len());
            let (name, body) = definition.split_at(name_end);
            if name.is_empty() {
                continue;
            }
            // A function-like macro has its `(` right after the name.
            let (params, replacement) = match body.strip_prefix('(') {
                Some(after) => {
                    let (params, replacement) = after.split_once(')').unwrap_or((after, ""));
                    (Some(words(params)), words(replacement))
                }
                None => (None, words(body)),
            };
            return Some(MacroDefinition {
                name: name.to_string(),
                params,
                replacement,
                body: body.to_string(),
            });
        }
    })
}

/// For a macro's `(params) body` that writes a method-table entry naming a parameter twice,
/// `{#fn, (PyCFunction)fn, ...}`, that parameter's index.
fn entry_argument(definition: &str) -> Option<usize> {
    let close = definition.find(')')?;
    let compact: String = definition[close..]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    definition[1..close]
        .split(',')
        .map(str::trim)
        .position(|parameter| {
            !parameter.is_empty()
                && compact
                    .split(&format!("{{#{parameter},"))
                    .nth(1)
                    .and_then(|after| after.split(',').next())
                    .is_some_and(|function| {
                        let function = function.trim_end_matches(')');
                        function == parameter
                            || function.ends_with(&format!("){parameter}"))
                            || function.ends_with(&format!("({parameter}"))
                    })
        })
}

/// Extracts the model of one file. Spans carry file id 0; [`crate::model::Program::add_file`]
/// sets the real one.
pub fn extract(text: &str, knowledge: &Knowledge) -> Result<FileModel, String> {
    let cleaned = neutralise(text, knowledge);
    let tree = parse(&cleaned)?;
    let mut walker = Walker {
        src: cleaned.as_bytes(),
        k: knowledge,
        model: FileModel {
            names_framework: names_framework(&cleaned, knowledge),
            ..FileModel::default()
        },
        scope: Vec::new(),
        usings: Vec::new(),
        shared_scope: SharedNames::default(),
        shared_usings: SharedNames::default(),
        aliases: FxHashMap::default(),
        global_types: FxHashMap::default(),
        returns: FxHashMap::default(),
        global_callables: Default::default(),
        instance_fields: Default::default(),
        def_helpers: FxHashMap::default(),
        object_fields: FxHashMap::default(),
        native_owned: FxHashMap::default(),
        escaping: FxHashSet::default(),
        frames: Vec::new(),
        depth: 0,
        extern_c: false,
    };
    walker.visit(tree.root_node());
    let mut model = walker.model;
    // A file that defines the framework's own functions names it, whatever macro opened its
    // namespace.
    model.names_framework |= model.functions.iter().any(|f| f.framework);
    Ok(model)
}

#[derive(Clone, Copy)]
enum Local {
    /// A lambda bound to a name: calling the name runs it.
    Lambda(FnId),
    /// The function's parameter number `.0`: calling it runs what the caller passed.
    Param(u32),
    /// A Python object that runs Python code when called.
    PyCallable,
}

/// The function whose body is being walked.
struct Frame {
    id: FnId,
    locals: FxHashMap<String, Local>,
    /// Ends of the enclosing blocks, innermost last: a guard lives to the end of its block.
    block_ends: Vec<u32>,
    lambdas: usize,
    /// Declared types of parameters and local variables, for member-call receivers.
    types: FxHashMap<String, String>,
    /// Local variables whose type is not known here (`auto x = make()`): not fields.
    untyped: FxHashSet<String>,
    /// Local `std::thread`s and futures started here, and containers of them, by variable
    /// name: the thread's name. A range-for variable over a container names its threads.
    threads: FxHashMap<String, String>,
    /// Where the body starts: a notifying function "holds" its condition variable from there.
    body_start: u32,
    /// Parameters that refer to a caller's Python object (`const py::object &o`), with their
    /// type as shown: returning one by value copies it.
    python_references: FxHashMap<String, String>,
    /// The function returns a reference (`py::object &get()`): returning copies nothing.
    returns_reference: bool,
    /// Where a named function's return type is written; `None` for a lambda.
    return_type: Option<Span>,
    /// Locals holding an object this function made and has not yet given away: reading and
    /// writing its fields keeps it so, any other use ends it (see [`CallNote::Unpublished`]).
    unpublished: FxHashSet<String>,
    /// The GIL switches (indices) that a jump out of their block does not undo: calls
    /// (`PyEval_SaveThread()`) and branches on whether the GIL is held, not guards, whose
    /// destructors run at the jump.
    lasting: Vec<usize>,
    /// Labels that a `goto` jumps to forward from where such a switch has released the GIL, with
    /// the jump.
    jumps: FxHashMap<String, Span>,
    /// The function asks whether it holds the GIL (see `branch_without_gil`).
    checks_gil: bool,
    /// Local lock guards (`std::unique_lock<std::mutex> lk(m)`) by variable name: `lk.unlock()`
    /// and `lk.lock()` release and re-take the guarded mutex.
    lock_guards: FxHashMap<String, GuardedLock>,
    /// Local GIL guards by variable name, with the end of their block: a member function that
    /// switches the GIL (`lock.acquire()`) does so until the guard's end.
    gil_guard_ends: FxHashMap<String, u32>,
}

/// The mutex a local lock guard holds.
#[derive(Clone)]
struct GuardedLock {
    lock: String,
    member: bool,
    kind: LockKind,
    /// The end of the guard's block, where its destructor unlocks.
    until: u32,
}

impl Frame {
    /// Whether `name` is a parameter or local variable of this function.
    fn declares(&self, name: &str) -> bool {
        self.locals.contains_key(name)
            || self.types.contains_key(name)
            || self.untyped.contains(name)
    }
}

struct Walker<'a> {
    src: &'a [u8],
    k: &'a Knowledge,
    model: FileModel,
    /// Enclosing namespaces and classes.
    scope: Vec<String>,
    usings: Vec<String>,
    /// `scope` and `usings` as the functions and bindings walked keep them.
    shared_scope: SharedNames,
    shared_usings: SharedNames,
    /// `namespace py = pybind11;`, and type aliases of named types (`using ids = xt::pytensor<int, 1>;`,
    /// `typedef py::object Obj;`), one per name for the whole file whatever their scope.
    aliases: FxHashMap<String, String>,
    /// Declared types of namespace-scope variables and class fields.
    global_types: FxHashMap<String, String>,
    /// Declared return types (class types only) of the functions declared or defined so far, by
    /// name as written: what `auto &x = f();` holds.
    returns: FxHashMap<String, String>,
    /// Fields holding Python objects, by class: `(declaration, name, type as written)`.
    object_fields: FxHashMap<String, Vec<(Span, String, String)>>,
    /// Namespace-scope variables and class fields that are Python callables.
    global_callables: FxHashSet<String>,
    /// The non-static fields of the file's classes: a lock named by one is a lock of its object.
    instance_fields: FxHashSet<String>,
    /// Functions of the file that pass their parameters to `.def` (`def_nogil(m, name, f)`), by
    /// name: what releases the GIL on entry of what they bind (`py::call_guard<...>()`).
    def_helpers: FxHashMap<String, Option<(Span, String)>>,
    /// Classes of the file deriving from a library base that the knowledge's
    /// `native_owned_bases` names, by qualified name: that base.
    native_owned: FxHashMap<String, String>,
    /// Functions that return a Python object out of their own GIL acquire scope, made entry
    /// points once (see `returned_out_of_guard`).
    escaping: FxHashSet<FnId>,
    frames: Vec<Frame>,
    depth: usize,
    /// Inside `extern "C" { ... }` or before an `extern "C"` definition.
    extern_c: bool,
}

/// Whether `text` names one of the frameworks' namespaces (`py::`, `namespace py = pybind11;`,
/// `nanobind::`) as a whole word, outside comments and string literals.
fn names_framework(text: &str, knowledge: &Knowledge) -> bool {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(bytes.len(), |end| i + end);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| i + 2 + end + 2);
            }
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b if word(b) => {
                let start = i;
                while i < bytes.len() && word(bytes[i]) {
                    i += 1;
                }
                let identifier = &text[start..i];
                if knowledge.namespaces.iter().any(|ns| ns == identifier) {
                    return true;
                }
            }
            _ => i += 1,
        }
    }
    false
}

/// The bodies through which control leaves a `try` statement normally: the `try` block and
/// each handler (C++ `catch`, SEH `__except`; a `__finally` runs on both paths and is no
/// alternative).
fn try_branches<'t>(statement: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = statement.walk();
    statement
        .field(Field::Body)
        .into_iter()
        .chain(
            statement
                .named_children(&mut cursor)
                .filter(|c| matches!(c.kind(), "catch_clause" | "seh_except_clause"))
                .filter_map(|c| c.field(Field::Body)),
        )
        .collect()
}

/// Of the GIL switches `switches`, the last at the top level of `branch` (lasting to its end):
/// the state the branch ends in.
fn ends_in<'s>(switches: &'s [GilSwitch], branch: Node) -> Option<&'s GilSwitch> {
    switches
        .iter()
        .filter(|s| {
            branch.byte_range().contains(&(s.span.start as usize))
                && s.scope.end >= branch.end_byte() as u32
        })
        .max_by_key(|s| s.span.start)
}

/// Standard smart pointers, often written without `std::`: their `lock()` is no mutex's.
const STANDARD_POINTERS: &[&str] = &["weak_ptr", "shared_ptr", "unique_ptr"];

/// The element type of a sequence container type as declared (`std::vector<Q *>` gives `Q *`);
/// `None` for anything else: a map's `m[k]` is its value, not its first template argument.
fn element_type(container: &str) -> Option<&str> {
    const SEQUENCES: &[&str] = &["vector", "array", "deque", "span"];
    let name = container.split('<').next()?.rsplit("::").next()?.trim();
    if !SEQUENCES.contains(&name) {
        return None;
    }
    first_template_argument(container)
}

/// The first template argument of a type or name as written: `Spec` in `py::class_<Spec, Base>`.
fn first_template_argument(written: &str) -> Option<&str> {
    let (_, arguments) = written.split_once('<')?;
    // Up to a `,` or the closing `>` at its own depth.
    let mut depth = 0usize;
    let end = arguments.char_indices().find_map(|(i, c)| match c {
        '<' => {
            depth += 1;
            None
        }
        '>' if depth == 0 => Some(i),
        '>' => {
            depth -= 1;
            None
        }
        ',' if depth == 0 => Some(i),
        _ => None,
    })?;
    Some(arguments[..end].trim()).filter(|e| !e.is_empty())
}

fn span(node: Node) -> Span {
    Span {
        file: 0,
        start: node.start_byte() as u32,
        end: node.end_byte() as u32,
    }
}

impl<'a> Walker<'a> {
    fn text(&self, node: Node) -> &'a str {
        std::str::from_utf8(&self.src[node.byte_range()]).unwrap_or("")
    }

    /// A name as written, with whitespace, template arguments and namespace aliases removed:
    /// `py::cast<int>` -> `pybind11::cast`... except that aliases to framework namespaces are kept
    /// as written, since the knowledge lists both spellings.
    fn path(&self, node: Node) -> String {
        self.path_of_text(self.text(node))
    }

    /// [`Walker::path`] of a name's text.
    fn path_of_text(&self, text: &str) -> String {
        let mut out = String::new();
        let mut depth = 0;
        for c in text.chars() {
            match c {
                '<' => depth += 1,
                '>' if depth > 0 => depth -= 1,
                _ if depth > 0 || c.is_whitespace() => {}
                _ => out.push(c),
            }
        }
        let out = out.trim_start_matches("::").to_string();
        match out.split_once("::") {
            Some((head, tail)) if !self.k.is_framework_namespace(head) => {
                match self.aliases.get(head) {
                    Some(target) => format!("{target}::{tail}"),
                    None => out,
                }
            }
            Some(_) => out,
            None => self.aliases.get(&out).cloned().unwrap_or(out),
        }
    }

    /// `using ids = xt::pytensor<int, 1>;` or `typedef py::object Obj;`: later uses of the alias
    /// name that type (see [`Walker::path_of_text`]). Only an alias of a named type as a whole: a
    /// pointer or reference to it owns nothing, and `typedef struct S S;` names no other type.
    fn record_type_alias(&mut self, node: Node) {
        let (name, ty) = if node.kind() == "alias_declaration" {
            let descriptor = node
                .field(Field::Type)
                .filter(|d| d.field(Field::Declarator).is_none());
            (
                node.field(Field::Name),
                descriptor.and_then(|d| d.field(Field::Type)),
            )
        } else {
            let mut cursor = node.walk();
            let declarators: Vec<Node> = node
                .children_by_field_name("declarator", &mut cursor)
                .collect();
            (
                match declarators[..] {
                    [only] if only.kind() == "type_identifier" => Some(only),
                    _ => None,
                },
                node.field(Field::Type),
            )
        };
        let (Some(name), Some(ty)) = (name, ty) else {
            return;
        };
        if !matches!(
            ty.kind(),
            "type_identifier" | "qualified_identifier" | "template_type"
        ) {
            return;
        }
        let target = self.path(ty);
        let name = self.text(name);
        if target != name {
            self.aliases.insert(name.to_string(), target);
        }
    }

    /// Whether `path` names an entry of `set`, also through `using namespace pybind11;`.
    /// Whether `path` names an entry of `set`, also unqualified where a framework namespace is
    /// open: after `using namespace pybind11;`, or inside `namespace pybind11 { ... }`.
    fn names(&self, set: &crate::knowledge::NameSet, path: &str) -> bool {
        set.contains(path)
            || !path.contains("::")
                && self
                    .usings
                    .iter()
                    .chain(self.scope.first())
                    .filter(|u| self.k.is_framework_namespace(u))
                    .any(|u| set.contains(&format!("{u}::{path}")))
    }

    /// The GIL state a guard of type `ty_path` holds while it lives, if it is a guard. A
    /// framework's guard written bare (`gil_scoped_acquire acquire;`) in a file that names the
    /// framework is that guard: the `using namespace pybind11;` that allows it is often in an
    /// included header, which this file's walk does not see.
    fn guard_state(&self, ty_path: &str) -> Option<GilState> {
        let names = |set| {
            self.names(set, ty_path)
                || !ty_path.contains("::")
                    && self.model.names_framework
                    && self.k.in_framework_namespace(set, ty_path)
        };
        if names(&self.k.release_guards) {
            Some(GilState::Released)
        } else if names(&self.k.acquire_guards) {
            Some(GilState::Held)
        } else {
            None
        }
    }

    fn frame(&mut self) -> Option<&mut Frame> {
        self.frames.last_mut()
    }

    fn function(&mut self) -> Option<&mut Function> {
        let id = self.frames.last()?.id;
        Some(&mut self.model.functions[id])
    }

    fn block_end(&self) -> u32 {
        self.frames
            .last()
            .and_then(|f| f.block_ends.last().copied())
            .unwrap_or(u32::MAX)
    }

    fn visit(&mut self, node: Node) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.visit_node(node);
        self.depth -= 1;
    }

    fn visit_children(&mut self, node: Node) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.visit(child);
        }
    }

    fn visit_node(&mut self, node: Node) {
        match node.kind() {
            "namespace_definition" => {
                let names: Vec<String> = node
                    .field(Field::Name)
                    .map(|n| self.path(n).split("::").map(str::to_string).collect())
                    .unwrap_or_else(|| vec!["(anonymous)".to_string()]);
                let depth = self.scope.len();
                self.scope.extend(names);
                if let Some(body) = node.field(Field::Body) {
                    self.visit_children(body);
                }
                self.scope.truncate(depth);
            }
            "alias_declaration" | "type_definition" => self.record_type_alias(node),
            "namespace_alias_definition" => {
                let mut cursor = node.walk();
                let parts: Vec<Node> = node.named_children(&mut cursor).collect();
                if let [alias, .., target] = parts[..] {
                    self.aliases
                        .insert(self.text(alias).to_string(), self.path(target));
                }
            }
            "using_declaration" => {
                let mut cursor = node.walk();
                if let Some(name) = node.named_children(&mut cursor).last() {
                    let path = self.path(name);
                    let is_namespace = self.text(node).contains("namespace");
                    // `using ns::f;` makes `ns` visible for the one name: close enough.
                    let visible = if is_namespace {
                        path
                    } else {
                        path.rsplit_once("::")
                            .map_or(path.clone(), |(ns, _)| ns.to_string())
                    };
                    // Written inside a namespace, the name may be relative to it.
                    if !self.scope.is_empty() {
                        self.usings
                            .push(format!("{}::{visible}", self.scope.join("::")));
                    }
                    self.usings.push(visible);
                    // In a body it is visible to the rest of that function (which its calls are
                    // resolved with), and nowhere after it (see `enter`).
                    if let Some(id) = self.frames.last().map(|f| f.id) {
                        self.model.functions[id].usings = self.shared_usings.get(&self.usings);
                    }
                }
            }
            "class_specifier" | "struct_specifier" | "union_specifier" => {
                let (Some(name), Some(body)) = (node.field(Field::Name), node.field(Field::Body))
                else {
                    return self.visit_children(node);
                };
                let depth = self.scope.len();
                self.scope
                    .extend(self.path(name).split("::").map(str::to_string));
                let base_nodes: Vec<Node> = node
                    .named_children(&mut node.walk())
                    .filter(|c| c.kind() == "base_class_clause")
                    .flat_map(|clause| {
                        let mut cursor = clause.walk();
                        clause
                            .named_children(&mut cursor)
                            .filter(|b| b.kind() != "access_specifier")
                            .collect::<Vec<_>>()
                    })
                    .collect();
                let bases = base_nodes.iter().map(|b| self.path(*b)).collect();
                self.model.classes.push((self.scope.join("::"), bases));
                // Fields may be declared after the methods that use them, and their types are
                // often the class's own aliases, declared first.
                let mut cursor = body.walk();
                for field in body.named_children(&mut cursor) {
                    let alias = match field.kind() {
                        "template_declaration" => field
                            .named_children(&mut field.walk())
                            .find(|d| d.kind() == "alias_declaration"),
                        _ => Some(field),
                    };
                    if let Some(alias) = alias
                        && matches!(alias.kind(), "alias_declaration" | "type_definition")
                    {
                        self.record_type_alias(alias);
                    }
                    if field.kind() == "field_declaration" {
                        self.record_field(field);
                        if !is_static(field, self.src)
                            && let Some(name) =
                                field.field(Field::Declarator).and_then(declared_name)
                        {
                            self.instance_fields.insert(self.text(name).to_string());
                        }
                    }
                }
                let owned = |k: &Knowledge, path: &str| k.native_owned_bases.contains(path);
                let class = self.scope.join("::");
                // The library's own class (`nanobind::ndarray`, in the library's source) too.
                let base = base_nodes
                    .iter()
                    .find_map(|b| self.library_base(*b, owned))
                    .or_else(|| owned(self.k, &class).then(|| class.clone()));
                if let Some(base) = base {
                    self.native_owned.insert(class, base);
                }
                self.library_virtual_overrides(&base_nodes);
                self.visit_children(body);
                self.native_owned_destructor(name, body);
                self.scope.truncate(depth);
            }
            "function_definition" => self.visit_function(node),
            "linkage_specification" => {
                let c = node
                    .field(Field::Value)
                    .is_some_and(|v| self.text(v) == "\"C\"");
                let outer = self.extern_c;
                self.extern_c = outer || c;
                self.visit_children(node);
                self.extern_c = outer;
            }
            // A lambda in a braced initialiser (`std::map<K, std::function<..>> m = {{k, [](..)
            // {..}}}`) is stored in what is built, not run.
            "lambda_expression"
                if node.parent().is_some_and(|p| {
                    matches!(p.kind(), "initializer_list" | "initializer_pair")
                }) =>
            {
                self.keep_value(node);
            }
            "lambda_expression" => {
                let id = self.visit_lambda(node);
                let introducer = node.field(Field::Captures).unwrap_or(node);
                self.add_call(introducer, CallTarget::Direct(id));
            }
            "compound_statement" => {
                let end = node.end_byte() as u32;
                if let Some(frame) = self.frame() {
                    frame.block_ends.push(end);
                }
                self.visit_children(node);
                if let Some(frame) = self.frame() {
                    frame.block_ends.pop();
                }
            }
            "if_statement" => {
                self.branch_without_gil(node);
                let before = self.function().map_or(0, |f| f.gil_switches.len());
                self.visit_children(node);
                self.switch_after_if(node, before);
            }
            "try_statement" | "seh_try_statement" => {
                let before = self.function().map_or(0, |f| f.gil_switches.len());
                self.visit_children(node);
                let branches = try_branches(node);
                self.switch_after_branches(node, &branches, before);
            }
            // `if (Guard g; cond)`, `for (Guard g; ...)`: what the condition or the loop's
            // initialiser declares lives to the end of the statement (an `else` included), not
            // to the end of the enclosing block.
            "condition_clause" | "for_statement" => {
                let statement = match node.kind() {
                    "condition_clause" => node.parent().unwrap_or(node),
                    _ => node,
                };
                let end = statement.end_byte() as u32;
                if let Some(frame) = self.frame() {
                    frame.block_ends.push(end);
                }
                self.visit_children(node);
                if let Some(frame) = self.frame() {
                    frame.block_ends.pop();
                }
            }
            "call_expression" => self.visit_call(node),
            "goto_statement" => self.jump(node),
            "labeled_statement" => {
                self.land(node);
                self.visit_children(node);
            }
            "identifier" => self.use_local(node),
            "expression_statement" if node.named_child_count() == 1 => {
                // An object-like switch macro as a statement: `NPY_END_THREADS;`.
                let Some(only) = node.named_child(0) else {
                    return;
                };
                if only.kind() == "identifier" {
                    let name = self.text(only).to_string();
                    self.add_switch_call(node, &name, format!("`{name}`"));
                }
                self.visit_children(node);
            }
            "return_statement" => {
                if let Some(value) = node.named_child(0) {
                    if let Some(what) = self.copied_for_return(value) {
                        self.add_py_use(value, what, false);
                    }
                    self.returned_out_of_guard(value);
                }
                self.visit_children(node);
            }
            "assignment_expression" => {
                // `flag = 0` on an atomic stores to it (see `wait_for_work`).
                if let Some(left) = node.field(Field::Left)
                    && self.type_of(left).is_some_and(|ty| {
                        self.names(&self.k.atomic_types, ty.split('<').next().unwrap_or(&ty))
                    })
                    && let Some(frame) = self.frames.last()
                {
                    let region = LockRegion {
                        member: false,
                        span: span(node),
                        kind: LockKind::Atomic,
                        lock: self.path(left),
                        scope: frame.body_start..node.start_byte() as u32,
                        waits: false,
                    };
                    if let Some(function) = self.function() {
                        function.lock_regions.push(region);
                    }
                }
                if let (Some(left), Some(right)) =
                    (node.field(Field::Left), node.field(Field::Right))
                    && left.kind() == "field_expression"
                {
                    self.assign_callback_field(left, right);
                }
                // `handlers[id] = f`: an element of a container.
                match (node.field(Field::Left), node.field(Field::Right)) {
                    (Some(left), Some(right)) if left.kind() == "subscript_expression" => {
                        self.visit(left);
                        self.keep_value(right);
                    }
                    // `callback = [cb] { .. };` binds the lambda to a local, as its declaration
                    // would: calling the name runs it, assigning does not.
                    (Some(left), Some(right))
                        if left.kind() == "identifier"
                            && right.kind() == "lambda_expression"
                            && self
                                .frames
                                .last()
                                .is_some_and(|f| f.declares(self.text(left))) =>
                    {
                        let name = self.text(left).to_string();
                        let id = self.visit_lambda(right);
                        if let Some(frame) = self.frame() {
                            frame.locals.insert(name, Local::Lambda(id));
                        }
                    }
                    _ => self.visit_children(node),
                }
            }
            "for_range_loop" => {
                // `for (auto &t : pool)`: `t` is each of `pool`'s threads.
                if let (Some(element), Some(range)) = (
                    node.field(Field::Declarator).and_then(declared_name),
                    node.field(Field::Right),
                ) {
                    let element_name = self.text(element).to_string();
                    let range = self.text(range);
                    if let Some(frame) = self.frame()
                        && let Some(thread) = frame.threads.get(range).cloned()
                    {
                        frame.threads.insert(element_name, thread);
                    }
                }
                self.type_range_variable(node);
                self.visit_children(node);
            }
            // `new T(a)`, `T{a}`: `T`'s constructor runs.
            "new_expression" | "compound_literal_expression" => {
                if let Some(ty) = node.field(Field::Type) {
                    let arguments = node
                        .field(Field::Arguments)
                        .or_else(|| node.field(Field::Value));
                    self.construct(ty, arguments);
                }
                self.visit_children(node);
            }
            "declaration" => self.visit_declaration(node),
            _ => self.visit_children(node),
        }
    }

    fn new_function(
        &mut self,
        name: String,
        qualname: String,
        scope: Names,
        kind: FunctionKind,
        name_span: Span,
        parameters: Option<Node>,
    ) -> FnId {
        let arity = parameters.map_or((0, None), |p| self.arity(p));
        let framework = qualname
            .split("::")
            .next()
            .is_some_and(|first| self.k.is_framework_namespace(first));
        self.model.functions.push(Function {
            scope,
            usings: self.shared_usings.get(&self.usings),
            extern_c: self.extern_c,
            framework,
            arity,
            ..Function::new(name, qualname, kind, name_span)
        });
        self.model.functions.len() - 1
    }

    fn visit_function(&mut self, node: Node) {
        let (Some(declarator), Some(body)) =
            (node.field(Field::Declarator), node.field(Field::Body))
        else {
            return self.visit_children(node);
        };
        let Some(function_declarator) = find_kind(declarator, "function_declarator") else {
            return self.visit_children(node);
        };
        let Some(name_node) = function_declarator.field(Field::Declarator) else {
            return;
        };
        let written = self.path(name_node);
        self.record_return(node, &written);
        let mut segments: Vec<String> = written.split("::").map(str::to_string).collect();
        let name = segments.pop().unwrap_or_default();
        // `SOME_MACRO(args) { ... }` that the grammar took for a definition: a macro use, not a
        // function (`PYBIND11_MODULE` aside). The body is still a block, where a guard ends:
        // often it is the body of an immediately invoked lambda among the macro's arguments
        // (`ASSIGN_OR_RETURN(auto v, [&]() -> T { py::gil_scoped_release r; ... }());`).
        if is_macro_name(&name) && !self.k.module_macros.contains(&name) {
            return self.visit(body);
        }
        let in_class = matches!(
            node.parent().map(|p| p.kind()),
            Some("field_declaration_list" | "template_declaration")
        ) && self.inside_class(node);
        let mut scope = self.scope.clone();
        scope.extend(segments);
        let mut qualname = scope.clone();
        qualname.push(name.clone());
        let kind = if in_class {
            FunctionKind::Method
        } else {
            FunctionKind::Free
        };
        // `PYBIND11_MODULE(name, m)` reads as a function named after the macro; name it after the
        // module instead so two modules stay apart.
        let qualname = if self.k.module_macros.contains(&name) {
            let module = function_declarator
                .field(Field::Parameters)
                .and_then(|p| p.named_child(0))
                .map_or("", |p| self.text(p));
            format!("{}({module})", qualname.join("::"))
        } else {
            qualname.join("::")
        };
        let parameters = function_declarator.field(Field::Parameters);
        let destructor = name.starts_with('~');
        // `C::C` or `C` in the class `C` (a namespace's own `ns::ns` being rare).
        let constructor = (in_class || written.contains("::")) && scope.last() == Some(&name);
        let class = scope.join("::");
        let scope = self.shared_scope.get(&scope);
        let id = self.new_function(
            name.clone(),
            qualname,
            scope,
            kind,
            span(name_node),
            parameters,
        );
        self.model.functions[id].wraps_python = in_class && self.object_fields.contains_key(&class);
        let returns_reference = declarator.kind() == "reference_declarator";
        let return_type = node.field(Field::Type).map(span);
        self.enter(id, parameters, body, (returns_reference, return_type));
        if destructor && let Some(fields) = self.object_fields.get(&class).cloned() {
            let owned = fields
                .iter()
                .cloned()
                .map(|(at, field, ty)| {
                    let what =
                        format!("the `{ty}` field `{field}` is destroyed after `{name}`'s body");
                    (at, field, what)
                })
                .collect();
            if self.native_owned.contains_key(&class) {
                // Entered released already (see `native_owned_destructor`): what it owns is
                // destroyed without the GIL whether or not its body takes it.
                self.destroyed_after(id, owned, Some(body));
            } else if let Some(acquire) = self.destroyed_after_body(id, &name, owned, body) {
                self.defaulted_copies(&name, &fields, node, acquire);
            }
        } else if constructor {
            // A constructor runs where the project constructs its class (`new T`,
            // `std::make_unique<T>`, `py::init<..>()`), each followed: no library or glue code
            // calls it unseen, so one that takes the GIL first is no entry of its own.
            self.unwound_fields(id, &name, &class, node, body);
        } else {
            self.acquiring_entry(id, &name, body);
        }
    }

    /// A constructor that takes the GIL itself and may throw under it (a `throw`, or a Python
    /// call, which raises as `error_already_set`): unwinding destroys its guard first, then the
    /// fields already constructed, in the state the constructor was entered in. A Python-object
    /// field holding a reference by then (from the member initialisers, or assigned before the
    /// throw) drops it without the GIL where the constructor is called with the GIL released.
    fn unwound_fields(&mut self, id: FnId, name: &str, class: &str, definition: Node, body: Node) {
        let Some(fields) = self.object_fields.get(class).cloned() else {
            return;
        };
        let f = &self.model.functions[id];
        let guarded = |at: u32| f.gil_state_at(at, GilState::Released) == GilState::Held;
        let in_body = |at: u32| (body.start_byte()..body.end_byte()).contains(&(at as usize));
        let mut throws: Vec<u32> = f
            .py_uses
            .iter()
            .map(|u| u.span.start)
            .filter(|&at| in_body(at) && guarded(at))
            .collect();
        let parameters: FxHashSet<&str> = definition
            .field(Field::Declarator)
            .and_then(|d| find_kind(d, "function_declarator"))
            .and_then(|d| d.field(Field::Parameters))
            .map(|p| {
                let mut cursor = p.walk();
                p.named_children(&mut cursor)
                    .filter_map(|p| p.field(Field::Declarator).and_then(declared_name))
                    .map(|n| self.text(n))
                    .collect()
            })
            .unwrap_or_default();
        // Where each field is first given a reference in the body: `this->f = ..`, or `f = ..`
        // where no parameter is named `f`.
        let mut assigned: FxHashMap<&str, u32> = FxHashMap::default();
        let mut stack = vec![body];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "lambda_expression" => continue,
                "throw_statement" | "throw_expression" if guarded(node.start_byte() as u32) => {
                    throws.push(node.start_byte() as u32);
                }
                "assignment_expression" => {
                    let field = node
                        .field(Field::Left)
                        .and_then(|left| match this_field(left) {
                            Some(field) => Some(self.text(field)),
                            None => Some(self.text(left))
                                .filter(|n| left.kind() == "identifier" && !parameters.contains(n)),
                        });
                    if let Some(field) = field {
                        let at = assigned.entry(field).or_insert(u32::MAX);
                        *at = (*at).min(node.start_byte() as u32);
                    }
                }
                _ => {}
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        let Some(&last_throw) = throws.iter().max() else {
            return;
        };
        let initialised: FxHashSet<&str> = definition
            .named_children(&mut definition.walk())
            .filter(|c| c.kind() == "field_initializer_list")
            .flat_map(|list| {
                let mut cursor = list.walk();
                list.named_children(&mut cursor).collect::<Vec<_>>()
            })
            .filter_map(|i| i.named_child(0))
            .map(|n| self.text(n))
            .collect();
        let uses: Vec<PyUse> = fields
            .into_iter()
            .filter(|(_, field, _)| {
                initialised.contains(field.as_str())
                    || assigned
                        .get(field.as_str())
                        .is_some_and(|&at| at < last_throw)
            })
            .map(|(at, field, ty)| PyUse {
                span: at,
                what: format!(
                    "`{name}` may throw after its guard, destroying the `{ty}` field `{field}`"
                ),
                runs_code: false,
                needs_gil_check: true,
                at_destruction: true,
            })
            .collect();
        self.model.functions[id].py_uses.extend(uses);
    }

    /// A function whose first statement takes the GIL for the rest of its body is made to be
    /// called without it: by generated glue code (Cython, a C API), another library or a native
    /// thread, none of which need be in sight. It is an entry point entered with the GIL
    /// released, so the waits it makes holding the GIL are seen even when nothing here calls it.
    fn acquiring_entry(&mut self, id: FnId, name: &str, body: Node) {
        let f = &self.model.functions[id];
        let mut cursor = body.walk();
        let Some(first) = body
            .named_children(&mut cursor)
            .find(|s| s.kind() != "comment")
        else {
            return;
        };
        let Some(acquire) = f
            .gil_switches
            .iter()
            .find(|s| s.to == GilState::Held && s.scope.end == body.end_byte() as u32)
            .map(|s| s.span)
            .filter(|at| {
                !f.framework
                    && (first.start_byte()..first.end_byte()).contains(&(at.start as usize))
            })
        else {
            return;
        };
        let before = |at: &Span| at.start < acquire.start;
        if f.py_uses.iter().any(|u| before(&u.span)) || f.calls.iter().any(|c| before(&c.span)) {
            return;
        }
        let why = format!("`{name}` takes the GIL for its whole body, so it is called without it");
        self.push_binding(
            name.to_string(),
            span(body),
            CallTarget::Direct(id),
            Some((acquire, why)),
        );
    }

    /// The library base, by its qualified name, that `base` (written in a base clause of the class
    /// being walked) names, when `known` to the knowledge: a name written relative to an enclosing
    /// namespace counts.
    fn library_base(&self, base: Node, known: fn(&Knowledge, &str) -> bool) -> Option<String> {
        let written = self.path(base);
        let written = written.split('<').next().unwrap_or(&written);
        let namespaces = &self.scope[..self.scope.len().saturating_sub(1)];
        (0..=namespaces.len())
            .rev()
            .map(|n| {
                let mut path = namespaces[..n].join("::");
                if !path.is_empty() {
                    path.push_str("::");
                }
                path.push_str(written);
                path
            })
            .find(|path| known(self.k, path))
    }

    /// Overrides of a library base's virtual methods that the library or the C++ runtime calls
    /// in any GIL state (the knowledge's `library_virtuals`: `std::streambuf::sync`, run by any
    /// `std::cout <<`) are entry points entered released.
    fn library_virtual_overrides(&mut self, bases: &[Node]) {
        let class = self.scope.join("::");
        let known = |k: &Knowledge, path: &str| k.library_virtuals.contains_key(path);
        let matched: Vec<(Node, String)> = bases
            .iter()
            .filter_map(|b| self.library_base(*b, known).map(|base| (*b, base)))
            .collect();
        for (node, base) in matched {
            for method in self.k.library_virtuals[&base].clone() {
                let target = CallTarget::Named {
                    path: format!("{class}::{method}").into(),
                    receiver: Receiver::None,
                };
                let why = format!(
                    "`{}` overrides `{base}::{method}`, which is called on any thread, with or \
                     without the GIL",
                    last_segment(&class)
                );
                let at = span(node);
                self.push_binding(method, at, target, Some((at, why)));
            }
        }
    }

    /// A class deriving from a library base that the library frees on whichever thread drops it
    /// last (the knowledge's `native_owned_bases`: `arrow::Buffer` held in `shared_ptr`s) is
    /// destroyed without the GIL: its destructor is an entry point entered released. Defined
    /// out of the class, the destructor is found by its name; a class with no destructor body
    /// (none written, or `= default`) gets one here, which destroys its Python-object fields.
    fn native_owned_destructor(&mut self, name: Node, body: Node) {
        let class = self.scope.join("::");
        let Some(base) = self.native_owned.get(&class).cloned() else {
            return;
        };
        let short = self.text(name).to_string();
        let destructor = format!("~{}", last_segment(&short));
        let declared = |text: &str| {
            let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            text.contains(&format!("{destructor}(")) && !text.contains("=default")
        };
        let mut written = false;
        let mut cursor = body.walk();
        for member in body.named_children(&mut cursor) {
            written |= declared(self.text(member));
        }
        let fields = self.object_fields.get(&class).cloned().unwrap_or_default();
        let target = if written {
            CallTarget::Named {
                path: format!("{class}::{destructor}").into(),
                receiver: Receiver::None,
            }
        } else if fields.is_empty() {
            return;
        } else {
            let scope = self.shared_scope.get(&self.scope);
            let id = self.new_function(
                destructor.clone(),
                format!("{class}::{destructor}"),
                scope,
                FunctionKind::Method,
                span(name),
                None,
            );
            let owned = fields
                .into_iter()
                .map(|(at, field, ty)| {
                    let what = format!(
                        "the `{ty}` field `{field}` is destroyed by `{short}`'s implicit destructor"
                    );
                    (at, field, what)
                })
                .collect();
            self.destroyed_after(id, owned, None);
            CallTarget::Direct(id)
        };
        let why = if base == class {
            format!(
                "its library frees a `{short}` on whichever thread drops it last: `{destructor}` \
                 runs without the GIL"
            )
        } else {
            format!(
                "`{short}` derives from `{base}`, which its library frees on whichever thread \
                 drops it last: `{destructor}` runs without the GIL"
            )
        };
        self.push_binding(destructor, span(name), target, Some((span(name), why)));
    }

    /// A destructor (or a lambda) that takes the GIL for its body (or its `try` block) shows it can
    /// run without it; what it owns (the class's Python-object fields, the lambda's Python
    /// captures: `(where, name, what happens)`) is destroyed after the body, when the GIL is
    /// released again. Such a function is an entry point entered with the GIL released.
    fn destroyed_after_body(
        &mut self,
        id: FnId,
        name: &str,
        owned: Vec<(Span, String, String)>,
        body: Node,
    ) -> Option<Span> {
        // A guard for the whole body, or for a `try` block of the body: its handlers run after
        // the guard, in the state the function was entered in.
        let mut ends = vec![body.end_byte() as u32];
        let mut cursor = body.walk();
        ends.extend(
            body.named_children(&mut cursor)
                .filter(|s| s.kind() == "try_statement")
                .filter_map(|s| s.field(Field::Body))
                .map(|b| b.end_byte() as u32),
        );
        let acquire = self.model.functions[id]
            .gil_switches
            .iter()
            .find(|s| s.to == GilState::Held && ends.contains(&s.scope.end))
            .map(|s| s.span)?;
        self.destroyed_after(id, owned, Some(body));
        let why = format!(
            "`{name}` takes the GIL for its body only, so it runs where the GIL may be released"
        );
        self.push_binding(
            name.to_string(),
            span(body),
            CallTarget::Direct(id),
            Some((acquire, why)),
        );
        Some(acquire)
    }

    /// A class whose destructor (`destructor`, defined in the class) takes the GIL is destroyed,
    /// and so copied, where the GIL may be released; a copy constructor or copy assignment it
    /// declares `= default` copies its Python-object `fields` (an INCREF each) without taking it.
    /// Each such member is an entry point entered released, shown with the destructor's `acquire`.
    fn defaulted_copies(
        &mut self,
        destructor: &str,
        fields: &[(Span, String, String)],
        definition: Node,
        acquire: Span,
    ) {
        let Some(class_body) = definition
            .parent()
            .filter(|p| p.kind() == "field_declaration_list")
        else {
            return;
        };
        let short = destructor.trim_start_matches('~');
        let copies = [
            (format!("{short}(const{short}&"), "copy constructor"),
            (
                format!("{short}&operator=(const{short}&"),
                "copy assignment",
            ),
        ];
        let mut cursor = class_body.walk();
        let members: Vec<Node> = class_body.named_children(&mut cursor).collect();
        for member in members {
            let text: String = self
                .text(member)
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            let Some((_, what)) = copies
                .iter()
                .find(|(head, _)| text.starts_with(head.as_str()) && text.ends_with("=default;"))
            else {
                continue;
            };
            let class = self.scope.join("::");
            let scope = self.shared_scope.get(&self.scope);
            // Named apart from the constructors, so that no call resolves to it.
            let id = self.new_function(
                short.to_string(),
                format!("{class}::{short}({what})"),
                scope,
                FunctionKind::Method,
                span(member),
                None,
            );
            for (_, field, ty) in fields {
                self.model.functions[id].py_uses.push(PyUse {
                    span: span(member),
                    what: format!(
                        "the `{ty}` field `{field}` is copied by `{short}`'s defaulted {what}"
                    ),
                    runs_code: false,
                    needs_gil_check: true,
                    at_destruction: false,
                });
            }
            let why = format!(
                "`{destructor}` takes the GIL, so a `{short}` is destroyed, and copied, where the \
                 GIL may be released"
            );
            self.push_binding(
                short.to_string(),
                span(member),
                CallTarget::Direct(id),
                Some((acquire, why)),
            );
        }
    }

    /// What function `id` owns (`(where, name, what happens)`) is destroyed after its `body`:
    /// a Python use there, unless the body empties it (see `emptied`).
    fn destroyed_after(
        &mut self,
        id: FnId,
        owned: Vec<(Span, String, String)>,
        body: Option<Node>,
    ) {
        let emptied = body.map(|body| {
            // A destructor defined in its class: its helpers are found there.
            let class = body
                .parent()
                .and_then(|definition| definition.parent())
                .filter(|p| p.kind() == "field_declaration_list");
            emptied::Emptying {
                src: self.src,
                k: self.k,
                function: &self.model.functions[id],
                owned: owned.iter().map(|(_, name, _)| name.as_str()).collect(),
                class,
            }
            .emptied(body)
        });
        for (at, field, what) in owned {
            if emptied.as_ref().is_some_and(|e| e.contains(&field)) {
                continue;
            }
            self.model.functions[id].py_uses.push(PyUse {
                span: at,
                what,
                runs_code: false,
                needs_gil_check: true,
                at_destruction: true,
            });
        }
    }

    fn inside_class(&self, node: Node) -> bool {
        let mut parent = node.parent();
        while let Some(p) = parent {
            match p.kind() {
                "field_declaration_list" => return true,
                "template_declaration" => parent = p.parent(),
                _ => return false,
            }
        }
        false
    }

    /// Walks a function body with a fresh frame.
    /// `returns`: whether the function returns a reference, and where its return type is
    /// written.
    fn enter(
        &mut self,
        id: FnId,
        parameters: Option<Node>,
        body: Node,
        (returns_reference, return_type): (bool, Option<Span>),
    ) {
        let mut frame = Frame {
            id,
            locals: FxHashMap::default(),
            block_ends: Vec::new(),
            lambdas: 0,
            types: FxHashMap::default(),
            untyped: FxHashSet::default(),
            threads: Default::default(),
            body_start: body.start_byte() as u32,
            python_references: FxHashMap::default(),
            returns_reference,
            return_type,
            unpublished: FxHashSet::default(),
            lasting: Vec::new(),
            jumps: FxHashMap::default(),
            checks_gil: false,
            lock_guards: FxHashMap::default(),
            gil_guard_ends: FxHashMap::default(),
        };
        if let Some(parameters) = parameters {
            let mut cursor = parameters.walk();
            let param_types = parameters
                .named_children(&mut cursor)
                .map(|p| {
                    let ty = self.declared_type(p.field(Field::Type)?)?;
                    Some(type_name(&ty).into())
                })
                .collect();
            self.model.functions[id].param_types = param_types;
            let mut cursor = parameters.walk();
            for (index, parameter) in parameters.named_children(&mut cursor).enumerate() {
                let (Some(ty), Some(name)) = (
                    parameter.field(Field::Type),
                    parameter.field(Field::Declarator).and_then(declared_name),
                ) else {
                    continue;
                };
                let ty_path = self.path(ty);
                let declarator_kind = parameter.field(Field::Declarator).map(|d| d.kind());
                // `std::optional<py::array_t<T>> x` holds its object by value too.
                let held = (last_segment(&ty_path) == "optional")
                    .then(|| find_kind(ty, "template_argument_list")?.named_child(0))
                    .flatten()
                    .map(|a| a.field(Field::Type).unwrap_or(a));
                let held_path = held.map_or_else(|| ty_path.clone(), |h| self.path(h));
                let owning = self.names(&self.k.python_types, &held_path)
                    && !self.names(&self.k.non_owning_types, &held_path);
                let shown = self
                    .text(held.unwrap_or(ty))
                    .split('<')
                    .next()
                    .unwrap_or("")
                    .trim();
                if owning && held.is_none() && declarator_kind == Some("reference_declarator") {
                    frame
                        .python_references
                        .insert(self.text(name).to_string(), shown.to_string());
                }
                if owning && declarator_kind == Some("identifier") {
                    // The caller's copy is made, and destroyed at return, in this function's GIL
                    // state: reference counting without the GIL when it is entered released.
                    let use_ = PyUse {
                        span: span(parameter),
                        what: format!(
                            "the by-value `{shown}` parameter `{}` is copied and destroyed",
                            self.text(name)
                        ),
                        runs_code: false,
                        needs_gil_check: true,
                        at_destruction: false,
                    };
                    self.model.functions[id].py_uses.push(use_);
                }
                let name = self.text(name).to_string();
                let local = if self.names(&self.k.callable_types, &ty_path) {
                    Local::PyCallable
                } else {
                    Local::Param(index as u32)
                };
                frame.locals.insert(name.clone(), local);
                if let Some(ty) = self.declared_type(ty) {
                    frame.types.insert(name, ty);
                }
            }
        }
        self.frames.push(frame);
        let saved_scope = std::mem::take(&mut self.scope);
        self.scope = self.model.functions[id].scope.to_vec();
        let usings = self.usings.len();
        self.visit(body);
        self.usings.truncate(usings);
        self.scope = saved_scope;
        self.frames.pop();
    }

    /// Creates the lambda's function and walks its body; the caller decides how it is run.
    fn visit_lambda(&mut self, node: Node) -> FnId {
        let (parent_qualname, parent_scope, number) = match self.frames.last_mut() {
            Some(frame) => {
                frame.lambdas += 1;
                let parent = &self.model.functions[frame.id];
                (parent.qualname.clone(), parent.scope.clone(), frame.lambdas)
            }
            None => (self.scope.join("::"), self.shared_scope.get(&self.scope), 0),
        };
        let qualname = if parent_qualname.is_empty() {
            format!("{{lambda#{number}}}")
        } else {
            format!("{parent_qualname}::{{lambda#{number}}}")
        };
        let introducer = node.field(Field::Captures).unwrap_or(node);
        let parameters = node
            .field(Field::Declarator)
            .and_then(|d| d.field(Field::Parameters));
        let id = self.new_function(
            "{lambda}".to_string(),
            qualname,
            parent_scope,
            FunctionKind::Lambda,
            span(introducer),
            parameters,
        );
        let captured = self.python_captures(node);
        if let Some(body) = node.field(Field::Body) {
            self.enter(id, parameters, body, (false, None));
            if !captured.is_empty() {
                self.destroyed_after_body(id, "{lambda}", captured, body);
            }
        }
        id
    }

    /// The Python objects a lambda captures by copy (`[cb]`, with `cb` a `py::function` of the
    /// enclosing function): the lambda owns them, and they are destroyed with it.
    fn python_captures(&self, lambda: Node) -> Vec<(Span, String, String)> {
        let (Some(captures), Some(frame)) = (lambda.field(Field::Captures), self.frames.last())
        else {
            return Vec::new();
        };
        let mut cursor = captures.walk();
        captures
            .named_children(&mut cursor)
            // By copy: `[cb]`, not `[&cb]` (whose `&` is a token of its own).
            .filter(|c| {
                c.kind() == "identifier" && c.prev_sibling().is_none_or(|p| p.kind() != "&")
            })
            .filter_map(|c| {
                let name = self.text(c);
                let ty = self.path_of_text(frame.types.get(name)?);
                let owning = self.names(&self.k.python_types, &ty)
                    && !self.names(&self.k.non_owning_types, &ty);
                owning.then(|| {
                    let what = format!(
                        "the `{ty}` captured as `{name}` is destroyed after the lambda's body"
                    );
                    (span(c), name.to_string(), what)
                })
            })
            .collect()
    }

    /// `(required, maximum)` arguments of a parameter list; `(void)` takes none.
    fn arity(&self, parameters: Node) -> (u32, Option<u32>) {
        let mut cursor = parameters.walk();
        let (mut required, mut total, mut variadic) = (0, 0, false);
        for p in parameters.named_children(&mut cursor) {
            match p.kind() {
                "parameter_declaration" if self.text(p).trim() == "void" => {}
                "parameter_declaration" => {
                    required += 1;
                    total += 1;
                }
                "optional_parameter_declaration" => total += 1,
                "variadic_parameter_declaration" | "variadic_parameter" => variadic = true,
                _ => {}
            }
        }
        variadic |= self.text(parameters).contains("...");
        (required, (!variadic).then_some(total))
    }

    /// A call site; `node` is what the label points at, `arguments` the call's argument list.
    fn add_call_with_args(&mut self, node: Node, target: CallTarget, arguments: Option<Node>) {
        self.add_noted_call(node, target, arguments, None);
    }

    /// [`Self::add_call_with_args`] with a note on the call.
    fn add_noted_call(
        &mut self,
        node: Node,
        target: CallTarget,
        arguments: Option<Node>,
        note: Option<CallNote>,
    ) {
        let arguments: Vec<Node> = arguments.map_or_else(Vec::new, |a| {
            let mut cursor = a.walk();
            a.named_children(&mut cursor)
                .filter(|n| n.kind() != "comment")
                .collect()
        });
        let types: ThinVec<Option<Box<str>>> = arguments
            .iter()
            .map(|&a| Some(type_name(&self.argument_type(a)?).into()))
            .collect();
        let types = types
            .iter()
            .any(Option::is_some)
            .then_some(CallNote::ArgumentTypes(types));
        let lent = self.lent_guards(&arguments);
        let site = CallSite {
            span: span(node),
            target,
            args: arguments.len() as u32,
        };
        if let Some(function) = self.function() {
            function.push_call(site, note.into_iter().chain(types).chain(lent));
        }
    }

    /// A [`CallNote::LendsGuard`] for each of `arguments` that is a local lock guard holding a
    /// lock of this function.
    fn lent_guards(&self, arguments: &[Node]) -> Vec<CallNote> {
        let Some(frame) = self.frames.last() else {
            return Vec::new();
        };
        let regions = &self.model.functions[frame.id].lock_regions;
        arguments
            .iter()
            .enumerate()
            .filter(|(_, a)| a.kind() == "identifier")
            .filter_map(|(argument, &a)| {
                let guard = frame.lock_guards.get(self.text(a))?;
                let region = regions
                    .iter()
                    .rposition(|r| r.kind == guard.kind && r.lock == guard.lock)?;
                Some(CallNote::LendsGuard {
                    argument: argument as u32,
                    region: region as u32,
                })
            })
            .collect()
    }

    /// A use of local `node`: unless it reads or writes one of the object's fields, it may give
    /// the object away (passed, copied, returned, its address or a method called), so the
    /// object is no longer unpublished, in this function or an enclosing one (a lambda's use).
    fn use_local(&mut self, node: Node) {
        let name = self.text(node);
        if !self.frames.iter().any(|f| f.unpublished.contains(name)) || only_field_access(node) {
            return;
        }
        let name = name.to_string();
        for frame in &mut self.frames {
            frame.unpublished.remove(&name);
        }
    }

    /// Whether local `declarator` (declared with type `ty`, initialised by `value`) holds an
    /// object made here: `new T(...)`, `std::make_unique<T>(...)`, or a `T x(...)` of class type.
    fn makes_object(&self, ty: Node, declarator: Node, value: Option<Node>) -> bool {
        match value.map(|v| (v.kind(), v)) {
            Some(("new_expression", _)) => true,
            Some(("call_expression", call)) => call
                .field(Field::Function)
                .is_some_and(|f| self.names(&self.k.constructing_calls, &self.path(f))),
            Some(("argument_list" | "initializer_list", _)) | None => {
                let name = match declarator.kind() {
                    "init_declarator" | "function_declarator" => {
                        declarator.field(Field::Declarator)
                    }
                    _ => Some(declarator),
                };
                name.is_some_and(|n| n.kind() == "identifier") && self.declared_type(ty).is_some()
            }
            _ => false,
        }
    }

    /// Whether the lock `mutex` names is a field of the object the function runs on: `this->m`,
    /// or `m_` / `impl_->m` rooted at a non-static field of the file's classes that no
    /// parameter or local hides. A pointer dereferenced (`*m`) may be shared: not a member.
    fn is_member_lock(&self, mutex: Node) -> bool {
        let mut root = mutex;
        while root.kind() == "field_expression"
            && let Some(argument) = root.field(Field::Argument)
        {
            root = argument;
        }
        match root.kind() {
            "this" => true,
            // `std::lock_guard<std::mutex> lock(mutex_);` read as a function declarator: the
            // mutex is a parameter declaration's type.
            "identifier" | "parameter_declaration" | "type_identifier" => {
                let name = self.text(root);
                self.instance_fields.contains(name)
                    && self.frames.last().is_some_and(|f| {
                        !f.types.contains_key(name) && !f.locals.contains_key(name)
                    })
            }
            _ => false,
        }
    }

    fn add_call(&mut self, node: Node, target: CallTarget) {
        self.add_call_with_args(node, target, None);
    }

    /// A `T` built from `arguments` (`T x(a)`, `new T(a)`): a call by the class's name, which
    /// the call graph takes for its constructors. Not for primitive types and `auto`.
    fn construct(&mut self, ty: Node, arguments: Option<Node>) {
        if self.declared_type(ty).is_none() {
            return;
        }
        let target = CallTarget::Named {
            path: self.path(ty).into(),
            receiver: Receiver::None,
        };
        self.add_call_with_args(ty, target, arguments);
        // A lambda bound to a local and handed to a constructor (`new (t) Subscriber(name, cb)`)
        // is kept by the object made: it lives, with what it captures, as long as that object.
        let Some(arguments) = arguments else { return };
        let mut cursor = arguments.walk();
        let kept: Vec<(Node, FnId)> = arguments
            .named_children(&mut cursor)
            .filter_map(|a| Some((a, self.local_lambda(a)?)))
            .collect();
        for (argument, id) in kept {
            self.mark_kept(argument, id);
        }
    }

    /// Lambda `id`, written or named at `at`, is kept for later, not run here.
    fn mark_kept(&mut self, at: Node, id: FnId) {
        let site = CallSite {
            span: span(at),
            target: CallTarget::Direct(id),
            args: 0,
        };
        if let Some(function) = self.function() {
            function.push_call(site, [CallNote::Kept]);
        }
    }

    /// The lambda that `value` names: a local bound to one, or that local moved or forwarded.
    fn local_lambda(&self, value: Node) -> Option<FnId> {
        match self.frames.last()?.locals.get(&self.passed_name(value)?)? {
            Local::Lambda(id) => Some(*id),
            _ => None,
        }
    }

    fn add_py_use(&mut self, node: Node, what: String, runs_code: bool) {
        let use_ = PyUse {
            span: span(node),
            what,
            runs_code,
            needs_gil_check: true,
            at_destruction: false,
        };
        if let Some(function) = self.function() {
            function.py_uses.push(use_);
        }
    }

    /// The GIL taken for the call `call` only (at `node`).
    fn add_gil_switch_over(&mut self, node: Node, call: Node, what: String) {
        let switch = GilSwitch {
            span: span(node),
            to: GilState::Held,
            scope: call.start_byte() as u32..call.end_byte() as u32,
            what,
        };
        if let Some(function) = self.function() {
            function.gil_switches.push(switch);
        }
    }

    /// A GIL switch at `node` when `path` names a release or acquire call; whether it did.
    fn add_switch_call(&mut self, node: Node, path: &str, what: String) -> bool {
        let to = if self.names(&self.k.release_calls, path) {
            GilState::Released
        } else if self.names(&self.k.acquire_calls, path) {
            GilState::Held
        } else {
            return false;
        };
        self.add_gil_switch(node, to, what);
        self.mark_lasting();
        true
    }

    /// The switch just added outlives a jump out of its block (see [`Frame::lasting`]).
    fn mark_lasting(&mut self) {
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        let count = self.model.functions[frame.id].gil_switches.len();
        frame.lasting.push(count - 1);
    }

    /// A release over `scope` that outlives jumps out of it.
    fn add_lasting_switch(&mut self, at: Span, scope: Range<u32>, what: String) {
        let switch = GilSwitch {
            span: at,
            to: GilState::Released,
            scope,
            what,
        };
        if let Some(function) = self.function() {
            function.gil_switches.push(switch);
            self.mark_lasting();
        }
    }

    /// `if (!PyGILState_Check()) { ... }` (or the `else` of `if (PyGILState_Check())`): the
    /// branch taken where this thread does not hold the GIL runs without it.
    fn branch_without_gil(&mut self, node: Node) {
        let Some(value) = node
            .field(Field::Condition)
            .and_then(|c| c.field(Field::Value))
        else {
            return;
        };
        let negated = value.kind() == "unary_expression"
            && value
                .field(Field::Operator)
                .is_some_and(|o| self.text(o) == "!");
        let call = if negated {
            value.field(Field::Argument)
        } else {
            Some(value)
        };
        let Some(callee) = call
            .filter(|c| c.kind() == "call_expression")
            .and_then(|c| c.field(Field::Function))
        else {
            return;
        };
        let path = self.path(callee);
        if !self.names(&self.k.held_checks, &path) {
            return;
        }
        let branch = if negated {
            node.field(Field::Consequence)
        } else {
            node.field(Field::Alternative)
        };
        let Some(branch) = branch else {
            return;
        };
        let shown = self.text(callee).to_string();
        let what = format!("the branch taken when `{shown}()` says it is not held");
        let scope = branch.start_byte() as u32..branch.end_byte() as u32;
        self.add_lasting_switch(span(value), scope, what);
        // A function that asks is written to be called without the GIL, from anywhere: an entry
        // point (entered holding it; the branch says where it is not held).
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        if !std::mem::replace(&mut frame.checks_gil, true) {
            let id = frame.id;
            let name = self.model.functions[id].name.clone();
            self.push_binding(name, span(value), CallTarget::Direct(id), None);
        }
    }

    /// `goto end;` where a call or a branch has released the GIL: the code from label `end` on
    /// runs without the GIL too (a forward jump only; see `land`).
    fn jump(&mut self, node: Node) {
        let Some(label) = node.field(Field::Label) else {
            return;
        };
        let Some(frame) = self.frames.last() else {
            return;
        };
        let at = node.start_byte() as u32;
        let switches = &self.model.functions[frame.id].gil_switches;
        let released = frame
            .lasting
            .iter()
            .map(|&i| &switches[i])
            .filter(|s| s.scope.contains(&at))
            .max_by_key(|s| s.scope.start)
            .is_some_and(|s| s.to == GilState::Released);
        if released {
            let name = self.text(label).to_string();
            if let Some(frame) = self.frames.last_mut() {
                frame.jumps.entry(name).or_insert(span(node));
            }
        }
    }

    /// The label of a `goto` that left a region without the GIL (see `jump`): from here to the
    /// end of the block, the GIL may be released.
    fn land(&mut self, node: Node) {
        let Some(label) = node.field(Field::Label) else {
            return;
        };
        let name = self.text(label);
        let Some(jump) = self.frames.last_mut().and_then(|f| f.jumps.remove(name)) else {
            return;
        };
        let what = format!("`goto {name}`, which leaves a region without the GIL");
        let scope = node.start_byte() as u32..self.block_end();
        self.add_lasting_switch(jump, scope, what);
    }

    /// The GIL state an `if` statement leaves for the rest of the block, from the switches its
    /// branches made (those from index `before`): a branch's switch ends with the branch, but
    /// - when both branches end in one state (each switches the GIL at its top level), that state
    ///   holds after the `if` (see [`Walker::switch_after_branches`]);
    /// - a restore guarded by a test of the very state it restores, `if (_save)
    ///   PyEval_RestoreThread(_save);` (also in a field, `obj->tstate`), takes the GIL on every
    ///   path where this code had released it: the saved state is set exactly while it is released
    ///   (the other path never released it, or something else took it back and cleared it).
    fn switch_after_if(&mut self, node: Node, before: usize) {
        let Some(consequence) = node.field(Field::Consequence) else {
            return;
        };
        if let Some(alternative) = node.field(Field::Alternative) {
            let alternative = alternative
                .named_child(0)
                .filter(|_| alternative.kind() == "else_clause")
                .unwrap_or(alternative);
            return self.switch_after_branches(node, &[consequence, alternative], before);
        }
        let Some(condition) = node.field(Field::Condition) else {
            return;
        };
        let condition = self.text(condition).to_string();
        let src = self.src;
        let rest = node.end_byte() as u32..self.block_end();
        let Some(function) = self.function() else {
            return;
        };
        let new = function.gil_switches.get(before..).unwrap_or_default();
        let after = ends_in(new, consequence).filter(|s| {
            s.to == GilState::Held && {
                let call = std::str::from_utf8(&src[s.span.start as usize..s.span.end as usize]);
                restores_tested_state(&condition, call.unwrap_or(""))
            }
        });
        if let Some(after) = after {
            let switch = GilSwitch {
                scope: rest,
                ..after.clone()
            };
            function.gil_switches.push(switch);
        }
    }

    /// The GIL state a statement whose `branches` are the ways control reaches its end leaves
    /// for the rest of the block, from the switches they made (those from index `before`): when
    /// every branch ends in one state (each switches the GIL at its top level), that state holds
    /// after the statement. An `if` and its `else`: `if (setjmp(env)) { END_THREADS; goto fail; }
    /// else { ...; END_THREADS; }`; a `try` block and its handlers: `__try { ..;
    /// PyEval_RestoreThread(_save); } __except (..) { PyEval_RestoreThread(_save); .. }`.
    fn switch_after_branches(&mut self, statement: Node, branches: &[Node], before: usize) {
        let rest = statement.end_byte() as u32..self.block_end();
        let Some(function) = self.function() else {
            return;
        };
        let new = function.gil_switches.get(before..).unwrap_or_default();
        let mut ends = branches.iter().map(|&branch| ends_in(new, branch));
        let Some(Some(first)) = ends.next() else {
            return;
        };
        if ends.all(|end| end.is_some_and(|end| end.to == first.to)) {
            let switch = GilSwitch {
                scope: rest,
                ..first.clone()
            };
            function.gil_switches.push(switch);
        }
    }

    fn add_gil_switch(&mut self, node: Node, to: GilState, what: String) {
        let end = self.block_end();
        self.add_gil_switch_until(node, to, what, end);
    }

    /// A GIL switch at `node` that lasts until `end`.
    fn add_gil_switch_until(&mut self, node: Node, to: GilState, what: String, end: u32) {
        // A call's arguments are evaluated before it switches: `NPY_BEGIN_THREADS_THRESHOLDED(
        // PyArray_Size(a))` reads the array while the GIL is still held.
        let switch = GilSwitch {
            span: span(node),
            to,
            scope: node.end_byte() as u32..end,
            what,
        };
        if let Some(function) = self.function() {
            function.gil_switches.push(switch);
        }
    }

    fn visit_call(&mut self, node: Node) {
        let (Some(callee), Some(arguments)) =
            (node.field(Field::Function), node.field(Field::Arguments))
        else {
            return self.visit_children(node);
        };
        let args: Vec<Node> = {
            let mut cursor = arguments.walk();
            arguments
                .named_children(&mut cursor)
                .filter(|n| n.kind() != "comment")
                .collect()
        };
        match callee.kind() {
            "field_expression" => return self.visit_member_call(node, callee, &args),
            "identifier" | "qualified_identifier" | "template_function" => {}
            _ => return self.visit_children(node),
        }
        let path = self.path(callee);
        let shown = self
            .text(callee)
            .split('<')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        // The arguments of a wrapper such as `SCOPED_GIL_RELEASE({ ... })` run in its state.
        if self.k.release_wrappers.contains(&path) || self.k.acquire_wrappers.contains(&path) {
            let to = if self.k.release_wrappers.contains(&path) {
                GilState::Released
            } else {
                GilState::Held
            };
            let switch = GilSwitch {
                span: span(callee),
                to,
                scope: arguments.start_byte() as u32..arguments.end_byte() as u32,
                what: format!("`{shown}`"),
            };
            if let Some(function) = self.function() {
                function.gil_switches.push(switch);
            }
        }
        if self.register_macro_entry(&path, &args)
            || self.register_callback(&path, &args)
            || self.register_def_call(callee, &path, &args)
        {
            return;
        }
        // `std::thread(f).detach()`, `std::async(policy, f)`: a thread started in an expression.
        if !self.frames.is_empty()
            && self.spawn_arguments(node).is_some()
            && self.spawn(&shown, arguments)
        {
            return;
        }
        if self.names(&self.k.worker_calls, &path) && self.run_on_workers(node, &shown, &args) {
            return;
        }
        if self.call_acquiring_callable(node, callee, &shown) {
            return self.visit(arguments);
        }
        if self.names(&self.k.ready_after_import, &path) {
            return self.visit(arguments);
        }
        if self.names(&self.k.constructing_calls, &path) {
            // `std::make_shared<T>(a)`: the type is the callee's first template argument.
            if let Some(ty) = callee
                .field(Field::Arguments)
                .or_else(|| callee.field(Field::Name)?.field(Field::Arguments))
                .and_then(|a| a.named_child(0))
                .and_then(|d| d.field(Field::Type))
            {
                self.construct(ty, Some(arguments));
            }
            return self.visit(arguments);
        }
        if self.names(&self.k.once_calls, &path) {
            self.visit_once(node, &args);
        } else if self.add_switch_call(node, &path, format!("`{shown}()`")) {
        } else if self.names(&self.k.python_calls, &path) {
            let runs_code = self.names(&self.k.calls_running_code, &path);
            self.add_py_use(callee, format!("`{shown}` is called"), runs_code);
        } else if self.names(&self.k.python_types, &path) {
            self.add_py_use(callee, format!("`{shown}` is constructed"), false);
        } else if !path.contains("::") && self.k.is_c_api_call(&path) {
            let runs_code = self.k.c_api_runs_code(&path);
            self.add_py_use(callee, format!("`{shown}` is called"), runs_code);
        } else {
            let local = self
                .frames
                .last()
                .and_then(|f| f.locals.get(&path).copied())
                .or_else(|| {
                    self.global_callables
                        .contains(&path)
                        .then_some(Local::PyCallable)
                });
            match local {
                Some(Local::PyCallable) => self.call_python_object(callee, &shown),
                Some(Local::Lambda(id)) => self.add_call(callee, CallTarget::Direct(id)),
                Some(Local::Param(index)) => self.add_call(callee, CallTarget::Param(index)),
                None => {
                    // `::f()` names the global `f`, never a member or a namespace's `f` in
                    // scope: kept as written for the resolver.
                    let path = if self.text(callee).trim_start().starts_with("::") {
                        format!("::{path}")
                    } else {
                        path
                    };
                    let target = CallTarget::Named {
                        path: path.into(),
                        receiver: Receiver::None,
                    };
                    self.add_call_with_args(callee, target, Some(arguments));
                    return self.visit_passed_arguments(arguments);
                }
            }
        }
        self.visit(arguments);
    }

    /// The arguments of the call just added: a lambda among them is marked as passed to it.
    fn visit_passed_arguments(&mut self, arguments: Node) {
        let Some(call) = self.function().map(|f| f.calls.len() - 1) else {
            return self.visit(arguments);
        };
        let mut cursor = arguments.walk();
        let args: Vec<Node> = arguments
            .named_children(&mut cursor)
            .filter(|n| n.kind() != "comment")
            .collect();
        for (index, arg) in args.into_iter().enumerate() {
            if arg.kind() != "lambda_expression" {
                // A parameter handed on (`impl->add(std::move(f))`) is kept where the callee
                // keeps it.
                if let Some(param) = self.param_value(arg) {
                    self.keep_param(param, Some((call as u32, index as u32)));
                }
                self.visit(arg);
                continue;
            }
            // The parameters it captures are handed on with it.
            for param in self.captured_params(arg) {
                self.keep_param(param, Some((call as u32, index as u32)));
            }
            let id = self.visit_lambda(arg);
            let introducer = arg.field(Field::Captures).unwrap_or(arg);
            let site = CallSite {
                span: span(introducer),
                target: CallTarget::Direct(id),
                args: 0,
            };
            if let Some(function) = self.function() {
                function.push_call(
                    site,
                    [CallNote::PassedTo(
                        call as u32,
                        index as u32,
                        Unconsumed::InPlace,
                    )],
                );
            }
        }
    }

    /// The parameter of the function being walked that `value` is: `f`, `std::move(f)`,
    /// `std::forward<F>(f)`, or a local made from one of these (see [`Walker::alias_param`]).
    fn param_value(&self, value: Node) -> Option<u32> {
        match self.frames.last()?.locals.get(&self.passed_name(value)?)? {
            Local::Param(index) => Some(*index),
            _ => None,
        }
    }

    /// The name that `value` hands on: `f`, `std::move(f)` or `std::forward<F>(f)`.
    fn passed_name(&self, value: Node) -> Option<String> {
        let text: String = self
            .text(value)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        match text.strip_suffix(')') {
            Some(call) => {
                let (function, name) = call.split_once('(')?;
                let function = function.split('<').next().unwrap_or(function);
                matches!(function, "std::move" | "move" | "std::forward" | "forward")
                    .then(|| name.to_string())
            }
            None => Some(text),
        }
    }

    /// See [`Function::kept_params`].
    fn keep_param(&mut self, param: u32, handed: Option<(u32, u32)>) {
        if let Some(function) = self.function()
            && !function.kept_params.contains(&(param, handed))
        {
            function.kept_params.push((param, handed));
        }
    }

    /// A value stored in a container (`tasks.push(std::move(task))`, `handlers[id] = [cb] {..}`):
    /// a lambda written there is kept, not run here, and so are the parameters it captures; a
    /// parameter stored there is kept.
    fn keep_value(&mut self, value: Node) {
        if value.kind() != "lambda_expression" {
            if let Some(param) = self.param_value(value) {
                self.keep_param(param, None);
            }
            if let Some(id) = self.local_lambda(value) {
                self.mark_kept(value, id);
            }
            return self.visit(value);
        }
        for param in self.captured_params(value) {
            self.keep_param(param, None);
        }
        let id = self.visit_lambda(value);
        let introducer = value.field(Field::Captures).unwrap_or(value);
        self.mark_kept(introducer, id);
    }

    /// The parameters of the function being walked that `lambda` captures by name (`[f]`,
    /// `[g = std::move(f)]`).
    fn captured_params(&self, lambda: Node) -> Vec<u32> {
        let Some(captures) = lambda.field(Field::Captures) else {
            return Vec::new();
        };
        let mut cursor = captures.walk();
        captures
            .named_children(&mut cursor)
            .filter_map(|c| match c.kind() {
                "identifier" => Some(c),
                "lambda_capture_initializer" => c.field(Field::Right),
                _ => None,
            })
            .filter_map(|c| self.param_value(c))
            .collect()
    }

    /// `T task(std::move(f))`, `auto task = f`: the local `name` is parameter `f` for calls and
    /// stores.
    fn alias_param(&mut self, name: &str, declarator: Node, value: Option<Node>) {
        fn single(list: Node) -> Option<Node> {
            (list.named_child_count() == 1)
                .then(|| list.named_child(0))
                .flatten()
        }
        let made_from = match value {
            Some(v) if matches!(v.kind(), "argument_list" | "initializer_list") => single(v),
            Some(v) => Some(v),
            // `T task(std::move(f))`, which the grammar may read as a function declaration.
            None => declarator.field(Field::Parameters).and_then(single),
        };
        if let Some(param) = made_from.and_then(|v| self.param_value(v))
            && let Some(frame) = self.frame()
        {
            frame.locals.insert(name.to_string(), Local::Param(param));
        }
    }

    /// `std::call_once(flag, callable, args...)`: the callable runs holding `flag`.
    fn visit_once(&mut self, node: Node, args: &[Node]) {
        let Some((flag, rest)) = args.split_first() else {
            return;
        };
        let region = LockRegion {
            member: false,
            span: node.field(Field::Function).map_or(span(node), span),
            kind: LockKind::Once,
            waits: true,
            lock: self.path(*flag),
            scope: flag.end_byte() as u32..node.end_byte() as u32,
        };
        if let Some(function) = self.function() {
            function.lock_regions.push(region);
        }
        if let Some(callable) = rest.first()
            && let Some(name) = function_reference(*callable)
        {
            let path = self.path(name);
            self.add_call(
                name,
                CallTarget::Named {
                    path: path.into(),
                    receiver: Receiver::None,
                },
            );
        }
    }

    /// A call of a `std::function` (a variable, parameter or field so declared, `f(..)` or
    /// `this->f(..)`): one made from a Python callable takes the GIL for the call and runs
    /// Python code. Whether `callee` is one.
    fn call_acquiring_callable(&mut self, call: Node, callee: Node, shown: &str) -> bool {
        if !self.model.names_framework
            || !self
                .type_of(callee)
                .is_some_and(|ty| self.names(&self.k.acquiring_callables, &self.path_of_text(&ty)))
        {
            return false;
        }
        self.add_gil_switch_over(callee, call, format!("`{shown}`"));
        self.add_py_use(
            callee,
            format!("`{shown}`, which may wrap a Python callable, is called"),
            true,
        );
        true
    }

    /// A call of a Python object (`f(..)`, `this->f(..)`, where `f` is a `py::function` or
    /// `py::object`): it runs Python code.
    fn call_python_object(&mut self, callee: Node, shown: &str) {
        self.add_py_use(
            callee,
            format!("the Python object `{shown}` is called"),
            true,
        );
    }

    fn visit_member_call(&mut self, node: Node, callee: Node, args: &[Node]) {
        let Some(field) = callee.field(Field::Field) else {
            return self.visit_children(node);
        };
        let method = self.path(field);
        let receiver = callee.field(Field::Argument);
        // `this->f(..)` calls the field `f` itself, as `f(..)` does, when `f` holds a callable
        // value rather than naming a method.
        if receiver.is_some_and(|r| r.kind() == "this")
            && let Some(arguments) = node.field(Field::Arguments)
        {
            let shown = self.text(callee).to_string();
            if self.call_acquiring_callable(node, callee, &shown) {
                return self.visit(arguments);
            }
            if self.global_callables.contains(&method) {
                self.call_python_object(callee, &shown);
                return self.visit(arguments);
            }
        }
        if (self.k.def_methods.contains(&method) || self.k.property_methods.contains(&method))
            && self.register_binding(field, &method, receiver, args)
        {
            return;
        }
        let arrow = callee
            .field(Field::Operator)
            .is_some_and(|o| self.text(o) == "->");
        if self.k.member_calls.contains(&method)
            && self.may_be_framework_object(receiver, arrow, &method)
        {
            let runs_code = self.k.member_calls_running_code.contains(&method);
            self.add_py_use(field, format!("`.{method}()` is called"), runs_code);
        } else if let Some(receiver) = receiver
            && let Some((state, until)) = self.guard_switched_by(receiver, &method)
        {
            let what = format!("`{}.{method}()`", self.text(receiver));
            self.add_gil_switch_until(node, state, what, until);
        } else if let Some(receiver) = receiver
            && (self.k.lock_methods.contains(&method) || self.k.unlock_methods.contains(&method))
            && self.may_be_mutex(node, receiver, arrow)
        {
            self.lock_method(node, receiver, &method);
        } else if let Some(receiver) = receiver
            && self.spawn_into_container(receiver, &method, args)
        {
            return;
        } else if let Some(class) = receiver.and_then(|r| self.receiver_class(r, arrow))
            && self.names(&self.k.worker_calls, &format!("{class}::{method}"))
            && self.run_on_workers(node, &format!("{class}::{method}"), args)
        {
            return;
        } else if let Some(receiver) = receiver
            && let [entry] = args
            && self.adds_table_entry(receiver, &method)
        {
            // `methods.push_back({"name", (PyCFunction)f, METH_VARARGS, doc})` at run time.
            self.register_table_entry(*entry);
        } else if let Some(receiver) = receiver
            && let Some(region) = self.wait_for_work(node, receiver, &method)
        {
            if let Some(function) = self.function() {
                function.lock_regions.push(region);
            }
        } else {
            let receiver_kind = match receiver {
                Some(r) if r.kind() == "this" => Receiver::This,
                Some(r) => match self.receiver_class(r, arrow) {
                    Some(class) => Receiver::Typed(class.into()),
                    None => self
                        .field_receiver(r, arrow)
                        .unwrap_or_else(|| self.unknown_receiver()),
                },
                None => self.unknown_receiver(),
            };
            let stores = self.k.container_add_methods.contains(&method);
            let target = CallTarget::Named {
                path: method.into(),
                receiver: receiver_kind,
            };
            // The first method called on an object made here runs on it unpublished; that call
            // may give it away (store `this`), so the next does not.
            let unpublished = receiver
                .filter(|r| r.kind() == "identifier")
                .is_some_and(|r| {
                    let name = self.text(r).to_string();
                    self.frame().is_some_and(|f| f.unpublished.remove(&name))
                });
            let note = unpublished.then_some(CallNote::Unpublished);
            let arguments = node.field(Field::Arguments);
            self.add_noted_call(field, target, arguments, note);
            self.visit(callee);
            if let Some(arguments) = arguments {
                if stores {
                    let mut cursor = arguments.walk();
                    let values: Vec<Node> = arguments.named_children(&mut cursor).collect();
                    for value in values {
                        self.keep_value(value);
                    }
                } else {
                    self.visit_passed_arguments(arguments);
                }
            }
            return;
        }
        self.visit_children(node);
    }

    /// `ADD(f)`, a macro that writes a method-table entry: binds `f`.
    fn register_macro_entry(&mut self, path: &str, args: &[Node]) -> bool {
        let Some(function) = self
            .k
            .entry_macros
            .get(path)
            .and_then(|&argument| args.get(argument))
            .filter(|a| a.kind() == "identifier")
        else {
            return false;
        };
        let target = CallTarget::Named {
            path: self.path(*function).into(),
            receiver: Receiver::None,
        };
        self.push_binding(
            self.text(*function).to_string(),
            span(*function),
            target,
            None,
        );
        true
    }

    /// `PQsetNoticeProcessor(conn, cb, arg)`: a C library stores `cb` and calls it later from
    /// its own code, without the GIL (the knowledge's `callback_registrations`).
    fn register_callback(&mut self, path: &str, args: &[Node]) -> bool {
        let Some(&callback) = self
            .k
            .callback_registrations
            .get(path)
            .and_then(|&argument| args.get(argument))
        else {
            return false;
        };
        if !self.bind_callback(callback, &format!("registered with `{path}`")) {
            return false;
        }
        for arg in args {
            self.visit(*arg);
        }
        true
    }

    /// `managed->deleter = f` on a field that the knowledge's `callback_fields` names: the
    /// library's consumer calls `f` later, on any thread, without the GIL.
    fn assign_callback_field(&mut self, left: Node, right: Node) {
        let (Some(object), Some(field)) = (left.field(Field::Argument), left.field(Field::Field))
        else {
            return;
        };
        let Some(ty) = self.type_of(object) else {
            return;
        };
        let owner = self.path_of_text(ty.trim_end_matches(['*', '&', ' ']));
        let field = format!("{}::{}", last_segment(&owner), self.text(field));
        if self.k.callback_fields.contains(&field) {
            self.bind_callback(right, &format!("stored in `{field}`"));
        }
    }

    /// `callback`, a function named where a C library takes a function pointer that it calls
    /// without the GIL, is an entry point entered released. Only a function named as such is
    /// taken: a local variable holding a pointer is not followed (prefer no edge to a wrong
    /// one). Returns whether it was one.
    fn bind_callback(&mut self, callback: Node, how: &str) -> bool {
        let Some(callback) = function_reference(callback).filter(|c| self.type_of(*c).is_none())
        else {
            return false;
        };
        let target = CallTarget::Named {
            path: self.path(callback).into(),
            receiver: Receiver::None,
        };
        let name = self.text(callback).to_string();
        let why = format!("`{name}` is {how}, and the library calls it without the GIL");
        self.push_binding(name, span(callback), target, Some((span(callback), why)));
        true
    }

    /// `def_nogil(m, "name", f)`, a call of a project function that binds `f` as `.def` does
    /// (see [`Walker::def_helpers`] and the knowledge's `def_functions`).
    fn register_def_call(&mut self, callee: Node, path: &str, args: &[Node]) -> bool {
        let helper = last_segment(path);
        let guard = match (
            self.def_helpers.get(helper),
            self.k.def_functions.get(helper),
        ) {
            (Some(guard), _) => guard.clone(),
            (None, Some(&released)) => {
                released.then(|| (span(callee), "the release call guard it adds".to_string()))
            }
            (None, None) => return false,
        };
        // `def_nogil(m, "name", f)`; or `Def<traits::f>(m, [](..) {..})`, where the helper
        // finds the name itself: the binding is named after the template argument.
        let (name, callable, name_end) =
            match args.iter().position(|a| a.kind() == "string_literal") {
                Some(at) => {
                    let Some(&callable) = args.get(at + 1) else {
                        return false;
                    };
                    let name = string_content(self.text(args[at]));
                    (name, callable, args[at].end_byte())
                }
                None => {
                    let mut lambdas = args.iter().filter(|a| a.kind() == "lambda_expression");
                    let (Some(&callable), None) = (lambdas.next(), lambdas.next()) else {
                        return false;
                    };
                    let named = find_kind(callee, "template_argument_list")
                        .and_then(|a| a.named_child(0))
                        .map_or(helper, |a| last_segment(self.text(a)));
                    (named.to_string(), callable, callee.end_byte())
                }
            };
        let Some(target) = self.binding_target(callable, None) else {
            return false;
        };
        let guard = guard.map(|(at, text)| {
            let why = format!(
                "`{name}` is bound through `{helper}` with {text}: the GIL is released on entry"
            );
            (at, why)
        });
        let registration = Span {
            file: 0,
            start: callee.start_byte() as u32,
            end: name_end as u32,
        };
        self.push_binding(name, registration, target, guard);
        for arg in args.iter().filter(|a| a.id() != callable.id()) {
            self.visit(*arg);
        }
        true
    }

    /// A parameter of the function walked, as passed on: `f`, `std::forward<F>(f)`,
    /// `std::move(f)`.
    fn is_forwarded_parameter(&self, node: Node) -> bool {
        const FORWARDS: &[&str] = &["std::forward", "std::move", "forward", "move"];
        let node = match node.kind() {
            "call_expression"
                if node
                    .field(Field::Function)
                    .is_some_and(|f| FORWARDS.contains(&self.path(f).as_str())) =>
            {
                match node.field(Field::Arguments).and_then(|a| a.named_child(0)) {
                    Some(argument) => argument,
                    None => return false,
                }
            }
            _ => node,
        };
        node.kind() == "identifier"
            && self
                .frames
                .last()
                .is_some_and(|f| matches!(f.locals.get(self.text(node)), Some(Local::Param(_))))
    }

    /// `x.def("name", callable, extra...)`: returns false when it is not a binding after all.
    fn register_binding(
        &mut self,
        field: Node,
        method: &str,
        receiver: Option<Node>,
        args: &[Node],
    ) -> bool {
        let Some((first, rest)) = args.split_first() else {
            return false;
        };
        // `m.def(name, std::forward<F>(f), extra...)` with the name and the callable passed in:
        // this function binds what its callers pass, as `.def` does.
        if self.is_forwarded_parameter(*first)
            && rest
                .first()
                .is_some_and(|c| self.is_forwarded_parameter(*c))
            && let Some(frame) = self.frames.last()
        {
            let helper = self.model.functions[frame.id].name.clone();
            let guard = args
                .iter()
                .find_map(|arg| self.release_call_guard(*arg))
                .map(|(at, text)| (at, format!("`{text}`")));
            self.def_helpers.insert(helper, guard);
            return false;
        }
        // `def(py::init(...))` binds a constructor: the callable is inside the first argument.
        // `def(py::pickle(get, set))` binds two, walked in place of the wrapper's call.
        let mut walked = args.to_vec();
        // `def("name"` or `def(py::pickle`: what a label shows of the registration.
        let mut head_end = first.end_byte();
        let callables: Vec<(String, Node)> = if first.kind() == "string_literal" {
            let count = if self.k.property_methods.contains(method) {
                2
            } else {
                1
            };
            let name = string_content(self.text(*first));
            rest.iter()
                .take(count)
                .map(|c| (name.clone(), *c))
                .collect()
        } else if first.kind() == "call_expression" {
            let function = first.field(Field::Function);
            let callee = function.map(|f| self.path(f)).unwrap_or_default();
            match first
                .field(Field::Arguments)
                .filter(|_| self.k.pickle_wrappers.contains(last_segment(&callee)))
            {
                Some(arguments) => {
                    let mut cursor = arguments.walk();
                    let pair: Vec<Node> = arguments.named_children(&mut cursor).take(2).collect();
                    walked.splice(0..1, pair.iter().copied());
                    head_end = function.map_or(head_end, |f| f.end_byte());
                    ["__getstate__", "__setstate__"]
                        .into_iter()
                        .map(String::from)
                        .zip(pair)
                        .collect()
                }
                None => vec![("__init__".to_string(), *first)],
            }
        } else {
            return false;
        };
        let class = receiver.and_then(|r| self.class_name(r));
        let qualify = |name: &str| match &class {
            Some(class) => format!("{class}.{name}"),
            None => name.to_string(),
        };
        let release_guard = args.iter().find_map(|arg| self.release_call_guard(*arg));
        // The method and the name, without the rest of a multi-line call.
        let registration = Span {
            file: 0,
            start: field.start_byte() as u32,
            end: head_end as u32,
        };
        let bound = receiver.and_then(|r| self.bound_class(r));
        if let Some(receiver) = receiver {
            self.visit(receiver);
        }
        for arg in walked {
            let Some((name, _)) = callables.iter().find(|(_, c)| c.id() == arg.id()) else {
                self.visit(arg);
                continue;
            };
            let Some(target) = self.binding_target(arg, bound.as_deref()) else {
                self.visit(arg);
                continue;
            };
            let name = qualify(name);
            let guard = release_guard.clone().map(|(at, text)| {
                (
                    at,
                    format!("`{name}` is bound with `{text}`: the GIL is released on entry"),
                )
            });
            self.push_binding(name, registration, target, guard);
        }
        true
    }

    /// `PyMethodDef methods[] = {{"name", (PyCFunction)f, METH_VARARGS, doc}, ...};`
    fn register_method_table(&mut self, declaration: Node) {
        let mut cursor = declaration.walk();
        let tables: Vec<Node> = declaration
            .children_by_field_name("declarator", &mut cursor)
            .filter_map(|d| d.field(Field::Value))
            .filter(|v| v.kind() == "initializer_list")
            .collect();
        for table in tables {
            let mut cursor = table.walk();
            let entries: Vec<Node> = table.named_children(&mut cursor).collect();
            for entry in entries {
                self.register_table_entry(entry);
            }
        }
    }

    /// One method-table entry, `{"name", (PyCFunction)f, METH_VARARGS, doc}`: binds `f`, entered
    /// with the GIL held. Anything else is not one.
    fn register_table_entry(&mut self, entry: Node) {
        if entry.kind() != "initializer_list" {
            return;
        }
        let (Some(name), Some(function)) = (entry.named_child(0), entry.named_child(1)) else {
            return;
        };
        if name.kind() != "string_literal" {
            return;
        }
        if let Some(target) = self.binding_target(function, None) {
            let name_text = string_content(self.text(name));
            self.push_binding(name_text, span(name), target, None);
        }
    }

    /// A binding registered here, entered with the GIL released when `guard` says why.
    fn push_binding(
        &mut self,
        name: String,
        at: Span,
        target: CallTarget,
        guard: Option<(Span, String)>,
    ) {
        self.model.bindings.push(Binding {
            name,
            span: at,
            scope: self.shared_scope.get(&self.scope),
            usings: self.shared_usings.get(&self.usings),
            target,
            entry: if guard.is_some() {
                GilState::Released
            } else {
                GilState::Held
            },
            guard,
            test: false,
            module_init: false,
            unless_run: false,
        });
    }

    /// What a binding's callable argument names: a function (through `&`, `py::overload_cast`,
    /// `py::init`), a lambda, which is walked here, or the constructors of `bound`, the class
    /// bound (`py::init<int>()`).
    fn binding_target(&mut self, arg: Node, bound: Option<&str>) -> Option<CallTarget> {
        let mut node = arg;
        loop {
            match node.kind() {
                "lambda_expression" => return Some(CallTarget::Direct(self.visit_lambda(node))),
                "pointer_expression" | "parenthesized_expression" | "cast_expression" => {
                    node = node
                        .field(Field::Argument)
                        .or_else(|| node.field(Field::Value).or_else(|| node.named_child(0)))?;
                }
                "call_expression" => {
                    let callee = self.path(node.field(Field::Function)?);
                    let last = callee.rsplit("::").next().unwrap_or("");
                    let arguments = node.field(Field::Arguments)?;
                    if arguments.named_child_count() == 0
                        && self.k.constructor_wrappers.contains(last)
                    {
                        return bound.map(|class| CallTarget::Named {
                            path: class.into(),
                            receiver: Receiver::None,
                        });
                    }
                    if !self.k.callable_wrappers.contains(last) {
                        return None;
                    }
                    node = arguments.named_child(0)?;
                }
                "identifier" | "qualified_identifier" | "template_function" => {
                    let path = self.path(node);
                    return Some(CallTarget::Named {
                        path: path.into(),
                        receiver: Receiver::None,
                    });
                }
                _ => return None,
            }
        }
    }

    /// `py::call_guard<py::gil_scoped_release>()`: the argument's span and text.
    fn release_call_guard(&self, arg: Node) -> Option<(Span, String)> {
        let text = self.text(arg);
        let (head, tail) = text.split_once('<')?;
        if !self.names(&self.k.call_guards, &self.path_of_text(head)) {
            return None;
        }
        let releases = tail
            .split([',', '<', '>', '(', ')'])
            .map(|t| self.path_of_text(t))
            .any(|t| self.names(&self.k.release_guards, &t));
        releases.then(|| (span(arg), text.to_string()))
    }

    /// The `py::class_<T>(m, "Name")` call that a `.def(...)` chain starts with.
    fn class_call<'t>(&self, mut receiver: Node<'t>) -> Option<Node<'t>> {
        loop {
            if receiver.kind() != "call_expression" {
                return None;
            }
            let callee = receiver.field(Field::Function)?;
            if callee.kind() == "field_expression" {
                receiver = callee.field(Field::Argument)?;
                continue;
            }
            let path = self.path(callee);
            return (path.ends_with("class_") || path.ends_with("enum_")).then_some(receiver);
        }
    }

    /// The Python class name of `py::class_<T>(m, "Name")...`.
    fn class_name(&self, receiver: Node) -> Option<String> {
        let args = self.class_call(receiver)?.field(Field::Arguments)?;
        let mut cursor = args.walk();
        let name = args
            .named_children(&mut cursor)
            .find(|a| a.kind() == "string_literal")?;
        Some(string_content(self.text(name)))
    }

    /// The C++ class `T` that `py::class_<T, ...>(m, "Name")...` or a variable `cls` declared
    /// as a `py::class_<T>` binds.
    fn bound_class(&self, receiver: Node) -> Option<String> {
        let written = match self.class_call(receiver) {
            Some(call) => self.text(call.field(Field::Function)?).to_string(),
            None => self
                .type_of(receiver)
                .filter(|ty| ty.split('<').next().is_some_and(|c| c.ends_with("class_")))?,
        };
        Some(self.path_of_text(first_template_argument(&written)?)).filter(|c| !c.is_empty())
    }

    /// `std::thread t(f, ...)` or `auto fut = std::async(policy, f, ...)`: `f` runs on a new
    /// thread that `t.join()` / `fut.get()` waits for. Returns whether the declarator was one.
    fn spawn_thread(&mut self, ty_path: &str, declarator: Node) -> bool {
        let Some(name) = declared_name(declarator).map(|n| self.text(n).to_string()) else {
            return false;
        };
        let value = declarator.field(Field::Value);
        let arguments = if self.names(&self.k.spawn_types, ty_path) {
            match declarator.kind() {
                // `std::thread t(worker)` reads as a function declaration.
                "function_declarator" => declarator.field(Field::Parameters),
                _ => value,
            }
        } else {
            value.and_then(|v| self.spawn_arguments(v))
        };
        match arguments {
            Some(arguments) => self.spawn(&name, arguments),
            None => false,
        }
    }

    /// The arguments of `std::async(policy, f, ...)` or of a thread made in place,
    /// `std::thread(f, ...)`.
    fn spawn_arguments<'t>(&self, call: Node<'t>) -> Option<Node<'t>> {
        if call.kind() != "call_expression" {
            return None;
        }
        let path = self.path(call.field(Field::Function)?);
        (self.names(&self.k.spawn_calls, &path) || self.names(&self.k.spawn_types, &path))
            .then(|| call.field(Field::Arguments))
            .flatten()
    }

    /// `pool.emplace_back(f)` on a container of threads, or `futures.push_back(std::async(f))`
    /// on any sequence: `f` runs on a new thread that joining an element of `pool` waits for.
    /// Returns whether the call was one.
    fn spawn_into_container(&mut self, receiver: Node, method: &str, args: &[Node]) -> bool {
        if receiver.kind() != "identifier" || !self.k.container_add_methods.contains(method) {
            return false;
        }
        let Some(element) = self
            .type_of(receiver)
            .and_then(|ty| element_type(&ty).map(|e| self.path_of_text(e)))
        else {
            return false;
        };
        let arguments = match args.first().and_then(|a| self.spawn_arguments(*a)) {
            Some(made_in_place) => made_in_place,
            None if self.names(&self.k.spawn_types, &element) => {
                match args.first().and_then(|a| a.parent()) {
                    Some(arguments) => arguments,
                    None => return false,
                }
            }
            None => return false,
        };
        let container = self.text(receiver).to_string();
        self.spawn(&container, arguments)
    }

    /// Whether `receiver.method(...)` adds an element to a container of method-table entries
    /// (`std::vector<PyMethodDef>`).
    fn adds_table_entry(&self, receiver: Node, method: &str) -> bool {
        self.k.container_add_methods.contains(method)
            && self
                .type_of(receiver)
                .and_then(|ty| element_type(&ty).map(|e| self.path_of_text(e)))
                .is_some_and(|element| self.k.method_tables.contains(last_segment(&element)))
    }

    /// `f` among `arguments` (`f, args...`, or `policy, f, args...`) runs on a new thread, which
    /// the local `variable` names. Returns whether a callable was found.
    fn spawn(&mut self, variable: &str, arguments: Node) -> bool {
        let mut cursor = arguments.walk();
        let args: Vec<Node> = arguments.named_children(&mut cursor).collect();
        // The callable: a lambda or a function name, skipping a `std::launch` policy.
        let callable = args.iter().copied().find(|a| {
            a.kind() == "lambda_expression"
                || (a.kind() != "qualified_identifier" || !self.text(*a).contains("launch"))
                    && function_reference(if a.kind() == "parameter_declaration" {
                        a.field(Field::Type).unwrap_or(*a)
                    } else {
                        *a
                    })
                    .is_some()
        });
        let Some(callable) = callable else {
            return false;
        };
        let thread = format!(
            "{}::{variable}",
            self.frames
                .last()
                .map_or(String::new(), |f| self.model.functions[f.id]
                    .qualname
                    .clone())
        );
        let (label, target) = if callable.kind() == "lambda_expression" {
            let id = self.visit_lambda(callable);
            (
                callable.field(Field::Captures).unwrap_or(callable),
                CallTarget::Direct(id),
            )
        } else {
            let reference = if callable.kind() == "parameter_declaration" {
                callable.field(Field::Type).unwrap_or(callable)
            } else {
                callable
            };
            let reference = function_reference(reference).unwrap_or(reference);
            let path = self.path(reference);
            (
                reference,
                CallTarget::Named {
                    path: path.into(),
                    receiver: Receiver::None,
                },
            )
        };
        let site = CallSite {
            span: span(label),
            target,
            args: (args.len() as u32).saturating_sub(1),
        };
        if let Some(frame) = self.frames.last_mut() {
            frame.threads.insert(variable.to_string(), thread.clone());
        }
        if let Some(function) = self.function() {
            function.push_call(site, [CallNote::Spawns(thread.into())]);
        }
        for arg in args.into_iter().filter(|a| a.id() != callable.id()) {
            self.visit(arg);
        }
        true
    }

    /// `tbb::parallel_for(range, [&](auto r) { ... })`, or a method such as a library's
    /// `subscribe(cb)` that waits for the thread running its callbacks (the knowledge's
    /// `worker_calls`, named `Class::method` for a method): the lambda runs on other threads,
    /// without the GIL, and the call waits for them. Returns whether the call was one.
    fn run_on_workers(&mut self, call: Node, called: &str, args: &[Node]) -> bool {
        let Some(&lambda) = args.iter().find(|a| a.kind() == "lambda_expression") else {
            return false;
        };
        let Some(frame) = self.frames.last() else {
            return false;
        };
        let thread = format!("{}::{called}", self.model.functions[frame.id].qualname);
        let id = self.visit_lambda(lambda);
        let at = call.start_byte() as u32;
        let site = CallSite {
            span: span(lambda.field(Field::Captures).unwrap_or(lambda)),
            target: CallTarget::Direct(id),
            args: 0,
        };
        let wait = LockRegion {
            member: false,
            span: span(call.field(Field::Function).unwrap_or(call)),
            kind: LockKind::Thread,
            lock: thread.clone(),
            scope: at..at,
            waits: true,
        };
        if let Some(function) = self.function() {
            function.push_call(site, [CallNote::Spawns(thread.into())]);
            function.lock_regions.push(wait);
        }
        for arg in args.iter().filter(|a| a.id() != lambda.id()) {
            self.visit(*arg);
        }
        true
    }

    /// `t.join()` / `fut.get()` on a thread started here, `cv.wait(...)` on a condition variable,
    /// or `cv.notify_one()`, which ends the notifier's hold on it.
    fn wait_for_work(&self, call: Node, receiver: Node, method: &str) -> Option<LockRegion> {
        let at = call.start_byte() as u32;
        let frame = self.frames.last()?;
        // `t.join()`, or `pool[i].join()` for a container of threads.
        let variable = match receiver.kind() {
            "subscript_expression" => receiver.field(Field::Argument)?,
            _ => receiver,
        };
        if self.k.join_methods.contains(method)
            && let Some(thread) = frame.threads.get(self.text(variable))
        {
            return Some(LockRegion {
                member: false,
                span: span(call),
                kind: LockKind::Thread,
                waits: true,
                lock: thread.clone(),
                scope: at..at,
            });
        }
        let declared = self.type_of(receiver)?;
        let class = declared.split('<').next().unwrap_or(&declared);
        if self.names(&self.k.atomic_types, class) {
            // `while (flag.load()) ...` spins until another thread stores to `flag`.
            let (scope, waits) = if self.k.atomic_load_methods.contains(method) {
                if !in_loop_condition(call) {
                    return None;
                }
                (at..at, true)
            } else if self.k.atomic_store_methods.contains(method) {
                (frame.body_start..at, false)
            } else {
                return None;
            };
            return Some(LockRegion {
                member: false,
                span: span(call),
                kind: LockKind::Atomic,
                lock: self.path(receiver),
                scope,
                waits,
            });
        }
        if !self.names(&self.k.condvar_types, class) {
            return None;
        }
        let (scope, waits) = if self.k.condvar_wait_methods.contains(method) {
            (at..at, true)
        } else if self.k.condvar_notify_methods.contains(method) {
            (frame.body_start..at, false)
        } else {
            return None;
        };
        Some(LockRegion {
            member: false,
            span: span(call),
            kind: LockKind::Condvar,
            lock: self.path(receiver),
            scope,
            waits,
        })
    }

    /// `std::lock_guard<std::mutex> lock(m);`: holds `m` to the end of the block. The grammar
    /// reads `lock(m)` as a function declarator (the most vexing parse) or, with braces or a
    /// non-type argument, as an initialiser.
    fn lock_guard(&mut self, declaration: Node, declarator: Node) {
        let arguments = match declarator.kind() {
            "function_declarator" => declarator.field(Field::Parameters),
            "init_declarator" => declarator.field(Field::Value),
            _ => None,
        };
        let Some(mutex) = arguments.and_then(|a| a.named_child(0)) else {
            return;
        };
        // `std::shared_lock` holds a `std::shared_mutex` for reading.
        let shared = self.text(declaration).contains("shared_lock");
        let guarded = GuardedLock {
            lock: self.path(mutex),
            member: self.is_member_lock(mutex),
            kind: if shared {
                LockKind::SharedRead
            } else {
                LockKind::Mutex
            },
            until: self.block_end(),
        };
        // `std::unique_lock lk(m, std::defer_lock)` owns `m` without locking it yet.
        let deferred = arguments
            .and_then(|a| a.named_child(1))
            .is_some_and(|tag| last_segment(self.text(tag)) == "defer_lock");
        if let Some(name) = declared_name(declarator).map(|n| self.text(n).to_string())
            && let Some(frame) = self.frames.last_mut()
        {
            frame.lock_guards.insert(name, guarded.clone());
        }
        if deferred {
            return;
        }
        let region = LockRegion {
            member: guarded.member,
            span: span(declaration),
            kind: guarded.kind,
            waits: true,
            lock: guarded.lock,
            scope: declaration.start_byte() as u32..guarded.until,
        };
        if let Some(function) = self.function() {
            function.lock_regions.push(region);
        }
    }

    /// Whether `receiver.lock()` (`call`) may lock a mutex. A mutex's `lock()` returns nothing, so
    /// one whose value is used (`auto item = w.lock();`) is another type's: `std::weak_ptr`'s. A
    /// receiver whose declared type is known is a mutex when the knowledge says so, or when the
    /// type is neither the standard library's nor a standard smart pointer (a project's own
    /// `SpinLock`, whose `lock()` gil-lint cannot see into).
    fn may_be_mutex(&self, call: Node, receiver: Node, arrow: bool) -> bool {
        if call
            .parent()
            .is_some_and(|p| p.kind() != "expression_statement")
        {
            return false;
        }
        let Some(class) = self.receiver_class(receiver, arrow) else {
            return true;
        };
        self.names(&self.k.mutex_types, &class)
            || self.names(&self.k.lock_guard_types, &class)
            || !class.starts_with("std::") && !STANDARD_POINTERS.contains(&last_segment(&class))
    }

    /// The GIL state that `guard.method()` switches to, and the end of the guard's block, when
    /// `guard` is a local of one of the project's guard types and `method` switches the GIL
    /// (`lock.Release()` takes it back before the guard's end, `lock.acquire()` takes it again).
    fn guard_switched_by(&self, receiver: Node, method: &str) -> Option<(GilState, u32)> {
        let frame = self.frames.last()?;
        let name = self.text(receiver);
        if receiver.kind() != "identifier" {
            return None;
        }
        let until = *frame.gil_guard_ends.get(name)?;
        let written = frame.types.get(name)?;
        let qualified = format!("{}::{method}", self.path_of_text(written));
        if self.names(&self.k.guard_methods_acquiring, &qualified) {
            Some((GilState::Held, until))
        } else if self.names(&self.k.guard_methods_releasing, &qualified) {
            Some((GilState::Released, until))
        } else {
            None
        }
    }

    /// `m.lock()` holds `m` until `m.unlock()` or the end of the block.
    fn lock_method(&mut self, call: Node, receiver: Node, method: &str) {
        if self.lent_guard_method(call, receiver, method) {
            return;
        }
        let guard = self
            .frames
            .last()
            .and_then(|f| f.lock_guards.get(self.text(receiver)))
            .filter(|_| receiver.kind() == "identifier")
            .cloned();
        let at = call.start_byte() as u32;
        let (lock, member, kind, block_end) = match guard {
            // `lk.unlock()` / `lk.lock()` on a local guard: the mutex it guards, until the
            // guard's end.
            Some(GuardedLock {
                lock,
                member,
                kind,
                until,
            }) => (lock, member, kind, until),
            None => (
                self.path(receiver),
                self.is_member_lock(receiver),
                if method.ends_with("_shared") {
                    LockKind::SharedRead
                } else {
                    LockKind::Mutex
                },
                self.block_end(),
            ),
        };
        let locking = self.k.lock_methods.contains(method);
        let Some(function) = self.function() else {
            return;
        };
        if locking {
            let region = LockRegion {
                member,
                span: span(call),
                kind,
                waits: true,
                lock,
                scope: at..block_end,
            };
            function.lock_regions.push(region);
        } else if let Some(open) = function
            .lock_regions
            .iter_mut()
            .rev()
            .find(|r| r.kind == kind && r.lock == lock && r.scope.contains(&at))
        {
            open.scope.end = at;
        }
    }

    /// `lock.unlock()` / `lock.lock()` on a lock guard the caller lends by reference
    /// (`std::unique_lock<std::mutex> &lock`): the caller's lock is not held from the one to the
    /// other (see [`Function::unlocked_params`]). Whether `receiver` is such a parameter.
    fn lent_guard_method(&mut self, call: Node, receiver: Node, method: &str) -> bool {
        let Some(frame) = self.frames.last() else {
            return false;
        };
        let name = self.text(receiver);
        let (Some(&Local::Param(param)), Some(ty)) =
            (frame.locals.get(name), frame.types.get(name))
        else {
            return false;
        };
        if receiver.kind() != "identifier"
            || frame.lock_guards.contains_key(name)
            || !self.names(&self.k.lock_guard_types, ty.split('<').next().unwrap_or(ty))
        {
            return false;
        }
        let at = call.start_byte() as u32;
        let body_end = frame.block_ends.first().copied().unwrap_or(at);
        let unlocking = self.k.unlock_methods.contains(method);
        let Some(function) = self.function() else {
            return true;
        };
        let open = function
            .unlocked_params
            .iter_mut()
            .rev()
            .find(|(p, range)| *p == param && range.contains(&at));
        match (unlocking, open) {
            (true, None) => function.unlocked_params.push((param, at..body_end)),
            (false, Some((_, range))) => range.end = at,
            _ => {}
        }
        true
    }

    /// `return o;` where `o` is a caller's Python object (a reference parameter): the returned
    /// value is a copy, a reference count taken in this function's GIL state. (A local or a
    /// by-value parameter is moved out instead. A field returned by a getter is a copy too, but
    /// getters are where calls guessed by method name land most, so they are left out.)
    fn copied_for_return(&self, value: Node) -> Option<String> {
        let frame = self.frames.last()?;
        if frame.returns_reference || value.kind() != "identifier" {
            return None;
        }
        let name = self.text(value);
        let shown = frame.python_references.get(name)?;
        Some(format!("the `{shown}` `{name}` is copied to be returned"))
    }

    /// `return o;` of a Python object local (by value) inside a GIL acquire scope of the function:
    /// the function takes the GIL, so it runs where the GIL may be released, and the object
    /// outlives the guard. Its caller destroys it (DECREF) without the GIL: a use where the return
    /// type is written, and the function an entry point entered released.
    fn returned_out_of_guard(&mut self, value: Node) {
        let Some(frame) = self.frames.last() else {
            return;
        };
        let (id, Some(return_type)) = (frame.id, frame.return_type) else {
            return;
        };
        if frame.returns_reference || value.kind() != "identifier" {
            return;
        }
        // `bool seek() { ...; py::bool_ ret = ...; return ret; }`: the object is converted to the
        // declared scalar and destroyed in the function, under its guard.
        let written_return = &self.src[return_type.start as usize..return_type.end as usize];
        if std::str::from_utf8(written_return).is_ok_and(is_scalar_type) {
            return;
        }
        let name = self.text(value);
        let Some(written) = frame.types.get(name) else {
            return;
        };
        let shown = written.split('<').next().unwrap_or(written).to_string();
        let ty = self.path_of_text(written);
        if !self.names(&self.k.python_types, &ty) || self.names(&self.k.non_owning_types, &ty) {
            return;
        }
        let offset = value.start_byte() as u32;
        let function = &self.model.functions[id];
        let switches = &function.gil_switches;
        let Some(acquire) = switches
            .iter()
            .filter(|s| s.scope.contains(&offset))
            .max_by_key(|s| s.scope.start)
            .filter(|s| s.to == GilState::Held)
        else {
            return;
        };
        // An acquire nested in the function's own release (`gil_scoped_release` at the top,
        // `gil_scoped_acquire` around building the result): the function is entered with the
        // GIL, and the release's end takes it back before the caller gets the object.
        if switches.iter().any(|s| {
            s.to == GilState::Released
                && s.scope.start < acquire.scope.start
                && s.scope.contains(&acquire.scope.start)
        }) {
            return;
        }
        let acquire = acquire.span;
        let function_name = function.name.clone();
        let what = format!(
            "the `{shown}` `{name}` returned by `{function_name}` outlives its GIL guard: the caller destroys it"
        );
        self.model.functions[id].py_uses.push(PyUse {
            span: return_type,
            what,
            runs_code: false,
            needs_gil_check: true,
            at_destruction: false,
        });
        if self.escaping.insert(id) {
            let why = format!(
                "`{function_name}` takes the GIL itself, so it is called where the GIL may be released"
            );
            self.push_binding(
                function_name,
                acquire,
                CallTarget::Direct(id),
                Some((acquire, why)),
            );
        }
    }

    /// A class field's type, for calls on it and for calling it when it is a Python callable.
    fn record_field(&mut self, field: Node) {
        let declarator = field.field(Field::Declarator);
        // `py::object name() const;` (or `&name()`) declares a method, not a field of that type.
        if declarator.is_some_and(|d| find_kind(d, "function_declarator").is_some()) {
            return;
        }
        let (Some(ty), Some(name)) = (field.field(Field::Type), declarator.and_then(declared_name))
        else {
            return;
        };
        let name = self.text(name).to_string();
        let ty_path = self.path(ty);
        if self.names(&self.k.callable_types, &ty_path) {
            self.global_callables.insert(name.clone());
        }
        if self.names(&self.k.python_types, &ty_path)
            && !self.names(&self.k.non_owning_types, &ty_path)
        {
            let shown = self
                .text(ty)
                .split('<')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            self.object_fields
                .entry(self.scope.join("::"))
                .or_default()
                .push((span(field), name.clone(), shown));
        }
        if let Some(ty) = self.declared_type(ty) {
            let pointer = declarator.is_some_and(|d| find_kind(d, "pointer_declarator").is_some());
            let declared = if pointer {
                format!("{ty}*")
            } else {
                ty.clone()
            };
            self.model
                .fields
                .push((self.scope.join("::"), name.clone(), declared));
            self.global_types.insert(name, ty);
        }
    }

    /// A declared class type as written, whitespace removed (`std::unique_ptr<Quantizer>`);
    /// `None` for `auto` and primitive types.
    fn declared_type(&self, ty: Node) -> Option<String> {
        matches!(
            ty.kind(),
            "type_identifier" | "qualified_identifier" | "template_type"
        )
        .then(|| {
            self.text(ty)
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect()
        })
    }

    /// The declared return type of a function declaration or definition named `written`.
    fn record_return(&mut self, declaration: Node, written: &str) {
        if let Some(ty) = declaration
            .field(Field::Type)
            .and_then(|ty| self.declared_type(ty))
        {
            self.returns.insert(written.to_string(), ty);
        }
    }

    /// What a call to a function declared in sight returns (`GetEngine()`).
    fn returned_type(&self, call: Node) -> Option<String> {
        let callee = call.field(Field::Function)?;
        // `reinterpret_borrow<py::function>(h)`: its template argument.
        if self.names(&self.k.typed_calls, &self.path(callee)) {
            let argument = find_kind(callee, "template_argument_list")?.named_child(0)?;
            return self.declared_type(argument.field(Field::Type).unwrap_or(argument));
        }
        if !matches!(callee.kind(), "identifier" | "qualified_identifier") {
            return None;
        }
        self.returns.get(&self.path(callee)).cloned()
    }

    /// `for (auto &x : v)` and `for (T &x : v)`: `x` has the element type of `v`, or `T`.
    fn type_range_variable(&mut self, node: Node) {
        let (Some(ty), Some(name)) = (
            node.field(Field::Type),
            node.field(Field::Declarator).and_then(declared_name),
        ) else {
            return;
        };
        let declared = self.declared_type(ty).or_else(|| {
            let container = self.type_of(node.field(Field::Right)?)?;
            element_type(&container).map(str::to_string)
        });
        let name = self.text(name).to_string();
        if let Some(frame) = self.frame() {
            match declared {
                Some(ty) => {
                    frame.types.insert(name, ty);
                }
                None => {
                    frame.untyped.insert(name);
                }
            }
        }
    }

    /// Whether `x.method(...)` may be a framework object's method (`obj.attr`, `obj.contains`):
    /// `x` is declared with a framework type; or its type is not known here (a field declared in
    /// a header) and the method's name is the framework's own (`attr`), or is one that common C++
    /// types have too (`contains`) in a file that names the framework. A `std::unordered_map`'s
    /// `contains` or an Eigen matrix's `cast` is not.
    fn may_be_framework_object(&self, receiver: Option<Node>, arrow: bool, method: &str) -> bool {
        let framework_own = |method: &str| {
            self.k.member_calls.contains(method) && !self.k.member_calls_common.contains(method)
        };
        let Some(receiver) = receiver else {
            return self.model.names_framework || framework_own(method);
        };
        // What the framework's own method returns (`obj.attr("x").cast<T>()`) is its object.
        if receiver.kind() == "call_expression"
            && let Some(inner) = receiver.field(Field::Function)
            && let Some(field) = inner.field(Field::Field)
            && framework_own(&self.path(field))
        {
            return true;
        }
        match self.receiver_class(receiver, arrow) {
            Some(class) => self.names(&self.k.python_types, &class),
            None => self.model.names_framework || framework_own(method),
        }
    }

    /// A receiver of unknown type: possibly a framework object only where the file names a
    /// framework.
    fn unknown_receiver(&self) -> Receiver {
        if self.model.names_framework {
            Receiver::Object
        } else {
            Receiver::Native
        }
    }

    /// The class whose method `receiver.f()` or `receiver->f()` calls, from the receiver's
    /// declared type (see [`receiver_class`]).
    fn receiver_class(&self, receiver: Node, arrow: bool) -> Option<String> {
        receiver_class(&self.type_of(receiver)?, arrow).map(str::to_string)
    }

    /// A receiver that may be a field of the caller's class declared in another file: `f` or
    /// `this->f` where `f` is no parameter, local or global in sight (see [`Receiver::Field`]).
    fn field_receiver(&self, receiver: Node, arrow: bool) -> Option<Receiver> {
        let name = match receiver.kind() {
            "identifier" => {
                let name = self.text(receiver);
                if self.frames.iter().any(|f| f.declares(name))
                    || self.global_types.contains_key(name)
                {
                    return None;
                }
                name
            }
            "field_expression" => self.text(this_field(receiver)?),
            _ => return None,
        };
        self.frames.last()?;
        Some(Receiver::Field {
            name: name.into(),
            arrow,
            native: !self.model.names_framework,
        })
    }

    /// The declared type of a receiver expression: a variable, a parameter, `this->field`, or
    /// a call of a function declared in sight.
    fn type_of(&self, receiver: Node) -> Option<String> {
        let name = match receiver.kind() {
            "call_expression" => return self.returned_type(receiver),
            "identifier" => self.text(receiver),
            "field_expression" => self.text(this_field(receiver)?),
            "pointer_expression" => return self.type_of(receiver.field(Field::Argument)?),
            "parenthesized_expression" => return self.type_of(receiver.named_child(0)?),
            // `(uv - offset).cast<int>()`: arithmetic keeps its left operand's type, as for
            // vectors, matrices and Python objects alike.
            "binary_expression"
                if receiver
                    .field(Field::Operator)
                    .is_some_and(|o| matches!(self.text(o), "+" | "-" | "*" | "/")) =>
            {
                return self.type_of(receiver.field(Field::Left)?);
            }
            // `v[i]` of a sequence container: its element type.
            "subscript_expression" => {
                let container = self.type_of(receiver.field(Field::Argument)?)?;
                return element_type(&container).map(str::to_string);
            }
            _ => return None,
        };
        self.variable_type(name)
    }

    /// The declared type of a variable in sight: a parameter, a local or a global.
    fn variable_type(&self, name: &str) -> Option<String> {
        self.frames
            .last()
            .and_then(|f| f.types.get(name))
            .or_else(|| self.global_types.get(name))
            .cloned()
    }

    /// The declared type of a call's argument, for choosing among overloads.
    fn argument_type(&self, argument: Node) -> Option<String> {
        match argument.kind() {
            // `T x(a, b)` read as a function declaration: each argument is a parameter's type.
            "parameter_declaration" if argument.field(Field::Declarator).is_none() => {
                self.variable_type(self.text(argument.field(Field::Type)?))
            }
            _ => self.type_of(argument),
        }
    }

    fn visit_declaration(&mut self, node: Node) {
        let Some(written) = node.field(Field::Type) else {
            return self.visit_children(node);
        };
        // C names a struct's type `struct T` (`static struct PyMethodDef methods[]`): the type
        // is `T`. A specifier with a body defines the type, and is visited as such below.
        let ty = match written.kind() {
            "struct_specifier" | "class_specifier" | "union_specifier"
                if written.field(Field::Body).is_none() =>
            {
                written.field(Field::Name).unwrap_or(written)
            }
            _ => written,
        };
        let ty_path = self.path(ty);
        if self
            .k
            .method_tables
            .contains(ty_path.rsplit("::").next().unwrap_or(&ty_path))
        {
            self.register_method_table(node);
        }
        let shown = self
            .text(ty)
            .split('<')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        let in_function = !self.frames.is_empty();
        let is_static = in_function && is_static(node, self.src);
        let mut cursor = node.walk();
        let declarators: Vec<Node> = node
            .children_by_field_name("declarator", &mut cursor)
            .collect();
        for declarator in declarators {
            if in_function && self.spawn_thread(&ty_path, declarator) {
                continue;
            }
            let value = match declarator.kind() {
                "init_declarator" => declarator.field(Field::Value),
                _ => None,
            };
            let name = declared_name(declarator).map(|n| self.text(n).to_string());
            if declarator.kind() != "init_declarator"
                && let Some(function) = find_kind(declarator, "function_declarator")
                && let Some(function_name) = function.field(Field::Declarator)
            {
                let written = self.path(function_name);
                self.record_return(node, &written);
            }
            if !in_function
                && let Some(name) = &name
                && self.names(&self.k.callable_types, &ty_path)
            {
                self.global_callables.insert(name.clone());
            }
            let known = self
                .declared_type(ty)
                .or_else(|| value.and_then(|v| self.type_of(v)));
            match (&name, known, self.frames.last_mut()) {
                (Some(name), Some(known), Some(frame)) => {
                    frame.types.insert(name.clone(), known);
                }
                (Some(name), Some(known), None) => {
                    self.global_types.insert(name.clone(), known);
                }
                (Some(name), None, Some(frame)) => {
                    frame.untyped.insert(name.clone());
                }
                _ => {}
            }
            if in_function && let Some(name) = &name {
                self.alias_param(name, declarator, value);
                let made = self.makes_object(ty, declarator, value);
                if let Some(frame) = self.frame() {
                    if made {
                        frame.unpublished.insert(name.clone());
                    } else {
                        frame.unpublished.remove(name);
                    }
                }
            }
            if in_function {
                let guard = self.guard_state(&ty_path);
                if guard.is_some()
                    && let Some(name) = &name
                {
                    let end = self.block_end();
                    if let Some(frame) = self.frame() {
                        frame.gil_guard_ends.insert(name.clone(), end);
                    }
                }
                if let Some(state) = guard {
                    self.add_gil_switch(node, state, format!("`{shown}`"));
                } else if self.names(&self.k.python_types, &ty_path)
                    && !declares_pointer_or_reference(declarator)
                    && value
                        .is_none_or(|v| matches!(v.kind(), "argument_list" | "initializer_list"))
                {
                    self.add_py_use(declarator, format!("a `{shown}` is constructed"), false);
                } else if !self.names(&self.k.lock_guard_types, &ty_path) {
                    // `T x(a)` (which the grammar may read as a function declaration) or
                    // `T x{a}`; `T x;` runs the default constructor.
                    let arguments = match declarator.kind() {
                        "function_declarator" => declarator.field(Field::Parameters),
                        _ => value
                            .filter(|v| matches!(v.kind(), "argument_list" | "initializer_list")),
                    };
                    if arguments.is_some() || declarator.kind() == "identifier" {
                        self.construct(ty, arguments);
                    }
                }
                if let Some(name) = &name
                    && self.names(&self.k.callable_types, &ty_path)
                    && let Some(frame) = self.frame()
                {
                    frame.locals.insert(name.clone(), Local::PyCallable);
                }
            }
            if in_function && self.names(&self.k.lock_guard_types, &ty_path) {
                self.lock_guard(node, declarator);
            }
            let Some(value) = value else { continue };
            if is_static && self.k.static_locals && !is_constant_initialised(node, self.src) {
                let owner = self
                    .frames
                    .last()
                    .map(|f| self.model.functions[f.id].qualname.clone());
                // `static py::object cls`: the declaration up to the name.
                let name_end =
                    declared_name(declarator).map_or(declarator.end_byte(), |n| n.end_byte());
                let region = LockRegion {
                    member: false,
                    span: Span {
                        file: 0,
                        start: node.start_byte() as u32,
                        end: name_end as u32,
                    },
                    kind: LockKind::StaticInit,
                    waits: true,
                    lock: format!(
                        "{}::{}",
                        owner.unwrap_or_default(),
                        name.clone().unwrap_or_default()
                    ),
                    scope: value.start_byte() as u32..value.end_byte() as u32,
                };
                if let Some(function) = self.function() {
                    function.lock_regions.push(region);
                }
            }
            if value.kind() == "lambda_expression" && in_function && !is_static {
                let id = self.visit_lambda(value);
                if let (Some(name), Some(frame)) = (name, self.frame()) {
                    frame.locals.insert(name, Local::Lambda(id));
                }
            } else {
                self.visit(value);
            }
        }
    }
}

/// Whether a written type is a C++ arithmetic type or `void` (`bool`, `unsigned long`,
/// `std::size_t`), which no Python object is returned as.
fn is_scalar_type(written: &str) -> bool {
    let mut words = written
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "static" | "inline" | "constexpr" | "virtual"))
        .peekable();
    words.peek().is_some()
        && words.all(|w| {
            matches!(
                w.trim_start_matches("std::"),
                "bool"
                    | "char"
                    | "short"
                    | "int"
                    | "long"
                    | "float"
                    | "double"
                    | "signed"
                    | "unsigned"
                    | "void"
                    | "size_t"
                    | "ssize_t"
                    | "Py_ssize_t"
                    | "int32_t"
                    | "int64_t"
                    | "uint32_t"
                    | "uint64_t"
            )
        })
}

/// Whether a declarator declares a pointer or a reference (`py::object *p`, also in a condition:
/// `if (py::object *p = get_if<py::object>(&v))`): no object of the type is made.
fn declares_pointer_or_reference(declarator: Node) -> bool {
    let declared = match declarator.kind() {
        "init_declarator" => declarator.field(Field::Declarator),
        _ => Some(declarator),
    };
    declared.is_some_and(|d| matches!(d.kind(), "pointer_declarator" | "reference_declarator"))
}

/// Whether identifier `node` is the object of a field read or write (`x->f`, `x.f = v`), not of
/// a method call, a longer member chain, or an address taken (`&x->m`).
fn only_field_access(node: Node) -> bool {
    let Some(access) = node
        .parent()
        .filter(|p| p.kind() == "field_expression" && p.field(Field::Argument) == Some(node))
    else {
        return false;
    };
    access.parent().is_none_or(|outer| {
        !matches!(
            outer.kind(),
            "field_expression" | "pointer_expression" | "call_expression"
        )
    })
}

/// Whether a declaration is `static`.
fn is_static(declaration: Node, src: &[u8]) -> bool {
    let mut cursor = declaration.walk();
    declaration.children(&mut cursor).any(|c| {
        c.kind() == "storage_class_specifier" && c.utf8_text(src).is_ok_and(|t| t == "static")
    })
}

/// Whether a declaration is `constexpr` or `constinit`: its variables are initialised at compile
/// time, so a function-local static of it has no initialisation guard to wait for.
fn is_constant_initialised(declaration: Node, src: &[u8]) -> bool {
    let mut cursor = declaration.walk();
    declaration.children(&mut cursor).any(|c| {
        c.kind() == "type_qualifier"
            && c.utf8_text(src)
                .is_ok_and(|t| matches!(t, "constexpr" | "constinit"))
    })
}

/// Whether `node` is part of a loop's condition (`while (flag.load()) ...`), within the
/// statement that holds it.
fn in_loop_condition(node: Node) -> bool {
    let mut child = node;
    while let Some(parent) = child.parent() {
        match parent.kind() {
            "while_statement" | "do_statement" | "for_statement" => {
                return parent
                    .field(Field::Condition)
                    .is_some_and(|c| c.byte_range().contains(&node.start_byte()));
            }
            "compound_statement" | "function_definition" | "lambda_expression" => return false,
            _ => child = parent,
        }
    }
    false
}

/// `TF_ASSIGN_OR_RETURN`: upper case with an underscore, as macros are spelled.
fn is_macro_name(name: &str) -> bool {
    name.contains('_')
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The field `f` of `this->f`.
fn this_field(node: Node) -> Option<Node> {
    node.field(Field::Argument)
        .filter(|a| node.kind() == "field_expression" && a.kind() == "this")?;
    node.field(Field::Field)
}

/// The first node of `kind` at or below `node`, looking through declarator wrappers.
fn find_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    if node.kind() == kind {
        return Some(node);
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
    children.into_iter().find_map(|c| find_kind(c, kind))
}

/// The identifier a declarator declares: `x` in `*x`, `&x`, `x = ...`, `x[3]`.
fn declared_name(node: Node) -> Option<Node> {
    match node.kind() {
        "identifier" | "field_identifier" => Some(node),
        _ => node
            .field(Field::Declarator)
            .or_else(|| node.named_child(0))
            .and_then(declared_name),
    }
}

/// `f` in `&f` or `f` when passed as a callable.
fn function_reference(node: Node) -> Option<Node> {
    match node.kind() {
        "identifier" | "qualified_identifier" => Some(node),
        "pointer_expression" => node.field(Field::Argument).and_then(function_reference),
        _ => None,
    }
}

fn string_content(literal: &str) -> String {
    literal.trim_matches('"').to_string()
}

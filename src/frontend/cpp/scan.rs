//! The light scan of C/C++ text for what it may define (see [`Definitions`]), and the bounds
//! within which tree-sitter parses a file in bounded memory and about linear time.

use std::borrow::Cow;

use rustc_hash::FxHashSet as HashSet;

use crate::frontend::lexer::{Lexer, Token, is_ident_byte, line_of};
use crate::frontend::scan::Definitions;
use crate::knowledge::Knowledge;

/// C++ keywords: never the name of a function or class, so never indexed nor looked up (a call
/// "named" `constexpr` is a misparse of `if constexpr (...)`).
const KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "co_await",
    "co_return",
    "co_yield",
    "const",
    "const_cast",
    "consteval",
    "constexpr",
    "constinit",
    "continue",
    "decltype",
    "default",
    "defined",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "nullptr",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
];

pub(crate) fn is_keyword(name: &str) -> bool {
    KEYWORDS.binary_search(&name).is_ok()
}

/// How far back `f<...>(` is searched for the `<`, and `A::B::f(` for qualifiers.
const MAX_LOOKBACK: usize = 256;
/// Names collected in one class head before it is taken as a definition anyway.
const MAX_CLASS_HEAD: usize = 64;
/// How far an operator's name (`operator()`, `operator new[]`) may extend.
const MAX_OPERATOR: usize = 64;

/// A `class`/`struct`/`union` head being read.
struct Head<'a> {
    depth: usize,
    names: Vec<&'a str>,
    bases: Option<Vec<&'a str>>,
    /// Template arguments of a specialisation's name (`Foo<int, 2>`) or of a base.
    angles: usize,
}

/// Scans C/C++ text for what it may define (see [`Definitions`]). `rewrites` are the pre-pass's
/// rewritten macros and the identifiers their expansions contain.
pub fn scan_cpp<'a>(text: &'a str, rewrites: &'a Rewrites) -> Definitions {
    let mut functions: HashSet<Cow<str>> = HashSet::default();
    let mut classes = Vec::new();
    let mut scopes: HashSet<&'a str> = HashSet::default();
    // For each open `(` or `[`, the name before it and where that name starts.
    let mut opens: Vec<Option<(&'a str, usize)>> = Vec::new();
    // Names followed by a closed parameter list, with the depth they were closed at (sorted).
    let mut pending: Vec<(&'a str, usize, usize)> = Vec::new();
    let mut head: Option<Head<'a>> = None;
    // After `namespace`: every name up to `{` or `;` (a namespace, a nested one, an alias).
    let mut namespace = false;
    // After a rewritten macro: names in its parenthesised arguments, at this depth.
    let mut rewrite_args: Option<usize> = None;
    let mut ternaries = 0usize;
    let mut prev: Option<Token> = None;
    let mut prev_end = 0usize;
    let mut lexer = Lexer::new(text);
    // A closed parameter list followed by a body, `try` or initialisers: the names before it are
    // defined.
    let flush = |pending: &mut Vec<(&'a str, usize, usize)>,
                 depth: usize,
                 functions: &mut HashSet<Cow<'a, str>>,
                 scopes: &mut HashSet<&'a str>| {
        while let Some(&(name, d, start)) = pending.last() {
            if d < depth {
                break;
            }
            functions.insert(Cow::Borrowed(name));
            scopes.extend(qualifiers_before(text, start));
            pending.pop();
        }
    };
    while let Some(token) = lexer.next() {
        let depth = opens.len();
        match token {
            Token::Ident(start, end) => {
                let name = &text[start..end];
                if namespace || rewrite_args.is_some() {
                    scopes.insert(name);
                }
                if rewrites.keys.contains(name) {
                    scopes.extend(rewrites.produced.iter().map(String::as_str));
                    if text[end..].trim_start().starts_with('(') {
                        rewrite_args = Some(depth + 1);
                    }
                }
                match name {
                    "class" | "struct" | "union" => {
                        head = Some(Head {
                            depth,
                            names: Vec::new(),
                            bases: None,
                            angles: 0,
                        })
                    }
                    "namespace" => namespace = true,
                    "try" => flush(&mut pending, depth, &mut functions, &mut scopes),
                    "operator" => {
                        if let Some(op) = operator_name(text, start) {
                            functions.insert(Cow::Owned(op));
                        }
                    }
                    _ => {
                        if let Some(h) = &mut head
                            && h.depth == depth
                        {
                            // The model names a class and its bases without template arguments.
                            match &mut h.bases {
                                Some(bases) if h.angles == 0 => bases.push(name),
                                None if h.angles == 0 => h.names.push(name),
                                _ => {}
                            }
                            if h.names.len() + h.bases.as_ref().map_or(0, Vec::len) > MAX_CLASS_HEAD
                            {
                                classes.push(take_head(head.take(), &mut scopes));
                            }
                        }
                    }
                }
            }
            Token::Punct(open @ (b'(' | b'[')) => {
                let name = match prev {
                    // A destructor, `A::~A(`, is found by its class's name (see `key`), and
                    // its qualifiers are before the `~`.
                    Some(Token::Ident(s, e)) if open == b'(' && text[..s].ends_with('~') => {
                        Some((&text[s..e], s - 1))
                    }
                    Some(Token::Ident(s, e)) if open == b'(' => {
                        Some((&text[s..e], s)).filter(|(n, _)| !is_keyword(n))
                    }
                    Some(Token::Punct(b'>')) if open == b'(' => {
                        template_name(text, prev_end.saturating_sub(1))
                    }
                    _ => None,
                };
                opens.push(name);
            }
            Token::Punct(b')' | b']') => {
                if let Some(name) = opens.pop() {
                    let depth = opens.len();
                    if rewrite_args.is_some_and(|d| depth < d) {
                        rewrite_args = None;
                    }
                    while pending.last().is_some_and(|&(_, d, _)| d > depth) {
                        pending.pop();
                    }
                    if let Some((name, start)) = name {
                        pending.push((name, depth, start));
                    }
                    if head.as_ref().is_some_and(|h| h.depth > depth) {
                        head = None;
                    }
                }
            }
            Token::Punct(b'{') => {
                flush(&mut pending, depth, &mut functions, &mut scopes);
                if head.as_ref().is_some_and(|h| h.depth == depth) {
                    classes.push(take_head(head.take(), &mut scopes));
                }
                namespace = false;
                ternaries = 0;
            }
            Token::Punct(b':') if ternaries > 0 => ternaries -= 1,
            Token::Punct(b':') => {
                flush(&mut pending, depth, &mut functions, &mut scopes);
                if let Some(h) = &mut head
                    && h.depth == depth
                    && h.angles == 0
                    && h.bases.is_none()
                {
                    h.bases = Some(Vec::new());
                }
            }
            Token::Punct(b'<') => {
                if let Some(h) = &mut head
                    && h.depth == depth
                {
                    h.angles += 1;
                }
            }
            Token::Punct(b'>') => {
                if let Some(h) = &mut head
                    && h.depth == depth
                {
                    if h.bases.is_some() {
                        h.angles = h.angles.saturating_sub(1);
                    } else if h.angles == 0 {
                        // `template <class T>`: a template parameter, not a class.
                        head = None;
                    } else {
                        h.angles -= 1;
                    }
                }
            }
            Token::Punct(b'?') => ternaries += 1,
            Token::Punct(c @ (b';' | b'}' | b'=' | b',')) => {
                if c != b',' {
                    while pending.last().is_some_and(|&(_, d, _)| d >= depth) {
                        pending.pop();
                    }
                }
                if c != b'=' && c != b',' {
                    ternaries = 0;
                    namespace = false;
                }
                if let Some(h) = &head
                    && h.depth == depth
                    && (c != b',' || h.bases.is_none() && h.angles == 0)
                {
                    head = None;
                }
            }
            _ => {}
        }
        prev = Some(token);
        prev_end = lexer.i;
    }
    let mut functions: Vec<String> = functions
        .into_iter()
        .filter(|n| !is_keyword(n))
        .map(Cow::into_owned)
        .collect();
    functions.sort_unstable();
    Definitions {
        functions,
        classes,
        scopes: scopes.into_iter().map(str::to_string).collect(),
        module: None,
    }
}

fn take_head<'a>(
    head: Option<Head<'a>>,
    scopes: &mut HashSet<&'a str>,
) -> (Vec<String>, Vec<String>) {
    let head = head.expect("a head is being read");
    scopes.extend(head.names.iter().copied());
    let owned = |v: Vec<&str>| v.into_iter().map(str::to_string).collect();
    (owned(head.names), owned(head.bases.unwrap_or_default()))
}

/// The front-end's name for the operator written at `start` (`operator()`, `operator==`,
/// `operatornew[]`): whitespace removed, template-like `<...>` dropped, the last `::` segment, as
/// the front-end's `path` spells a declarator.
fn operator_name(text: &str, start: usize) -> Option<String> {
    let bytes = text.as_bytes();
    let after = start + "operator".len();
    let mut i = after;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let end = if bytes.get(i) == Some(&b'(') {
        // `operator()`: the first parentheses are the name.
        i + 1
            + bytes[i + 1..]
                .iter()
                .take(MAX_OPERATOR)
                .position(|&b| b == b')')?
            + 1
    } else {
        i + bytes[i..]
            .iter()
            .take(MAX_OPERATOR)
            .position(|&b| b == b'(')?
    };
    let mut name = String::new();
    let mut depth = 0usize;
    for c in text[start..end].chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth > 0 || c.is_whitespace() => {}
            _ => name.push(c),
        }
    }
    Some(name.rsplit("::").next().unwrap_or(&name).to_string())
}

/// `A`, `B` in `A::B::f` or `A<T>::f`, given where `f` starts.
fn qualifiers_before(text: &str, start: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let lowest = start.saturating_sub(MAX_LOOKBACK);
    let mut out = Vec::new();
    let mut i = start;
    loop {
        let mut j = i;
        while j > lowest && bytes[j - 1].is_ascii_whitespace() {
            j -= 1;
        }
        if j < lowest + 2 || &bytes[j - 2..j] != b"::" {
            return out;
        }
        j -= 2;
        while j > lowest && bytes[j - 1].is_ascii_whitespace() {
            j -= 1;
        }
        if j > lowest && bytes[j - 1] == b'>' {
            match template_name(text, j - 1) {
                Some((name, s)) => {
                    out.push(name);
                    i = s;
                }
                None => return out,
            }
        } else {
            // A qualifier that starts before the window is not read (it could start mid-character).
            let Some(s) = bytes[lowest..j]
                .iter()
                .rposition(|&b| !is_ident_byte(b))
                .map(|p| lowest + p + 1)
            else {
                return out;
            };
            if s == j {
                return out;
            }
            out.push(&text[s..j]);
            i = s;
        }
    }
}

/// `f` in `f<int, std::vector<T>>`, given the offset of the last `>`, with where it starts.
fn template_name(text: &str, close: usize) -> Option<(&str, usize)> {
    let bytes = text.as_bytes();
    let lowest = close.saturating_sub(MAX_LOOKBACK);
    let mut depth = 0usize;
    let mut i = close + 1;
    while i > lowest {
        i -= 1;
        match bytes[i] {
            b'>' if i == 0 || bytes[i - 1] != b'-' => depth += 1,
            b'<' => {
                depth -= 1;
                if depth == 0 {
                    let end = bytes[..i]
                        .iter()
                        .rposition(|b| !b.is_ascii_whitespace())
                        .map_or(0, |p| p + 1);
                    let start = bytes[..end]
                        .iter()
                        .rposition(|&b| !is_ident_byte(b))
                        .map_or(0, |p| p + 1);
                    let name = &text[start..end];
                    return (!name.is_empty() && !name.as_bytes()[0].is_ascii_digit())
                        .then_some((name, start));
                }
            }
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

/// The most `<` one C++ statement or declaration may hold. tree-sitter-cpp keeps every reading
/// of an ambiguous `<` (template argument list or less-than) alive until the statement ends: its
/// memory grows by about 5 KB per `<` of one statement (800 MB for 160,000), where real code has
/// a few dozen.
pub const MAX_CPP_ANGLES: usize = 2_048;

/// The longest run of prefix operators (`***p`, `- - x`, `&&&`) without an operand. Each deepens
/// tree-sitter's parse stack, and error recovery walks that stack for every later token: 2,048
/// `*` before a run of garbage took 5 s and 8,192 took minutes. Real code has a handful.
pub const MAX_CPP_PREFIX_RUN: usize = 64;

/// Whether C++ text is within what tree-sitter parses in bounded memory and about linear time
/// (see [`MAX_CPP_ANGLES`] and [`MAX_CPP_PREFIX_RUN`]). Nesting of brackets costs a few hundred
/// bytes a level and needs no bound beyond the file size limit.
pub fn cpp_within_bounds(text: &str) -> Result<(), String> {
    let bytes = text.as_bytes();
    let mut lexer = Lexer::new(text);
    let mut angles = 0usize;
    let mut prefix_run = 0usize;
    let mut previous_end = 0;
    let mut after_operand = false;
    let refuse =
        |what: String, at: usize| Err(format!("{what} (line {}), skipped", line_of(bytes, at)));
    while let Some(token) = lexer.next() {
        let start = match token {
            Token::Ident(start, _) => start,
            Token::Arrow | Token::Scope => lexer.i - 2,
            Token::Punct(_) => lexer.i - 1,
        };
        // The lexer skips literals: something other than blanks before this token was one.
        if !bytes[previous_end..start.max(previous_end)]
            .trim_ascii()
            .is_empty()
        {
            after_operand = true;
        }
        previous_end = lexer.i;
        match token {
            Token::Punct(b';' | b'{' | b'}' | b',') => {
                angles = 0;
                after_operand = false;
            }
            Token::Ident(..) | Token::Punct(b')' | b']') => after_operand = true,
            _ => {}
        }
        if let Token::Punct(b'*' | b'&' | b'-' | b'+' | b'!' | b'~') = token
            && !after_operand
        {
            prefix_run += 1;
            if prefix_run > MAX_CPP_PREFIX_RUN {
                return refuse(
                    format!("more than {MAX_CPP_PREFIX_RUN} prefix operators in a row"),
                    lexer.i,
                );
            }
        } else {
            prefix_run = 0;
        }
        match token {
            // `<<` and `<=` are operators of their own, never a template's bracket.
            Token::Punct(b'<')
                if !matches!(bytes.get(lexer.i), Some(b'<' | b'='))
                    && bytes.get(lexer.i.wrapping_sub(2)) != Some(&b'<') =>
            {
                angles += 1;
                if angles > MAX_CPP_ANGLES {
                    return refuse(
                        format!("more than {MAX_CPP_ANGLES} `<` in one statement"),
                        lexer.i,
                    );
                }
            }
            Token::Ident(..) | Token::Punct(b')' | b']') => {}
            // After an operator or opener, an operand is expected again.
            _ => after_operand = false,
        }
    }
    Ok(())
}

/// The pre-pass's rewritten macros (`PYBIND11_NAMESPACE_BEGIN(x)` becomes `namespace x {`): where
/// one is used, its arguments and the identifiers of every expansion may name a scope.
#[derive(Default)]
pub struct Rewrites {
    keys: HashSet<String>,
    produced: Vec<String>,
}

impl Rewrites {
    pub fn new(knowledge: &Knowledge) -> Self {
        let keys = knowledge.prepass_rewrite.keys().cloned().collect();
        let mut produced: Vec<String> = knowledge
            .prepass_rewrite
            .values()
            .flat_map(|template| {
                template
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii()))
                    .filter(|w| !w.is_empty())
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        produced.sort_unstable();
        produced.dedup();
        Rewrites { keys, produced }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::scan::tests::{assert_scopes, heads};

    fn scan(text: &str) -> Definitions {
        scan_cpp(text, &Rewrites::new(&Knowledge::builtin()))
    }

    #[test]
    fn finds_function_and_class_definitions_not_calls() {
        let text = r#"
            namespace ns {
            struct Foo : public Bar<int, 2>, private Baz { void method() const override { helper(1); } };
            static int free_fn(int a, int b = g(2)) noexcept(true) { return call(a) ? x(b) : y(b); }
            Foo::Foo(int a) : base_(a), other_{a} { }
            auto trailing(int x) -> decltype(x) { return x; }
            template <> void spec<int>(int) {}
            Foo::~Foo() {}
            bool operator==(const Foo&, const Foo&) { return true; }
            void declared_only(int);
            int value = compute(3);
            template <class T> void tmpl(T t) { if (check(t)) { run(t); } }
            PYBIND11_MODULE(m, mod) { mod.def("f", &free_fn); }
            void with_try() try { risky(); } catch (...) {}
            template <class T> struct Spec<T*> : Base2 {};
            }
        "#;
        let d = scan(text);
        for name in [
            "Foo",
            "method",
            "free_fn",
            "trailing",
            "spec",
            "operator==",
            "tmpl",
            "PYBIND11_MODULE",
            "with_try",
        ] {
            assert!(
                d.functions.contains(&name.to_string()),
                "{name} missing from {:?}",
                d.functions
            );
        }
        for name in [
            "helper",
            "g",
            "call",
            "x",
            "y",
            "declared_only",
            "compute",
            "check",
            "run",
            "risky",
            "T",
            "Bar",
            "if",
            "catch",
        ] {
            assert!(
                !d.functions.contains(&name.to_string()),
                "{name} wrongly in {:?}",
                d.functions
            );
        }
        let heads = heads(&d);
        assert!(
            heads.contains(&("Foo".into(), "public Bar private Baz".into())),
            "{heads:?}"
        );
        assert!(
            heads.contains(&("Spec".into(), "Base2".into())),
            "{heads:?}"
        );
        assert!(!heads.iter().any(|(n, _)| n == "T"), "{heads:?}");
        assert_scopes(&d, &["ns", "Foo", "Spec"]);
    }

    #[test]
    fn ignores_comments_strings_and_directives() {
        let text = "// void a() {}\n/* void b() {} */\nconst char* s = \"void c() {}\";\n\
                    #define D(x) void d() {}\nauto r = R\"x(void e() {})x\";\nvoid f() {}\n";
        assert_eq!(scan(text).functions, vec!["f".to_string()]);
    }

    #[test]
    fn operators_are_spelled_as_the_front_end_does() {
        let d =
            scan("struct A { int operator()(int) { return 0; } void* operator new (size_t); };");
        assert!(
            d.functions.contains(&"operator()".to_string()),
            "{:?}",
            d.functions
        );
        assert!(
            d.functions.contains(&"operatornew".to_string()),
            "{:?}",
            d.functions
        );
    }

    #[test]
    fn qualifiers_and_rewritten_namespaces_are_scopes() {
        let d = scan("void a::B<int>::f() {}\nPYBIND11_NAMESPACE_BEGIN(detail)\nvoid g() {}\n");
        assert_scopes(&d, &["a", "B", "detail", "pybind11"]);
    }

    #[test]
    fn keywords_are_sorted_for_binary_search() {
        assert!(KEYWORDS.windows(2).all(|w| w[0] < w[1]));
    }
}

//! A pre-pass over C/C++ text that removes what tree-sitter-cpp cannot parse, keeping every byte
//! offset (and so every line and column) where it was.
//!
//! Real binding code is full of framework macros (`PYBIND11_NAMESPACE_BEGIN(detail)` with no `;`,
//! attribute-like `PYBIND11_NOINLINE`) and of `#if` arms with unbalanced braces. The pre-pass
//! - keeps one arm of each conditional block (the first, or the `#else` side of `#if 0`) and blanks
//!   the directives and the other arms;
//! - blanks the macros named in the knowledge files, with their parenthesised arguments;
//! - rewrites macros that have a parseable meaning (`PYBIND11_NAMESPACE_BEGIN(x)` -> `namespace x {`);
//! - blanks an upper-case macro (with or without arguments) standing alone on its lines without `;`
//!   or a following `{` (a declaration-like macro the grammar cannot know).
//!
//! Blanking replaces bytes with spaces and keeps newlines.

use crate::knowledge::Knowledge;

pub fn neutralise(text: &str, knowledge: &Knowledge) -> String {
    let mut out = text.as_bytes().to_vec();
    select_conditional_arms(text, &mut out);
    // The macro pass reads the already-selected text so that a skipped arm's macros are ignored.
    let selected = String::from_utf8(out.clone()).expect("blanking keeps UTF-8 valid");
    rewrite_macros(&selected, knowledge, &mut out);
    String::from_utf8(out).expect("the pre-pass writes ASCII over whole characters")
}

fn blank(out: &mut [u8], range: std::ops::Range<usize>) {
    for b in &mut out[range] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

/// Byte ranges of logical lines, following `\` continuations.
fn logical_lines(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\n' {
            let continued = i > 0 && bytes[i - 1] == b'\\'
                || i > 1 && bytes[i - 1] == b'\r' && bytes[i - 2] == b'\\';
            if !continued {
                lines.push(start..i + 1);
                start = i + 1;
            }
        }
        i += 1;
    }
    if start < bytes.len() {
        lines.push(start..bytes.len());
    }
    lines
}

/// The directive on a line (`if`, `ifdef`, `elif`, ...) and its argument, if the line is one.
fn directive(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(rest.len());
    Some((&rest[..end], rest[end..].trim()))
}

struct Conditional {
    /// Whether the enclosing text is kept at all.
    parent_active: bool,
    /// Whether an arm of this block has been kept already.
    taken: bool,
    /// Whether the current arm is kept.
    active: bool,
}

fn select_conditional_arms(text: &str, out: &mut [u8]) {
    let mut stack: Vec<Conditional> = Vec::new();
    for line in logical_lines(text) {
        let active = stack.last().is_none_or(|c| c.active);
        match directive(&text[line.clone()]) {
            Some(("if" | "ifdef" | "ifndef", arg)) => {
                let keep = active && !is_false_condition(arg);
                stack.push(Conditional {
                    parent_active: active,
                    taken: keep,
                    active: keep,
                });
                blank(out, line);
            }
            Some(("elif" | "elifdef" | "elifndef", arg)) => {
                if let Some(c) = stack.last_mut() {
                    c.active = c.parent_active && !c.taken && !is_false_condition(arg);
                    c.taken |= c.active;
                }
                blank(out, line);
            }
            Some(("else", _)) => {
                if let Some(c) = stack.last_mut() {
                    c.active = c.parent_active && !c.taken;
                    c.taken = true;
                }
                blank(out, line);
            }
            Some(("endif", _)) => {
                stack.pop();
                blank(out, line);
            }
            _ if !active => blank(out, line),
            _ => {}
        }
    }
}

fn is_false_condition(arg: &str) -> bool {
    let arg = arg
        .split("//")
        .next()
        .unwrap_or("")
        .split("/*")
        .next()
        .unwrap_or("")
        .trim();
    matches!(arg, "0" | "false" | "(0)")
}

/// Spans of identifiers outside comments, strings and preprocessor lines.
fn identifiers(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut ids = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b'#' if line_start => {
                // Skip the whole directive, following continuations.
                while i < bytes.len() && !(bytes[i] == b'\n' && bytes[i - 1] != b'\\') {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'/' && bytes[i - 1] == b'*') {
                    i += 1;
                }
                i += 1;
            }
            b'"' | b'\'' => i = skip_quoted(bytes, i),
            _ if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                // A raw string `R"delim( ... )delim"` is skipped whole.
                if bytes.get(i) == Some(&b'"') && text[start..i].ends_with('R') {
                    i = skip_raw_string(bytes, i);
                } else {
                    ids.push(start..i);
                }
            }
            _ => i += 1,
        }
        if !b.is_ascii_whitespace() {
            line_start = false;
        }
    }
    ids
}

fn skip_quoted(bytes: &[u8], open: usize) -> usize {
    let quote = bytes[open];
    let mut i = open + 1;
    while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(bytes.len())
}

fn skip_raw_string(bytes: &[u8], quote: usize) -> usize {
    let Some(paren) = bytes[quote..].iter().position(|&b| b == b'(') else {
        return quote + 1;
    };
    let delim = &bytes[quote + 1..quote + paren];
    let mut i = quote + paren + 1;
    while i < bytes.len() {
        if bytes[i] == b')'
            && bytes[i + 1..].starts_with(delim)
            && bytes.get(i + 1 + delim.len()) == Some(&b'"')
        {
            return i + delim.len() + 2;
        }
        i += 1;
    }
    bytes.len()
}

/// The end (exclusive) of a parenthesised group starting at `open`, if balanced.
fn balanced_parens(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' | b'\'' => {
                i = skip_quoted(bytes, i);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn skip_spaces(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn rewrite_macros(text: &str, knowledge: &Knowledge, out: &mut [u8]) {
    let bytes = text.as_bytes();
    // The end of the last macro call rewritten: identifiers inside its arguments are done.
    let mut done_until = 0;
    for id in identifiers(text) {
        if id.start < done_until {
            continue;
        }
        let name = &text[id.clone()];
        let after = skip_spaces(bytes, id.end);
        let args_end = (bytes.get(after) == Some(&b'('))
            .then(|| balanced_parens(bytes, after))
            .flatten();
        let call_end = args_end.unwrap_or(id.end);
        if knowledge.prepass_blank.contains(name) {
            blank(out, id.start..call_end);
        } else if let Some(template) = knowledge.prepass_rewrite.get(name) {
            let first_arg = args_end
                .map(|end| {
                    text[after + 1..end - 1]
                        .split(',')
                        .next()
                        .unwrap_or("")
                        .trim()
                })
                .unwrap_or("");
            // `PYBIND11_NAMESPACE_BEGIN(PYBIND11_NAMESPACE)`: the argument may be a macro too.
            let first_arg = match knowledge.prepass_rewrite.get(first_arg) {
                Some(inner) if !inner.contains('$') => inner.as_str(),
                _ => first_arg,
            };
            let replacement = template.replace("$1", first_arg);
            if replacement.len() <= call_end - id.start && !replacement.contains('\n') {
                blank(out, id.start..call_end);
                out[id.start..id.start + replacement.len()].copy_from_slice(replacement.as_bytes());
                done_until = call_end;
            }
        } else if is_macro_name(name) && stands_alone(bytes, id.start, call_end) {
            blank(out, id.start..call_end);
        }
    }
}

/// `PYBIND11_WARNING_DISABLE(...)`: upper case with an underscore, as macros are spelled.
fn is_macro_name(name: &str) -> bool {
    name.contains('_')
        && name.len() > 3
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Whether `start..end` is the only thing on its lines, and what follows is not `;`, `{`, or an
/// operator continuing an expression.
fn stands_alone(bytes: &[u8], start: usize, end: usize) -> bool {
    let line_start = bytes[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    if bytes[line_start..start]
        .iter()
        .any(|b| !b.is_ascii_whitespace())
    {
        return false;
    }
    let next = skip_spaces(bytes, end);
    let rest_of_line = bytes[end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| end + p);
    let only_comment_follows = bytes[end..rest_of_line]
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .is_none_or(|p| bytes[end + p..].starts_with(b"//"));
    only_comment_follows
        && !matches!(
            bytes.get(next),
            Some(b';' | b'{' | b'.' | b',' | b')' | b'=' | b':')
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> String {
        let out = neutralise(text, &Knowledge::builtin());
        assert_eq!(out.len(), text.len());
        assert_eq!(
            out.match_indices('\n').map(|(i, _)| i).collect::<Vec<_>>(),
            text.match_indices('\n').map(|(i, _)| i).collect::<Vec<_>>()
        );
        out
    }

    #[test]
    fn keeps_the_first_arm_and_blanks_the_others() {
        let out = run("#ifdef A\nint a() {\n#else\nint b() {\n#endif\n return 0; }\n");
        assert_eq!(
            out,
            "        \nint a() {\n     \n         \n      \n return 0; }\n"
        );
    }

    #[test]
    fn if_zero_takes_the_else_arm() {
        let out = run("#if 0\nbad(\n#elif 1\ngood();\n#else\nworse();\n#endif\n");
        assert!(out.contains("good();") && !out.contains("bad(") && !out.contains("worse"));
    }

    #[test]
    fn nested_conditionals_in_a_skipped_arm_stay_skipped() {
        let out = run("#if 0\n#ifdef X\nx();\n#else\ny();\n#endif\n#endif\nz();\n");
        assert!(!out.contains("x()") && !out.contains("y()") && out.contains("z();"));
    }

    #[test]
    fn rewrites_namespace_macros_in_place() {
        let out =
            run("PYBIND11_NAMESPACE_BEGIN(detail)\nint f();\nPYBIND11_NAMESPACE_END(detail)\n");
        assert!(out.starts_with("namespace detail {"));
        assert!(out.contains("\n}"));
    }

    #[test]
    fn rewrites_macros_named_in_arguments_once() {
        let out = run("PYBIND11_NAMESPACE_BEGIN(PYBIND11_NAMESPACE)\n");
        assert_eq!(out.trim_end(), "namespace pybind11 {");
    }

    #[test]
    fn blanks_known_and_standalone_macros_but_not_statements() {
        let out = run(
            "PYBIND11_NOINLINE void f();\nMY_DECLARE(x, y)\nNVTE_CHECK(a, b);\nFOO_BAR(x) {\nMY_FIELDS\nint a = MAX_N\n;\n",
        );
        assert!(!out.contains("MY_FIELDS") && out.contains("MAX_N"));
        assert!(out.starts_with("                  void f();"));
        assert!(!out.contains("MY_DECLARE"));
        assert!(out.contains("NVTE_CHECK(a, b);"));
        assert!(out.contains("FOO_BAR(x) {"));
    }

    #[test]
    fn ignores_macros_in_comments_and_strings() {
        let text = "// PYBIND11_NOINLINE\nconst char* s = \"PYBIND11_NOINLINE\";\n";
        assert_eq!(run(text), text);
    }

    #[test]
    fn multibyte_text_survives_blanking() {
        let out = run("#if 0\n// héllo ✓\n#endif\nint x;\n");
        assert!(out.ends_with("int x;\n"));
    }
}

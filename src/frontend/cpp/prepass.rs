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
//!
//! Both passes read the text through one [`Lexer`], as the preprocessor does: comments, string,
//! character and raw string literals are skipped whole, `\`-newline splices lines, and a directive
//! is a line whose first token is `#` (comments before it count as spaces, and a block comment
//! that spans lines continues the line it started on). Every pass is linear in the text: the file
//! may be generated or hostile (one 10 MB line, 200,000 nested calls).

use crate::knowledge::Knowledge;

pub fn neutralise(text: &str, knowledge: &Knowledge) -> String {
    let mut out = text.as_bytes().to_vec();
    select_conditional_arms(text, &mut out);
    // The macro pass reads the already-selected text so that a skipped arm's macros are ignored.
    let selected = String::from_utf8(out.clone()).expect("blanking keeps UTF-8 valid");
    rewrite_macros(&selected, knowledge, &mut out);
    blank_class_attribute_macros(&selected, &mut out);
    String::from_utf8(out).expect("the pre-pass writes ASCII over whole characters")
}

/// `class ARROW_EXPORT NumPyBuffer : public Buffer {`: a macro between the class key and the name
/// of a class being defined (a visibility or export attribute) is blanked, so that the class is
/// parsed with its own name and bases.
fn blank_class_attribute_macros(text: &str, out: &mut [u8]) {
    let mut tokens = Lexer::new(text).filter(|t| t.kind == Kind::Identifier);
    let Some(mut before) = tokens.next() else {
        return;
    };
    let Some(mut current) = tokens.next() else {
        return;
    };
    for next in tokens {
        let key = &text[before.start..before.end];
        let name = &text[current.start..current.end];
        // Adjacent tokens only: nothing but whitespace between the three.
        let adjacent = |a: Token, b: Token| text[a.end..b.start].trim().is_empty();
        // A definition's head: `struct C_TYPE variable;` in C is left alone.
        let rest = text[next.end..].trim_start();
        let head = rest.starts_with('{') || rest.starts_with(':') && !rest.starts_with("::");
        if matches!(key, "class" | "struct" | "union")
            && super::is_macro_name(name)
            && head
            && adjacent(before, current)
            && adjacent(current, next)
        {
            blank(out, current.start..current.end);
        }
        (before, current) = (current, next);
    }
}

fn blank(out: &mut [u8], range: std::ops::Range<usize>) {
    for b in &mut out[range] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A newline outside comments and literals, not spliced by `\`: the end of a line as the
    /// preprocessor sees it.
    Newline,
    /// `#` as the first token of a line: a directive, up to the next `Newline`.
    Directive,
    Identifier,
    /// A string, character, raw string or number literal.
    Literal,
    Punct(u8),
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

/// The preprocessing tokens of C/C++ text, with comments and whitespace left out. Every token is
/// read once and nothing is searched beyond it, so a pass over the tokens is linear in the text.
struct Lexer<'a> {
    bytes: &'a [u8],
    i: usize,
    /// Only whitespace and comments since the last `Newline`: a `#` here starts a directive.
    line_start: bool,
    /// Where a block comment without `*/` opens: it runs to the end of the text.
    unterminated_comment: Option<usize>,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer {
            bytes: text.as_bytes(),
            i: 0,
            line_start: true,
            unterminated_comment: None,
        }
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let bytes = self.bytes;
        loop {
            let start = self.i;
            let b = *bytes.get(start)?;
            match b {
                b'\n' => {
                    self.i += 1;
                    self.line_start = true;
                    return Some(Token {
                        kind: Kind::Newline,
                        start,
                        end: self.i,
                    });
                }
                b'\\' if splice_end(bytes, start).is_some() => {
                    self.i = splice_end(bytes, start).unwrap_or(start + 1);
                    continue;
                }
                b'/' if bytes.get(start + 1) == Some(&b'/') => {
                    self.i = line_comment_end(bytes, start);
                    continue;
                }
                b'/' if bytes.get(start + 1) == Some(&b'*') => {
                    self.i = block_comment_end(bytes, start).unwrap_or_else(|| {
                        self.unterminated_comment = Some(start);
                        bytes.len()
                    });
                    continue;
                }
                _ if b.is_ascii_whitespace() => {
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            let at_line_start = std::mem::replace(&mut self.line_start, false);
            let kind = match b {
                b'#' if at_line_start => {
                    self.i += 1;
                    Kind::Directive
                }
                b'"' | b'\'' => {
                    self.i = skip_quoted(bytes, start);
                    Kind::Literal
                }
                b'0'..=b'9' => {
                    self.i = number_end(bytes, start);
                    Kind::Literal
                }
                b'.' if bytes.get(start + 1).is_some_and(u8::is_ascii_digit) => {
                    self.i = number_end(bytes, start);
                    Kind::Literal
                }
                _ if is_identifier_byte(b) => {
                    let mut i = start;
                    while i < bytes.len() && is_identifier_byte(bytes[i]) {
                        i += 1;
                    }
                    self.i = i;
                    if bytes.get(i) == Some(&b'"')
                        && matches!(&bytes[start..i], b"R" | b"LR" | b"uR" | b"UR" | b"u8R")
                    {
                        self.i = skip_raw_string(bytes, i);
                        Kind::Literal
                    } else {
                        Kind::Identifier
                    }
                }
                _ => {
                    // A character outside ASCII is one token, so that tokens are `str` slices.
                    self.i += 1;
                    while self.i < bytes.len() && bytes[self.i] & 0xc0 == 0x80 {
                        self.i += 1;
                    }
                    Kind::Punct(b)
                }
            };
            return Some(Token {
                kind,
                start,
                end: self.i,
            });
        }
    }
}

fn is_identifier_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The end of a `\`-newline (or `\`-CRLF) splice at `i`, if there is one.
fn splice_end(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i + 1..) {
        Some([b'\n', ..]) => Some(i + 2),
        Some([b'\r', b'\n', ..]) => Some(i + 3),
        _ => None,
    }
}

/// The newline that ends a `//` comment (not included), or the end of the text: a spliced newline
/// continues the comment.
fn line_comment_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => return i,
            b'\\' => i = splice_end(bytes, i).unwrap_or(i + 1),
            _ => i += 1,
        }
    }
    i
}

/// Just after the `*/` that closes the comment opened at `open`, if it is closed.
fn block_comment_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 2;
    while i + 1 < bytes.len() {
        if bytes[i] == b'*' && bytes[i + 1] == b'/' {
            return Some(i + 2);
        }
        i += 1;
    }
    None
}

/// Just after the quote closing the literal opened at `open`; an unterminated literal ends before
/// the newline, as the preprocessor reads it.
fn skip_quoted(bytes: &[u8], open: usize) -> usize {
    let quote = bytes[open];
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => return i,
            b'\\' => i = splice_end(bytes, i).unwrap_or(i + 2),
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The end of a preprocessing number (`1'000'000`, `0x1p-3`, `1.5e+10f`).
fn number_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        let b = bytes[i];
        if is_identifier_byte(b) || b == b'.' {
            i += 1;
        } else if b == b'\'' && bytes.get(i + 1).is_some_and(|&n| is_identifier_byte(n)) {
            i += 2;
        } else if matches!(b, b'+' | b'-') && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P') {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// A raw string delimiter has at most 16 characters.
const MAX_RAW_DELIMITER: usize = 16;

/// Just after the raw string `R"delim( ... )delim"` whose `"` is at `quote`. Without a valid
/// delimiter it is read as an ordinary string. The delimiter is looked for in its 16 characters
/// only, not in the rest of the text (each `R""` of a file once searched to the end of the text).
fn skip_raw_string(bytes: &[u8], quote: usize) -> usize {
    let paren = bytes[quote + 1..]
        .iter()
        .take(MAX_RAW_DELIMITER + 1)
        .position(|&b| matches!(b, b'(' | b')' | b'\\') || b.is_ascii_whitespace())
        .filter(|&p| bytes[quote + 1 + p] == b'(');
    let Some(paren) = paren else {
        return skip_quoted(bytes, quote);
    };
    let delim = &bytes[quote + 1..quote + 1 + paren];
    let mut i = quote + paren + 2;
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

struct Conditional {
    /// Whether the enclosing text is kept at all.
    parent_active: bool,
    /// Whether an arm of this block has been kept already.
    taken: bool,
    /// Whether the current arm is kept.
    active: bool,
}

/// One line as the preprocessor sees it: from its first byte to its newline included.
struct Line {
    range: std::ops::Range<usize>,
    /// For a directive, its name (`if`, `ifdef`, `elif`, ...; empty for `#` alone).
    directive: Option<std::ops::Range<usize>>,
    /// A conditional's argument, with each comment and run of whitespace read as one space.
    argument: String,
}

fn select_conditional_arms(text: &str, out: &mut [u8]) {
    let mut stack: Vec<Conditional> = Vec::new();
    let mut line = Line {
        range: 0..0,
        directive: None,
        argument: String::new(),
    };
    // Just after a directive's `#`: the next token on the line is its name.
    let mut expects_name = false;
    // Whether the argument of the current directive is needed (only a conditional's is read).
    let mut wants_argument = false;
    let mut last_end = 0;
    let mut tokens = Lexer::new(text);
    loop {
        let token = tokens.next();
        match token {
            Some(Token {
                kind: Kind::Newline,
                ..
            })
            | None => {
                let end = token.map_or(text.len(), |t| t.end);
                line.range.end = end;
                if !line.range.is_empty() {
                    select_line(text, &line, &mut stack, out);
                }
                if token.is_none() {
                    break;
                }
                line.range = end..end;
                line.directive = None;
                line.argument.clear();
                expects_name = false;
                wants_argument = false;
            }
            Some(Token {
                kind: Kind::Directive,
                end,
                ..
            }) => {
                line.directive = Some(end..end);
                expects_name = true;
            }
            Some(token) if expects_name => {
                expects_name = false;
                if token.kind == Kind::Identifier {
                    let name = token.start..token.end;
                    wants_argument = matches!(
                        &text[name.clone()],
                        "if" | "ifdef" | "ifndef" | "elif" | "elifdef" | "elifndef"
                    );
                    last_end = name.end;
                    line.directive = Some(name);
                }
            }
            Some(token) if wants_argument => {
                if token.start > last_end && !line.argument.is_empty() {
                    line.argument.push(' ');
                }
                line.argument.push_str(&text[token.start..token.end]);
                last_end = token.end;
            }
            Some(_) => {}
        }
    }
    // A block comment that is never closed runs to the end of the file, as the preprocessor reads
    // it. It is blanked: tree-sitter, which cannot end it, tries again from every `/*` inside it
    // (quadratic: 50 KB of `x /* ` took 2.4 s).
    if let Some(open) = tokens.unterminated_comment {
        blank(out, open..text.len());
    }
}

fn select_line(text: &str, line: &Line, stack: &mut Vec<Conditional>, out: &mut [u8]) {
    let active = stack.last().is_none_or(|c| c.active);
    let name = line.directive.clone().map(|name| &text[name]);
    let arg = line.argument.as_str();
    match name {
        Some("if" | "ifdef" | "ifndef") => {
            let keep = active && !is_false_condition(arg);
            stack.push(Conditional {
                parent_active: active,
                taken: keep,
                active: keep,
            });
        }
        Some("elif" | "elifdef" | "elifndef") => {
            if let Some(c) = stack.last_mut() {
                c.active = c.parent_active && !c.taken && !is_false_condition(arg);
                c.taken |= c.active;
            }
        }
        Some("else") => {
            if let Some(c) = stack.last_mut() {
                c.active = c.parent_active && !c.taken;
                c.taken = true;
            }
        }
        Some("endif") => {
            stack.pop();
        }
        _ if !active => {}
        _ => return,
    }
    blank(out, line.range.clone());
}

/// Whether a conditional's argument (comments already removed) is literally false.
fn is_false_condition(arg: &str) -> bool {
    matches!(arg.trim(), "0" | "false" | "(0)")
}

/// A macro-like identifier (outside comments, literals and directives) and what follows it.
struct Candidate {
    name: std::ops::Range<usize>,
    /// The first byte after the name that is not whitespace.
    after: usize,
    /// The end (exclusive) of the parenthesised arguments opening at `after`, if balanced.
    args_end: Option<usize>,
}

/// The identifiers that [`rewrite_macros`] may act on, each with the extent of its arguments.
///
/// The arguments' closing parenthesis is found by one stack of open parentheses over the whole
/// text, not by a scan from each `(` (with 200,000 nested calls `h(h(h(...)))` that scan made
/// the pass quadratic). Only the depth of a parenthesis that no candidate opens is kept.
fn candidates(text: &str, is_candidate: impl Fn(&str) -> bool) -> Vec<Candidate> {
    let bytes = text.as_bytes();
    let mut found: Vec<Candidate> = Vec::new();
    // The `(` that the last candidate's arguments would open at, if only whitespace lies between.
    let mut pending: Option<usize> = None;
    let mut depth = 0usize;
    // Candidates' open parentheses, innermost last, with their depth.
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut tokens = Lexer::new(text);
    while let Some(token) = tokens.next() {
        match token.kind {
            Kind::Newline => continue,
            Kind::Directive => {
                // Directives (`#define`, `#include`, ...) are skipped whole.
                pending = None;
                for t in tokens.by_ref() {
                    if t.kind == Kind::Newline {
                        break;
                    }
                }
                continue;
            }
            Kind::Identifier if is_candidate(&text[token.start..token.end]) => {
                let after = skip_spaces(bytes, token.end);
                pending = (bytes.get(after) == Some(&b'(')).then_some(found.len());
                found.push(Candidate {
                    name: token.start..token.end,
                    after,
                    args_end: None,
                });
                continue;
            }
            Kind::Punct(b'(') => {
                depth += 1;
                if let Some(index) = pending.filter(|&i| found[i].after == token.start) {
                    open.push((depth, index));
                }
            }
            Kind::Punct(b')') if depth > 0 => {
                if let Some(&(d, index)) = open.last()
                    && d == depth
                {
                    open.pop();
                    found[index].args_end = Some(token.end);
                }
                depth -= 1;
            }
            _ => {}
        }
        pending = None;
    }
    found
}

fn skip_spaces(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The next occurrence of a byte at or after a position, for positions that never decrease: the
/// text is scanned once in all (a search from each position was quadratic in nested macros).
struct NextByte<'a> {
    bytes: &'a [u8],
    byte: u8,
    /// The last answer (or the text's length): no occurrence lies between the last position asked
    /// and it.
    found: Option<usize>,
}

impl<'a> NextByte<'a> {
    fn new(bytes: &'a [u8], byte: u8) -> Self {
        NextByte {
            bytes,
            byte,
            found: None,
        }
    }

    fn at_or_after(&mut self, from: usize) -> usize {
        match self.found {
            Some(found) if from <= found => found,
            _ => {
                let found = self.bytes[from.min(self.bytes.len())..]
                    .iter()
                    .position(|&b| b == self.byte)
                    .map_or(self.bytes.len(), |p| from + p);
                self.found = Some(found);
                found
            }
        }
    }
}

/// Whether a position has only whitespace before it on its line, for positions that never
/// decrease (a search back to the line's start from each was quadratic in a long line).
struct LineStart<'a> {
    bytes: &'a [u8],
    scanned: usize,
    blank_so_far: bool,
}

impl LineStart<'_> {
    fn only_whitespace_before(&mut self, pos: usize) -> bool {
        for &b in &self.bytes[self.scanned..pos] {
            if b == b'\n' {
                self.blank_so_far = true;
            } else if !b.is_ascii_whitespace() {
                self.blank_so_far = false;
            }
        }
        self.scanned = pos;
        self.blank_so_far
    }
}

fn rewrite_macros(text: &str, knowledge: &Knowledge, out: &mut [u8]) {
    let bytes = text.as_bytes();
    let found = candidates(text, |name| {
        knowledge.prepass_blank.contains(name)
            || knowledge.prepass_rewrite.contains_key(name)
            || is_prepass_macro_name(name)
    });
    // Candidates come in text order, so every search below starts where the last one did.
    let mut commas = NextByte::new(bytes, b',');
    let mut newlines = NextByte::new(bytes, b'\n');
    let mut call_newlines = NextByte::new(bytes, b'\n');
    let mut line_start = LineStart {
        bytes,
        scanned: 0,
        blank_so_far: true,
    };
    // The end of the last macro call rewritten: identifiers inside its arguments are done.
    let mut done_until = 0;
    // Everything from the start of a blanked call to here is blank already, but for rewrites
    // (which end before any later call starts): nested calls `B(B(B(...)))` are blanked once.
    let mut blanked_until = 0;
    let mut blank_call = |out: &mut [u8], range: std::ops::Range<usize>| {
        let start = range.start.max(blanked_until);
        if start < range.end {
            blank(out, start..range.end);
            blanked_until = range.end;
        }
    };
    // The comma ending the last first argument, and where that argument's text ends (before the
    // whitespace in front of the comma), shared by nested calls `R(R(R(x , y)))`.
    let mut last_comma = (usize::MAX, 0);
    // The end of the last macro call whose type arguments were replaced: only the outermost call
    // of nested ones is read, so each byte is read once.
    let mut typed_until = 0;
    for candidate in found {
        let id = candidate.name;
        if id.start < done_until {
            continue;
        }
        let name = &text[id.clone()];
        let after = candidate.after;
        let args_end = candidate.args_end;
        let call_end = args_end.unwrap_or(id.end);
        if knowledge.prepass_blank.contains(name) {
            blank_call(out, id.start..call_end);
            typed_until = typed_until.max(call_end);
        } else if let Some(template) = knowledge.prepass_rewrite.get(name) {
            // The first argument, trimmed: `text[after + 1..end - 1].split(',').next().trim()`,
            // found with the shared searches.
            let (first_arg, arg_start) = match args_end {
                Some(end) => {
                    let comma = commas.at_or_after(after + 1);
                    let arg_end = if comma < end - 1 {
                        if last_comma.0 != comma {
                            last_comma = (comma, text[..comma].trim_end().len());
                        }
                        last_comma.1
                    } else {
                        text[..end - 1].trim_end().len()
                    };
                    let raw = &text[after + 1..end - 1];
                    let arg_start = after + 1 + (raw.len() - raw.trim_start().len());
                    if arg_start < arg_end {
                        (&text[arg_start..arg_end], arg_start)
                    } else {
                        ("", arg_start)
                    }
                }
                None => ("", after),
            };
            // `PYBIND11_NAMESPACE_BEGIN(PYBIND11_NAMESPACE)`: the argument may be a macro too.
            let (first_arg, arg_has_newline) = match knowledge.prepass_rewrite.get(first_arg) {
                Some(inner) if !inner.contains('$') => (inner.as_str(), inner.contains('\n')),
                _ => (
                    first_arg,
                    !first_arg.is_empty()
                        && newlines.at_or_after(arg_start) < arg_start + first_arg.len(),
                ),
            };
            let uses = template.matches("$1").count();
            let length = template.len() - 2 * uses + uses * first_arg.len();
            let has_newline = template.contains('\n') || uses > 0 && arg_has_newline;
            // The replacement goes over the call's first line only: the pre-pass moves no newline.
            let fits = length <= call_end.min(call_newlines.at_or_after(id.start)) - id.start;
            if fits && !has_newline {
                let replacement = template.replace("$1", first_arg);
                blank(out, id.start..call_end);
                out[id.start..id.start + replacement.len()].copy_from_slice(replacement.as_bytes());
                done_until = call_end;
            }
        } else if is_prepass_macro_name(name)
            && line_start.only_whitespace_before(id.start)
            && stands_alone(bytes, call_end)
        {
            blank_call(out, id.start..call_end);
            typed_until = typed_until.max(call_end);
        } else if is_prepass_macro_name(name)
            && let Some(end) = args_end
            && id.start >= typed_until
        {
            if !(line_start.only_whitespace_before(id.start)
                && declare_from_macro(text, id.start, after..end, out))
            {
                replace_type_arguments(text, after + 1..end - 1, out);
            }
            typed_until = end;
        }
    }
}

/// `ASSIGN_OR_RETURN(auto v, Make(x));` (absl's, TensorFlow's, XLA's `*_ASSIGN_OR_RETURN`): a
/// statement macro whose first argument declares a variable and whose second gives its value is
/// written over as that declaration, `auto v=         Make(x) ;` (a third argument, an error
/// expression, is blanked). The grammar reads the use as neither a call (a declaration is no
/// argument) nor a declaration (a call with arguments that are not types is no parameter), and
/// its recovery swallowed the rest of the enclosing lambda or function. `call` runs from the
/// `(` to just after the `)`. Returns whether the use was rewritten.
fn declare_from_macro(
    text: &str,
    name_start: usize,
    call: std::ops::Range<usize>,
    out: &mut [u8],
) -> bool {
    let bytes = text.as_bytes();
    if bytes.get(skip_spaces(bytes, call.end)) != Some(&b';') {
        return false;
    }
    let inner = call.start + 1..call.end - 1;
    let mut depth = 0usize;
    // Top-level commas (at most the two that absl's three-argument form has).
    let mut commas: Vec<usize> = Vec::new();
    // The first argument's last two top-level tokens: a declaration ends with a name after a
    // type (`auto v`, `std::unique_ptr<T> p`, `const Shape& s`).
    let (mut before_last, mut last): (Option<Kind>, Option<Kind>) = (None, None);
    for token in Lexer::new(&text[inner.clone()]) {
        let kind = token.kind;
        if kind == Kind::Newline {
            continue;
        }
        if !commas.is_empty() {
            match kind {
                Kind::Punct(b'(' | b'[' | b'{') => depth += 1,
                Kind::Punct(b')' | b']' | b'}') => depth = depth.saturating_sub(1),
                Kind::Punct(b',') if depth == 0 => {
                    commas.push(inner.start + token.start);
                    if commas.len() > 2 {
                        return false;
                    }
                }
                _ => {}
            }
            continue;
        }
        match kind {
            Kind::Punct(b'<') => depth += 1,
            Kind::Punct(b'>') if depth > 0 => depth -= 1,
            Kind::Punct(b',') if depth == 0 => {
                commas.push(inner.start + token.start);
                continue;
            }
            _ if depth > 0 => continue,
            Kind::Identifier | Kind::Punct(b':' | b'*' | b'&') => {}
            _ => return false,
        }
        (before_last, last) = (last, Some(kind));
    }
    let declares = last == Some(Kind::Identifier)
        && matches!(
            before_last,
            Some(Kind::Identifier | Kind::Punct(b'>' | b'*' | b'&'))
        );
    let Some(&assign) = commas.first() else {
        return false;
    };
    if !declares
        || depth != 0
        || text[assign + 1..commas.get(1).copied().unwrap_or(inner.end)]
            .trim()
            .is_empty()
    {
        return false;
    }
    blank(out, name_start..call.start + 1);
    out[assign] = b'=';
    blank(out, commas.get(1).copied().unwrap_or(inner.end)..call.end);
    true
}

/// The built-in type keywords a macro may take as an argument (`PYBIND11_OVERRIDE_PURE(bool, ...)`).
const TYPE_KEYWORDS: &[&str] = &[
    "void", "bool", "char", "wchar_t", "char8_t", "char16_t", "char32_t", "short", "int", "long",
    "signed", "unsigned", "float", "double",
];

/// Writes `0` over each argument of a macro call that is a built-in type (`bool`, `unsigned int`,
/// `const char *`). The grammar cannot read a type keyword as an expression, so it takes the call
/// for a function declarator and, recovering, swallows the functions that follow into a body
/// (`PYBIND11_OVERLOAD_PURE_NAME(bool, State, "is_terminal", IsTerminal);` made the next
/// function's lambda one of the overriding method's). A literal keeps the call a call.
fn replace_type_arguments(text: &str, args: std::ops::Range<usize>, out: &mut [u8]) {
    let mut depth = 0usize;
    // The current top-level argument: where it starts, and whether it is a type so far (some
    // keyword, and nothing but keywords, qualifiers, `*` and `&`).
    let mut start = args.start;
    let mut keyword = false;
    let mut only_type = true;
    let finish = |out: &mut [u8], range: std::ops::Range<usize>, keyword, only_type| {
        if keyword && only_type {
            let first = skip_spaces(text.as_bytes(), range.start);
            blank(out, first..range.end);
            out[first] = b'0';
        }
    };
    for token in Lexer::new(&text[args.clone()]) {
        let (at, end) = (args.start + token.start, args.start + token.end);
        match token.kind {
            Kind::Punct(b'(' | b'[' | b'{') => depth += 1,
            Kind::Punct(b')' | b']' | b'}') => depth = depth.saturating_sub(1),
            Kind::Punct(b',') if depth == 0 => {
                finish(out, start..at, keyword, only_type);
                (start, keyword, only_type) = (end, false, true);
                continue;
            }
            _ => {}
        }
        if depth > 0 {
            only_type = false;
            continue;
        }
        match token.kind {
            Kind::Identifier if TYPE_KEYWORDS.contains(&&text[at..end]) => keyword = true,
            Kind::Identifier if matches!(&text[at..end], "const" | "volatile") => {}
            Kind::Punct(b'*' | b'&') | Kind::Newline => {}
            _ => only_type = false,
        }
    }
    finish(out, start..args.end, keyword, only_type);
}

/// `PYBIND11_WARNING_DISABLE(...)`: spelled as macros are (`super::is_macro_name`), and
/// longer than a short constant such as `A_B`, which the pre-pass leaves alone.
fn is_prepass_macro_name(name: &str) -> bool {
    name.len() > 3 && super::is_macro_name(name)
}

/// For a macro call that starts its line and ends at `end`: whether only a `//` comment or nothing
/// follows it on its line, and what follows is not `;`, `{`, or an operator continuing an
/// expression.
fn stands_alone(bytes: &[u8], end: usize) -> bool {
    // Only whitespace up to the line's end, or a `//` comment: looks no further than the first
    // byte that is not a space (a search for the line's end from each call was quadratic).
    let mut first = end;
    while first < bytes.len() && bytes[first] != b'\n' && bytes[first].is_ascii_whitespace() {
        first += 1;
    }
    let only_comment_follows =
        first == bytes.len() || bytes[first] == b'\n' || bytes[first..].starts_with(b"//");
    let next = skip_spaces(bytes, first);
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
    fn built_in_type_arguments_of_macro_calls_become_literals() {
        let out = run(
            "PYBIND11_OVERRIDE_PURE(bool, Base, f, x);\nMY_M(unsigned int,\n const char *, std::pair<int, int>, g(int), int x);\nnot_macro(bool, y);\n",
        );
        assert_eq!(
            out,
            "PYBIND11_OVERRIDE_PURE(0   , Base, f, x);\nMY_M(0           ,\n 0           , std::pair<int, int>, g(int), int x);\nnot_macro(bool, y);\n"
        );
        // Only the outermost of nested calls is read; a blanked call is left blank.
        let out = run("OUT_M(IN_M(bool), int);\nPYBIND11_NOINLINE(int)\n");
        assert_eq!(out, "OUT_M(IN_M(bool), 0  );\n                      \n");
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
        let out = run("#if 0 é\u{a0}✓\nint y;\n#endif\nint x;\n");
        assert!(out.ends_with("int x;\n") && out.contains("int y;"));
    }

    #[test]
    fn a_directive_in_a_comment_does_not_count() {
        let out = run("/*\n#if 0\n*/\nint kept;\n");
        assert!(out.contains("int kept;"));
        let out = run("#if 0\n/* #endif */\nint hidden;\n#endif\nint kept;\n");
        assert!(!out.contains("hidden") && out.contains("int kept;"));
    }

    #[test]
    fn a_comment_spanning_lines_continues_its_directive() {
        // The preprocessor removes the comment first: `#endif` inside it is part of the `#if`.
        let text = "#if 0 /*\n#endif */\nint hidden;\n#endif\nint kept;\n";
        let out = run(text);
        assert!(
            !out.contains("hidden") && out.contains("int kept;"),
            "{out}"
        );
        assert!(!out.contains("*/"), "the whole directive is blanked: {out}");
        // `#else` inside the comment does not switch arms.
        let out = run("#ifndef G /*\n#else */\nint kept;\n#else\nint no;\n#endif\n");
        assert!(out.contains("int kept;") && !out.contains("no;"), "{out}");
        // A comment before `#` leaves it a directive.
        let out = run("/* c */ #if 0\nint hidden;\n#endif\nint kept;\n");
        assert!(
            !out.contains("hidden") && out.contains("int kept;"),
            "{out}"
        );
    }

    #[test]
    fn a_condition_is_read_without_its_comments() {
        // `0 #endif` is not a false condition: the first arm is kept (no `#endif` closes it).
        let out = run("#if 0 /* #endif */ #endif\nint kept;\n");
        assert!(out.contains("int kept;"), "{out}");
        let out = run("#if 0 // a comment \\\n#endif\nint hidden;\n#endif\nint kept;\n");
        assert!(
            !out.contains("hidden") && out.contains("int kept;"),
            "{out}"
        );
        let out = run("#if /* x */ (0) /* y */\nint hidden;\n#endif\n");
        assert!(!out.contains("hidden"), "{out}");
    }

    #[test]
    fn a_directive_in_a_raw_string_does_not_count() {
        let out = run("const char* s = R\"x(\n#if 0\n)x\";\nint kept;\n");
        assert!(out.contains("int kept;") && out.contains("#if 0"), "{out}");
        // Not raw strings: an identifier ending in R, a delimiter that is too long.
        let out = run("xR\"\"\n#if 0\nint hidden;\n#endif\n");
        assert!(!out.contains("hidden"), "{out}");
        let out = run("R\"01234567890123456(\n#if 0\nint hidden;\n#endif\n");
        assert!(!out.contains("hidden"), "{out}");
    }

    #[test]
    fn nested_macro_calls_are_blanked_and_rewritten_once() {
        let out = run("PYBIND11_NOINLINE(PYBIND11_NOINLINE(PYBIND11_NOINLINE(x)))\nint f();\n");
        assert!(out.trim_start().starts_with("int f();"), "{out}");
        let out = run("MY_DECL(\nMY_DECL(\nMY_DECL(x)\n)\n)\nint f();\n");
        assert!(out.trim_start().starts_with("int f();"), "{out}");
        let out = run(
            "PYBIND11_NAMESPACE_BEGIN(\nPYBIND11_NAMESPACE_BEGIN(a)\n)\nPYBIND11_NAMESPACE_BEGIN( b , c)\n",
        );
        assert!(
            out.contains("namespace a {") && out.contains("namespace b {"),
            "{out}"
        );
        assert!(!out.contains("c)"), "{out}");
    }

    #[test]
    fn parentheses_in_comments_and_strings_do_not_close_arguments() {
        let out = run("MY_DECL(a /* ) */, \")\", ')')\nint f();\n");
        assert!(out.trim_start().starts_with("int f();"), "{out}");
    }

    #[test]
    fn digit_separators_are_not_character_literals() {
        let out = run("int n = 1'000'000; MY_DECL(x)\nMY_DECL(y)\n");
        assert!(out.contains("1'000'000; MY_DECL(x)") && !out.contains("MY_DECL(y)"));
    }

    #[test]
    fn an_unterminated_comment_is_blanked_to_the_end() {
        let out = run("int x; /* never closed\nint y; /* x /*\n");
        assert_eq!(out, "int x;                \n              \n");
        // `/*/` does not close the comment it opens.
        assert_eq!(run("int x; /*/"), "int x;    ");
        let text = "int x; /* closed */ int y;\n";
        assert_eq!(run(text), text);
    }
}

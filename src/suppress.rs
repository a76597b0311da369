//! Suppression comments: `// gil-lint: allow(rule, ...)` at the end of a finding's primary line,
//! or alone on the line above it, and `// gil-lint: allow-file(rule, ...)` anywhere in a file for
//! all of that file's findings of those rules. Block comments (`/* ... */`) work too. Text after
//! the closing parenthesis is free, for the reason: `// gil-lint: allow(missing-gil) -- GIL held
//! by the caller`.
//!
//! With `--warn-unused-suppressions`, a suppression that suppresses nothing, names an unknown rule
//! or is malformed is reported as an `unused-suppression` finding. A suppression of a rule that
//! did not run (not selected) is not reported.

use std::ops::Range;

use crate::diagnostic::Finding;
use crate::lints::unused_suppression::UNUSED_SUPPRESSION;
use crate::model::{FileId, Program, Span};

/// One rule named in one suppression comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    pub file: FileId,
    /// 1-based line of the comment.
    pub line: usize,
    /// The comment is alone on its line, so it also covers the next line.
    pub covers_next: bool,
    pub file_level: bool,
    /// The rule as written; empty for a malformed comment.
    pub rule: String,
    /// The rule's name in the comment (for a malformed comment: the text after `gil-lint:`).
    pub span: Span,
}

const MARKER: &str = "gil-lint:";

/// The suppression comments of one file (C, C++, CUDA or Rust). Only a marker inside a comment
/// counts: one in a string literal (`"gil-lint: allow(...)"`) is text, not a suppression.
pub fn scan(file: FileId, text: &str) -> Vec<Directive> {
    let mut directives = Vec::new();
    if memchr::memmem::find(text.as_bytes(), MARKER.as_bytes()).is_none() {
        return directives;
    }
    let line_starts = crate::model::line_starts(text);
    for comment in comments(text) {
        for found in memchr::memmem::find_iter(text[comment.clone()].as_bytes(), MARKER) {
            let at = comment.start + found;
            let line = line_starts.partition_point(|&start| start as usize <= at) - 1;
            let line_start = line_starts[line] as usize;
            let line_end = line_starts
                .get(line + 1)
                .map_or(text.len(), |&end| end as usize);
            // Alone on its line: only blanks before the comment (or the marker's line of it).
            let covers_next = text[line_start..comment.start.max(line_start)]
                .trim()
                .is_empty();
            let mut push = |rule: &str, start: usize, file_level: bool| {
                directives.push(Directive {
                    file,
                    line: line + 1,
                    covers_next,
                    file_level,
                    rule: rule.to_string(),
                    span: Span {
                        file,
                        start: start as u32,
                        end: (start + rule.len().max(1)) as u32,
                    },
                });
            };
            let from = at + MARKER.len();
            let rest = &text[from..line_end.min(comment.end)];
            let body = rest.trim_start();
            let body_at = from + (rest.len() - body.len());
            let parsed = [("allow-file(", true), ("allow(", false)]
                .into_iter()
                .find_map(|(open, file_level)| {
                    let list = body.strip_prefix(open)?;
                    let close = list.find(')')?;
                    Some((body_at + open.len(), &list[..close], file_level))
                });
            match parsed {
                Some((list_at, list, file_level)) if !list.trim().is_empty() => {
                    let mut offset = 0;
                    for part in list.split(',') {
                        let name = part.trim();
                        if !name.is_empty() {
                            let start = list_at + offset + (part.len() - part.trim_start().len());
                            push(name, start, file_level);
                        }
                        offset += part.len() + 1;
                    }
                }
                _ => push("", body_at, false),
            }
        }
    }
    directives
}

/// The byte ranges of the comments of C, C++ or Rust text, skipping string, character and raw
/// string literals of both languages (`R"x(...)x"`, `r#"..."#`), lifetimes and C++ digit
/// separators. `//` comments run to the end of the line (a C++ `\` continues them); `/* */`
/// nest as in Rust (C++ code never opens one inside another).
fn comments(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let start = i;
                loop {
                    i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p);
                    let continued = bytes[start..i].trim_ascii_end().ends_with(b"\\");
                    if !continued || i == bytes.len() {
                        break;
                    }
                    i += 1;
                }
                found.push(start..i);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let start = i;
                let mut depth = 0usize;
                while i < bytes.len() {
                    if bytes[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if bytes[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                found.push(start..i);
            }
            b'"' => i = raw_string_end(bytes, i).unwrap_or_else(|| quoted_end(bytes, i, b'"')),
            b'\'' => i = char_literal_end(bytes, i),
            b if b.is_ascii_alphanumeric() || b == b'_' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                // A digit separator (`1'000`) or a word before a quote that is not a literal's
                // prefix (`u8'x'`, `L'x'`, `b'x'` are): the quote is not a character literal.
                if bytes.get(i) == Some(&b'\'') && !is_literal_prefix(&bytes[..i]) {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    found
}

/// Whether the word ending `before` prefixes a character literal: `L`, `u`, `U`, `u8`, `b`.
fn is_literal_prefix(before: &[u8]) -> bool {
    let word_start = before
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map_or(0, |p| p + 1);
    matches!(&before[word_start..], b"L" | b"u" | b"U" | b"u8" | b"b")
}

/// The end of the literal that a quote at `start` opens, escapes skipped (an unclosed one ends the
/// text; a character literal also ends at its line's end).
fn quoted_end(bytes: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < bytes.len() && bytes[i] != quote {
        if quote == b'\'' && bytes[i] == b'\n' {
            return i;
        }
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(bytes.len())
}

/// A character literal (`'x'`, `'\''`) or, in Rust, a lifetime or label (`'a`), from its quote.
fn char_literal_end(bytes: &[u8], start: usize) -> usize {
    let next = start + 1;
    let Some(&first) = bytes.get(next) else {
        return bytes.len();
    };
    if first == b'\\' {
        return quoted_end(bytes, start, b'\'');
    }
    // One character (of up to four bytes), then a quote: a literal; else a lifetime's quote.
    let width = match first {
        0..0x80 => 1,
        0xf0.. => 4,
        0xe0.. => 3,
        _ => 2,
    };
    if bytes.get(next + width) == Some(&b'\'') {
        next + width + 1
    } else {
        next
    }
}

/// For a `"` at `quote`: the end of the raw string it opens, if the word before it makes it one:
/// C++ `R"delim( ... )delim"` (after `R`, `u8R`, `LR`, `uR`, `UR`) or Rust `r"..."`, `r#"..."#`
/// (also `br`, `cr`), whose hashes come before the quote.
fn raw_string_end(bytes: &[u8], quote: usize) -> Option<usize> {
    let hashes = bytes[..quote]
        .iter()
        .rev()
        .take_while(|&&b| b == b'#')
        .count();
    let word_end = quote - hashes;
    let word_start = bytes[..word_end]
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map_or(0, |p| p + 1);
    let word = &bytes[word_start..word_end];
    let body = quote + 1;
    let closing: Vec<u8> = match word {
        b"R" | b"u8R" | b"LR" | b"uR" | b"UR" if hashes == 0 => {
            // A delimiter has at most 16 characters: looking further would rescan the text
            // from every `R"`.
            let window = &bytes[body..(body + 17).min(bytes.len())];
            let open = body + window.iter().position(|&b| b == b'(')?;
            let delimiter = &bytes[body..open];
            [b")", delimiter, b"\""].concat()
        }
        b"r" | b"br" | b"cr" => [b"\"".as_slice(), &vec![b'#'; hashes]].concat(),
        _ => return None,
    };
    let after = memchr::memmem::find(&bytes[body..], &closing)
        .map_or(bytes.len(), |p| body + p + closing.len());
    Some(after)
}

/// What [`apply`] did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Findings removed by a suppression.
    pub suppressed: usize,
    /// `unused-suppression` findings (empty unless asked for).
    pub unused: Vec<Finding>,
}

impl Directive {
    fn covers(&self, program: &Program, finding: &Finding) -> bool {
        if finding.rule != self.rule || finding.primary.file != self.file {
            return false;
        }
        let line = program.file(self.file).line_col(finding.primary.start).0;
        self.file_level || line == self.line || (self.covers_next && line == self.line + 1)
    }
}

/// Removes the suppressed findings. With `report_unused`, returns a finding for each suppression
/// of a rule that ran (`ran`) which matched nothing, and for each unknown rule (`known`) or
/// malformed comment.
pub fn apply(
    program: &Program,
    findings: &mut Vec<Finding>,
    known: impl Fn(&str) -> bool,
    ran: impl Fn(&str) -> bool,
    report_unused: bool,
) -> Applied {
    let directives: Vec<Directive> = program
        .files
        .iter()
        .enumerate()
        .flat_map(|(id, file)| scan(id as FileId, &file.text))
        .collect();
    if directives.is_empty() {
        return Applied::default();
    }
    let mut used = vec![false; directives.len()];
    let before = findings.len();
    findings.retain(|finding| {
        let mut suppressed = false;
        for (d, directive) in directives.iter().enumerate() {
            if directive.covers(program, finding) {
                used[d] = true;
                suppressed = true;
            }
        }
        !suppressed
    });
    let mut applied = Applied {
        suppressed: before - findings.len(),
        unused: Vec::new(),
    };
    if !report_unused {
        return applied;
    }
    for (directive, used) in directives.iter().zip(used) {
        let (message, label) = if directive.rule.is_empty() {
            (
                "malformed gil-lint comment".to_string(),
                "expected `allow(rule, ...)` or `allow-file(rule, ...)`".to_string(),
            )
        } else if !known(&directive.rule) {
            (
                format!("`{}` is not a gil-lint rule", directive.rule),
                "unknown rule; `gil-lint rules` lists them".to_string(),
            )
        } else if !used && ran(&directive.rule) {
            let place = if directive.file_level {
                "in this file"
            } else if directive.covers_next {
                "on this line or the next"
            } else {
                "on this line"
            };
            (
                format!("unused suppression of `{}`", directive.rule),
                format!("no `{}` finding {place}", directive.rule),
            )
        } else {
            continue;
        };
        applied.unused.push(Finding {
            rule: UNUSED_SUPPRESSION.id,
            severity: UNUSED_SUPPRESSION.default_severity,
            message,
            primary: directive.span,
            primary_label: label,
            function: String::new(),
            flows: Vec::new(),
            notes: Vec::new(),
            help: Some("remove the suppression".to_string()),
        });
    }
    applied
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<(usize, bool, bool, String, String)> {
        scan(0, text)
            .into_iter()
            .map(|d| {
                let written = text[d.span.range()].to_string();
                (d.line, d.covers_next, d.file_level, d.rule, written)
            })
            .collect()
    }

    #[test]
    fn reads_line_file_and_block_comments() {
        let text = "int a;  // gil-lint: allow(missing-gil, gil-held-blocking) -- why\n\
                    // gil-lint: allow-file( missing-gil )\n\
                    /* gil-lint: allow(gil-lock-inversion) */\n\
                    const char* s = \"gil-lint: allow(missing-gil)\";\n";
        assert_eq!(
            rules(text),
            [
                (1, false, false, "missing-gil".into(), "missing-gil".into()),
                (
                    1,
                    false,
                    false,
                    "gil-held-blocking".into(),
                    "gil-held-blocking".into()
                ),
                (2, true, true, "missing-gil".into(), "missing-gil".into()),
                (
                    3,
                    true,
                    false,
                    "gil-lock-inversion".into(),
                    "gil-lock-inversion".into()
                ),
            ]
        );
    }

    #[test]
    fn markers_in_literals_are_not_suppressions() {
        let text = "const char* a = \"// gil-lint: allow(missing-gil)\";\n\
                    auto b = R\"x(\" /* gil-lint: allow(missing-gil) */ )x\";\n\
                    let c = r#\"// gil-lint: allow(missing-gil)\"#;\n\
                    let d = '\"'; let e = 1'000; // gil-lint: allow(gil-held-blocking)\n\
                    fn f<'a>(x: &'a str) {} /* a /* nested */ gil-lint: allow(gil-lock-inversion) */\n";
        let found: Vec<(usize, String)> = rules(text)
            .into_iter()
            .map(|(line, _, _, rule, _)| (line, rule))
            .collect();
        assert_eq!(
            found,
            [
                (4, "gil-held-blocking".to_string()),
                (5, "gil-lock-inversion".to_string())
            ]
        );
    }

    #[test]
    fn a_comment_alone_on_a_line_of_any_ending_covers_the_next() {
        let text = "int a;\r// gil-lint: allow(missing-gil)\rint b;\r\n";
        assert_eq!(
            rules(text),
            [(2, true, false, "missing-gil".into(), "missing-gil".into())]
        );
    }

    #[test]
    fn malformed_comments_are_kept_for_reporting() {
        let text = "// gil-lint: alow(missing-gil)\n// gil-lint: allow()\n";
        let found = rules(text);
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|(_, _, _, rule, _)| rule.is_empty()));
    }
}

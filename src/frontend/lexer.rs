//! Light lexing for the scans of [`super::scan`] and the bounds checks: identifiers and
//! punctuation of C/C++ ([`Lexer`]) and Rust ([`RustLexer`]) text, skipping comments, literals and
//! (in C/C++) preprocessor directives. Linear, allocation-free and total on any input: they run on
//! every file before anything is parsed. (The C++ pre-pass has its own lexer, which keeps what
//! the preprocessor sees: directives and line splices.)

pub(crate) fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token {
    Ident(usize, usize),
    /// `->`, kept apart from `>` so that `p->f(` is not read as the end of template arguments.
    Arrow,
    /// `::`, kept apart from `:` (a base clause or a constructor's initialisers).
    Scope,
    Punct(u8),
}

/// Tokens of C/C++ text: identifiers and punctuation, skipping comments, string and character
/// literals, numbers and preprocessor directives.
#[derive(Clone)]
pub(crate) struct Lexer<'a> {
    bytes: &'a [u8],
    /// Where the next token starts looking (just past the last token read).
    pub(crate) i: usize,
    line_start: bool,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Lexer {
            bytes: text.as_bytes(),
            i: 0,
            line_start: true,
        }
    }

    fn skip_quoted(&mut self, quote: u8) {
        let bytes = self.bytes;
        self.i += 1;
        while self.i < bytes.len() && bytes[self.i] != quote && bytes[self.i] != b'\n' {
            self.i += if bytes[self.i] == b'\\' { 2 } else { 1 };
        }
        self.i = (self.i + 1).min(bytes.len());
    }

    /// `R"delim( ... )delim"`, from the opening quote.
    fn skip_raw_string(&mut self) {
        let bytes = self.bytes;
        let quote = self.i;
        let Some(paren) = bytes[quote..].iter().take(18).position(|&b| b == b'(') else {
            self.i += 1;
            return;
        };
        let delim = &bytes[quote + 1..quote + paren];
        let mut i = quote + paren + 1;
        while let Some(p) = memchr::memchr(b')', &bytes[i..]) {
            let close = i + p;
            if bytes[close + 1..].starts_with(delim)
                && bytes.get(close + 1 + delim.len()) == Some(&b'"')
            {
                self.i = close + delim.len() + 2;
                return;
            }
            i = close + 1;
        }
        self.i = bytes.len();
    }

    fn skip_directive(&mut self) {
        let bytes = self.bytes;
        loop {
            let Some(p) = memchr::memchr(b'\n', &bytes[self.i..]) else {
                self.i = bytes.len();
                return;
            };
            let end = self.i + p;
            self.i = end + 1;
            let continued = end > 0 && bytes[end - 1] == b'\\'
                || end > 1 && bytes[end - 1] == b'\r' && bytes[end - 2] == b'\\';
            if !continued {
                return;
            }
        }
    }

    fn skip_number(&mut self) {
        // Digit separators and suffixes: `1'000ull`, `0x1Fp-3`.
        let bytes = self.bytes;
        self.i += 1;
        while self.i < bytes.len() {
            let c = bytes[self.i];
            let separator = c == b'\''
                && bytes
                    .get(self.i + 1)
                    .is_some_and(|n| n.is_ascii_alphanumeric());
            let exponent =
                matches!(c, b'+' | b'-') && matches!(bytes[self.i - 1], b'e' | b'E' | b'p' | b'P');
            if is_ident_byte(c) || c == b'.' || separator || exponent {
                self.i += 1;
            } else {
                return;
            }
        }
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let bytes = self.bytes;
        while self.i < bytes.len() {
            let b = bytes[self.i];
            match b {
                b'\n' => {
                    self.line_start = true;
                    self.i += 1;
                    continue;
                }
                b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => {
                    self.i += 1;
                    continue;
                }
                b'#' if self.line_start => {
                    self.skip_directive();
                    continue;
                }
                _ => {}
            }
            self.line_start = false;
            match b {
                b'/' if bytes.get(self.i + 1) == Some(&b'/') => {
                    self.i = line_end(bytes, self.i);
                }
                b'/' if bytes.get(self.i + 1) == Some(&b'*') => {
                    self.i = memchr::memmem::find(&bytes[self.i + 2..], b"*/")
                        .map_or(bytes.len(), |p| self.i + 2 + p + 2);
                }
                b'"' | b'\'' => self.skip_quoted(b),
                b'0'..=b'9' => self.skip_number(),
                _ if is_ident_byte(b) => {
                    let start = self.i;
                    self.i = identifier_end(bytes, self.i);
                    let end = self.i;
                    // A string's encoding prefix, or a raw string.
                    if bytes.get(end) == Some(&b'"') {
                        match &bytes[start..end] {
                            b"R" | b"LR" | b"uR" | b"UR" | b"u8R" => {
                                self.skip_raw_string();
                                continue;
                            }
                            b"L" | b"u" | b"U" | b"u8" => {
                                self.skip_quoted(b'"');
                                continue;
                            }
                            _ => {}
                        }
                    }
                    return Some(Token::Ident(start, end));
                }
                _ => return Some(punctuation(bytes, &mut self.i)),
            }
        }
        None
    }
}

/// The token at `*i`, which is neither space nor an identifier: `->` and `::` are one token.
pub(crate) fn punctuation(bytes: &[u8], i: &mut usize) -> Token {
    let b = bytes[*i];
    *i += 1;
    match (b, bytes.get(*i)) {
        (b'-', Some(b'>')) => {
            *i += 1;
            Token::Arrow
        }
        (b':', Some(b':')) => {
            *i += 1;
            Token::Scope
        }
        _ => Token::Punct(b),
    }
}

pub(crate) fn identifier_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_ident_byte(bytes[i]) {
        i += 1;
    }
    i
}

pub(crate) fn line_end(bytes: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p)
}

/// Tokens of Rust text: identifiers and punctuation, skipping comments (nested), string, byte,
/// raw and character literals, lifetimes and numbers.
pub(crate) struct RustLexer<'a> {
    bytes: &'a [u8],
    /// Where the next token starts looking (just past the last token read).
    pub(crate) i: usize,
}

impl<'a> RustLexer<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        RustLexer {
            bytes: text.as_bytes(),
            i: 0,
        }
    }

    /// The text not read yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.bytes[self.i..]
    }

    /// `"..."`, which may span lines, from the opening quote.
    fn skip_string(&mut self) {
        let bytes = self.bytes;
        self.i += 1;
        while self.i < bytes.len() && bytes[self.i] != b'"' {
            self.i += if bytes[self.i] == b'\\' { 2 } else { 1 };
        }
        self.i = (self.i + 1).min(bytes.len());
    }

    /// `r#"..."#`, from the first `#` or quote.
    fn skip_raw_string(&mut self) {
        let bytes = self.bytes;
        let hashes = bytes[self.i..].iter().take_while(|&&b| b == b'#').count();
        self.i += hashes;
        if bytes.get(self.i) != Some(&b'"') {
            return;
        }
        self.i += 1;
        while let Some(p) = memchr::memchr(b'"', &bytes[self.i..]) {
            let close = self.i + p;
            let end = close + 1 + hashes;
            if end <= bytes.len() && bytes[close + 1..end].iter().all(|&b| b == b'#') {
                self.i = end;
                return;
            }
            self.i = close + 1;
        }
        self.i = bytes.len();
    }

    /// A character literal (`'x'`, `'\n'`, `'\u{1F600}'`) or a lifetime or label (`'a`), from
    /// the quote.
    fn skip_quote(&mut self) {
        let bytes = self.bytes;
        let i = self.i + 1;
        if bytes.get(i) == Some(&b'\\') {
            let close = memchr::memchr(b'\'', &bytes[(i + 2).min(bytes.len())..]);
            self.i = close.map_or(bytes.len(), |p| i + 2 + p + 1);
            return;
        }
        // One character, then a closing quote: a literal.
        let width = match bytes.get(i) {
            Some(&b) if b < 0x80 => 1,
            Some(&b) if b >= 0xf0 => 4,
            Some(&b) if b >= 0xe0 => 3,
            Some(_) => 2,
            None => 0,
        };
        if width > 0 && bytes.get(i + width) == Some(&b'\'') {
            self.i = i + width + 1;
            return;
        }
        // A lifetime: the quote and its name.
        self.i = identifier_end(bytes, i);
    }
}

impl Iterator for RustLexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let bytes = self.bytes;
        while self.i < bytes.len() {
            let b = bytes[self.i];
            match b {
                _ if b.is_ascii_whitespace() => self.i += 1,
                b'/' if bytes.get(self.i + 1) == Some(&b'/') => {
                    self.i = line_end(bytes, self.i);
                }
                b'/' if bytes.get(self.i + 1) == Some(&b'*') => {
                    let mut depth = 0usize;
                    while self.i < bytes.len() {
                        if bytes[self.i..].starts_with(b"/*") {
                            depth += 1;
                            self.i += 2;
                        } else if bytes[self.i..].starts_with(b"*/") {
                            depth -= 1;
                            self.i += 2;
                            if depth == 0 {
                                break;
                            }
                        } else {
                            self.i += 1;
                        }
                    }
                }
                b'"' => self.skip_string(),
                b'\'' => self.skip_quote(),
                b'0'..=b'9' => {
                    self.i += 1;
                    while self.i < bytes.len()
                        && (is_ident_byte(bytes[self.i])
                            || bytes[self.i] == b'.'
                                && bytes.get(self.i + 1).is_some_and(u8::is_ascii_digit))
                    {
                        self.i += 1;
                    }
                }
                _ if is_ident_byte(b) => {
                    let start = self.i;
                    self.i = identifier_end(bytes, self.i);
                    let word = &bytes[start..self.i];
                    match (word, bytes.get(self.i)) {
                        (b"r" | b"br" | b"cr", Some(b'"' | b'#'))
                            if bytes.get(self.i) == Some(&b'"')
                                || bytes[self.i..]
                                    .iter()
                                    .find(|&&c| c != b'#')
                                    .is_some_and(|&c| c == b'"') =>
                        {
                            self.skip_raw_string();
                            continue;
                        }
                        (b"b" | b"c", Some(b'"')) => {
                            self.skip_string();
                            continue;
                        }
                        (b"b", Some(b'\'')) => {
                            self.skip_quote();
                            continue;
                        }
                        // `r#type`: a raw identifier.
                        (b"r", Some(b'#'))
                            if bytes.get(self.i + 1).copied().is_some_and(is_ident_byte) =>
                        {
                            let raw = self.i + 1;
                            self.i = identifier_end(bytes, raw);
                            return Some(Token::Ident(raw, self.i));
                        }
                        _ => return Some(Token::Ident(start, self.i)),
                    }
                }
                _ => return Some(punctuation(bytes, &mut self.i)),
            }
        }
        None
    }
}

/// The 1-based line of byte `at`, for a message.
pub(crate) fn line_of(bytes: &[u8], at: usize) -> usize {
    memchr::memchr_iter(b'\n', &bytes[..at.min(bytes.len())]).count() + 1
}

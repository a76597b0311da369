//! rustc-like output through codespan-reporting: the primary label on the root cause, a secondary
//! label on every hop of the path.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, Config};

use crate::diagnostic::{Finding, Severity};
use crate::model::Program;

/// A labelled line longer than this (a minified or generated file) is shown cut to the part
/// around its labels, so that one finding does not print megabytes.
const MAX_SHOWN_LINE: usize = 300;
/// Context kept on each side of the labels of a cut line.
const CUT_CONTEXT: usize = 60;
const ELLIPSIS: &str = "…";

pub struct HumanRenderer<'p> {
    program: &'p Program,
    /// The files as codespan reads them, for every finding without an over-long line.
    files: SimpleFiles<String, Cow<'p, str>>,
    config: Config,
}

impl<'p> HumanRenderer<'p> {
    pub fn new(program: &'p Program) -> Self {
        HumanRenderer {
            program,
            files: Self::files(program, &BTreeMap::new()),
            config: Config::default(),
        }
    }

    /// The program's files, with the texts of `cuts` in place of theirs.
    fn files(
        program: &'p Program,
        cuts: &BTreeMap<usize, Excerpt>,
    ) -> SimpleFiles<String, Cow<'p, str>> {
        let mut files = SimpleFiles::new();
        for (id, file) in program.files.iter().enumerate() {
            let text = match cuts.get(&id) {
                Some(excerpt) => Cow::Owned(excerpt.text.clone()),
                None => Cow::Borrowed(file.text.as_str()),
            };
            files.add(file.path.display().to_string(), text);
        }
        files
    }

    /// For a finding with a labelled line over [`MAX_SHOWN_LINE`] bytes: the files with those
    /// lines cut around its labels, and the finding with its spans moved to match.
    fn cut(&self, finding: &Finding) -> Option<(SimpleFiles<String, Cow<'p, str>>, Finding)> {
        let mut by_file: BTreeMap<usize, Vec<Range<usize>>> = BTreeMap::new();
        for span in finding.spans() {
            by_file
                .entry(span.file as usize)
                .or_default()
                .push(span.range());
        }
        let mut cuts: BTreeMap<usize, Excerpt> = BTreeMap::new();
        for (file, ranges) in by_file {
            let text = self.program.files[file].text.as_str();
            if let Some(excerpt) = Excerpt::of(text, &ranges) {
                cuts.insert(file, excerpt);
            }
        }
        if cuts.is_empty() {
            return None;
        }
        let mut finding = finding.clone();
        for span in finding.spans_mut() {
            if let Some(excerpt) = cuts.get(&(span.file as usize)) {
                span.start = excerpt.map(span.start as usize) as u32;
                span.end = excerpt.map(span.end as usize) as u32;
            }
        }
        Some((Self::files(self.program, &cuts), finding))
    }

    fn diagnostic(finding: &Finding) -> Diagnostic<usize> {
        let severity = match finding.severity {
            Severity::Error => CsSeverity::Error,
            Severity::Warning => CsSeverity::Warning,
        };
        let mut labels = vec![
            Label::primary(finding.primary.file as usize, finding.primary.range())
                .with_message(&finding.primary_label),
        ];
        // Steps are numbered along their flow; with several threads, prefixed by the thread's
        // letter: `A1.`, `B3.`.
        let lettered = finding.flows.len() > 1;
        for (f, flow) in finding.flows.iter().enumerate() {
            let letter = if lettered {
                char::from(b'A' + f as u8).to_string()
            } else {
                String::new()
            };
            labels.extend(flow.steps.iter().enumerate().map(|(i, step)| {
                Label::secondary(step.span.file as usize, step.span.range()).with_message(format!(
                    "{letter}{}. {}",
                    i + 1,
                    step.note
                ))
            }));
        }
        let mut notes: Vec<String> = finding
            .flows
            .iter()
            .enumerate()
            .filter(|(_, flow)| !flow.title.is_empty())
            .map(|(f, flow)| format!("thread {}: {}", char::from(b'A' + f as u8), flow.title))
            .collect();
        notes.extend(finding.notes.iter().cloned());
        if let Some(help) = &finding.help {
            notes.push(format!("help: {help}"));
        }
        Diagnostic::new(severity)
            .with_code(finding.rule)
            .with_message(&finding.message)
            .with_labels(labels)
            .with_notes(notes)
    }

    /// Renders to a string without colour (for tests and snapshots).
    pub fn render_plain(&self, findings: &[Finding]) -> String {
        let mut buffer = codespan_reporting::term::termcolor::NoColor::new(Vec::new());
        self.emit(findings, &mut buffer)
            .expect("spans come from the files they label");
        String::from_utf8_lossy(&buffer.into_inner()).into_owned()
    }

    /// Renders to a terminal stream, coloured when `color` says so.
    pub fn emit(
        &self,
        findings: &[Finding],
        writer: &mut dyn codespan_reporting::term::termcolor::WriteColor,
    ) -> std::io::Result<()> {
        for finding in findings {
            match self.cut(finding) {
                Some((files, finding)) => term::emit_to_write_style(
                    writer,
                    &self.config,
                    &files,
                    &Self::diagnostic(&finding),
                ),
                None => term::emit_to_write_style(
                    writer,
                    &self.config,
                    &self.files,
                    &Self::diagnostic(finding),
                ),
            }
            .map_err(std::io::Error::other)?;
            writeln!(writer)?;
        }
        Ok(())
    }
}

/// A file's text with its over-long labelled lines cut: each becomes `…` + the part from
/// [`CUT_CONTEXT`] bytes before its first label to as many after its last + `…`.
struct Excerpt {
    text: String,
    /// `(old start, new start, length)` of each piece of the old text kept, in order.
    kept: Vec<(usize, usize, usize)>,
}

impl Excerpt {
    /// `None` when no labelled line is too long.
    fn of(text: &str, labels: &[Range<usize>]) -> Option<Self> {
        // Line start -> (line end, the part of it to keep): each over-long line a label touches,
        // with every labelled part of it (a label may also span it from a line above).
        let mut windows: BTreeMap<usize, (usize, Range<usize>)> = BTreeMap::new();
        let mut line_start = 0;
        for line in text.split('\n') {
            let line_end = line_start + line.len();
            if line.len() > MAX_SHOWN_LINE {
                for label in labels {
                    if label.start <= line_end && label.end >= line_start {
                        let on_line = label.start.max(line_start)..label.end.min(line_end);
                        let window = windows
                            .entry(line_start)
                            .or_insert((line_end, on_line.clone()));
                        window.1.start = window.1.start.min(on_line.start);
                        window.1.end = window.1.end.max(on_line.end);
                    }
                }
            }
            line_start = line_end + 1;
        }
        if windows.is_empty() {
            return None;
        }
        let mut out = String::new();
        let mut kept = Vec::new();
        let mut at = 0;
        for (line_start, (line_end, labelled)) in windows {
            let from = floor_char(
                text,
                labelled.start.saturating_sub(CUT_CONTEXT).max(line_start),
            );
            let to = ceil_char(text, (labelled.end + CUT_CONTEXT).min(line_end));
            kept.push((at, out.len(), line_start - at));
            out.push_str(&text[at..line_start]);
            if from > line_start {
                out.push_str(ELLIPSIS);
            }
            kept.push((from, out.len(), to - from));
            out.push_str(&text[from..to]);
            if to < line_end {
                out.push_str(ELLIPSIS);
            }
            at = line_end;
        }
        kept.push((at, out.len(), text.len() - at));
        out.push_str(&text[at..]);
        Some(Excerpt { text: out, kept })
    }

    /// Where an old offset (one a label starts or ends at, so inside a kept piece) is now.
    fn map(&self, offset: usize) -> usize {
        self.kept
            .iter()
            .rev()
            .find(|&&(old, _, len)| old <= offset && offset <= old + len)
            .map_or(offset, |&(old, new, _)| new + (offset - old))
    }
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_cut_around_its_labels() {
        let long = format!("{}target{}", "a ".repeat(400), " b".repeat(400));
        let text = format!("short line\n{long}\nlast line\n");
        let start = text.find("target").unwrap();
        let last = text.find("last").unwrap();
        let excerpt = Excerpt::of(&text, &[start..start + 6, last..last + 4]).unwrap();
        let lines: Vec<&str> = excerpt.text.lines().collect();
        assert_eq!(lines[0], "short line");
        assert!(lines[1].starts_with(ELLIPSIS) && lines[1].ends_with(ELLIPSIS));
        assert!(lines[1].len() < 2 * CUT_CONTEXT + 6 + 2 * ELLIPSIS.len() + 1);
        assert_eq!(lines[2], "last line");
        let (s, e) = (excerpt.map(start), excerpt.map(start + 6));
        assert_eq!(&excerpt.text[s..e], "target");
        let (s, e) = (excerpt.map(last), excerpt.map(last + 4));
        assert_eq!(&excerpt.text[s..e], "last");
    }

    #[test]
    fn a_label_ending_on_a_long_line_keeps_its_end() {
        let long = format!("{}end{}", "x".repeat(500), "y".repeat(500));
        let text = format!("start(\n{long}\n");
        let end = text.find("end").unwrap() + 3;
        let label = 0..end;
        let excerpt = Excerpt::of(&text, std::slice::from_ref(&label)).unwrap();
        let (s, e) = (excerpt.map(0), excerpt.map(end));
        assert!(excerpt.text[s..e].starts_with("start(\n"));
        assert!(excerpt.text[s..e].ends_with("xend"));
        assert!(excerpt.text.len() < 700, "{}", excerpt.text.len());
    }

    /// Every label of random texts still covers the same text after the cut.
    #[test]
    fn labels_map_to_the_same_text() {
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..300 {
            let mut text = String::new();
            for _ in 0..1 + next(6) {
                let width = if next(2) == 0 {
                    next(40)
                } else {
                    300 + next(900)
                };
                text.extend((0..width).map(|i| if i % 7 == 6 { 'é' } else { 'a' }));
                text.push('\n');
            }
            let boundaries: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            let labels: Vec<Range<usize>> = (0..1 + next(4))
                .map(|_| {
                    let a = boundaries[next(boundaries.len())];
                    let b = boundaries[next(boundaries.len())];
                    a.min(b)..a.max(b)
                })
                .collect();
            let Some(excerpt) = Excerpt::of(&text, &labels) else {
                continue;
            };
            for label in &labels {
                let (s, e) = (excerpt.map(label.start), excerpt.map(label.end));
                let shown = excerpt
                    .text
                    .get(s..e)
                    .expect("a mapped label is a valid range");
                // A label is never cut inside: only the text around it is.
                assert_eq!(shown, &text[label.clone()]);
            }
        }
    }

    #[test]
    fn short_lines_are_shown_whole() {
        let text = "int f() { return g(); }\n";
        let label = 17..18;
        assert!(Excerpt::of(text, std::slice::from_ref(&label)).is_none());
    }
}

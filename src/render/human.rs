//! rustc-like output through codespan-reporting: the primary label on the root cause, a secondary
//! label on every hop of the path.

use std::collections::BTreeMap;
use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term::{self, Config};

use crate::diagnostic::{Confidence, Finding, Severity};
use crate::model::{Program, SourceFile};

/// A labelled line longer than this (a minified or generated file) is shown cut to the part
/// around its labels, so that one finding does not print megabytes.
const MAX_SHOWN_LINE: usize = 300;
/// Context kept on each side of the labels of a cut line.
const CUT_CONTEXT: usize = 60;
const ELLIPSIS: &str = "…";

pub struct HumanRenderer<'p> {
    program: &'p Program,
    config: Config,
}

/// The program's files as codespan reads them, some with their over-long lines cut, located
/// through the model's own line map (so a line and column here are those of every other format).
struct Sources<'p> {
    program: &'p Program,
    cuts: BTreeMap<usize, SourceFile>,
}

impl Sources<'_> {
    fn file(&self, id: usize) -> &SourceFile {
        self.cuts.get(&id).unwrap_or(&self.program.files[id])
    }
}

impl<'a> Files<'a> for Sources<'_> {
    type FileId = usize;
    type Name = std::path::Display<'a>;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<Self::Name, FilesError> {
        Ok(self.file(id).path.display())
    }

    fn source(&'a self, id: usize) -> Result<&'a str, FilesError> {
        Ok(&self.file(id).text)
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.file(id).line_of(byte_index))
    }

    fn line_range(&'a self, id: usize, line_index: usize) -> Result<Range<usize>, FilesError> {
        let file = self.file(id);
        file.line_range(line_index).ok_or(FilesError::LineTooLarge {
            given: line_index,
            max: file.line_count() - 1,
        })
    }

    fn column_number(
        &'a self,
        id: usize,
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, FilesError> {
        Ok(self.file(id).column(line_index, byte_index) + 1)
    }
}

impl<'p> HumanRenderer<'p> {
    pub fn new(program: &'p Program) -> Self {
        HumanRenderer {
            program,
            config: Config::default(),
        }
    }

    /// The files to show `finding` from: for a labelled line over [`MAX_SHOWN_LINE`] bytes,
    /// those lines cut around its labels, and the finding with its spans moved to match.
    fn sources(&self, finding: &Finding) -> (Sources<'p>, Option<Finding>) {
        let uncut = Sources {
            program: self.program,
            cuts: BTreeMap::new(),
        };
        let mut by_file: BTreeMap<usize, Vec<Range<usize>>> = BTreeMap::new();
        for span in finding.spans() {
            by_file
                .entry(span.file as usize)
                .or_default()
                .push(span.range());
        }
        let mut excerpts: BTreeMap<usize, Excerpt> = BTreeMap::new();
        for (file, ranges) in by_file {
            if let Some(excerpt) = Excerpt::of(&self.program.files[file], &ranges) {
                excerpts.insert(file, excerpt);
            }
        }
        if excerpts.is_empty() {
            return (uncut, None);
        }
        let mut finding = finding.clone();
        for span in finding.spans_mut() {
            if let Some(excerpt) = excerpts.get(&(span.file as usize)) {
                span.start = excerpt.map(span.start as usize) as u32;
                span.end = excerpt.map(span.end as usize) as u32;
            }
        }
        let cuts = excerpts
            .into_iter()
            .map(|(id, excerpt)| {
                let file = &self.program.files[id];
                (
                    id,
                    SourceFile::new(file.path.clone(), file.language, excerpt.text),
                )
            })
            .collect();
        let sources = Sources {
            program: self.program,
            cuts,
        };
        (sources, Some(finding))
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
            // A path that ends at the finding's location ends at the primary label.
            let shown = match flow.steps.last() {
                Some(last) if last.span == finding.primary => flow.steps.len() - 1,
                _ => flow.steps.len(),
            };
            labels.extend(flow.steps[..shown].iter().enumerate().map(|(i, step)| {
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
        if finding.confidence() == Confidence::Low {
            notes.push(
                "confidence: low: the call marked (guessed) was matched by name (its receiver's \
                 type is unknown) or is virtual with several overrides; `--min-confidence high` \
                 hides such findings"
                    .to_string(),
            );
        }
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
            let (sources, cut) = self.sources(finding);
            let diagnostic = Self::diagnostic(cut.as_ref().unwrap_or(finding));
            term::emit_to_write_style(writer, &self.config, &sources, &diagnostic).map_err(
                |err| match err {
                    // Kept as it is, so that a closed pipe is still known as one.
                    codespan_reporting::files::Error::Io(err) => err,
                    other => std::io::Error::other(other),
                },
            )?;
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
    fn of(file: &SourceFile, labels: &[Range<usize>]) -> Option<Self> {
        let text = file.text.as_str();
        // Line start -> (line end, the part of it to keep): each over-long line a label touches,
        // with every labelled part of it (a label may also span it from a line above).
        let mut windows: BTreeMap<usize, (usize, Range<usize>)> = BTreeMap::new();
        for line in 0..file.line_count() {
            let range = file.line_range(line).expect("the line exists");
            let line_start = range.start;
            let line_end = line_start + text[range].trim_end_matches(['\n', '\r']).len();
            if line_end - line_start > MAX_SHOWN_LINE {
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
    use crate::frontend::Language;

    fn source(text: &str) -> SourceFile {
        SourceFile::new("f.cpp".into(), Language::Cpp, text.to_string())
    }

    #[test]
    fn a_long_line_is_cut_around_its_labels() {
        let long = format!("{}target{}", "a ".repeat(400), " b".repeat(400));
        let text = format!("short line\n{long}\nlast line\n");
        let start = text.find("target").unwrap();
        let last = text.find("last").unwrap();
        let excerpt = Excerpt::of(&source(&text), &[start..start + 6, last..last + 4]).unwrap();
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
        let excerpt = Excerpt::of(&source(&text), std::slice::from_ref(&label)).unwrap();
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
                text.push_str(["\n", "\r\n", "\r"][next(3)]);
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
            let Some(excerpt) = Excerpt::of(&source(&text), &labels) else {
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
        assert!(Excerpt::of(&source(text), std::slice::from_ref(&label)).is_none());
    }
}

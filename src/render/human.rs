//! rustc-like output through codespan-reporting: the primary label on the root cause, a secondary
//! label on every hop of the path.

use codespan_reporting::diagnostic::{Diagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, Config};

use crate::diagnostic::{Finding, Severity};
use crate::model::Program;

pub struct HumanRenderer {
    files: SimpleFiles<String, String>,
    config: Config,
}

impl HumanRenderer {
    pub fn new(program: &Program) -> Self {
        let mut files = SimpleFiles::new();
        for file in &program.files {
            files.add(file.path.display().to_string(), file.text.clone());
        }
        HumanRenderer {
            files,
            config: Config::default(),
        }
    }

    fn diagnostic(finding: &Finding) -> Diagnostic<usize> {
        let severity = match finding.severity {
            Severity::Error => CsSeverity::Error,
            Severity::Warning => CsSeverity::Warning,
        };
        let mut labels = vec![
            Label::primary(finding.primary.file, finding.primary.range())
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
                Label::secondary(step.span.file, step.span.range()).with_message(format!(
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
        let mut out = String::new();
        for finding in findings {
            let mut buffer = codespan_reporting::term::termcolor::NoColor::new(Vec::new());
            term::emit_to_write_style(
                &mut buffer,
                &self.config,
                &self.files,
                &Self::diagnostic(finding),
            )
            .expect("spans come from the files they label");
            out.push_str(&String::from_utf8_lossy(&buffer.into_inner()));
            out.push('\n');
        }
        out
    }

    /// Renders to a terminal stream, coloured when `color` says so.
    pub fn emit(
        &self,
        findings: &[Finding],
        writer: &mut dyn codespan_reporting::term::termcolor::WriteColor,
    ) -> std::io::Result<()> {
        for finding in findings {
            term::emit_to_write_style(
                writer,
                &self.config,
                &self.files,
                &Self::diagnostic(finding),
            )
            .map_err(std::io::Error::other)?;
            writeln!(writer)?;
        }
        Ok(())
    }
}

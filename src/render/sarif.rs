//! `--format sarif`: SARIF 2.1.0 as GitHub code scanning reads it.
//!
//! Hand-rolled serde structs for the subset GitHub uses (as ruff does; `serde-sarif` does not build
//! on its own). Each result has the finding's root cause as its only location, the call path as
//! `codeFlows` (one `threadFlow` per thread of a deadlock), every step again as a
//! `relatedLocations` entry, and `partialFingerprints.primaryLocationLineHash` computed exactly as
//! `github/codeql-action` computes it, so that alerts keep their identity when lines move.
//!
//! Paths are relative to the repository root ([`RepoRoot`]) with `uriBaseId` `%SRCROOT%`, whose
//! absolute `file://` URI is in `originalUriBaseIds`, so the report is the same from any folder
//! and GitHub places it; a file outside the root gets its absolute URI. URIs are written by the
//! `url` crate (percent-encoding, Windows drive letters). The run records how gil-lint was invoked
//! (`invocations`: arguments, working directory, exit code) and its `automationDetails`. A
//! finding's notes and help are in its message's `markdown`. Columns count UTF-16 code units
//! (`columnKind`), as GitHub and VS Code do; spans are byte offsets and are converted here.

use std::collections::BTreeMap;

use serde::Serialize;
use url::Url;

use crate::baseline;
use crate::diagnostic::{Confidence, Finding, Severity};
use crate::lints::Lint;
use crate::model::{Program, SourceFile, Span};
use crate::repo::{self, RepoRoot};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
const SRCROOT: &str = "%SRCROOT%";
/// `runAutomationDetails.id`: the part before the last `/` is the code scanning category (which
/// `upload-sarif`'s `category` input overrides).
const AUTOMATION_ID: &str = "gil-lint/";
/// GitHub's limit on thread-flow locations per result.
const MAX_FLOW_LOCATIONS: usize = 10_000;
/// GitHub's limit on the length of `shortDescription` and `fullDescription`.
const MAX_DESCRIPTION: usize = 1024;

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    invocations: [SarifInvocation<'a>; 1],
    automation_details: AutomationDetails,
    #[serde(skip_serializing_if = "Option::is_none")]
    original_uri_base_ids: Option<BTreeMap<&'static str, ArtifactLocation>>,
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    information_uri: &'static str,
    rules: Vec<RuleDescriptor>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RuleDescriptor {
    id: &'static str,
    name: String,
    short_description: Text,
    full_description: Text,
    help: Help,
    help_uri: String,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: Vec<&'static str>,
    precision: &'static str,
    #[serde(rename = "problem.severity")]
    problem_severity: &'static str,
}

#[derive(Serialize)]
struct AutomationDetails {
    id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifInvocation<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    command_line: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    working_directory: Option<ArtifactLocation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<u8>,
    /// Findings are a successful run; a run that fails writes no report.
    execution_successful: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_execution_notifications: Vec<Notification<'a>>,
}

#[derive(Serialize)]
struct Notification<'a> {
    level: &'static str,
    message: TextRef<'a>,
}

#[derive(Serialize)]
struct TextRef<'a> {
    text: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    rule_index: usize,
    level: &'static str,
    /// How sure the finding is, 0 to 100 (SARIF's priority): see [`rank`].
    rank: f64,
    message: Message,
    locations: [Location; 1],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    code_flows: Vec<CodeFlow>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    properties: ResultProperties,
}

#[derive(Serialize)]
struct Message {
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    markdown: Option<String>,
}

#[derive(Serialize)]
struct ResultProperties {
    confidence: Confidence,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize, Clone)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CodeFlow {
    thread_flows: Vec<ThreadFlow>,
}

#[derive(Serialize)]
struct ThreadFlow {
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
    locations: Vec<ThreadFlowLocation>,
}

#[derive(Serialize)]
struct ThreadFlowLocation {
    location: Location,
}

pub struct Options<'a> {
    /// `%SRCROOT%`, where relative URIs start.
    pub root: &'a RepoRoot,
    /// Write the root's absolute URI as `originalUriBaseIds` (left out of snapshots, which must not
    /// depend on the machine).
    pub base_ids: bool,
    /// How gil-lint was run; `None` leaves it out (snapshots).
    pub invocation: Option<Invocation>,
}

impl<'a> Options<'a> {
    /// Paths relative to `root`, with nothing that depends on the machine or the run.
    pub fn new(root: &'a RepoRoot) -> Self {
        Options {
            root,
            base_ids: false,
            invocation: None,
        }
    }
}

/// How gil-lint was run, for the run's `invocations`.
pub struct Invocation {
    /// The command line after the program's name.
    pub arguments: Vec<String>,
    pub working_directory: std::path::PathBuf,
    pub exit_code: u8,
}

/// Renders the findings of `program` as one SARIF run. `rules` are every rule gil-lint has, in the
/// order `ruleIndex` refers to; `errors` become tool notifications.
pub fn render(
    program: &Program,
    findings: &[Finding],
    rules: &[&'static Lint],
    errors: &[String],
    options: &Options,
) -> String {
    let hashes = LineHashes::new(program);
    let root = options.root;
    let results = findings
        .iter()
        .map(|finding| result(program, finding, rules, &hashes, root))
        .collect();
    let invocation = options.invocation.as_ref();
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "gil-lint",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    information_uri: env!("CARGO_PKG_REPOSITORY"),
                    rules: rules.iter().map(|r| descriptor(r)).collect(),
                },
            },
            invocations: [SarifInvocation {
                // Quoted so that it can be pasted into a shell; an argument with a NUL (which
                // no shell can pass) leaves only `arguments`.
                command_line: invocation.and_then(|i| {
                    shlex::try_join(
                        std::iter::once("gil-lint").chain(i.arguments.iter().map(String::as_str)),
                    )
                    .ok()
                }),
                arguments: invocation.map(|i| i.arguments.as_slice()),
                working_directory: invocation.map(|i| ArtifactLocation {
                    uri: directory_uri(&i.working_directory),
                    uri_base_id: None,
                }),
                exit_code: invocation.map(|i| i.exit_code),
                execution_successful: true,
                tool_execution_notifications: errors
                    .iter()
                    .map(|e| Notification {
                        level: "warning",
                        message: TextRef { text: e },
                    })
                    .collect(),
            }],
            automation_details: AutomationDetails { id: AUTOMATION_ID },
            original_uri_base_ids: options.base_ids.then(|| {
                BTreeMap::from([(
                    SRCROOT,
                    ArtifactLocation {
                        uri: directory_uri(root.dir()),
                        uri_base_id: None,
                    },
                )])
            }),
            column_kind: "utf16CodeUnits",
            results,
        }],
    };
    serde_json::to_string_pretty(&log).expect("plain data serialises") + "\n"
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// `missing-gil` -> `MissingGil`.
fn pascal_case(id: &str) -> String {
    id.split(['-', '_'])
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}

/// The text of a `## Heading` section of a rule's Markdown, without the heading.
fn section(markdown: &str, heading: &str) -> Option<String> {
    let start = markdown.find(&format!("## {heading}\n"))? + heading.len() + 4;
    let rest = &markdown[start..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    Some(rest[..end].trim().to_string())
}

/// At most `MAX_DESCRIPTION` characters: the whole text, or its first paragraph, cut at a word.
fn description(text: &str) -> String {
    let unwrapped = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let whole = unwrapped(text);
    if whole.chars().count() <= MAX_DESCRIPTION {
        return whole;
    }
    let first = unwrapped(text.split("\n\n").next().unwrap_or(text));
    if first.chars().count() <= MAX_DESCRIPTION {
        return first;
    }
    let mut cut = String::new();
    for word in first.split(' ') {
        if cut.chars().count() + word.chars().count() + 2 > MAX_DESCRIPTION {
            break;
        }
        if !cut.is_empty() {
            cut.push(' ');
        }
        cut.push_str(word);
    }
    cut + "…"
}

fn descriptor(rule: &Lint) -> RuleDescriptor {
    let markdown = rule.markdown();
    let finds = section(&markdown, "What it finds").unwrap_or_else(|| rule.summary.to_string());
    let level = level(rule.default_severity);
    RuleDescriptor {
        id: rule.id,
        name: pascal_case(rule.id),
        short_description: Text {
            text: description(rule.summary),
        },
        full_description: Text {
            text: description(&finds),
        },
        help: Help {
            text: markdown.clone(),
            markdown,
        },
        help_uri: crate::lints::doc_url(rule.id),
        default_configuration: Configuration { level },
        properties: RuleProperties {
            tags: rule.tags.to_vec(),
            precision: rule.precision.as_str(),
            problem_severity: level,
        },
    }
}

fn result<'a>(
    program: &Program,
    finding: &'a Finding,
    rules: &[&'static Lint],
    hashes: &LineHashes,
    root: &RepoRoot,
) -> SarifResult<'a> {
    let rule_index = rules
        .iter()
        .position(|r| r.id == finding.rule)
        .expect("every finding's rule is listed");
    let primary = location(
        root,
        program,
        finding.primary,
        None,
        Some(&finding.primary_label),
    );
    let mut related = Vec::new();
    let mut code_flows = Vec::new();
    // The `relatedLocations` id of each flow's first step.
    let mut flow_starts = Vec::new();
    if !finding.flows.is_empty() {
        let threaded = finding.flows.len() > 1;
        let mut thread_flows = Vec::new();
        for (f, flow) in finding.flows.iter().enumerate() {
            let mut locations: Vec<ThreadFlowLocation> = flow
                .steps
                .iter()
                .map(|step| ThreadFlowLocation {
                    location: location(root, program, step.span, None, Some(&step.note)),
                })
                .collect();
            let prefix = if threaded {
                format!("thread {}: ", char::from(b'A' + f as u8))
            } else {
                String::new()
            };
            if !flow.steps.is_empty() {
                flow_starts.push(related.len() + 1);
            }
            for step in &flow.steps {
                let id = related.len() + 1;
                let message = format!("{prefix}{}", step.note);
                related.push(location(root, program, step.span, Some(id), Some(&message)));
            }
            // A single path ends where the finding is.
            let ends_at_primary = flow.steps.last().is_some_and(|s| s.span == finding.primary);
            if !threaded && !ends_at_primary {
                locations.push(ThreadFlowLocation {
                    location: location(
                        root,
                        program,
                        finding.primary,
                        None,
                        Some(&finding.primary_label),
                    ),
                });
            }
            locations.truncate(MAX_FLOW_LOCATIONS);
            thread_flows.push(ThreadFlow {
                message: (!flow.title.is_empty()).then(|| Text {
                    text: format!("thread {}: {}", char::from(b'A' + f as u8), flow.title),
                }),
                locations,
            });
        }
        code_flows.push(CodeFlow { thread_flows });
    }
    // Relate the message to the path's start (GitHub links related locations only when the
    // message embeds them).
    let mut message = finding.message.clone();
    let starts: Vec<String> = flow_starts
        .iter()
        .enumerate()
        .map(|(f, id)| match flow_starts.len() {
            1 => format!("the path starts [here]({id})"),
            _ => format!("thread {} starts [here]({id})", char::from(b'A' + f as u8)),
        })
        .collect();
    if !starts.is_empty() {
        message.push_str(&format!(" ({})", starts.join(", ")));
    }
    let file = &program.file(finding.primary.file);
    let line = file.line_col(finding.primary.start).0;
    let partial_fingerprints = BTreeMap::from([
        (
            "primaryLocationLineHash",
            hashes.get(finding.primary.file as usize, line),
        ),
        ("gilLint/v1", baseline::fingerprint(program, finding, root)),
    ]);
    SarifResult {
        rule_id: finding.rule,
        rule_index,
        level: level(finding.severity),
        rank: rank(finding.confidence()),
        message: Message {
            markdown: markdown(&message, finding),
            text: message,
        },
        locations: [primary],
        related_locations: related,
        code_flows,
        partial_fingerprints,
        properties: ResultProperties {
            confidence: finding.confidence(),
        },
    }
}

/// A finding whose path guesses a call ranks below one whose every call was resolved, so that
/// viewers that sort by rank show the sure ones first.
fn rank(confidence: Confidence) -> f64 {
    match confidence {
        Confidence::High => 90.0,
        Confidence::Low => 40.0,
    }
}

fn location(
    root: &RepoRoot,
    program: &Program,
    span: Span,
    id: Option<usize>,
    message: Option<&str>,
) -> Location {
    let file = &program.file(span.file);
    let (start_line, start_column) = utf16_position(file, span.start as usize);
    let (end_line, end_column) = utf16_position(file, span.end.max(span.start) as usize);
    Location {
        id,
        physical_location: PhysicalLocation {
            artifact_location: artifact(root, &file.path),
            region: Region {
                start_line,
                start_column,
                end_line,
                end_column,
            },
        },
        message: message.filter(|m| !m.is_empty()).map(|m| Text {
            text: m.to_string(),
        }),
    }
}

/// 1-based line and 1-based column in UTF-16 code units of a byte offset.
fn utf16_position(file: &SourceFile, offset: usize) -> (usize, usize) {
    let offset = offset.min(file.text.len());
    let line = file.line_of(offset);
    let start = file.line_start(line);
    let column = file
        .text
        .get(start..offset)
        .map_or(offset - start, |s| s.chars().map(char::len_utf16).sum());
    (line + 1, column + 1)
}

/// A path relative to `%SRCROOT%` when it is below the root, an absolute `file://` URI otherwise.
fn artifact(root: &RepoRoot, path: &std::path::Path) -> ArtifactLocation {
    let absolute = repo::absolute(path);
    let Ok(file) = Url::from_file_path(&absolute) else {
        // Not absolute even now (an empty path): the path as it is.
        return ArtifactLocation {
            uri: path.to_string_lossy().replace('\\', "/"),
            uri_base_id: None,
        };
    };
    let relative = Url::from_directory_path(root.dir())
        .ok()
        .filter(|_| absolute.starts_with(root.dir()))
        .and_then(|base| base.make_relative(&file));
    match relative {
        Some(uri) => ArtifactLocation {
            uri,
            uri_base_id: Some(SRCROOT),
        },
        None => ArtifactLocation {
            uri: file.into(),
            uri_base_id: None,
        },
    }
}

/// A directory's `file://` URI, ending with `/` (as `originalUriBaseIds` must).
fn directory_uri(dir: &std::path::Path) -> String {
    Url::from_directory_path(repo::absolute(dir))
        .map_or_else(|()| dir.to_string_lossy().into_owned(), String::from)
}

/// The message as Markdown, with the finding's notes and help (what the human format shows under
/// it); `None` when it has neither.
fn markdown(message: &str, finding: &Finding) -> Option<String> {
    if finding.notes.is_empty() && finding.help.is_none() {
        return None;
    }
    let mut text = message.to_string();
    if !finding.notes.is_empty() {
        text.push('\n');
    }
    for note in &finding.notes {
        text.push_str(&format!("\n- {note}"));
    }
    if let Some(help) = &finding.help {
        text.push_str(&format!("\n\n**help:** {help}"));
    }
    Some(text)
}

/// `primaryLocationLineHash` of every line, computed once per file that has a finding.
struct LineHashes<'p> {
    program: &'p Program,
    files: Vec<std::sync::OnceLock<Vec<String>>>,
}

impl<'p> LineHashes<'p> {
    fn new(program: &'p Program) -> Self {
        LineHashes {
            program,
            files: program.files.iter().map(|_| Default::default()).collect(),
        }
    }

    /// The hash of 1-based `line` of file `file`.
    fn get(&self, file: usize, line: usize) -> String {
        let hashes = self.files[file].get_or_init(|| line_hashes(&self.program.files[file].text));
        hashes[line.clamp(1, hashes.len()) - 1].clone()
    }
}

/// The rolling hash of `github/codeql-action` `src/fingerprints.ts`, state for state.
struct RollingHash {
    window: [u64; Self::BLOCK_SIZE],
    line_numbers: [Option<usize>; Self::BLOCK_SIZE],
    index: usize,
    hash: u64,
    first_mod: u64,
    line_number: usize,
    line_start: bool,
    prev_cr: bool,
    counts: std::collections::HashMap<u64, usize>,
    hashes: Vec<String>,
}

impl RollingHash {
    const BLOCK_SIZE: usize = 100;
    const MOD: u64 = 37;
    const EOF: u16 = 65535;

    fn new() -> Self {
        RollingHash {
            window: [0; Self::BLOCK_SIZE],
            line_numbers: [None; Self::BLOCK_SIZE],
            index: 0,
            hash: 0,
            first_mod: (0..Self::BLOCK_SIZE).fold(1u64, |acc, _| acc.wrapping_mul(Self::MOD)),
            line_number: 0,
            line_start: true,
            prev_cr: false,
            counts: Default::default(),
            hashes: Vec::new(),
        }
    }

    fn output(&mut self) {
        if let Some(line) = self.line_numbers[self.index].take() {
            let n = self.counts.entry(self.hash).or_insert(0);
            *n += 1;
            if self.hashes.len() <= line {
                self.hashes.resize(line + 1, String::new());
            }
            self.hashes[line] = format!("{:x}:{n}", self.hash);
        }
    }

    fn update(&mut self, current: u16) {
        let begin = self.window[self.index];
        self.window[self.index] = u64::from(current);
        self.hash = Self::MOD
            .wrapping_mul(self.hash)
            .wrapping_add(u64::from(current))
            .wrapping_sub(self.first_mod.wrapping_mul(begin));
        self.index = (self.index + 1) % Self::BLOCK_SIZE;
    }

    fn process(&mut self, mut current: u16) {
        const CR: u16 = b'\r' as u16;
        const LF: u16 = b'\n' as u16;
        // Spaces, tabs and the LF of a CRLF are skipped.
        if current == u16::from(b' ')
            || current == u16::from(b'\t')
            || (self.prev_cr && current == LF)
        {
            self.prev_cr = false;
            return;
        }
        self.prev_cr = current == CR;
        if current == CR {
            current = LF;
        }
        self.output();
        if self.line_start {
            self.line_start = false;
            self.line_numbers[self.index] = Some(self.line_number);
            self.line_number += 1;
        }
        self.line_start = current == LF;
        self.update(current);
    }

    fn finish(mut self) -> Vec<String> {
        self.process(Self::EOF);
        for _ in 0..Self::BLOCK_SIZE {
            self.output();
            self.update(0);
        }
        self.hashes
    }
}

/// The hash of each line as `github/codeql-action` computes it: a rolling hash over the next 100
/// UTF-16 code units from the line's start, spaces and tabs skipped and CR and CRLF read as LF, as
/// `{hash:x}:{n}` where `n` counts the lines so far with the same hash. A text that ends with a
/// newline has one more, empty, line.
pub fn line_hashes(text: &str) -> Vec<String> {
    let mut state = RollingHash::new();
    for unit in text.encode_utf16() {
        state.process(unit);
    }
    state.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectors of `github/codeql-action` `src/fingerprints.test.ts`.
    #[test]
    fn line_hashes_match_codeql_action() {
        assert_eq!(line_hashes(""), ["c129715d7a2bc9a3:1"]);
        assert_eq!(
            line_hashes(" a\nb\n  \t\tc\n d"),
            [
                "271789c17abda88f:1",
                "54703d4cd895b18:1",
                "180aee12dab6264:1",
                "a23a3dc5e078b07b:1"
            ]
        );
        let lorem = "Lorem ipsum dolor sit amet.\n".repeat(10);
        let hashes = line_hashes(&lorem);
        assert_eq!(
            &hashes[5..8],
            [
                "a7f2ff13bc495cf2:6",
                "a7f2ff1481e87703:1",
                "a9cf91f7bbf1862b:1"
            ]
        );
    }

    #[test]
    fn line_endings_and_indentation_do_not_change_hashes() {
        assert_eq!(line_hashes("a\r\nb\r\n"), line_hashes("a\nb\n"));
        assert_eq!(line_hashes("a\rb\r"), line_hashes("a\nb\n"));
        assert_eq!(line_hashes("  a\n\tb\n"), line_hashes("a\nb\n"));
    }

    #[test]
    fn columns_count_utf16_code_units() {
        let file = SourceFile::new(
            "a.cpp".into(),
            crate::frontend::Language::Cpp,
            "// é𝄞\nx = f();\n".into(),
        );
        let offset = "// é𝄞".len();
        // `/`, `/`, ` `, `é` (1 unit), `𝄞` (2 units): the end is column 7.
        assert_eq!(utf16_position(&file, offset), (1, 7));
        assert_eq!(utf16_position(&file, offset + 1), (2, 1));
    }

    #[test]
    fn uris_are_relative_to_the_root_and_encoded() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("root/src");
        std::fs::create_dir_all(&src).unwrap();
        let file = src.join("my file#1.cpp");
        std::fs::write(&file, "").unwrap();
        let root = RepoRoot::at(&dir.path().join("root")).unwrap();
        let a = artifact(&root, &file);
        assert_eq!(a.uri, "src/my%20file%231.cpp");
        assert_eq!(a.uri_base_id, Some(SRCROOT));
        // Outside the root: an absolute URI.
        let inner = RepoRoot::at(&src).unwrap();
        let outside = dir.path().join("a b.cpp");
        let a = artifact(&inner, &outside);
        assert!(
            a.uri.starts_with("file:///") && a.uri.ends_with("/a%20b.cpp"),
            "{}",
            a.uri
        );
        assert_eq!(a.uri_base_id, None);
        assert!(directory_uri(&src).ends_with("/root/src/"));
    }

    #[test]
    fn descriptions_fit_github_limits() {
        let long = "word ".repeat(400);
        assert!(description(&long).chars().count() <= MAX_DESCRIPTION);
        assert_eq!(description("a\nb"), "a b");
        assert_eq!(pascal_case("gil-lock-inversion"), "GilLockInversion");
    }
}

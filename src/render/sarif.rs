//! `--format sarif`: SARIF 2.1.0 as GitHub code scanning reads it.
//!
//! Hand-rolled serde structs for the subset GitHub uses (as ruff does; `serde-sarif` does not build
//! on its own). Each result has the finding's root cause as its only location, the call path as
//! `codeFlows` (one `threadFlow` per thread of a deadlock), every step again as a
//! `relatedLocations` entry, and `partialFingerprints.primaryLocationLineHash` computed exactly as
//! `github/codeql-action` computes it, so that alerts keep their identity when lines move.
//!
//! Paths are made relative to the current directory with `uriBaseId` `%SRCROOT%`; run gil-lint from
//! the repository root for GitHub to place them. Columns count UTF-16 code units (`columnKind`),
//! as GitHub and VS Code do; spans are byte offsets and are converted here.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::baseline;
use crate::diagnostic::{Confidence, Finding, Severity};
use crate::lints::Lint;
use crate::model::{Program, SourceFile, Span};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
const SRCROOT: &str = "%SRCROOT%";
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
    invocations: [Invocation<'a>; 1],
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
#[serde(rename_all = "camelCase")]
struct Invocation<'a> {
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
    message: Text,
    locations: [Location; 1],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    code_flows: Vec<CodeFlow>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    properties: ResultProperties,
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

/// Where the document's relative paths start; `None` leaves `originalUriBaseIds` out (for
/// deterministic snapshots).
pub struct Options {
    pub source_root: Option<std::path::PathBuf>,
}

impl Options {
    /// `%SRCROOT%` is the current directory, against which paths are shown.
    pub fn from_current_dir() -> Self {
        Options {
            source_root: std::env::current_dir().ok(),
        }
    }
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
    let results = findings
        .iter()
        .map(|finding| result(program, finding, rules, &hashes))
        .collect();
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
            invocations: [Invocation {
                execution_successful: true,
                tool_execution_notifications: errors
                    .iter()
                    .map(|e| Notification {
                        level: "warning",
                        message: TextRef { text: e },
                    })
                    .collect(),
            }],
            original_uri_base_ids: options.source_root.as_deref().map(|root| {
                BTreeMap::from([(
                    SRCROOT,
                    ArtifactLocation {
                        uri: directory_uri(root),
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
        help_uri: format!(
            "{}/blob/main/docs/rules/{}.md",
            env!("CARGO_PKG_REPOSITORY"),
            rule.id
        ),
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
) -> SarifResult<'a> {
    let rule_index = rules
        .iter()
        .position(|r| r.id == finding.rule)
        .expect("every finding's rule is listed");
    let primary = location(program, finding.primary, None, Some(&finding.primary_label));
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
                    location: location(program, step.span, None, Some(&step.note)),
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
                related.push(location(program, step.span, Some(id), Some(&message)));
            }
            // A single path ends where the finding is.
            let ends_at_primary = flow.steps.last().is_some_and(|s| s.span == finding.primary);
            if !threaded && !ends_at_primary {
                locations.push(ThreadFlowLocation {
                    location: location(
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
        ("gilLint/v1", baseline::fingerprint(program, finding)),
    ]);
    SarifResult {
        rule_id: finding.rule,
        rule_index,
        level: level(finding.severity),
        rank: rank(finding.confidence()),
        message: Text { text: message },
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

fn location(program: &Program, span: Span, id: Option<usize>, message: Option<&str>) -> Location {
    let file = &program.file(span.file);
    let (start_line, start_column) = utf16_position(file, span.start as usize);
    let (end_line, end_column) = utf16_position(file, span.end.max(span.start) as usize);
    Location {
        id,
        physical_location: PhysicalLocation {
            artifact_location: artifact(&file.path),
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

/// A path relative to `%SRCROOT%` when it is below it, an absolute `file://` URI otherwise.
fn artifact(path: &std::path::Path) -> ArtifactLocation {
    let relative = path.is_relative()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if relative {
        let parts: Vec<String> = path
            .components()
            .map(|c| percent_encode(&c.as_os_str().to_string_lossy()))
            .collect();
        return ArtifactLocation {
            uri: parts.join("/"),
            uri_base_id: Some(SRCROOT),
        };
    }
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    ArtifactLocation {
        uri: file_uri(&absolute, false),
        uri_base_id: None,
    }
}

fn directory_uri(dir: &std::path::Path) -> String {
    file_uri(dir, true)
}

fn file_uri(path: &std::path::Path, directory: bool) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut uri = String::from("file://");
    if !text.starts_with('/') {
        uri.push('/');
    }
    uri.push_str(
        &text
            .split('/')
            .map(percent_encode)
            .collect::<Vec<_>>()
            .join("/"),
    );
    if directory && !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// Percent-encodes one path segment (RFC 3986: unreserved characters and a few sub-delimiters
/// stay; a drive letter's colon too).
fn percent_encode(segment: &str) -> String {
    let mut out = String::new();
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
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
    fn uris_are_relative_and_encoded() {
        let a = artifact(std::path::Path::new("src/my file#1.cpp"));
        assert_eq!(a.uri, "src/my%20file%231.cpp");
        assert_eq!(a.uri_base_id, Some(SRCROOT));
        assert_eq!(
            directory_uri(std::path::Path::new("/work/a b")),
            "file:///work/a%20b/"
        );
    }

    #[test]
    fn descriptions_fit_github_limits() {
        let long = "word ".repeat(400);
        assert!(description(&long).chars().count() <= MAX_DESCRIPTION);
        assert_eq!(description("a\nb"), "a b");
        assert_eq!(pascal_case("gil-lock-inversion"), "GilLockInversion");
    }
}

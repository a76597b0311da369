//! Baselines, for adopting gil-lint on a codebase that already has findings: `--write-baseline
//! FILE` records the current findings, `--baseline FILE` reports only the ones not recorded.
//!
//! A finding is recorded by its rule and a fingerprint of its rule, file (relative to the
//! repository root, [`crate::repo`], so that a baseline matches from any folder), function and the
//! text of its primary line with all whitespace removed, so a finding keeps its fingerprint when
//! lines are added above it or it is re-indented, and loses it when its own line changes. Several
//! findings with one fingerprint are counted.
//!
//! The baseline file is usually committed, so a pull request can change it into anything: it is
//! read as [`crate::input`] reads every untrusted file (a regular file of at most [`FILE_LIMIT`]
//! bytes, never blocking), and an error names its position and what is wrong, never its contents.
//! It is written atomically (a temporary file in the same directory, renamed over it), and never
//! through a symbolic link: [`save`] refuses a `FILE` that is a link or not a regular file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::diagnostic::Finding;
use crate::input::{self, shown};
use crate::model::Program;
use crate::repo::RepoRoot;

const VERSION: u32 = 1;

/// The most a baseline file may hold, in bytes (about 300,000 findings).
pub const FILE_LIMIT: u64 = 64 << 20;

#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    findings: Vec<Entry>,
}

/// One recorded finding; `path` and `message` are for people reading the file.
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    rule: String,
    fingerprint: String,
    path: String,
    message: String,
}

pub struct Baseline {
    /// `(rule, fingerprint)` -> how many findings it still accepts.
    remaining: BTreeMap<(String, String), usize>,
}

/// What applying a baseline did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Findings the baseline accepted (not reported).
    pub matched: usize,
    /// Baseline entries no finding matched: fixed since, or changed.
    pub stale: usize,
}

/// FNV-1a, 64 bits: stable across platforms and releases (unlike `std`'s hasher).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// The finding's fingerprint: 16 hex digits. The file is named relative to `root`, so that a
/// baseline matches from any folder of the repository.
pub fn fingerprint(program: &Program, finding: &Finding, root: &RepoRoot) -> String {
    let file = &program.file(finding.primary.file);
    let line = file.line_col(finding.primary.start).0;
    let start = file.line_start(line - 1);
    let end = file.text[start..]
        .find('\n')
        .map_or(file.text.len(), |e| start + e);
    let content: String = file.text[start..end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let path = root.name(&file.path);
    format!(
        "{:016x}",
        fnv1a(&[finding.rule, &path, &finding.function, &content])
    )
}

/// The baseline file for `findings`, sorted so that rewriting it gives a small diff.
pub fn write(program: &Program, findings: &[Finding], root: &RepoRoot) -> String {
    let mut entries: Vec<Entry> = findings
        .iter()
        .map(|f| Entry {
            rule: f.rule.to_string(),
            fingerprint: fingerprint(program, f, root),
            path: root.name(&program.file(f.primary.file).path),
            message: f.message.clone(),
        })
        .collect();
    entries.sort();
    let file = File {
        version: VERSION,
        findings: entries,
    };
    serde_json::to_string_pretty(&file).expect("plain data serialises") + "\n"
}

/// Writes the baseline file for `findings` to `path` with [`write_file`].
pub fn save(
    path: &Path,
    program: &Program,
    findings: &[Finding],
    root: &RepoRoot,
) -> Result<(), String> {
    write_file(path, write(program, findings, root).as_bytes())
        .map_err(|reason| format!("{}: cannot write the baseline: {reason}", shown(path)))
}

/// Whether [`save`] would accept `path`, to refuse a symbolic link before a long run rather than
/// after it ([`save`] checks again).
pub fn check_writable(path: &Path) -> Result<(), String> {
    replaceable(path)
        .map(|_| ())
        .map_err(|reason| format!("{}: cannot write the baseline: {reason}", shown(path)))
}

/// The permissions of the regular file at `path`, `None` when there is none, or why it must not be
/// replaced: it is a symbolic link (dangling or not) or not a regular file.
fn replaceable(path: &Path) -> Result<Option<std::fs::Permissions>, String> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err("it is a symbolic link, which is not \
                                                    followed (name the file it points to, or \
                                                    remove the link)"
            .to_string()),
        Ok(m) if !m.is_file() => Err(format!("it is {}, not a regular file", input::kind_of(&m))),
        Ok(m) => Ok(Some(m.permissions())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(input::one_line(&e.to_string())),
    }
}

/// Replaces the file at `path` with `contents`, atomically: a temporary file in the same directory,
/// written and synced, then renamed over `path`, so a reader never sees half a file and a failed
/// write leaves the old one. A `path` that is a symbolic link (or anything but a regular file) is
/// refused, not followed: a link committed in the tree cannot make gil-lint write outside it.
/// An existing file keeps its permissions; a new one gets the usual `0o666` less the umask.
/// `Err` is the reason, on one line.
pub fn write_file(path: &Path, contents: &[u8]) -> Result<(), String> {
    let reason = |e: std::io::Error| input::one_line(&e.to_string());
    let existing = replaceable(path)?;
    let dir = input::parent_dir(path);
    let mut builder = tempfile::Builder::new();
    builder.prefix(".gil-lint-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(dir).map_err(reason)?;
    if let Some(permissions) = existing {
        temp.as_file()
            .set_permissions(permissions)
            .map_err(reason)?;
    }
    temp.write_all(contents).map_err(reason)?;
    temp.as_file().sync_all().map_err(reason)?;
    temp.persist(path).map_err(|e| reason(e.error))?;
    Ok(())
}

/// Why a baseline's text was refused: where (1-based line and column), when known, and what is
/// wrong, in words of gil-lint's own: serde's message is not used, as it can quote a value.
struct ParseError {
    at: Option<(usize, usize)>,
    reason: String,
}

impl ParseError {
    fn json(e: &serde_json::Error) -> Self {
        use serde_json::error::Category;
        let reason = match e.classify() {
            Category::Syntax => "not a gil-lint baseline: not valid JSON",
            Category::Eof => "not a gil-lint baseline: the JSON ends too early",
            Category::Data => "not a gil-lint baseline: a field is missing or has the wrong type",
            Category::Io => "cannot be read",
        };
        ParseError {
            at: Some((e.line(), e.column())),
            reason: reason.to_string(),
        }
    }

    /// `prefix:line:col: reason`, or `prefix: reason`; without a prefix, no leading colon.
    fn located(&self, prefix: &str) -> String {
        let at = match self.at {
            Some((line, column)) => format!("{line}:{column}"),
            None => String::new(),
        };
        let place = match (prefix.is_empty(), at.is_empty()) {
            (true, true) => return self.reason.clone(),
            (false, false) => format!("{prefix}:{at}"),
            _ => format!("{prefix}{at}"),
        };
        format!("{place}: {}", self.reason)
    }
}

impl Baseline {
    /// Reads a baseline file: a regular file of at most [`FILE_LIMIT`] bytes. The error is one
    /// line naming the file, and at most a position in it.
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let bytes = input::read_regular(path, FILE_LIMIT)
            .map_err(|e| format!("{}: cannot read the baseline: {}", shown(path), e.detail()))?;
        Self::parse_bytes(&bytes).map_err(|e| e.located(&shown(path)))
    }

    /// Parses a baseline; `Err` is `line:col: reason` or `reason`, never the text's contents.
    pub fn parse(text: &str) -> Result<Baseline, String> {
        Self::parse_bytes(text.as_bytes()).map_err(|e| e.located(""))
    }

    fn parse_bytes(bytes: &[u8]) -> Result<Baseline, ParseError> {
        let file: File = serde_json::from_slice(bytes).map_err(|e| ParseError::json(&e))?;
        if file.version != VERSION {
            return Err(ParseError {
                at: None,
                reason: format!(
                    "this baseline's version is not supported (gil-lint reads version \
                     {VERSION}); rewrite it with --write-baseline"
                ),
            });
        }
        let mut remaining = BTreeMap::new();
        for entry in file.findings {
            *remaining
                .entry((entry.rule, entry.fingerprint))
                .or_insert(0) += 1;
        }
        Ok(Baseline { remaining })
    }

    /// Removes the findings the baseline accepts.
    pub fn apply(
        mut self,
        program: &Program,
        findings: &mut Vec<Finding>,
        root: &RepoRoot,
    ) -> Applied {
        let before = findings.len();
        findings.retain(|f| {
            let key = (f.rule.to_string(), fingerprint(program, f, root));
            match self.remaining.get_mut(&key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            }
        });
        Applied {
            matched: before - findings.len(),
            stale: self.remaining.values().sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_give_a_position_never_the_contents() {
        let cases = [
            (
                "GIL_LINT_SECRET=s3cr3t",
                "1:1: not a gil-lint baseline: not valid JSON",
            ),
            (
                "{\"version\": \"s3cr3t\", \"findings\": []}",
                "1:20: not a gil-lint baseline: a field is missing or has the wrong type",
            ),
            (
                "{\"s3cr3t\": 1}",
                "1:13: not a gil-lint baseline: a field is missing or has the wrong type",
            ),
            (
                "{\"version\": 1",
                "1:13: not a gil-lint baseline: the JSON ends too early",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(
                Baseline::parse(text).err().as_deref(),
                Some(expected),
                "{text}"
            );
        }
        let err = Baseline::parse("{\"version\": 99, \"findings\": []}")
            .err()
            .unwrap();
        assert!(
            err.starts_with("this baseline's version is not supported"),
            "{err}"
        );
        assert!(!err.contains("99"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        std::fs::write(&path, "{\"version\": 99, \"findings\": []}").unwrap();
        let err = Baseline::load(&path).err().unwrap();
        assert!(err.starts_with(&format!("{}: this baseline's version", shown(&path))));
        std::fs::write(&path, "[]").unwrap();
        let err = Baseline::load(&path).err().unwrap();
        assert!(err.starts_with(&format!("{}:1:2: not a gil-lint baseline", shown(&path))));
        assert!(Baseline::parse("{\"version\": 1, \"findings\": []}").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_baseline_that_is_not_a_regular_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("baseline.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let err = Baseline::load(&link).err().unwrap();
        assert_eq!(
            err,
            format!(
                "{}: cannot read the baseline: not a regular file (a character device)",
                shown(&link)
            )
        );
    }

    #[test]
    fn write_file_replaces_a_file_and_keeps_its_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baseline.json");
        write_file(&path, b"one\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        }
        write_file(&path, b"two\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o640);
        }
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        // A directory that does not exist is an error, not created.
        assert!(write_file(&dir.path().join("no-such-dir/x.json"), b"").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn write_file_refuses_a_symbolic_link_and_what_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        std::fs::write(&target, b"keep me").unwrap();
        let link = dir.path().join("baseline.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = write_file(&link, b"new").unwrap_err();
        assert!(err.starts_with("it is a symbolic link"), "{err}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // Dangling, it is refused all the same (writing would create the target).
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(write_file(&dangling, b"new").is_err());
        assert!(!dir.path().join("nowhere").exists());
        let err = write_file(Path::new("/dev/null"), b"new").unwrap_err();
        assert_eq!(err, "it is a character device, not a regular file");
        let err = write_file(dir.path(), b"new").unwrap_err();
        assert_eq!(err, "it is a directory, not a regular file");
    }
}

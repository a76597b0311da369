//! Project configuration: `.gil-lint.toml`, `gil-lint.toml` or `[tool.gil-lint]` in
//! `pyproject.toml`, found by walking up from the first checked path (the nearest directory that
//! has one wins; a `pyproject.toml` without `[tool.gil-lint]` is passed over), as ruff does.
//!
//! ```toml
//! select = ["missing-gil", "gil-lock-inversion"]   # default: every rule
//! ignore = ["gil-held-blocking"]
//! exclude = ["third_party/**", "build"]            # relative to this file's directory
//! knowledge = ["tools/gil-wrappers.toml"]          # in the format of rules/*.toml
//! warn-unused-suppressions = true
//! max-file-size = "4MiB"                           # larger source files are skipped
//! min-confidence = "high"                          # hide findings whose path guesses a call
//!
//! [severity]
//! gil-held-blocking = "warning"
//! ```
//!
//! Unknown keys, unknown rules and bad values are errors that name the file, line and column.
//!
//! The file is part of the analysed tree, so it is untrusted: it is read as [`crate::input`] reads
//! every such file (a regular file, at most [`FILE_LIMIT`] bytes, never blocking), and the
//! knowledge files it names are read only if, with symbolic links resolved, they are regular files
//! inside its directory: a configuration cannot make gil-lint read `/proc/self/environ`,
//! `/dev/zero` or a FIFO. (`--knowledge` on the command line is trusted for where it points.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use globset::GlobSet;
use serde::Deserialize;
use toml::Spanned;

use crate::diagnostic::{Confidence, Severity};
use crate::input::{self, located, shown};

/// The most a configuration file may hold, in bytes.
pub const FILE_LIMIT: u64 = 1 << 20;

/// The names searched in each directory, in order of preference.
pub const FILE_NAMES: [&str; 3] = [".gil-lint.toml", "gil-lint.toml", "pyproject.toml"];

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    select: Option<Vec<Spanned<String>>>,
    ignore: Option<Vec<Spanned<String>>>,
    exclude: Option<Vec<Spanned<String>>>,
    knowledge: Option<Vec<Spanned<String>>>,
    severity: Option<BTreeMap<Spanned<String>, Level>>,
    warn_unused_suppressions: Option<bool>,
    max_file_size: Option<Spanned<String>>,
    min_confidence: Option<Confidence>,
    cache: Option<bool>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Level {
    Error,
    Warning,
}

#[derive(Deserialize)]
struct Pyproject {
    tool: Option<PyprojectTools>,
}

#[derive(Deserialize)]
struct PyprojectTools {
    #[serde(rename = "gil-lint")]
    gil_lint: Option<RawConfig>,
}

/// A configuration file, read and checked.
#[derive(Debug, Default, Clone)]
pub struct Config {
    /// The file it came from; `None` for the default configuration.
    pub path: Option<PathBuf>,
    pub select: Option<BTreeSet<String>>,
    pub ignore: BTreeSet<String>,
    /// Globs, matched against paths relative to the file's directory.
    pub exclude: Vec<String>,
    /// Resolved against the file's directory.
    pub knowledge: Vec<PathBuf>,
    pub severity: BTreeMap<String, Severity>,
    pub warn_unused_suppressions: Option<bool>,
    /// Source files larger than this many bytes are skipped with a warning.
    pub max_file_size: Option<u64>,
    /// Findings less sure than this are not reported.
    pub min_confidence: Option<Confidence>,
    /// `false`: keep no cache of per-file facts between runs.
    pub cache: Option<bool>,
}

/// A configuration as parsed, with where each of its knowledge files is written.
struct Parsed {
    config: Config,
    /// For each of `config.knowledge`: the path as written and its span in the file.
    knowledge: Vec<(String, std::ops::Range<usize>)>,
}

impl Config {
    /// Reads a configuration file; for `pyproject.toml`, `Ok(None)` when it has no
    /// `[tool.gil-lint]` table. `rules` are the rule ids a file may name.
    ///
    /// The file must be a regular file of at most [`FILE_LIMIT`] bytes of UTF-8 text. Its
    /// `knowledge` paths come back resolved (symbolic links followed), each checked to be a regular
    /// file inside the file's directory; one that is not is an error at its `line:col`.
    pub fn load(path: &Path, rules: &[&str]) -> Result<Option<Config>, String> {
        let text = input::read_text(path, FILE_LIMIT).map_err(|e| e.to_string())?;
        let Some(Parsed {
            mut config,
            knowledge,
        }) = Self::parse_spanned(path, &text, rules)?
        else {
            return Ok(None);
        };
        config.knowledge = confine_knowledge(path, &text, &config.knowledge, &knowledge)?;
        Ok(Some(config))
    }

    /// Parses a configuration's text; `knowledge` paths are joined to `path`'s directory but not
    /// looked at ([`Config::load`] checks them).
    pub fn parse(path: &Path, text: &str, rules: &[&str]) -> Result<Option<Config>, String> {
        Ok(Self::parse_spanned(path, text, rules)?.map(|parsed| parsed.config))
    }

    fn parse_spanned(path: &Path, text: &str, rules: &[&str]) -> Result<Option<Parsed>, String> {
        let toml_error = |e: toml::de::Error| {
            let message = e
                .message()
                .trim_end()
                .replace("unknown field", "unknown key");
            located(path, text, e.span(), &message)
        };
        let raw = if path.file_name().is_some_and(|n| n == "pyproject.toml") {
            let pyproject: Pyproject = toml::from_str(text).map_err(toml_error)?;
            match pyproject.tool.and_then(|t| t.gil_lint) {
                Some(raw) => raw,
                None => return Ok(None),
            }
        } else {
            toml::from_str(text).map_err(toml_error)?
        };
        let rule = |name: &Spanned<String>| -> Result<String, String> {
            if rules.contains(&name.get_ref().as_str()) {
                Ok(name.get_ref().clone())
            } else {
                Err(located(
                    path,
                    text,
                    Some(name.span()),
                    &unknown_rule(name.get_ref(), rules),
                ))
            }
        };
        let rule_set = |names: Option<Vec<Spanned<String>>>| {
            names
                .map(|names| names.iter().map(rule).collect::<Result<BTreeSet<_>, _>>())
                .transpose()
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let exclude = raw.exclude.unwrap_or_default();
        let knowledge = raw.knowledge.unwrap_or_default();
        for glob in &exclude {
            globset::Glob::new(glob.get_ref()).map_err(|e| {
                located(
                    path,
                    text,
                    Some(glob.span()),
                    &format!("invalid glob: {}", e.kind()),
                )
            })?;
        }
        let mut severity = BTreeMap::new();
        for (name, level) in raw.severity.unwrap_or_default() {
            let level = match level {
                Level::Error => Severity::Error,
                Level::Warning => Severity::Warning,
            };
            severity.insert(rule(&name)?, level);
        }
        let max_file_size = raw
            .max_file_size
            .map(|size| {
                input::parse_size(size.get_ref())
                    .map_err(|e| located(path, text, Some(size.span()), &e))
            })
            .transpose()?;
        let config = Config {
            path: Some(path.to_path_buf()),
            select: rule_set(raw.select)?,
            ignore: rule_set(raw.ignore)?.unwrap_or_default(),
            exclude: exclude.into_iter().map(Spanned::into_inner).collect(),
            knowledge: knowledge.iter().map(|k| dir.join(k.get_ref())).collect(),
            severity,
            warn_unused_suppressions: raw.warn_unused_suppressions,
            max_file_size,
            min_confidence: raw.min_confidence,
            cache: raw.cache,
        };
        Ok(Some(Parsed {
            config,
            knowledge: knowledge
                .into_iter()
                .map(|k| {
                    let span = k.span();
                    (k.into_inner(), span)
                })
                .collect(),
        }))
    }

    /// The configuration for `start` (a file or directory): the nearest file above it, or the
    /// default configuration when there is none.
    pub fn discover(start: &Path, rules: &[&str]) -> Result<Config, String> {
        for candidate in Self::candidates(start) {
            // Anything so named but a directory is the configuration: a FIFO, a device or a
            // dangling link is an error naming it, not a file to pass over silently.
            let present = std::fs::symlink_metadata(&candidate).is_ok_and(|m| !m.is_dir());
            if present && let Some(config) = Self::load(&candidate, rules)? {
                return Ok(config);
            }
        }
        Ok(Config::default())
    }

    /// Where [`Config::discover`] looks, in order: each of [`FILE_NAMES`] in the directory of
    /// `start` (which need not exist), then in each directory above it.
    pub fn candidates(start: &Path) -> Vec<PathBuf> {
        let start = std::fs::canonicalize(start)
            .or_else(|_| std::path::absolute(start))
            .unwrap_or_else(|_| start.to_path_buf());
        let first = if start.is_dir() {
            Some(start.as_path())
        } else {
            start.parent()
        };
        std::iter::successors(first, |dir| dir.parent())
            .flat_map(|dir| FILE_NAMES.map(|name| dir.join(name)))
            .collect()
    }

    /// The directory its relative paths and globs start from.
    pub fn root(&self) -> Option<PathBuf> {
        let dir = self.path.as_deref()?.parent()?;
        Some(std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()))
    }

    /// Whether `id` runs: selected (every rule when nothing is selected) and not ignored.
    pub fn enabled(&self, id: &str) -> bool {
        self.select.as_ref().is_none_or(|s| s.contains(id)) && !self.ignore.contains(id)
    }

    /// The configured `exclude` globs, matched relative to the configuration's directory.
    pub fn excluder(&self) -> Result<Excluder, String> {
        Ok(Excluder {
            root: self.root(),
            set: crate::discover::exclude_set(&self.exclude)?,
        })
    }
}

/// The error for a rule id that is not one of `rules`, with the nearest one when `name` looks
/// like a misspelling of it.
pub fn unknown_rule(name: &str, rules: &[&str]) -> String {
    // Close enough to be a typo (`missing-gill`, `missing_gil`), not another word.
    const SIMILAR: f64 = 0.8;
    let nearest = rules
        .iter()
        .map(|rule| (strsim::jaro_winkler(name, rule), rule))
        .filter(|(similarity, _)| *similarity > SIMILAR)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let name = input::one_line(name);
    match nearest {
        Some((_, rule)) => {
            format!("unknown rule `{name}`; did you mean `{rule}`? (`gil-lint rules` lists them)")
        }
        None => format!("unknown rule `{name}`; `gil-lint rules` lists them"),
    }
}

/// The configuration's `knowledge` paths (`joined` to its directory, `written` as in the file),
/// resolved, each a regular file of at most [`crate::knowledge::FILE_LIMIT`] bytes inside the
/// directory of the configuration `path` once symbolic links are followed.
fn confine_knowledge(
    path: &Path,
    text: &str,
    joined: &[PathBuf],
    written: &[(String, std::ops::Range<usize>)],
) -> Result<Vec<PathBuf>, String> {
    if joined.is_empty() {
        return Ok(Vec::new());
    }
    let root = std::fs::canonicalize(input::parent_dir(path)).map_err(|e| {
        format!(
            "{}: cannot resolve its directory: {}",
            shown(path),
            input::one_line(&e.to_string())
        )
    })?;
    let limit = crate::knowledge::FILE_LIMIT;
    joined
        .iter()
        .zip(written)
        .map(|(joined, (written, span))| {
            let at = |message: String| {
                let written = shown(Path::new(written));
                located(
                    path,
                    text,
                    Some(span.clone()),
                    &format!("knowledge file `{written}` {message}"),
                )
            };
            let resolved = std::fs::canonicalize(joined).map_err(|e| {
                at(format!(
                    "cannot be read: {}",
                    input::one_line(&e.to_string())
                ))
            })?;
            if !resolved.starts_with(&root) {
                return Err(at(format!(
                    "is outside the configuration's directory {} (symbolic links resolved); \
                     only files inside it are read",
                    shown(&root)
                )));
            }
            let metadata = std::fs::metadata(&resolved).map_err(|e| {
                at(format!(
                    "cannot be read: {}",
                    input::one_line(&e.to_string())
                ))
            })?;
            input::check_regular(&metadata, limit)
                .map_err(|kind| at(format!("is {}", kind.reason())))?;
            Ok(resolved)
        })
        .collect()
}

pub struct Excluder {
    root: Option<PathBuf>,
    set: GlobSet,
}

impl Excluder {
    /// Whether the file at `path` is excluded: a glob matches its path relative to the
    /// configuration's directory, one of its parent directories, or a trailing part of it.
    pub fn is_excluded(&self, path: &Path) -> bool {
        let (Some(root), false) = (&self.root, self.set.is_empty()) else {
            return false;
        };
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let Ok(relative) = absolute.strip_prefix(root) else {
            return false;
        };
        relative
            .ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .any(|a| crate::discover::matches(&self.set, a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &[&str] = &["missing-gil", "gil-held-blocking"];

    fn parse(name: &str, text: &str) -> Result<Option<Config>, String> {
        Config::parse(Path::new(name), text, RULES)
    }

    #[test]
    fn reads_every_key() {
        let config = parse(
            "proj/gil-lint.toml",
            "select = [\"missing-gil\"]\nignore = [\"gil-held-blocking\"]\n\
             exclude = [\"third_party/**\"]\nknowledge = [\"k.toml\"]\n\
             warn-unused-suppressions = true\n[severity]\nmissing-gil = \"warning\"\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.select, Some(BTreeSet::from(["missing-gil".into()])));
        assert!(config.enabled("missing-gil"));
        assert!(!config.enabled("gil-held-blocking"));
        assert_eq!(config.exclude, ["third_party/**"]);
        assert_eq!(config.knowledge, [PathBuf::from("proj/k.toml")]);
        assert_eq!(config.severity["missing-gil"], Severity::Warning);
        assert_eq!(config.warn_unused_suppressions, Some(true));
    }

    #[test]
    fn unknown_keys_are_located() {
        let err = parse("gil-lint.toml", "select = []\n\nselct = [\"x\"]\n").unwrap_err();
        assert!(
            err.starts_with("gil-lint.toml:3:1: unknown key `selct`"),
            "{err}"
        );
        let err = parse("gil-lint.toml", "[severity]\nmissing-gil = \"loud\"\n").unwrap_err();
        assert!(
            err.starts_with("gil-lint.toml:2:15: unknown variant `loud`"),
            "{err}"
        );
    }

    #[test]
    fn unknown_rules_and_bad_globs_are_located() {
        let err = parse("gil-lint.toml", "ignore = [\"missing-gil\", \"nope\"]\n").unwrap_err();
        assert_eq!(
            err,
            "gil-lint.toml:1:26: unknown rule `nope`; `gil-lint rules` lists them"
        );
        let err = parse("gil-lint.toml", "select = [\"missing_gil\"]\n").unwrap_err();
        assert_eq!(
            err,
            "gil-lint.toml:1:11: unknown rule `missing_gil`; did you mean `missing-gil`? \
             (`gil-lint rules` lists them)"
        );
        let err = parse("gil-lint.toml", "[severity]\nnope = \"error\"\n").unwrap_err();
        assert!(
            err.starts_with("gil-lint.toml:2:1: unknown rule `nope`"),
            "{err}"
        );
        let err = parse("gil-lint.toml", "exclude = [\"a/[b\"]\n").unwrap_err();
        assert!(err.starts_with("gil-lint.toml:1:12: invalid glob"), "{err}");
    }

    /// A project directory with `gil-lint.toml` naming `knowledge`, beside `outside.toml`.
    fn project(knowledge: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("proj");
        std::fs::create_dir_all(project.join("tools")).unwrap();
        let knowledge_file = "[framework]\nname = 'x'\nlanguage = 'cpp'\n";
        std::fs::write(project.join("tools/k.toml"), knowledge_file).unwrap();
        std::fs::write(dir.path().join("outside.toml"), knowledge_file).unwrap();
        let config = project.join("gil-lint.toml");
        std::fs::write(
            &config,
            format!("select = []\nknowledge = [\"tools/k.toml\", \"{knowledge}\"]\n"),
        )
        .unwrap();
        (dir, config)
    }

    fn load(path: &Path) -> Result<Option<Config>, String> {
        Config::load(path, RULES)
    }

    #[test]
    fn knowledge_inside_the_directory_is_resolved() {
        let (dir, config) = project("./tools/../tools/k.toml");
        let config = load(&config).unwrap().unwrap();
        let k = std::fs::canonicalize(dir.path().join("proj/tools/k.toml")).unwrap();
        assert_eq!(config.knowledge, [k.clone(), k]);
    }

    #[test]
    fn knowledge_outside_the_directory_is_refused_at_its_position() {
        for written in ["../outside.toml", "/etc/passwd"] {
            let (_dir, config) = project(written);
            let err = load(&config).unwrap_err();
            let at = format!(
                "{}:2:30: knowledge file `{written}` is outside",
                shown(&config)
            );
            assert!(err.starts_with(&at), "{err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn knowledge_through_a_symbolic_link_is_checked_where_it_points() {
        let (dir, config) = project("tools/link.toml");
        let link = dir.path().join("proj/tools/link.toml");
        std::os::unix::fs::symlink("../../outside.toml", &link).unwrap();
        let err = load(&config).unwrap_err();
        assert!(
            err.contains("knowledge file `tools/link.toml` is outside"),
            "{err}"
        );
        // A link that stays inside is followed.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("k.toml", &link).unwrap();
        assert!(load(&config).is_ok());
        // A link to a device inside the tree is not a regular file.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(load(&config).unwrap_err().contains("is outside"));
        std::fs::remove_file(&link).unwrap();
        std::fs::create_dir(&link).unwrap();
        let err = load(&config).unwrap_err();
        assert!(
            err.ends_with("is not a regular file (a directory)"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_knowledge_file_is_located() {
        let (_dir, config) = project("tools/nope.toml");
        let err = load(&config).unwrap_err();
        assert!(
            err.starts_with(&format!(
                "{}:2:30: knowledge file `tools/nope.toml` cannot be read: ",
                shown(&config)
            )),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_configuration_itself_must_be_a_small_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("gil-lint.toml");
        std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
        let err = Config::discover(dir.path(), RULES).unwrap_err();
        assert_eq!(
            err,
            format!(
                "{}: not a regular file (a character device)",
                shown(
                    &std::fs::canonicalize(dir.path())
                        .unwrap()
                        .join("gil-lint.toml")
                )
            )
        );
        std::fs::remove_file(&config).unwrap();
        std::fs::write(&config, vec![b'#'; FILE_LIMIT as usize + 1]).unwrap();
        assert!(load(&config).unwrap_err().ends_with(": larger than 1 MiB"));
        // A directory so named is passed over.
        std::fs::remove_file(&config).unwrap();
        std::fs::create_dir(&config).unwrap();
        assert!(Config::discover(dir.path(), RULES).unwrap().path.is_none());
    }

    #[test]
    fn pyproject_needs_a_tool_table() {
        assert!(
            parse(
                "pyproject.toml",
                "[project]\nname = \"x\"\n[tool.ruff]\nline-length = 1\n"
            )
            .unwrap()
            .is_none()
        );
        let config = parse(
            "pyproject.toml",
            "[project]\nname = \"x\"\n[tool.gil-lint]\nignore = [\"missing-gil\"]\n",
        )
        .unwrap()
        .unwrap();
        assert!(!config.enabled("missing-gil"));
        let err = parse("pyproject.toml", "[tool.gil-lint]\nbogus = 1\n").unwrap_err();
        assert!(
            err.starts_with("pyproject.toml:2:1: unknown key `bogus`"),
            "{err}"
        );
    }
}

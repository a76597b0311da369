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
//!
//! [severity]
//! gil-held-blocking = "warning"
//! ```
//!
//! Unknown keys, unknown rules and bad values are errors that name the file, line and column.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use globset::GlobSet;
use serde::Deserialize;
use toml::Spanned;

use crate::diagnostic::Severity;

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
}

/// `path:line:col: message`, 1-based, for a byte range of `text`.
fn located(path: &Path, text: &str, at: Option<std::ops::Range<usize>>, message: &str) -> String {
    match at {
        Some(range) => {
            let offset = range.start.min(text.len());
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("{}:{line}:{column}: {message}", path.display())
        }
        None => format!("{}: {message}", path.display()),
    }
}

impl Config {
    /// Reads a configuration file; for `pyproject.toml`, `Ok(None)` when it has no
    /// `[tool.gil-lint]` table. `rules` are the rule ids a file may name.
    pub fn load(path: &Path, rules: &[&str]) -> Result<Option<Config>, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        Self::parse(path, &text, rules)
    }

    pub fn parse(path: &Path, text: &str, rules: &[&str]) -> Result<Option<Config>, String> {
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
                    &format!(
                        "unknown rule `{}`; `gil-lint rules` lists them",
                        name.get_ref()
                    ),
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
        Ok(Some(Config {
            path: Some(path.to_path_buf()),
            select: rule_set(raw.select)?,
            ignore: rule_set(raw.ignore)?.unwrap_or_default(),
            exclude: exclude.into_iter().map(Spanned::into_inner).collect(),
            knowledge: raw
                .knowledge
                .unwrap_or_default()
                .into_iter()
                .map(|k| dir.join(k.into_inner()))
                .collect(),
            severity,
            warn_unused_suppressions: raw.warn_unused_suppressions,
        }))
    }

    /// The configuration for `start` (a file or directory): the nearest file above it, or the
    /// default configuration when there is none.
    pub fn discover(start: &Path, rules: &[&str]) -> Result<Config, String> {
        let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
        let mut dir = if start.is_dir() {
            Some(start.as_path())
        } else {
            start.parent()
        };
        while let Some(d) = dir {
            for name in FILE_NAMES {
                let candidate = d.join(name);
                if candidate.is_file()
                    && let Some(config) = Self::load(&candidate, rules)?
                {
                    return Ok(config);
                }
            }
            dir = d.parent();
        }
        Ok(Config::default())
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
        let err = parse("gil-lint.toml", "[severity]\nnope = \"error\"\n").unwrap_err();
        assert!(
            err.starts_with("gil-lint.toml:2:1: unknown rule `nope`"),
            "{err}"
        );
        let err = parse("gil-lint.toml", "exclude = [\"a/[b\"]\n").unwrap_err();
        assert!(err.starts_with("gil-lint.toml:1:12: invalid glob"), "{err}");
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

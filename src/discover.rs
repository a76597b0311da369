//! Finds the files to analyse: walks each path with the `ignore` crate (so `.gitignore`, `.ignore`
//! and hidden files are honoured, as in ripgrep and ruff) and keeps the languages we read.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::frontend::Language;
use crate::input;

pub struct Discovered {
    pub files: Vec<(PathBuf, Language)>,
    /// One line each: a path that could not be walked.
    pub errors: Vec<String>,
    /// The paths given that hold no file of a language we read (and could be walked).
    pub empty_roots: Vec<PathBuf>,
}

pub fn exclude_set(globs: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for glob in globs {
        let glob = Glob::new(glob).map_err(|e| format!("invalid --exclude glob `{glob}`: {e}"))?;
        builder.add(glob);
    }
    builder.build().map_err(|e| e.to_string())
}

/// An excluded path matches a glob by its path relative to the walked root, or by any of its
/// trailing components (`*.cu`, `third_party`, `build/**`).
fn is_excluded(exclude: &GlobSet, root: &Path, path: &Path) -> bool {
    let relative = path.strip_prefix(root).unwrap_or(path);
    exclude.is_match(path) || matches(exclude, relative)
}

/// Whether a glob matches the relative path `relative` or one of its trailing parts.
pub fn matches(exclude: &GlobSet, relative: &Path) -> bool {
    let components: Vec<_> = relative.components().collect();
    (0..components.len()).any(|i| exclude.is_match(components[i..].iter().collect::<PathBuf>()))
}

pub fn discover(paths: &[PathBuf], exclude: &GlobSet) -> Discovered {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let mut empty_roots = Vec::new();
    for root in paths {
        let (files_before, errors_before) = (files.len(), errors.len());
        let walker = ignore::WalkBuilder::new(root).follow_links(false).build();
        for entry in walker {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    errors.push(format!(
                        "{}: {}",
                        root.display(),
                        input::one_line(&err.to_string())
                    ));
                    continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                // A FIFO, socket or device named on the command line: say so, rather than
                // "no files found" (in the walk, such entries are passed over silently).
                if entry.depth() == 0
                    && let Ok(metadata) = entry.metadata()
                    && !metadata.is_dir()
                {
                    errors.push(format!(
                        "{}: not a regular file ({})",
                        input::shown(root),
                        input::kind_of(&metadata)
                    ));
                }
                continue;
            }
            let path = entry.path();
            if is_excluded(exclude, root, path) {
                continue;
            }
            if let Some(language) = Language::of(path) {
                files.push((path.to_path_buf(), language));
            }
        }
        if files.len() == files_before && errors.len() == errors_before {
            empty_roots.push(root.clone());
        }
    }
    files.sort();
    files.dedup();
    Discovered {
        files,
        errors,
        empty_roots,
    }
}

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
    if exclude.is_empty() {
        return false;
    }
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
        let found = walk(root, exclude);
        if found.files.is_empty() && found.errors.is_empty() {
            empty_roots.push(root.clone());
        }
        files.extend(found.files);
        errors.extend(found.errors);
    }
    files.sort();
    files.dedup();
    Discovered {
        files,
        errors,
        empty_roots,
    }
}

/// What one walk found.
#[derive(Default)]
struct Walked {
    files: Vec<(PathBuf, Language)>,
    errors: Vec<String>,
}

/// Walks `root` on as many threads as the run's pool has: each directory's ignore files are
/// read and its entries listed by whichever thread takes it (a large tree has thousands). What
/// the threads find is merged, files and errors sorted, so the result does not depend on
/// which thread found what.
fn walk(root: &Path, exclude: &GlobSet) -> Walked {
    let found = std::sync::Mutex::new(Walked::default());
    ignore::WalkBuilder::new(root)
        .follow_links(false)
        .threads(rayon::current_num_threads())
        .build_parallel()
        .run(|| {
            let found = &found;
            Box::new(move |entry| {
                if let Some(visited) = visit(root, exclude, entry) {
                    let mut found = found.lock().expect("no walker thread panics holding it");
                    match visited {
                        Ok(file) => found.files.push(file),
                        Err(error) => found.errors.push(error),
                    }
                }
                ignore::WalkState::Continue
            })
        });
    let mut found = found.into_inner().expect("no walker thread panicked");
    found.files.sort();
    found.errors.sort();
    found
}

/// The file of a language we read that `entry` is, or the line saying why it could not be
/// walked; `None` for anything else.
fn visit(
    root: &Path,
    exclude: &GlobSet,
    entry: Result<ignore::DirEntry, ignore::Error>,
) -> Option<Result<(PathBuf, Language), String>> {
    let entry = match entry {
        Ok(entry) => entry,
        Err(err) => {
            return Some(Err(format!(
                "{}: {}",
                root.display(),
                input::one_line(&err.to_string())
            )));
        }
    };
    if !entry.file_type().is_some_and(|t| t.is_file()) {
        // A FIFO, socket or device named on the command line: say so, rather than "no files
        // found" (in the walk, such entries are passed over silently).
        if entry.depth() == 0
            && let Ok(metadata) = entry.metadata()
            && !metadata.is_dir()
        {
            return Some(Err(format!(
                "{}: not a regular file ({})",
                input::shown(root),
                input::kind_of(&metadata)
            )));
        }
        return None;
    }
    let path = entry.path();
    if is_excluded(exclude, root, path) {
        return None;
    }
    Language::of(path).map(|language| Ok((path.to_path_buf(), language)))
}

/// The most a `Cargo.toml` may hold to be read for its dependencies.
const MAX_MANIFEST_SIZE: u64 = 1 << 20;

/// The local crates that the Rust crates at `roots` depend on, directly or not: a `path`
/// dependency in a crate's `Cargo.toml` (`[dependencies]`, and those of `[target.*]`), or a
/// `workspace = true` one that the workspace's `[workspace.dependencies]` gives a path. A
/// binding crate's calls into its engine crates resolve only if those are read too. Only
/// directories below `boundary` (the repository) are followed, each manifest is read once, and
/// an unreadable, oversized or malformed one adds nothing.
pub fn path_dependencies(roots: &[PathBuf], boundary: &Path) -> Vec<PathBuf> {
    // Compared with symbolic links resolved, so that none leads out of `boundary`.
    let Ok(boundary) = std::fs::canonicalize(boundary) else {
        return Vec::new();
    };
    let roots: Vec<PathBuf> = roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .collect();
    let mut seen: Vec<PathBuf> = roots.clone();
    let mut queue = roots.clone();
    let mut found = Vec::new();
    while let Some(dir) = queue.pop() {
        let Some(manifest) = read_manifest(&dir) else {
            continue;
        };
        let workspace = dir
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(&boundary))
            .find_map(|d| {
                let manifest = read_manifest(d)?;
                Some((
                    d.to_path_buf(),
                    manifest.get("workspace")?.as_table()?.clone(),
                ))
            });
        for (name, dependency) in dependency_entries(&manifest) {
            let Some(dependency) = dependency.as_table() else {
                continue;
            };
            let path = match dependency.get("path").and_then(toml::Value::as_str) {
                Some(path) => dir.join(path),
                None if dependency.get("workspace").and_then(toml::Value::as_bool)
                    == Some(true) =>
                {
                    let Some((root, table)) = &workspace else {
                        continue;
                    };
                    let Some(path) = table
                        .get("dependencies")
                        .and_then(|d| d.get(name))
                        .and_then(|d| d.get("path"))
                        .and_then(toml::Value::as_str)
                    else {
                        continue;
                    };
                    root.join(path)
                }
                None => continue,
            };
            let Ok(path) = std::fs::canonicalize(&path) else {
                continue;
            };
            let covered = seen.iter().any(|s| path.starts_with(s));
            if path.is_dir() && path.starts_with(&boundary) && !covered {
                seen.push(path.clone());
                queue.push(path.clone());
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// `dir/Cargo.toml` as a table, when it is a regular file of a sane size that parses.
fn read_manifest(dir: &Path) -> Option<toml::Table> {
    let path = dir.join("Cargo.toml");
    let metadata = std::fs::metadata(&path).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_MANIFEST_SIZE {
        return None;
    }
    std::fs::read_to_string(&path).ok()?.parse().ok()
}

/// Every `(name, entry)` of a manifest's `[dependencies]` and `[target.*.dependencies]`.
fn dependency_entries(manifest: &toml::Table) -> impl Iterator<Item = (&String, &toml::Value)> {
    let targets = manifest
        .get("target")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|targets| targets.values())
        .filter_map(|target| target.get("dependencies"));
    manifest
        .get("dependencies")
        .into_iter()
        .chain(targets)
        .filter_map(toml::Value::as_table)
        .flatten()
}

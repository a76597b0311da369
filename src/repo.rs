//! The repository root: the directory that SARIF's relative URIs (`%SRCROOT%`), the GitLab and
//! GitHub reports and baselines name files from. GitHub and GitLab resolve a report's paths
//! against the repository root, and a baseline must match whichever folder gil-lint runs in, so
//! these paths cannot be relative to the current directory.
//!
//! The root is the nearest directory at or above the checked path that holds `.git` (a directory,
//! or a file in a worktree or a submodule), else a fallback the caller chooses (the configuration
//! file's directory, the project, the current directory); `--repo-root` sets it.

use std::path::{Path, PathBuf};

use crate::input::shown;

pub struct RepoRoot {
    /// Absolute, symbolic links resolved.
    dir: PathBuf,
}

impl RepoRoot {
    /// The root named on the command line: a directory that exists.
    pub fn at(dir: &Path) -> Result<Self, String> {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => Ok(RepoRoot { dir: absolute(dir) }),
            Ok(_) => Err(format!("--repo-root {}: not a directory", shown(dir))),
            Err(e) => Err(format!(
                "--repo-root {}: {}",
                shown(dir),
                crate::input::one_line(&e.to_string())
            )),
        }
    }

    /// The nearest directory at or above `start` that holds a `.git` entry; `fallback` when
    /// there is none.
    pub fn find(start: &Path, fallback: &Path) -> Self {
        let start = absolute(start);
        let found = start
            .ancestors()
            .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok());
        RepoRoot {
            dir: found.map_or_else(|| absolute(fallback), Path::to_path_buf),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `path` relative to the root, `/`-separated; `None` when it is not below the root.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let rest = absolute(path).strip_prefix(&self.dir).ok()?.to_path_buf();
        let parts: Vec<String> = rest
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        (!parts.is_empty()).then(|| parts.join("/"))
    }

    /// How reports that cannot hold an absolute path name `path`: relative to the root, or when it
    /// is outside the root, as given (with `/`).
    pub fn name(&self, path: &Path) -> String {
        self.relative(path)
            .unwrap_or_else(|| path.to_string_lossy().replace('\\', "/"))
    }
}

/// `path` with symbolic links resolved; for a file that does not exist (one read from standard
/// input), its resolved directory joined with its name.
pub fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| {
            let (dir, name) = (crate::input::parent_dir(path), path.file_name());
            std::fs::canonicalize(dir).map(|dir| name.map_or_else(|| dir.clone(), |n| dir.join(n)))
        })
        .unwrap_or_else(|_| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_nearest_folder_with_git_else_the_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let sub = repo.join("csrc/deep");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("a.cpp"), "").unwrap();
        // No `.git`: the fallback.
        let root = RepoRoot::find(&sub, &repo.join("csrc"));
        assert_eq!(root.dir(), absolute(&repo.join("csrc")));
        assert_eq!(root.relative(&sub.join("a.cpp")).unwrap(), "deep/a.cpp");
        // A `.git` file (a worktree or submodule) counts as a `.git` directory does.
        std::fs::write(repo.join(".git"), "gitdir: elsewhere\n").unwrap();
        let root = RepoRoot::find(&sub.join("a.cpp"), dir.path());
        assert_eq!(root.dir(), absolute(&repo));
        assert_eq!(
            root.relative(&sub.join("a.cpp")).unwrap(),
            "csrc/deep/a.cpp"
        );
        // A file that does not exist (standard input) is named by its folder.
        assert_eq!(
            root.relative(&sub.join("new.cpp")).unwrap(),
            "csrc/deep/new.cpp"
        );
        // Outside the root: no relative path, and the path as given.
        assert_eq!(root.relative(dir.path()), None);
        let outside = dir.path().join("x.cpp");
        assert_eq!(root.name(&outside), outside.to_string_lossy());
    }

    #[test]
    fn a_named_root_must_be_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(RepoRoot::at(dir.path()).is_ok());
        let err = RepoRoot::at(&file).err().unwrap();
        assert!(err.ends_with("not a directory"), "{err}");
        assert!(RepoRoot::at(&dir.path().join("none")).is_err());
    }
}

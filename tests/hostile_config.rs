//! Hostile configuration, knowledge and baseline files, run through the built binary: a pull
//! request controls every file of the checked tree, including `gil-lint.toml` and a committed
//! baseline, and must not make gil-lint read outside the tree, hang on a FIFO, fill memory from
//! `/dev/zero`, print a secret from `/proc/self/environ` or write through a symbolic link. Each
//! case ends with exit 2 and one line naming the file, or the test says why not.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;

use common::{exit_code, wait_with_watchdog};

/// A binding whose callee needs the GIL but is entered without it: one finding.
const WITH_FINDING: &str = "#include <pybind11/pybind11.h>\nnamespace py = pybind11;\n\
void f() { py::print(\"x\"); }\n\
PYBIND11_MODULE(m, mod) { mod.def(\"f\", &f, py::call_guard<py::gil_scoped_release>()); }\n";

/// A valid knowledge file.
const KNOWLEDGE: &str = "[framework]\nname = \"project\"\nlanguage = \"cpp\"\n";

/// Set in the child's environment: it must never appear in its output.
const SECRET: &str = "s3cr3t-marker-5f1e";

/// A project at `root/proj` (with one C++ file that has a finding), beside `root/outside.toml`
/// and `root/outside.txt`, which are outside it.
struct Tree {
    root: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("proj")).unwrap();
        let tree = Tree { root };
        tree.write("proj/ok.cpp", WITH_FINDING);
        tree.write("outside.toml", KNOWLEDGE);
        tree.write("outside.txt", "not for gil-lint\n");
        tree
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn proj(&self) -> PathBuf {
        self.path("proj")
    }

    fn write(&self, name: &str, contents: &str) {
        std::fs::write(self.path(name), contents).unwrap();
    }

    fn symlink(&self, name: &str, target: &str) {
        std::os::unix::fs::symlink(target, self.path(name)).unwrap();
    }

    /// A FIFO at `name`, or `false` (with a message) where `mkfifo` is not available.
    fn fifo(&self, name: &str) -> bool {
        let made = Command::new("mkfifo")
            .arg(self.path(name))
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            eprintln!("skipped: mkfifo is not available");
        }
        made
    }

    /// `proj/gil-lint.toml` naming these knowledge files.
    fn config_naming(&self, knowledge: &[&str]) {
        let list: Vec<String> = knowledge.iter().map(|k| format!("{k:?}")).collect();
        self.write(
            "proj/gil-lint.toml",
            &format!("knowledge = [{}]\n", list.join(", ")),
        );
    }
}

/// Every entry under `root` without reading any file (a FIFO would block): kind, size and
/// modification time, to show that a run changed nothing.
fn listing(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
            }
            let link = std::fs::read_link(&path).ok();
            out.insert(
                path,
                format!(
                    "{:?} {} bytes {:?} link {link:?}",
                    meta.file_type(),
                    meta.len(),
                    meta.modified().unwrap()
                ),
            );
        }
    }
    out
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Exit 2, nothing on standard output and one line on standard error, an error that contains
    /// each of `names`, and no trace of the secret.
    fn assert_refused(&self, names: &[&str]) -> String {
        assert_eq!(
            self.code, 2,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        assert_eq!(self.stdout, "");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", self.stderr);
        let line = lines[0];
        assert!(line.starts_with("error: "), "{line}");
        for name in names {
            assert!(line.contains(name), "`{line}` does not name {name}");
        }
        line.to_string()
    }
}

/// Runs `gil-lint check ARGS` in `dir` with the secret in its environment and a watchdog: a run
/// that takes more than a minute is killed and the test fails. Checks that nothing under `root`
/// changed and that the secret is not in the output.
fn check(root: &Path, dir: &Path, args: &[&str]) -> Run {
    let before = listing(root);
    // The cache outside the tree, which must not change.
    let cache = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_gil-lint"))
        .arg("check")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("GIL_LINT_CACHE_DIR", cache.path())
        .env("GIL_LINT_SECRET", SECRET)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let what = format!("gil-lint check {args:?}");
    let Output {
        status,
        stdout,
        stderr,
    } = wait_with_watchdog(child, Duration::from_secs(60), &what);
    let run = Run {
        code: exit_code(status, &what),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    };
    assert!(
        !run.stdout.contains(SECRET) && !run.stderr.contains(SECRET),
        "the secret was printed:\n{}{}",
        run.stdout,
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_eq!(
        listing(root),
        before,
        "gil-lint check {args:?} changed the tree"
    );
    run
}

fn check_proj(tree: &Tree, args: &[&str]) -> Run {
    check(tree.root.path(), &tree.proj(), args)
}

#[test]
fn the_tree_s_own_knowledge_is_read() {
    // The control: a knowledge file inside the project, directly and through a link that stays
    // inside, works as before.
    let tree = Tree::new();
    tree.write("proj/k.toml", KNOWLEDGE);
    tree.symlink("proj/link.toml", "k.toml");
    tree.config_naming(&["k.toml", "link.toml", "./sub/../k.toml"]);
    std::fs::create_dir(tree.path("proj/sub")).unwrap();
    let run = check_proj(&tree, &["."]);
    assert_eq!(run.code, 1, "{}", run.stderr);
}

#[test]
fn knowledge_dev_zero() {
    let tree = Tree::new();
    tree.config_naming(&["/dev/zero"]);
    let line = check_proj(&tree, &["."]).assert_refused(&["gil-lint.toml:1:14", "/dev/zero"]);
    assert!(
        line.contains("outside the configuration's directory"),
        "{line}"
    );
}

#[test]
fn knowledge_proc_self_environ() {
    if !Path::new("/proc/self/environ").exists() {
        eprintln!("skipped: no /proc/self/environ");
        return;
    }
    let tree = Tree::new();
    tree.config_naming(&["/proc/self/environ"]);
    let line = check_proj(&tree, &["."]).assert_refused(&["gil-lint.toml", "/proc/self/environ"]);
    assert!(
        line.contains("outside the configuration's directory"),
        "{line}"
    );
    // Through a link in the tree.
    tree.symlink("proj/env.toml", "/proc/self/environ");
    tree.config_naming(&["env.toml"]);
    check_proj(&tree, &["."]).assert_refused(&["gil-lint.toml", "env.toml", "outside"]);
    // On the command line the path is trusted, but its contents are not printed: it is binary.
    let line = check_proj(
        &tree,
        &["--isolated", "--knowledge", "/proc/self/environ", "."],
    )
    .assert_refused(&["/proc/self/environ"]);
    assert!(line.contains("binary file"), "{line}");
}

#[test]
fn knowledge_fifo() {
    let tree = Tree::new();
    if !tree.fifo("proj/k.toml") {
        return;
    }
    tree.config_naming(&["k.toml"]);
    let line = check_proj(&tree, &["."]).assert_refused(&["gil-lint.toml:1:14", "k.toml"]);
    assert!(line.ends_with("is not a regular file (a FIFO)"), "{line}");
    // Named on the command line.
    let line = check_proj(&tree, &["--isolated", "--knowledge", "k.toml", "."])
        .assert_refused(&["k.toml"]);
    assert!(line.ends_with("not a regular file (a FIFO)"), "{line}");
}

#[test]
fn knowledge_dev_zero_on_the_command_line() {
    let tree = Tree::new();
    let line = check_proj(&tree, &["--knowledge", "/dev/zero", "."]).assert_refused(&["/dev/zero"]);
    assert!(
        line.ends_with("not a regular file (a character device)"),
        "{line}"
    );
}

#[test]
fn knowledge_symlink_pointing_outside() {
    let tree = Tree::new();
    tree.symlink("proj/k.toml", "../outside.toml");
    tree.config_naming(&["k.toml"]);
    let line = check_proj(&tree, &["."]).assert_refused(&["gil-lint.toml:1:14", "k.toml"]);
    assert!(
        line.contains("outside the configuration's directory"),
        "{line}"
    );
    // A directory link that leads out.
    std::fs::create_dir(tree.path("shared")).unwrap();
    tree.write("shared/k.toml", KNOWLEDGE);
    tree.symlink("proj/shared", "../shared");
    tree.config_naming(&["shared/k.toml"]);
    check_proj(&tree, &["."]).assert_refused(&["gil-lint.toml:1:14", "shared/k.toml", "outside"]);
}

#[test]
fn knowledge_parent_directory() {
    let tree = Tree::new();
    tree.config_naming(&["../outside.toml"]);
    let line = check_proj(&tree, &["."]).assert_refused(&["gil-lint.toml:1:14", "../outside.toml"]);
    assert!(
        line.contains("outside the configuration's directory"),
        "{line}"
    );
    // In pyproject.toml, found from a subdirectory.
    std::fs::remove_file(tree.path("proj/gil-lint.toml")).unwrap();
    tree.write(
        "proj/pyproject.toml",
        "[project]\nname = \"x\"\n\n[tool.gil-lint]\nknowledge = [\"../outside.toml\"]\n",
    );
    std::fs::create_dir(tree.path("proj/src")).unwrap();
    check(tree.root.path(), &tree.path("proj/src"), &["."])
        .assert_refused(&["pyproject.toml:5:14", "../outside.toml"]);
}

#[test]
fn knowledge_errors_show_no_source_line() {
    let tree = Tree::new();
    tree.write(
        "proj/k.toml",
        &format!("{KNOWLEDGE}[gil]\nrelease_guards = [{SECRET}]\n"),
    );
    tree.config_naming(&["k.toml"]);
    check_proj(&tree, &["."]).assert_refused(&["k.toml:5:19"]);
    tree.write("proj/k.toml", &format!("framework = \"{SECRET}\"\n"));
    check_proj(&tree, &["."]).assert_refused(&["k.toml:1:13"]);
    std::fs::write(
        tree.path("proj/k.toml"),
        [KNOWLEDGE.as_bytes(), b"# \xff", SECRET.as_bytes(), b"\n"].concat(),
    )
    .unwrap();
    let line = check_proj(&tree, &["."]).assert_refused(&["k.toml"]);
    let at = KNOWLEDGE.len() + 2;
    assert!(
        line.ends_with(&format!("not valid UTF-8 (byte {at})")),
        "{line}"
    );
}

#[test]
fn baseline_symlink_to_dev_zero() {
    let tree = Tree::new();
    tree.symlink("proj/baseline.json", "/dev/zero");
    let line =
        check_proj(&tree, &["--baseline", "baseline.json", "."]).assert_refused(&["baseline.json"]);
    assert!(
        line.ends_with("not a regular file (a character device)"),
        "{line}"
    );
}

#[test]
fn baseline_fifo() {
    let tree = Tree::new();
    if !tree.fifo("proj/baseline.json") {
        return;
    }
    let line =
        check_proj(&tree, &["--baseline", "baseline.json", "."]).assert_refused(&["baseline.json"]);
    assert!(line.ends_with("not a regular file (a FIFO)"), "{line}");
}

#[test]
fn baseline_symlink_to_a_secret_is_not_echoed() {
    let tree = Tree::new();
    tree.write("secret.json", &format!("{{\"version\": \"{SECRET}\"}}"));
    tree.symlink("proj/baseline.json", "../secret.json");
    let line = check_proj(&tree, &["--baseline", "baseline.json", "."])
        .assert_refused(&["baseline.json:1:"]);
    assert!(line.contains("not a gil-lint baseline"), "{line}");
    if Path::new("/proc/self/environ").exists() {
        std::fs::remove_file(tree.path("proj/baseline.json")).unwrap();
        tree.symlink("proj/baseline.json", "/proc/self/environ");
        check_proj(&tree, &["--baseline", "baseline.json", "."])
            .assert_refused(&["baseline.json:1:1: not a gil-lint baseline"]);
    }
}

#[test]
fn config_fifo() {
    let tree = Tree::new();
    if !tree.fifo("proj/.gil-lint.toml") {
        return;
    }
    let line = check_proj(&tree, &["."]).assert_refused(&[".gil-lint.toml"]);
    assert!(line.ends_with("not a regular file (a FIFO)"), "{line}");
    // Named with --config.
    let line =
        check_proj(&tree, &["--config", ".gil-lint.toml", "."]).assert_refused(&[".gil-lint.toml"]);
    assert!(line.ends_with("not a regular file (a FIFO)"), "{line}");
}

#[test]
fn config_symlink_to_dev_zero() {
    let tree = Tree::new();
    tree.symlink("proj/pyproject.toml", "/dev/zero");
    let line = check_proj(&tree, &["."]).assert_refused(&["pyproject.toml"]);
    assert!(
        line.ends_with("not a regular file (a character device)"),
        "{line}"
    );
}

#[test]
fn write_baseline_onto_a_symlink_pointing_outside() {
    let tree = Tree::new();
    tree.symlink("proj/baseline.json", "../outside.txt");
    let line = check_proj(&tree, &["--write-baseline", "baseline.json", "."])
        .assert_refused(&["baseline.json", "symbolic link"]);
    assert!(line.contains("cannot write the baseline"), "{line}");
    assert_eq!(
        std::fs::read_to_string(tree.path("outside.txt")).unwrap(),
        "not for gil-lint\n"
    );
    // Dangling: the link would otherwise create its target.
    std::fs::remove_file(tree.path("proj/baseline.json")).unwrap();
    tree.symlink("proj/baseline.json", "../created.json");
    check_proj(&tree, &["--write-baseline", "baseline.json", "."])
        .assert_refused(&["baseline.json", "symbolic link"]);
    assert!(!tree.path("created.json").exists());
}

#[test]
fn write_baseline_replaces_a_regular_file() {
    let tree = Tree::new();
    tree.write("proj/baseline.json", "old\n");
    let output = Command::new(env!("CARGO_BIN_EXE_gil-lint"))
        .args([
            "check",
            "--no-cache",
            "--write-baseline",
            "baseline.json",
            ".",
        ])
        .current_dir(tree.proj())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let written = std::fs::read_to_string(tree.path("proj/baseline.json")).unwrap();
    assert!(written.starts_with("{\n  \"version\": 1,"), "{written}");
    // Only the baseline: no temporary file is left beside it.
    let mut names: Vec<String> = std::fs::read_dir(tree.proj())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["baseline.json", "ok.cpp"]);
}

/// A checked crate's `Cargo.toml` and those of its path dependencies: one deeply nested, one a
/// FIFO, one a link to `/dev/zero`, and dependencies on `/` and above the tree. The run neither
/// hangs, fills memory nor crashes, and reads nothing outside the tree.
#[test]
fn hostile_cargo_manifests() {
    let tree = Tree::new();
    for dir in ["crate/src", "zero", "fifo", "deep"] {
        std::fs::create_dir_all(tree.path(&format!("proj/{dir}"))).unwrap();
    }
    tree.write("proj/crate/src/lib.rs", "pub fn f() {}\n");
    tree.write(
        "proj/crate/Cargo.toml",
        "[dependencies]\nroot = { path = \"/\" }\nup = { path = \"../..\" }\n\
         zero = { path = \"../zero\" }\nfifo = { path = \"../fifo\" }\n\
         deep = { path = \"../deep\" }\n",
    );
    tree.symlink("proj/zero/Cargo.toml", "/dev/zero");
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    tree.write("proj/deep/Cargo.toml", &format!("a = {deep}\n"));
    if !tree.fifo("proj/fifo/Cargo.toml") {
        return;
    }
    let run = check_proj(&tree, &["--format", "concise", "crate"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("ok.cpp"), "{}", run.stdout);
}

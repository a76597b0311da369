//! The cache of per-file facts changes nothing but speed: a cold run, a warm one, and runs after
//! edits that add and remove findings give the output of a run without the cache, on one and two
//! threads; a damaged entry is rebuilt, two runs at once are safe, and a cache that git tracks or
//! that a link leads out of the project is not used.

use std::path::{Path, PathBuf};

use gil_lint::cache::{Cache, Key, Location};
use gil_lint::check;
use gil_lint::config::Config;
use gil_lint::model::{FileModel, Language, Span};

/// One whole check of `root`: its findings as text and JSON, and its errors apart.
fn run(root: &Path, cache: Option<Location>, threads: usize) -> (String, Vec<String>) {
    let pool = gil_lint::thread_pool(Some(threads)).unwrap();
    let repo = gil_lint::repo::RepoRoot::at(root).unwrap();
    let report = pool
        .install(|| {
            check::run(check::Options {
                config: Config {
                    warn_unused_suppressions: Some(true),
                    ..Config::default()
                },
                cache,
                ..check::Options::new(vec![root.to_path_buf()], &repo)
            })
        })
        .unwrap();
    let analysis = &report.analysis;
    let human = gil_lint::render::human::HumanRenderer::new(&analysis.program)
        .render_plain(&analysis.findings);
    let json = gil_lint::render::json::render(&analysis.program, &analysis.findings, &[]);
    let output = format!(
        "{} findings, {} suppressed\n{human}\n{json}",
        analysis.findings.len(),
        report.suppressed
    );
    (output, analysis.errors.clone())
}

/// The output with the cache in `dir`, checked against the output without it; the number of
/// findings.
fn assert_same(what: &str, root: &Path, dir: &Path, threads: usize) -> usize {
    let (reference, errors) = run(root, None, 1);
    assert!(errors.is_empty(), "{errors:?}");
    let (cached, errors) = run(root, Some(Location::Given(dir.to_path_buf())), threads);
    assert!(errors.is_empty(), "{what}: {errors:?}");
    assert!(
        cached == reference,
        "{what}, {threads} threads: the output differs with the cache\n--- without:\n\
         {reference}\n--- with:\n{cached}"
    );
    reference.split(' ').next().unwrap().parse().unwrap()
}

/// A copy of the fixtures, in a fresh directory with room for a cache beside it.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(Path::new("fixtures"), &dir.path().join("fixtures"));
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

const EVENTS: &str = "mutex_held_blocking/events.cpp";

/// A second function that waits for the listeners' mutex holding the GIL, and its binding.
const ADDED: &str = "
namespace events {
void emit_twice(int event) {
  std::unique_lock<std::mutex> lock(listeners_mutex);
  if (listener) listener(event);
}
}  // namespace events

PYBIND11_MODULE(events_twice, m) { m.def(\"emit_twice\", &events::emit_twice); }
";

fn edit(root: &Path, path: &str, change: impl FnOnce(String) -> String) {
    let path = root.join(path);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, change(text)).unwrap();
}

#[test]
fn cold_warm_and_edited_runs_give_the_output_without_cache() {
    for threads in [1, 2] {
        let project = project();
        let root = project.path().join("fixtures");
        let cache = project.path().join("cache");
        let cold = assert_same("cold", &root, &cache, threads);
        assert!(cache.join(".gitignore").is_file());
        assert_eq!(assert_same("warm", &root, &cache, threads), cold);
        edit(&root, EVENTS, |text| text + "// edited\n");
        assert_eq!(assert_same("a line appended", &root, &cache, threads), cold);
        edit(&root, EVENTS, |text| text + ADDED);
        let added = assert_same("a finding added", &root, &cache, threads);
        assert!(added > cold, "the edit adds a finding: {added} vs {cold}");
        assert_eq!(
            assert_same("warm after an edit", &root, &cache, threads),
            added
        );
        edit(&root, EVENTS, |text| {
            text.replacen("std::unique_lock<std::mutex> lock(listeners_mutex);", "", 1)
        });
        let removed = assert_same("a finding removed", &root, &cache, threads);
        assert!(
            removed < added,
            "the edit removes a finding: {removed} vs {added}"
        );
    }
}

/// The entries of a cache directory, its `.gitignore` left out.
fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != ".gitignore"))
        .collect();
    entries.sort();
    assert!(!entries.is_empty());
    entries
}

/// Damages one entry.
type Damage<'a> = dyn Fn(&Path) + 'a;

#[test]
fn damaged_entries_are_ignored_and_rebuilt() {
    let project = project();
    let root = project.path().join("fixtures");
    let cache = project.path().join("cache");
    let outside = project.path().join("outside");
    std::fs::write(&outside, b"not an entry").unwrap();
    let damages: [(&str, &Damage<'_>); 6] = [
        ("truncated", &|entry| {
            let bytes = std::fs::read(entry).unwrap();
            std::fs::write(entry, &bytes[..bytes.len() / 2]).unwrap();
        }),
        ("a byte changed", &|entry| {
            let mut bytes = std::fs::read(entry).unwrap();
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x55;
            std::fs::write(entry, bytes).unwrap();
        }),
        ("empty", &|entry| std::fs::write(entry, b"").unwrap()),
        ("foreign", &|entry| {
            std::fs::write(entry, [0xffu8; 4096]).unwrap()
        }),
        ("a directory", &|entry| {
            std::fs::remove_file(entry).unwrap();
            std::fs::create_dir(entry).unwrap();
        }),
        ("a link out of the cache", &|entry| {
            std::fs::remove_file(entry).unwrap();
            std::os::unix::fs::symlink(&outside, entry).unwrap();
        }),
    ];
    for (what, damage) in damages {
        let cold = assert_same(what, &root, &cache, 2);
        for entry in entries(&cache) {
            damage(&entry);
        }
        assert_eq!(assert_same(what, &root, &cache, 2), cold, "{what}");
        // Rebuilt: regular files again, and the link replaced, not followed.
        assert!(
            entries(&cache)
                .iter()
                .all(|e| e.is_dir() || std::fs::symlink_metadata(e).unwrap().is_file()),
            "{what}"
        );
        std::fs::remove_dir_all(&cache).unwrap();
    }
    assert_eq!(std::fs::read(&outside).unwrap(), b"not an entry");
}

/// The file's key under its current text, and its model with the hash it was made under.
fn model_of(cache: &Cache, path: &Path) -> (Key, u64, FileModel) {
    let text = std::fs::read_to_string(path).unwrap();
    let key = Key::new(path, Language::Cpp, &text);
    let model = cache
        .model(path, key, &text)
        .expect("the file was modelled");
    (key, model.learnt, model.model)
}

/// Removes the whole runs' outcomes from the cache, so that the next run reads the models.
fn forget_outcomes(cache: &Path) {
    let outcomes: Vec<PathBuf> = entries(cache)
        .into_iter()
        .filter(|e| e.extension().is_some_and(|x| x == "result"))
        .collect();
    assert!(!outcomes.is_empty(), "a run keeps its outcome");
    outcomes
        .iter()
        .for_each(|e| std::fs::remove_file(e).unwrap());
}

#[test]
fn a_model_that_does_not_fit_its_text_is_not_used_and_a_valid_one_is() {
    let project = project();
    let root = project.path().join("fixtures");
    let dir = project.path().join("cache");
    let cold = assert_same("cold", &root, &dir, 1);
    let cache = Cache::open(&Location::Given(dir.clone()), 1 << 30).unwrap();
    let events = root.join(EVENTS);
    // A span past the end of the text: rendering it would fail.
    let (key, learnt, mut model) = model_of(&cache, &events);
    model.functions[0].span = Span {
        file: 0,
        start: 0,
        end: u32::MAX,
    };
    cache.store_model(&events, key, learnt, &model);
    forget_outcomes(&dir);
    assert_eq!(assert_same("a span out of the text", &root, &dir, 1), cold);
    // A model that fits is used as it is, whatever it says: the run trusts the cache it was
    // given (which is why a cache that git tracks is not used, see below).
    let (key, learnt, _) = model_of(&cache, &events);
    cache.store_model(&events, key, learnt, &FileModel::default());
    forget_outcomes(&dir);
    let (emptied, _) = run(&root, Some(Location::Given(dir.clone())), 1);
    let (reference, _) = run(&root, None, 1);
    assert_ne!(emptied, reference);
    assert!(!emptied.contains("events.cpp"), "{emptied}");
}

#[test]
fn an_unchanged_tree_is_answered_from_the_outcome_of_the_run_before() {
    let project = project();
    let root = project.path().join("fixtures");
    let dir = project.path().join("cache");
    let cold = assert_same("cold", &root, &dir, 2);
    // A model emptied (as a test of the model layer above shows, it would be used): the run
    // does not read it, since the whole run's outcome answers it.
    let cache = Cache::open(&Location::Given(dir.clone()), 1 << 30).unwrap();
    let events = root.join(EVENTS);
    let (key, learnt, _) = model_of(&cache, &events);
    cache.store_model(&events, key, learnt, &FileModel::default());
    assert_eq!(assert_same("the outcome", &root, &dir, 2), cold);
    // Any edit is another input: the models are read, an emptied one for the new text with
    // them (a comment appended changes nothing that was learnt).
    edit(&root, EVENTS, |text| text + "// edited\n");
    let text = std::fs::read_to_string(&events).unwrap();
    let key = Key::new(&events, Language::Cpp, &text);
    cache.store_model(&events, key, learnt, &FileModel::default());
    let (emptied, _) = run(&root, Some(Location::Given(dir.clone())), 2);
    assert!(!emptied.contains("events.cpp"), "{emptied}");
}

#[test]
fn two_runs_at_once_share_a_cache() {
    let project = project();
    let root = project.path().join("fixtures");
    let dir = project.path().join("cache");
    let (reference, _) = run(&root, None, 1);
    for round in 0..3 {
        let outputs: Vec<(String, Vec<String>)> = std::thread::scope(|scope| {
            let runs: Vec<_> = (0..2)
                .map(|_| scope.spawn(|| run(&root, Some(Location::Given(dir.clone())), 2)))
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        for (output, errors) in outputs {
            assert!(errors.is_empty(), "{errors:?}");
            assert!(
                output == reference,
                "round {round}:\n{output}\n---\n{reference}"
            );
        }
        if round == 1 {
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
    assert!(
        std::fs::read_dir(&dir).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".tmp")),
        "no temporary file is left"
    );
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn a_cache_that_git_tracks_or_that_leads_out_of_the_project_is_not_used() {
    let project = project();
    let root = project.path().join("fixtures");
    git(&root, &["init", "-q"]);
    let (reference, _) = run(&root, None, 1);
    let default = || Some(Location::Default(root.clone()));
    // Made by a first run, and ignored by git through its own `.gitignore`.
    let (output, errors) = run(&root, default(), 1);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(output == reference);
    let cache = root.join(gil_lint::cache::DIR_NAME);
    assert!(entries(&cache).len() > 10);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "fixtures"]);
    let mut committed = std::process::Command::new("git");
    committed
        .arg("-C")
        .arg(&root)
        .args(["ls-files", gil_lint::cache::DIR_NAME]);
    assert!(committed.output().unwrap().stdout.is_empty());
    // Committed on purpose (a hostile pull request could hide findings so).
    git(&root, &["add", "-f", gil_lint::cache::DIR_NAME]);
    let (output, errors) = run(&root, default(), 1);
    assert!(output == reference);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("git tracks files in"), "{errors:?}");
    // A link to a directory outside the project.
    git(
        &root,
        &["rm", "-r", "-q", "--cached", gil_lint::cache::DIR_NAME],
    );
    std::fs::remove_dir_all(&cache).unwrap();
    let outside = project.path().join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, &cache).unwrap();
    let (output, errors) = run(&root, default(), 1);
    assert!(output == reference);
    assert!(errors[0].contains("a symbolic link"), "{errors:?}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

/// A binding entered without the GIL whose function calls nothing yet.
const CALLER: &str = "#include <pybind11/pybind11.h>
namespace py = pybind11;
void helper();
void work() {
}
PYBIND11_MODULE(m, mod) { mod.def(\"work\", &work, py::call_guard<py::gil_scoped_release>()); }
";

/// A function that needs the GIL, in a file that no binding reaches before the edit below.
const CALLEE: &str = "#include <pybind11/pybind11.h>
namespace py = pybind11;
void helper() { py::module_::import(\"json\"); }
";

#[test]
fn the_pre_filters_choice_is_reused_only_while_the_models_it_read_are_the_same() {
    use std::os::unix::fs::MetadataExt;
    for threads in [1, 2] {
        let project = tempfile::tempdir().unwrap();
        let root = project.path().join("src");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("a.cpp"), CALLER).unwrap();
        std::fs::write(root.join("b.cpp"), CALLEE).unwrap();
        let cache = project.path().join("cache");
        assert_eq!(assert_same("cold", &root, &cache, threads), 0);
        // The choice's entry: written again (a new file renamed over it) whenever it is made.
        let choice = || {
            let runs: Vec<PathBuf> = entries(&cache)
                .into_iter()
                .filter(|e| e.extension().is_some_and(|x| x == "run"))
                .collect();
            assert_eq!(runs.len(), 1, "{runs:?}");
            std::fs::metadata(&runs[0]).unwrap().ino()
        };
        let made = choice();
        edit(&root, "a.cpp", |text| text + "// a comment\n");
        assert_eq!(assert_same("a comment appended", &root, &cache, threads), 0);
        assert_eq!(
            choice(),
            made,
            "the same scans and models: the choice is reused"
        );
        // The same scans, but the binding's model now calls into b.cpp: reusing the choice, which
        // left b.cpp out, would miss the finding.
        edit(&root, "a.cpp", |text| {
            text.replacen("void work() {", "void work() { helper();", 1)
        });
        assert_eq!(assert_same("a call added", &root, &cache, threads), 1);
        assert_ne!(choice(), made, "the choice is made again");
    }
}

//! gil-lint: finds GIL bugs in Python native-extension binding code.
//!
//! The pipeline: [`discover`] files -> parse each with its [`frontend`] into the language-neutral
//! [`model`] -> [`callgraph`] -> [`analysis`] -> one file per rule in [`rules`] -> [`render`].

pub mod analysis;
pub mod baseline;
pub mod cache;
pub mod callgraph;
pub mod check;
pub mod config;
pub mod diagnostic;
pub mod discover;
pub mod frontend;
pub mod input;
pub mod knowledge;
pub mod lints;
pub mod model;
pub mod prefilter;
pub mod render;
pub mod repo;
pub mod suppress;
#[cfg(test)]
pub(crate) mod test_support;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::cache::{Cache, Facts, Key, Learnt, RunKey};
use crate::callgraph::CallGraph;
use crate::diagnostic::Finding;
use crate::frontend::Language;
use crate::knowledge::Knowledge;
use crate::model::{FileModel, Program, SourceFile};

pub struct Analysis {
    /// The files and their models. When the findings are those the cache kept of a run of the
    /// same inputs, it holds the files only (no functions or bindings): what suppressions and
    /// reports read.
    pub program: Program,
    pub findings: Vec<Finding>,
    /// One line each, naming the file: what could not be read or parsed.
    pub errors: Vec<String>,
}

/// The path as the user should see it: relative to the current directory when below it.
pub fn display_path(path: &Path) -> PathBuf {
    let cwd = std::env::current_dir().ok();
    let absolute = std::fs::canonicalize(path).ok();
    match (cwd.and_then(|c| std::fs::canonicalize(c).ok()), absolute) {
        (Some(cwd), Some(abs)) => abs
            .strip_prefix(&cwd)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
    .components()
    .collect()
}

/// Source files larger than this are skipped with a warning, unless `max-file-size` says
/// otherwise: front-ends need memory in proportion to a file (tree-sitter's tree, syn's), and a
/// pull request can add a file of any size. Real sources stay far below.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 4 << 20;

/// Reads one source file as text, through [`input::read_source`] (never a FIFO or a device, at
/// most `limit` bytes, Latin-1 where it is not UTF-8).
fn read_file(path: &Path, limit: u64) -> Result<String, String> {
    input::read_source(path, limit).map_err(|error| match error.kind {
        input::InputErrorKind::Io(_) => error.to_string(),
        input::InputErrorKind::TooLarge { .. } => format!("{error} (max-file-size), skipped"),
        _ => format!("{error}, skipped"),
    })
}

/// Models one file; never panics (a panic in a front-end becomes the file's error).
fn model_file(
    path: &Path,
    language: Language,
    text: &str,
    knowledge: &Knowledge,
) -> Result<FileModel, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        frontend::extract(language, path, text, knowledge)
    }))
    .map_err(|_| {
        format!(
            "{}: internal error while analysing this file, skipped",
            input::shown(path)
        )
    })?
    .map_err(|reason| format!("{}: {reason}", input::shown(path)))
}

/// What [`analyse_files_with`] reports as it goes, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// One more file has been modelled.
    FileDone,
    /// Every file is modelled; the call graph and the rules run now.
    Linking,
}

/// How files are analysed; the default is what the command line does, without the cache.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// Parse only the files that can change the findings (see [`prefilter`]).
    pub prefilter: bool,
    /// Skip source files larger than this many bytes.
    pub max_file_size: u64,
    /// A file whose text is given, not read from the disk (`--stdin-filename`).
    pub given: Option<&'a GivenText>,
    /// Where what is made of each file is kept between runs; none to make it all again.
    pub cache: Option<&'a Cache>,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            prefilter: true,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            given: None,
            cache: None,
        }
    }
}

/// The text of the file at `path`, given instead of read (an editor's unsaved buffer on standard
/// input); `path` need not exist.
#[derive(Clone, Debug)]
pub struct GivenText {
    pub path: PathBuf,
    /// `path` as [`display_path`] shows it, the name its text is read again under for a report.
    shown: PathBuf,
    pub text: String,
}

impl GivenText {
    pub fn new(path: PathBuf, text: String) -> Self {
        GivenText {
            shown: display_path(&path),
            path,
            text,
        }
    }
}

impl Options<'_> {
    /// The text of one source file (by its path as found, or as shown): the given text for the
    /// given path, else the file's.
    fn read_text(&self, path: &Path) -> Result<String, String> {
        match self.given {
            Some(given) if given.path == path || given.shown == path => Ok(given.text.clone()),
            _ => read_file(path, self.max_file_size),
        }
    }
}

/// Reads every file in parallel, learns the project's own GIL wrappers from all of them, then
/// models each file in parallel and merges the models in path order, so the result does not depend
/// on the number of threads.
pub fn analyse_files(files: &[(PathBuf, Language)], knowledge: &Knowledge) -> Analysis {
    analyse_files_with(files, knowledge, &|_| {})
}

/// [`analyse_files`], calling `progress` as files are done.
pub fn analyse_files_with(
    files: &[(PathBuf, Language)],
    knowledge: &Knowledge,
    progress: &(dyn Fn(Progress) + Sync),
) -> Analysis {
    analyse_files_opts(files, knowledge, progress, Options::default())
}

/// [`analyse_files_with`] these options. With the pre-filter, only the files that can change the
/// findings are modelled; the others are still counted as checked.
///
/// The texts are read once for what needs all of them (the project's wrapper macros, the
/// pre-filter's scans, which files have suppression comments), then dropped; each file is read
/// again when it is modelled, and its text kept only where the analysis, the suppressions or a
/// finding need it. So the whole tree is never held in memory with the models.
pub fn analyse_files_opts(
    files: &[(PathBuf, Language)],
    knowledge: &Knowledge,
    progress: &(dyn Fn(Progress) + Sync),
    options: Options,
) -> Analysis {
    let texts: Vec<_> = files
        .par_iter()
        .map(|(path, _)| options.read_text(path))
        .collect();
    // What the cache knows of each text: every fact below is taken from there when it holds it.
    let keys: Vec<Option<Key>> = files
        .par_iter()
        .zip(&texts)
        .map(|((path, language), text)| {
            let text = text.as_ref().ok().filter(|_| options.cache.is_some())?;
            Some(Key::new(path, *language, text))
        })
        .collect();
    // A run of the same inputs made these findings: only the files' sources are needed again.
    let outcome_key = options.cache.map(|cache| {
        let settings = xxhash_rust::xxh3::xxh3_64_with_seed(
            &[u8::from(options.prefilter)],
            knowledge.fingerprint,
        );
        (cache, RunKey::new(files, &keys, settings))
    });
    if let Some((cache, key)) = &outcome_key
        && let Some(outcome) = cache.result::<Outcome>(key)
        && outcome.fits(&texts)
    {
        return outcome.replay(files, texts, progress);
    }
    let mut entries: Vec<Facts> = files
        .par_iter()
        .zip(&keys)
        .map(|((path, _), key)| match (options.cache, key) {
            (Some(cache), Some(key)) => cache.facts(path, *key).unwrap_or_default(),
            _ => Facts::default(),
        })
        .collect();
    // Whether a fact of the file was made in this run, so its entry must be written.
    let mut changed = vec![false; files.len()];
    let mut knowledge = knowledge.clone();
    // Guard types and `#define`s are C/C++ only. Guards first: a wrapper macro may use one.
    // Each is keyed by what was learnt from the analysed code before it.
    let learnt = knowledge.fingerprint;
    let mut guard_facts: Vec<_> = with_entries(files, &texts, &mut entries, &mut changed)
        .map(
            |(_, language, text, facts, changed)| match (language, text) {
                (Language::Cpp, Some(text)) => {
                    learnt_fact(&mut facts.guards, learnt, changed, || {
                        frontend::cpp::guards::guard_facts(text, &knowledge)
                    })
                }
                _ => Vec::new(),
            },
        )
        .collect();
    let cpp_texts: Vec<Option<&str>> = files
        .iter()
        .zip(&texts)
        .map(|((_, language), text)| {
            let text = text.as_ref().ok().filter(|_| *language == Language::Cpp);
            text.map(String::as_str)
        })
        .collect();
    frontend::cpp::guards::learn_guards(&cpp_texts, &mut guard_facts, &mut knowledge);
    let learnt = hash_learnt(learnt, &guard_facts);
    let macros: Vec<_> = with_entries(files, &texts, &mut entries, &mut changed)
        .map(
            |(_, language, text, facts, changed)| match (language, text) {
                (Language::Cpp, Some(text)) => {
                    learnt_fact(&mut facts.macros, learnt, changed, || {
                        frontend::cpp::project_macros(text, &knowledge)
                    })
                }
                _ => Vec::new(),
            },
        )
        .collect();
    // Rust struct fields and statics, crate by crate: a file uses those another declares.
    let rust_types: Vec<(String, knowledge::CrateTypes)> =
        with_entries(files, &texts, &mut entries, &mut changed)
            .filter_map(|(path, language, text, facts, changed)| {
                let text = text.filter(|_| language == Language::Rust)?;
                let types = learnt_fact(&mut facts.crate_types, learnt, changed, || {
                    frontend::rust_scan::declared_types(text, &knowledge)
                });
                let (krate, _) = frontend::rust::module_path(path);
                Some((krate, types))
            })
            .collect();
    // A logging bridge installed anywhere forwards every crate's log macros to Python.
    let bridges: Vec<bool> = with_entries(files, &texts, &mut entries, &mut changed)
        .map(
            |(_, language, text, facts, changed)| match (language, text) {
                (Language::Rust, Some(text)) => {
                    learnt_fact(&mut facts.logging_bridge, learnt, changed, || {
                        frontend::rust_scan::names_crate(text, &knowledge.rust.logging_bridges)
                    })
                }
                _ => false,
            },
        )
        .collect();
    knowledge.rust.python_logging = bridges.contains(&true);
    let learnt = hash_learnt(
        learnt,
        &(&macros, &rust_types, knowledge.rust.python_logging),
    );
    knowledge.add_macros(macros.into_iter().flatten());
    knowledge.add_crate_types(rust_types);
    let scanner = options
        .prefilter
        .then(|| prefilter::Scanner::new(&knowledge));
    with_entries(files, &texts, &mut entries, &mut changed).for_each(
        |(path, language, text, facts, changed)| {
            if let Some(scanner) = &scanner
                && facts.scan.as_ref().is_none_or(|(made, _)| *made != learnt)
            {
                facts.scan = Some((
                    learnt,
                    scanner.scan(path, language, text.map(String::as_str)),
                ));
                *changed = true;
            }
            if let Some(text) = text
                && facts.suppressions.is_none()
            {
                facts.suppressions = Some(!suppress::scan(0, text).is_empty());
                *changed = true;
            }
        },
    );
    // The facts made in this run are kept now, before the pre-filter takes the scans.
    if let Some(cache) = options.cache {
        files
            .par_iter()
            .zip(&entries)
            .zip(&keys)
            .zip(&changed)
            .for_each(|((((path, _), facts), key), changed)| {
                if let (true, Some(key)) = (changed, key) {
                    cache.store_facts(path, *key, facts);
                }
            });
    }
    // What the pre-filter's choice depends on in each file: its scan (see below).
    let scan_hashes: Vec<u64> = match (&scanner, options.cache) {
        (Some(_), Some(_)) => entries
            .par_iter()
            .map(|facts| {
                let (seed, definitions) = &facts.scan.as_ref().expect("every file scanned").1;
                cache::scan_hash(*seed, definitions.as_ref())
            })
            .collect(),
        _ => Vec::new(),
    };
    let scans = scanner.map(|_| {
        prefilter::Scans::new(
            entries
                .iter_mut()
                .map(|facts| facts.scan.take().expect("every file scanned").1)
                .collect(),
        )
    });
    let suppressions: Vec<bool> = entries
        .iter()
        .map(|facts| facts.suppressions.unwrap_or(false))
        .collect();
    drop(entries);
    // What is kept of each first read: its error, or the text if `suppress` will read it.
    let kept: Vec<Result<Option<String>, String>> = texts
        .into_par_iter()
        .zip(&suppressions)
        .map(|(text, &suppressions)| text.map(|t| suppressions.then_some(t)))
        .collect();
    // Whether a file read again to be modelled changed since its first read: the findings are
    // then not those of the texts the run's keys name, and are not kept.
    let stale = AtomicBool::new(false);
    let model = |i: usize| {
        let (path, language) = &files[i];
        let modelled = match &kept[i] {
            Err(error) => Err(error.clone()),
            // Kept for its suppression comments.
            Ok(Some(text)) => Ok((text.clone(), true)),
            Ok(None) => options
                .read_text(path)
                .inspect_err(|_| stale.store(true, Ordering::Relaxed))
                .map(|text| (text, false)),
        }
        .and_then(|(text, keep_text)| {
            let key = options
                .cache
                .map(|cache| (cache, Key::new(path, *language, &text)));
            if key.is_some_and(|(_, key)| Some(key) != keys[i]) {
                stale.store(true, Ordering::Relaxed);
            }
            let (model, hash) = model_cached(path, *language, &text, &knowledge, key, learnt)?;
            let mut source = SourceFile::new(display_path(path), *language, text);
            if !keep_text && !analysis::reads_text(&model) {
                source.drop_text();
            }
            Ok(Modelled {
                model,
                source,
                hash,
            })
        });
        progress(Progress::FileDone);
        modelled
    };
    let models: Vec<Option<Result<Modelled, String>>> = match scans {
        Some(scans) => {
            // The pre-filter's choice is a function of every file's scan and of what modelling
            // the files it chooses makes (the models, or the errors). So when the scans are those
            // of a run before (an edit that defines nothing new), and the files that run chose
            // model as they did then (the edit changed no model), it would choose them again.
            let run = options
                .cache
                .map(|cache| (cache, RunKey::of_scans(files, &scan_hashes, learnt)));
            let chosen = run
                .as_ref()
                .and_then(|(cache, run)| cache.selection(run, files.len()));
            let mut made: Vec<_> = files.iter().map(|_| None).collect();
            let mut same = false;
            if let Some(chosen) = chosen {
                let results: Vec<_> = chosen
                    .par_iter()
                    .with_max_len(1)
                    .map(|&(i, _)| model(i))
                    .collect();
                same = results
                    .iter()
                    .zip(&chosen)
                    .all(|(result, &(_, hash))| made_hash(result) == Some(hash));
                for (result, (i, _)) in results.into_iter().zip(chosen) {
                    made[i] = Some(result);
                }
            }
            let models = if same {
                made
            } else {
                // The files modelled above are not modelled again.
                let made: Vec<Mutex<Option<_>>> = made.into_iter().map(Mutex::new).collect();
                let models = prefilter::model_relevant(files, scans, |i| {
                    let made = made[i].lock().expect("no panic holds it").take();
                    made.unwrap_or_else(|| model(i))
                });
                let chosen: Option<Vec<(usize, u64)>> = models
                    .iter()
                    .enumerate()
                    .filter_map(|(i, m)| Some(made_hash(m.as_ref()?).map(|hash| (i, hash))))
                    .collect();
                if let (Some((cache, run)), Some(chosen)) = (&run, chosen) {
                    cache.store_selection(run, &chosen);
                }
                models
            };
            for _ in models.iter().filter(|m| m.is_none()) {
                progress(Progress::FileDone);
            }
            models
        }
        None => (0..files.len())
            .into_par_iter()
            .with_max_len(1)
            .map(|i| Some(model(i)))
            .collect(),
    };
    progress(Progress::Linking);
    let mut program = Program::default();
    // Sized once: growing by doubling would copy them and hold both copies at the peak.
    program.files.reserve_exact(files.len());
    program.bindings.reserve_exact(
        models
            .iter()
            .flatten()
            .filter_map(|m| m.as_ref().ok())
            .map(|m| m.model.bindings.len())
            .sum(),
    );
    let mut errors = Vec::new();
    let mut failed = Vec::new();
    for (i, (((path, language), kept), model)) in files.iter().zip(kept).zip(models).enumerate() {
        match (kept, model) {
            (_, Some(Ok(Modelled { model, source, .. }))) => program.add_file(source, model),
            (Ok(text), None) => program.add_file(
                SourceFile::new(display_path(path), *language, text.unwrap_or_default()),
                FileModel::default(),
            ),
            (Ok(_), Some(Err(error))) => {
                failed.push((i, error.clone()));
                errors.push(error);
            }
            (Err(error), _) => errors.push(error),
        }
    }
    program.qualify_member_locks();
    let graph = CallGraph::build(&program);
    let findings = lints::check_all(&program, &graph);
    drop(graph);
    if let Some((cache, key)) = &outcome_key
        && !stale.load(Ordering::Relaxed)
    {
        let suppressions = (0..files.len()).filter(|&i| suppressions[i]).collect();
        cache.store_result(key, &Outcome::new(failed, suppressions, &findings));
    }
    restore_texts(&mut program, &findings, &mut errors, &options);
    Analysis {
        program,
        findings,
        errors,
    }
}

/// Models one file through the cache, if there is one (with the text's key): a model made under
/// the same learnt knowledge is read back, and a model made is written. With the cache, also the
/// model's hash ([`cache::Model::hash`]).
fn model_cached(
    path: &Path,
    language: Language,
    text: &str,
    knowledge: &Knowledge,
    cache: Option<(&Cache, Key)>,
    learnt: u64,
) -> Result<(FileModel, Option<u64>), String> {
    let Some((cache, key)) = cache else {
        return Ok((model_file(path, language, text, knowledge)?, None));
    };
    if let Some(cached) = cache.model(path, key, text)
        && cached.learnt == learnt
    {
        return Ok((cached.model, Some(cached.hash)));
    }
    let model = model_file(path, language, text, knowledge)?;
    let hash = cache.store_model(path, key, learnt, &model);
    Ok((model, Some(hash)))
}

/// A hash of what modelling a file made, with the cache: its model's, or its error's.
fn made_hash(made: &Result<Modelled, String>) -> Option<u64> {
    match made {
        Ok(modelled) => modelled.hash,
        Err(error) => Some(xxhash_rust::xxh3::xxh3_64(error.as_bytes())),
    }
}

/// What a whole run made of its inputs, kept in the cache under the files' paths and keys, the
/// knowledge and the pre-filter's setting: a run of the same inputs makes the same findings, so it
/// only reads and hashes the files. Suppressions, rule selection and the baseline are applied
/// after, so they may change between the runs.
#[derive(Serialize, Deserialize)]
struct Outcome {
    /// The files (indices) that were read but could not be modelled, with the error.
    failed: Vec<(usize, String)>,
    /// The files with suppression comments, whose texts [`suppress`] reads.
    suppressions: Vec<usize>,
    /// Each finding's rule id ([`Finding`] keeps its rule as a static name of [`lints`]).
    rules: Vec<String>,
    /// Their spans name the files of the program: those read and modelled, in order.
    findings: Vec<Finding>,
}

impl Outcome {
    fn new(failed: Vec<(usize, String)>, suppressions: Vec<usize>, findings: &[Finding]) -> Self {
        Outcome {
            failed,
            suppressions,
            rules: findings.iter().map(|f| f.rule.to_string()).collect(),
            findings: findings.to_vec(),
        }
    }

    /// The files (indices) of the program this outcome's findings name: those read, less those
    /// that failed.
    fn program_files<'a>(
        &'a self,
        texts: &'a [Result<String, String>],
    ) -> impl Iterator<Item = usize> + 'a {
        let mut failed = self.failed.iter().map(|(i, _)| *i).peekable();
        (0..texts.len()).filter(move |&i| {
            let skip = failed.next_if_eq(&i).is_some();
            texts[i].is_ok() && !skip
        })
    }

    /// Whether the entry can be the outcome of a run over `texts` (read in this run, with the
    /// keys the entry was found by): every index and rule is known and every span lies on
    /// character boundaries of its file. An entry that does not was not written by a run.
    fn fits(&self, texts: &[Result<String, String>]) -> bool {
        // Indices of files read, in ascending order.
        let read = |indices: &[usize]| {
            indices.windows(2).all(|w| w[0] < w[1])
                && indices
                    .iter()
                    .all(|&i| texts.get(i).is_some_and(Result::is_ok))
        };
        if !read(&self.failed.iter().map(|(i, _)| *i).collect::<Vec<_>>())
            || !read(&self.suppressions)
            || self.rules.len() != self.findings.len()
            || !self.rules.iter().all(|id| lints::find(id).is_some())
        {
            return false;
        }
        let program: Vec<&str> = self
            .program_files(texts)
            .map(|i| texts[i].as_deref().expect("a file read"))
            .collect();
        self.findings.iter().flat_map(Finding::spans).all(|span| {
            program.get(span.file as usize).is_some_and(|text| {
                span.start <= span.end
                    && text.is_char_boundary(span.start as usize)
                    && text.is_char_boundary(span.end as usize)
            })
        })
    }

    /// The analysis of a run over `texts`, as this outcome records it ([`Outcome::fits`] them).
    fn replay(
        self,
        files: &[(PathBuf, Language)],
        mut texts: Vec<Result<String, String>>,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Analysis {
        let program_files: Vec<usize> = self.program_files(&texts).collect();
        // The texts read again: those of the files the findings point into, and suppressions'.
        let mut keep = vec![false; files.len()];
        for &i in &self.suppressions {
            keep[i] = true;
        }
        for span in self.findings.iter().flat_map(Finding::spans) {
            keep[program_files[span.file as usize]] = true;
        }
        let mut failed = self.failed.into_iter().peekable();
        let mut errors = Vec::new();
        let mut program = Program::default();
        program.files.reserve_exact(program_files.len());
        for (i, (path, language)) in files.iter().enumerate() {
            match std::mem::replace(&mut texts[i], Ok(String::new())) {
                Err(error) => errors.push(error),
                Ok(_) if failed.peek().is_some_and(|(at, _)| *at == i) => {
                    errors.push(failed.next().expect("peeked").1);
                }
                Ok(text) => {
                    let text = if keep[i] { text } else { String::new() };
                    program.add_file(
                        SourceFile::new(display_path(path), *language, text),
                        FileModel::default(),
                    );
                }
            }
            progress(Progress::FileDone);
        }
        progress(Progress::Linking);
        let findings = self
            .rules
            .iter()
            .zip(self.findings)
            .map(|(id, finding)| Finding {
                rule: lints::find(id).expect("a known rule").id,
                ..finding
            })
            .collect();
        Analysis {
            program,
            findings,
            errors,
        }
    }
}

/// Each file with its text (if it was read), its cached facts and whether they changed.
fn with_entries<'a>(
    files: &'a [(PathBuf, Language)],
    texts: &'a [Result<String, String>],
    entries: &'a mut [Facts],
    changed: &'a mut [bool],
) -> impl IndexedParallelIterator<
    Item = (
        &'a PathBuf,
        Language,
        Option<&'a String>,
        &'a mut Facts,
        &'a mut bool,
    ),
> {
    // A file a task, as the pre-filter models them (see `prefilter::model_relevant`).
    files
        .par_iter()
        .zip(texts)
        .zip(entries)
        .zip(changed)
        .with_max_len(1)
        .map(|((((path, language), text), facts), changed)| {
            (path, *language, text.as_ref().ok(), facts, changed)
        })
}

/// The fact in `slot` if it was made under the learnt knowledge `learnt`; else `make`'s, kept in
/// `slot` (and the file's entry marked `changed`).
fn learnt_fact<T: Clone>(
    slot: &mut Learnt<T>,
    learnt: u64,
    changed: &mut bool,
    make: impl FnOnce() -> T,
) -> T {
    match slot {
        Some((made, fact)) if *made == learnt => fact.clone(),
        _ => {
            *changed = true;
            slot.insert((learnt, make())).1.clone()
        }
    }
}

/// A hash of what was learnt so far (`learnt`) and of `facts`, learnt next from every file.
fn hash_learnt(learnt: u64, facts: &impl serde::Serialize) -> u64 {
    let bytes = postcard::to_allocvec(facts).expect("facts encode");
    xxhash_rust::xxh3::xxh3_64_with_seed(&bytes, learnt)
}

/// A file's model and its source, as modelling leaves them.
struct Modelled {
    model: FileModel,
    source: SourceFile,
    /// With the cache: the model's hash ([`cache::Model::hash`]).
    hash: Option<u64>,
}

impl AsRef<FileModel> for Modelled {
    fn as_ref(&self) -> &FileModel {
        &self.model
    }
}

/// Reads again the texts of the files the findings point into, for the renderers.
fn restore_texts(
    program: &mut Program,
    findings: &[Finding],
    errors: &mut Vec<String>,
    options: &Options,
) {
    let files: std::collections::BTreeSet<usize> = findings
        .iter()
        .flat_map(|f| f.spans().map(|span| span.file as usize))
        .filter(|&file| !program.files[file].has_text())
        .collect();
    for file in files {
        let source = &mut program.files[file];
        let same = options
            .read_text(&source.path)
            .is_ok_and(|text| source.restore_text(text));
        if !same {
            errors.push(format!(
                "{}: changed during the run; its lines are shown blank",
                input::shown(&source.path)
            ));
        }
    }
}

/// Stack bytes one level of Rust nesting may take in the parser, the front-end's walk and the
/// drop of the syntax tree together: twice the most measured in a release build (about 4 KiB a
/// level of nested generic types, 3.5 KiB of `&` types, 2.7 KiB of `return`; 1.4 KiB of unary
/// operators). `tests/rust_depth.rs` checks that each construct, as deep as the bound lets
/// through, fits in a worker's stack.
pub const STACK_PER_RUST_LEVEL: usize = 8 << 10;

/// A worker's stack: room for [`frontend::rust_scan::MAX_RUST_DEPTH`] levels of Rust nesting (the only
/// recursion that input controls) and for the rest of the work.
pub const WORKER_STACK: usize =
    frontend::rust_scan::MAX_RUST_DEPTH * STACK_PER_RUST_LEVEL + (8 << 20);

/// A thread pool whose workers can model any file (see [`WORKER_STACK`]).
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .stack_size(WORKER_STACK)
        .build()
        .map_err(|e| format!("cannot start {} worker threads: {e}", threads.unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Severity, Step};
    use crate::model::Span;

    fn outcome(rule: &str, span: Span) -> Outcome {
        let finding = Finding {
            rule: "",
            severity: Severity::Error,
            message: String::new(),
            primary: span,
            primary_label: String::new(),
            function: String::new(),
            flows: vec![crate::diagnostic::Flow {
                title: String::new(),
                steps: vec![Step {
                    span,
                    function: String::new(),
                    note: String::new(),
                    guessed: false,
                }],
            }],
            notes: Vec::new(),
            help: None,
        };
        Outcome {
            failed: vec![(1, "b: cannot be parsed".into())],
            suppressions: vec![2],
            rules: vec![rule.into()],
            findings: vec![finding],
        }
    }

    #[test]
    fn an_outcome_fits_only_texts_its_spans_and_indices_lie_in() {
        // The program's files are `a` and `c` (`b` failed): file 1 is `c`.
        let texts = || vec![Ok("a".to_string()), Ok("b".into()), Ok("cé".into())];
        let span = |file, start, end| Span { file, start, end };
        let missing = lints::find("missing-gil").expect("a rule").id;
        assert!(outcome(missing, span(1, 0, 3)).fits(&texts()));
        assert!(
            !outcome(missing, span(1, 0, 2)).fits(&texts()),
            "not a boundary"
        );
        assert!(
            !outcome(missing, span(1, 0, 4)).fits(&texts()),
            "past the end"
        );
        assert!(!outcome(missing, span(2, 0, 0)).fits(&texts()), "no file 2");
        assert!(!outcome("no-such-rule", span(0, 0, 1)).fits(&texts()));
        let mut unread = texts();
        unread[2] = Err("c: cannot be read".into());
        assert!(
            !outcome(missing, span(0, 0, 1)).fits(&unread),
            "suppressions in c"
        );
        let mut disordered = outcome(missing, span(0, 0, 1));
        disordered.failed.push((0, String::new()));
        assert!(!disordered.fits(&texts()));
    }
}

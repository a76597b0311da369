//! The persistent cache of per-file facts: what the light scans and the front-ends make of one
//! file's text, kept between runs so that a second run parses only the files that changed.
//!
//! Each analysed file has two entries in the cache directory, named after its path: its
//! [`Facts`] and its model. Each project (its list of paths) has two more, keyed by a [`RunKey`]:
//! the files the pre-filter chose (keyed by every file's scan, with the hash of each chosen file's
//! model, so that an edit that changes neither is answered without the pre-filter's rounds), and
//! what the whole run made (its findings, keyed by every file's text), which answers a run of an
//! unchanged tree without reading any other entry. Each starts with a [`Key`] (a hash of this build, the file's path,
//! language and text) and a checksum. A fact that depends on knowledge learnt from the analysed code (the project's
//! guard types, macros and crate types) carries a hash of that knowledge and is used only under
//! the same. Entries are written atomically (a temporary file renamed over the entry), so two
//! runs at once each see a whole entry or none. An entry that is truncated, corrupt, of another
//! build, of another text or too large is ignored and rebuilt: it is never trusted, and a model
//! read back is checked against its text before it is used.
//!
//! The cache directory never leads out of the project: the default one (`.gil-lint-cache/` at the
//! project root) is not used through a symbolic link, nor when git tracks a file in it (a
//! committed cache could hide findings); entries are never read or written through a link.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use crate::frontend::cpp::guards::GuardFact;
use crate::frontend::scan::Definitions;
use crate::knowledge::{CrateTypes, ProjectMacro};
use crate::model::{CallNote, CallTarget, FileModel, Language, Span};

/// The default cache directory's name, at the project root.
pub const DIR_NAME: &str = ".gil-lint-cache";

/// Start the two kinds of entry; the last byte is the layout's version.
const FACTS: &[u8; 8] = b"gilfact\x01";
const MODEL: &[u8; 8] = b"gilmodl\x01";
const RUN: &[u8; 8] = b"gilrun\0\x02";
const RESULT: &[u8; 8] = b"gilrslt\x01";

/// This build: entries written by any other are not read, as their models may differ.
const BUILD: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("GIL_LINT_BUILD_HASH"));

/// Identifies one file's text as analysed: this build, the path, the language and the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key(u128);

impl Key {
    pub fn new(path: &Path, language: Language, text: &str) -> Key {
        let mut hasher = Xxh3::new();
        for part in [BUILD.as_bytes(), path.as_os_str().as_encoded_bytes()] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        hasher.update(&[language as u8]);
        hasher.update(text.as_bytes());
        Key(hasher.digest128())
    }
}

/// Identifies the inputs of a whole run: every file's path and a hash of what the entry depends on
/// in it (its [`Key`], or its scan), in order, and the knowledge (or a hash of whatever else the
/// entry depends on). `name` identifies the list of paths alone (a project), so that a project has
/// one entry of each kind.
pub struct RunKey {
    name: u64,
    key: u128,
}

impl RunKey {
    /// `keys` are the files' keys, none for a file that could not be read.
    pub fn new(files: &[(PathBuf, Language)], keys: &[Option<Key>], learnt: u64) -> RunKey {
        Self::of_hashes(files, keys.iter().map(|k| k.map_or(0, |k| k.0)), learnt)
    }

    /// `scans` are the hashes of the files' scans ([`scan_hash`]).
    pub fn of_scans(files: &[(PathBuf, Language)], scans: &[u64], learnt: u64) -> RunKey {
        Self::of_hashes(files, scans.iter().map(|&h| u128::from(h)), learnt)
    }

    fn of_hashes(
        files: &[(PathBuf, Language)],
        hashes: impl Iterator<Item = u128>,
        learnt: u64,
    ) -> RunKey {
        let (mut name, mut key) = (Xxh3::new(), Xxh3::new());
        key.update(&learnt.to_le_bytes());
        for ((path, language), hash) in files.iter().zip(hashes) {
            let path = path.as_os_str().as_encoded_bytes();
            name.update(&(path.len() as u64).to_le_bytes());
            name.update(path);
            key.update(&[*language as u8]);
            key.update(&hash.to_le_bytes());
        }
        let name = name.digest();
        key.update(&name.to_le_bytes());
        RunKey {
            name,
            key: key.digest128(),
        }
    }
}

/// A fact, with the hash of the learnt knowledge it was made with.
pub type Learnt<T> = Option<(u64, T)>;

/// What the scans before modelling found in one file's text (`None`: not known yet).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Facts {
    pub guards: Learnt<Vec<(String, GuardFact)>>,
    pub macros: Learnt<Vec<ProjectMacro>>,
    pub crate_types: Learnt<CrateTypes>,
    /// Whether a Rust text names a crate that forwards the `log` facade to Python.
    pub logging_bridge: Learnt<bool>,
    /// Whether the text has suppression comments.
    pub suppressions: Option<bool>,
    /// The pre-filter's scan: whether the file is a seed, and what it may define.
    pub scan: Learnt<(bool, Option<Definitions>)>,
}

/// A model read back from the cache.
pub struct Model {
    /// The hash of the learnt knowledge it was made under.
    pub learnt: u64,
    pub model: FileModel,
    /// A hash of the model and `learnt`, the same for equal models (their encoding, which is
    /// also the entry's checksum): what the pre-filter's choice is checked against.
    pub hash: u64,
}

/// A hash of the pre-filter's scan of one file (whether it is a seed, and what it may define),
/// the same for equal scans whatever the order of their sets.
pub fn scan_hash(seed: bool, definitions: Option<&Definitions>) -> u64 {
    let definitions = definitions.map(|definitions| {
        // Every field, so that one added is not forgotten here.
        let Definitions {
            functions,
            classes,
            scopes,
            module,
        } = definitions;
        let mut scopes: Vec<&String> = scopes.iter().collect();
        scopes.sort_unstable();
        (functions, classes, scopes, module)
    });
    xxh3_64(&postcard::to_allocvec(&(seed, definitions)).expect("a scan encodes"))
}

/// An open cache directory. Each analysed file has two entries, named after its path: its
/// [`Facts`], read for every file, and its model, read only for the files modelled.
pub struct Cache {
    dir: PathBuf,
    /// The largest entry read or written, in bytes.
    limit: u64,
}

/// Where the cache lives and whether to use it, from the settings.
pub enum Location {
    /// `.gil-lint-cache/` in this project root: created there, never through a link.
    Default(PathBuf),
    /// A directory named by the user (`--cache-dir`, `GIL_LINT_CACHE_DIR`): created as needed.
    Given(PathBuf),
}

impl Cache {
    /// Opens the cache directory, creating it with a `.gitignore` that ignores it. `limit` bounds
    /// an entry's size. `Err` says why it is not used, on one line.
    pub fn open(location: &Location, limit: u64) -> Result<Cache, String> {
        let reason = |e: std::io::Error| crate::input::one_line(&e.to_string());
        let dir = match location {
            Location::Given(dir) => {
                std::fs::create_dir_all(dir).map_err(reason)?;
                dir.clone()
            }
            Location::Default(root) => {
                let dir = root.join(DIR_NAME);
                match std::fs::create_dir(&dir) {
                    Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                        return Err(reason(e));
                    }
                    _ => {}
                }
                let metadata = std::fs::symlink_metadata(&dir).map_err(reason)?;
                if !metadata.is_dir() {
                    return Err(format!(
                        "{} is {}, not a directory",
                        crate::input::shown(&dir),
                        crate::input::kind_of(&metadata)
                    ));
                }
                if tracked_by_git(&dir) {
                    return Err(format!(
                        "git tracks files in {}: a committed cache is not trusted",
                        crate::input::shown(&dir)
                    ));
                }
                dir
            }
        };
        let ignore = dir.join(".gitignore");
        if std::fs::symlink_metadata(&ignore).is_err() {
            // Another run may write it at once: either's is the same.
            let _ = write_atomic(&dir, &ignore, b"# Written by gil-lint: its cache.\n*\n");
        }
        Ok(Cache { dir, limit })
    }

    fn entry_path(&self, path: &Path, kind: &str) -> PathBuf {
        let name = xxh3_64(path.as_os_str().as_encoded_bytes());
        self.dir.join(format!("{name:016x}.{kind}"))
    }

    /// The payload of an entry that starts with `header`, if its checksum holds.
    fn read(&self, path: PathBuf, header: &[u8]) -> Option<Vec<u8>> {
        let mut bytes = read_entry(&path, self.limit)?;
        let rest = bytes.strip_prefix(header)?;
        let (sum, payload) = rest.split_first_chunk::<8>()?;
        if u64::from_le_bytes(*sum) != xxh3_64(payload) {
            return None;
        }
        bytes.drain(..header.len() + 8);
        Some(bytes)
    }

    /// Writes an entry: `header`, a checksum, `payload`. A failed write leaves the cache as it
    /// was (the next run makes that entry again).
    fn write(&self, path: PathBuf, header: &[u8], payload: &[u8]) {
        let mut entry = Vec::with_capacity(header.len() + 8 + payload.len());
        entry.extend_from_slice(header);
        entry.extend_from_slice(&xxh3_64(payload).to_le_bytes());
        entry.extend_from_slice(payload);
        if entry.len() as u64 <= self.limit {
            let _ = write_atomic(&self.dir, &path, &entry);
        }
    }

    /// The facts of this file's text, if a valid entry holds them.
    pub fn facts(&self, path: &Path, key: Key) -> Option<Facts> {
        let header = [&FACTS[..], &key.0.to_le_bytes()].concat();
        let payload = self.read(self.entry_path(path, "facts"), &header)?;
        postcard::from_bytes(&payload).ok()
    }

    pub fn store_facts(&self, path: &Path, key: Key, facts: &Facts) {
        let header = [&FACTS[..], &key.0.to_le_bytes()].concat();
        if let Ok(payload) = postcard::to_allocvec(facts) {
            self.write(self.entry_path(path, "facts"), &header, &payload);
        }
    }

    /// This file's model, with the hash of the learnt knowledge it was made under, if a valid
    /// entry holds one that fits `text` (the text of `key`); and the model's [`Model::hash`].
    pub fn model(&self, path: &Path, key: Key, text: &str) -> Option<Model> {
        let header = [&MODEL[..], &key.0.to_le_bytes()].concat();
        let payload = self.read(self.entry_path(path, "model"), &header)?;
        let (learnt, model): (u64, FileModel) = postcard::from_bytes(&payload).ok()?;
        let mut model = Some(model).filter(|model| fits(model, text))?;
        model.share_names();
        Some(Model {
            learnt,
            model,
            hash: xxh3_64(&payload),
        })
    }

    /// Keeps this file's model, made under the learnt knowledge `learnt`; its [`Model::hash`].
    pub fn store_model(&self, path: &Path, key: Key, learnt: u64, model: &FileModel) -> u64 {
        let header = [&MODEL[..], &key.0.to_le_bytes()].concat();
        let payload = postcard::to_allocvec(&(learnt, model)).expect("a model encodes");
        self.write(self.entry_path(path, "model"), &header, &payload);
        xxh3_64(&payload)
    }
}

impl Cache {
    fn run_path(&self, run: &RunKey, kind: &str) -> PathBuf {
        self.dir.join(format!("{:016x}.{kind}", run.name))
    }

    /// The files (indices, in order) the pre-filter modelled in a run of the same scans, each
    /// with the hash of what modelling it made ([`Model::hash`], or a hash of its error).
    pub fn selection(&self, run: &RunKey, files: usize) -> Option<Vec<(usize, u64)>> {
        let header = [&RUN[..], &run.key.to_le_bytes()].concat();
        let payload = self.read(self.run_path(run, "run"), &header)?;
        let chosen: Vec<(usize, u64)> = postcard::from_bytes(&payload).ok()?;
        let valid = chosen.windows(2).all(|w| w[0].0 < w[1].0)
            && chosen.last().is_none_or(|&(i, _)| i < files);
        valid.then_some(chosen)
    }

    pub fn store_selection(&self, run: &RunKey, chosen: &[(usize, u64)]) {
        let header = [&RUN[..], &run.key.to_le_bytes()].concat();
        if let Ok(payload) = postcard::to_allocvec(chosen) {
            self.write(self.run_path(run, "run"), &header, &payload);
        }
    }

    /// What a whole run of the same inputs made (its findings), as `store_result` wrote it.
    /// It is only decoded here: the caller checks that it fits the files before using it.
    pub fn result<T: DeserializeOwned>(&self, run: &RunKey) -> Option<T> {
        let header = [&RESULT[..], &run.key.to_le_bytes()].concat();
        postcard::from_bytes(&self.read(self.run_path(run, "result"), &header)?).ok()
    }

    pub fn store_result<T: Serialize>(&self, run: &RunKey, result: &T) {
        let header = [&RESULT[..], &run.key.to_le_bytes()].concat();
        if let Ok(payload) = postcard::to_allocvec(result) {
            self.write(self.run_path(run, "result"), &header, &payload);
        }
    }
}

/// Whether git lists a file under `dir` as tracked. Without git, or outside a repository,
/// nothing is tracked.
fn tracked_by_git(dir: &Path) -> bool {
    std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["ls-files", "-z", "--", "."])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .is_ok_and(|out| out.status.success() && !out.stdout.is_empty())
}

/// The bytes of the regular file at `path` if it has at most `limit`; never through a symbolic
/// link, never blocking on a FIFO.
fn read_entry(path: &Path, limit: u64) -> Option<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path).ok()?;
    let metadata = file.metadata().ok()?;
    if !metadata.is_file() || metadata.len() > limit {
        return None;
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= limit).then_some(bytes)
}

/// Replaces `path` (in `dir`) by a file holding `contents`: a temporary file renamed over it,
/// which replaces a link rather than following it.
fn write_atomic(dir: &Path, path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut temp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    temp.write_all(contents)?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Whether a model read back can be the model of `text`: every span lies on character
/// boundaries of the text, and every index points into the model. A front-end's model always
/// does; an entry that does not was not written by one.
fn fits(model: &FileModel, text: &str) -> bool {
    let span = |span: &Span| {
        span.start <= span.end
            && text.is_char_boundary(span.start as usize)
            && text.is_char_boundary(span.end as usize)
    };
    let target = |target: &CallTarget| match target {
        CallTarget::Direct(id) => *id < model.functions.len(),
        CallTarget::Named { .. } | CallTarget::Param(_) => true,
    };
    let in_text =
        |range: &std::ops::Range<u32>| range.start <= range.end && range.end as usize <= text.len();
    model.functions.iter().all(|f| {
        span(&f.span)
            && f.calls.iter().all(|c| span(&c.span) && target(&c.target))
            && f.call_notes.iter().all(|(call, note)| {
                (*call as usize) < f.calls.len()
                    && match note {
                        CallNote::PassedTo(call, ..) => (*call as usize) < f.calls.len(),
                        CallNote::LendsGuard { region, .. } => {
                            (*region as usize) < f.lock_regions.len()
                        }
                        CallNote::Spawns(_)
                        | CallNote::Unpublished
                        | CallNote::ArgumentTypes(_)
                        | CallNote::Kept => true,
                    }
            })
            && f.kept_params
                .iter()
                .all(|(_, handed)| handed.is_none_or(|(call, _)| (call as usize) < f.calls.len()))
            && f.unlocked_params.iter().all(|(_, range)| in_text(range))
            && f.py_uses.iter().all(|u| span(&u.span))
            && f.gil_switches
                .iter()
                .all(|s| span(&s.span) && in_text(&s.scope))
            && f.lock_regions
                .iter()
                .all(|l| span(&l.span) && in_text(&l.scope))
    }) && model.bindings.iter().all(|b| {
        span(&b.span) && target(&b.target) && b.guard.as_ref().is_none_or(|(s, _)| span(s))
    })
}

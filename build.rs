//! Hashes the sources and the built-in knowledge into `GIL_LINT_BUILD_HASH`: the persistent cache
//! (src/cache.rs) never reads what another build wrote, since its models may differ even where
//! the version number does not.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let mut all = Vec::new();
    for dir in ["src", "rules"] {
        println!("cargo:rerun-if-changed={dir}");
        files(Path::new(dir), &mut all);
    }
    all.sort();
    let mut hasher = std::hash::DefaultHasher::new();
    for path in &all {
        path.hash(&mut hasher);
        std::fs::read(path).unwrap_or_default().hash(&mut hasher);
    }
    println!(
        "cargo:rustc-env=GIL_LINT_BUILD_HASH={:016x}",
        hasher.finish()
    );
}

//! The `check` command after its options are read: configuration -> discover -> analyse ->
//! rule selection and severities -> suppressions -> report scope -> baseline.

use std::path::{Path, PathBuf};

use crate::baseline::{self, Baseline};
use crate::cache::{self, Cache};
use crate::config::Config;
use crate::diagnostic::{Confidence, Finding};
use crate::frontend::Language;
use crate::input::shown;
use crate::knowledge::Knowledge;
use crate::repo::{RepoRoot, absolute};
use crate::{Analysis, GivenText, Progress, discover, suppress};

/// What is reported when neither the configuration nor the command line says.
pub const DEFAULT_MIN_CONFIDENCE: Confidence = Confidence::Low;

pub struct Options<'a> {
    /// What to analyse; with `project`, whose findings to report.
    pub paths: Vec<PathBuf>,
    /// Analyse this whole directory (the call graph needs every file), but report only the
    /// findings whose location or path touches one of `paths` (the pre-commit hook's mode).
    pub project: Option<PathBuf>,
    /// The configuration with the command line's flags applied.
    pub config: Config,
    /// `--exclude` globs, matched relative to each walked path.
    pub exclude: Vec<String>,
    pub baseline: Option<Baseline>,
    pub progress: &'a (dyn Fn(Progress) + Sync),
    /// Called once the files are found, with their number.
    pub discovered: &'a dyn Fn(usize),
    /// Parse only the files that can change the findings (see [`crate::prefilter`]).
    pub prefilter: bool,
    /// A file read from standard input: it is analysed as this path (with the project's other
    /// files under `project`), in place of the file there if there is one. `paths` is then its
    /// path alone.
    pub given: Option<GivenText>,
    /// Where to keep what is made of each file between runs; none for no cache.
    pub cache: Option<cache::Location>,
    /// Where the baseline's paths start.
    pub root: &'a RepoRoot,
}

impl<'a> Options<'a> {
    /// A check of `paths` with the default configuration, the pre-filter, and no project, cache,
    /// baseline or progress reports: what a library caller changes from.
    pub fn new(paths: Vec<PathBuf>, root: &'a RepoRoot) -> Self {
        Options {
            paths,
            project: None,
            config: Config::default(),
            exclude: Vec::new(),
            baseline: None,
            progress: &|_| {},
            discovered: &|_| {},
            prefilter: true,
            given: None,
            cache: None,
            root,
        }
    }
}

pub struct Report {
    /// The findings to report, in order.
    pub analysis: Analysis,
    /// Findings a suppression comment removed.
    pub suppressed: usize,
    /// What the baseline removed, when one was given.
    pub baseline: Option<baseline::Applied>,
    /// Paths given that hold no file of a language gil-lint reads (an empty directory).
    pub empty_roots: Vec<PathBuf>,
}

/// Runs a check; `Err` is a usage error (bad knowledge file or glob).
pub fn run(options: Options) -> Result<Report, String> {
    let config = &options.config;
    let extra: Vec<&Path> = config.knowledge.iter().map(PathBuf::as_path).collect();
    let knowledge = Knowledge::load(&extra).map_err(|e| format!("{e:#}"))?;
    let exclude = discover::exclude_set(&options.exclude)?;
    let excluder = config.excluder()?;
    if let Some(project) = &options.project {
        let root = absolute(project);
        if let Some(outside) = options
            .paths
            .iter()
            .find(|p| !absolute(p).starts_with(&root))
        {
            return Err(format!(
                "{} is outside the project {} (--project): only findings in the project are \
                 reported",
                shown(outside),
                shown(project)
            ));
        }
    }
    // Without a project, the local crates that the checked Rust crates depend on are read too
    // (their calls resolve into them), and only the findings that touch the paths are reported,
    // as with a project.
    let dependencies = match (&options.project, &options.given) {
        (None, None) => discover::path_dependencies(&options.paths, options.root.dir()),
        _ => Vec::new(),
    };
    let roots = match (&options.project, &options.given) {
        (Some(project), _) => vec![project.clone()],
        (None, Some(_)) => Vec::new(),
        (None, None) => options.paths.iter().chain(&dependencies).cloned().collect(),
    };
    let mut found = discover::discover(&roots, &exclude);
    found
        .empty_roots
        .retain(|root| !dependencies.contains(root));
    found.files.retain(|(path, _)| !excluder.is_excluded(path));
    if let Some(given) = &options.given {
        let language = Language::of(&given.path).ok_or_else(|| {
            format!(
                "--stdin-filename {}: not the name of a C, C++, CUDA or Rust file",
                shown(&given.path)
            )
        })?;
        let at = absolute(&given.path);
        found.files.retain(|(path, _)| absolute(path) != at);
        found.files.push((given.path.clone(), language));
        found.files.sort();
    }
    (options.discovered)(found.files.len());
    let max_file_size = config.max_file_size.unwrap_or(crate::DEFAULT_MAX_FILE_SIZE);
    let mut errors = found.errors;
    // An entry holds a model, larger than its text but in proportion to it.
    let cache_limit = max_file_size.saturating_mul(16).saturating_add(1 << 20);
    let cache = options
        .cache
        .as_ref()
        .map(|location| Cache::open(location, cache_limit))
        .transpose()
        .unwrap_or_else(|reason| {
            errors.push(format!("the cache is not used: {reason}"));
            None
        });
    let analysis_options = crate::Options {
        prefilter: options.prefilter,
        max_file_size,
        given: options.given.as_ref(),
        cache: cache.as_ref(),
    };
    let mut analysis =
        crate::analyse_files_opts(&found.files, &knowledge, options.progress, analysis_options);
    errors.append(&mut analysis.errors);
    analysis.errors = errors;

    let program = &analysis.program;
    let findings = &mut analysis.findings;
    let min_confidence = config.min_confidence.unwrap_or(DEFAULT_MIN_CONFIDENCE);
    findings.retain(|f| config.enabled(f.rule) && f.confidence() >= min_confidence);
    for finding in findings.iter_mut() {
        if let Some(&severity) = config.severity.get(finding.rule) {
            finding.severity = severity;
        }
    }
    let report_unused = config.warn_unused_suppressions.unwrap_or(false)
        && !config
            .ignore
            .contains(crate::lints::unused_suppression::UNUSED_SUPPRESSION.id);
    let suppressions = suppress::apply(
        program,
        findings,
        |id| crate::lints::find(id).is_some(),
        |id| config.enabled(id),
        report_unused,
    );
    let mut unused = suppressions.unused;
    for finding in &mut unused {
        if let Some(&severity) = config.severity.get(finding.rule) {
            finding.severity = severity;
        }
    }
    findings.append(&mut unused);
    findings.sort_by_cached_key(|f| {
        (
            program.file(f.primary.file).path.clone(),
            f.primary.start,
            f.rule,
        )
    });
    if options.project.is_some() || !dependencies.is_empty() {
        let wanted: Vec<PathBuf> = options.paths.iter().map(|p| absolute(p)).collect();
        let files: Vec<bool> = program
            .files
            .iter()
            .map(|f| {
                let path = absolute(&f.path);
                wanted.iter().any(|w| path.starts_with(w))
            })
            .collect();
        findings.retain(|f| touches(f, &files));
    }
    let baseline = options
        .baseline
        .map(|b| b.apply(program, findings, options.root));
    Ok(Report {
        analysis,
        suppressed: suppressions.suppressed,
        baseline,
        empty_roots: found.empty_roots,
    })
}

/// Whether the finding's location or a step of its path is in one of the files marked in `files`.
fn touches(finding: &Finding, files: &[bool]) -> bool {
    finding.spans().any(|span| files[span.file as usize])
}

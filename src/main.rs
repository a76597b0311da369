use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use codespan_reporting::term::termcolor;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use gil_lint::baseline::{self, Baseline};
use gil_lint::config::Config;
use gil_lint::diagnostic::{Confidence, Severity};
use gil_lint::knowledge::Knowledge;
use gil_lint::render::{
    concise, github, gitlab, human::HumanRenderer, json, json_lines, junit, rdjson, sarif,
};
use gil_lint::repo::RepoRoot;
use gil_lint::{Progress, check, discover};

// Modelling allocates and frees many small strings and vectors from every worker thread; the
// system allocator spent about a fifth of the run in malloc and free. mimalloc's version 2 (the
// `v2` feature) holds about 10 % less memory at the peak than version 3 here, at the same speed.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Makes tree-sitter's C library allocate through mimalloc too. With the C library's `malloc`
/// beside mimalloc, neither reused the memory the other freed: each syntax tree freed left its
/// pages to `malloc`, and the models made after it took new ones from mimalloc.
fn tree_sitter_uses_mimalloc() {
    use std::ffi::c_void;
    /// tree-sitter does not check for null, and its own default aborts on it.
    fn allocated(pointer: *mut c_void, size: usize) -> *mut c_void {
        if pointer.is_null() && size != 0 {
            std::process::abort();
        }
        pointer
    }
    unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        allocated(unsafe { libmimalloc_sys::mi_malloc(size) }, size)
    }
    unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
        let Some(size) = count.checked_mul(size) else {
            std::process::abort();
        };
        allocated(unsafe { libmimalloc_sys::mi_zalloc(size) }, size)
    }
    unsafe extern "C" fn realloc(pointer: *mut c_void, size: usize) -> *mut c_void {
        allocated(unsafe { libmimalloc_sys::mi_realloc(pointer, size) }, size)
    }
    unsafe extern "C" fn free(pointer: *mut c_void) {
        unsafe { libmimalloc_sys::mi_free(pointer) }
    }
    // SAFETY: the four are one allocator's, aligned as `malloc`, never null for a size above 0;
    // and this runs first in `main`, before any other tree-sitter call.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc,
            calloc,
            realloc,
            free,
        }))
    };
}

/// Finds GIL bugs in Python native-extension binding code (pybind11, nanobind, the C API).
#[derive(Parser)]
#[command(name = "gil-lint", version, about, arg_required_else_help = true)]
struct Cli {
    /// Print the documentation of a rule and exit.
    #[arg(long, value_name = "RULE")]
    explain: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Analyse files and directories (default: the current directory).
    Check(Box<CheckArgs>),
    /// List the rules.
    Rules,
    /// Report how much of each C++ file tree-sitter cannot parse, with and without the pre-pass.
    #[command(hide = true)]
    ParseStats { paths: Vec<PathBuf> },
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Files or directories to analyse (default: `.`); `-` reads one file from standard input
    /// (with `--stdin-filename`).
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// The path of the file read from standard input (`-`): its language, its configuration, and
    /// with `--project`, its place in the project, whose other files are read from the disk.
    #[arg(long, value_name = "PATH")]
    stdin_filename: Option<PathBuf>,
    /// Print the number of findings of each rule instead of the findings.
    #[arg(long)]
    statistics: bool,
    /// Print the settings the run would use, which configuration file they come from and where
    /// it was looked for, then exit.
    #[arg(long)]
    show_settings: bool,
    /// Exit with 0 even when findings are reported (2 still means an error).
    #[arg(long)]
    exit_zero: bool,
    /// When to colour the output: `auto` colours a terminal unless `NO_COLOR` is set, or any
    /// output when `CLICOLOR_FORCE` is.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    color: ColorWhen,
    /// Write the report to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Worker threads, 1 to 256 (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=MAX_THREADS))]
    threads: Option<u16>,
    /// Skip paths matching this glob (repeatable), e.g. `third_party/**`; added to the
    /// configuration's `exclude`.
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Also read this knowledge file (the format of `rules/*.toml`); repeatable, added to the
    /// configuration's `knowledge`.
    #[arg(long = "knowledge", value_name = "FILE")]
    knowledge: Vec<PathBuf>,
    /// Use this configuration file instead of searching for one.
    #[arg(long, value_name = "FILE", conflicts_with = "isolated")]
    config: Option<PathBuf>,
    /// Read no configuration file.
    #[arg(long)]
    isolated: bool,
    /// Run only these rules (comma-separated); replaces the configuration's `select` and
    /// `ignore`.
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    select: Option<Vec<String>>,
    /// Do not run these rules (comma-separated); added to the configuration's `ignore`.
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    ignore: Vec<String>,
    /// Report a rule at this level (`RULE=error` or `RULE=warning`); repeatable.
    #[arg(long, value_name = "RULE=LEVEL")]
    severity: Vec<String>,
    /// Report suppression comments that suppress nothing (rule `unused-suppression`).
    #[arg(long)]
    warn_unused_suppressions: bool,
    /// Report only the findings not recorded in this baseline file.
    #[arg(long, value_name = "FILE", conflicts_with = "write_baseline")]
    baseline: Option<PathBuf>,
    /// Skip source files larger than SIZE (e.g. 8MiB; default 4MiB).
    #[arg(long, value_name = "SIZE", value_parser = gil_lint::input::parse_size)]
    max_file_size: Option<u64>,
    /// Report only findings at least this sure: `high` hides those whose path follows a call
    /// guessed by name (receiver of unknown type, or a virtual call with several overrides).
    #[arg(long, value_enum, value_name = "LEVEL")]
    min_confidence: Option<Confidence>,
    /// Record the current findings in this baseline file and exit with 0.
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// Analyse the whole project in DIR, but report only the findings that involve PATHS (for
    /// pre-commit, which passes the changed files).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// The repository root, which SARIF, GitHub and GitLab paths and baselines are relative to
    /// (default: the nearest folder above the checked path with `.git`, else the configuration
    /// file's folder, else `--project`, else the current directory).
    #[arg(long, value_name = "DIR")]
    repo_root: Option<PathBuf>,
    /// No progress bar and no summary line.
    #[arg(long, short)]
    quiet: bool,
    /// Parse every file, not only those the pre-filter selects (for tests and benchmarks).
    #[arg(long, hide = true)]
    no_prefilter: bool,
    /// Keep no cache of what is made of each file between runs (default: `.gil-lint-cache/` at
    /// the project root, or `cache = false` in the configuration).
    /// (`GIL_LINT_NO_CACHE` set to anything but an empty or false value, as `1` or `yes`.)
    #[arg(long, env = "GIL_LINT_NO_CACHE", value_parser = clap::builder::FalseyValueParser::new())]
    no_cache: bool,
    /// Keep the cache in DIR instead of `.gil-lint-cache/` at the project root.
    #[arg(
        long,
        value_name = "DIR",
        env = "GIL_LINT_CACHE_DIR",
        conflicts_with = "no_cache"
    )]
    cache_dir: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ColorWhen {
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    fn choice(self) -> anstream::ColorChoice {
        match self {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// rustc-like text with the call paths (the default).
    Human,
    /// `path:line:col: rule message`, one line per finding.
    Concise,
    /// A versioned JSON document.
    Json,
    /// One JSON object per finding per line.
    JsonLines,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub Actions annotations (workflow commands).
    Github,
    /// A GitLab Code Quality report.
    Gitlab,
    /// JUnit XML.
    Junit,
    /// reviewdog's Diagnostic Format.
    Rdjson,
}

const EXIT_CLEAN: u8 = 0;
const EXIT_FINDINGS: u8 = 1;
const EXIT_USAGE: u8 = 2;
/// More threads than this cannot help (each has its own large stack for deep syntax).
const MAX_THREADS: i64 = 256;

/// mimalloc's `mi_option_purge_delay` (`mimalloc.h`, version 2), which the bindings do not name.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() -> ExitCode {
    tree_sitter_uses_mimalloc();
    // Pages freed are given back to the system at once rather than after 10 ms: a syntax tree
    // is made and freed per file, and the pages the threads kept meanwhile were about 8 MiB of
    // a cold run's peak on the benchmark corpus (docs/performance.md), for more system time.
    // SAFETY: options may be set at any time; this runs before any other thread starts.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) };
    let cli = Cli::parse();
    if let Some(id) = cli.explain {
        return match known_rule(&id) {
            Ok(id) => print_out(&gil_lint::lints::find(&id).expect("a known rule").markdown()),
            Err(message) => usage_error(&message),
        };
    }
    match cli.command {
        Some(Command::Check(mut args)) => match args.read_paths().and_then(|()| check(*args)) {
            Ok(code) => ExitCode::from(code),
            Err(message) => usage_error(&message),
        },
        Some(Command::Rules) => {
            let mut list = String::new();
            for rule in gil_lint::lints::LINTS {
                let severity = match rule.default_severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                };
                list.push_str(&format!(
                    "{:<20} {severity:<8} {:<12} {}\n",
                    rule.id,
                    rule.group.as_str(),
                    rule.summary
                ));
            }
            print_out(&list)
        }
        Some(Command::ParseStats { paths }) => parse_stats(&paths),
        None => usage_error("no command; try `gil-lint check .`"),
    }
}

fn usage_error(message: &str) -> ExitCode {
    say(&format!("error: {message}"));
    ExitCode::from(EXIT_USAGE)
}

/// One line on standard error. A closed or failing standard error is ignored: nothing is left
/// to report it on (`eprintln!` would panic).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Writes `text` to standard output: a closed pipe (`gil-lint rules | head -1`) ends quietly, as
/// in ripgrep and ruff; another error is a one-line error.
fn print_out(text: &str) -> ExitCode {
    match write_out(text) {
        Ok(()) => ExitCode::from(EXIT_CLEAN),
        Err(message) => usage_error(&message),
    }
}

/// [`print_out`] for a caller that goes on.
fn write_out(text: &str) -> Result<(), String> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(err) => Err(format!("cannot write output: {}", io_reason(&err))),
    }
}

fn rule_ids() -> Vec<&'static str> {
    gil_lint::lints::LINTS.iter().map(|r| r.id).collect()
}

fn known_rule(id: &str) -> Result<String, String> {
    match gil_lint::lints::find(id) {
        Some(rule) => Ok(rule.id.to_string()),
        None => Err(gil_lint::config::unknown_rule(id, &rule_ids())),
    }
}

/// The largest text read from standard input: that of a source file (`--max-file-size` does not
/// apply to it).
const STDIN_LIMIT: u64 = 64 << 20;

impl CheckArgs {
    /// The paths to check: `.` when none is given; with `-`, the `--stdin-filename` path alone.
    fn read_paths(&mut self) -> Result<(), String> {
        let stdin = self.paths.iter().any(|p| p.as_os_str() == "-");
        match (&self.stdin_filename, stdin) {
            (Some(path), true) if self.paths.len() == 1 => self.paths = vec![path.clone()],
            (Some(_), true) => return Err("`-` (standard input) must be the only PATH".into()),
            (Some(_), false) => {
                return Err(
                    "--stdin-filename names the text read from `-`: pass `-` as PATH".into(),
                );
            }
            (None, true) => {
                return Err(
                    "reading standard input (`-`) needs --stdin-filename PATH, the file it is"
                        .into(),
                );
            }
            (None, false) if self.paths.is_empty() => self.paths = vec![PathBuf::from(".")],
            (None, false) => {}
        }
        Ok(())
    }

    /// Where the configuration is looked for from.
    fn config_start(&self) -> &std::path::Path {
        self.project.as_deref().unwrap_or(&self.paths[0])
    }

    /// The repository root: `--repo-root`, else the nearest folder with `.git` above where the
    /// configuration is looked for from, else the configuration file's folder, the project or
    /// the current directory.
    fn repo_root(&self, config: &Config) -> Result<RepoRoot, String> {
        if let Some(dir) = &self.repo_root {
            return RepoRoot::at(dir);
        }
        let fallback = config
            .path
            .as_deref()
            .map(gil_lint::input::parent_dir)
            .or(self.project.as_deref())
            .unwrap_or(std::path::Path::new("."));
        Ok(RepoRoot::find(self.config_start(), fallback))
    }
}

/// Standard input, as the text of a source file.
fn read_stdin() -> Result<String, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(STDIN_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("cannot read standard input: {}", io_reason(&err)))?;
    if bytes.len() as u64 > STDIN_LIMIT {
        return Err(format!(
            "standard input: larger than {}",
            gil_lint::input::bytes(STDIN_LIMIT)
        ));
    }
    gil_lint::input::source_text(bytes).map_err(|kind| format!("standard input: {}", kind.reason()))
}

/// The configuration file's settings with the command line's on top.
fn settings(args: &CheckArgs) -> Result<Config, String> {
    let start = args.config_start();
    let mut config = match (&args.config, args.isolated) {
        (_, true) => Config::default(),
        (Some(path), _) => Config::load(path, &rule_ids())?
            .ok_or_else(|| format!("{}: no [tool.gil-lint] table", path.display()))?,
        (None, false) => Config::discover(start, &rule_ids())?,
    };
    // `--select` decides alone which rules run (with `--ignore`): the configuration's `ignore`
    // goes too.
    if let Some(select) = &args.select {
        config.select = Some(
            select
                .iter()
                .map(|r| known_rule(r))
                .collect::<Result<_, _>>()?,
        );
        config.ignore.clear();
    }
    for rule in &args.ignore {
        config.ignore.insert(known_rule(rule)?);
    }
    for setting in &args.severity {
        let (rule, level) = setting
            .split_once('=')
            .ok_or_else(|| format!("--severity `{setting}`: expected RULE=LEVEL"))?;
        let level = match level {
            "error" => Severity::Error,
            "warning" => Severity::Warning,
            _ => {
                return Err(format!(
                    "--severity `{setting}`: LEVEL is `error` or `warning`"
                ));
            }
        };
        config.severity.insert(known_rule(rule)?, level);
    }
    config.knowledge.extend(args.knowledge.iter().cloned());
    if let Some(size) = args.max_file_size {
        config.max_file_size = Some(size);
    }
    if args.min_confidence.is_some() {
        config.min_confidence = args.min_confidence;
    }
    if args.warn_unused_suppressions {
        config.warn_unused_suppressions = Some(true);
    }
    Ok(config)
}

/// A progress bar on standard error, drawn only when it is a terminal and the run takes long
/// enough for one to help.
struct Bar {
    bar: ProgressBar,
    started: Instant,
    enabled: bool,
    shown: std::sync::atomic::AtomicBool,
}

impl Bar {
    const DELAY: Duration = Duration::from_millis(500);

    fn new(enabled: bool) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {pos}/{len} files {wide_bar} {elapsed} {msg}")
                .expect("a valid template"),
        );
        Bar {
            bar,
            started: Instant::now(),
            enabled,
            shown: Default::default(),
        }
    }

    fn event(&self, event: Progress) {
        match event {
            Progress::FileDone => self.bar.inc(1),
            Progress::Linking => self.bar.set_message("call graph and rules"),
        }
        use std::sync::atomic::Ordering;
        if self.enabled
            && self.started.elapsed() >= Self::DELAY
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(120));
        }
    }
}

fn check(args: CheckArgs) -> Result<u8, String> {
    let started = Instant::now();
    // A file read from standard input need not exist on the disk (an unsaved buffer).
    let on_disk = args.paths.iter().filter(|_| args.stdin_filename.is_none());
    for path in on_disk.chain(&args.project) {
        if let Err(err) = std::fs::metadata(path) {
            return Err(format!("{}: {}", path.display(), io_reason(&err)));
        }
    }
    let config = settings(&args)?;
    let root = args.repo_root(&config)?;
    if args.show_settings {
        return write_out(&show_settings(&args, &config)).map(|()| EXIT_CLEAN);
    }
    let given = match &args.stdin_filename {
        Some(path) => Some(gil_lint::GivenText::new(path.clone(), read_stdin()?)),
        None => None,
    };
    let baseline = args.baseline.as_deref().map(Baseline::load).transpose()?;
    if let Some(path) = &args.write_baseline {
        baseline::check_writable(path)?;
    }
    let cache = cache_location(&args, &config);
    let bar = Bar::new(!args.quiet && std::io::stderr().is_terminal());
    let pool = gil_lint::thread_pool(args.threads.map(usize::from))?;
    // Never freed: the process ends with the run, and freeing the models one by one took about
    // 1 % of a cold run's time on the benchmark corpus, on one thread, after the output.
    let report = std::mem::ManuallyDrop::new(pool.install(|| {
        check::run(check::Options {
            paths: args.paths.clone(),
            project: args.project.clone(),
            config,
            exclude: args.exclude.clone(),
            baseline,
            progress: &|event| bar.event(event),
            discovered: &|n| bar.bar.set_length(n as u64),
            prefilter: !args.no_prefilter,
            given,
            cache,
            root: &root,
        })
    })?);
    bar.bar.finish_and_clear();
    let analysis = &report.analysis;
    for error in &analysis.errors {
        say(&format!("warning: {error}"));
    }
    for root in &report.empty_roots {
        say(&format!(
            "warning: {}: no C, C++, CUDA or Rust files found",
            root.display()
        ));
    }
    if analysis.program.files.is_empty() && !analysis.errors.is_empty() {
        return Err("no file could be read".to_string());
    }
    if let Some(path) = &args.write_baseline {
        // Atomically, and never through a symbolic link (see `baseline::write_file`).
        baseline::save(path, &analysis.program, &analysis.findings, &root)?;
        if !args.quiet {
            say(&format!(
                "wrote {} to {}",
                plural(analysis.findings.len(), "finding"),
                path.display()
            ));
        }
        return Ok(EXIT_CLEAN);
    }
    let exit = if analysis.findings.is_empty() || args.exit_zero {
        EXIT_CLEAN
    } else {
        EXIT_FINDINGS
    };
    let run = Run {
        args: &args,
        report: &report,
        root: &root,
        exit,
    };
    let written = match (&args.output, args.format) {
        (Some(path), format) => std::fs::write(path, run.text(format)),
        (None, Format::Human) if !args.statistics => {
            // Coloured as codespan writes it; anstream strips the colours where they are not
            // wanted (`--color`, `NO_COLOR`, `CLICOLOR_FORCE`, not a terminal).
            let stdout = anstream::AutoStream::new(std::io::stdout().lock(), args.color.choice());
            HumanRenderer::new(&analysis.program)
                .emit(&analysis.findings, &mut termcolor::Ansi::new(stdout))
        }
        (None, format) => std::io::stdout().write_all(run.text(format).as_bytes()),
    };
    match written {
        Ok(()) => {}
        // The reader has all it wanted (`| head`): end quietly, as ripgrep and ruff do.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => return Ok(EXIT_CLEAN),
        Err(err) => return Err(format!("cannot write output: {}", io_reason(&err))),
    }
    if !args.quiet && (args.format == Format::Human || args.output.is_some()) {
        say(&summary(&report, started.elapsed()));
    }
    Ok(exit)
}

/// A finished run, to render.
struct Run<'a> {
    args: &'a CheckArgs,
    report: &'a check::Report,
    root: &'a RepoRoot,
    exit: u8,
}

impl Run<'_> {
    /// The report in `format`, or with `--statistics` its counts per rule.
    fn text(&self, format: Format) -> String {
        if self.args.statistics {
            return statistics(&self.report.analysis.findings, format);
        }
        let analysis = &self.report.analysis;
        let (program, findings) = (&analysis.program, &analysis.findings);
        match format {
            Format::Human => HumanRenderer::new(program).render_plain(findings),
            Format::Concise => concise::render(program, findings),
            Format::Json => json::render(program, findings, &analysis.errors),
            Format::JsonLines => json_lines::render(program, findings),
            Format::Github => github::render(program, findings, self.root),
            Format::Gitlab => gitlab::render(program, findings, self.root),
            Format::Junit => junit::render(program, findings),
            Format::Rdjson => rdjson::render(program, findings),
            Format::Sarif => sarif::render(
                program,
                findings,
                gil_lint::lints::LINTS,
                &analysis.errors,
                &sarif::Options {
                    root: self.root,
                    base_ids: true,
                    invocation: Some(sarif::Invocation {
                        // `args` would panic on an argument that is not UTF-8 (a path).
                        arguments: std::env::args_os()
                            .skip(1)
                            .map(|a| a.to_string_lossy().into_owned())
                            .collect(),
                        working_directory: PathBuf::from("."),
                        exit_code: self.exit,
                    }),
                },
            ),
        }
    }
}

/// The number of findings of each rule, most first (as `ruff --statistics`): a table, or with
/// `--format json` an array of `{"rule", "count", "summary"}`.
fn statistics(findings: &[gil_lint::diagnostic::Finding], format: Format) -> String {
    let mut per_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for finding in findings {
        *per_rule.entry(finding.rule).or_default() += 1;
    }
    let mut counts: Vec<(&str, usize)> = per_rule.into_iter().collect();
    counts.sort_by_key(|&(rule, count)| (std::cmp::Reverse(count), rule));
    let summary = |rule: &str| gil_lint::lints::find(rule).map_or("", |r| r.summary);
    if format == Format::Json {
        let rows: Vec<serde_json::Value> = counts
            .iter()
            .map(|&(rule, count)| {
                serde_json::json!({"rule": rule, "count": count, "summary": summary(rule)})
            })
            .collect();
        return serde_json::to_string_pretty(&rows).expect("JSON values") + "\n";
    }
    let count_width = counts.iter().map(|(_, n)| n.to_string().len()).max();
    let rule_width = counts.iter().map(|(rule, _)| rule.len()).max();
    counts
        .iter()
        .map(|&(rule, count)| {
            format!(
                "{count:>count_width$}  {rule:<rule_width$}  {}\n",
                summary(rule),
                count_width = count_width.unwrap_or(0),
                rule_width = rule_width.unwrap_or(0),
            )
        })
        .collect()
}

/// Where the cache is kept, if anywhere: the directory given, else `.gil-lint-cache/` in the
/// project (`--project`), else beside the configuration file, else in the current directory.
fn cache_location(args: &CheckArgs, config: &Config) -> Option<gil_lint::cache::Location> {
    use gil_lint::cache::Location;
    if args.no_cache || config.cache == Some(false) {
        return None;
    }
    Some(match &args.cache_dir {
        Some(dir) => Location::Given(dir.clone()),
        None => Location::Default(
            args.project
                .clone()
                .or_else(|| config.root())
                .unwrap_or_else(|| PathBuf::from(".")),
        ),
    })
}

/// What `--show-settings` prints: where the configuration was looked for and which file won, as
/// comments, then the settings the run would use as TOML (every rule's resolved level included).
fn show_settings(args: &CheckArgs, config: &Config) -> String {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "kebab-case")]
    struct Shown<'a> {
        rules: Vec<&'a str>,
        exclude: &'a [String],
        command_line_exclude: &'a [String],
        knowledge: Vec<String>,
        warn_unused_suppressions: bool,
        max_file_size: String,
        min_confidence: Confidence,
        severity: BTreeMap<&'a str, Severity>,
    }
    let mut text = String::new();
    let file = config.path.as_deref().map(gil_lint::input::shown);
    match (&args.config, args.isolated) {
        (_, true) => text.push_str("# Configuration file: none (--isolated)\n"),
        (Some(_), _) => {
            let file = file.unwrap_or_default();
            text.push_str(&format!("# Configuration file: {file} (--config)\n"));
        }
        (None, false) => {
            let start = args.config_start();
            text.push_str(&format!(
                "# Configuration file: {}\n# Looked for from {}, nearest first:\n",
                file.as_deref().unwrap_or("none found; the defaults apply"),
                gil_lint::input::shown(start)
            ));
            for candidate in Config::candidates(start) {
                let won = config.path.as_deref() == Some(candidate.as_path());
                let mark = if won {
                    "  <- used"
                } else if candidate.is_file() {
                    // Only a pyproject.toml is passed over when present.
                    "  (no [tool.gil-lint] table)"
                } else {
                    ""
                };
                text.push_str(&format!(
                    "#   {}{mark}\n",
                    gil_lint::input::shown(&candidate)
                ));
                if won {
                    break;
                }
            }
        }
    }
    let lints = gil_lint::lints::LINTS;
    let shown = Shown {
        rules: lints
            .iter()
            .map(|r| r.id)
            .filter(|id| config.enabled(id))
            .collect(),
        exclude: &config.exclude,
        command_line_exclude: &args.exclude,
        knowledge: config
            .knowledge
            .iter()
            .map(|k| gil_lint::input::shown(k))
            .collect(),
        warn_unused_suppressions: config.warn_unused_suppressions.unwrap_or(false),
        max_file_size: gil_lint::input::bytes(
            config
                .max_file_size
                .unwrap_or(gil_lint::DEFAULT_MAX_FILE_SIZE),
        ),
        min_confidence: config
            .min_confidence
            .unwrap_or(check::DEFAULT_MIN_CONFIDENCE),
        severity: lints
            .iter()
            .map(|r| {
                (
                    r.id,
                    config
                        .severity
                        .get(r.id)
                        .copied()
                        .unwrap_or(r.default_severity),
                )
            })
            .collect(),
    };
    text + &toml::to_string(&shown).expect("settings as TOML")
}

/// An I/O error as the rest of a one-line message: "no such file or directory", "too many
/// levels of symbolic links" (a symlink loop).
fn io_reason(err: &std::io::Error) -> String {
    let message = err.to_string();
    let message = message.split(" (os error").next().unwrap_or(&message);
    let mut chars = message.chars();
    chars.next().map_or(String::new(), |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// `checked 12 files in 0.31s: 2 findings (missing-gil: 1, gil-held-blocking: 1), 1 suppressed`.
fn summary(report: &check::Report, elapsed: Duration) -> String {
    let analysis = &report.analysis;
    let mut per_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for finding in &analysis.findings {
        *per_rule.entry(finding.rule).or_default() += 1;
    }
    let mut line = format!(
        "checked {} in {:.2}s: ",
        plural(analysis.program.files.len(), "file"),
        elapsed.as_secs_f64()
    );
    if per_rule.is_empty() {
        line.push_str("no findings");
    } else {
        let rules: Vec<String> = per_rule.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        line.push_str(&format!(
            "{} ({})",
            plural(analysis.findings.len(), "finding"),
            rules.join(", ")
        ));
    }
    if report.suppressed > 0 {
        line.push_str(&format!(", {} suppressed", report.suppressed));
    }
    if let Some(applied) = &report.baseline {
        line.push_str(&format!(", {} in the baseline", applied.matched));
        if applied.stale > 0 {
            line.push_str(&format!(
                " ({} no longer found: rewrite it with --write-baseline)",
                plural(applied.stale, "entry").replace("entrys", "entries")
            ));
        }
    }
    line
}

fn parse_stats(paths: &[PathBuf]) -> ExitCode {
    use gil_lint::frontend::cpp;
    let knowledge = Knowledge::builtin();
    let found = discover::discover(paths, &discover::exclude_set(&[]).expect("empty set"));
    let (mut bytes, mut raw_err, mut clean_err, mut raw_files, mut clean_files) = (0, 0, 0, 0, 0);
    for (path, _) in &found.files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let raw = cpp::parse(&text).map_or(text.len(), |t| cpp::error_bytes(&t));
        let cleaned = cpp::parse(&cpp::neutralise(&text, &knowledge))
            .map_or(text.len(), |t| cpp::error_bytes(&t));
        bytes += text.len();
        raw_err += raw;
        clean_err += cleaned;
        raw_files += usize::from(raw > 0);
        clean_files += usize::from(cleaned > 0);
    }
    let pct = |n: usize| 100.0 * n as f64 / bytes.max(1) as f64;
    println!("files: {}  bytes: {bytes}", found.files.len());
    println!(
        "without pre-pass: {raw_err} error bytes ({:.2}%), {raw_files} files with errors",
        pct(raw_err)
    );
    println!(
        "with pre-pass:    {clean_err} error bytes ({:.2}%), {clean_files} files with errors",
        pct(clean_err)
    );
    ExitCode::from(EXIT_CLEAN)
}

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};

use gil_lint::knowledge::Knowledge;
use gil_lint::render::{human::HumanRenderer, json};
use gil_lint::{discover, rules};

/// Finds GIL bugs in Python native-extension binding code (pybind11 C++).
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
    Check(CheckArgs),
    /// List the rules.
    Rules,
    /// Report how much of each C++ file tree-sitter cannot parse, with and without the pre-pass.
    #[command(hide = true)]
    ParseStats { paths: Vec<PathBuf> },
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Files or directories to analyse.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Skip paths matching this glob (repeatable), e.g. `third_party/**`.
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Also read this knowledge file (the format of `rules/*.toml`); repeatable.
    #[arg(long = "knowledge", value_name = "FILE")]
    knowledge: Vec<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Human,
    Json,
}

const EXIT_CLEAN: u8 = 0;
const EXIT_FINDINGS: u8 = 1;
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(id) = cli.explain {
        return match rules::find(&id) {
            Some(rule) => {
                print!("{}", rule.markdown());
                ExitCode::from(EXIT_CLEAN)
            }
            None => usage_error(&format!("unknown rule `{id}`; `gil-lint rules` lists them")),
        };
    }
    match cli.command {
        Some(Command::Check(args)) => check(args),
        Some(Command::Rules) => {
            for rule in rules::RULES {
                println!("{:<20} {}", rule.id, rule.summary);
            }
            ExitCode::from(EXIT_CLEAN)
        }
        Some(Command::ParseStats { paths }) => parse_stats(&paths),
        None => usage_error("no command; try `gil-lint check .`"),
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

fn check(args: CheckArgs) -> ExitCode {
    if let Some(missing) = args.paths.iter().find(|p| !p.exists()) {
        return usage_error(&format!("{}: no such file or directory", missing.display()));
    }
    let exclude = match discover::exclude_set(&args.exclude) {
        Ok(set) => set,
        Err(message) => return usage_error(&message),
    };
    let extra: Vec<&std::path::Path> = args.knowledge.iter().map(PathBuf::as_path).collect();
    let knowledge = match Knowledge::load(&extra) {
        Ok(k) => k,
        Err(err) => return usage_error(&format!("{err:#}")),
    };
    let pool = gil_lint::thread_pool(args.threads);
    let found = discover::discover(&args.paths, &exclude);
    let analysis = pool.install(|| gil_lint::analyse_files(&found.files, &knowledge));
    let mut errors = found.errors;
    errors.extend(analysis.errors);
    for error in &errors {
        eprintln!("warning: {error}");
    }
    if analysis.program.files.is_empty() && !errors.is_empty() {
        eprintln!("error: no file could be read");
        return ExitCode::from(EXIT_USAGE);
    }
    let written = match args.format {
        Format::Json => std::io::stdout()
            .write_all(json::render(&analysis.program, &analysis.findings, &errors).as_bytes()),
        Format::Human => {
            use std::io::IsTerminal;
            let color =
                if std::env::var_os("NO_COLOR").is_some() || !std::io::stdout().is_terminal() {
                    ColorChoice::Never
                } else {
                    ColorChoice::Auto
                };
            let mut stdout = StandardStream::stdout(color);
            HumanRenderer::new(&analysis.program)
                .emit(&analysis.findings, &mut stdout)
                .and_then(|()| {
                    let n = analysis.findings.len();
                    writeln!(
                        stdout,
                        "{} finding{} in {} file{}",
                        n,
                        if n == 1 { "" } else { "s" },
                        analysis.program.files.len(),
                        if analysis.program.files.len() == 1 {
                            ""
                        } else {
                            "s"
                        }
                    )
                })
        }
    };
    if let Err(err) = written
        && err.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("error: cannot write output: {err}");
        return ExitCode::from(EXIT_USAGE);
    }
    ExitCode::from(if analysis.findings.is_empty() {
        EXIT_CLEAN
    } else {
        EXIT_FINDINGS
    })
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

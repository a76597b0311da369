//! `docs/rules/<id>.md` is generated from each rule's doc comment (the same text as
//! `gil-lint --explain` and the SARIF rules' `help`), and the README's table of rules from the
//! rules' declarations (`declare_lint!`). These tests fail when they drift;
//! `GIL_LINT_BLESS=1 cargo test --test docs`
//! rewrites them.

#[test]
fn rule_docs_match_the_rule_sources() {
    let bless = std::env::var_os("GIL_LINT_BLESS").is_some();
    let mut stale = Vec::new();
    for rule in gil_lint::lints::LINTS {
        let path = format!("docs/rules/{}.md", rule.id);
        let expected = rule.markdown();
        if bless {
            std::fs::write(&path, &expected).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(expected.as_str()) {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "stale rule docs (rerun with GIL_LINT_BLESS=1): {stale:?}"
    );
}

/// The README's table of rules lies between these two lines.
const TABLE_START: &str = "<!-- The table of rules is made from their declarations (declare_lint!): \
GIL_LINT_BLESS=1 cargo test --test docs rewrites it. -->\n";
const TABLE_END: &str = "<!-- end of the table of rules -->\n";

/// The README's table of rules, as the declarations say.
fn rules_table() -> String {
    let mut table = String::from(
        "| rule | group | default level | added in | what it finds |\n|---|---|---|---|---|\n",
    );
    for rule in gil_lint::lints::LINTS {
        let level = match rule.default_severity {
            gil_lint::diagnostic::Severity::Error => "error",
            gil_lint::diagnostic::Severity::Warning => "warning",
        };
        table.push_str(&format!(
            "| [`{id}`](docs/rules/{id}.md) | {} | {level} | {} | {} |\n",
            rule.group.as_str(),
            rule.added_in,
            rule.summary,
            id = rule.id,
        ));
    }
    table
}

#[test]
fn readme_rules_table_matches_the_declarations() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let start = readme
        .find(TABLE_START)
        .unwrap_or_else(|| panic!("README.md: no line `{}`", TABLE_START.trim_end()))
        + TABLE_START.len();
    let end = start
        + readme[start..]
            .find(TABLE_END)
            .unwrap_or_else(|| panic!("README.md: no line `{}`", TABLE_END.trim_end()));
    let expected = rules_table();
    if std::env::var_os("GIL_LINT_BLESS").is_some() {
        let updated = format!("{}{expected}{}", &readme[..start], &readme[end..]);
        std::fs::write("README.md", updated).unwrap();
        return;
    }
    assert!(
        readme[start..end] == expected,
        "README.md's table of rules differs from the rules' declarations \
         (`GIL_LINT_BLESS=1 cargo test --test docs` rewrites it); expected:\n{expected}"
    );
}

#[test]
fn every_rule_doc_has_the_required_sections() {
    for rule in gil_lint::lints::LINTS {
        for section in [
            "## What it finds",
            "## Why is this bad?",
            "## Example",
            "Use instead",
            "## Known problems",
        ] {
            assert!(
                rule.doc.contains(section),
                "{}: missing `{section}`",
                rule.id
            );
        }
    }
}

#[test]
fn github_actions_doc_shows_the_example_workflows() {
    let doc = std::fs::read_to_string("docs/github-actions.md").unwrap();
    for file in [
        "docs/examples/github-workflow.yml",
        "docs/examples/github-workflow-annotations.yml",
    ] {
        let workflow = std::fs::read_to_string(file).unwrap();
        assert!(
            doc.contains(&format!("```yaml\n{workflow}```")),
            "docs/github-actions.md does not show {file} as it is"
        );
    }
}

/// The variant without code scanning: annotations (`--format github`), a pinned install, and no
/// permission beyond reading the code (so that forks' pull requests are annotated too).
#[test]
fn the_annotations_workflow_needs_no_code_scanning() {
    let workflow =
        std::fs::read_to_string("docs/examples/github-workflow-annotations.yml").unwrap();
    assert!(workflow.contains("run: gil-lint check --format github ."));
    assert!(workflow.contains("cargo install --locked") && workflow.contains("--tag v"));
    assert!(!workflow.contains("upload-sarif") && !workflow.contains("security-events"));
    assert!(!workflow.contains(": write"), "no write permission");
}

/// The example workflow's contract: the upload runs only when gil-lint wrote the file it uploads
/// (none after exit 2, `tests/cli_habits.rs`), never from a fork's pull request, and the install
/// is pinned.
#[test]
fn the_example_workflow_uploads_only_a_written_report() {
    let workflow = std::fs::read_to_string("docs/examples/github-workflow.yml").unwrap();
    let step = |name: &str| -> String {
        let start = workflow
            .find(&format!("- name: {name}"))
            .unwrap_or_else(|| panic!("no step `{name}`"));
        let rest = &workflow[start + 2..];
        rest[..rest.find("\n      - ").unwrap_or(rest.len())].to_string()
    };
    let report = "gil-lint.sarif";
    assert!(step("Run gil-lint").contains(&format!("--output {report}")));
    let upload = step("Upload SARIF");
    assert!(
        upload.contains(&format!("sarif_file: {report}")),
        "{upload}"
    );
    let condition = upload.split("if:").nth(1).expect("an `if:`");
    assert!(
        condition.contains(&format!("hashFiles('{report}') != ''"))
            && condition.contains("!cancelled()")
            && condition
                .contains("github.event.pull_request.head.repo.full_name == github.repository"),
        "{upload}"
    );
    let install = step("Install gil-lint");
    assert!(
        install.contains("cargo install --locked") && install.contains("--tag v"),
        "{install}"
    );
}

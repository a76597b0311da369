//! `docs/rules/<id>.md` is generated from each rule's doc comment (the same text as
//! `gil-lint --explain` and the SARIF rules' `help`). This test fails when they drift;
//! `GIL_LINT_BLESS=1 cargo test --test docs`
//! rewrites them.

#[test]
fn rule_docs_match_the_rule_sources() {
    let bless = std::env::var_os("GIL_LINT_BLESS").is_some();
    let mut stale = Vec::new();
    for rule in gil_lint::all_rules() {
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

#[test]
fn every_rule_doc_has_the_required_sections() {
    for rule in gil_lint::all_rules() {
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
fn github_actions_doc_shows_the_example_workflow() {
    let doc = std::fs::read_to_string("docs/github-actions.md").unwrap();
    let workflow = std::fs::read_to_string("docs/examples/github-workflow.yml").unwrap();
    assert!(
        doc.contains(&format!("```yaml\n{workflow}```")),
        "docs/github-actions.md does not show docs/examples/github-workflow.yml as it is"
    );
}

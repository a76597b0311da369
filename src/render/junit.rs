//! `--format junit`: JUnit XML in the shape ruff writes, which CI systems show as test results: a
//! `testsuite` per file and a failed `testcase` per finding (`org.gil-lint.RULE`, with its line and
//! column); with no finding, one passing `testcase` ("No errors found"). Written through
//! `quick-xml`, which escapes text and attributes; characters XML 1.0 cannot hold (control
//! characters of an untrusted file's text) are left out.

use std::collections::BTreeMap;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use crate::diagnostic::Finding;
use crate::model::Program;

const PACKAGE: &str = "org.gil-lint";

/// `text` without the characters XML 1.0 forbids (controls other than tab, newline and return).
fn xml_text(text: &str) -> String {
    text.chars()
        .filter(|&c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        .collect()
}

pub fn render(program: &Program, findings: &[Finding]) -> String {
    let mut files: BTreeMap<String, Vec<(&Finding, super::Place)>> = BTreeMap::new();
    for finding in findings {
        let at = super::place(program, finding.primary);
        files
            .entry(at.path.clone())
            .or_default()
            .push((finding, at));
    }
    let total = findings.len().to_string();
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 4);
    let written = writer
        .write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .and_then(|()| {
            writer
                .create_element("testsuites")
                .with_attributes([
                    ("name", "gil-lint"),
                    ("tests", total.as_str()),
                    ("failures", total.as_str()),
                    ("errors", "0"),
                ])
                .write_inner_content(|w| {
                    if files.is_empty() {
                        w.create_element("testsuite")
                            .with_attributes([
                                ("name", "gil-lint"),
                                ("tests", "1"),
                                ("disabled", "0"),
                                ("errors", "0"),
                                ("failures", "0"),
                                ("package", PACKAGE),
                            ])
                            .write_inner_content(|w| {
                                w.create_element("testcase")
                                    .with_attributes([
                                        ("name", "No errors found"),
                                        ("classname", "gil-lint"),
                                    ])
                                    .write_empty()
                                    .map(|_| ())
                            })?;
                    }
                    for (path, cases) in &files {
                        suite(w, path, cases)?;
                    }
                    Ok(())
                })
                .map(|_| ())
        });
    written.expect("writing to memory does not fail");
    String::from_utf8(writer.into_inner()).expect("XML of UTF-8 text") + "\n"
}

/// One file's findings.
fn suite(
    w: &mut Writer<Vec<u8>>,
    path: &str,
    cases: &[(&Finding, super::Place)],
) -> std::io::Result<()> {
    let path = xml_text(path);
    let count = cases.len().to_string();
    // The path without its extension, as ruff's `classname`.
    let classname = path
        .rsplit_once('.')
        .filter(|(stem, _)| !stem.is_empty() && !stem.ends_with('/'))
        .map_or(path.as_str(), |(stem, _)| stem);
    w.create_element("testsuite")
        .with_attributes([
            ("name", path.as_str()),
            ("tests", count.as_str()),
            ("disabled", "0"),
            ("errors", "0"),
            ("failures", count.as_str()),
            ("package", PACKAGE),
        ])
        .write_inner_content(|w| {
            for (finding, at) in cases {
                let name = format!("{PACKAGE}.{}", finding.rule);
                let (line, column) = (at.line.to_string(), at.column.to_string());
                let message = xml_text(&finding.message);
                let body = format!("line {line}, col {column}, {message}");
                w.create_element("testcase")
                    .with_attributes([
                        ("name", name.as_str()),
                        ("classname", classname),
                        ("line", line.as_str()),
                        ("column", column.as_str()),
                    ])
                    .write_inner_content(|w| {
                        w.create_element("failure")
                            .with_attribute(("message", message.as_str()))
                            .write_text_content(BytesText::new(&body))
                            .map(|_| ())
                    })?;
            }
            Ok(())
        })
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_left_out() {
        assert_eq!(xml_text("a\u{1}b\u{1b}[0m\tc\n"), "ab[0m\tc\n");
    }
}

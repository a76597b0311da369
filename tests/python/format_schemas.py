"""Validate gil-lint's `gitlab`, `rdjson`, `junit` and `json-lines` reports of every fixture.

Usage: format_schemas.py GIL_LINT. Run through format_schemas.sh, which makes the pinned venv.
GitLab's schema (tests/schemas/gitlab/codeclimate.json) checks one entry; what GitLab's
documentation adds (an array, `check_name`, the severities, a path, a line, unique
fingerprints) is checked here. The validators are first shown to reject a broken report.
"""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema

SCHEMAS = Path("tests/schemas")
SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


def gitlab_problems(report, entry_validator):
    if not isinstance(report, list):
        return ["the report is not a JSON array"]
    problems = []
    prints = set()
    for i, entry in enumerate(report):
        problems += [f"[{i}]: {e.message}" for e in entry_validator.iter_errors(entry)]
        if not isinstance(entry, dict):
            continue
        if not isinstance(entry.get("check_name"), str):
            problems.append(f"[{i}]: no check_name")
        if entry.get("severity") not in SEVERITIES:
            problems.append(f"[{i}]: severity {entry.get('severity')!r}")
        location = entry.get("location", {})
        if not isinstance(location.get("path"), str) or location["path"].startswith("/"):
            problems.append(f"[{i}]: location.path is not a relative path")
        line = location.get("lines", {}).get("begin") or location.get("positions", {}).get("begin", {}).get("line")
        if not isinstance(line, int) or line < 1:
            problems.append(f"[{i}]: no line")
        if entry.get("fingerprint") in prints:
            problems.append(f"[{i}]: fingerprint {entry.get('fingerprint')} repeated")
        prints.add(entry.get("fingerprint"))
    return problems


def rdjson_problems(report, validator):
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(report)]
    for i, diagnostic in enumerate(report.get("diagnostics", []) if isinstance(report, dict) else []):
        start = diagnostic.get("location", {}).get("range", {}).get("start", {})
        if not isinstance(start.get("line"), int) or not diagnostic.get("message"):
            problems.append(f"diagnostics/{i}: no message or start line")
    return problems


def junit_problems(text, findings):
    """Well-formed XML in ruff's shape: <testsuites> of <testsuite> per file, a <testcase> per
    finding with a <failure>, counts that add up; without findings, one passing case."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        return [f"not well-formed XML: {e}"]
    problems = []
    if root.tag != "testsuites":
        return [f"root element <{root.tag}>"]
    cases = root.findall("testsuite/testcase")
    failures = root.findall("testsuite/testcase/failure")
    if int(root.get("tests", -1)) != findings or int(root.get("failures", -1)) != findings:
        problems.append(f"testsuites counts {root.attrib} for {findings} findings")
    if len(failures) != findings:
        problems.append(f"{len(failures)} failures for {findings} findings")
    for suite in root.findall("testsuite"):
        n = len(suite.findall("testcase"))
        if int(suite.get("tests", -1)) != n or int(suite.get("failures", -1)) != len(suite.findall("testcase/failure")):
            problems.append(f"testsuite {suite.get('name')}: counts do not match its cases")
    for case in cases:
        if not case.get("name") or not case.get("classname"):
            problems.append("a testcase without name or classname")
        if case.find("failure") is not None and not (case.get("line") and case.find("failure").get("message")):
            problems.append(f"testcase {case.get('name')}: a failure without line or message")
    if findings == 0 and [c.get("name") for c in cases] != ["No errors found"]:
        problems.append("no findings, but not the one passing case")
    return problems


def run(gil_lint, fmt, case):
    out = subprocess.run([gil_lint, "check", "--quiet", "--format", fmt, *case], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"{fmt} {case}: exit {out.returncode}: {out.stderr}")
    return out.stdout


def main() -> int:
    gil_lint = sys.argv[1]
    gitlab_entry = jsonschema.Draft7Validator(json.loads((SCHEMAS / "gitlab/codeclimate.json").read_text()))
    rdjson = jsonschema.Draft4Validator(json.loads((SCHEMAS / "rdjson/DiagnosticResult.json").read_text()))

    # The checks can fail: broken reports are rejected.
    planted = [
        gitlab_problems([{"description": "d", "fingerprint": 1, "severity": "major", "location": {}}], gitlab_entry),
        gitlab_problems({"not": "an array"}, gitlab_entry),
        rdjson_problems({"diagnostics": [{"message": "m", "severity": "FATAL", "location": {"range": {"start": {"line": "1"}}}}]}, rdjson),
        junit_problems("<testsuites><testsuite>", 1),
        junit_problems('<testsuites tests="1" failures="1"><testsuite tests="2" failures="1"><testcase name="a" classname="b"/></testsuite></testsuites>', 1),
    ]
    for i, problems in enumerate(planted):
        if not problems:
            print(f"planted broken report {i} was not rejected")
            return 1

    dirs = sorted(p for parent in ("fixtures", "tests/config-fixtures") for p in Path(parent).iterdir() if p.is_dir())
    cases = [[str(d)] for d in dirs]
    cases.append(["--warn-unused-suppressions", "tests/config-fixtures/suppressions"])
    passed = failed = findings_total = 0
    for case in cases:
        problems = []
        lines = run(gil_lint, "json-lines", case).splitlines()
        try:
            findings = [json.loads(line) for line in lines]
            if not all(isinstance(f, dict) and f.get("rule") for f in findings):
                problems.append("json-lines: a line is not a finding")
        except json.JSONDecodeError as e:
            problems.append(f"json-lines: {e}")
            findings = []
        findings_total += len(findings)
        gitlab = json.loads(run(gil_lint, "gitlab", case))
        problems += [f"gitlab {p}" for p in gitlab_problems(gitlab, gitlab_entry)]
        if len(gitlab) != len(findings):
            problems.append(f"gitlab: {len(gitlab)} entries for {len(findings)} findings")
        report = json.loads(run(gil_lint, "rdjson", case))
        problems += [f"rdjson {p}" for p in rdjson_problems(report, rdjson)]
        if len(report.get("diagnostics", [])) != len(findings):
            problems.append("rdjson: not one diagnostic per finding")
        problems += [f"junit {p}" for p in junit_problems(run(gil_lint, "junit", case), len(findings))]
        if problems:
            failed += 1
            for problem in problems[:5]:
                print(f"{' '.join(case)}: {problem}")
        else:
            passed += 1
    print(f"formats: gitlab, rdjson, junit and json-lines of {findings_total} findings from {len(cases)} runs checked")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

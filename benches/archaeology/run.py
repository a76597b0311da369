#!/usr/bin/env python3
"""Scores gil-lint on real GIL bug fixes: is the bug reported before its fix and not after?

    benches/archaeology/run.py WORKDIR --gil-lint BIN [--manifest FILE ...] [--mirrors DIR]
                               [--only ID ...] [--json OUT]

Each `[[bug]]` of the manifests (default: every *.toml beside this script) names a repository, the
buggy and fixed commits, the folders to check and the files the fix changes. The folders of both
commits are written (sources only, by benches/ledger/checkout.py) to WORKDIR/<id>/<commit>, then
gil-lint checks each with `--format json`.

A bug is CAUGHT when some finding at the buggy commit is absent at the fixed commit and its
location or one step of its trace is in one of the bug's `files`. Findings are compared by rule,
message and the function names along the trace, never by line numbers: the fix moves lines. A
finding at the buggy commit that is still there after the fix does not count, so a rule that
reports the whole file is not rewarded.

The report gives each bug (caught or missed, with the finding), then caught / total per class,
per language and in total.
"""

import argparse
import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "ledger"))
import checkout  # noqa: E402  (benches/ledger/checkout.py: writes one commit's sources)

REQUIRED = ("id", "repo", "buggy", "fixed", "folders", "files", "class", "rule", "url", "summary")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# Messages may cite a line ("the threads started by `par_iter` at line 11"); lines move in a fix.
LINE_IN_MESSAGE = re.compile(r"\bline \d+")


def load_bugs(manifests):
    bugs, seen = [], set()
    for manifest in manifests:
        for bug in tomllib.loads(manifest.read_text()).get("bug", []):
            missing = [k for k in REQUIRED if k not in bug]
            where = f"{manifest}: bug {bug.get('id', '?')}"
            if missing:
                sys.exit(f"{where}: missing {', '.join(missing)}")
            if not ID.match(bug["id"]) or bug["id"] in seen:
                sys.exit(f"{where}: id must be kebab-case and unique")
            if not (COMMIT.match(bug["buggy"]) and COMMIT.match(bug["fixed"])):
                sys.exit(f"{where}: buggy and fixed must be 40-hex commits")
            if not bug["folders"] or not bug["files"]:
                sys.exit(f"{where}: folders and files must not be empty")
            seen.add(bug["id"])
            bugs.append(dict(bug, manifest=manifest.name))
    return bugs


def language(bug):
    return "Rust" if all(f.endswith(".rs") for f in bug["files"]) else "C++"


def materialise(bug, commit, workdir, mirrors):
    """WORKDIR/<id>/<commit>, holding the bug's folders at that commit. A stamp beside it records
    the folders, so that a manifest edit rewrites the tree."""
    name = f"{bug['id']}/{commit}"
    target = workdir / name
    stamp = workdir / bug["id"] / f"{commit}.folders"
    folders = " ".join(bug["folders"])
    if target.exists() and (not stamp.exists() or stamp.read_text() != folders):
        shutil.rmtree(target)
    project = {"name": name, "repo": bug["repo"], "commit": commit, "folders": folders}
    checkout.checkout(project, workdir, mirrors)
    stamp.write_text(folders)
    return target


def clean(path):
    return path[2:] if path.startswith("./") else path


def key(finding):
    return (
        finding["rule"],
        LINE_IN_MESSAGE.sub("line N", finding["message"]),
        tuple(step.get("function") or "" for step in finding.get("trace", [])),
    )


def lint(gil_lint, root, folders):
    """gil-lint's findings on ROOT's folders, paths relative to ROOT, and its error count."""
    present = [f for f in folders if (root / f).exists()]
    for f in folders:
        if f not in present:
            print(f"warning: {root}: no folder {f} at this commit", file=sys.stderr)
    if not present:
        return [], 0
    run = subprocess.run(
        [gil_lint, "check", "--format", "json", "-q", *present],
        cwd=root, capture_output=True, text=True,
    )
    if run.returncode not in (0, 1):
        sys.exit(f"{root}: gil-lint exited with {run.returncode}: {run.stderr.strip()}")
    report = json.loads(run.stdout)
    for f in report["findings"]:
        f["path"] = clean(f["path"])
        for step in f.get("trace", []):
            step["path"] = clean(step.get("path", ""))
    return report["findings"], len(report.get("errors", []))


def touches(finding, files):
    paths = {finding["path"], *(step["path"] for step in finding.get("trace", []))}
    return any(p in files for p in paths)


def score(bug, buggy, fixed):
    """The buggy commit's findings that the fix removed and that touch the bug's files."""
    remaining = Counter(key(f) for f in fixed)
    removed = []
    for f in buggy:
        k = key(f)
        if remaining[k]:
            remaining[k] -= 1
        elif touches(f, set(bug["files"])):
            removed.append(f)
    # The expected rule first, so the report shows the finding that names the bug.
    removed.sort(key=lambda f: f["rule"] != bug["rule"])
    return removed


def describe(finding):
    functions = " -> ".join(dict.fromkeys(s.get("function") or "?" for s in finding.get("trace", [])))
    return f"{finding['rule']} {finding['path']}:{finding['line']}: {finding['message']}\n" \
           f"        trace: {functions}"


def percent(caught, total):
    return f"{caught:3}/{total:<3} {100 * caught / total:5.1f} %" if total else "  0/0"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--gil-lint", required=True)
    parser.add_argument("--manifest", type=Path, action="append")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--only", action="append", help="check only this bug id (repeatable)")
    parser.add_argument("--json", type=Path, help="write the per-bug results here")
    args = parser.parse_args()
    manifests = args.manifest or sorted(HERE.glob("*.toml"))
    bugs = load_bugs(manifests)
    if args.only:
        unknown = set(args.only) - {b["id"] for b in bugs}
        if unknown:
            sys.exit(f"unknown bug id: {', '.join(sorted(unknown))}")
        bugs = [b for b in bugs if b["id"] in args.only]
    args.workdir.mkdir(parents=True, exist_ok=True)

    results = []
    for bug in bugs:
        try:
            trees = [materialise(bug, bug[c], args.workdir, args.mirrors) for c in ("buggy", "fixed")]
        except subprocess.CalledProcessError as e:
            print(f"UNAVAILABLE {bug['id']}: {e}", file=sys.stderr)
            results.append(dict(id=bug["id"], status="unavailable"))
            continue
        (buggy, buggy_errors), (fixed, _) = (lint(args.gil_lint, t, bug["folders"]) for t in trees)
        removed = score(bug, buggy, fixed)
        in_files = [f for f in buggy if touches(f, set(bug["files"]))]
        status = "caught" if removed else "missed"
        results.append(dict(
            id=bug["id"], status=status, language=language(bug), cls=bug["class"],
            expected_rule=bug["rule"], findings_buggy=len(buggy), findings_fixed=len(fixed),
            findings_in_files=len(in_files), parse_errors=buggy_errors, removed=removed,
        ))
        print(f"{status.upper():6} {bug['id']}  [{language(bug)} {bug['class']}, {bug['rule']}]"
              f"  findings {len(buggy)} -> {len(fixed)}, {len(in_files)} in the fixed files")
        for f in removed[:3]:
            print("    " + describe(f))
        if len(removed) > 3:
            print(f"    ... and {len(removed) - 3} more")

    scored = [r for r in results if r["status"] != "unavailable"]
    for title, group in (("class", lambda r: f"{r['language']} {r['cls']}"),
                         ("language", lambda r: r["language"])):
        table = defaultdict(lambda: [0, 0])
        for r in scored:
            table[group(r)][0] += r["status"] == "caught"
            table[group(r)][1] += 1
        print(f"\nby {title}:")
        for name, (caught, total) in sorted(table.items()):
            print(f"  {name:32} {percent(caught, total)}")
    caught = sum(r["status"] == "caught" for r in scored)
    print(f"\nTOTAL {percent(caught, len(scored))}")
    unavailable = len(results) - len(scored)
    if unavailable:
        print(f"({unavailable} bug(s) unavailable: no commit in the mirror and no network)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

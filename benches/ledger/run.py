#!/usr/bin/env python3
"""Runs gil-lint on the ledger's projects and compares its findings with the recorded verdicts.

    benches/ledger/run.py DIR [--gil-lint BIN] [--project NAME ...] [--record]
                          [--min-confidence low|high] [--show VERDICT ...]

DIR holds the snapshots that checkout.py wrote. Each project is checked from DIR/<name> with the
manifest's folders, and its findings are keyed by rule, baseline fingerprint and message (two
findings on one line differ only in their message: which lock, which thread). The
script prints, for each project and in total, how many findings are true, false, debatable or not
yet triaged. It also prints the recorded findings that are no longer reported, so a change in
precision or recall shows as a difference. With --record, findings not in verdicts/<name>.toml are
appended there with `verdict = "untriaged"`, for a person to read along the trace and decide.

A verdicts file lists one [[finding]] per finding: rule, fingerprint, path, message, verdict
(true, false, debatable or untriaged) and reason (one line, read along the trace).
"""

import argparse
import json
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERDICTS = ("true", "false", "debatable", "untriaged")


def findings(gil_lint, root, folders, extra=()):
    """The findings of one project: {(rule, fingerprint, message): entry}, several findings per
    key counted."""
    with tempfile.TemporaryDirectory() as tmp:
        baseline = Path(tmp) / "baseline.json"
        run = subprocess.run(
            [gil_lint, "check", *extra, "--write-baseline", str(baseline), *folders.split()],
            cwd=root, capture_output=True, text=True,
        )
        if run.returncode != 0:
            sys.exit(f"{root}: gil-lint exited with {run.returncode}: {run.stderr.strip()}")
        entries = json.loads(baseline.read_text())["findings"]
    found = {}
    for e in entries:
        key = (e["rule"], e["fingerprint"], e["message"])
        found.setdefault(key, dict(e, count=0))["count"] += 1
    return found


def toml_string(s):
    return json.dumps(s, ensure_ascii=False)


def record(path, new):
    with path.open("a") as out:
        for e in new:
            out.write(
                "\n[[finding]]\n"
                f"rule = {toml_string(e['rule'])}\n"
                f"fingerprint = {toml_string(e['fingerprint'])}\n"
                f"path = {toml_string(e['path'])}\n"
                f"message = {toml_string(e['message'])}\n"
                'verdict = "untriaged"\n'
                'reason = ""\n'
            )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--gil-lint", default=str(HERE.parent.parent / "target/release/gil-lint"))
    parser.add_argument("--project", action="append")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--min-confidence", help="passed to gil-lint (low or high)")
    parser.add_argument("--show", choices=VERDICTS, action="append", default=[],
                        help="also print the reported findings with this verdict, and their reasons")
    args = parser.parse_args()
    manifest = tomllib.loads((HERE / "manifest.toml").read_text())
    total = Counter()
    gone_total = 0
    print(f"{'project':22} {'true':>5} {'false':>5} {'debat':>5} {'untri':>5} {'gone':>5}")
    for project in manifest["project"]:
        name = project["name"]
        if args.project and name not in args.project:
            continue
        verdicts_file = HERE / "verdicts" / f"{name}.toml"
        recorded = {}
        if verdicts_file.exists():
            for f in tomllib.loads(verdicts_file.read_text()).get("finding", []):
                if f["verdict"] not in VERDICTS:
                    sys.exit(f"{verdicts_file}: unknown verdict {f['verdict']!r}")
                recorded[(f["rule"], f["fingerprint"], f["message"])] = f
        extra = ["--min-confidence", args.min_confidence] if args.min_confidence else []
        found = findings(args.gil_lint, args.dir / name, project["folders"], extra)
        counts = Counter()
        for key, e in found.items():
            verdict = recorded[key]["verdict"] if key in recorded else "untriaged"
            counts[verdict] += e["count"]
        gone = [f for key, f in recorded.items() if key not in found]
        new = [e for key, e in sorted(found.items()) if key not in recorded]
        if args.record and new:
            record(verdicts_file, new)
        total.update(counts)
        gone_total += len(gone)
        print(f"{name:22} " + " ".join(f"{counts[v]:5}" for v in VERDICTS) + f" {len(gone):5}")
        for key, e in sorted(found.items()):
            verdict = recorded[key]["verdict"] if key in recorded else "untriaged"
            if verdict in args.show:
                reason = recorded[key]["reason"] if key in recorded else ""
                print(f"    {verdict}: {e['rule']} {e['path']}: {e['message']}\n        {reason}")
        for f in gone:
            print(f"    no longer reported ({f['verdict']}): {f['rule']} {f['path']}: {f['message']}")
    print(f"{'TOTAL':22} " + " ".join(f"{total[v]:5}" for v in VERDICTS) + f" {gone_total:5}")
    triaged = total["true"] + total["false"] + total["debatable"]
    if triaged:
        print(f"false: {total['false']} of {triaged} triaged ({100 * total['false'] / triaged:.1f} %)")


if __name__ == "__main__":
    main()

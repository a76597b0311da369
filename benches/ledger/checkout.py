#!/usr/bin/env python3
"""Checks out every project of manifest.toml at its commit into DIR/<name>, outside the repo.

    benches/ledger/checkout.py DIR [--mirrors MIRRORS]

Each project comes from MIRRORS/<owner>+<repo>/repo (a bare git directory) when that holds the
commit, else from a blobless clone of GitHub kept in DIR/.git/<name>. Only the manifest's folders
are written, and in them only what gil-lint reads: sources, configuration files and ignore files.
A snapshot may lack large binaries, and one missing object would stop `git archive`. An existing
DIR/<name> is kept as it is.
"""

import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path

WANTED = re.compile(
    r"\.(c|cc|cpp|cxx|h|hh|hpp|hxx|cu|cuh|rs)$|(^|/)(pyproject\.toml|gil-lint\.toml|\.gitignore)$"
)
HERE = Path(__file__).resolve().parent


def git(git_dir, *args, **kwargs):
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, **kwargs)


def has_commit(git_dir, commit):
    return (
        git_dir.is_dir()
        and subprocess.run(
            ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"],
            capture_output=True,
        ).returncode
        == 0
    )


def checkout(project, root, mirrors):
    target = root / project["name"]
    if target.exists():
        return
    commit = project["commit"]
    git_dir = mirrors / project["repo"].replace("/", "+") / "repo" if mirrors else None
    if git_dir is None or not has_commit(git_dir, commit):
        git_dir = root / ".git" / project["name"]
        if not git_dir.exists():
            subprocess.run(
                ["git", "clone", "--quiet", "--bare", "--filter=blob:none",
                 f"https://github.com/{project['repo']}", str(git_dir)],
                check=True,
            )
    listing = git(git_dir, "ls-tree", "-r", "-z", "--name-only", commit, "--",
                  *project["folders"].split(), capture_output=True).stdout
    paths = [p for p in listing.decode().split("\0") if p and WANTED.search(p)]
    batch = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    # Requests are written as the answers are read: a pipe holds only so much.
    for path in paths:
        batch.stdin.write(f"{commit}:{path}\n".encode())
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            continue  # missing from the snapshot, or a submodule
        body = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(body)
    batch.stdin.close()
    batch.wait()
    target.mkdir(parents=True, exist_ok=True)
    print(project["name"], commit, len(paths), "files", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--mirrors", type=Path)
    args = parser.parse_args()
    manifest = tomllib.loads((HERE / "manifest.toml").read_text())
    for project in manifest["project"]:
        checkout(project, args.dir, args.mirrors)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# The pre-commit hook end to end: a small git repository with a buggy pybind11 extension runs the
# real `pre-commit try-repo` against this repository (which builds gil-lint with
# `cargo install --path .`, as pre-commit's rust language does). The hook must fail on the bug,
# pass after the fix, and, given only files that no finding involves, pass.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
. tests/python/venv.sh
venv pre-commit pre-commit==4.7.0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PRE_COMMIT_HOME="$work/cache"
# Reuse one build directory across runs (the hook's environment itself is new each time).
export CARGO_TARGET_DIR="$repo/target/pre-commit"

mkdir "$work/project" && cd "$work/project"
git init -q .
cat >ext.cpp <<'CPP'
#include <pybind11/pybind11.h>
namespace py = pybind11;

int crunch(int n) {
  py::print("crunching");
  return n * 2;
}

PYBIND11_MODULE(ext, m) { m.def("crunch", &crunch, py::call_guard<py::gil_scoped_release>()); }
CPP
cat >util.cpp <<'CPP'
int helper(int n) { return n + 1; }
CPP
echo "notes" >notes.txt
git add .

try_repo() {
  "$VENV/bin/pre-commit" try-repo "$repo" gil-lint --verbose "$@" >"$work/out" 2>&1
}
expect() {  # expect STATUS DESCRIPTION ARGS...
  local want="$1" what="$2"
  shift 2
  local got=0
  try_repo "$@" || got=$?
  if [ "$got" != "$want" ]; then
    cat "$work/out"
    echo "pre-commit: $what: exit status $got, expected $want"
    echo "0 passed, 1 failed"
    exit 1
  fi
}

expect 1 "the hook fails on the bug" --all-files
grep -q "error\[missing-gil\]" "$work/out" || { cat "$work/out"; echo "no missing-gil finding"; exit 1; }
grep -q "notes.txt" "$work/out" && { cat "$work/out"; echo "notes.txt was passed to the hook"; exit 1; }
expect 0 "files no finding involves pass" --files util.cpp
sed -i 's/, py::call_guard<py::gil_scoped_release>()//' ext.cpp
git add ext.cpp
expect 0 "the hook passes after the fix" --all-files
echo "pre-commit try-repo: fails on the bug, passes after the fix and on unrelated files"
echo "3 passed, 0 failed"

#!/usr/bin/env bash
# The pre-commit hooks end to end, with the real `pre-commit try-repo` on a small git repository
# holding a buggy pybind11 extension:
# - both hook manifests parse, name the `gil-lint` binary and define the same hook, and the
#   mirror's version and dependency follow Cargo.toml;
# - the mirror's hook (pre-commit-mirror/, language python) installs the gil-lint wheel built
#   here with maturin, with the package index turned off: no compiler runs, it takes seconds. It
#   must fail on the bug, pass on files no finding involves, and pass after the fix;
# - the source hook (this repository, language python: `pip install .` compiles with maturin and
#   `--locked`) fails on the bug too.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
. tests/python/venv.sh
venv pre-commit pre-commit==4.7.0
pre_commit="$VENV/bin/pre-commit"
python="$VENV/bin/python"
venv maturin maturin==1.16.0
maturin="$VENV/bin/maturin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PRE_COMMIT_HOME="$work/cache"
# One build directory for every build here and across runs (the hooks' environments are new).
export CARGO_TARGET_DIR="$repo/target/pre-commit"
# The source hook's `pip install .` builds with the maturin tested here.
echo "maturin==1.16.0" >"$work/constraints.txt"
export PIP_CONSTRAINT="$work/constraints.txt"

failed=0
fail() { echo "pre-commit: $*"; failed=$((failed + 1)); }

# The manifests.
version="$(grep -m1 '^version' Cargo.toml | cut -d'"' -f2)"
"$python" - "$version" <<'PY' || fail "the hook manifests do not agree"
import sys, tomllib, yaml
version = sys.argv[1]
source = yaml.safe_load(open(".pre-commit-hooks.yaml"))
mirror = yaml.safe_load(open("pre-commit-mirror/.pre-commit-hooks.yaml"))
assert source == mirror, (source, mirror)
cargo = tomllib.load(open("Cargo.toml", "rb"))
binaries = {b["name"] for b in cargo["bin"]}
for hook in source:
    assert hook["entry"].split()[0] in binaries, hook["entry"]
    assert hook["language"] == "python", hook
project = tomllib.load(open("pre-commit-mirror/pyproject.toml", "rb"))["project"]
assert project["version"] == version, project["version"]
assert project["dependencies"] == [f"gil-lint=={version}"], project["dependencies"]
locked = tomllib.load(open("pyproject.toml", "rb"))["tool"]["maturin"].get("locked")
assert locked is True, "pyproject.toml: [tool.maturin] locked = true"
PY

# The project the hooks check.
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

expect() {  # expect HOOK-REPO STATUS DESCRIPTION ARGS...
  local hooks="$1" want="$2" what="$3"
  shift 3
  local got=0
  "$pre_commit" try-repo "$hooks" gil-lint --verbose "$@" >"$work/out" 2>&1 || got=$?
  if [ "$got" != "$want" ]; then
    cat "$work/out"
    fail "$what: exit status $got, expected $want"
    return 1
  fi
}

# The mirror, as its own repository, installing the wheel built here and nothing from an index.
(cd "$repo" && "$maturin" build --quiet --out "$work/wheels" 2>&1 | tail -n 3)
"$python" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
  --dest "$work/wheels" setuptools==84.2.1
cp -r "$repo/pre-commit-mirror" "$work/mirror"
git -C "$work/mirror" init -q . && git -C "$work/mirror" add . &&
  git -C "$work/mirror" -c user.name=t -c user.email=t@t commit -qm mirror
started=$SECONDS
if PIP_NO_INDEX=1 PIP_FIND_LINKS="$work/wheels" expect "$work/mirror" 1 "mirror: the hook fails on the bug" --all-files; then
  echo "mirror: installed from the wheel and ran in $((SECONDS - started)) s"
  grep -q "error\[missing-gil\]" "$work/out" || fail "mirror: no missing-gil finding"
  grep -q "notes.txt" "$work/out" && fail "mirror: notes.txt was passed to the hook"
  grep -qi "cargo\|rustc\|maturin" "$work/out" && fail "mirror: something was compiled"
fi
PIP_NO_INDEX=1 PIP_FIND_LINKS="$work/wheels" expect "$work/mirror" 0 "mirror: files no finding involves pass" --files util.cpp || true

# The source hook: compiled from this repository (with --locked).
expect "$repo" 1 "source: the hook fails on the bug" --all-files &&
  { grep -q "error\[missing-gil\]" "$work/out" || fail "source: no missing-gil finding"; }

sed -i 's/, py::call_guard<py::gil_scoped_release>()//' ext.cpp
git add ext.cpp
PIP_NO_INDEX=1 PIP_FIND_LINKS="$work/wheels" expect "$work/mirror" 0 "mirror: the hook passes after the fix" --all-files || true

echo "pre-commit try-repo: manifests agree; the mirror hook installs the wheel, fails on the bug, passes after the fix and on unrelated files; the source hook fails on the bug"
echo "$((5 - failed)) passed, $failed failed"
[ "$failed" = 0 ]

#!/usr/bin/env bash
# `pip install gil-lint` without a Rust toolchain on the user's side: builds the wheel with maturin
# (`bindings = "bin"`), installs it into a fresh venv, and runs the installed `gil-lint`.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
. tests/python/venv.sh
venv maturin maturin==1.16.0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$VENV/bin/maturin" build --quiet --out "$work/dist" 2>&1 | tail -n 3
wheel=("$work"/dist/gil_lint-*.whl)
echo "built ${wheel[0]##*/}"
"${PYTHON:-python3}" -m venv "$work/user"
"$work/user/bin/python" -m pip install --quiet --disable-pip-version-check --no-index "${wheel[0]}"

failed=0
check() {  # check DESCRIPTION WANTED-STATUS COMMAND...
  local what="$1" want="$2" got=0
  shift 2
  "$@" >"$work/out" 2>&1 || got=$?
  if [ "$got" != "$want" ]; then
    cat "$work/out"
    echo "wheel: $what: exit status $got, expected $want"
    failed=$((failed + 1))
  fi
}
bin="$work/user/bin/gil-lint"
version="$(grep -m1 '^version' Cargo.toml | cut -d'"' -f2)"
check "gil-lint --version" 0 "$bin" --version
grep -qx "gil-lint $version" "$work/out" || { cat "$work/out"; echo "wrong version"; failed=$((failed + 1)); }
check "the seed bug is found" 1 "$bin" check "$repo/fixtures/seed_call_once_import"
grep -q "error\[missing-gil\]" "$work/out" || { cat "$work/out"; echo "no finding"; failed=$((failed + 1)); }
check "a clean project passes" 0 "$bin" check "$repo/fixtures/no_python"
echo "wheel: installed gil-lint $version runs"
echo "$((3 - failed)) passed, $failed failed"
[ "$failed" = 0 ]

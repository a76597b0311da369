#!/usr/bin/env bash
# Build every fp8ext variant and run the runtime oracle (plus the gil-lint cross-check).
#
#   kernels/test.sh                    # oracle incl. gil-lint ($GIL_LINT, default target/release/gil-lint)
#   kernels/test.sh --runtime-only     # runtime matrix only
#   any other arguments go to kernels/oracle.py (e.g. --reps 3 --native-stacks -v)
#
# Environment: PYTHON (interpreter for the venv, default python3), FP8EXT_VENV (default
# kernels/.venv), FP8EXT_BUILD (default kernels/build), FP8EXT_BUILD_ARGS (extra build.py
# arguments, e.g. --cpu). Uses the CUDA kernels when nvcc is on PATH, else the CPU ones.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
python="${PYTHON:-python3}"
venv="${FP8EXT_VENV:-$here/.venv}"
build="${FP8EXT_BUILD:-$here/build}"
start=$SECONDS

if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
# shellcheck disable=SC2086
"$venv/bin/python" "$here/build.py" --out "$build" ${FP8EXT_BUILD_ARGS:-}
cd "$root"
rc=0
"$venv/bin/python" "$here/oracle.py" --build "$build" --kernels "$@" || rc=$?
echo "kernels/test.sh: exit $rc after $((SECONDS - start)) s"
exit $rc

#!/usr/bin/env bash
# Build every fp8ext variant (pybind11 and PyO3) and run the runtime oracle (plus the gil-lint
# cross-check).
#
#   kernels/test.sh                    # oracle incl. gil-lint ($GIL_LINT, default target/release/gil-lint)
#   kernels/test.sh --runtime-only     # runtime matrix only
#   any other arguments go to kernels/oracle.py (e.g. --reps 3 --native-stacks -v)
#
# Environment: PYTHON (interpreter for the venv, default python3), FP8EXT_VENV (default
# kernels/.venv), FP8EXT_BUILD (default kernels/build), FP8EXT_BUILD_ARGS (extra build.py
# arguments, e.g. --cpu), FP8EXT_PYO3 (0: skip the PyO3 variants; default 1, needs cargo),
# FP8EXT_PYO3_BUILD (default kernels/build_pyo3), CARGO_TARGET_DIR (the cargo target directory
# shared by the PyO3 variants, default kernels/pyo3/target: cache it to skip the dependencies'
# build). The pybind11 variants use the CUDA kernels when nvcc is on PATH, else the CPU ones; the
# PyO3 variants choose at run time (CUDA through cudarc when a driver is present).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
python="${PYTHON:-python3}"
venv="${FP8EXT_VENV:-$here/.venv}"
build="${FP8EXT_BUILD:-$here/build}"
pyo3="${FP8EXT_PYO3:-1}"
build_pyo3="${FP8EXT_PYO3_BUILD:-$here/build_pyo3}"
start=$SECONDS

if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv"
fi
reqs=(-r "$here/requirements.txt")
if [[ "$pyo3" != 0 ]]; then
  reqs+=(-r "$here/pyo3/requirements.txt")
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${reqs[@]}"
# shellcheck disable=SC2086
"$venv/bin/python" "$here/build.py" --out "$build" ${FP8EXT_BUILD_ARGS:-}
builds=(--build "$build")
if [[ "$pyo3" != 0 ]]; then
  t0=$SECONDS
  "$venv/bin/python" "$here/build_pyo3.py" --out "$build_pyo3"
  echo "kernels/test.sh: PyO3 variants built in $((SECONDS - t0)) s"
  builds+=(--build "$build_pyo3")
fi
cd "$root"
rc=0
"$venv/bin/python" "$here/oracle.py" "${builds[@]}" --kernels "$@" || rc=$?
echo "kernels/test.sh: exit $rc after $((SECONDS - start)) s"
exit $rc

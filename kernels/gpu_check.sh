#!/usr/bin/env bash
# The GPU check: build the variants with nvcc and run the runtime oracle, the kernel correctness
# check (exact against the Python E4M3 reference) and the kernel benchmark; then the same with the
# portable device conversions (-DFP8EXT_SOFTWARE_FP8) and with the CPU kernels, for comparison.
#
#   kernels/gpu_check.sh OUTDIR        # logs and JSON reports go to OUTDIR, builds to /tmp
#
# For a machine without network: kernels/.carry/*.whl (e.g. the pinned pybind11 wheel) is
# installed with pip --no-index if present, and kernels/.carry/python-include/ is used when the
# interpreter ships no Python.h. Needs nvcc on PATH and python3 (PYTHON) with pybind11.
set -uo pipefail
out="${1:?usage: gpu_check.sh OUTDIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$here")"
python="${PYTHON:-python3}"
carry="$here/.carry"
export PYTHONUNBUFFERED=1
if compgen -G "$carry/*.whl" >/dev/null; then
  "$python" -m pip install -q --no-index --no-deps --target /tmp/fp8ext_site "$carry"/*.whl &&
    export PYTHONPATH="/tmp/fp8ext_site${PYTHONPATH:+:$PYTHONPATH}"
fi
inc_args=()
pyinc="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
if [[ ! -f "$pyinc/Python.h" && -f "$carry/python-include/Python.h" ]]; then
  inc_args=(--python-include "$carry/python-include")
fi
step() {
  echo
  echo "=== $*"
  local t0=$SECONDS rc=0
  "$@" || rc=$?
  echo "=== exit $rc after $((SECONDS - t0)) s"
}
{
  nvidia-smi -L
  nvcc --version | tail -2
  "$python" --version
  "$python" -c 'import pybind11; print("pybind11", pybind11.__version__, pybind11.__file__)'
  echo "cores: $(nproc); Python.h: ${inc_args[*]:-$pyinc}"
  step "$python" kernels/build.py --out /tmp/fp8ext_gpu ${inc_args[@]+"${inc_args[@]}"}
  step "$python" kernels/oracle.py --build /tmp/fp8ext_gpu --runtime-only --reps 3 --jobs 8 --timeout 20 --kernels \
    --check-size 2048 --bench-size 8192 --bench-iters 50 --json "$out/oracle_gpu.json"
  step "$python" kernels/build.py --out /tmp/fp8ext_gpu_sw --variants v3 --nvcc-extra=-DFP8EXT_SOFTWARE_FP8 \
    ${inc_args[@]+"${inc_args[@]}"}
  step "$python" kernels/oracle.py --build /tmp/fp8ext_gpu_sw --kernels-only --check-size 2048 --bench-size 8192 \
    --bench-iters 50 --json "$out/oracle_gpu_swfp8.json"
  step "$python" kernels/build.py --out /tmp/fp8ext_cpu --cpu ${inc_args[@]+"${inc_args[@]}"}
  step "$python" kernels/oracle.py --build /tmp/fp8ext_cpu --runtime-only --reps 3 --jobs 12 --timeout 10 --kernels \
    --bench-size 4096 --json "$out/oracle_cpu.json"
} 2>&1 | tee "$out/gpu_check.log"

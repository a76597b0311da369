#!/usr/bin/env bash
# The GPU check: build the variants with nvcc and run the runtime oracle, the kernel correctness
# check (exact against the Python E4M3 reference) and the kernel benchmark; then the same with the
# portable device conversions (-DFP8EXT_SOFTWARE_FP8) and with the CPU kernels, for comparison.
# The PyO3 variants (cudarc + NVRTC) run in the same oracle invocation as the pybind11 ones, with
# --expect-backend cuda; then with FP8EXT_SOFTWARE_FP8=1 (kernel check) and FP8EXT_FORCE_CPU=1.
#
#   kernels/gpu_check.sh OUTDIR        # logs and JSON reports go to OUTDIR, builds to /tmp
#
# For a machine without network: kernels/.carry/*.whl (e.g. the pinned pybind11 wheel) is
# installed with pip --no-index if present, and kernels/.carry/python-include/ is used when the
# interpreter ships no Python.h. PyO3: with cargo on PATH, the crates of
# kernels/.carry/pyo3/vendor.tar.gz (cargo vendor --locked --versioned-dirs, unpacked to
# /tmp/fp8ext_vendor) and the maturin wheel of kernels/.carry/pyo3/ build the variants offline;
# without cargo, the wheels of kernels/.carry/pyo3/wheels/ (build_pyo3.py output for this Python,
# made from the same sources elsewhere: cudarc loads CUDA at run time, so they are the same build)
# are installed instead. FP8EXT_GPU_PYBIND11=0 skips the pybind11 builds.
# Needs nvcc on PATH (pybind11) and python3 (PYTHON) with pybind11.
set -uo pipefail
out="${1:?usage: gpu_check.sh OUTDIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$here")"
python="${PYTHON:-python3}"
carry="$here/.carry"
pybind11="${FP8EXT_GPU_PYBIND11:-1}"
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
# cudarc dlopens libcuda.so.1 and libnvrtc.so*: put the toolkit's NVRTC on the loader path.
if command -v nvcc >/dev/null; then
  cuda_root="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
  export CUDA_HOME="${CUDA_HOME:-$cuda_root}"
  for d in "$cuda_root/lib64" "$cuda_root/targets/x86_64-linux/lib"; do
    if compgen -G "$d/libnvrtc.so*" >/dev/null; then
      export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      break
    fi
  done
fi
step() {
  echo
  echo "=== $*"
  local t0=$SECONDS rc=0
  "$@" || rc=$?
  echo "=== exit $rc after $((SECONDS - t0)) s"
}
build_pyo3() {
  if command -v cargo >/dev/null && [[ -f "$carry/pyo3/vendor.tar.gz" ]] && compgen -G "$carry/pyo3/maturin-*.whl" >/dev/null; then
    echo "cargo: $(cargo --version): building offline from the vendored crates"
    tar xzf "$carry/pyo3/vendor.tar.gz" -C /tmp &&
      mkdir -p /tmp/fp8ext_cargo_home &&
      printf '[source.crates-io]\nreplace-with = "vendored-sources"\n\n[source.vendored-sources]\ndirectory = "/tmp/fp8ext_vendor"\n' \
        >/tmp/fp8ext_cargo_home/config.toml &&
      "$python" -m pip install -q --no-index --no-deps --target /tmp/fp8ext_maturin "$carry"/pyo3/maturin-*.whl &&
      CARGO_HOME=/tmp/fp8ext_cargo_home "$python" kernels/build_pyo3.py --out /tmp/fp8ext_rs --offline \
        --maturin /tmp/fp8ext_maturin/bin/maturin --target-dir /tmp/fp8ext_rs_target
  else
    echo "no cargo here: installing the fp8ext_rs wheels built from these sources on the CPU machine"
    "$python" kernels/build_pyo3.py --out /tmp/fp8ext_rs --wheels "$carry/pyo3/wheels"
  fi
}
{
  nvidia-smi -L
  nvidia-smi --query-gpu=driver_version --format=csv,noheader
  nvcc --version | tail -2
  "$python" --version
  "$python" -c 'import pybind11; print("pybind11", pybind11.__version__, pybind11.__file__)'
  echo "cores: $(nproc); Python.h: ${inc_args[*]:-$pyinc}; LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  echo "loader: $(ldconfig -p | grep -E 'libcuda.so.1|libnvrtc.so' | tr -s ' \t' ' ' | tr '\n' ';')"
  builds=()
  if [[ "$pybind11" != 0 ]]; then
    step "$python" kernels/build.py --out /tmp/fp8ext_gpu ${inc_args[@]+"${inc_args[@]}"}
    builds+=(--build /tmp/fp8ext_gpu)
  fi
  step build_pyo3
  builds+=(--build /tmp/fp8ext_rs)
  # both front-ends in one matrix; every ok run must have used the GPU
  step "$python" kernels/oracle.py "${builds[@]}" --runtime-only --reps 3 --jobs 16 --timeout 20 --kernels \
    --check-size 2048 --bench-size 8192 --bench-iters 50 --expect-backend cuda --json "$out/oracle_gpu.json"
  step "$python" kernels/oracle.py --build /tmp/fp8ext_rs --kernels-only --env FP8EXT_SOFTWARE_FP8=1 --check-size 2048 \
    --bench-size 8192 --bench-iters 50 --expect-backend cuda --json "$out/oracle_gpu_rs_swfp8.json"
  if [[ "$pybind11" != 0 ]]; then
    step "$python" kernels/build.py --out /tmp/fp8ext_gpu_sw --variants v3 --nvcc-extra=-DFP8EXT_SOFTWARE_FP8 \
      ${inc_args[@]+"${inc_args[@]}"}
    step "$python" kernels/oracle.py --build /tmp/fp8ext_gpu_sw --kernels-only --check-size 2048 --bench-size 8192 \
      --bench-iters 50 --json "$out/oracle_gpu_swfp8.json"
    step "$python" kernels/build.py --out /tmp/fp8ext_cpu --cpu ${inc_args[@]+"${inc_args[@]}"}
  fi
  cpu_builds=(--build /tmp/fp8ext_rs)
  [[ "$pybind11" != 0 ]] && cpu_builds=(--build /tmp/fp8ext_cpu --build /tmp/fp8ext_rs)
  step "$python" kernels/oracle.py "${cpu_builds[@]}" --runtime-only --reps 3 --jobs 16 --timeout 10 --kernels \
    --bench-size 4096 --env FP8EXT_FORCE_CPU=1 --expect-backend cpu --json "$out/oracle_cpu.json"
} 2>&1 | tee "$out/gpu_check.log"

#!/usr/bin/env python3
"""Build one fp8ext extension module per init_extension() variant.

    python kernels/build.py [--out DIR] [--cpu] [--variants v0,v3] [--jobs N]

Each variant file of kernels/pybind11/variants/ is linked with the shared sources of
kernels/pybind11/csrc/ into its own module, fp8ext_v0 ... fp8ext_v5, so that all of them can be
imported side by side. The output directory also receives a copy of the Python package fp8ext
(whose float8_tensor module the extensions import lazily) and build_info.json.

Compiler flags: -O1 -g -shared -fPIC -std=c++17, and deliberately no -DNDEBUG: pybind11's debug
GIL checks (PYBIND11_ASSERT_GIL_HELD_INCREF_DECREF and the asserts in gil_scoped_release) turn
"Python API used without the GIL" into a deterministic abort on Python 3.11, where the process-wide
current thread state can otherwise hide it.

With nvcc on PATH (or --nvcc PATH) the CUDA kernels of csrc/kernels.cu replace csrc/kernels_cpu.cpp;
--cpu forces the CPU kernels. Uses only the standard library and the installed pybind11; the
interpreter running this script is the one the modules are built for.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "pybind11"
CSRC = SRC / "csrc"
VARIANT_DIR = SRC / "variants"
PY_PACKAGE = SRC / "python" / "fp8ext"

CXXFLAGS = ["-O1", "-g", "-shared", "-fPIC", "-std=c++17", "-fvisibility=hidden", "-Wall", "-Wno-unused-function"]
NVCCFLAGS = ["-O2", "-g", "-lineinfo", "-std=c++17", "-Xcompiler", "-fPIC"]


def variants() -> list[str]:
    return sorted(p.stem for p in VARIANT_DIR.glob("v*.cpp"))


def module_name(variant: str) -> str:
    """v0_no_gil -> fp8ext_v0"""
    return "fp8ext_" + variant.split("_", 1)[0]


def run(cmd: list[str], log: list[str]) -> float:
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.monotonic() - t0
    log.append(" ".join(cmd))
    if proc.returncode != 0:
        sys.stderr.write(f"build.py: command failed ({proc.returncode}):\n  {' '.join(cmd)}\n{proc.stdout}{proc.stderr}\n")
        raise SystemExit(1)
    if proc.stderr.strip():
        sys.stderr.write(proc.stderr)
    return dt


def cuda_link_flags(nvcc: str) -> list[str]:
    root = Path(os.path.realpath(nvcc)).parent.parent
    libdirs = [d for d in (root / "lib64", root / "lib", root / "targets" / "x86_64-linux" / "lib") if d.is_dir()]
    flags = [f"-L{d}" for d in libdirs]
    if any((d / "libcudart_static.a").exists() for d in libdirs):
        return flags + ["-lcudart_static", "-ldl", "-lrt", "-lpthread"]
    return flags + [f"-Wl,-rpath,{d}" for d in libdirs] + ["-lcudart"]


def tool_version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()
        return out[-1] if cmd[0].endswith("nvcc") else out[0]
    except (OSError, IndexError):
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "build"), help="output directory (default: kernels/build)")
    ap.add_argument("--cpu", action="store_true", help="use the CPU kernels even when nvcc is available")
    ap.add_argument("--nvcc", default=None, help="path of nvcc (default: nvcc on PATH)")
    ap.add_argument("--cuda-arch", default="80,90",
                    help="comma-separated SM versions for nvcc (default: 80,90; 'native' for the local GPU)")
    ap.add_argument("--nvcc-extra", default="", help="extra nvcc flags, space-separated (e.g. -DFP8EXT_SOFTWARE_FP8)")
    ap.add_argument("--python-include", default=None,
                    help="directory with Python.h, when the interpreter's sysconfig include has none")
    ap.add_argument("--variants", default="", help="comma-separated variant prefixes (default: all)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    args = ap.parse_args()

    import pybind11  # the pinned one, from the venv that kernels/test.sh makes

    out = Path(args.out).resolve()
    obj = out / "obj"
    obj.mkdir(parents=True, exist_ok=True)
    wanted = [v for v in variants() if not args.variants or v.split("_", 1)[0] in args.variants.split(",")]
    if not wanted:
        sys.stderr.write("build.py: no variant selected\n")
        return 2

    nvcc = None if args.cpu else (args.nvcc or shutil.which("nvcc"))
    backend = "cuda" if nvcc else "cpu"
    paths = sysconfig.get_paths()
    py_include = args.python_include or paths["include"]
    if not (Path(py_include) / "Python.h").exists():
        sys.stderr.write(f"build.py: no Python.h in {py_include} (install the Python headers or pass --python-include)\n")
        return 2
    includes = [f"-I{pybind11.get_include()}", f"-I{py_include}", f"-I{CSRC}"]
    if not args.python_include and paths.get("platinclude") and paths["platinclude"] != paths["include"]:
        includes.append(f"-I{paths['platinclude']}")
    ext_suffix = sysconfig.get_config_var("EXT_SUFFIX")

    log: list[str] = []
    t_start = time.monotonic()
    compile_jobs: list[list[str]] = []
    common_objs = [obj / "ops.o", obj / f"kernels_{backend}.o"]
    compile_jobs.append([args.cxx, *CXXFLAGS, *includes, "-c", str(CSRC / "ops.cpp"), "-o", str(common_objs[0])])
    if nvcc:
        if args.cuda_arch == "native":
            arch = ["-arch=native"]
        else:
            arch = []
            for sm in args.cuda_arch.split(","):
                arch += ["-gencode", f"arch=compute_{sm},code=sm_{sm}"]
            top = args.cuda_arch.split(",")[-1]
            arch += ["-gencode", f"arch=compute_{top},code=compute_{top}"]  # PTX for newer GPUs
        compile_jobs.append([nvcc, *NVCCFLAGS, *args.nvcc_extra.split(), *arch, f"-I{CSRC}", "-c", str(CSRC / "kernels.cu"), "-o", str(common_objs[1])])
    else:
        compile_jobs.append([args.cxx, *CXXFLAGS, f"-I{CSRC}", "-c", str(CSRC / "kernels_cpu.cpp"), "-o", str(common_objs[1])])
    links: list[list[str]] = []
    for v in wanted:
        name = module_name(v)
        mod_o, var_o = obj / f"module_{name}.o", obj / f"{v}.o"
        compile_jobs.append([args.cxx, *CXXFLAGS, *includes, f"-DFP8EXT_MODULE_NAME={name}", f'-DFP8EXT_VARIANT="{v}"',
                             "-c", str(CSRC / "module.cpp"), "-o", str(mod_o)])
        compile_jobs.append([args.cxx, *CXXFLAGS, *includes, "-c", str(VARIANT_DIR / f"{v}.cpp"), "-o", str(var_o)])
        link = [args.cxx, *CXXFLAGS, str(mod_o), str(var_o), *map(str, common_objs), "-o", str(out / f"{name}{ext_suffix}")]
        if nvcc:
            link += cuda_link_flags(nvcc)
        links.append(link)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(lambda c: run(c, log), compile_jobs))
        list(pool.map(lambda c: run(c, log), links))

    pkg_out = out / "fp8ext"
    if pkg_out.exists():
        shutil.rmtree(pkg_out)
    shutil.copytree(PY_PACKAGE, pkg_out, ignore=shutil.ignore_patterns("__pycache__"))

    elapsed = time.monotonic() - t_start
    info = {
        "backend": backend,
        "variants": {v: module_name(v) + ext_suffix for v in wanted},
        "python": sys.executable,
        "python_version": platform.python_version(),
        "pybind11": pybind11.__version__,
        "pybind11_include": pybind11.get_include(),
        "cxx": tool_version([args.cxx, "--version"]),
        "nvcc": tool_version([nvcc, "--version"]) if nvcc else None,
        "nvcc_extra": args.nvcc_extra,
        "python_include": py_include,
        "cxxflags": CXXFLAGS,
        "build_seconds": round(elapsed, 1),
        "commands": log,
    }
    (out / "build_info.json").write_text(json.dumps(info, indent=2) + "\n")
    print(f"build.py: {len(wanted)} modules ({backend} kernels, Python {platform.python_version()}, "
          f"pybind11 {pybind11.__version__}) in {out} [{elapsed:.1f} s]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

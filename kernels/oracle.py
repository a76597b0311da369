#!/usr/bin/env python3
"""Runtime GIL oracle for the fp8ext variants, and its cross-check against gil-lint.

    python kernels/oracle.py [--build DIR]... [--runtime-only] [--reps N] [--jobs N] [--timeout S]
                             [--variants v0,rs_a] [--scenarios S1,S3] [--kernels] [--json FILE]

For every variant module built by build.py (pybind11: fp8ext_v0 ... fp8ext_v5) or build_pyo3.py
(PyO3: fp8ext_rs_a ... fp8ext_rs_d) in the build directories given (--build, repeatable; default
kernels/build) and every scenario below, a fresh Python subprocess runs the scenario under a timeout
and is classified:

    ok        exit status 0 and the child printed "RESULT OK" (the kernels' numerical results were
              checked against a pure-Python E4M3 reference first);
    crash     killed by a signal, or "Fatal Python error" on stderr;
    deadlock  still running at the timeout (faulthandler dumps every thread's Python stack shortly
              before the parent kills it; the dump is kept in the JSON report);
    error     anything else (a Python exception, a wrong numerical result): always a failure.

Scenarios (delays are injected through environment variables so that the races are deterministic;
the 20 ms / 100 ms thread offsets and 400 ms sleeps are the margins of the research prototype):

    S0  baseline, one thread: quantize (GIL held) is the first call, then everything else
    S1  one thread: fp8_transpose (bound with call_guard<gil_scoped_release>; in PyO3 its body runs
        inside py.detach) is the first call
    S2  two threads: fp8_transpose after 20 ms || quantize after 100 ms;
        FP8EXT_LAMBDA_DELAY_MS=400 (the once-body sleeps before importing), FP8EXT_IMPORT_SLEEP_MS=400
    S3  two GIL-holding threads: quantize after 20 ms || dequantize after 100 ms;
        FP8EXT_IMPORT_SLEEP_MS=400 (fp8ext.float8_tensor sleeps in time.sleep at import)

Checks, each a failure when it does not hold:
  1. every cell matches EXPECTED below (the outcomes observed when this oracle was written);
  2. the fixture annotations of the variant file (`//~ rule`) agree with the runtime: a
     `missing-gil` annotation iff some scenario crashes, a `gil-lock-inversion` or
     `gil-held-blocking` annotation iff some scenario deadlocks, none iff all pass;
  3. unless --runtime-only: the same three rules for the findings of
     `$GIL_LINT check --format json kernels/pybind11/csrc kernels/pybind11/variants/<variant>.cpp`
     (PyO3: `kernels/pyo3/fp8ext_rs/src kernels/pyo3/fp8ext_rs/variants/<variant>.rs`; GIL_LINT
     defaults to target/release/gil-lint, relative to the repository root). Findings whose
     (rule, line) differ from the annotations are reported as warnings (errors with --strict-lines).

--kernels adds, per build, a correctness check at a larger size and a timing of the three kernels
(benchmark()) on a clean variant; --kernels-only runs just that. --expect-backend cuda fails any run
whose kernels did not run on the GPU (the PyO3 modules pick cuda or cpu at run time). Standard
library only.
"""

from __future__ import annotations

import argparse
import bisect
import concurrent.futures
import importlib
import json
import math
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from array import array
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VARIANT_DIR = HERE / "pybind11" / "variants"
PYBIND11_COMMON = "kernels/pybind11/csrc"

SCENARIOS = {
    "S0": ("baseline: quantize (GIL held) first, one thread", {}),
    "S1": ("fp8_transpose (GIL released) is the first call, one thread", {}),
    "S2": ("fp8_transpose +20ms || quantize +100ms; once-body sleeps 400ms, import sleeps 400ms",
           {"FP8EXT_LAMBDA_DELAY_MS": "400", "FP8EXT_IMPORT_SLEEP_MS": "400"}),
    "S3": ("quantize +20ms || dequantize +100ms (both hold the GIL); import sleeps 400ms",
           {"FP8EXT_IMPORT_SLEEP_MS": "400"}),
}

# Outcome classes observed (CPython 3.11.7, pybind11 3.0.1, g++ 12, debug GIL checks on).
EXPECTED = {
    "v0": {"S0": "ok", "S1": "crash", "S2": "crash", "S3": "deadlock"},
    "v1": {"S0": "ok", "S1": "ok", "S2": "deadlock", "S3": "deadlock"},
    "v2": {"S0": "ok", "S1": "ok", "S2": "deadlock", "S3": "deadlock"},
    "v3": {"S0": "ok", "S1": "ok", "S2": "ok", "S3": "ok"},
    "v4": {"S0": "ok", "S1": "ok", "S2": "deadlock", "S3": "deadlock"},
    "v5": {"S0": "ok", "S1": "ok", "S2": "ok", "S3": "ok"},
    # PyO3 0.30.1 (maturin 1.16.0), CPython 3.11.7 and 3.12.3, CPU and H200 alike
    "rs_a": {"S0": "ok", "S1": "ok", "S2": "deadlock", "S3": "deadlock"},
    "rs_b": {"S0": "ok", "S1": "ok", "S2": "ok", "S3": "ok"},
    "rs_c": {"S0": "ok", "S1": "ok", "S2": "ok", "S3": "ok"},
    "rs_d": {"S0": "ok", "S1": "ok", "S2": "deadlock", "S3": "deadlock"},
}

CRASH_RULES = {"missing-gil"}
HANG_RULES = {"gil-lock-inversion", "gil-held-blocking"}
ANNOTATION = re.compile(r"//~\s*([a-z][a-z0-9-]*)")


# --------------------------------------------------------------------------------------------
# E4M3 reference (pure Python)
# --------------------------------------------------------------------------------------------

def e4m3_decode(code: int) -> float:
    exp_field, mant = (code >> 3) & 0xF, code & 0x7
    if exp_field == 15 and mant == 7:
        v = math.nan
    elif exp_field == 0:
        v = math.ldexp(mant, -9)
    else:
        v = math.ldexp(1.0 + mant / 8.0, exp_field - 7)
    return -v if code & 0x80 else v


E4M3 = [e4m3_decode(c) for c in range(256)]
E4M3_POSITIVE = E4M3[:0x7F]  # codes 0x00..0x7e: 0 .. 448, strictly increasing


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def e4m3_encode(v: float) -> int:
    """Round to nearest, ties to even, saturating to +-448 (cuda_fp8.h __NV_SATFINITE)."""
    sign = 0x80 if math.copysign(1.0, v) < 0 else 0
    if math.isnan(v):
        return sign | 0x7F
    a = abs(v)
    if a >= 448.0:
        return sign | 0x7E
    i = bisect.bisect_left(E4M3_POSITIVE, a)
    if E4M3_POSITIVE[i] == a:
        return sign | i
    lo, hi = i - 1, i
    d_lo, d_hi = a - E4M3_POSITIVE[lo], E4M3_POSITIVE[hi] - a
    code = lo if d_lo < d_hi else hi if d_hi < d_lo else (lo if lo % 2 == 0 else hi)
    return sign | code


def test_values(n: int, seed: int) -> list[float]:
    """float32 values: mostly N(0, 40) (some saturate at scale 2), subnormals, exact ties, extremes."""
    rng = random.Random(seed)
    specials = [0.0, -0.0, 1.0, -1.0, 0.53125, 0.59375, -0.53125, 2.0 ** -11, 3 * 2.0 ** -11, 2.0 ** -12,
                -(2.0 ** -11), 224.0, 232.0, -240.0, 1e30, -1e30, 5e-40, 100.0, 0.0078125]
    vals = []
    for i in range(n):
        if i < len(specials):
            vals.append(specials[i])
        elif i % 7 == 0:
            vals.append(rng.uniform(-2.0 ** -7, 2.0 ** -7))
        elif i % 11 == 0:  # a midpoint between two neighbouring E4M3 values (before the x2 scale)
            c = rng.randrange(1, 0x7E)
            vals.append(rng.choice((1, -1)) * (E4M3[c] + E4M3[c + 1]) / 4.0)
        else:
            vals.append(rng.gauss(0.0, 40.0))
    return [f32(v) for v in vals]


class Checks:
    """Numerical checks of one fp8ext module against the reference. Raises AssertionError."""

    def __init__(self, mod, rows: int = 24, cols: int = 40, seed: int = 1234):
        self.mod = mod
        self.rows, self.cols = rows, cols
        self.scale = 2.0
        self.values = test_values(rows * cols, seed)
        self.x = array("f", self.values)
        rng = random.Random(seed + 1)
        self.t_rows, self.t_cols = rows + 13, cols + 13  # not multiples of the 32x32 tiles
        self.t_data = bytes(rng.randrange(256) for _ in range(self.t_rows * self.t_cols))
        self.done: list[str] = []

    def x2d(self):
        return memoryview(self.x).cast("B").cast("f", [self.rows, self.cols])

    # -- verification of results obtained elsewhere (e.g. in a racing thread) --
    def verify_quantize(self, result) -> bytes:
        data, amax = result
        assert isinstance(data, bytes) and len(data) == len(self.values), "quantize: wrong output size"
        want_amax = max(abs(v) for v in self.values)
        assert amax == want_amax, f"quantize: amax {amax} != {want_amax}"
        for i, v in enumerate(self.values):
            want = e4m3_encode(f32(v * self.scale))
            assert data[i] == want, f"quantize: x[{i}]={v!r}: code {data[i]:#04x} != {want:#04x}"
        self.done.append("quantize")
        return data

    def verify_dequantize(self, data: bytes, out: bytes, scale_inv: float) -> None:
        got = array("f")
        got.frombytes(out)
        assert len(got) == len(data), "dequantize: wrong output size"
        for i, c in enumerate(data):
            want = f32(E4M3[c] * scale_inv)
            ok = math.isnan(got[i]) if math.isnan(want) else got[i] == want
            assert ok, f"dequantize: code {c:#04x}: {got[i]!r} != {want!r}"
        self.done.append("dequantize")

    def verify_transpose(self, out) -> None:
        r, c, d = self.t_rows, self.t_cols, self.t_data
        want = bytes(d[i * c + j] for j in range(c) for i in range(r))
        assert bytes(out) == want, "fp8_transpose: wrong result"
        self.done.append("fp8_transpose")

    def verify_roundtrip(self, data: bytes, out: bytes) -> None:
        """Independent of the exact-code check: |deq(q(x)) - x| within E4M3's rounding error."""
        got = array("f")
        got.frombytes(out)
        s = self.scale
        for i, v in enumerate(self.values):
            if abs(v * s) >= 448.0:
                assert got[i] == math.copysign(448.0 / s, v), f"roundtrip: {v!r} did not saturate: {got[i]!r}"
            else:
                tol = max(abs(v) * 2.0 ** -4, 2.0 ** -10 / s) * (1 + 1e-6)
                assert abs(got[i] - v) <= tol, f"roundtrip: {v!r} -> {got[i]!r} (tolerance {tol})"
        self.done.append("roundtrip")

    # -- calls + verification --
    def quantize(self) -> bytes:
        return self.verify_quantize(self.mod.quantize(self.x2d(), self.scale))

    def transpose(self) -> None:
        self.verify_transpose(self.mod.fp8_transpose(self.t_data, self.t_rows, self.t_cols))

    def all_codes(self) -> None:
        codes = bytes(range(256))
        self.verify_dequantize(codes, self.mod.dequantize(codes, 0.25), 0.25)

    def full(self) -> None:
        """Every binding once, single-threaded, including the Float8Tensor path and errors."""
        from fp8ext.float8_tensor import Float8Tensor

        mod = self.mod
        data = self.quantize()
        d1, amax1 = mod.quantize(self.x, self.scale)  # the same values as a 1-D buffer
        assert d1 == data and amax1 == max(abs(v) for v in self.values), "quantize: 1-D != 2-D"
        scale_inv = f32(1.0 / self.scale)
        out = mod.dequantize(data, scale_inv)
        self.verify_dequantize(data, out, scale_inv)
        self.verify_roundtrip(data, out)
        t = Float8Tensor(data, scale_inv, (self.rows, self.cols))
        assert mod.dequantize(t) == out, "dequantize(Float8Tensor) != dequantize(bytes, scale_inv)"
        self.all_codes()
        self.transpose()
        for bad, exc in ((lambda: mod.fp8_transpose(b"abc", 2, 2), ValueError),
                         (lambda: mod.quantize(array("d", [1.0]), 1.0), TypeError),
                         (lambda: mod.dequantize(b"\x00"), TypeError)):
            try:
                bad()
            except exc:
                pass
            else:
                raise AssertionError(f"expected {exc.__name__}")
        self.done.append("errors")


# --------------------------------------------------------------------------------------------
# child side
# --------------------------------------------------------------------------------------------

def module_name(variant: str) -> str:
    """pybind11 variants: v0_no_gil -> fp8ext_v0 (PyO3 builds name their modules in build_info)."""
    return "fp8ext_" + variant.split("_", 1)[0]


def backend_of(mod) -> str:
    """"cuda" or "cpu": a pybind11 module's build-time backend, a PyO3 module's run-time one."""
    if hasattr(mod, "backend_info"):
        return mod.backend_info()["backend"]
    return mod.backend


def race(calls):
    """Start one thread per (delay_s, fn) together; each sleeps delay_s (dropping the GIL), then
    calls fn. Returns the results in order; re-raises the first exception."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)
    errors: list = []

    def body(i, delay, fn):
        try:
            barrier.wait()
            time.sleep(delay)
            results[i] = fn()
        except BaseException as e:  # noqa: BLE001 - reported by the parent
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i, d, fn), name=f"{getattr(fn, '__name__', 'call')}")
               for i, (d, fn) in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def child(module: str, scenario: str, timeout: float) -> int:
    import faulthandler

    faulthandler.enable()
    faulthandler.dump_traceback_later(max(timeout - 2.0, 0.5), exit=False)
    mod = importlib.import_module(module)
    c = Checks(mod)
    if scenario == "S0":
        c.quantize()
        c.transpose()
    elif scenario == "S1":
        c.transpose()
    elif scenario == "S2":
        x2d, t_data = c.x2d(), c.t_data

        def fp8_transpose():
            return mod.fp8_transpose(t_data, c.t_rows, c.t_cols)

        def quantize():
            return mod.quantize(x2d, c.scale)

        t_out, q_out = race([(0.02, fp8_transpose), (0.10, quantize)])
        c.verify_transpose(t_out)
        c.verify_quantize(q_out)
    elif scenario == "S3":
        x2d, codes = c.x2d(), bytes(range(256))

        def quantize():
            return mod.quantize(x2d, c.scale)

        def dequantize():
            return mod.dequantize(codes, 0.25)

        q_out, d_out = race([(0.02, quantize), (0.10, dequantize)])
        c.verify_quantize(q_out)
        c.verify_dequantize(codes, d_out, 0.25)
    else:
        raise SystemExit(f"unknown scenario {scenario}")
    c.full()
    faulthandler.cancel_dump_traceback_later()
    print("RESULT OK " + json.dumps({"backend": backend_of(mod), "checked": sorted(set(c.done))}), flush=True)
    return 0


def child_kernels(module: str, size: int, bench_size: int, iters: int) -> int:
    mod = importlib.import_module(module)
    t0 = time.monotonic()
    c = Checks(mod, rows=size, cols=size + 8, seed=99)
    c.full()
    check_s = time.monotonic() - t0
    res = {"backend": backend_of(mod), "variant": mod.variant, "check_rows": c.rows, "check_cols": c.cols,
           "check_seconds": round(check_s, 2), "checked": sorted(set(c.done))}
    if hasattr(mod, "backend_info"):
        res["device"] = mod.backend_info()["device"]
    if bench_size > 0:
        b = mod.benchmark(bench_size, bench_size, iters)
        n = bench_size * bench_size
        for k, nbytes in (("quantize", 5 * n), ("dequantize", 5 * n), ("transpose", 2 * n)):
            b[f"{k}_GBps"] = round(nbytes / (b[f"{k}_ms"] * 1e-3) / 1e9, 1)
        res["benchmark"] = b
    print("RESULT OK " + json.dumps(res), flush=True)
    return 0


# --------------------------------------------------------------------------------------------
# parent side
# --------------------------------------------------------------------------------------------

def child_env(build: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FP8EXT_")}
    env.update(extra)
    env["PYTHONPATH"] = os.pathsep.join([str(build)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_child(cmd: list[str], env: dict[str, str], timeout: float, native_stacks: bool = False) -> dict:
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors="replace", cwd=str(ROOT))
    timed_out = False
    stacks = None
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        if native_stacks:
            stacks = gdb_backtraces(p.pid)
        p.kill()
        out, err = p.communicate()
    r = {"rc": p.returncode, "timed_out": timed_out, "stdout": out, "stderr": err,
         "seconds": round(time.monotonic() - t0, 2)}
    if stacks is not None:
        r["native_stacks"] = stacks
    return r


def gdb_backtraces(pid: int) -> str:
    """Native stacks of every thread of a live (hung) child, via gdb, when it is installed."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return "gdb not found"
    try:
        return subprocess.run([gdb, "-p", str(pid), "-batch", "-nx", "-ex", "set pagination off",
                               "-ex", "thread apply all bt"], capture_output=True, text=True, timeout=60,
                              errors="replace").stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"gdb failed: {e}"


KEY_FRAMES = re.compile(r"^(take_gil|__pthread_once_slow|__cxa_guard_acquire|futex_wait|time_sleep|"
                        r"PyImport_ImportModule|PyEval_RestoreThread|PyEval_AcquireThread|PyGILState_Ensure|"
                        r"pybind11::gil_scoped_acquire::gil_scoped_acquire|init_extension|quantize|"
                        r"dequantize|fp8_transpose|_PyEval_EvalFrameDefault|"
                        # Rust (PyO3; gdb shows inlined frames by their short names): the OnceLock
                        # and Lazy waits, the import and the attach
                        r"std::sys::sync::once::futex::Once::call|initialize_or_wait|force|PyImport_Import|"
                        r"attach|pyo3::marker::Python::attach)\b")


def summarize_stacks(text: str) -> list[str]:
    """One line per thread that went through init_extension: its key native frames, innermost first."""
    lines = []
    for block in re.split(r"\n(?=Thread \d+ )", text):
        frames = re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?([^\s(]+)", block, re.M)
        if not any(f == "init_extension" or f.endswith("::init_extension") for f in frames):
            continue
        keep = []
        for f in frames:
            name = re.sub(r"<.*$", "", f)  # Rust: attach<closure..> -> attach
            name = re.sub(r"^.*?(init_extension|quantize|dequantize|fp8_transpose)$", r"\1", name)
            if KEY_FRAMES.match(name) and name not in keep:
                keep.append(name)
            if name in ("quantize", "dequantize", "fp8_transpose"):
                break
        lines.append(" <- ".join(keep))
    return lines


def classify(r: dict) -> str:
    if r["timed_out"]:
        return "deadlock"
    rc = r["rc"]
    if rc < 0:
        try:
            return "crash:" + signal.Signals(-rc).name
        except ValueError:
            return f"crash:signal{-rc}"
    if "Fatal Python error" in r["stderr"]:
        return f"crash:rc{rc}"
    if rc == 0 and "RESULT OK" in r["stdout"]:
        return "ok"
    return "error"


def outcome_class(outcome: str) -> str:
    return outcome.split(":", 1)[0]


def fatal_line(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("Fatal Python error") or "what():" in line:
            return line.strip()[:160]
    return ""


def annotations(variant_file: Path) -> list[tuple[int, str]]:
    found = []
    for lineno, line in enumerate(variant_file.read_text().splitlines(), 1):
        found += [(lineno, m) for m in ANNOTATION.findall(line)]
    return found


def rules_verdict(rules: set[str], crash: bool, hang: bool) -> list[str]:
    """Problems with a set of rules given the runtime: [] when they agree."""
    problems = []
    if ("missing-gil" in rules) != crash:
        problems.append("missing-gil " + ("absent but a scenario crashes" if crash else "present but nothing crashes"))
    if bool(rules & HANG_RULES) != hang:
        problems.append("deadlock rule " + ("absent but a scenario deadlocks" if hang else "present but nothing hangs"))
    if not crash and not hang and rules:
        problems.append(f"findings {sorted(rules)} but every scenario passes")
    return problems


def run_linter(gil_lint: str, common: str, source: str) -> dict:
    """gil-lint on the shared sources (a directory) and one variant file, both relative to ROOT."""
    cmd = [gil_lint, "check", "--format", "json", common, source]
    try:
        p = subprocess.run(cmd, cwd=str(ROOT), capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"cmd": cmd, "error": f"could not run: {e}"}
    res = {"cmd": cmd, "rc": p.returncode, "stderr": p.stderr[-2000:]}
    if p.returncode not in (0, 1):
        res["error"] = f"exit status {p.returncode}: {p.stderr.strip()[-500:]}"
        return res
    try:
        data = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        res["error"] = f"output is not JSON ({e}): {p.stdout[:300]!r}"
        return res
    res["findings"] = data.get("findings", [])
    res["errors"] = data.get("errors", [])
    if (p.returncode == 1) != bool(res["findings"]):
        res["error"] = f"exit status {p.returncode} disagrees with {len(res['findings'])} findings"
    return res


def fmt_cell(outcomes: list[str]) -> str:
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o] = counts.get(o, 0) + 1
    if len(counts) == 1:
        return outcomes[0] + (f" ({len(outcomes)}/{len(outcomes)})" if len(outcomes) > 1 else "")
    return ", ".join(f"{o} {n}/{len(outcomes)}" for o, n in sorted(counts.items()))


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"
    print(line(headers))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))


def load_builds(dirs: list[str]) -> tuple[list[dict], list[str]]:
    """The variants of every build directory: dicts with id, key (the EXPECTED row), module, build,
    source (the variant file, relative to ROOT), common (the shared sources' directory) and
    frontend. Returns (variants, errors)."""
    out: list[dict] = []
    errors: list[str] = []
    for d in dirs:
        build = Path(d).resolve()
        info_path = build / "build_info.json"
        if not info_path.exists():
            script = "build_pyo3.py" if "pyo3" in build.name else "build.py"
            errors.append(f"{info_path} not found; run kernels/{script} --out {build} first")
            continue
        info = json.loads(info_path.read_text())
        if info.get("frontend") == "pyo3":
            if info["python_version"].rsplit(".", 1)[0] != "{}.{}".format(*sys.version_info[:2]):
                errors.append(f"{build}: built for Python {info['python_version']}, not this one")
                continue
            for vid, v in sorted(info["variants"].items()):
                if not (build / v["extension"]).exists():
                    errors.append(f"{build / v['extension']} missing")
                out.append({"id": vid, "key": v["key"], "module": v["module"], "build": build, "info": info,
                            "source": v["source"], "common": v["common"], "frontend": "pyo3"})
        else:
            for vid, filename in sorted(info["variants"].items()):
                if not (build / filename).exists():
                    errors.append(f"{build / filename} missing (built for another Python?)")
                out.append({"id": vid, "key": vid.split("_", 1)[0], "module": module_name(vid), "build": build,
                            "info": info, "source": f"kernels/pybind11/variants/{vid}.cpp",
                            "common": PYBIND11_COMMON, "frontend": "pybind11"})
    return out, errors


def describe_build(info: dict) -> str:
    if info.get("frontend") == "pyo3":
        return (f"PyO3 {info['pyo3']} ({info.get('maturin') or 'prebuilt wheels'}), Python {info['python_version']}, "
                f"kernels chosen at run time")
    return f"pybind11 {info['pybind11']}, {info['backend']} kernels, Python {info['python_version']}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="append", default=None,
                    help="build directory of build.py or build_pyo3.py; repeatable (default: kernels/build)")
    ap.add_argument("--variants", default="",
                    help="comma-separated prefixes, e.g. v0,v3,rs_a or rs for every PyO3 variant (default: all)")
    ap.add_argument("--scenarios", default="", help="comma-separated, e.g. S1,S3 (default: all)")
    ap.add_argument("--reps", type=int, default=2, help="runs per cell (default 2)")
    ap.add_argument("--jobs", type=int, default=6, help="parallel children (deadlocked ones idle; default 6)")
    ap.add_argument("--timeout", type=float, default=8.0, help="seconds before a child counts as deadlocked")
    ap.add_argument("--runtime-only", action="store_true", help="skip the gil-lint side")
    ap.add_argument("--gil-lint", default=os.environ.get("GIL_LINT", "target/release/gil-lint"),
                    help="gil-lint binary (env GIL_LINT; default target/release/gil-lint, from the repo root)")
    ap.add_argument("--strict-lines", action="store_true", help="fail when finding lines differ from annotations")
    ap.add_argument("--kernels", action="store_true", help="also run the larger kernel check and benchmark")
    ap.add_argument("--kernels-only", action="store_true", help="only the kernel check and benchmark")
    ap.add_argument("--check-size", type=int, default=256, help="rows of the --kernels correctness check")
    ap.add_argument("--bench-size", type=int, default=1024, help="n of the n x n --kernels benchmark (0: none)")
    ap.add_argument("--bench-iters", type=int, default=20)
    ap.add_argument("--expect-backend", choices=("cuda", "cpu"), default=None,
                    help="fail every ok run and kernel check whose kernels ran on another backend")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="set in every child, e.g. FP8EXT_FORCE_CPU=1 or FP8EXT_SOFTWARE_FP8=1 (the children get no "
                         "other FP8EXT_* variables of this environment)")
    ap.add_argument("--json", default=None, help="write all runs here (default FIRST_BUILD/oracle_results.json)")
    ap.add_argument("--native-stacks", action="store_true",
                    help="attach gdb to deadlocked children before killing them and summarise their native stacks")
    ap.add_argument("-v", "--verbose", action="store_true", help="print stderr excerpts of crashes and deadlocks")
    ap.add_argument("--child", nargs=2, metavar=("MODULE", "SCENARIO"), help=argparse.SUPPRESS)
    ap.add_argument("--child-kernels", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        return child(args.child[0], args.child[1], args.timeout)
    if args.child_kernels:
        return child_kernels(args.child_kernels, args.check_size, args.bench_size, args.bench_iters)

    build_dirs = args.build or [str(HERE / "build")]
    extra_env = dict(kv.split("=", 1) for kv in args.env if "=" in kv)
    all_variants, errors = load_builds(build_dirs)
    for e in errors:
        print(f"oracle: {e}", file=sys.stderr)
    if errors:
        return 2
    wanted = [w for w in args.variants.split(",") if w]
    variants = [v for v in all_variants if not wanted or any(v["id"] == w or v["id"].startswith(w + "_") for w in wanted)]
    if not variants:
        print(f"oracle: no variant selected by --variants {args.variants}", file=sys.stderr)
        return 2
    by_id = {v["id"]: v for v in variants}
    if len(by_id) != len(variants):
        print("oracle: two builds hold variants of the same name", file=sys.stderr)
        return 2
    scenarios = [s for s in SCENARIOS if not args.scenarios or s in args.scenarios.split(",")]
    print(f"oracle: Python {sys.version.split()[0]} ({sys.executable})"
          + (f"; children get {' '.join(args.env)}" if args.env else ""))
    seen_builds: list[Path] = []
    for v in variants:
        if v["build"] not in seen_builds:
            seen_builds.append(v["build"])
            print(f"  build {v['build']}: {describe_build(v['info'])}")
    report: dict = {"builds": {str(v["build"]): v["info"] for v in variants}, "python": sys.version, "runs": [],
                    "linter": {}, "kernels": {}}
    failures: list[str] = []
    warnings: list[str] = []
    t_start = time.monotonic()

    def backend_problem(where: str, stdout: str) -> None:
        line = next((ln for ln in stdout.splitlines() if ln.startswith("RESULT OK ")), None)
        if args.expect_backend and line is not None:
            got = json.loads(line[len("RESULT OK "):]).get("backend")
            if got != args.expect_backend:
                failures.append(f"{where}: kernels ran on {got}, expected {args.expect_backend}")

    if not args.kernels_only:
        if not args.runtime_only:
            gil_lint = args.gil_lint if os.path.isabs(args.gil_lint) else str(ROOT / args.gil_lint)
            if not os.access(gil_lint, os.X_OK):
                print(f"oracle: gil-lint binary {gil_lint} not found (cargo build --release, set GIL_LINT, "
                      f"or pass --runtime-only)", file=sys.stderr)
                return 2

        # ---- runtime matrix ----
        jobs = []
        for v in variants:
            for s in scenarios:
                for rep in range(args.reps):
                    jobs.append((v["id"], s, rep))
        # expected deadlocks first: they take the whole timeout, the rest fits around them
        jobs.sort(key=lambda j: EXPECTED.get(by_id[j[0]]["key"], {}).get(j[1]) != "deadlock")

        def one(job):
            vid, s, rep = job
            v = by_id[vid]
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", v["module"], s, "--timeout", str(args.timeout)]
            r = run_child(cmd, child_env(v["build"], {**extra_env, **SCENARIOS[s][1]}), args.timeout, args.native_stacks)
            r.update(variant=vid, scenario=s, rep=rep, outcome=classify(r))
            return r

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            runs = list(pool.map(one, jobs))
        report["runs"] = runs
        matrix_s = time.monotonic() - t_start

        cells: dict[tuple[str, str], list[str]] = {}
        for r in runs:
            cells.setdefault((r["variant"], r["scenario"]), []).append(r["outcome"])
        reported = set()
        for r in runs:  # one line per cell with errors: the last line of the child's output
            key = (r["variant"], r["scenario"])
            if r["outcome"] == "error" and key not in reported:
                reported.add(key)
                tail = (r["stderr"] or r["stdout"]).strip().splitlines()[-1:]
                failures.append(f"{key[0]} {key[1]}: error (rc {r['rc']}): " + " / ".join(tail))
            if r["outcome"] == "ok" and key not in reported:
                n = len(failures)
                backend_problem(f"{key[0]} {key[1]}", r["stdout"])
                if len(failures) > n:
                    reported.add(key)

        # ---- static side ----
        rows = []
        for v in variants:
            vid, key = v["id"], v["key"]
            outcomes = {s: cells[(vid, s)] for s in scenarios}
            crash = any(outcome_class(o) == "crash" for os_ in outcomes.values() for o in os_)
            hang = any(o == "deadlock" for os_ in outcomes.values() for o in os_)
            for s in scenarios:
                exp = EXPECTED.get(key, {}).get(s)
                got = {outcome_class(o) for o in outcomes[s]}
                if exp is not None and got != {exp}:
                    failures.append(f"{vid} {s}: expected {exp}, observed {fmt_cell(outcomes[s])}")
            source = ROOT / v["source"]
            ann = annotations(source)
            ann_rules = {r for _, r in ann}
            for p in rules_verdict(ann_rules, crash, hang):
                failures.append(f"{vid}: fixture annotations: {p}")
            ann_txt = ", ".join(f"{r}@{ln}" for ln, r in ann) or "(clean)"
            lint_txt = "skipped"
            if not args.runtime_only:
                lr = run_linter(gil_lint, v["common"], v["source"])
                report["linter"][vid] = lr
                if "error" in lr:
                    failures.append(f"{vid}: gil-lint: {lr['error']}")
                    lint_txt = "ERROR"
                else:
                    findings = lr["findings"]
                    rules = {f["rule"] for f in findings}
                    probs = rules_verdict(rules, crash, hang)
                    failures += [f"{vid}: gil-lint: {p}" for p in probs]
                    if lr["errors"]:
                        warnings.append(f"{vid}: gil-lint reported errors: {lr['errors']}")
                    in_variant = {(f["rule"], f["line"]) for f in findings
                                  if str(f.get("path", "")).endswith(source.name)}
                    if in_variant != {(r, ln) for ln, r in ann}:
                        msg = (f"{vid}: gil-lint findings in the variant file {sorted(in_variant)} differ from the "
                               f"annotations {sorted((r, ln) for ln, r in ann)}")
                        (failures if args.strict_lines else warnings).append(msg)
                    lint_txt = ", ".join(f"{f['rule']}@{Path(str(f['path'])).name}:{f['line']}" for f in findings) or "(clean)"
                    lint_txt += " " + ("OK" if not probs else "MISMATCH")
            rows.append([vid] + [fmt_cell(outcomes[s]) for s in scenarios] + [ann_txt, lint_txt])

        print()
        for s in scenarios:
            print(f"  {s}: {SCENARIOS[s][0]}")
        print()
        print_table(["variant"] + scenarios + ["annotations", "gil-lint"], rows)
        print(f"\n{len(runs)} runs, {args.reps} per cell, timeout {args.timeout:g} s, {args.jobs} jobs: {matrix_s:.1f} s")
        backends = sorted({f"{by_id[r['variant']]['frontend']}: " + json.loads(ln[len("RESULT OK "):]).get("backend", "?")
                           for r in runs for ln in r["stdout"].splitlines() if ln.startswith("RESULT OK ")})
        if backends:
            print("kernels of the ok runs: " + ", ".join(backends))
        if args.native_stacks:
            seen = set()
            for r in runs:
                if "native_stacks" in r and (r["variant"], r["scenario"]) not in seen:
                    seen.add((r["variant"], r["scenario"]))
                    summary = summarize_stacks(r["native_stacks"]) or [r["native_stacks"].strip()[-300:]]
                    print(f"  {r['variant']} {r['scenario']} deadlock, native stacks:")
                    for ln in summary:
                        print(f"      {ln}")
        if args.verbose:
            for r in runs:
                if r["outcome"] != "ok" and r["rep"] == 0:
                    print(f"\n--- {r['variant']} {r['scenario']}: {r['outcome']} (rc {r['rc']}, {r['seconds']} s)")
                    print("\n".join(r["stderr"].strip().splitlines()[:40]))
        else:
            seen = set()
            for r in runs:
                fl = fatal_line(r["stderr"]) if outcome_class(r["outcome"]) == "crash" else ""
                if fl and (r["variant"], r["scenario"]) not in seen:
                    seen.add((r["variant"], r["scenario"]))
                    print(f"  {r['variant']} {r['scenario']}: {fl}")

    if args.kernels or args.kernels_only:
        for build in seen_builds:
            in_build = [v for v in variants if v["build"] == build]
            # a variant that never hangs or crashes (v3, rs_b) if one was selected
            clean = [v for v in in_build if set(EXPECTED.get(v["key"], {}).values()) == {"ok"}]
            v = (clean or in_build)[0]
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child-kernels", v["module"], "--check-size",
                   str(args.check_size), "--bench-size", str(args.bench_size), "--bench-iters", str(args.bench_iters)]
            r = run_child(cmd, child_env(build, extra_env), 600.0)
            report["kernels"][v["id"]] = r
            line = next((ln for ln in r["stdout"].splitlines() if ln.startswith("RESULT OK ")), None)
            if r["rc"] != 0 or line is None:
                failures.append(f"{v['id']}: kernel check failed (rc {r['rc']}): {r['stderr'].strip()[-800:]}")
                continue
            backend_problem(f"{v['id']} kernel check", r["stdout"])
            res = json.loads(line[len("RESULT OK "):])
            r["result"] = res
            print(f"\nkernel check ({res['backend']}, {v['module']}, {res['variant']}): {res['check_rows']}x{res['check_cols']} "
                  f"exact vs the Python E4M3 reference: {', '.join(res['checked'])} OK ({res['check_seconds']} s)")
            if res.get("device"):
                print(f"  device: {res['device']}")
            b = res.get("benchmark")
            if b:
                print(f"benchmark on {b['device']}, {b['rows']}x{b['cols']}, {b['iters']} iters, per call:")
                for k in ("quantize", "dequantize", "transpose"):
                    print(f"  {k:<10} {b[k + '_ms']:.4f} ms  {b[k + '_GBps']:>8} GB/s")

    out_json = Path(args.json) if args.json else seen_builds[0] / "oracle_results.json"
    report["failures"], report["warnings"] = failures, warnings
    report["seconds"] = round(time.monotonic() - t_start, 1)
    out_json.write_text(json.dumps(report, indent=1, default=str) + "\n")
    for w in warnings:
        print(f"WARNING: {w}")
    for f in failures:
        print(f"FAIL: {f}")
    print(f"\noracle: {'FAILED' if failures else 'all checks passed'} ({report['seconds']} s; details in {out_json})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

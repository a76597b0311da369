#!/usr/bin/env python3
"""Run a reproduction script several times in fresh processes and classify each run.

Each reproduction script starts watchdog.py: when the process makes no progress for
STALL_S seconds (its heartbeat thread cannot get the GIL), CPython's faulthandler thread
(which needs no GIL) prints every Python thread's stack and exits with status 1. Before
that fires, this harness sees the heartbeat file go stale and attaches gdb to the hung
process (`thread apply all bt`), so the native frames where each thread waits are in the
log too.

    python3 harness.py --python VENV/bin/python --runs 10 --gdb --log run.log repro.py [args]

Outcome per run: `ok` (rc 0, the loops ran DURATION_S without a hang), `deadlock`
(watchdog fired), `crash:SIGx` (killed by a signal), `rc=N` otherwise.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def gdb_native_stacks(pid):
    if not shutil.which("gdb"):
        return "(gdb not installed)\n"
    out = subprocess.run(
        ["gdb", "-p", str(pid), "-batch", "-iex", "set auto-load python-scripts off",
         "-ex", "set pagination off",
         "-ex", "info threads", "-ex", "thread apply all bt 40", "-ex", "info sharedlibrary"],
        capture_output=True, text=True, timeout=120)
    return out.stdout + out.stderr


def run_once(args, index, log):
    heartbeat = tempfile.NamedTemporaryFile(prefix="heartbeat-", delete=False).name
    env = {**os.environ, "STALL_S": str(args.stall), "DURATION_S": str(args.duration),
           "HEARTBEAT": heartbeat}
    cmd = [args.python, args.script, *args.script_args]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    gdb_text = None
    while proc.poll() is None:
        time.sleep(0.25)
        stale = time.time() - os.path.getmtime(heartbeat)
        if args.gdb and gdb_text is None and stale > args.stall - 3:
            # No heartbeat for a while, and the watchdog fires in about 3 s: native stacks now.
            gdb_text = gdb_native_stacks(proc.pid)
        if time.monotonic() - start > args.duration + 4 * args.stall + 60:
            proc.kill()
    proc.wait()
    os.unlink(heartbeat)
    elapsed = time.monotonic() - start
    output = proc.stdout.read()
    rc = proc.returncode
    if rc == 0:
        outcome = "ok"
    elif rc < 0:
        outcome = f"crash:{signal.Signals(-rc).name}"
    elif rc == 1 and "Thread 0x" in output and "most recent call first" in output:
        outcome = "deadlock"
    else:
        outcome = f"rc={rc}"
    log.write(f"\n===== run {index}: {outcome} after {elapsed:.1f} s "
              f"({' '.join(cmd)}; STALL_S={args.stall} DURATION_S={args.duration})\n")
    log.write(output)
    if gdb_text is not None:
        log.write(f"\n----- gdb native stacks of pid {proc.pid} (taken while hung) -----\n")
        log.write(gdb_text)
    log.flush()
    return outcome, elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--stall", type=float, default=8, help="seconds without progress that count as a hang")
    ap.add_argument("--duration", type=float, default=30, help="seconds each run loops before it exits ok")
    ap.add_argument("--gdb", action="store_true", help="attach gdb to hung runs")
    ap.add_argument("--log", required=True)
    ap.add_argument("script")
    ap.add_argument("script_args", nargs="*")
    args = ap.parse_args()
    results = []
    with open(args.log, "w") as log:
        version = subprocess.run([args.python, "-VV"], capture_output=True, text=True).stdout.strip()
        log.write(f"interpreter: {args.python}: {version}\n")
        for i in range(1, args.runs + 1):
            outcome, elapsed = run_once(args, i, log)
            results.append((outcome, elapsed))
            print(f"run {i}: {outcome} after {elapsed:.1f} s", flush=True)
        summary = {}
        for outcome, _ in results:
            summary[outcome] = summary.get(outcome, 0) + 1
        line = "SUMMARY " + ", ".join(f"{k} {v}/{len(results)}" for k, v in sorted(summary.items()))
        log.write("\n" + line + "\n")
        print(line)


if __name__ == "__main__":
    main()

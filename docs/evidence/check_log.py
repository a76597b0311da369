#!/usr/bin/env python3
"""Count, per harness log, the hung runs whose gdb stacks show the predicted cycle.

    python3 check_log.py LOG 'WAIT_A=>FUNC_A' 'WAIT_B=>FUNC_B'

A run matches when one native thread's stack has a frame matching WAIT_A below (i.e.
called from) a frame matching FUNC_A, and another thread's has WAIT_B below FUNC_B
(regular expressions over gdb's `bt` lines).
"""
import re
import sys


def thread_stacks(gdb_text):
    return re.split(r"\nThread \d+ \(", gdb_text)[1:]


def has(stack, wait, func):
    lines = stack.splitlines()
    for i, line in enumerate(lines):
        if re.search(wait, line):
            return any(re.search(func, later) for later in lines[i + 1:])
    return False


def main():
    log, *specs = sys.argv[1:]
    pairs = [spec.split("=>") for spec in specs]
    runs = re.split(r"\n===== run ", open(log).read())[1:]
    matched = 0
    for run in runs:
        header = run.splitlines()[0]
        if "deadlock" not in header:
            print(f"run {header}")
            continue
        gdb = run.split("----- gdb native stacks", 1)[1] if "----- gdb native stacks" in run else ""
        stacks = thread_stacks(gdb)
        found = [any(has(s, w, f) for s in stacks) for w, f in pairs]
        ok = all(found)
        matched += ok
        print(f"run {header}: predicted stacks {'yes' if ok else 'NO ' + str(found)}")
    print(f"{matched}/{len(runs)} runs hung with the predicted native stacks")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Map the stripped `_callbacks` frames of hung runs to IsCallable's two call sites.

mujoco 3.12.0's `_callbacks.cpython-311-x86_64-linux-gnu.so` has no symbols for IsCallable.
Its code was located by disassembly (`objdump -d`): the only reference to the string
"callable" (.rodata 0x19719) is in `pybind11::eval` (0x8f9f0), whose only caller is the code at

    0x8de98  call 0x50678   # static-local guard acquire; returns to 0x8de9d
    0x8de9f  je   ...       # already initialised: skip
    0x8dea5  call 0x8f9f0   # py::eval("callable"); returns to 0x8deaa
    0x8deb8  call 0x5079d   # guard release

so a thread whose stack returns to 0x8de9d waits for the `is_callable` guard, and one that
returns to 0x8deaa is running its initialiser. `.text` starts at 0x2fc30 in the file, which
gdb's `info sharedlibrary` gives as the "From" address. A run matches when one thread is in the
guard wait (0x8de9d) and another waits for the GIL (take_gil) under py::eval (0x8deaa).

    python3 native_frames.py run-mujoco-3.12.0.log
"""
import re
import sys

TEXT_START = 0x2FC30
GUARD_WAIT_RET = 0x8DE9D
EVAL_RET = 0x8DEAA


def main():
    runs = re.split(r"\n===== run ", open(sys.argv[1]).read())[1:]
    hung = matched = 0
    for run in runs:
        header = run.splitlines()[0]
        if "deadlock" not in header:
            continue
        hung += 1
        m = re.search(r"\n(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+Yes.*_callbacks\.cpython", run)
        if not m:
            print(f"run {header}: no `info sharedlibrary` line for _callbacks")
            continue
        base = int(m.group(1), 16) - TEXT_START
        roles = []
        for stack in re.split(r"\nThread \d+ \(", run.split("----- gdb native stacks", 1)[1])[1:]:
            waits_for_gil = False
            for line in stack.splitlines():
                waits_for_gil |= "take_gil" in line
                frame = re.search(r"0x([0-9a-f]+) in \?\? \(\) from \S*_callbacks", line)
                if not frame:
                    continue
                offset = int(frame.group(1), 16) - base
                if offset == GUARD_WAIT_RET:
                    roles.append("guard-wait")
                if offset == EVAL_RET and waits_for_gil:
                    roles.append("eval-waits-for-GIL")
        ok = "guard-wait" in roles and "eval-waits-for-GIL" in roles
        matched += ok
        print(f"run {header.split(' (')[0]}: base {base:#x}, threads: {roles} -> {'yes' if ok else 'NO'}")
    print(f"{matched}/{hung} hung runs: one thread waits on the is_callable guard, another waits for the GIL inside py::eval")


if __name__ == "__main__":
    main()

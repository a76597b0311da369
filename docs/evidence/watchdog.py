"""Stall watchdog shared by the reproduction scripts.

A daemon thread re-arms `faulthandler.dump_traceback_later(STALL_S, exit=True)` every
0.2 s and touches $HEARTBEAT (when set). Re-arming needs the GIL, so once the process is
deadlocked with the GIL held by a waiting thread nothing re-arms it: after STALL_S seconds
CPython's C watchdog thread (which needs no GIL) prints every Python thread's stack and
exits with status 1. harness.py watches the heartbeat file and attaches gdb first.
"""
import faulthandler
import os
import threading
import time

STALL_S = float(os.environ.get("STALL_S", "8"))
_HEARTBEAT = os.environ.get("HEARTBEAT")


def _rearm_forever():
    while True:
        faulthandler.dump_traceback_later(STALL_S, exit=True)
        if _HEARTBEAT:
            with open(_HEARTBEAT, "w") as f:
                f.write(f"{time.time()}\n")
        time.sleep(0.2)


def start():
    faulthandler.dump_traceback_later(STALL_S, exit=True)
    threading.Thread(target=_rearm_forever, name="watchdog", daemon=True).start()


def stop():
    faulthandler.cancel_dump_traceback_later()

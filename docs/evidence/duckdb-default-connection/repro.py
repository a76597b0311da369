"""duckdb: DefaultConnectionHolder::Get holds mutex `l` while creating the default
connection, and that creation (FetchOrCreateInstance) releases the GIL and takes it back.

Thread "closer" closes the module's default connection over and over: `duckdb.close()`
calls DefaultConnectionHolder::Get(), which (re)creates the connection when it is closed,
holding `l` across the GIL release in FetchOrCreateInstance. Thread "user" calls
`duckdb.execute(...)`, which holds the GIL and waits for `l` in the same Get(). Predicted:
the closer waits for the GIL with `l` held, the user waits for `l` with the GIL held.

Exits 0 if both loops run DURATION_S seconds without a hang; on a hang (no progress for
STALL_S seconds) the faulthandler watchdog dumps every thread's stack and exits 1.
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import watchdog  # noqa: E402

import duckdb  # noqa: E402

DURATION_S = float(os.environ.get("DURATION_S", "30"))

watchdog.start()
sys.setswitchinterval(1e-6)  # hand the GIL over at once when another thread asks for it
print(f"duckdb {duckdb.__version__}, python {sys.version.split()[0]}", flush=True)

deadline = time.monotonic() + DURATION_S
counts = {"closer": 0, "user": 0}


def closer():
    while time.monotonic() < deadline:
        try:
            duckdb.close()  # Get(): creates the default connection again (GIL released, `l` held), then closes it
        except duckdb.Error:
            pass  # duckdb 2.x: "connection is busy with another call" (the user thread is mid-query)
        counts["closer"] += 1


def user():
    while time.monotonic() < deadline:
        try:
            duckdb.execute("SELECT 42").fetchall()  # Get(): waits for `l` while holding the GIL
        except duckdb.Error:
            pass  # the closer closed the connection between Get() and the query, or (2.x) it is busy closing it
        counts["user"] += 1


threads = [threading.Thread(target=closer, name="closer"), threading.Thread(target=user, name="user")]
for t in threads:
    t.start()
for t in threads:
    t.join()
watchdog.stop()
print(f"no hang in {DURATION_S} s: {counts}", flush=True)

"""duckdb: Cursors::ClearCursors (reached from Connection.close()) holds the connection's
Cursors::lock while each child cursor's Close() releases the GIL and takes it back;
Connection.cursor() -> Cursors::AddCursor waits for that lock with the GIL held.

Each round makes a connection with CURSORS open cursors; thread "closer" closes it while
thread "opener" keeps calling .cursor() on it (errors once it is closed are expected).
Exits 0 when all rounds pass; on a hang the faulthandler watchdog dumps every thread's
stack and exits 1.
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import watchdog  # noqa: E402

import duckdb  # noqa: E402

DURATION_S = float(os.environ.get("DURATION_S", "30"))
CURSORS = int(os.environ.get("CURSORS", "50"))

watchdog.start()
sys.setswitchinterval(1e-6)
print(f"duckdb {duckdb.__version__}, python {sys.version.split()[0]}", flush=True)
deadline = time.monotonic() + DURATION_S
rounds = added_during_close = 0
while time.monotonic() < deadline:
    con = duckdb.connect()
    cursors = [con.cursor() for _ in range(CURSORS)]
    closing = threading.Event()
    closed = threading.Event()

    def closer():
        closing.set()
        con.close()
        closed.set()

    def opener():
        global added_during_close
        closing.wait()
        while not closed.is_set():
            try:
                cursors.append(con.cursor())
                added_during_close += 1
            except duckdb.Error:
                pass

    threads = [threading.Thread(target=closer, name="closer"), threading.Thread(target=opener, name="opener")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rounds += 1
watchdog.stop()
print(f"no hang in {DURATION_S} s: {rounds} rounds, {added_during_close} cursors added while closing", flush=True)

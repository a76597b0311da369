"""polars: PyDataFrame.row_tuples holds the frame's RwLock for reading (`self.df.read()`)
across `py.enter_polars_ok(...)`, which detaches from the interpreter (releases the GIL)
to rechunk and attaches again with the read guard still held. PyDataFrame.to_arrow on the
same frame holds the GIL and waits for `*self.df.write()`.

Thread "rows" calls `df.rows()` (-> row_tuples; rechunks because the frame has more than
16 chunks). Thread "arrow" calls `df.to_arrow()` on the same frame. Predicted: "rows"
waits for the GIL holding the read lock; "arrow" waits for the write lock holding the GIL.

Exits 0 if both loops run DURATION_S seconds without a hang; on a hang (no progress for
STALL_S seconds) the faulthandler watchdog dumps every thread's stack and exits 1.
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import watchdog  # noqa: E402

import polars as pl  # noqa: E402

DURATION_S = float(os.environ.get("DURATION_S", "30"))
CHUNKS = int(os.environ.get("CHUNKS", "32"))
ROWS_PER_CHUNK = int(os.environ.get("ROWS_PER_CHUNK", "2000"))
COLUMNS = int(os.environ.get("COLUMNS", "20"))

watchdog.start()
sys.setswitchinterval(1e-6)  # hand the GIL over at once when another thread asks for it
print(f"polars {pl.__version__}, python {sys.version.split()[0]}", flush=True)

chunk = pl.DataFrame({f"c{i}": range(ROWS_PER_CHUNK) for i in range(COLUMNS)})
# rechunk=False keeps CHUNKS chunks per column: row_tuples rechunks (detached) when > 16.
df = pl.concat([chunk] * CHUNKS, rechunk=False)
assert df.n_chunks() > 16, df.n_chunks()

deadline = time.monotonic() + DURATION_S
counts = {"rows": 0, "arrow": 0}


def rows():
    while time.monotonic() < deadline:
        df.rows()  # row_tuples: read lock held across detach -> attach
        counts["rows"] += 1


def arrow():
    while time.monotonic() < deadline:
        df.to_arrow()  # to_arrow: *self.df.write() while attached
        counts["arrow"] += 1


threads = [threading.Thread(target=rows, name="rows"), threading.Thread(target=arrow, name="arrow")]
for t in threads:
    t.start()
for t in threads:
    t.join()
watchdog.stop()
print(f"no hang in {DURATION_S} s: {counts}, chunks now {df.n_chunks()}", flush=True)

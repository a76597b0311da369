"""polars: PyDataFrame.gather_with_series holds the index series' RwLock for reading
(`indices.series.read()`) across `py.enter_polars_df(...)`, which detaches from the
interpreter (releases the GIL) for the gather and attaches again with the read guard still
held. PySeries.rechunk(in_place=True) on that index series holds the GIL and waits for
`self.series.write()`.

Thread "gather" runs `df[idx]` (-> gather_with_series(idx)). Thread "rechunk" runs
`idx.rechunk(in_place=True)` on the same index series. Predicted: "gather" waits for the
GIL holding idx's read lock; "rechunk" waits for idx's write lock holding the GIL.

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
ROWS = int(os.environ.get("ROWS", "200000"))
COLUMNS = int(os.environ.get("COLUMNS", "8"))

watchdog.start()
sys.setswitchinterval(1e-6)  # hand the GIL over at once when another thread asks for it
print(f"polars {pl.__version__}, python {sys.version.split()[0]}", flush=True)

df = pl.DataFrame({f"c{i}": range(ROWS) for i in range(COLUMNS)})
idx = pl.Series("idx", list(range(ROWS - 1, -1, -1))).cast(pl.UInt32)

deadline = time.monotonic() + DURATION_S
counts = {"gather": 0, "rechunk": 0}


def gather():
    while time.monotonic() < deadline:
        df[idx]  # gather_with_series: idx read lock held across detach -> attach
        counts["gather"] += 1


def rechunk():
    while time.monotonic() < deadline:
        idx.rechunk(in_place=True)  # *self.series.write() while attached
        counts["rechunk"] += 1


threads = [threading.Thread(target=gather, name="gather"), threading.Thread(target=rechunk, name="rechunk")]
for t in threads:
    t.start()
for t in threads:
    t.join()
watchdog.stop()
print(f"no hang in {DURATION_S} s: {counts}", flush=True)

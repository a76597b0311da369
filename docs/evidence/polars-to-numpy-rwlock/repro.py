"""polars: PyDataFrame.to_numpy holds the frame's RwLock for reading (`&self.df.read()`, a
temporary of the call) while, for a frame whose columns have no common numeric supertype,
df_columns_to_numpy -> series_to_numpy -> handle_chunks runs `py.detach(|| s.rechunk())` on
each chunked column and attaches again under the read guard. PyDataFrame.to_arrow on the same
frame holds the GIL and waits for `*self.df.write()`.

Thread "numpy" loops `df.to_numpy()` on a frame with an integer and a string column, each in
32 chunks (so no numeric supertype: the per-column path); thread "arrow" loops
`df.to_arrow()` on the same frame (it keeps the chunking: the columns' chunks are aligned).
Predicted: "numpy" waits for the GIL holding the read lock; "arrow" waits for the write lock
holding the GIL.

Exits 0 if both loops run DURATION_S seconds without a hang; on a hang (no progress for
STALL_S seconds) the faulthandler watchdog dumps every thread's stack and exits 1.
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import watchdog  # noqa: E402

import numpy  # noqa: E402,F401  (imported first: to_numpy would import it under the read lock)
import polars as pl  # noqa: E402

DURATION_S = float(os.environ.get("DURATION_S", "30"))
CHUNKS = int(os.environ.get("CHUNKS", "32"))
ROWS_PER_CHUNK = int(os.environ.get("ROWS_PER_CHUNK", "5000"))

watchdog.start()
sys.setswitchinterval(1e-6)  # hand the GIL over at once when another thread asks for it
print(f"polars {pl.__version__}, python {sys.version.split()[0]}", flush=True)

chunk = pl.DataFrame({"i": range(ROWS_PER_CHUNK), "s": [str(i) for i in range(ROWS_PER_CHUNK)]})
df = pl.concat([chunk] * CHUNKS, rechunk=False)
assert df.n_chunks() > 1, df.n_chunks()

deadline = time.monotonic() + DURATION_S
counts = {"numpy": 0, "arrow": 0}


def numpy():
    while time.monotonic() < deadline:
        df.to_numpy()  # to_numpy: read lock held across handle_chunks' detach -> attach
        counts["numpy"] += 1


def arrow():
    while time.monotonic() < deadline:
        df.to_arrow()  # to_arrow: *self.df.write() while attached
        counts["arrow"] += 1


threads = [threading.Thread(target=numpy, name="numpy"), threading.Thread(target=arrow, name="arrow")]
for t in threads:
    t.start()
for t in threads:
    t.join()
watchdog.stop()
print(f"no hang in {DURATION_S} s: {counts}, chunks now {df.n_chunks()}", flush=True)

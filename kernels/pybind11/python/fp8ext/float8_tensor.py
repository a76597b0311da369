"""The class that the fp8ext extensions import lazily and cache (see csrc/fp8ext.h).

Test hook: with ``FP8EXT_IMPORT_SLEEP_MS`` set, importing this module sleeps that long with
``time.sleep``, which releases the GIL while the importing thread still owns the extension's
one-time-initialisation lock. That is the legitimate trigger of the deadlocks the oracle looks for:
any blocking I/O, importlib lock wait, or eval-loop thread switch during the import does the same,
only less predictably.
"""

import os
import time

_sleep_ms = int(os.environ.get("FP8EXT_IMPORT_SLEEP_MS", "0") or 0)
if _sleep_ms > 0:
    time.sleep(_sleep_ms / 1000.0)


class Float8Tensor:
    """An fp8 E4M3 tensor: raw bytes, the inverse scale to dequantize with, and a shape."""

    __slots__ = ("_data", "_scale_inv", "shape")

    def __init__(self, data: bytes, scale_inv: float, shape):
        shape = tuple(int(d) for d in shape)
        count = 1
        for d in shape:
            count *= d
        if len(data) != count:
            raise ValueError(f"Float8Tensor: {len(data)} bytes do not fit shape {shape}")
        self._data = bytes(data)
        self._scale_inv = float(scale_inv)
        self.shape = shape

    def __repr__(self):
        return f"Float8Tensor(shape={self.shape}, scale_inv={self._scale_inv})"

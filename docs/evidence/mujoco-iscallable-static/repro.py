"""mujoco: IsCallable's function-local static `is_callable` (callbacks.cc) is initialised by
`py::eval("callable")` while the set_mjcb_* bindings hold the GIL. Evaluating that code
object passes the eval loop's breaker check, where the GIL can be handed to another thread
while the static's initialisation guard (__cxa_guard) is owned. If that other thread then
calls a set_mjcb_* binding, it waits on the guard holding the GIL.

Only the first IsCallable call of a process initialises the static, so each process races
once: threads "cb1" and "cb2" call mujoco.set_mjcb_control / set_mjcb_passive with a Python
callable at the same moment; thread "spin" runs bytecode so the GIL is always requested.

Exits 0 when the race passes; on a hang the faulthandler watchdog dumps every thread's stack
and exits 1.
"""
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import watchdog  # noqa: E402

import mujoco  # noqa: E402

watchdog.start()
sys.setswitchinterval(1e-6)
barrier = threading.Barrier(3)
done = threading.Event()


def callback(model, data):
    pass


def cb1():
    barrier.wait()
    mujoco.set_mjcb_control(callback)


def cb2():
    barrier.wait()
    mujoco.set_mjcb_passive(callback)


def spin():
    barrier.wait()
    n = 0
    while not done.is_set():
        n += 1


threads = [threading.Thread(target=f, name=f.__name__) for f in (cb1, cb2, spin)]
for t in threads:
    t.start()
threads[0].join()
threads[1].join()
done.set()
threads[2].join()
mujoco.set_mjcb_control(None)
mujoco.set_mjcb_passive(None)
watchdog.stop()
print(f"mujoco {mujoco.__version__}: no hang", flush=True)

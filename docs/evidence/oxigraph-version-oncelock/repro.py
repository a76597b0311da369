"""pyoxigraph: python_version()'s `static VERSION: OnceLock` is initialised with
`Python::attach`. The first call ever can come from a detached path (QuadParser.__next__
-> map_parse_error on a syntax error, inside `py.detach`) while another thread, attached
(QuerySolutions.__next__ Reader -> map_query_results_parse_error, after its detach), waits
on the same OnceLock holding the GIL. The window is the first call of the process only, so
each process races once: thread "rdf" and thread "results" both hit a syntax error at the
same moment; thread "spin" runs bytecode to keep the GIL contended.

Exits 0 when the race passes without a hang; on a hang the faulthandler watchdog dumps
every thread's stack and exits 1.
"""
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import watchdog  # noqa: E402

import pyoxigraph as ox  # noqa: E402

watchdog.start()
sys.setswitchinterval(1e-6)
barrier = threading.Barrier(3)
done = threading.Event()


def rdf():
    barrier.wait()
    try:
        list(ox.parse(b"<http://a> <http://b> nonsense", format=ox.RdfFormat.N_TRIPLES))
    except SyntaxError:
        pass


def results():
    barrier.wait()
    try:
        list(ox.parse_query_results(b"?x\n<http://a", format=ox.QueryResultsFormat.TSV))
    except SyntaxError:
        pass


def spin():
    barrier.wait()
    n = 0
    while not done.is_set():
        n += 1


threads = [threading.Thread(target=f, name=f.__name__) for f in (rdf, results, spin)]
for t in threads:
    t.start()
threads[0].join()
threads[1].join()
done.set()
threads[2].join()
watchdog.stop()
print(f"pyoxigraph {ox.__version__}: no hang", flush=True)

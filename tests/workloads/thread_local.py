# thread_local.py - an array held only by a threading.local attribute of a
# live thread (tests/integration/thread_local.sh).
import threading

import numpy as np

loc = threading.local()
ready, done = threading.Event(), threading.Event()


def worker():
    loc.buf = np.ones(1 << 17)  # SITE:buf
    ready.set()
    done.wait()  # alive at the report point: a daemon, never released


threading.Thread(target=worker, name="loader", daemon=True).start()
ready.wait()
print("thread_local: done")

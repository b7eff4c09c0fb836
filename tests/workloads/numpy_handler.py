# numpy_handler.py - numpy's buffers of every size are storages through
# numpy's data-memory handler (tests/integration/numpy_handler.sh reads the
# SITE lines): in the main thread, another thread and a fresh context,
# through calloc, malloc and realloc; freed ones are not live.
import contextvars
import threading

import numpy as np

small = np.ones(16)  # SITE:small
big = np.zeros(8 * 2**20)  # SITE:big
head = big[:16]  # SITE:head
del big
kept = []


def worker():
    kept.append(np.arange(64, dtype=np.int32))  # SITE:thread


t = threading.Thread(target=worker)
t.start()
t.join()
for _ in range(50):
    gone = np.ones(8)  # SITE:gone
del gone
grown = np.ones(4)
grown.resize(4096, refcheck=False)  # SITE:resize
in_context = contextvars.Context().run(np.full, 3, 7.0)  # SITE:context
print("numpy_handler: done")

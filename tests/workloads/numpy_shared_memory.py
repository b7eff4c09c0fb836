# numpy_shared_memory.py - numpy arrays over multiprocessing.shared_memory
# (issue 24 item 1): the main process creates an 8 MiB segment, fills an
# array over all of it and starts a child (fork) that attaches it by name
# and keeps a 64-byte array over its start, with its SharedMemory object
# never closed (a leak of the whole segment in the child); the main process
# closes and unlinks its own mapping once the child is done.
# tests/integration/report_shm_numpy.sh.
import multiprocessing as mp
from multiprocessing import shared_memory

import numpy as np

MiB = 1 << 20
kept = []


def child(name):
    s = shared_memory.SharedMemory(name=name)  # SITE:attach
    kept.append(s)
    kept.append(np.ndarray((16,), np.float32, buffer=s.buf))  # SITE:view
    print("child sees", float(kept[1][0]))


if __name__ == "__main__":
    shm = shared_memory.SharedMemory(create=True, size=8 * MiB)  # SITE:create
    a = np.ndarray((2 * MiB,), np.float32, buffer=shm.buf)
    a[:] = 1.0
    p = mp.get_context("fork").Process(target=child, args=(shm.name,))
    p.start()
    p.join()
    del a
    shm.close()
    shm.unlink()
    print("exit code", p.exitcode)

# stale_slot.py - a C block lost while copies of its address stay in memory
# CPython's allocator has given back: the int that held it and a bytes
# object full of pointers into it are freed, and their blocks keep what
# they held (obmalloc overwrites a freed block's first word alone). The
# leak scan reads CPython's arenas block by block, allocated ones only
# (leakscan.h): the block is definitely lost. Before, those stale words
# made it still reachable and check passed. The block is lost in a thread
# that has ended: the scan leaves its stack out (its stale words are not
# what this workload is about; join returns before the thread is gone, so
# this waits for the kernel's). The block is small (20000 B, a jemalloc
# large extent): a word that only looks like a pointer into it (a short
# str's characters over the stale upper half of an old pointer) is then
# rare; with 300000 B about 1 run in 6 was "possibly lost" so. For
# tests/integration/check_stale_slot.sh.
import ctypes
import os
import struct
import threading
import time

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]


def lose():
    p = libc.malloc(20000)  # SITE:lose
    ctypes.memset(p, 1, 20000)
    stale = struct.pack("<Q", p + 64) * 50  # 400 B of interior pointers
    del stale


t = threading.Thread(target=lose)
t.start()
t.join()
for _ in range(500):
    if len(os.listdir("/proc/self/task")) == 1:
        break
    time.sleep(0.01)
print("stale_slot done")

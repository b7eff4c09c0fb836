"""stale_dataslot.py - a ctypes block lost whose address a returned frame's
slot in CPython's frame data stack (3.11+) still holds: make() keeps a
1533 B bytes object (from malloc) in a local; once it returned and the
object was freed, lose()'s malloc of the same size takes that address and
drops it. make()'s frame lay above lose()'s, so its slot keeps the address;
the scan runs at os._exit, with no Python code of the script after lose().
make() runs 60 frames deep: under tensorleak the slots of the data stack's
first 30 to 60 frames hold other words by the end (gdb on 3.13: at a depth
of 4 no slot held the address any more, and the test passed without the
fix), and a frame past the first 16 KiB chunk (200 deep) goes with its
chunk, unmapped on return.
The first line says whether lose() got make()'s address back; the script
keeps that address as text alone (an int would hold it). Before the
leak scan left the dead part of the data stack out (src/agent/pydead.h) it
was "still reachable" on 3.11, 3.12 and 3.13 in every run
(tests/integration/check_stale_reuse.sh).
"""
import ctypes
import os
import sys

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
SIZE = 33 + 1500  # a bytes object of 1500 B: PyBytesObject's header and NUL


def make():
    b = bytes(1500)  # from malloc (over 512 B): its address in this frame's slot
    global MADE
    MADE = hex(id(b))
    return len(b)


def deep(n):
    return make() if n == 0 else deep(n - 1)


def lose():
    p = libc.malloc(SIZE)  # SITE:lose
    ctypes.memset(p, 1, SIZE)
    return hex(p) == MADE


deep(60)  # make's frame lies above the ones that run next: its slots stay
print("stale_dataslot reused" if lose() else "stale_dataslot not reused", flush=True)
os._exit(0)  # scanned here: no Python code runs after lose()

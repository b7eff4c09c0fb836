# pyframes_daemon.py - daemon threads that allocate (ctypes with the GIL
# released, and bytearray) while the main thread ends and the interpreter
# finalises, for tests/integration/pyframes_cpython.sh: the agent reads no
# thread state once finalisation starts, so the program exits 0 and prints
# only "main done".
import ctypes
import threading

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]


def churn():
    while True:
        libc.free(libc.malloc(1000))
        bytearray(2000)


for _ in range(4):
    threading.Thread(target=churn, daemon=True).start()
kept = [bytearray(100) for _ in range(1000)]
print("main done")

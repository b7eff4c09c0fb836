# agent_pyframes_bench.py - the cost of Python frames (docs/python.md):
#   alloc N D   N x free(malloc(64)) through ctypes, at Python stack depth D
#   calls N     N calls of an empty Python function
#   torch N     N torch steps: empty(1000), + 1, .sum()  (23 allocations each)
# Prints the best of a few runs, per operation. Run it plain, under
# LD_PRELOAD=libtensorleak.so, and with TENSORLEAK_PYTHON_FRAMES=0.
# Times are the process's CPU time (time.process_time: the single thread's),
# which a busy machine disturbs less than wall time. Runs under CPython 3.6+.
import ctypes
import sys
import time


def best(fn, runs):
    return min(fn() for _ in range(runs))


def bench_alloc(n, depth):
    libc = ctypes.CDLL(None)
    malloc, free = libc.malloc, libc.free
    malloc.restype = ctypes.c_void_p
    malloc.argtypes = [ctypes.c_size_t]
    free.argtypes = [ctypes.c_void_p]

    def loop():
        t = time.process_time()
        for _ in range(n):
            free(malloc(64))
        return time.process_time() - t

    def deep(d):
        return deep(d - 1) if d > 1 else loop()

    dt = best(lambda: deep(depth), 3)
    print(f"alloc depth={depth}: {dt / n * 1e9:.0f} ns per malloc+free (ctypes calls included)")


def bench_calls(n):
    def f():
        pass

    def loop():
        t = time.process_time()
        for _ in range(n):
            f()
        return time.process_time() - t

    print(f"calls: {best(loop, 5) / n * 1e9:.1f} ns per call")


def bench_torch(n):
    import torch

    torch.set_num_threads(1)

    def loop():
        t = time.process_time()
        for _ in range(n):
            a = torch.empty(1000)
            (a + 1).sum()
        return time.process_time() - t

    print(f"torch: {best(loop, 3) / n * 1e6:.2f} us per step")


if __name__ == "__main__":
    what, n = sys.argv[1], int(sys.argv[2])
    if what == "alloc":
        bench_alloc(n, int(sys.argv[3]))
    elif what == "calls":
        bench_calls(n)
    else:
        bench_torch(n)

# numpy_small.py - numpy's hot path under the agent (BENCHMARKS.md, "numpy's
# data-memory handler"; bench/run.sh's W8): two small buffers an iteration.
# usage: python3 numpy_small.py [ITERATIONS]   (default 200000)
# Prints us/iteration and the loop's own time as "bench: inner_s=S".
import sys
import time
import numpy as np
n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
t = time.perf_counter()
for _ in range(n):
    a = np.ones(16)
    b = a + 1.0
s = time.perf_counter() - t
print(f"{s / n * 1e6:.3f} us/iter")
print(f"bench: inner_s={s:.6f}")

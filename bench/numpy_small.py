# numpy_small.py - numpy's hot path under the agent (BENCHMARKS.md, "numpy's
# data-memory handler"): two small buffers an iteration; prints us/iteration.
import time
import numpy as np
t = time.perf_counter()
for _ in range(200000):
    a = np.ones(16)
    b = a + 1.0
print(f"{(time.perf_counter() - t) / 200000 * 1e6:.3f} us/iter")

"""W6: a NumPy workload (issue 12): many short-lived arrays of mixed sizes.

usage: python3 w6_numpy.py [STEPS]   (default 4000)
Each step makes small (1 KiB), medium (64 KiB) and big (1 MiB) float64
arrays, combines them with ufuncs (temporaries), and keeps a rolling window
of 32 results, so the live set is bounded and most arrays die young: the
allocation pattern of array code that is not BLAS-bound. Seeded, one
thread. Prints the loop's own time as "bench: inner_s=S".
"""
import sys
import time

import numpy as np

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
rng = np.random.default_rng(0)
base_big = rng.standard_normal(1 << 17)  # 1 MiB
window = []
acc = 0.0

t0 = time.perf_counter()
for step in range(steps):
    small = rng.standard_normal(128)  # 1 KiB
    medium = np.arange(8192, dtype=np.float64) * (step % 7)  # 64 KiB
    big = base_big * 0.5 + step  # 1 MiB temporaries
    y = np.sqrt(np.abs(big[: medium.size] - medium)) + small.sum()
    parts = [small * i for i in range(8)]  # several small temporaries
    acc += float(y[step % y.size]) + float(parts[-1][0])
    window.append(y.copy() if step % 4 == 0 else y[:1024].copy())
    if len(window) > 32:
        window.pop(0)
inner = time.perf_counter() - t0
print(f"bench: inner_s={inner:.6f} acc={acc:.3f}")

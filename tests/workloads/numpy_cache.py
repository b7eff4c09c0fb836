"""numpy_cache.py - numpy's small-buffer cache hands an array a data buffer
it malloc'd before the agent wrapped its data-memory handler (during
`import numpy`) and never freed: in `all` mode that buffer was a live plain
block when its storage ALLOC came, and the report said "1 allocation
returned an address that was still live; the older block was dropped" for
this script (tests/integration/report_numpy_cache.sh).
"""
import numpy as np

small = [np.ones(8) for _ in range(100)]  # 64 B each: numpy's cache first
del small
keep = np.ones(1000)  # SITE:keep  8000 B, live at the end
print("numpy_cache done", flush=True)

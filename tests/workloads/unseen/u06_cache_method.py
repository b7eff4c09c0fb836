# u06: functools.cache on a method of a loader object: every (self, key)
# result is kept by the method's cache.
import functools
import numpy as np
import torch
torch.set_num_threads(1)

class Loader:
    @functools.cache
    def load(self, key):
        arr = np.ones((128, 1024), dtype=np.float32)  # SITE:arr
        return torch.from_numpy(arr) * 2  # SITE:tensor

ld = Loader()
for k in ("a", "b"):
    ld.load(k)  # SITE:call
print("u06 done")

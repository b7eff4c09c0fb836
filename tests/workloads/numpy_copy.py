# numpy_copy.py - ndarray.copy() copies name their source (numpy_copy.sh):
# a whole array's copy (a duplicate of its live source), a slice's copy
# (source: the sliced array's buffer), a transposed view's copy, and a
# subclass's copy. The method's behaviour is numpy's: a bad order raises
# the same ValueError; the results are written to argv[1].
import sys

import numpy as np


class Tagged(np.ndarray):
    pass


a = np.arange(1 << 18, dtype=np.float64)  # 2 MiB
b = a.copy()  # SITE:b
v = a[1000:].copy()  # SITE:v
c = b.reshape(512, 512).T.copy()  # SITE:c
t = a.view(Tagged).copy()  # SITE:t
with open(sys.argv[1], "w") as out:
    try:
        a.copy(order="X")
    except ValueError as e:
        print("ValueError:", e, file=out)
    print("copies", type(t).__name__, b.sum() == a.sum(), v.shape, c.flags["C_CONTIGUOUS"],
          file=out)

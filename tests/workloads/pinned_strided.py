"""pinned_strided.py - storages kept by strided views (pinned_strided.sh).

Each base is dropped and only views stay: pinned bytes must be the storage
minus the bytes the views' elements occupy (their union), not minus their
extent.
"""
import numpy as np
import torch

torch.set_num_threads(1)
a = torch.randn(1024, 1024)  # 4 MiB
col = a[:, :2]  # column slice: 1024 runs of 8 B = 8192 B
del a
b = torch.randn(1024, 1024)
rows = b.as_strided((4, 1024), (1, 1))  # overlapping rows: elements 0..1026
tail = b.as_strided((1024,), (1,), 1000)  # elements 1000..2023: union 0..2023 = 8096 B
del b
c = torch.randn(1024, 1024)
bcast = c[5].expand(64, 1024)  # stride 0: row 5 only, 4096 B
del c
n = np.random.rand(1024, 512)  # 4 MiB float64
ncol = n[:, 3:5]  # 1024 runs of 16 B = 16384 B
del n
d = torch.randn(64, 1024)  # 256 KiB
flip = d[:, 8:16].t()  # transposed slice: 64 runs of 32 B = 2048 B
del d
print("pinned_strided: done")

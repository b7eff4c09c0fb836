"""A DataLoader (num_workers=2, fork) over a small TensorDataset for 3
epochs. argv[1]: none (keeps nothing), main (the main process keeps a 1 KiB
copy of each batch in a global list), worker (each worker's dataset
__getitem__ keeps a 1 KiB copy of every row it returns in a module-level list)."""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

HOW = sys.argv[1]
kept = []


class Keeping(TensorDataset):
    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        x = x.repeat(128)  # SITE:worker_leak
        kept.append(x)
        return x, y


cls = Keeping if HOW == "worker" else TensorDataset
ds = cls(torch.arange(24, dtype=torch.float32).reshape(12, 2), torch.arange(12))
loader = DataLoader(ds, batch_size=4, num_workers=2)
for epoch in range(3):
    for x, y in loader:
        s = x.sum()
        if HOW == "main":
            kept.append(x.repeat(32, 1))  # SITE:main_leak
del x, y, s  # the last batch: received storages count as live while held
print("ok", len(kept))
